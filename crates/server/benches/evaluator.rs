//! The evaluator's operations on SEAL ciphertexts, single-threaded (add, multiply, square,
//! multiply + relinearize), and `multiply_many` and multiply + relinearize over all cores
//! (criterion's "thrpt" is products per second), for Seal4096 and Seal8192. Inputs are
//! uniformly random size-2 ciphertexts and keys of a random ternary secret (the operations'
//! cost does not depend on the values).
//!
//! `cargo bench -p zeppelin-server --bench evaluator`
#![expect(
    clippy::unwrap_used,
    reason = "benchmark set-up outside #[test] fns unwraps on failure"
)]

use std::sync::Arc;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use rand::{Rng, SeedableRng};
use zeppelin_seal::keygen::KeyGenerator;
use zeppelin_seal::{Ciphertext, EncryptionParameters, SealContext, SecretKey};
use zeppelin_server::Evaluator;

/// A size-2 ciphertext of uniform residues at `ctx`'s first level.
fn random_ct(ctx: &SealContext, rng: &mut impl Rng) -> Ciphertext {
    let level = ctx.first_level();
    let n = ctx.n();
    let mut data = Vec::with_capacity(2 * level.coeff_modulus.len() * n);
    for _ in 0..2 {
        for &q in &level.coeff_modulus {
            data.extend((0..n).map(|_| rng.gen_range(0..q)));
        }
    }
    Ciphertext::new(level, n, 2, false, data).unwrap()
}

/// A random ternary secret key.
fn secret(ctx: &SealContext, rng: &mut impl Rng) -> SecretKey {
    let ternary: Vec<i64> = (0..ctx.n()).map(|_| rng.gen_range(-1..=1)).collect();
    let ntt = ctx.level_ntt(ctx.key_level()).unwrap();
    let mut data = ntt.from_signed(&ternary).unwrap();
    ntt.forward(&mut data).unwrap();
    SecretKey {
        parms_id: ctx.key_level().parms_id,
        data,
    }
}

fn bench_preset(c: &mut Criterion, name: &str, parms: EncryptionParameters) {
    let ctx = Arc::new(SealContext::new(parms).unwrap());
    let eval = Evaluator::new(ctx.clone()).unwrap();
    let mut rng = rand::rngs::StdRng::seed_from_u64(13);
    let a = random_ct(&ctx, &mut rng);
    let b = random_ct(&ctx, &mut rng);
    let sk = secret(&ctx, &mut rng);
    let mut key_rng = rand::rngs::OsRng;
    let relin = KeyGenerator::new(&ctx, &sk)
        .unwrap()
        .relin_keys(&mut key_rng)
        .unwrap();
    let relin = eval.prepare_relin_keys(&relin).unwrap();
    // Tables are built on first use: outside the timing.
    eval.multiply(&a, &b).unwrap();

    let mut group = c.benchmark_group(format!("evaluator/{name}"));
    group.sample_size(20);
    group.measurement_time(Duration::from_secs(4));
    group.bench_function("add", |bench| bench.iter(|| eval.add(&a, &b).unwrap()));
    group.bench_function("multiply", |bench| {
        bench.iter(|| eval.multiply(&a, &b).unwrap())
    });
    group.bench_function("square", |bench| bench.iter(|| eval.square(&a).unwrap()));
    group.bench_function("multiply_relinearize", |bench| {
        bench.iter(|| {
            eval.relinearize(&eval.multiply(&a, &b).unwrap(), &relin)
                .unwrap()
        })
    });
    group.finish();

    let threads = rayon::current_num_threads();
    let batch = 8 * threads;
    let pairs: Vec<(Ciphertext, Ciphertext)> = (0..batch)
        .map(|_| (random_ct(&ctx, &mut rng), random_ct(&ctx, &mut rng)))
        .collect();
    let mut group = c.benchmark_group(format!("evaluator/{name}/all-cores-{threads}"));
    group.throughput(Throughput::Elements(batch as u64));
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(4));
    group.bench_function("multiply_many", |bench| {
        bench.iter(|| eval.multiply_many(&pairs).unwrap())
    });
    group.bench_function("multiply_relinearize_many", |bench| {
        bench.iter(|| {
            let products = eval.multiply_many(&pairs).unwrap();
            eval.relinearize_many(&products, &relin).unwrap()
        })
    });
    group.finish();
}

fn bench(c: &mut Criterion) {
    bench_preset(
        c,
        "seal4096",
        EncryptionParameters::for_preset::<zeppelin::Seal4096>(),
    );
    bench_preset(
        c,
        "seal8192",
        EncryptionParameters::for_preset::<zeppelin::Seal8192>(),
    );
}

criterion_group!(benches, bench);
criterion_main!(benches);
