//! The engine against its NTT budget, in one run (issue 12, item 4): one forward and one
//! inverse NTT at N = 4096 on the engine's 12 towers with the engine's backend, the
//! engine's transforms per ciphertext (from its algorithm, see below), the engine's time per
//! ciphertext on one thread, and the ratio. Also the throughput of the old default tuning
//! (group 4, block 256) against the current default, on all threads, interleaved rounds.
//! `cargo run --release -p zeppelin-evalmult --example transform_budget`
#![expect(
    clippy::unwrap_used,
    reason = "test helpers outside #[test] fns unwrap on failure (clippy.toml exempts only #[test] fns)"
)]

use zeppelin_evalmult::{Engine, EngineOptions, RelinBatch};
use zeppelin_ring::NttBackend;

#[path = "../benches/support/timing.rs"]
mod timing;
#[path = "../benches/support/workload.rs"]
#[expect(
    dead_code,
    reason = "the shared workload file also serves the other benchmarks"
)]
mod workload;
use timing::median;
use workload::{workload, BATCH};

fn main() {
    let (n, towers) = (4096, 12);
    let w = workload(n, towers, BATCH);
    let (ctx, key, pairs) = (&w.ctx, &w.key, &w.pairs);
    let backend = zeppelin_evalmult::backend_from_env().unwrap();
    // One transform: the median over 201 calls per tower, averaged over the 12 towers.
    let mut poly: Vec<u32> = (0..n as u32).collect();
    let (mut fwd, mut inv) = (0.0, 0.0);
    for k in 0..towers {
        let table = ctx.table(k);
        let q = ctx.moduli()[k].value();
        poly.iter_mut().for_each(|v| *v %= q);
        fwd += median(201, || backend.forward(&table, &mut poly).unwrap()).as_secs_f64();
        inv += median(201, || backend.inverse(&table, &mut poly).unwrap()).as_secs_f64();
    }
    let (fwd, inv) = (fwd / towers as f64, inv / towers as f64);
    // The engine (src/engine.rs, run_group): c2 to coefficient form, one inverse NTT per
    // tower; per tower k, digit k is c2's own evaluation tower and every other digit is a
    // lift and one forward NTT into q_k: L inverse + L·(L−1) forward per ciphertext.
    let (n_inv, n_fwd) = (towers, towers * (towers - 1));
    let budget = n_inv as f64 * inv + n_fwd as f64 * fwd;
    let one = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    let old = EngineOptions {
        group: 4,
        block: 256,
    };
    let engines = [
        (
            "old (group 4, block 256)",
            Engine::with_options(ctx.clone(), key, old).unwrap(),
        ),
        ("new (default)", Engine::new(ctx.clone(), key).unwrap()),
    ];
    println!(
        "backend {}, N = {n}, {towers} towers, batch {BATCH}, threads {}",
        backend.name(),
        rayon::current_num_threads()
    );
    println!(
        "one forward NTT {:.2} us, one inverse {:.2} us; transforms per ct: {n_inv} inverse + {n_fwd} forward = {}; budget {:.1} us",
        fwd * 1e6,
        inv * 1e6,
        n_inv + n_fwd,
        budget * 1e6
    );
    let mut out = RelinBatch::new();
    let reference = engines[0].1.eval_mult_batch(pairs).unwrap();
    // Interleaved rounds so that both see the same machine load.
    let (mut single, mut wall) = ([Vec::new(), Vec::new()], [Vec::new(), Vec::new()]);
    for _ in 0..5 {
        for (e, (_, engine)) in engines.iter().enumerate() {
            let t = one.install(|| median(1, || engine.eval_mult_into(pairs, &mut out).unwrap()));
            assert_eq!(out, reference, "the engines disagree");
            single[e].push(t.as_secs_f64() / BATCH as f64);
            let t = median(3, || engine.eval_mult_into(pairs, &mut out).unwrap());
            wall[e].push(BATCH as f64 / t.as_secs_f64());
        }
    }
    let med = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let mut rates = [0.0; 2];
    for (e, (name, _)) in engines.iter().enumerate() {
        let per_ct = med(&mut single[e]);
        rates[e] = med(&mut wall[e]);
        println!(
            "{name}: {:.1} us per ct on one thread = {:.3} x budget; {:.1} ct/s on all threads",
            per_ct * 1e6,
            per_ct / budget,
            rates[e]
        );
    }
    println!("throughput new / old: {:.3}", rates[1] / rates[0]);
}
