//! The per-coefficient tail of BEHZ decryption (`γ = 2^31`, paper Section 4.8), with a
//! scalar twin for each step: [`accumulate`] / [`finish`] run zeppelin-ring's Helium kernels
//! when built for MVE (`--cfg zeppelin_mve` on arm) and the scalar twins
//! [`accumulate_scalar`] / [`finish_scalar`] otherwise. Both forms return the same words for
//! in-range inputs (tested on target over thousands of random inputs, `firmware/m55`).
//! Secret data: masks only, no branch on data, no division, no indexed load.

use zeppelin_ring::{ct, Modulus};

use crate::error::Error;
use crate::params::{LevelConstants, GAMMA_MASK_PUB, N, T_MODULUS};

/// BEHZ steps 1-2 for prime `i`: with `x = INTT(ĉ1 ⊙ ŝ)` (coefficients of `c1·s`, each
/// `< q`) and `c0` (`n` residues `< q`), adds the terms of
/// `y = [(c0 + c1·s)·γt·(Q/q_i)^-1]_{q_i}` to `acc_t` (mod `t`, each `< t`) and `acc_γ`
/// (mod `2^32`, masked to `γ` at the end). The Helium kernel on MVE builds, else
/// [`accumulate_scalar`].
///
/// Errors: `c0` not `n` residues long, `i` not a prime of `lc`'s level.
pub fn accumulate(
    q: &Modulus,
    lc: &LevelConstants,
    i: usize,
    x: &[u32; N],
    c0: &[u32],
    acc_t: &mut [u32; N],
    acc_gamma: &mut [u32; N],
) -> Result<(), Error> {
    check_prime(lc, i)?;
    let c0: &[u32; N] = c0.try_into().map_err(|_| Error::LengthMismatch {
        expected: N,
        found: c0.len(),
    })?;
    #[cfg(all(target_arch = "arm", zeppelin_mve))]
    {
        zeppelin_ring::ClientKernels::behz_accumulate(
            &zeppelin_ring::mve::Mve,
            q,
            &T_MODULUS,
            lc.behz_scale_mont[i],
            lc.qhat_mod_t_mont[i],
            lc.qhat_mod_gamma[i],
            x,
            c0,
            acc_t,
            acc_gamma,
        )?;
        Ok(())
    }
    #[cfg(not(all(target_arch = "arm", zeppelin_mve)))]
    {
        accumulate_scalar(q, lc, i, x, c0, acc_t, acc_gamma);
        Ok(())
    }
}

/// BEHZ steps 3-5 per coefficient: `acc_t` (in `plain`, mod `t`) and `acc_γ` become
/// `m = (z_t − centred(z_γ))·γ^-1 mod t`. The Helium kernel on MVE builds, else
/// [`finish_scalar`]. (The `Result` carries the kernel's length check, which fixed-size
/// rows always pass.)
pub fn finish(
    lc: &LevelConstants,
    plain: &mut [u32; N],
    acc_gamma: &[u32; N],
) -> Result<(), Error> {
    #[cfg(all(target_arch = "arm", zeppelin_mve))]
    {
        zeppelin_ring::ClientKernels::behz_finish(
            &zeppelin_ring::mve::Mve,
            &T_MODULUS,
            lc.neg_q_inv_mod_t_mont,
            lc.neg_q_inv_mod_gamma,
            lc.gamma_mod_t,
            lc.gamma_inv_mod_t_mont,
            plain,
            acc_gamma,
        )?;
        Ok(())
    }
    #[cfg(not(all(target_arch = "arm", zeppelin_mve)))]
    {
        finish_scalar(lc, plain, acc_gamma);
        Ok(())
    }
}

fn check_prime(lc: &LevelConstants, i: usize) -> Result<(), Error> {
    if i < lc.level {
        Ok(())
    } else {
        Err(Error::InvalidLevel {
            level: i + 1,
            max: lc.level,
        })
    }
}

/// The scalar twin of [`accumulate`], one coefficient at a time (same arithmetic; `i` must
/// be a prime of `lc`'s level, which [`accumulate`] checks).
#[inline(never)]
pub fn accumulate_scalar(
    q: &Modulus,
    lc: &LevelConstants,
    i: usize,
    x: &[u32; N],
    c0: &[u32; N],
    acc_t: &mut [u32; N],
    acc_gamma: &mut [u32; N],
) {
    let t = &T_MODULUS;
    let scale = lc.behz_scale_mont[i];
    let hat_t = lc.qhat_mod_t_mont[i];
    let hat_gamma = lc.qhat_mod_gamma[i];
    for (((&x, &c), at), ag) in x
        .iter()
        .zip(c0)
        .zip(acc_t.iter_mut())
        .zip(acc_gamma.iter_mut())
    {
        let xi = q.add(x, c);
        // Steps 1-2: y = [x·γt·(Q/q_i)^-1]_{q_i} (one Montgomery product, x < q).
        let y = q.mul_mont_constant(xi, scale);
        // y·|Q/q_i|_t < 2^28·2^17 < t·2^32: a valid Montgomery product.
        *at = t.add(*at, t.mont_mul(y, hat_t));
        *ag = ag.wrapping_add(y.wrapping_mul(hat_gamma));
    }
}

/// The scalar twin of [`finish`], one coefficient at a time.
#[inline(never)]
pub fn finish_scalar(lc: &LevelConstants, plain: &mut [u32; N], acc_gamma: &[u32; N]) {
    let t = &T_MODULUS;
    let one_mont = t.to_mont(1);
    for (m, &g) in plain.iter_mut().zip(acc_gamma.iter()) {
        let z_t = t.mont_mul(*m, lc.neg_q_inv_mod_t_mont);
        let z_gamma = g.wrapping_mul(lc.neg_q_inv_mod_gamma) & GAMMA_MASK_PUB;
        // Centring: z_γ − γ when bit 30 is set; reduce mod t without division
        // (z_γ·(2^32 mod t) < 2^31·2^17 < t·2^32, so one Montgomery product gives z_γ mod t).
        let negative = ct::mask_from_msb(z_gamma << 1);
        let z_gamma_t = t.sub(t.mont_mul(z_gamma, one_mont), lc.gamma_mod_t & negative);
        *m = t.mont_mul(t.sub(z_t, z_gamma_t), lc.gamma_inv_mod_t_mont);
    }
}
