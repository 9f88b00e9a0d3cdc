#![expect(
    clippy::unwrap_used,
    reason = "test helpers outside #[test] fns unwrap on failure (clippy.toml exempts only #[test] fns)"
)]
//! The benchmark workload, shared by `benches/evalmult.rs` and `examples/throughput.rs` (the
//! example includes this file with `#[path]`), so both measure the same thing: the
//! configurations, 30-bit towers generated as OpenFHE does for t = 257, a uniformly random
//! relinearization key and batch, and the host-side digits the FPGA is given.

use rand::{rngs::StdRng, Rng, SeedableRng};
use zeppelin_evalmult::{
    openfhe_primes, reference, tower_major_digits, Ciphertext, RelinKey, RnsContext,
};

/// pynq_butterfly on a PYNQ-Z2, N = 4096, 12 towers, 12 digits, batch 64, host digits.
pub const FPGA_CT_PER_S: f64 = 245.61;
/// The FPGA's batch.
pub const BATCH: usize = 64;
/// (ring dimension, towers): the FPGA's configuration first, then HE-standard-secure ones.
pub const CONFIGS: [(usize, usize); 4] = [(4096, 12), (4096, 3), (8192, 7), (16384, 12)];

/// One configuration's inputs.
pub struct Workload {
    pub ctx: RnsContext,
    pub key: RelinKey,
    pub pairs: Vec<(Ciphertext, Ciphertext)>,
}

fn random_poly(rng: &mut StdRng, ctx: &RnsContext) -> Vec<u32> {
    let n = ctx.ring_dim();
    (0..ctx.poly_len())
        .map(|j| rng.gen_range(0..ctx.moduli()[j / n].value()))
        .collect()
}

/// Random key and `batch` ciphertext pairs for ring dimension `n` with `towers` towers.
pub fn workload(n: usize, towers: usize, batch: usize) -> Workload {
    let ctx = RnsContext::new(n, &openfhe_primes(30, n, 257, towers).unwrap()).unwrap();
    let mut rng = StdRng::seed_from_u64(n as u64 * 100 + towers as u64);
    let key = RelinKey {
        ring_dim: n,
        moduli: ctx.moduli_values(),
        a: (0..towers).map(|_| random_poly(&mut rng, &ctx)).collect(),
        b: (0..towers).map(|_| random_poly(&mut rng, &ctx)).collect(),
    };
    let pairs = (0..batch)
        .map(|_| {
            let mut ct = || Ciphertext {
                c0: random_poly(&mut rng, &ctx),
                c1: random_poly(&mut rng, &ctx),
            };
            (ct(), ct())
        })
        .collect();
    Workload { ctx, key, pairs }
}

/// The BV digits of each pair's c2, computed on the host by the reference path (what the
/// FPGA is handed).
pub fn host_digits(w: &Workload) -> Vec<Vec<u32>> {
    w.pairs
        .iter()
        .map(|(x, y)| {
            let t = reference::tensor(&w.ctx, x, y).unwrap();
            tower_major_digits(&w.ctx, &reference::decompose(&w.ctx, &t.c2).unwrap()).unwrap()
        })
        .collect()
}
