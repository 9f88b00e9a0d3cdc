//! The per-coefficient tail of BEHZ decryption (`γ = 2^31`, paper Section 4.8): this module
//! derives the operands from the level's constants and checks the shapes; the arithmetic is
//! the backend's [`ClientKernels`] (Helium assembly on the M55, the portable scalar loops
//! elsewhere; equal word for word, tested on target and in `zeppelin-ring`'s conformance
//! tests). Secret data: masks only, no branch on data, no division, no indexed load.

use zeppelin_ring::{ClientKernels, Modulus};

use crate::error::Error;
use crate::params::{LevelConstants, Params};

/// BEHZ steps 1-2 for prime `i`: with `x = INTT(ĉ1 ⊙ ŝ)` (coefficients of `c1·s`, each
/// `< q`) and `c0` (`n` residues `< q`), adds the terms of
/// `y = [(c0 + c1·s)·γt·(Q/q_i)^-1]_{q_i}` to `acc_t` (mod `t`, each `< t`) and `acc_γ`
/// (mod `2^32`, masked to `γ` at the end), on `backend`.
///
/// Errors: a row that is not `n` residues long, `i` not a prime of `lc`'s level.
#[expect(
    clippy::too_many_arguments,
    reason = "the rows and constants of one accumulation step, as the kernel takes them"
)]
pub fn accumulate<P: Params, B: ClientKernels>(
    backend: &B,
    q: &Modulus,
    lc: &LevelConstants,
    i: usize,
    x: &[u32],
    c0: &[u32],
    acc_t: &mut [u32],
    acc_gamma: &mut [u32],
) -> Result<(), Error> {
    check_prime(lc, i)?;
    check_lengths::<P>(&[x.len(), c0.len(), acc_t.len(), acc_gamma.len()])?;
    backend.behz_accumulate(
        q,
        &P::plain().modulus,
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

/// BEHZ steps 3-5 per coefficient: `acc_t` (in `plain`, mod `t`) and `acc_γ` become
/// `m = (z_t − centred(z_γ))·γ^-1 mod t`, on `backend`.
///
/// Errors: a row that is not `n` residues long.
pub fn finish<P: Params, B: ClientKernels>(
    backend: &B,
    lc: &LevelConstants,
    plain: &mut [u32],
    acc_gamma: &[u32],
) -> Result<(), Error> {
    check_lengths::<P>(&[plain.len(), acc_gamma.len()])?;
    backend.behz_finish(
        &P::plain().modulus,
        lc.neg_q_inv_mod_t_mont,
        lc.neg_q_inv_mod_gamma,
        lc.gamma_mod_t,
        lc.gamma_inv_mod_t_mont,
        plain,
        acc_gamma,
    )?;
    Ok(())
}

fn check_lengths<P: Params>(lengths: &[usize]) -> Result<(), Error> {
    match lengths.iter().find(|&&len| len != P::N) {
        Some(&found) => Err(Error::LengthMismatch {
            expected: P::N,
            found,
        }),
        None => Ok(()),
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
