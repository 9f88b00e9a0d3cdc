//! Trusted-side generation of SEAL key-switching keys (relinearization and Galois keys) from a
//! secret key, in SEAL's format and SEAL's key-switching convention, so that an unmodified SEAL
//! `Evaluator` can relinearize and rotate with them.
//!
//! SEAL's convention (`KeyGenerator::generate_one_kswitch_key`): a key switching from `s'` to
//! `s` is one ciphertext per data prime `q_i` of the first level, each an NTT-form encryption of
//! zero at the key level, `(c0, c1) = (-(a·s + e), a)`, to whose `c0` residue at prime `i` alone
//! `[P]_{q_i}·s'` is added (`P` the special prime). Relinearization keys use `s' = s^2`, Galois
//! keys `s' = s(x^g)`; the Galois key for element `g` sits in slot `(g-1)/2`.

use rand_core::{CryptoRng, RngCore};
use zeroize::{Zeroize, Zeroizing};

use crate::error::{LevelRule, ParameterError, Result, SealError};
use crate::objects::{Ciphertext, GaloisKeys, KSwitchKeys, PublicKey, RelinKeys, SecretKey};
use crate::params::SealContext;
use crate::poly::{apply_galois_coeff_into, RnsNtt};
use crate::prng::{sample_poly_uniform, PrngInfo, PrngType, SealPrng, SEED_BYTES};

/// SEAL's Galois generator for batching rotations.
const GALOIS_GENERATOR: u64 = 3;

/// The Galois elements of SEAL's `create_galois_keys()` without arguments: `2n - 1` (column
/// swap), then `3^(2^i)` and `3^(-2^i)` mod `2n` for `i = 0 .. log2(n) - 2`.
pub fn all_galois_elements(n: usize) -> Vec<u32> {
    let m = 2 * n as u64;
    let mut elts = vec![(m - 1) as u32];
    let mut pos = GALOIS_GENERATOR;
    // 3^-1 mod 2n by brute force over the public group (n is at most 2^17).
    let mut neg = (1..m)
        .step_by(2)
        .find(|x| (x * GALOIS_GENERATOR) % m == 1)
        .unwrap_or(1);
    let log_n = n.trailing_zeros();
    for _ in 0..log_n.saturating_sub(1) {
        elts.push(pos as u32);
        pos = (pos * pos) % m;
        elts.push(neg as u32);
        neg = (neg * neg) % m;
    }
    elts
}

/// The Galois element SEAL uses for a row rotation by `step` (positive: left), or the column
/// swap for `step == 0`.
pub fn galois_element_for_step(n: usize, step: i64) -> Result<u32> {
    let m = 2 * n as u64;
    if step == 0 {
        return Ok((m - 1) as u32);
    }
    let half = (n / 2) as u64;
    let magnitude = step.unsigned_abs();
    if magnitude >= half {
        return Err(SealError::RotationStep { step, limit: half });
    }
    let exponent = if step < 0 {
        half - magnitude
    } else {
        magnitude
    };
    let mut g = 1u64;
    for _ in 0..exponent {
        g = (g * GALOIS_GENERATOR) % m;
    }
    Ok(g as u32)
}

/// Generates SEAL key-switching keys for one secret key.
pub struct KeyGenerator<'a> {
    ctx: &'a SealContext,
    key_ntt: &'a RnsNtt,
    /// The secret in NTT form at the key level.
    s_ntt: Vec<u64>,
    /// The secret in coefficient form at the key level.
    s_coeff: Vec<u64>,
}

impl Drop for KeyGenerator<'_> {
    fn drop(&mut self) {
        self.s_ntt.zeroize();
        self.s_coeff.zeroize();
    }
}

impl<'a> KeyGenerator<'a> {
    /// Prepares key generation for `sk` (which must be at the key level of `ctx`).
    pub fn new(ctx: &'a SealContext, sk: &SecretKey) -> Result<Self> {
        if sk.parms_id != ctx.key_level().parms_id {
            return Err(SealError::WrongLevel {
                what: "SecretKey",
                rule: LevelRule::KeyLevel,
            });
        }
        if !ctx.using_keyswitching() {
            return Err(SealError::InvalidParameters(ParameterError::NoSpecialPrime));
        }
        let key_ntt = ctx.level_ntt(ctx.key_level())?;
        let s_ntt = sk.data.clone();
        let mut s_coeff = s_ntt.clone();
        key_ntt.inverse(&mut s_coeff)?;
        Ok(Self {
            ctx,
            key_ntt,
            s_ntt,
            s_coeff,
        })
    }

    /// SEAL's `encrypt_zero_symmetric` at the key level in NTT form: `(-(a·s + e), a)`, with
    /// `a` from a fresh Blake2xb stream (as SEAL does) and `e` centred binomial (SEAL's CBD,
    /// 21 + 21 bits, standard deviation 3.24).
    fn encrypt_zero<R: RngCore + CryptoRng>(
        &self,
        rng: &mut R,
    ) -> Result<(Vec<u64>, Vec<u64>, PrngInfo)> {
        let n = self.ctx.n();
        let mut seed = [0u8; SEED_BYTES];
        rng.fill_bytes(&mut seed);
        let info = PrngInfo {
            prng_type: PrngType::Blake2xb,
            seed,
        };
        let a = sample_poly_uniform(
            &mut SealPrng::new(&info),
            &self.ctx.key_level().coeff_modulus,
            n,
        );
        let mut noise = vec![0i64; n];
        for e in noise.iter_mut() {
            *e = centred_binomial_21(rng);
        }
        let mut e = self.key_ntt.from_signed(&noise)?;
        noise.zeroize();
        self.key_ntt.forward(&mut e)?;
        let mut c0 = self.key_ntt.mul(&a, &self.s_ntt)?;
        self.key_ntt.add_assign(&mut c0, &e)?;
        e.zeroize();
        let zero = vec![0u64; c0.len()];
        let mut neg = zero;
        self.key_ntt.sub_assign(&mut neg, &c0)?;
        c0.zeroize();
        Ok((neg, a, info))
    }

    /// One key switching from `new_key` (NTT form, key level) to the secret key.
    fn kswitch_key<R: RngCore + CryptoRng>(
        &self,
        new_key: &[u64],
        rng: &mut R,
    ) -> Result<(Vec<PublicKey>, Vec<PrngInfo>)> {
        let n = self.ctx.n();
        let key_level = self.ctx.key_level();
        let special = *key_level
            .coeff_modulus
            .last()
            .ok_or(SealError::InvalidParameters(ParameterError::NoPrimes))?;
        let decomp = self.ctx.first_level().coeff_modulus.len();
        let mut keys = Vec::with_capacity(decomp);
        let mut seeds = Vec::with_capacity(decomp);
        for i in 0..decomp {
            let (mut c0, c1, info) = self.encrypt_zero(rng)?;
            seeds.push(info);
            let m = self.key_ntt.modulus(i);
            let factor = m.reduce_u64(special);
            for (c, &s) in c0[i * n..(i + 1) * n]
                .iter_mut()
                .zip(&new_key[i * n..(i + 1) * n])
            {
                *c = u64::from(m.add(*c as u32, m.mul(s as u32, factor)));
            }
            let mut data = c0;
            data.extend(c1);
            keys.push(PublicKey(Ciphertext::new(key_level, n, 2, true, data)?));
        }
        Ok((keys, seeds))
    }

    /// SEAL's `create_public_key()`: an NTT-form encryption of zero at the key level.
    pub fn public_key<R: RngCore + CryptoRng>(&self, rng: &mut R) -> Result<PublicKey> {
        let (mut c0, c1, _) = self.encrypt_zero(rng)?;
        c0.extend(c1);
        Ok(PublicKey(Ciphertext::new(
            self.ctx.key_level(),
            self.ctx.n(),
            2,
            true,
            c0,
        )?))
    }

    /// SEAL's `create_relin_keys()`: one key, switching from `s^2`.
    pub fn relin_keys<R: RngCore + CryptoRng>(&self, rng: &mut R) -> Result<RelinKeys> {
        let s2 = Zeroizing::new(self.key_ntt.mul(&self.s_ntt, &self.s_ntt)?);
        let (key, seeds) = self.kswitch_key(&s2, rng)?;
        Ok(RelinKeys(KSwitchKeys {
            parms_id: self.ctx.key_level().parms_id,
            keys: vec![key],
            seeds: vec![seeds],
        }))
    }

    /// SEAL's `create_galois_keys(galois_elts)`.
    pub fn galois_keys<R: RngCore + CryptoRng>(
        &self,
        galois_elts: &[u32],
        rng: &mut R,
    ) -> Result<GaloisKeys> {
        let n = self.ctx.n();
        let mut keys: Vec<Vec<PublicKey>> = vec![Vec::new(); n];
        let mut seeds: Vec<Vec<PrngInfo>> = vec![Vec::new(); n];
        for &g in galois_elts {
            if g & 1 == 0 || g as usize >= 2 * n {
                return Err(SealError::BadGaloisElement {
                    element: g,
                    limit: 2 * n as u64,
                });
            }
            let slot = GaloisKeys::index(g);
            if !keys[slot].is_empty() {
                continue;
            }
            // s(x^g), written in place into a buffer wiped when it drops.
            let mut rotated = Zeroizing::new(vec![0u64; self.s_coeff.len()]);
            for (i, (residues, out)) in self
                .s_coeff
                .chunks_exact(n)
                .zip(rotated.chunks_exact_mut(n))
                .enumerate()
            {
                apply_galois_coeff_into(residues, self.key_ntt.modulus(i), g as usize, out);
            }
            self.key_ntt.forward(&mut rotated)?;
            (keys[slot], seeds[slot]) = self.kswitch_key(&rotated, rng)?;
        }
        Ok(GaloisKeys(KSwitchKeys {
            parms_id: self.ctx.key_level().parms_id,
            keys,
            seeds,
        }))
    }
}

/// SEAL's centred binomial noise: popcount of 21 random bits minus popcount of 21 more.
fn centred_binomial_21<R: RngCore>(rng: &mut R) -> i64 {
    let mut b = [0u8; 6];
    rng.fill_bytes(&mut b);
    b[2] &= 0x1F;
    b[5] &= 0x1F;
    let plus = b[0].count_ones() + b[1].count_ones() + b[2].count_ones();
    let minus = b[3].count_ones() + b[4].count_ones() + b[5].count_ones();
    b.zeroize();
    i64::from(plus) - i64::from(minus)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn galois_elements_match_seal_for_n_4096() {
        let e = all_galois_elements(4096);
        assert_eq!(e.len(), 23);
        assert_eq!(e[0], 8191);
        assert_eq!(e[1], 3);
        assert_eq!((e[2] as u64 * 3) % 8192, 1);
        assert_eq!(galois_element_for_step(4096, 1).unwrap(), 3);
        assert_eq!(galois_element_for_step(4096, 0).unwrap(), 8191);
        // A right rotation by one is 3^(n/2 - 1) = 3^-1 (3 has order n/2 mod 2n).
        assert_eq!(galois_element_for_step(4096, -1).unwrap(), e[2]);
    }
}
