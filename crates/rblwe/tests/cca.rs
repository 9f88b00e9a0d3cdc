//! CCA2 wrapper: round trips and a randomized tamper campaign.
#![expect(
    clippy::unwrap_used,
    reason = "test helpers outside #[test] fns unwrap on failure (clippy.toml exempts only #[test] fns)"
)]

mod common;
use common::TestRng;
use hkdf::Hkdf;
use rblwe::cca::{self, CcaCiphertext, CcaSecretKey};
use rblwe::params::ParamSet;
use rblwe::{
    EntropyPool, Error, Hardened, KatEntropy, PublicParameter, SecretKey, Set1, Set2, Set3,
};
use sha2::{Digest, Sha256};

/// Implicit rejection value recomputed from the documented definition:
/// HKDF-SHA256(salt = label, ikm = z || SHA-256(label' || set || C), info = set).
fn expected_rejection<P: ParamSet>(z: &[u8], ct: &[u8]) -> Vec<u8> {
    let mut h = Sha256::new();
    h.update(b"zeppelin-rblwe/v1/H/ciphertext");
    h.update(P::NAME.as_bytes());
    h.update(ct);
    let hc = h.finalize();
    let mut ikm = z.to_vec();
    ikm.extend_from_slice(&hc);
    let hk = Hkdf::<Sha256>::new(Some(b"zeppelin-rblwe/v1/R/implicit-rejection"), &ikm);
    let mut out = vec![0u8; P::N / 8];
    hk.expand(P::NAME.as_bytes(), &mut out).unwrap();
    out
}

fn campaign<P: ParamSet>(trials: usize, masked_every: usize, round_trips: bool) {
    let a = PublicParameter::<P>::from_seed(&[5u8; 32]);
    let mut pool: EntropyPool<_, 1024> = EntropyPool::new(KatEntropy::new(b"cca campaign"));
    let (pk, mut sk) = cca::keygen::<P, Hardened, _, 1024>(&a, &mut pool).unwrap();
    let mut msk = sk.to_masked(&mut pool).unwrap();
    let mut sk_bytes = vec![0u8; CcaSecretKey::<P, SecretKey<P>>::BYTES];
    sk.write_bytes(&mut sk_bytes).unwrap();
    let z = sk_bytes[P::N / 8..P::N / 8 + 32].to_vec();

    let mut rng = TestRng::new(&format!("tamper-{}", P::NAME));
    let len = CcaCiphertext::<P>::BYTES;
    let n = P::N;
    let b = P::N / 8;
    let components = [(0, n), (n, n), (2 * n, b), (2 * n + b, b)];
    let mut message = vec![0u8; b];
    let mut out = vec![0u8; b];
    let (mut rejected, mut refused, mut valid_ok) = (0usize, 0usize, 0usize);
    for trial in 0..trials {
        rng.bytes(&mut message);
        let ct = cca::encrypt::<P, Hardened, _, 1024>(&pk, &message, &mut pool).unwrap();
        let mut bytes = vec![0u8; len];
        ct.write_bytes(&mut bytes).unwrap();
        if round_trips && trial % 16 == 0 {
            cca::decrypt::<P, Hardened, _, _, 1024>(&mut sk, &ct, &mut pool, &mut out).unwrap();
            assert_eq!(out, message, "valid ciphertext, trial {trial}");
            valid_ok += 1;
        }
        // Tamper: which component, and how.
        let (start, size) = components[trial % 4];
        let mut tampered = bytes.clone();
        match (trial / 4) % 3 {
            0 => {
                let bit = rng.u32() as usize % (size * 8);
                tampered[start + bit / 8] ^= 1 << (bit % 8);
            }
            1 => {
                let at = start + rng.u32() as usize % size;
                let delta = 1 + (rng.u32() % 255) as u8;
                tampered[at] ^= delta;
            }
            _ => {
                let mut any = false;
                for byte in tampered[start..start + size].iter_mut() {
                    if rng.u32().is_multiple_of(8) {
                        *byte = rng.u32() as u8;
                        any = true;
                    }
                }
                if !any || tampered == bytes {
                    tampered[start] ^= 0x01;
                }
            }
        }
        if P::Q == 128 {
            for byte in tampered[..2 * n].iter_mut() {
                // Keep most changes in range so they reach the decryptor; out-of-range ones
                // are refused at parse time (checked below for some).
                if trial % 7 != 0 {
                    *byte &= 0x7f;
                }
            }
        }
        if tampered == bytes {
            tampered[2 * n] ^= 0x80; // the masking above undid the change: flip c3 instead
        }
        let parsed = match CcaCiphertext::<P>::from_bytes(&tampered) {
            Ok(ct) => ct,
            Err(e) => {
                assert!(matches!(e, Error::CoefficientOutOfRange { q: 128, .. }));
                refused += 1;
                continue;
            }
        };
        let expected = expected_rejection::<P>(&z, &tampered);
        cca::decrypt::<P, Hardened, _, _, 1024>(&mut sk, &parsed, &mut pool, &mut out).unwrap();
        assert_eq!(
            out, expected,
            "tampered ciphertext accepted or wrong rejection, trial {trial}"
        );
        assert_ne!(out, message);
        if trial % masked_every == 0 {
            cca::decrypt::<P, Hardened, _, _, 1024>(&mut msk, &parsed, &mut pool, &mut out)
                .unwrap();
            assert_eq!(out, expected, "masked key, trial {trial}");
        }
        rejected += 1;
    }
    assert_eq!(rejected + refused, trials);
    println!("{}: {rejected} rejected implicitly, {refused} refused at parse, {valid_ok} valid round trips", P::NAME);
}

#[test]
fn every_modified_ciphertext_is_rejected() {
    campaign::<Set1>(3000, 10, true);
    campaign::<Set3>(1500, 10, true);
    // Set 2 fails to decrypt ~22% of valid ciphertexts (2^-10 per bit), so only tampering is
    // checked there.
    campaign::<Set2>(1500, 10, false);
}

#[test]
fn cca_round_trips_with_plain_and_masked_keys() {
    fn run<P: ParamSet>() {
        let a = PublicParameter::<P>::from_seed(&[6u8; 32]);
        let mut pool: EntropyPool<_, 4096> = EntropyPool::new(KatEntropy::new(b"cca rt"));
        let (pk, mut sk) = cca::keygen_masked::<P, Hardened, _, 4096>(&a, &mut pool).unwrap();
        let mut rng = TestRng::new("cca rt");
        let mut m = vec![0u8; P::N / 8];
        let mut out = vec![0u8; P::N / 8];
        for _ in 0..50 {
            rng.bytes(&mut m);
            let ct = cca::encrypt::<P, Hardened, _, 4096>(&pk, &m, &mut pool).unwrap();
            cca::decrypt::<P, Hardened, _, _, 4096>(&mut sk, &ct, &mut pool, &mut out).unwrap();
            assert_eq!(out, m);
        }
    }
    run::<Set1>();
    run::<Set3>();
}

#[test]
fn cca_inputs_are_validated() {
    assert!(matches!(
        CcaCiphertext::<Set1>::from_bytes(&[0u8; 575]),
        Err(Error::WrongLength {
            expected: 576,
            actual: 575,
            ..
        })
    ));
    assert!(CcaCiphertext::<Set3>::from_bytes(&[0u8; 1152]).is_ok());
    assert!(matches!(
        CcaSecretKey::<Set1, SecretKey<Set1>>::from_bytes(&[0u8; 32 + 32 + 512]),
        Err(Error::InvalidKey { .. })
    ));
    assert!(matches!(
        CcaSecretKey::<Set1, SecretKey<Set1>>::from_bytes(&[0u8; 10]),
        Err(Error::WrongLength {
            expected: 576,
            actual: 10,
            ..
        })
    ));
}

#[test]
fn cca_secret_key_serialization_round_trips() {
    let a = PublicParameter::<Set1>::from_seed(&[8u8; 32]);
    let mut pool: EntropyPool<_, 1024> = EntropyPool::new(KatEntropy::new(b"ser"));
    let (pk, sk) = cca::keygen::<Set1, Hardened, _, 1024>(&a, &mut pool).unwrap();
    let mut bytes = vec![0u8; CcaSecretKey::<Set1, SecretKey<Set1>>::BYTES];
    sk.write_bytes(&mut bytes).unwrap();
    let mut loaded = CcaSecretKey::<Set1, SecretKey<Set1>>::from_bytes(&bytes).unwrap();
    assert_eq!(loaded.public_key(), pk);
    let ct = cca::encrypt::<Set1, Hardened, _, 1024>(&pk, &[0x3c; 32], &mut pool).unwrap();
    let mut out = [0u8; 32];
    cca::decrypt::<Set1, Hardened, _, _, 1024>(&mut loaded, &ct, &mut pool, &mut out).unwrap();
    assert_eq!(out, [0x3c; 32]);
}
