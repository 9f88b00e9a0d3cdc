//! Degenerate RBLWE public keys are refused on load (and so by the CCA2 readers built on the
//! CPA reader), a public key is checked against its secret key, and implausible secret keys
//! are refused. Under an all-zero public key a ciphertext's `c2` is `e3 + Encode(m)`: its
//! message is the top bit of every coefficient (shown below with the unchecked arithmetic).
#![allow(
    clippy::unwrap_used,
    clippy::panic,
    reason = "helpers outside #[test] functions are test code too (clippy.toml covers only #[test] functions)"
)]

use rblwe::cca::{CcaPublicKey, CcaSecretKey};
use rblwe::{cpa, EntropyPool, Error, Hardened, KatEntropy, ParamSet, PublicParameter, Set1, Set3};

fn keys<P: ParamSet>(label: &[u8]) -> (rblwe::PublicKey<P>, rblwe::SecretKey<P>) {
    let mut pool: EntropyPool<_, 1024> = EntropyPool::new(KatEntropy::new(label));
    let a = PublicParameter::<P>::from_seed(&[7u8; 32]);
    cpa::keygen::<P, Hardened, _, 1024>(&a, &mut pool).unwrap()
}

fn check_set<P: ParamSet>() {
    let n = P::N;
    let (pk, sk) = keys::<P>(b"keys test");
    let good = pk.to_bytes();
    assert!(rblwe::PublicKey::<P>::from_bytes(good.as_ref()).is_ok());
    // All zero; a = 0 with a binary p (= r1); a zero p; p with a quarter and one more small.
    let zero = vec![0u8; 2 * n];
    let mut binary_p = vec![0u8; 2 * n];
    for (i, b) in binary_p[n..].iter_mut().enumerate() {
        *b = (i % 2) as u8;
    }
    let mut zero_p = good.as_ref().to_vec();
    zero_p[n..].fill(0);
    let mut quarter = good.as_ref().to_vec();
    for b in quarter[n..n + n / 4 + 1].iter_mut() {
        *b = P::COEFF_MASK; // -1
    }
    for (name, bytes, poly) in [
        ("all zero", zero, "a"),
        ("a = 0, p binary", binary_p, "a"),
        ("p = 0", zero_p, "p"),
        ("n/4 + 1 coefficients -1 in p", quarter, "p"),
    ] {
        match rblwe::PublicKey::<P>::from_bytes(&bytes) {
            Err(Error::DegeneratePublicKey { poly: p, .. }) => assert_eq!(p, poly, "{name}"),
            other => panic!("{} {name}: {other:?}", P::NAME),
        }
        assert!(CcaPublicKey::<P>::from_bytes(&bytes).is_err(), "{name}");
        // The CCA2 secret key carries the public key for re-encryption: refused too.
        let mut cca_sk = vec![0u8; CcaSecretKey::<P>::BYTES];
        let mut r2 = vec![0u8; n / 8];
        sk.write_bytes(&mut r2).unwrap();
        cca_sk[..n / 8].copy_from_slice(&r2);
        cca_sk[n / 8 + 32..].copy_from_slice(&bytes);
        assert!(CcaSecretKey::<P>::from_bytes(&cca_sk).is_err(), "{name}");
    }
    // Key pairs.
    cpa::check_key_pair(&pk, &sk).unwrap();
    let (pk2, sk2) = keys::<P>(b"another key");
    assert_eq!(cpa::check_key_pair(&pk, &sk2), Err(Error::KeyPairMismatch));
    assert_eq!(cpa::check_key_pair(&pk2, &sk), Err(Error::KeyPairMismatch));
    // Secret keys: zero, weight 1 and all ones are refused (weight outside [n/8, 7n/8]).
    let mut weight_one = vec![0u8; n / 8];
    weight_one[3] = 0x10;
    for (name, bits) in [
        ("zero", vec![0u8; n / 8]),
        ("weight 1", weight_one),
        ("all ones", vec![0xffu8; n / 8]),
    ] {
        assert!(
            matches!(
                rblwe::SecretKey::<P>::from_bytes(&bits),
                Err(Error::InvalidKey { .. })
            ),
            "{name}"
        );
    }
}

#[test]
fn degenerate_and_mismatched_keys_are_refused() {
    check_set::<Set1>();
    check_set::<rblwe::Set2>();
    check_set::<Set3>();
}

/// The check does not refuse genuine keys: 2,000 fresh key pairs per set pass, and so do
/// 2,000 uniform random byte strings as public keys (a uniform polynomial has on average
/// 3n/q coefficients in {-1, 0, 1}, far below n/4).
#[test]
fn genuine_and_uniform_public_keys_pass() {
    fn run<P: ParamSet>() {
        let mut pool: EntropyPool<_, 1024> = EntropyPool::new(KatEntropy::new(b"uniform"));
        let a = PublicParameter::<P>::from_seed(&[9u8; 32]);
        let mut most = 0usize;
        for _ in 0..2_000 {
            let (pk, sk) = cpa::keygen::<P, Hardened, _, 1024>(&a, &mut pool).unwrap();
            cpa::check_key_pair(&pk, &sk).unwrap();
            let b = pk.to_bytes();
            let small = b.as_ref()[P::N..]
                .iter()
                .filter(|&&v| (v.wrapping_add(1) & P::COEFF_MASK) <= 2)
                .count();
            most = most.max(small);
            assert!(rblwe::PublicKey::<P>::from_bytes(b.as_ref()).is_ok());
        }
        assert!(
            most < cpa::max_small_public::<P>() / 2,
            "{}: {most}",
            P::NAME
        );
    }
    run::<Set1>();
    run::<rblwe::Set2>();
    run::<Set3>();
}

/// Why: with p = 0 (and a = 0) the ciphertext's c2 = e3 + Encode(m) reveals m outright.
#[test]
fn an_all_zero_public_key_would_reveal_the_message() {
    let n = Set1::N;
    let message: Vec<u8> = (0..n / 8).map(|i| (i * 37) as u8).collect();
    // encrypt_with_coins refuses the key before computing anything.
    let zero = [0u8; 2 * 256];
    assert!(rblwe::PublicKey::<Set1>::from_bytes(&zero).is_err());
    // The arithmetic it would have done: c2 = e3 + (q/2)·m, so MSB(c2) = m.
    let e3 = [0x5au8; 32];
    let mut c2 = [0u8; 256];
    rblwe::arith::add_bits(&mut c2, &e3, 1);
    rblwe::arith::add_bits(&mut c2, &message, 128);
    let recovered: Vec<u8> = (0..n / 8)
        .map(|j| (0..8).fold(0u8, |acc, b| acc | ((c2[8 * j + b] >> 7) << b)))
        .collect();
    assert_eq!(recovered, message);
}

/// A CCA secret key file whose embedded public key belongs to another secret is refused on
/// load: re-encryption under it would reject every genuine ciphertext, silently.
#[test]
fn a_cca_secret_key_with_another_keys_public_key_is_refused() {
    let mut pool: EntropyPool<_, 1024> = EntropyPool::new(KatEntropy::new(b"cca pair"));
    let a = PublicParameter::<Set1>::from_seed(&[3u8; 32]);
    let (_, sk) = rblwe::cca::keygen::<Set1, Hardened, _, 1024>(&a, &mut pool).unwrap();
    let (other_pk, _) = rblwe::cca::keygen::<Set1, Hardened, _, 1024>(&a, &mut pool).unwrap();
    let mut bytes = vec![0u8; CcaSecretKey::<Set1>::BYTES];
    sk.write_bytes(&mut bytes).unwrap();
    assert!(CcaSecretKey::<Set1>::from_bytes(&bytes).is_ok());
    let pk_at = Set1::N / 8 + 32;
    bytes[pk_at..].copy_from_slice(other_pk.to_bytes().as_ref());
    assert!(matches!(
        CcaSecretKey::<Set1>::from_bytes(&bytes),
        Err(Error::KeyPairMismatch)
    ));
}
