//! Prints relinearized ciphertexts per second of the batched engine next to the
//! pynq_butterfly FPGA (245.61 ct/s at N = 4096, 12 towers, 12 digits, batch 64), with and
//! without the BV digit decomposition, for the FPGA's configuration and HE-standard-secure
//! ones. `cargo run --release -p zeppelin-evalmult --example throughput [-- --quick]`
#![expect(
    clippy::unwrap_used,
    reason = "test helpers outside #[test] fns unwrap on failure (clippy.toml exempts only #[test] fns)"
)]

use std::time::{Duration, Instant};

use zeppelin_evalmult::Engine;

#[path = "../benches/support/timing.rs"]
mod timing;
#[path = "../benches/support/workload.rs"]
mod workload;
use timing::median;
use workload::{host_digits, workload, BATCH, CONFIGS, FPGA_CT_PER_S};

/// CPU time of this process (all threads) in seconds, from /proc/self/stat (Linux; clock
/// ticks of 10 ms), or `None` elsewhere.
fn cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    let ticks: f64 = fields.get(11)?.parse::<f64>().ok()? + fields.get(12)?.parse::<f64>().ok()?;
    Some(ticks / 100.0)
}

/// CPU seconds per call of `f`, over calls adding up to at least one CPU-second.
fn cpu_per_call(mut f: impl FnMut()) -> Option<f64> {
    let start = cpu_seconds()?;
    let mut calls = 0;
    loop {
        f();
        calls += 1;
        let used = cpu_seconds()? - start;
        if used >= 1.0 {
            return Some(used / f64::from(calls));
        }
    }
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    // `--profile`: only the engine at the FPGA's configuration, for a profiler.
    let profile = std::env::args().any(|a| a == "--profile");
    let runs = if quick { 3 } else { 11 };
    println!(
        "threads: {}, SIMD backend: {}",
        rayon::current_num_threads(),
        zeppelin_evalmult::backend_from_env().map_or("unavailable (ZEPPELIN_BACKEND)", |b| {
            zeppelin_ring::NttBackend::name(&b)
        })
    );
    let cores = std::thread::available_parallelism().map_or(1, |c| c.get());
    println!(
        "wall: measured ct/s (median of {runs} batches); cpu: ct per CPU-second x {cores} cores,"
    );
    println!("      i.e. what this machine gives when no other process competes for its cores");
    println!(
        "{:>6} {:>6} {:>6} {:>6} {:>8} {:>9} {:>12} {:>12} {:>12} {:>12} {:>9}",
        "N",
        "towers",
        "digits",
        "batch",
        "log2 Q",
        "128-bit",
        "full wall",
        "full cpu",
        "digits wall",
        "digits cpu",
        "vs FPGA"
    );
    for (n, towers) in CONFIGS {
        let batch = BATCH;
        let w = workload(n, towers, batch);
        let (ctx, key, pairs) = (&w.ctx, &w.key, &w.pairs);
        let engine = Engine::new(ctx.clone(), key).unwrap();
        if profile {
            let env = |name: &str, default: usize| {
                std::env::var(name)
                    .ok()
                    .and_then(|v| v.parse().ok())
                    .unwrap_or(default)
            };
            let options = zeppelin_evalmult::EngineOptions {
                group: env("ENGINE_GROUP", engine.options().group),
                block: env("ENGINE_BLOCK", engine.options().block),
            };
            let engine = Engine::with_options(ctx.clone(), key, options).unwrap();
            let batches: usize = std::env::var("PROFILE_BATCHES")
                .ok()
                .and_then(|v| v.parse().ok())
                .unwrap_or(40);
            let mut out = zeppelin_evalmult::RelinBatch::new();
            let start = Instant::now();
            for _ in 0..batches {
                engine.eval_mult_into(pairs, &mut out).unwrap();
                std::hint::black_box(&out);
            }
            println!(
                "profile: {batches} batches, {:.1} ct/s",
                (batches * batch) as f64 / start.elapsed().as_secs_f64()
            );
            return;
        }
        // Steady state: the output batch is reused, as a server would.
        let mut out = zeppelin_evalmult::RelinBatch::new();
        let full = median(runs, || {
            engine.eval_mult_into(pairs, &mut out).unwrap();
            std::hint::black_box(&out);
        });
        let digits = host_digits(&w);
        let predecomposed = median(runs, || {
            engine
                .relinearize_with_digits_into(pairs, &digits, &mut out)
                .unwrap();
            std::hint::black_box(&out);
        });
        let full_cpu = cpu_per_call(|| engine.eval_mult_into(pairs, &mut out).unwrap());
        let digits_cpu = cpu_per_call(|| {
            engine
                .relinearize_with_digits_into(pairs, &digits, &mut out)
                .unwrap()
        });
        let rate = |d: Duration| batch as f64 / d.as_secs_f64();
        let cpu_rate = |c: Option<f64>| {
            c.map_or("n/a".to_string(), |c| {
                format!("{:.1}", batch as f64 * cores as f64 / c)
            })
        };
        let secure = if ctx.is_he_standard_128() {
            "yes"
        } else {
            "NO"
        };
        println!(
            "{:>6} {:>6} {:>6} {:>6} {:>8.1} {:>9} {:>12.1} {:>12} {:>12.1} {:>12} {:>8.1}x",
            n,
            towers,
            towers,
            batch,
            ctx.log_q(),
            secure,
            rate(full),
            cpu_rate(full_cpu),
            rate(predecomposed),
            cpu_rate(digits_cpu),
            rate(full) / FPGA_CT_PER_S
        );
    }
    println!("FPGA (pynq_butterfly, PYNQ-Z2): N=4096, 12 towers, 12 digits, batch 64: {FPGA_CT_PER_S} ct/s, digits decomposed on the host (excluded)");
    println!("vs FPGA: full wall / {FPGA_CT_PER_S}. 128-bit: HE standard bound on log2 Q for ternary secrets (BV keys use no extra modulus).");
}
