//! Server-side costs of the SEAL interop: seed expansion with SEAL's generators, loading and
//! saving a fresh ciphertext (none / zstd), modulus switching, and trusted-side key generation.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use criterion::{criterion_group, criterion_main, Criterion};
use rand::{Rng, SeedableRng};
use zeppelin_seal::adapter::{seal4096_parameters, secret_key_from_ternary};
use zeppelin_seal::convert::drop_last_prime;
use zeppelin_seal::keygen::KeyGenerator;
use zeppelin_seal::{Ciphertext, ComprMode, PrngInfo, PrngType, SealContext};

fn benches(c: &mut Criterion) {
    let ctx = SealContext::new(seal4096_parameters()).unwrap();
    let level = ctx.first_level().clone();
    let n = ctx.n();
    let mut rng = rand::rngs::StdRng::seed_from_u64(1);
    for (t, name) in [
        (PrngType::Blake2xb, "blake2xb"),
        (PrngType::Shake256, "shake256"),
    ] {
        let info = PrngInfo {
            prng_type: t,
            seed: [7; 64],
        };
        c.bench_function(&format!("expand c1 ({name}, 3 primes)"), |b| {
            b.iter(|| Ciphertext::expand_c1(&info, &level, n))
        });
    }
    let data: Vec<u64> = (0..2 * 3 * n)
        .map(|i| rng.gen_range(0..level.coeff_modulus[(i / n) % 3]))
        .collect();
    let ct = Ciphertext::new(&level, n, 2, false, data).unwrap();
    for mode in [ComprMode::None, ComprMode::Zstd] {
        let bytes = ct.save(mode).unwrap();
        c.bench_function(&format!("Ciphertext save ({mode:?})"), |b| {
            b.iter(|| ct.save(mode).unwrap())
        });
        c.bench_function(&format!("Ciphertext load ({mode:?})"), |b| {
            b.iter(|| Ciphertext::load(&ctx, &bytes).unwrap())
        });
    }
    c.bench_function("modulus switch 3 -> 2 primes", |b| {
        b.iter(|| drop_last_prime(&level.coeff_modulus, n, 2, &ct.data).unwrap())
    });
    let ternary: Vec<i8> = (0..n).map(|_| rng.gen_range(-1i8..=1)).collect();
    let sk = secret_key_from_ternary(&ctx, &ternary).unwrap();
    let generator = KeyGenerator::new(&ctx, &sk).unwrap();
    let mut krng = rand_chacha::ChaCha20Rng::seed_from_u64(2);
    c.bench_function("relinearization keys", |b| {
        b.iter(|| generator.relin_keys(&mut krng).unwrap())
    });
}

criterion_group!(seal, benches);
criterion_main!(seal);
