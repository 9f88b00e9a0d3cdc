//! First-order masked decryption against the unmasked decryption and a direct model.
#![expect(
    clippy::unwrap_used,
    reason = "test helpers outside #[test] fns unwrap on failure (clippy.toml exempts only #[test] fns)"
)]

mod common;
use common::TestRng;
use rblwe::cpa::{self, Ciphertext};
use rblwe::masked::{self, MaskedSecretKey};
use rblwe::params::ParamSet;
use rblwe::{EntropyPool, Hardened, KatEntropy, PublicParameter, Set1, Set2, Set3};

#[test]
fn isw_and_computes_and_of_shared_values() {
    let mut rng = TestRng::new("isw");
    for _ in 0..100_000 {
        let (x0, x1, y0, y1, r) = (rng.u32(), rng.u32(), rng.u32(), rng.u32(), rng.u32());
        let (z0, z1) = masked::isw_and(x0, x1, y0, y1, r);
        assert_eq!(z0 ^ z1, (x0 ^ x1) & (y0 ^ y1));
        assert_eq!(z0, (x0 & y0) ^ r, "share 0 is masked by r");
    }
}

#[test]
fn a2b_msb_equals_msb_of_the_byte_lane_sum() {
    let mut rng = TestRng::new("a2b");
    let mut random = [0u32; masked::RANDOM_WORDS_PER_GROUP];
    for log_q in [7u32, 8] {
        for _ in 0..200_000 {
            let (x0, x1) = (rng.u32(), rng.u32());
            for r in random.iter_mut() {
                *r = rng.u32();
            }
            let (b0, b1) = masked::a2b_msb(x0, x1, &random, log_q);
            let mut expected = 0u8;
            for t in 0..4 {
                let sum = ((x0 >> (8 * t)) as u8).wrapping_add((x1 >> (8 * t)) as u8);
                expected |= ((sum >> (log_q - 1)) & 1) << t;
            }
            assert_eq!(b0 ^ b1, expected);
            assert!(b0 < 16 && b1 < 16);
        }
    }
}

/// Masked and unmasked decryption agree on `count` ciphertexts: uniformly random ones (any
/// ciphertext, not only valid ones, so every decoder path is exercised) and valid ones.
fn agree<P: ParamSet>(count: usize) -> usize {
    let a = PublicParameter::<P>::from_seed(&[4u8; 32]);
    let mut pool: EntropyPool<_, 4096> = EntropyPool::new(KatEntropy::new(b"masked agree"));
    let (pk, sk) = cpa::keygen::<P, Hardened, _, 4096>(&a, &mut pool).unwrap();
    let mut msk = MaskedSecretKey::from_secret_key(&sk, &mut pool).unwrap();
    let mut rng = TestRng::new(&format!("masked-{}", P::NAME));
    let mut bytes = vec![0u8; 2 * P::N];
    let mut m = vec![0u8; P::N / 8];
    let mut plain = vec![0u8; P::N / 8];
    let mut shared = vec![0u8; P::N / 8];
    let mut previous_share = vec![0u8; P::N];
    for i in 0..count {
        let ct = if i % 10 == 0 {
            rng.bytes(&mut m);
            cpa::encrypt::<P, Hardened, _, 4096>(&pk, &m, &mut pool).unwrap()
        } else {
            rng.poly(&mut bytes, P::Q);
            Ciphertext::<P>::from_bytes(&bytes).unwrap()
        };
        cpa::decrypt::<P, Hardened>(&sk, &ct, &mut plain).unwrap();
        msk.decrypt::<Hardened, _, 4096>(&ct, &mut pool, &mut shared)
            .unwrap();
        assert_eq!(plain, shared, "ciphertext {i}");
        if i % 1000 == 0 {
            // The shares are refreshed on every decryption and still sum to r2.
            let (s0, s1) = msk.shares();
            assert_ne!(s0, &previous_share[..]);
            previous_share.copy_from_slice(s0);
            let mut r2 = vec![0u8; P::N / 8];
            sk.write_bytes(&mut r2).unwrap();
            for k in 0..P::N {
                assert_eq!(s0[k].wrapping_add(s1[k]), (r2[k / 8] >> (k % 8)) & 1);
            }
        }
    }
    count
}

#[test]
fn masked_decryption_equals_unmasked_on_many_ciphertexts() {
    let total = agree::<Set1>(100_000) + agree::<Set2>(10_000) + agree::<Set3>(10_000);
    assert!(total >= 100_000);
}

#[test]
fn masked_keygen_gives_the_same_public_key_as_plain_keygen() {
    fn run<P: ParamSet>() {
        let a = PublicParameter::<P>::from_seed(&[2u8; 32]);
        let mut p1: EntropyPool<_, 1024> = EntropyPool::new(KatEntropy::new(b"mk"));
        let mut p2: EntropyPool<_, 1024> = EntropyPool::new(KatEntropy::new(b"mk"));
        // Both draw r1 then r2 first; the masked build then draws its share.
        let (pk_plain, sk) = cpa::keygen::<P, Hardened, _, 1024>(&a, &mut p1).unwrap();
        let (pk_masked, mut msk) =
            MaskedSecretKey::<P>::keygen::<Hardened, _, 1024>(&a, &mut p2).unwrap();
        assert_eq!(pk_plain, pk_masked);
        let ct = cpa::encrypt::<P, Hardened, _, 1024>(&pk_plain, &vec![0x96u8; P::N / 8], &mut p1)
            .unwrap();
        let mut x = vec![0u8; P::N / 8];
        let mut y = vec![0u8; P::N / 8];
        cpa::decrypt::<P, Hardened>(&sk, &ct, &mut x).unwrap();
        msk.decrypt::<Hardened, _, 1024>(&ct, &mut p2, &mut y)
            .unwrap();
        assert_eq!(x, y);
    }
    run::<Set1>();
    run::<Set2>();
    run::<Set3>();
}

#[test]
fn masked_decryption_fails_closed_when_entropy_runs_out() {
    use core::num::NonZeroU32;
    use rand_core::{CryptoRng, RngCore};
    /// Serves a fixed number of bytes, then fails (through `try_fill_bytes`, the only method
    /// the pool calls; the infallible ones panic, as `OsRng`'s do).
    struct Limited(usize);
    fn exhausted() -> rand_core::Error {
        rand_core::Error::from(NonZeroU32::new(rand_core::Error::CUSTOM_START + 1).unwrap())
    }
    impl RngCore for Limited {
        fn next_u32(&mut self) -> u32 {
            panic!("{}", exhausted())
        }
        fn next_u64(&mut self) -> u64 {
            panic!("{}", exhausted())
        }
        fn fill_bytes(&mut self, _dst: &mut [u8]) {
            panic!("{}", exhausted())
        }
        fn try_fill_bytes(&mut self, dst: &mut [u8]) -> Result<(), rand_core::Error> {
            if dst.len() > self.0 {
                return Err(exhausted());
            }
            self.0 -= dst.len();
            for (i, b) in dst.iter_mut().enumerate() {
                *b = (i as u8).wrapping_mul(37).wrapping_add(self.0 as u8) | 0x11;
            }
            Ok(())
        }
    }
    impl CryptoRng for Limited {}
    let a = PublicParameter::<Set1>::from_seed(&[2u8; 32]);
    let mut pool: EntropyPool<_, 32> = EntropyPool::new(Limited(64 + 256 + 512));
    let (_, mut msk) = MaskedSecretKey::<Set1>::keygen::<Hardened, _, 32>(&a, &mut pool).unwrap();
    let ct = Ciphertext::<Set1>::from_bytes(&[7u8; 512]).unwrap();
    let mut out = [0xAAu8; 32];
    assert_eq!(
        msk.decrypt::<Hardened, _, 32>(&ct, &mut pool, &mut out),
        Err(rblwe::Error::Entropy)
    );
    assert_eq!(out, [0u8; 32], "output erased");
}
