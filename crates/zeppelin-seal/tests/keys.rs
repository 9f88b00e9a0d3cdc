//! Keys that should be refused are refused: degenerate SEAL public keys on load, SEAL secret
//! keys that are not plausible ternary secrets, public keys that do not belong to the secret
//! key, and SEAL and device secret keys that are different keys. Secret-holding outputs are
//! `Zeroizing`, and errors do not echo residues.
#![allow(
    clippy::unwrap_used,
    clippy::panic,
    reason = "helpers outside #[test] functions are test code too (clippy.toml covers only #[test] functions)"
)]

use rand_core::OsRng;
use zeppelin::{Bfv, PublicKey as DevicePk, Seal4096, SecretKey as DeviceSk, SecretSeed};
use zeppelin_seal::device::{self, DeviceContext};
use zeppelin_seal::keygen::KeyGenerator;
use zeppelin_seal::poly::RnsNtt;
use zeppelin_seal::{Ciphertext, ComprMode, PublicKey, SealError, SecretKey};
use zeroize::Zeroizing;

fn device_sk(seed: u8) -> Box<DeviceSk<Seal4096>> {
    let mut sk = Box::new(DeviceSk::<Seal4096>::zeroed());
    Bfv::<Seal4096>::generate_secret_key_with(&SecretSeed::from_bytes([seed; 32]), &mut sk)
        .unwrap();
    sk
}

/// A SEAL secret key of the given coefficients (not validated: built by hand).
fn seal_sk_of(ctx: &DeviceContext<Seal4096>, coeffs: &[i64]) -> SecretKey {
    let level = ctx.seal().key_level();
    let ntt = RnsNtt::new(&level.coeff_modulus, 4096).unwrap();
    let mut data = ntt.from_signed(coeffs).unwrap();
    ntt.forward(&mut data).unwrap();
    SecretKey {
        parms_id: level.parms_id,
        data,
    }
}

#[test]
fn degenerate_seal_public_keys_are_refused_on_load() {
    let ctx = DeviceContext::<Seal4096>::new().unwrap();
    let sk = device::secret_key(&ctx, &device_sk(1)).unwrap();
    let pk = KeyGenerator::new(ctx.seal(), &sk)
        .unwrap()
        .public_key(&mut OsRng)
        .unwrap();
    let good = pk.save(ComprMode::None).unwrap();
    assert!(PublicKey::load(ctx.seal(), &good).is_ok());
    // An all-zero body, c1 = 0 (so c0 = -e), and one zero row of c0.
    let n = 4096;
    let data_at = 113;
    let mut zero = good.clone();
    zero[data_at..].fill(0);
    let mut c1_zero = good.clone();
    c1_zero[data_at + 8 * 4 * n..].fill(0);
    let mut row_zero = good.clone();
    row_zero[data_at + 8 * 2 * n..data_at + 8 * 3 * n].fill(0);
    for (name, b, poly, prime) in [
        ("all zero", zero, 0, 0),
        ("c1 zero", c1_zero, 1, 0),
        ("c0 row 2 zero", row_zero, 0, 2),
    ] {
        match PublicKey::load(ctx.seal(), &b) {
            Err(SealError::PublicKeyDegenerate {
                poly: p, prime: q, ..
            }) => assert_eq!((p, q), (poly, prime), "{name}"),
            other => panic!("{name}: {other:?}"),
        }
    }
    // A residue out of range is refused, and the message does not echo it.
    let mut b = good.clone();
    let bad = 134_176_769u64 + 12_345;
    b[data_at + 40..data_at + 48].copy_from_slice(&bad.to_le_bytes());
    let e = PublicKey::load(ctx.seal(), &b).unwrap_err();
    assert!(matches!(
        e,
        SealError::CoefficientOutOfRange { index: 5, .. }
    ));
    assert!(!e.to_string().contains(&bad.to_string()), "{e}");
}

#[test]
fn public_keys_are_checked_against_their_secret_keys() {
    let ctx = DeviceContext::<Seal4096>::new().unwrap();
    let (dsk, other) = (device_sk(1), device_sk(2));
    let sk = device::secret_key(&ctx, &dsk).unwrap();
    let sk2 = device::secret_key(&ctx, &other).unwrap();
    let pk = KeyGenerator::new(ctx.seal(), &sk)
        .unwrap()
        .public_key(&mut OsRng)
        .unwrap();
    pk.check_key_pair(ctx.seal(), &sk).unwrap();
    assert!(matches!(
        pk.check_key_pair(ctx.seal(), &sk2),
        Err(SealError::KeyPairMismatch { bound: 21 })
    ));
    // One residue of c0 moved by 22 (just past the noise bound) is noticed.
    let mut nudged = pk.clone();
    nudged.0.data[7] = (nudged.0.data[7] + 10_000) % 134_176_769;
    assert!(nudged.check_key_pair(ctx.seal(), &sk).is_err());
    // Device keys: device.pk (from SEAL's public key) against device.sk.
    let mut dpk = Box::new(DevicePk::<Seal4096>::zeroed());
    device::public_key_from_seal(&ctx, &pk, &mut dpk).unwrap();
    device::check_key_pair(&dpk, &dsk).unwrap();
    assert!(matches!(
        device::check_key_pair(&dpk, &other),
        Err(SealError::KeyPairMismatch { .. })
    ));
    // secret.seal against device.sk.
    device::check_secret_keys_agree(&ctx, &sk, &dsk).unwrap();
    assert!(matches!(
        device::check_secret_keys_agree(&ctx, &sk2, &dsk),
        Err(SealError::SecretKeysDiffer)
    ));
    assert!(sk.ct_eq(&device::secret_key(&ctx, &dsk).unwrap()));
    assert!(!sk.ct_eq(&sk2));
}

#[test]
fn implausible_seal_secret_keys_are_refused_on_load() {
    let ctx = DeviceContext::<Seal4096>::new().unwrap();
    let n = 4096;
    let good = device::secret_key(&ctx, &device_sk(3)).unwrap();
    assert!(SecretKey::load(ctx.seal(), &good.save(ComprMode::None).unwrap()).is_ok());
    let mut weight_one = vec![0i64; n];
    weight_one[17] = 1;
    let all_ones = vec![1i64; n];
    let cases: [(&str, Vec<i64>); 3] = [
        ("zero", vec![0; n]),
        ("weight 1", weight_one),
        ("all ones", all_ones),
    ];
    for (name, coeffs) in cases {
        let b = seal_sk_of(&ctx, &coeffs).save(ComprMode::None).unwrap();
        assert!(
            matches!(
                SecretKey::load(ctx.seal(), &b),
                Err(SealError::SecretKeyWeight { .. })
            ),
            "{name}"
        );
    }
    // Not ternary: one coefficient 2.
    let mut coeffs: Vec<i64> = (0..n).map(|i| [1, -1, 0][i % 3]).collect();
    coeffs[9] = 2;
    let b = seal_sk_of(&ctx, &coeffs).save(ComprMode::Zstd).unwrap();
    assert!(matches!(
        SecretKey::load(ctx.seal(), &b),
        Err(SealError::SecretKeyMalformed)
    ));
    // Ternary modulo the first prime, another polynomial modulo the last.
    let mut mixed = seal_sk_of(&ctx, &(0..n).map(|i| [1, -1, 0][i % 3]).collect::<Vec<_>>());
    let other = seal_sk_of(&ctx, &(0..n).map(|i| [0, 1, -1][i % 3]).collect::<Vec<_>>());
    mixed.data[3 * n..].copy_from_slice(&other.data[3 * n..]);
    let b = mixed.save(ComprMode::None).unwrap();
    assert!(matches!(
        SecretKey::load(ctx.seal(), &b),
        Err(SealError::SecretKeyMalformed)
    ));
}

#[test]
fn secret_outputs_are_zeroizing_and_errors_do_not_echo_values() {
    let ctx = DeviceContext::<Seal4096>::new().unwrap();
    let sk = device::secret_key(&ctx, &device_sk(4)).unwrap();
    // The type is the test: SecretKey::save hands out a buffer wiped on drop.
    let bytes: Zeroizing<Vec<u8>> = sk.save(ComprMode::None).unwrap();
    assert!(!bytes.is_empty());
    let bytes: Zeroizing<Vec<u8>> =
        zeppelin_seal::wire::frame_secret(&[1, 2, 3], ComprMode::Zstd).unwrap();
    assert!(!bytes.is_empty());
    // A plaintext coefficient >= t: the error names the index and t, not the value.
    let bad = zeppelin_seal::Plaintext::new(vec![70_001; 8])
        .save(ComprMode::None)
        .unwrap();
    let e = zeppelin_seal::Plaintext::load(ctx.seal(), &bad).unwrap_err();
    assert!(matches!(
        e,
        SealError::CoefficientOutOfRange {
            index: 0,
            modulus: 65_537,
            ..
        }
    ));
    assert!(!e.to_string().contains("70001"), "{e}");
    let level = ctx.seal().first_level();
    let mut data = vec![0u64; 2 * 3 * 4096];
    data[3] = 999_999_999;
    let e = Ciphertext::new(level, 4096, 2, false, data).unwrap_err();
    assert!(!e.to_string().contains("999999999"), "{e}");
}
