//! Relinearized ciphertexts per second of the batched engine, with the BV digit
//! decomposition (`full`) and with digits supplied from outside (`digits`, the FPGA's split),
//! at the FPGA's configuration (N = 4096, 12 × 30-bit towers, 12 digits, batch 64; NOT
//! 128-bit secure) and at HE-standard 128-bit-secure ones. Criterion's "thrpt" is ct/s.
//!
//! `cargo bench -p zeppelin-evalmult --bench evalmult`
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use rand::{rngs::StdRng, Rng, SeedableRng};
use zeppelin_evalmult::{
    openfhe_primes, reference, tower_major_digits, Ciphertext, Engine, RelinBatch, RelinKey,
    RnsContext,
};

/// pynq_butterfly on a PYNQ-Z2, N = 4096, 12 towers, 12 digits, batch 64, host digits.
const FPGA_CT_PER_S: f64 = 245.61;
const BATCH: usize = 64;

fn random_poly(rng: &mut StdRng, ctx: &RnsContext) -> Vec<u32> {
    let n = ctx.ring_dim();
    (0..ctx.poly_len())
        .map(|j| rng.gen_range(0..ctx.moduli()[j / n].value()))
        .collect()
}

fn bench(c: &mut Criterion) {
    println!("FPGA reference: {FPGA_CT_PER_S} ct/s (N=4096, 12 towers, 12 digits, batch 64, digits from the host)");
    // (ring dimension, towers): 30-bit towers generated as OpenFHE does for t = 257.
    for (n, towers) in [(4096, 12), (4096, 3), (8192, 7), (16384, 12)] {
        let ctx = RnsContext::new(n, &openfhe_primes(30, n, 257, towers).unwrap()).unwrap();
        let secure = if ctx.is_he_standard_128() {
            "128-bit secure"
        } else {
            "NOT 128-bit secure"
        };
        println!(
            "N={n} towers={towers} log2(Q)={:.1}: {secure} (HE standard, ternary secret)",
            ctx.log_q()
        );
        let mut rng = StdRng::seed_from_u64(n as u64 * 100 + towers as u64);
        let key = RelinKey {
            ring_dim: n,
            moduli: ctx.moduli_values(),
            a: (0..towers).map(|_| random_poly(&mut rng, &ctx)).collect(),
            b: (0..towers).map(|_| random_poly(&mut rng, &ctx)).collect(),
        };
        let pairs: Vec<_> = (0..BATCH)
            .map(|_| {
                let mut ct = || Ciphertext {
                    c0: random_poly(&mut rng, &ctx),
                    c1: random_poly(&mut rng, &ctx),
                };
                (ct(), ct())
            })
            .collect();
        let digits: Vec<_> = pairs
            .iter()
            .map(|(x, y)| {
                let t = reference::tensor(&ctx, x, y).unwrap();
                tower_major_digits(&ctx, &reference::decompose(&ctx, &t.c2).unwrap()).unwrap()
            })
            .collect();
        let engine = Engine::new(ctx.clone(), &key).unwrap();
        let mut group = c.benchmark_group(format!("evalmult/N={n}/towers={towers}/batch={BATCH}"));
        group.throughput(Throughput::Elements(BATCH as u64));
        group.sample_size(10);
        group.measurement_time(Duration::from_secs(if n >= 16384 { 20 } else { 8 }));
        let mut out = RelinBatch::new();
        group.bench_function(BenchmarkId::new("full", secure), |b| {
            b.iter(|| engine.eval_mult_into(&pairs, &mut out).unwrap())
        });
        group.bench_function(BenchmarkId::new("digits", secure), |b| {
            b.iter(|| {
                engine
                    .relinearize_with_digits_into(&pairs, &digits, &mut out)
                    .unwrap()
            })
        });
        group.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
