//! Decryption against big-integer ground truth: for every coefficient, the BEHZ (γ = 2^31)
//! result must equal `round(t·X/Q) mod t` computed with `num-bigint`, where `X` comes from
//! the residues by CRT — and, for real ciphertexts, `X = c0 + c1·s` by the schoolbook
//! product (no NTT). Random `X`, fresh-like noise, worst-case noise just inside the
//! correctness bound, and `t·X mod Q` right at the BEHZ bound `Q(1/2 − (L+1)/γ)` at level `L`;
//! every level of every preset; more than 100,000 cases per run, zero mismatches allowed.
#![expect(
    clippy::unwrap_used,
    reason = "test helpers outside #[test] fns: a failure should panic"
)]

mod common;

use common::*;
use num_bigint::{BigUint, RandBigInt};
use num_traits::{ToPrimitive, Zero};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use zeppelin::{
    encoder, Bfv, Ciphertext, CoeffRows, EncryptionSeeds, Params, Plaintext, PublicKey, PublicSeed,
    Seal4096, Seal8192, SecretKey, SecretSeed, SeededCiphertext, Workspace, Zeppelin4096,
};

const CIPHERTEXTS_PER_LEVEL: usize = 4;

/// One constructed `X` of a chosen kind, with the plaintext it must decrypt to if the kind
/// is within the decryption bound.
fn constructed_x<P: Params>(rng: &mut StdRng, level: usize, kind: usize) -> (BigUint, Option<u32>) {
    let q = q_big::<P>(level);
    let t = BigUint::from(P::T);
    let gamma = BigUint::from(1u64 << 31);
    // Largest centred |t·X mod Q| at which BEHZ with γ = 2^31 is guaranteed exact: L
    // fractional parts and the final rounding, (L+1)·Q/γ.
    let behz_bound = &q / 2u32 - (&q * (level as u32 + 1)) / &gamma - 1u32;
    let t_inv = t.modpow(&(totient_free_inverse_exponent::<P>(level)), &q);
    match kind {
        // Uniform X, redrawn while t·X mod Q lies beyond the BEHZ bound.
        0 => loop {
            let x = rng.gen_biguint_below(&q);
            let r = (&x * &t) % &q;
            let centred = if r > &q / 2u32 { &q - &r } else { r };
            if centred <= behz_bound {
                return (x, None);
            }
        },
        // t·X mod Q exactly at (or just inside) ±bound.
        1 => {
            let back = BigUint::from(rng.gen_range(0u32..1024));
            let r = &behz_bound - back;
            let r = if rng.gen() { r } else { &q - r };
            ((r * t_inv) % &q, None)
        }
        // SEAL's scaled plaintext round(Q·m/t) plus fresh-sized noise (capped by the bound).
        2 => {
            let m = rng.gen_range(0..P::T);
            let limit = ((&q / 2u32 - &t) / &t)
                .to_i64()
                .unwrap_or(i64::MAX)
                .min(1 << 20);
            let v: i64 = rng.gen_range(-limit..limit);
            (add_signed(&scaled::<P>(&q, m), v, &q), Some(m))
        }
        // round(Q·m/t) plus noise within 1% of the decryption bound: t·X = Q·m + t·v + ε with
        // |ε| <= t/2, so |v| < (Q/2 − t)/t decrypts to m.
        _ => {
            let m = rng.gen_range(0..P::T);
            let limit = (&q / 2u32 - &t) / &t;
            let shave = (&limit / 100u32).max(BigUint::from(1u32));
            let mag = &limit - rng.gen_biguint_below(&shave) - 1u32;
            let x = if rng.gen() {
                (scaled::<P>(&q, m) + mag) % &q
            } else {
                (scaled::<P>(&q, m) + &q - (mag % &q)) % &q
            };
            (x, Some(m))
        }
    }
}

/// SEAL's `floor((Q·m + floor((t+1)/2)) / t)`.
#[expect(clippy::manual_div_ceil, reason = "written as SEAL states it")]
fn scaled<P: Params>(q: &BigUint, m: u32) -> BigUint {
    (q * m + (P::T + 1) / 2) / P::T
}

/// Exponent for t^-1 mod Q by Euler: φ(Q) − 1 with Q a product of distinct primes.
fn totient_free_inverse_exponent<P: Params>(level: usize) -> BigUint {
    let phi = P::DATA_PRIMES[..level]
        .iter()
        .fold(BigUint::from(1u32), |acc, &q| acc * (q - 1));
    phi - 1u32
}

fn add_signed(x: &BigUint, v: i64, q: &BigUint) -> BigUint {
    if v >= 0 {
        (x + BigUint::from(v as u64)) % q
    } else {
        (x + q - BigUint::from(v.unsigned_abs())) % q
    }
}

fn constructed_cases<P: Params>(seed: u64) -> usize {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut sk = Box::new(SecretKey::<P>::zeroed());
    Bfv::<P>::generate_secret_key_with(&SecretSeed::from_bytes([5; 32]), &mut sk).unwrap();
    let mut ws = Box::new(Workspace::new());
    let mut plain = Box::new(Plaintext::<P>::zeroed());
    let n = P::N;
    let mut cases = 0;
    for level in 1..=P::K {
        for c in 0..CIPHERTEXTS_PER_LEVEL {
            let mut c0 = vec![0u32; level * n];
            let c1 = vec![0u32; level * n];
            let mut expected = vec![0u32; n];
            let mut must_equal = vec![None; n];
            for j in 0..n {
                let (x, m) = constructed_x::<P>(&mut rng, level, (j + c) % 4);
                for (i, r) in residues::<P>(&x, level).into_iter().enumerate() {
                    c0[i * n + j] = r;
                }
                expected[j] = exact_round::<P>(&x, level);
                must_equal[j] = m;
            }
            Bfv::<P>::decrypt_rows(
                &sk,
                level,
                CoeffRows::new(&c0),
                CoeffRows::new(&c1),
                &mut plain,
                &mut ws,
            )
            .unwrap();
            for j in 0..n {
                assert_eq!(
                    plain.coeffs()[j],
                    expected[j],
                    "{} level {level} coefficient {j}",
                    P::NAME
                );
                if let Some(m) = must_equal[j] {
                    assert_eq!(
                        expected[j], m,
                        "noise inside the bound must decrypt exactly"
                    );
                }
            }
            cases += n;
        }
    }
    cases
}

fn real_ciphertext_cases<P: Params>(seed: u64) -> usize {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut sk = Box::new(SecretKey::<P>::zeroed());
    let mut pk = Box::new(PublicKey::<P>::zeroed());
    let mut ws = Box::new(Workspace::new());
    Bfv::<P>::generate_secret_key_with(&SecretSeed::from_bytes([9; 32]), &mut sk).unwrap();
    Bfv::<P>::generate_public_key_with(
        &sk,
        &PublicSeed([10; 32]),
        &SecretSeed::from_bytes([11; 32]),
        &mut pk,
        &mut ws,
    )
    .unwrap();
    let n = P::N;
    let mut slots = vec![0u32; n];
    let mut plain = Box::new(Plaintext::<P>::zeroed());
    let mut out = Box::new(Plaintext::<P>::zeroed());
    let mut ct = Box::new(Ciphertext::<P>::zeroed());
    let mut seeded = Box::new(SeededCiphertext::<P>::zeroed());
    let mut cases = 0;
    for level in 1..=P::K {
        for path in 0..3 {
            for s in slots.iter_mut() {
                *s = rng.gen_range(0..P::T);
            }
            encoder::encode(&slots, &mut plain).unwrap();
            let seeds = EncryptionSeeds {
                a: PublicSeed(rng.gen()),
                e: SecretSeed::from_bytes(rng.gen()),
            };
            match path {
                0 => {
                    Bfv::<P>::encrypt_seeded_with(&sk, &plain, &seeds, level, &mut seeded, &mut ws)
                        .unwrap();
                    Bfv::<P>::expand_ct1(&seeded, &mut ct).unwrap();
                }
                1 => Bfv::<P>::encrypt_symmetric_with(&sk, &plain, &seeds, level, &mut ct, &mut ws)
                    .unwrap(),
                _ => Bfv::<P>::encrypt_public_with(&pk, &plain, &seeds.e, level, &mut ct, &mut ws)
                    .unwrap(),
            }
            assert_eq!(ct.level(), level);
            let x_rows = schoolbook_x::<P>(level, &ct.c0(), &ct.c1(), sk.ternary());
            Bfv::<P>::decrypt(&sk, &ct, &mut out, &mut ws).unwrap();
            // See tests/roundtrip.rs: only the public-key path at level 1 may have no noise
            // budget; there decryption must still equal the exact rounding.
            let in_budget = noise_budget_exact::<P>(&x_rows, level) > 0;
            assert!(in_budget || (level, path) == (1, 2));
            let mut res = vec![0u32; level];
            for j in 0..n {
                for i in 0..level {
                    res[i] = x_rows[i * n + j];
                }
                let x = crt::<P>(&res);
                assert_eq!(
                    out.coeffs()[j],
                    exact_round::<P>(&x, level),
                    "{} level {level} path {path} coeff {j}",
                    P::NAME
                );
                if in_budget {
                    assert_eq!(out.coeffs()[j], plain.coeffs()[j]);
                }
            }
            if path == 0 && in_budget {
                Bfv::<P>::decrypt_seeded(&sk, &seeded, &mut out, &mut ws).unwrap();
                assert_eq!(out.coeffs(), plain.coeffs());
            }
            cases += n;
        }
    }
    cases
}

#[test]
fn decrypt_equals_bigint_rounding_on_over_100k_cases() {
    let mut total = 0;
    total += constructed_cases::<Seal4096>(0xdec0_0001);
    total += constructed_cases::<Zeppelin4096>(0xdec0_0002);
    total += real_ciphertext_cases::<Seal4096>(0xdec0_0003);
    total += real_ciphertext_cases::<Zeppelin4096>(0xdec0_0004);
    total += constructed_cases::<Seal8192>(0xdec0_0005);
    total += real_ciphertext_cases::<Seal8192>(0xdec0_0006);
    assert!(total >= 100_000, "only {total} cases");
    eprintln!("{total} coefficients decrypted, all equal to big-integer round(t·X/Q) mod t");
}

#[test]
fn zero_is_not_a_special_case() {
    let x = BigUint::zero();
    assert_eq!(exact_round::<Seal4096>(&x, 3), 0);
}
