//! Relinearized ciphertexts per second of the batched engine, with the BV digit
//! decomposition (`full`) and with digits supplied from outside (`digits`, the FPGA's split),
//! at the FPGA's configuration (N = 4096, 12 × 30-bit towers, 12 digits, batch 64; NOT
//! 128-bit secure) and at HE-standard 128-bit-secure ones. Criterion's "thrpt" is ct/s.
//!
//! `cargo bench -p zeppelin-evalmult --bench evalmult`
#![expect(
    clippy::unwrap_used,
    reason = "test helpers outside #[test] fns unwrap on failure (clippy.toml exempts only #[test] fns)"
)]

use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use zeppelin_evalmult::{Engine, RelinBatch};

#[path = "support/workload.rs"]
mod workload;
use workload::{host_digits, workload, BATCH, CONFIGS, FPGA_CT_PER_S};

fn bench(c: &mut Criterion) {
    println!("FPGA reference: {FPGA_CT_PER_S} ct/s (N=4096, 12 towers, 12 digits, batch 64, digits from the host)");
    for (n, towers) in CONFIGS {
        let w = workload(n, towers, BATCH);
        let (ctx, pairs) = (&w.ctx, &w.pairs);
        let secure = if ctx.is_he_standard_128() {
            "128-bit secure"
        } else {
            "NOT 128-bit secure"
        };
        println!(
            "N={n} towers={towers} log2(Q)={:.1}: {secure} (HE standard, ternary secret)",
            ctx.log_q()
        );
        let digits = host_digits(&w);
        let engine = Engine::new(ctx.clone(), &w.key).unwrap();
        let mut group = c.benchmark_group(format!("evalmult/N={n}/towers={towers}/batch={BATCH}"));
        group.throughput(Throughput::Elements(BATCH as u64));
        group.sample_size(10);
        group.measurement_time(Duration::from_secs(if n >= 16384 { 20 } else { 8 }));
        let mut out = RelinBatch::new();
        group.bench_function(BenchmarkId::new("full", secure), |b| {
            b.iter(|| engine.eval_mult_into(pairs, &mut out).unwrap())
        });
        group.bench_function(BenchmarkId::new("digits", secure), |b| {
            b.iter(|| {
                engine
                    .relinearize_with_digits_into(pairs, &digits, &mut out)
                    .unwrap()
            })
        });
        group.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
