//! The adapter between the Zeppelin device client and SEAL, on plain residue rows so that it
//! does not depend on a device preset:
//!
//! - device ciphertext `(c0, c1)` over the device's data primes → SEAL `Ciphertext` at SEAL's
//!   first data level, switching the modulus down (dropping trailing primes with rounding)
//!   when the device has more data primes than SEAL's first level (the four-prime preset);
//! - SEAL `Ciphertext` (any data level, size 2, coefficient form) → device rows;
//! - device ternary secret → SEAL `SecretKey` (NTT form at the key level, SEAL's NTT);
//! - SEAL `PublicKey` → device public-key rows (NTT form over the device's data primes);
//! - a fresh SEAL `PublicKey` for a secret, generated on the trusted side.

use rand_core::{CryptoRng, RngCore};
use zeroize::Zeroize;

use crate::convert::drop_last_prime;
use crate::error::{Result, SealError};
use crate::objects::{Ciphertext, PublicKey, SecretKey};
use crate::params::{EncryptionParameters, SealContext};
use crate::poly::RnsNtt;

/// SEAL's parameters for the Zeppelin presets: `n = 4096`, `t = 65537`, SEAL's three data
/// primes and its special prime (both presets share them; the four-prime preset's extra prime
/// is switched away by [`device_to_seal`]).
pub fn seal4096_parameters() -> EncryptionParameters {
    EncryptionParameters::bfv(
        4096,
        vec![134_176_769, 134_111_233, 134_012_929, 268_369_921],
        65537,
    )
}

fn widen(rows: &[u32]) -> Vec<u64> {
    rows.iter().map(|&v| u64::from(v)).collect()
}

/// A device ciphertext at level `L` (rows over `device_primes[..L]`, coefficient form,
/// prime-major) as a SEAL ciphertext: at SEAL's first data level for a full-level device
/// ciphertext, or at the SEAL level with exactly the device's primes when there is one.
///
/// The device's first primes must be SEAL's data primes, in order. Extra device primes are
/// removed by BFV modulus switching, one at a time from the last.
pub fn device_to_seal(
    ctx: &SealContext,
    device_primes: &[u32],
    c0: &[u32],
    c1: &[u32],
) -> Result<Ciphertext> {
    let n = ctx.n();
    if c0.len() != c1.len() || !c0.len().is_multiple_of(n) || c0.is_empty() {
        return Err(SealError::Invalid {
            what: "device ciphertext",
            reason: format!("rows of {} and {} residues for n = {n}", c0.len(), c1.len()),
        });
    }
    let level = c0.len() / n;
    if level > device_primes.len() {
        return Err(SealError::CountMismatch {
            what: "device ciphertext level",
            found: level as u64,
            expected: device_primes.len() as u64,
        });
    }
    let mut primes: Vec<u64> = device_primes[..level]
        .iter()
        .map(|&q| u64::from(q))
        .collect();
    // A device ciphertext below the full level maps to SEAL's level with the same primes.
    let target_level = match ctx.data_level_with(primes.len()) {
        Some(l) if l.coeff_modulus == primes => l,
        _ => ctx.first_level(),
    };
    let target = &target_level.coeff_modulus;
    if primes.len() < target.len() || primes[..target.len()] != target[..] {
        return Err(SealError::Unsupported(format!(
            "device primes {primes:?} do not start with SEAL's first-level primes {target:?}"
        )));
    }
    let mut data = widen(c0);
    data.extend(widen(c1));
    // Residues from outside: check before any arithmetic.
    for (i, &v) in data.iter().enumerate() {
        let q = primes[(i / n) % level];
        if v >= q {
            return Err(SealError::CoefficientOutOfRange {
                what: "device ciphertext",
                index: i,
                value: v,
                modulus: q,
            });
        }
    }
    while primes.len() > target.len() {
        data = drop_last_prime(&primes, n, 2, &data)?;
        primes.pop();
    }
    Ciphertext::new(target_level, n, 2, false, data)
}

/// A SEAL ciphertext as device rows: `(level, c0, c1)`, coefficient form, prime-major. The
/// ciphertext must have two polynomials (relinearize first) in coefficient form (as BFV
/// ciphertexts are) at a data level; its primes are a prefix of the device's when the device
/// shares SEAL's data primes.
pub fn seal_to_device(ctx: &SealContext, ct: &Ciphertext) -> Result<(usize, Vec<u32>, Vec<u32>)> {
    let level = ctx.level_or_err(&ct.parms_id, "Ciphertext")?;
    if ctx.using_keyswitching() && ct.parms_id == ctx.key_level().parms_id {
        return Err(SealError::WrongLevel {
            what: "Ciphertext",
            reason: "a ciphertext cannot be at the key level".into(),
        });
    }
    if ct.size != 2 {
        return Err(SealError::Invalid {
            what: "Ciphertext",
            reason: format!(
                "{} polynomials; the device decrypts size 2 (relinearize first)",
                ct.size
            ),
        });
    }
    if ct.is_ntt_form {
        return Err(SealError::Invalid {
            what: "Ciphertext",
            reason: "NTT form; BFV ciphertexts are in coefficient form".into(),
        });
    }
    let narrow = |p: &[u64]| -> Result<Vec<u32>> {
        p.iter()
            .map(|&v| {
                u32::try_from(v)
                    .map_err(|_| SealError::Unsupported(format!("residue {v} wider than 32 bits")))
            })
            .collect()
    };
    Ok((
        level.coeff_modulus.len(),
        narrow(ct.poly(0))?,
        narrow(ct.poly(1))?,
    ))
}

/// The device's ternary secret (`n` values in {-1, 0, 1}) as a SEAL `SecretKey`: NTT form
/// over every prime of the key level.
pub fn secret_key_from_ternary(ctx: &SealContext, ternary: &[i8]) -> Result<SecretKey> {
    if ternary.len() != ctx.n() {
        return Err(SealError::CountMismatch {
            what: "secret key length",
            found: ternary.len() as u64,
            expected: ctx.n() as u64,
        });
    }
    if ternary.iter().any(|&v| !(-1..=1).contains(&v)) {
        return Err(SealError::Invalid {
            what: "secret key",
            reason: "coefficients must be -1, 0 or 1".into(),
        });
    }
    let ntt = RnsNtt::new(&ctx.key_level().coeff_modulus, ctx.n())?;
    let mut wide: Vec<i64> = ternary.iter().map(|&v| i64::from(v)).collect();
    let mut data = ntt.from_signed(&wide)?;
    wide.zeroize();
    ntt.forward(&mut data)?;
    Ok(SecretKey {
        parms_id: ctx.key_level().parms_id,
        data,
    })
}

/// A SEAL `PublicKey` as device rows `(p0, p1)`: NTT form over `device_primes`, each of which
/// must be a prime of SEAL's key level.
pub fn public_key_to_device(
    ctx: &SealContext,
    pk: &PublicKey,
    device_primes: &[u32],
) -> Result<(Vec<u32>, Vec<u32>)> {
    let n = ctx.n();
    let key_primes = &ctx.key_level().coeff_modulus;
    if pk.0.parms_id != ctx.key_level().parms_id || !pk.0.is_ntt_form || pk.0.size != 2 {
        return Err(SealError::WrongLevel {
            what: "PublicKey",
            reason: "a public key is a size-2 NTT-form ciphertext at the key level".into(),
        });
    }
    let mut p0 = Vec::with_capacity(device_primes.len() * n);
    let mut p1 = Vec::with_capacity(device_primes.len() * n);
    for &q in device_primes {
        let j = key_primes
            .iter()
            .position(|&k| k == u64::from(q))
            .ok_or_else(|| {
                SealError::Unsupported(format!(
                    "device prime {q} is not a prime of SEAL's parameters {key_primes:?}"
                ))
            })?;
        // Residues were checked below their primes (< 2^30) on load.
        p0.extend(pk.0.poly(0)[j * n..(j + 1) * n].iter().map(|&v| v as u32));
        p1.extend(pk.0.poly(1)[j * n..(j + 1) * n].iter().map(|&v| v as u32));
    }
    Ok((p0, p1))
}

/// A fresh SEAL `PublicKey` for `sk` (SEAL's `create_public_key`: an NTT-form encryption of
/// zero at the key level).
pub fn public_key_for<R: RngCore + CryptoRng>(
    ctx: &SealContext,
    sk: &SecretKey,
    rng: &mut R,
) -> Result<PublicKey> {
    crate::keygen::KeyGenerator::new(ctx, sk)?.public_key(rng)
}
