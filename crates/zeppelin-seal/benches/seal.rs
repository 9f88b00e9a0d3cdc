//! Server-side costs of the SEAL interop: seed expansion with SEAL's generators, loading and
//! saving a fresh ciphertext (none / zstd), modulus switching, and trusted-side key generation.
#![expect(
    clippy::unwrap_used,
    reason = "benchmark set-up on fixed, valid inputs"
)]

use criterion::{criterion_group, criterion_main, Criterion};
use rand::{Rng, SeedableRng};
use zeppelin::{Bfv, Seal4096, SecretKey as DeviceSecretKey, SecretSeed};
use zeppelin_seal::convert::drop_last_prime;
use zeppelin_seal::device::{self, DeviceContext};
use zeppelin_seal::keygen::KeyGenerator;
use zeppelin_seal::{Ciphertext, ComprMode, PrngInfo, PrngType};

fn benches(c: &mut Criterion) {
    let dctx = DeviceContext::<Seal4096>::new().unwrap();
    let ctx = dctx.seal();
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
            b.iter(|| Ciphertext::load(ctx, &bytes).unwrap())
        });
    }
    c.bench_function("modulus switch 3 -> 2 primes", |b| {
        b.iter(|| drop_last_prime(&level.coeff_modulus, n, 2, &ct.data).unwrap())
    });
    let mut dev_sk = Box::new(DeviceSecretKey::<Seal4096>::zeroed());
    Bfv::<Seal4096>::generate_secret_key_with(&SecretSeed::from_bytes([3; 32]), &mut dev_sk)
        .unwrap();
    let sk = device::secret_key(&dctx, &dev_sk).unwrap();
    let generator = KeyGenerator::new(ctx, &sk).unwrap();
    let mut krng = rand_chacha::ChaCha20Rng::seed_from_u64(2);
    c.bench_function("relinearization keys", |b| {
        b.iter(|| generator.relin_keys(&mut krng).unwrap())
    });
}

criterion_group!(seal, benches);
criterion_main!(seal);
