//! Server-side transforms on SEAL ciphertexts: the phase `c0 + c1·s + c2·s^2 + ...`, rewriting a
//! symmetric ciphertext into SEAL's own seeded form, and BFV modulus switching that drops the
//! last prime ([`mod_switch_to_next`], SEAL's `Evaluator::mod_switch_to_next`).

use zeppelin_ring::Modulus;
use zeroize::{Zeroize, Zeroizing};

use crate::error::{LevelRule, ParameterError, Result, SealError};
use crate::objects::{Ciphertext, SecretKey};
use crate::params::SealContext;

use crate::prng::PrngInfo;

/// The secret key's NTT residues for the first `k` primes (NTT form is per prime, so a level's
/// key is a prefix of the key-level key).
fn secret_prefix<'a>(ctx: &SealContext, sk: &'a SecretKey, k: usize) -> Result<&'a [u64]> {
    if sk.parms_id != ctx.key_level().parms_id {
        return Err(SealError::WrongLevel {
            what: "SecretKey",
            rule: LevelRule::KeyLevel,
        });
    }
    sk.data.get(..k * ctx.n()).ok_or(SealError::CountMismatch {
        what: "secret key length",
        found: sk.data.len() as u64,
        expected: (k * ctx.n()) as u64,
    })
}

/// `X = c0 + c1·s + c2·s^2 + ...` in coefficient form at the ciphertext's level (the value BFV
/// decryption scales and rounds).
pub fn phase(ctx: &SealContext, ct: &Ciphertext, sk: &SecretKey) -> Result<Vec<u64>> {
    let level = ctx.level_or_err(&ct.parms_id, "Ciphertext")?;
    let k = level.coeff_modulus.len();
    let ntt = ctx.level_ntt(level)?;
    let s = secret_prefix(ctx, sk, k)?;
    if ct.size == 0 {
        return Err(SealError::EmptyCiphertext);
    }
    // Horner in the NTT domain: ((c_{m-1}·s + c_{m-2})·s + ...)·s + c0. The partial
    // products depend on the secret: every intermediate is wiped when it drops.
    let mut acc = Zeroizing::new(ct.poly(ct.size - 1).to_vec());
    if !ct.is_ntt_form {
        ntt.forward(&mut acc)?;
    }
    for i in (0..ct.size - 1).rev() {
        let mut next = Zeroizing::new(ntt.mul(&acc, s)?);
        std::mem::swap(&mut acc, &mut next);
        let mut c = ct.poly(i).to_vec();
        if !ct.is_ntt_form {
            ntt.forward(&mut c)?;
        }
        ntt.add_assign(&mut acc, &c)?;
    }
    ntt.inverse(&mut acc)?;
    Ok(std::mem::take(&mut *acc))
}

/// Rewrites a two-polynomial, coefficient-form ciphertext so that its `c1` is the one SEAL
/// expands from `info`: `c0' = c0 + (c1 - c1')·s`, `c1' = expand(info)`. The phase (and so the
/// message and the noise) is unchanged; the result can be saved in SEAL's seeded form with
/// [`Ciphertext::save_seeded`].
pub fn reseed(
    ctx: &SealContext,
    ct: &Ciphertext,
    sk: &SecretKey,
    info: &PrngInfo,
) -> Result<Ciphertext> {
    if ct.size != 2 || ct.is_ntt_form {
        return Err(SealError::NotFresh {
            operation: "reseeding",
            size: ct.size,
            is_ntt_form: ct.is_ntt_form,
        });
    }
    let level = ctx.level_or_err(&ct.parms_id, "Ciphertext")?;
    let n = ctx.n();
    let k = level.coeff_modulus.len();
    let ntt = ctx.level_ntt(level)?;
    let s = secret_prefix(ctx, sk, k)?;
    let new_c1 = Ciphertext::expand_c1(info, level, n);
    let mut diff = ct.poly(1).to_vec();
    ntt.sub_assign(&mut diff, &new_c1)?;
    ntt.forward(&mut diff)?;
    let mut term = ntt.mul(&diff, s)?;
    diff.zeroize();
    ntt.inverse(&mut term)?;
    let mut c0 = ct.poly(0).to_vec();
    ntt.add_assign(&mut c0, &term)?;
    term.zeroize();
    c0.extend(new_c1);
    Ciphertext::new(level, n, 2, false, c0)
}

/// SEAL's `Evaluator::mod_switch_to_next` for a BFV ciphertext: the same message at the next
/// level of `ctx`'s chain (its last prime dropped, with rounding, by [`drop_last_prime`]).
/// The ciphertext must be at a data level with at least two primes, in coefficient form.
///
/// ```
/// use zeppelin_seal::convert::mod_switch_to_next;
/// use zeppelin_seal::{Ciphertext, EncryptionParameters, SealContext};
/// let ctx = SealContext::new(EncryptionParameters::for_preset::<zeppelin::Seal4096>())?;
/// let ct = Ciphertext::new(ctx.first_level(), ctx.n(), 2, false, vec![1; 2 * 3 * ctx.n()])?;
/// let next = mod_switch_to_next(&ctx, &ct)?;
/// assert_eq!(next.coeff_modulus_size, 2);
/// assert_eq!(Some(&next.parms_id), ctx.data_level_with(2).map(|l| &l.parms_id));
/// # Ok::<(), zeppelin_seal::SealError>(())
/// ```
pub fn mod_switch_to_next(ctx: &SealContext, ct: &Ciphertext) -> Result<Ciphertext> {
    let level = ctx.level_or_err(&ct.parms_id, "Ciphertext")?;
    if ctx.using_keyswitching() && ct.parms_id == ctx.key_level().parms_id {
        return Err(SealError::WrongLevel {
            what: "Ciphertext",
            rule: LevelRule::DataLevel,
        });
    }
    if ct.is_ntt_form {
        return Err(SealError::NttForm {
            operation: "modulus switching",
        });
    }
    let k = level.coeff_modulus.len();
    let next = k
        .checked_sub(1)
        .filter(|&k| k > 0)
        .and_then(|k| ctx.data_level_with(k))
        .ok_or(SealError::LastLevel { primes: k })?;
    let data = drop_last_prime(&level.coeff_modulus, ctx.n(), ct.size, &ct.data)?;
    Ciphertext::new(next, ctx.n(), ct.size, false, data)
}

/// BFV modulus switching that drops the last prime `q_l` of a coefficient-form ciphertext
/// (SEAL's `mod_switch_scale_to_next` / `divide_and_round_q_last`): every coefficient becomes
/// `round(c / q_l)` over the remaining primes, computed per prime as
/// `(c_i - [c]_{q_l}) · q_l^-1 mod q_i` with the centred residue `[c]_{q_l}`.
///
/// `primes` are the input's primes (`len >= 2`); `data` holds `size` polynomials.
pub fn drop_last_prime(primes: &[u64], n: usize, size: usize, data: &[u64]) -> Result<Vec<u64>> {
    let k = primes.len();
    if k < 2 {
        return Err(SealError::LastLevel { primes: k });
    }
    if data.len() != size * k * n {
        return Err(SealError::CountMismatch {
            what: "ciphertext data",
            found: data.len() as u64,
            expected: (size * k * n) as u64,
        });
    }
    let moduli = primes
        .iter()
        .map(|&q| {
            let q32 = u32::try_from(q).map_err(|_| SealError::PrimeTooWide { prime: q })?;
            Ok(Modulus::new(q32)?)
        })
        .collect::<Result<Vec<_>>>()?;
    let last = &moduli[k - 1];
    let q_last = u64::from(last.value());
    let mut out = Vec::with_capacity(size * (k - 1) * n);
    for p in 0..size {
        let poly = &data[p * k * n..(p + 1) * k * n];
        let last_res = &poly[(k - 1) * n..];
        for (i, m) in moduli.iter().enumerate().take(k - 1) {
            let inv = m
                .inv(m.reduce_u64(q_last))
                .ok_or(SealError::InvalidParameters(
                    ParameterError::DuplicatePrime { prime: q_last },
                ))?;
            for (&c, &r) in poly[i * n..(i + 1) * n].iter().zip(last_res) {
                // Centred residue of c mod q_last, reduced into q_i.
                let centred = last.centered(r as u32);
                let r_i = m.reduce_i64(i64::from(centred));
                let diff = m.sub(c as u32, r_i);
                out.push(u64::from(m.mul(diff, inv)));
            }
        }
    }
    Ok(out)
}
