//! Key validation: degenerate public keys, implausible secret keys, and whether a public key
//! belongs to a secret key.
//!
//! - [`check_public_key`]: no row of a SEAL `PublicKey`'s residues may have more residues near zero than
//!   a uniform row plausibly has (the all-zero body, or `c0 = -e` of a zero secret, under which
//!   a ciphertext reveals its plaintext).
//! - [`check_secret_key`]: a SEAL `SecretKey`'s residues are a ternary polynomial, the same modulo every
//!   prime, of plausible weight (the device's [`zeppelin::SecretKey::WEIGHT_RANGE`] rule).
//! - [`PublicKey::check_key_pair`](crate::PublicKey::check_key_pair): `c0 + c1·s` of a
//!   public key and its secret key is the key's error, every coefficient within
//!   [`NOISE_BOUND`] (the same check for device keys is [`crate::device::check_key_pair`]).
//!
//! The functions take residues, so the object types (which call them on load) stay above
//! this module.
//!
//! The secret-dependent checks run in constant time (masks, no branch or index on a secret
//! value); only their pass/fail outcome is public.

use zeroize::Zeroizing;

use crate::error::{LevelRule, Result, SealError};
use crate::params::{ParmsId, SealContext};
use crate::poly::RnsNtt;

/// The largest error magnitude of a genuine key: SEAL's centred binomial noise (21 + 21 bits)
/// and the device's truncated Gaussian ([`zeppelin::sampler::GAUSSIAN_BOUND`]) both stop at 21.
pub const NOISE_BOUND: i64 = 21;

/// The half-width of the window around zero in which a residue modulo `q` counts as small:
/// `2^12` for primes of 24 bits or more (the device's rule), `q / 2^12` below, so a uniform
/// residue is small with probability about `2^-11` or less.
pub fn small_window(q: u64) -> u64 {
    if q >= 1 << 24 {
        1 << 12
    } else {
        (q >> 12).max(1)
    }
}

/// The most residues of one row of `n` that may be small ([`small_window`]): `n / 16`, as for
/// device keys ([`zeppelin::PublicKey::MAX_SMALL_PER_ROW`]). A uniform row of `n = 4096` has
/// on average 2 or fewer; an all-zero row, or `-e`, has `n`.
pub fn max_small_per_row(n: usize) -> usize {
    n / 16
}

/// Refuses a public key (`what` names it; `data` its `c0 ‖ c1` residues at the key level)
/// with a degenerate row: more than [`max_small_per_row`] residues within [`small_window`] of
/// zero, in `c0` or `c1`, modulo any prime of the key level.
pub fn check_public_key(ctx: &SealContext, data: &[u64], what: &'static str) -> Result<()> {
    let primes = &ctx.key_level().coeff_modulus;
    for poly in 0..2 {
        check_poly_not_degenerate(ctx.n(), primes, data, poly, what)?;
    }
    Ok(())
}

/// Refuses polynomial `poly` of `data` (polynomials of `primes.len()` rows of `n` residues,
/// prime-major) when a row has more than [`max_small_per_row`] residues within
/// [`small_window`] of zero: the public-key rule, also applied to `c1` of an uploaded
/// ciphertext (a `c1` of zeros is a "transparent" ciphertext that any keyless sender can
/// make, and whose `c0` is the plaintext).
pub fn check_poly_not_degenerate(
    n: usize,
    primes: &[u64],
    data: &[u64],
    poly: usize,
    what: &'static str,
) -> Result<()> {
    let k = primes.len();
    let limit = max_small_per_row(n);
    for (prime, &q) in primes.iter().enumerate() {
        let start = (poly * k + prime) * n;
        let row = data.get(start..start + n).unwrap_or_default();
        let w = small_window(q);
        let small = row.iter().filter(|&&v| v < w || v > q - w).count();
        if small > limit || row.len() != n {
            return Err(SealError::PublicKeyDegenerate {
                what,
                poly,
                prime,
                small,
                limit,
            });
        }
    }
    Ok(())
}

/// `v` modulo `q` as the centred integer in `(-q/2, q/2]`, without a branch on `v`.
fn centred(v: u64, q: u64) -> i64 {
    let (v, q) = (v as i64, q as i64);
    // All ones when v > q/2.
    let above = ((q >> 1) - v) >> 63;
    v - (q & above)
}

/// 1 when `c` is outside `[-bound, bound]`, else 0, without a branch.
fn outside(c: i64, bound: i64) -> u64 {
    let d = c + bound;
    (((d | (2 * bound - d)) >> 63) & 1) as u64
}

/// 1 when `x != 0`, else 0, without a branch.
fn nonzero(x: i64) -> u64 {
    ((x | x.wrapping_neg()) as u64) >> 63
}

/// Checks in constant time that the coefficient-form residues `coeffs` (`primes.len()` rows
/// of `n`) are one integer polynomial with every coefficient in `[-bound, bound]`; returns
/// whether they are and the number of nonzero coefficients.
fn small_and_consistent(coeffs: &[u64], primes: &[u64], n: usize, bound: i64) -> (bool, usize) {
    let mut bad = 0u64;
    let mut weight = 0usize;
    let first = coeffs.get(..n).unwrap_or_default();
    let q0 = primes.first().copied().unwrap_or(0);
    for (j, &v0) in first.iter().enumerate() {
        let c0 = centred(v0, q0);
        bad |= outside(c0, bound);
        weight += nonzero(c0) as usize;
        for (i, &q) in primes.iter().enumerate().skip(1) {
            let c = centred(coeffs.get(i * n + j).copied().unwrap_or(0), q);
            bad |= nonzero(c ^ c0);
        }
    }
    (bad == 0 && first.len() == n, weight)
}

/// Refuses a SEAL secret key (`parms_id` and its NTT-form residues `data`) that is not a ternary polynomial with the same coefficients
/// modulo every prime of the key level ([`SealError::SecretKeyMalformed`]), or whose weight is
/// outside `n/2 ..= 5n/6` ([`SealError::SecretKeyWeight`]; a uniform ternary key has weight
/// `2n/3 ± 0.47·sqrt(n)`). Constant time up to the outcome; needs primes below 2^30.
pub fn check_secret_key(ctx: &SealContext, parms_id: &ParmsId, data: &[u64]) -> Result<()> {
    let key_level = ctx.key_level();
    if *parms_id != key_level.parms_id {
        return Err(SealError::WrongLevel {
            what: "SecretKey",
            rule: LevelRule::KeyLevel,
        });
    }
    let n = ctx.n();
    let ntt = ctx.level_ntt(key_level)?;
    let mut coeffs = Zeroizing::new(data.to_vec());
    ntt.inverse(&mut coeffs)?;
    let (ok, weight) = small_and_consistent(&coeffs, &key_level.coeff_modulus, n, 1);
    if !ok {
        return Err(SealError::SecretKeyMalformed);
    }
    let (min, max) = (n / 2, 5 * n / 6);
    if !(min..=max).contains(&weight) {
        return Err(SealError::SecretKeyWeight { weight, min, max });
    }
    Ok(())
}

/// `c0 + c1·s` over `ntt`'s primes (NTT-form inputs), back in coefficient form, checked in
/// constant time to be one polynomial with every coefficient within [`NOISE_BOUND`].
pub(crate) fn check_phase_small(
    ntt: &RnsNtt,
    primes: &[u64],
    c0: &[u64],
    c1: &[u64],
    s: &[u64],
) -> Result<()> {
    let mut phase = Zeroizing::new(ntt.mul(c1, s)?);
    ntt.add_assign(&mut phase, c0)?;
    ntt.inverse(&mut phase)?;
    let (ok, _) = small_and_consistent(&phase, primes, ntt.n(), NOISE_BOUND);
    if ok {
        Ok(())
    } else {
        Err(SealError::KeyPairMismatch { bound: NOISE_BOUND })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn branch_free_helpers_agree_with_the_obvious_definitions() {
        let q = 134_176_769u64;
        for v in [0, 1, 2, q / 2, q / 2 + 1, q - 2, q - 1] {
            let want = if v > q / 2 {
                v as i64 - q as i64
            } else {
                v as i64
            };
            assert_eq!(centred(v, q), want, "{v}");
        }
        for c in -30i64..=30 {
            assert_eq!(outside(c, 21), u64::from(c.abs() > 21), "{c}");
            assert_eq!(outside(c, 1), u64::from(c.abs() > 1), "{c}");
            assert_eq!(nonzero(c), u64::from(c != 0), "{c}");
        }
        assert_eq!(nonzero(i64::MIN), 1);
    }
}
