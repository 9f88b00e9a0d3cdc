//! dudect on the host builds: fixed-versus-random Welch t-tests on the running time of every
//! secret-path operation (Reparaz, Balasch, Verbauwhede, "Dude, is my code constant time?",
//! DATE 2017), through the `dudect-bencher` crate.
//!
//! Each benchmark interleaves the two classes at random, one measurement at a time: `Left`
//! is one fixed secret input, `Right` a fresh random one. Both classes are copied into the
//! same buffers before each (untimed) measurement, so the fixed class gets no cache
//! advantage from living at one address. dudect-bencher crops the measurements at 100
//! percentiles and reports the largest |t| over the crops and its second-order test; a
//! value above 4.5 says the two timing distributions differ.
//!
//! `leaky_gaussian_early_exit` is the control: the CDT Gaussian with the early-exit scan a
//! naive implementation would write (it stops at the first table entry above the word),
//! run through the same harness. It must be flagged; the real sampler must not be.
//!
//! Measurements per benchmark: `ZEPPELIN_DUDECT_MEASUREMENTS` (default 1,000,000).
//! `security/dudect/run.sh` runs them all and writes `reports/security/dudect.md`.
#![expect(
    clippy::panic,
    reason = "a measurement harness: a failed set-up must stop the run loudly"
)]

use std::cell::RefCell;

use dudect_bencher::rand::{Rng, RngExt};
use dudect_bencher::{ctbench_main, BenchRng, Class, CtRunner};
use rand_chacha::ChaCha20Rng;
use rand_core::SeedableRng;
use rblwe::{cca, EntropyPool, Hardened, PublicParameter, Set1};
use zeppelin::prng::{AesCtr128, PublicPrng, PublicSeed, SecretPrng, SecretSeed};
use zeppelin::sampler::{sample_gaussian, sample_ternary, sample_uniform, CDT, GAUSSIAN_BOUND};
use zeppelin::{
    encoder, Bfv, Ciphertext, EncryptionSeeds, Params, Plaintext, PublicKey, Seal4096, SecretKey,
    SeededCiphertext, Workspace,
};

type P = Seal4096;
type Client = Bfv<P>;

/// Distinct random inputs of the `Right` class, cycled through at random.
const POOL: usize = 256;

fn measurements() -> usize {
    std::env::var("ZEPPELIN_DUDECT_MEASUREMENTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000_000)
}

/// A cryptographic generator for key and input generation, seeded from the bench's RNG so a
/// run is reproducible from the seed dudect-bencher prints.
fn crypto_rng(rng: &mut BenchRng) -> ChaCha20Rng {
    ChaCha20Rng::seed_from_u64(rng.next_u64())
}

fn class(rng: &mut BenchRng) -> Class {
    if rng.random::<bool>() {
        Class::Left
    } else {
        Class::Right
    }
}

fn random_plaintext(rng: &mut ChaCha20Rng) -> Box<Plaintext<P>> {
    let slots: Vec<u32> = (0..P::N)
        .map(|_| rand_core::RngCore::next_u32(rng) % P::T)
        .collect();
    let mut plain = Box::new(Plaintext::<P>::zeroed());
    assert!(encoder::encode(&slots, &mut plain).is_ok());
    plain
}

fn seed_bytes(rng: &mut ChaCha20Rng) -> [u8; 32] {
    let mut s = [0u8; 32];
    rand_core::RngCore::fill_bytes(rng, &mut s);
    s
}

fn keys(rng: &mut ChaCha20Rng) -> (Box<SecretKey<P>>, Box<PublicKey<P>>) {
    let mut sk = Box::new(SecretKey::<P>::zeroed());
    let mut pk = Box::new(PublicKey::<P>::zeroed());
    let mut ws = Box::new(Workspace::<P>::new());
    assert!(Client::generate_secret_key(rng, &mut sk).is_ok());
    assert!(Client::generate_public_key(&sk, rng, &mut pk, &mut ws).is_ok());
    (sk, pk)
}

/// BFV decryption under one key: a fixed ciphertext against ciphertexts of random
/// plaintexts.
fn bfv_decrypt(runner: &mut CtRunner, rng: &mut BenchRng) {
    let mut crng = crypto_rng(rng);
    let (sk, _) = keys(&mut crng);
    let mut ws = Box::new(Workspace::<P>::new());
    let mut encrypt = |plain: &Plaintext<P>, crng: &mut ChaCha20Rng| {
        let mut ct = Box::new(Ciphertext::<P>::zeroed());
        assert!(Client::encrypt_symmetric(&sk, plain, crng, &mut ct, &mut ws).is_ok());
        ct
    };
    let fixed = encrypt(&Plaintext::zeroed(), &mut crng);
    let fixed = copies(&fixed);
    let pool: Vec<_> = (0..POOL)
        .map(|_| {
            let plain = random_plaintext(&mut crng);
            encrypt(&plain, &mut crng)
        })
        .collect();
    let state = RefCell::new((
        Box::new(Ciphertext::<P>::zeroed()),
        Box::new(Plaintext::<P>::zeroed()),
        Box::new(Workspace::<P>::new()),
    ));
    for _ in 0..measurements() {
        let c = class(rng);
        let source = match c {
            Class::Left => &fixed[rng.random_range(0..POOL)],
            Class::Right => &pool[rng.random_range(0..POOL)],
        };
        state.borrow_mut().0.clone_from(source);
        runner.run_one(c, || {
            let (ct, plain, ws) = &mut *state.borrow_mut();
            Client::decrypt(&sk, ct, plain, ws).is_ok()
        });
    }
}

/// `POOL` copies of the fixed input at distinct addresses: the fixed class is drawn from them
/// like the random class from its pool, so both leave the same cache footprint when they are
/// copied into place (a single hot fixed buffer made the random class look slower).
fn copies<T: Clone>(fixed: &T) -> Vec<T> {
    (0..POOL).map(|_| fixed.clone()).collect()
}

/// The secret inputs of one encryption: the plaintext and the secret stream's seed. The mask
/// seed is public (it travels in the clear) and is not part of the class: every measurement
/// of either class draws it from one shared pool (see [`run_encryption`]).
#[derive(Clone)]
struct EncryptionInput {
    plain: Box<Plaintext<P>>,
    e: SecretSeed,
}

fn encryption_inputs(crng: &mut ChaCha20Rng) -> (Vec<EncryptionInput>, Vec<EncryptionInput>) {
    let make = |plain: Box<Plaintext<P>>, crng: &mut ChaCha20Rng| EncryptionInput {
        plain,
        e: SecretSeed::from_bytes(seed_bytes(crng)),
    };
    let fixed = copies(&make(Box::new(Plaintext::zeroed()), crng));
    let pool = (0..POOL)
        .map(|_| {
            let plain = random_plaintext(crng);
            make(plain, crng)
        })
        .collect();
    (fixed, pool)
}

/// Runs `op` on the chosen secret input (copied into one place first) for every measurement,
/// with a mask seed drawn from a public pool independently of the class. (With one fixed mask
/// seed in the fixed class, the uniform sampler's rejections of that public stream made the
/// classes differ in time: symmetric encryption |t| = 13.5 at 10^6 measurements, a difference
/// in public data that dudect cannot tell from a leak.)
fn run_encryption<T>(
    runner: &mut CtRunner,
    rng: &mut BenchRng,
    fixed: &[EncryptionInput],
    pool: &[EncryptionInput],
    out: T,
    op: impl Fn(&Plaintext<P>, &EncryptionSeeds, &mut T, &mut Workspace<P>) -> bool,
) {
    let mut crng = crypto_rng(rng);
    let public_seeds: Vec<PublicSeed> = (0..POOL)
        .map(|_| PublicSeed(seed_bytes(&mut crng)))
        .collect();
    let state = RefCell::new((
        Box::new(Plaintext::<P>::zeroed()),
        EncryptionSeeds {
            a: PublicSeed([0; 32]),
            e: SecretSeed::from_bytes([0; 32]),
        },
        out,
        Box::new(Workspace::<P>::new()),
    ));
    for _ in 0..measurements() {
        let c = class(rng);
        let source = match c {
            Class::Left => &fixed[rng.random_range(0..fixed.len())],
            Class::Right => &pool[rng.random_range(0..pool.len())],
        };
        {
            let s = &mut *state.borrow_mut();
            s.0.clone_from(&source.plain);
            s.1 = EncryptionSeeds {
                a: public_seeds[rng.random_range(0..POOL)],
                e: source.e.clone(),
            };
        }
        runner.run_one(c, || {
            let (plain, seeds, out, ws) = &mut *state.borrow_mut();
            op(plain, seeds, out, ws)
        });
    }
}

/// Symmetric encryption (full `(c0, c1)`): fixed plaintext and seeds against random ones.
fn bfv_encrypt_symmetric(runner: &mut CtRunner, rng: &mut BenchRng) {
    let mut crng = crypto_rng(rng);
    let (sk, _) = keys(&mut crng);
    let (fixed, pool) = encryption_inputs(&mut crng);
    let out = Box::new(Ciphertext::<P>::zeroed());
    run_encryption(runner, rng, &fixed, &pool, out, |plain, seeds, ct, ws| {
        Client::encrypt_symmetric_with(&sk, plain, seeds, P::K, ct, ws).is_ok()
    });
}

/// Seeded symmetric encryption (`c0` and the mask seed).
fn bfv_encrypt_seeded(runner: &mut CtRunner, rng: &mut BenchRng) {
    let mut crng = crypto_rng(rng);
    let (sk, _) = keys(&mut crng);
    let (fixed, pool) = encryption_inputs(&mut crng);
    let out = Box::new(SeededCiphertext::<P>::zeroed());
    run_encryption(runner, rng, &fixed, &pool, out, |plain, seeds, ct, ws| {
        Client::encrypt_seeded_with(&sk, plain, seeds, P::K, ct, ws).is_ok()
    });
}

/// Public-key encryption: fixed plaintext and secret seed against random ones.
fn bfv_encrypt_public(runner: &mut CtRunner, rng: &mut BenchRng) {
    let mut crng = crypto_rng(rng);
    let (_, pk) = keys(&mut crng);
    let (fixed, pool) = encryption_inputs(&mut crng);
    let out = Box::new(Ciphertext::<P>::zeroed());
    run_encryption(runner, rng, &fixed, &pool, out, |plain, seeds, ct, ws| {
        Client::encrypt_public_with(&pk, plain, &seeds.e, P::K, ct, ws).is_ok()
    });
}

/// Runs `sample` on a fixed seed against random seeds.
fn run_sampler(
    runner: &mut CtRunner,
    rng: &mut BenchRng,
    sample: impl Fn(&[u8; 32], &mut [i32]) -> i32,
) {
    let mut crng = crypto_rng(rng);
    let fixed = copies(&seed_bytes(&mut crng));
    let pool: Vec<[u8; 32]> = (0..POOL).map(|_| seed_bytes(&mut crng)).collect();
    let state = RefCell::new(([0u8; 32], vec![0i32; P::N]));
    for _ in 0..measurements() {
        let c = class(rng);
        // Both classes do the same untimed work (one index draw, one copy) before the
        // measurement; the fixed class used to skip the draw.
        state.borrow_mut().0 = match c {
            Class::Left => fixed[rng.random_range(0..POOL)],
            Class::Right => pool[rng.random_range(0..POOL)],
        };
        runner.run_one(c, || {
            let (seed, out) = &mut *state.borrow_mut();
            sample(seed, out)
        });
    }
}

/// The CDT Gaussian (n samples from the secret stream, the backend's constant-time scan).
fn sampler_gaussian(runner: &mut CtRunner, rng: &mut BenchRng) {
    let backend = zeppelin_ring::default_backend();
    let mut poly = vec![0i8; P::N];
    let poly = RefCell::new(&mut poly[..]);
    run_sampler(runner, rng, |seed, _| {
        let mut prng = SecretPrng::<AesCtr128>::new(&SecretSeed::from_bytes(*seed));
        let out = &mut **poly.borrow_mut();
        sample_gaussian(&mut prng, out, &backend);
        i32::from(out[0])
    });
}

/// The ternary secret-key sampler.
fn sampler_ternary(runner: &mut CtRunner, rng: &mut BenchRng) {
    let mut poly = vec![0i8; P::N];
    let poly = RefCell::new(&mut poly[..]);
    run_sampler(runner, rng, |seed, _| {
        let mut prng = SecretPrng::<AesCtr128>::new(&SecretSeed::from_bytes(*seed));
        let out = &mut **poly.borrow_mut();
        sample_ternary(&mut prng, out);
        i32::from(out[0])
    });
}

/// The uniform sampler runs on the public stream (the seed of `a` travels in the clear) and
/// rejects words `>= q`, so its time may depend on that public seed; measured for the record,
/// not a secret path.
fn public_sampler_uniform(runner: &mut CtRunner, rng: &mut BenchRng) {
    let q = P::ntt_tables()[0].modulus();
    let mut poly = vec![0u32; P::N];
    let poly = RefCell::new(&mut poly[..]);
    run_sampler(runner, rng, |seed, _| {
        let mut prng = PublicPrng::<AesCtr128>::new(&PublicSeed(*seed));
        let out = &mut **poly.borrow_mut();
        sample_uniform(&mut prng, q, out, &zeppelin_ring::default_backend());
        out[0] as i32
    });
}

/// The control: a Gaussian sampler with the early-exit CDT scan (leaks the samples' sizes).
fn leaky_gaussian_early_exit(runner: &mut CtRunner, rng: &mut BenchRng) {
    run_sampler(runner, rng, |seed, out| {
        let mut prng = SecretPrng::<AesCtr128>::new(&SecretSeed::from_bytes(*seed));
        for o in out.iter_mut() {
            let r = prng.next_u32() & 0x7fff_ffff;
            let index = CDT.iter().position(|&c| r < c).unwrap_or(CDT.len());
            *o = index as i32 - GAUSSIAN_BOUND;
        }
        out[0]
    });
}

/// RBLWE CCA2 decryption (Set 1, hardened): a fixed valid ciphertext against random
/// ciphertexts of which half are valid and half tampered, so both the message and the
/// validity (what implicit rejection hides) vary in the random class.
fn rblwe_cca2_decrypt(runner: &mut CtRunner, rng: &mut BenchRng) {
    let mut pool_rng: EntropyPool<_, 1024> = EntropyPool::new(crypto_rng(rng));
    let a = PublicParameter::<Set1>::from_seed(&seed_bytes(&mut crypto_rng(rng)));
    let Ok((pk, sk)) = cca::keygen::<Set1, Hardened, _, 1024>(&a, &mut pool_rng) else {
        panic!("RBLWE key generation failed");
    };
    let mut encrypt = |message: &[u8; 32], tamper: Option<usize>| {
        let Ok(ct) = cca::encrypt::<Set1, Hardened, _, 1024>(&pk, message, &mut pool_rng) else {
            panic!("RBLWE encryption failed");
        };
        let mut bytes = vec![0u8; cca::CcaCiphertext::<Set1>::BYTES];
        assert!(ct.write_bytes(&mut bytes).is_ok());
        if let Some(i) = tamper {
            // One bit of c4 (the last N/8 bytes): still well-formed, no longer valid.
            bytes[i] ^= 1;
        }
        let Ok(ct) = cca::CcaCiphertext::<Set1>::from_bytes(&bytes) else {
            panic!("RBLWE ciphertext did not parse");
        };
        ct
    };
    let fixed = encrypt(&[0x5a; 32], None);
    let tag_start = cca::CcaCiphertext::<Set1>::BYTES - 32;
    let pool: Vec<_> = (0..POOL)
        .map(|k| {
            let mut m = [0u8; 32];
            rng.fill_bytes(&mut m);
            let tamper = (k % 2 == 1).then(|| tag_start + rng.random_range(0..32));
            encrypt(&m, tamper)
        })
        .collect();
    let fixed = copies(&fixed);
    let state = RefCell::new((
        fixed[0].clone(),
        sk,
        [0u8; 32],
        EntropyPool::<_, 1024>::new(crypto_rng(rng)),
    ));
    for _ in 0..measurements() {
        let c = class(rng);
        state.borrow_mut().0.clone_from(match c {
            Class::Left => &fixed[rng.random_range(0..POOL)],
            Class::Right => &pool[rng.random_range(0..POOL)],
        });
        runner.run_one(c, || {
            let (ct, sk, out, entropy) = &mut *state.borrow_mut();
            cca::decrypt::<Set1, Hardened, _, _, 1024>(sk, ct, entropy, out).is_ok()
        });
    }
}

ctbench_main!(
    bfv_decrypt,
    bfv_encrypt_symmetric,
    bfv_encrypt_seeded,
    bfv_encrypt_public,
    sampler_gaussian,
    sampler_ternary,
    public_sampler_uniform,
    rblwe_cca2_decrypt,
    leaky_gaussian_early_exit
);
