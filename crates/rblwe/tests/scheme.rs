//! The CPA scheme against an independent schoolbook model, key validation, typed errors.
#![expect(
    clippy::unwrap_used,
    clippy::panic,
    reason = "test helpers outside #[test] fns unwrap and panic on failure (clippy.toml exempts only #[test] fns)"
)]

mod common;
use common::TestRng;
use core::num::NonZeroU32;
use rand_core::{CryptoRng, RngCore};
use rblwe::cpa::{self, Ciphertext, PublicKey, SecretKey};
use rblwe::params::ParamSet;
use rblwe::reference;
use rblwe::{
    Branchy, ConstantTime, EntropyPool, Error, Hardened, KatEntropy, PublicParameter, Set1, Set2,
    Set3,
};

/// Recomputes keygen/encryption/decryption with the schoolbook reference, from the same
/// random bytes the implementation drew (its pool is cold and refills from the same stream).
fn matches_reference<P: ParamSet>() {
    let n = P::N;
    let q = P::Q;
    let b = n / 8;
    let a = PublicParameter::<P>::from_seed(&[3u8; 32]);
    let label = format!("reference-{}", P::NAME);
    let mut pool: EntropyPool<_, 1024> = EntropyPool::new(KatEntropy::new(label.as_bytes()));
    let mut stream = TestRng::new(&format!("reference-{}", P::NAME));
    // Same label => the same byte stream the pool will hand out.
    let (pk, sk) = cpa::keygen::<P, Hardened, _, 1024>(&a, &mut pool).unwrap();
    let mut r1 = vec![0u8; b];
    let mut r2 = vec![0u8; b];
    stream.bytes(&mut r1);
    stream.bytes(&mut r2);
    let mut sk_bytes = vec![0u8; b];
    sk.write_bytes(&mut sk_bytes).unwrap();
    assert_eq!(sk_bytes, r2, "secret key is the second n/8 bytes drawn");

    let (mut r1u, mut r2u) = (vec![0u8; n], vec![0u8; n]);
    reference::unpack_bits(&mut r1u, &r1);
    reference::unpack_bits(&mut r2u, &r2);
    let mut ar2 = vec![0u8; n];
    reference::negacyclic_mul_fast(&mut ar2, a.as_bytes(), &r2u, q);
    let p: Vec<u8> = (0..n)
        .map(|i| ((r1u[i] as i32 - ar2[i] as i32).rem_euclid(q as i32)) as u8)
        .collect();
    let pk_bytes = pk.to_bytes();
    assert_eq!(&pk_bytes.as_ref()[..n], a.as_bytes());
    assert_eq!(&pk_bytes.as_ref()[n..], &p[..], "p = r1 - a*r2");

    for round in 0..10 {
        let mut m = vec![0u8; b];
        stream.bytes(&mut m); // the test draws the message from the stream too...
        pool.fill(&mut vec![0u8; b]).unwrap(); // ...and keeps the pool in step
        let ct = cpa::encrypt::<P, Hardened, _, 1024>(&pk, &m, &mut pool).unwrap();
        let mut e = [vec![0u8; n], vec![0u8; n], vec![0u8; n]];
        for ei in e.iter_mut() {
            let mut bits = vec![0u8; b];
            stream.bytes(&mut bits);
            reference::unpack_bits(ei, &bits);
        }
        let mut mu = vec![0u8; n];
        reference::unpack_bits(&mut mu, &m);
        let mut t = vec![0u8; n];
        reference::negacyclic_mul_fast(&mut t, a.as_bytes(), &e[0], q);
        let c1: Vec<u8> = (0..n)
            .map(|i| ((t[i] as u32 + e[1][i] as u32) % q as u32) as u8)
            .collect();
        reference::negacyclic_mul_fast(&mut t, &p, &e[0], q);
        let c2: Vec<u8> = (0..n)
            .map(|i| {
                ((t[i] as u32 + e[2][i] as u32 + mu[i] as u32 * q as u32 / 2) % q as u32) as u8
            })
            .collect();
        let ct_bytes = ct.to_bytes();
        assert_eq!(&ct_bytes.as_ref()[..n], &c1[..], "c1, round {round}");
        assert_eq!(&ct_bytes.as_ref()[n..], &c2[..], "c2, round {round}");

        // Decryption against the scalar reference decoder on w = c1*r2 + c2.
        let mut w = vec![0u8; n];
        reference::negacyclic_mul_fast(&mut w, &c1, &r2u, q);
        for i in 0..n {
            w[i] = ((w[i] as u32 + c2[i] as u32) % q as u32) as u8;
        }
        let mut expected = vec![0u8; b];
        reference::decode(&mut expected, &w, q);
        let mut got = vec![0u8; b];
        cpa::decrypt::<P, Hardened>(&sk, &ct, &mut got).unwrap();
        assert_eq!(got, expected, "decryption, round {round}");
        if P::FAILURE_LOG2 <= -18 {
            assert_eq!(got, m);
        }
    }
}

#[test]
fn cpa_scheme_matches_schoolbook_model() {
    matches_reference::<Set1>();
    matches_reference::<Set2>();
    matches_reference::<Set3>();
}

/// Every countermeasure configuration computes the same function.
fn configs_agree<P: ParamSet>() {
    let a = PublicParameter::<P>::from_seed(&[9u8; 32]);
    let mut rng = TestRng::new("configs");
    let mk = || EntropyPool::<_, 1024>::new(KatEntropy::new(b"configs"));
    let (pk0, sk0) = cpa::keygen::<P, Branchy, _, 1024>(&a, &mut mk()).unwrap();
    let (pk1, _) = cpa::keygen::<P, ConstantTime, _, 1024>(&a, &mut mk()).unwrap();
    let (pk2, _) = cpa::keygen::<P, Hardened, _, 1024>(&a, &mut mk()).unwrap();
    assert_eq!(pk0, pk1);
    assert_eq!(pk0, pk2);
    let mut bits = vec![vec![0u8; P::N / 8]; 4];
    for _ in 0..20 {
        for x in bits.iter_mut() {
            rng.bytes(x);
        }
        let mut e = [P::Bits::zeroed(), P::Bits::zeroed(), P::Bits::zeroed()];
        for (ei, x) in e.iter_mut().zip(&bits[1..]) {
            ei.as_mut().copy_from_slice(x);
        }
        let c0 =
            cpa::encrypt_with_coins::<P, Branchy>(&pk0, &bits[0], &e[0], &e[1], &e[2]).unwrap();
        let c1 = cpa::encrypt_with_coins::<P, ConstantTime>(&pk0, &bits[0], &e[0], &e[1], &e[2])
            .unwrap();
        let c2 =
            cpa::encrypt_with_coins::<P, Hardened>(&pk0, &bits[0], &e[0], &e[1], &e[2]).unwrap();
        assert_eq!(c0, c1);
        assert_eq!(c0, c2);
        let mut m = [
            vec![0u8; P::N / 8],
            vec![0u8; P::N / 8],
            vec![0u8; P::N / 8],
        ];
        cpa::decrypt::<P, Branchy>(&sk0, &c0, &mut m[0]).unwrap();
        cpa::decrypt::<P, ConstantTime>(&sk0, &c0, &mut m[1]).unwrap();
        cpa::decrypt::<P, Hardened>(&sk0, &c0, &mut m[2]).unwrap();
        assert_eq!(m[0], m[1]);
        assert_eq!(m[0], m[2]);
    }
}
use rblwe::ByteArray;

#[test]
fn countermeasure_configurations_compute_the_same_function() {
    configs_agree::<Set1>();
    configs_agree::<Set2>();
    configs_agree::<Set3>();
}

#[test]
fn wrong_lengths_get_typed_errors() {
    assert_eq!(
        PublicKey::<Set1>::from_bytes(&[0u8; 511]),
        Err(Error::WrongLength {
            what: "public key",
            expected: 512,
            actual: 511
        })
    );
    assert_eq!(
        Ciphertext::<Set3>::from_bytes(&[0u8; 1025]),
        Err(Error::WrongLength {
            what: "ciphertext",
            expected: 1024,
            actual: 1025
        })
    );
    assert!(matches!(
        SecretKey::<Set1>::from_bytes(&[0x55u8; 31]),
        Err(Error::WrongLength {
            what: "secret key",
            expected: 32,
            actual: 31
        })
    ));
    let a = PublicParameter::<Set1>::from_seed(&[1u8; 32]);
    let mut pool: EntropyPool<_, 64> = EntropyPool::new(KatEntropy::new(b"len"));
    let (pk, sk) = cpa::keygen::<Set1, Hardened, _, 64>(&a, &mut pool).unwrap();
    assert_eq!(
        cpa::encrypt::<Set1, Hardened, _, 64>(&pk, &[0u8; 33], &mut pool),
        Err(Error::WrongLength {
            what: "message",
            expected: 32,
            actual: 33
        })
    );
    let ct = cpa::encrypt::<Set1, Hardened, _, 64>(&pk, &[0u8; 32], &mut pool).unwrap();
    let mut short = [0u8; 31];
    assert_eq!(
        cpa::decrypt::<Set1, Hardened>(&sk, &ct, &mut short),
        Err(Error::WrongLength {
            what: "message output buffer",
            expected: 32,
            actual: 31
        })
    );
}

#[test]
fn out_of_range_coefficients_get_typed_errors() {
    // q = 128: any byte >= 128 is out of range.
    let mut bytes = vec![0u8; 512];
    bytes[300] = 128;
    assert_eq!(
        Ciphertext::<Set2>::from_bytes(&bytes),
        Err(Error::CoefficientOutOfRange {
            what: "ciphertext (c2)",
            index: 44,
            value: 128,
            q: 128
        })
    );
    bytes[300] = 127;
    assert!(Ciphertext::<Set2>::from_bytes(&bytes).is_ok());
    bytes[5] = 0xff;
    assert_eq!(
        PublicKey::<Set2>::from_bytes(&bytes),
        Err(Error::CoefficientOutOfRange {
            what: "public key (a)",
            index: 5,
            value: 255,
            q: 128
        })
    );
    // q = 256: every byte is in range (so all 0xff is refused only as degenerate: every
    // coefficient is -1).
    assert!(matches!(
        PublicKey::<Set1>::from_bytes(&[0xffu8; 512]),
        Err(Error::DegeneratePublicKey { poly: "a", .. })
    ));
    assert_eq!(
        PublicParameter::<Set2>::from_bytes(&[200u8; 256]),
        Err(Error::CoefficientOutOfRange {
            what: "public parameter a",
            index: 0,
            value: 200,
            q: 128
        })
    );
}

#[test]
fn structurally_invalid_secret_keys_are_rejected() {
    let mut light = [0x01u8; 32]; // weight 31 < n/8
    light[31] = 0;
    for bytes in [[0u8; 32], [0xffu8; 32], light] {
        assert!(matches!(
            SecretKey::<Set1>::from_bytes(&bytes),
            Err(Error::InvalidKey { .. })
        ));
    }
    assert!(SecretKey::<Set1>::from_bytes(&[0x5au8; 32]).is_ok());
}

/// A TRNG stuck at zero: with fault hardening, key generation refuses the all-zero secret
/// and erases everything; without it, the weak key would be accepted.
struct StuckTrng;
impl RngCore for StuckTrng {
    fn next_u32(&mut self) -> u32 {
        0
    }
    fn next_u64(&mut self) -> u64 {
        0
    }
    fn fill_bytes(&mut self, dst: &mut [u8]) {
        dst.fill(0);
    }
    fn try_fill_bytes(&mut self, dst: &mut [u8]) -> Result<(), rand_core::Error> {
        dst.fill(0);
        Ok(())
    }
}
impl CryptoRng for StuckTrng {}

/// A TRNG that fails (the pool only calls `try_fill_bytes`; the infallible methods would
/// panic, as `OsRng`'s do).
struct BrokenTrng;
fn broken() -> rand_core::Error {
    rand_core::Error::from(NonZeroU32::new(rand_core::Error::CUSTOM_START).unwrap())
}
impl RngCore for BrokenTrng {
    fn next_u32(&mut self) -> u32 {
        panic!("{}", broken())
    }
    fn next_u64(&mut self) -> u64 {
        panic!("{}", broken())
    }
    fn fill_bytes(&mut self, _dst: &mut [u8]) {
        panic!("{}", broken())
    }
    fn try_fill_bytes(&mut self, _dst: &mut [u8]) -> Result<(), rand_core::Error> {
        Err(broken())
    }
}
impl CryptoRng for BrokenTrng {}

#[test]
fn trng_faults_are_caught() {
    let a = PublicParameter::<Set1>::from_seed(&[1u8; 32]);
    let mut stuck: EntropyPool<_, 64> = EntropyPool::new(StuckTrng);
    assert!(matches!(
        cpa::keygen::<Set1, Hardened, _, 64>(&a, &mut stuck),
        Err(Error::InvalidKey { .. })
    ));
    // Without fault hardening the stuck TRNG yields a weak (all-zero) secret.
    let (_, weak) = cpa::keygen::<Set1, ConstantTime, _, 64>(&a, &mut stuck).unwrap();
    let mut bytes = [1u8; 32];
    weak.write_bytes(&mut bytes).unwrap();
    assert_eq!(bytes, [0u8; 32]);

    let mut broken: EntropyPool<_, 64> = EntropyPool::new(BrokenTrng);
    assert_eq!(
        cpa::keygen::<Set1, Hardened, _, 64>(&a, &mut broken).unwrap_err(),
        Error::Entropy
    );
    assert_eq!(broken.prefetch(), Err(Error::Entropy));
}

#[test]
fn entropy_pool_cold_and_prefetched_deliver_the_same_stream() {
    let mut cold: EntropyPool<_, 256> = EntropyPool::new(KatEntropy::new(b"pool"));
    let mut warm: EntropyPool<_, 256> = EntropyPool::new(KatEntropy::new(b"pool"));
    assert_eq!(cold.available(), 0);
    warm.prefetch().unwrap();
    assert_eq!(warm.available(), 256);
    let mut direct = TestRng::new("pool");
    for len in [1usize, 7, 32, 100, 300, 5, 64] {
        let mut x = vec![0u8; len];
        let mut y = vec![0u8; len];
        let mut z = vec![0u8; len];
        cold.fill(&mut x).unwrap();
        warm.fill(&mut y).unwrap();
        direct.bytes(&mut z);
        assert_eq!(x, z);
        assert_eq!(y, z);
        if len == 5 {
            warm.prefetch().unwrap(); // topping up keeps the order
        }
    }
}

#[test]
fn set_ids_name_the_compile_time_sets() {
    use rblwe::SetId;
    assert_eq!(SetId::from_name("set1"), Some(SetId::Set1));
    assert_eq!(
        SetId::from_name("set3").map(|s| (s.n(), s.q())),
        Some((512, 256))
    );
    assert_eq!(SetId::from_name("set2").map(|s| s.q()), Some(128));
    assert_eq!(SetId::from_name("set4"), None);
    assert_eq!(SetId::Set2.to_string(), "set2 (n = 256, q = 128)");
}
