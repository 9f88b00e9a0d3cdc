//! The engine row (issue 30, item 3): the batched multiply + relinearize engine at the FPGA's
//! configuration (N = 4096, 12 × 30-bit towers, batch 64) on one thread, and, in the same
//! rounds, one forward and one inverse NTT on each of its towers with the engine's backend,
//! so that the driver can set the engine's time per ciphertext against its transform budget:
//! 12 inverse + 12·11 forward transforms per ciphertext (src/engine.rs: `c2` to coefficient
//! form, then every digit but a tower's own lifted and transformed into it). Before timing,
//! the engine's first products must equal the unbatched reference (OpenFHE's `EvalMult`).

use zeppelin_evalmult::{
    backend_from_env, openfhe_primes, reference, Ciphertext, Engine, RelinBatch, RelinKey,
    RnsContext,
};
use zeppelin_ring::{DefaultBackend, NttBackend};

use crate::Result;

/// The FPGA's configuration (crates/zeppelin-evalmult/benches/support/workload.rs).
pub const RING_DIM: usize = 4096;
pub const TOWERS: usize = 12;
pub const BATCH: usize = 64;

/// What the engine row times.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum EngineOp {
    /// One batch of [`BATCH`] pairs on one thread.
    BatchOneCore,
    /// One forward NTT on each tower (all [`TOWERS`] in one timed call).
    ForwardEveryTower,
    /// One inverse NTT on each tower.
    InverseEveryTower,
}

impl EngineOp {
    pub const ALL: [EngineOp; 3] = [
        EngineOp::BatchOneCore,
        EngineOp::ForwardEveryTower,
        EngineOp::InverseEveryTower,
    ];

    pub fn key(self) -> &'static str {
        match self {
            EngineOp::BatchOneCore => "engine_batch_64_one_core",
            EngineOp::ForwardEveryTower => "engine_ntt_forward_12_towers",
            EngineOp::InverseEveryTower => "engine_ntt_inverse_12_towers",
        }
    }
}

/// The engine, its workload and one polynomial per tower for the transforms.
pub struct EngineBench {
    engine: Engine,
    ctx: RnsContext,
    key: RelinKey,
    pairs: Vec<(Ciphertext, Ciphertext)>,
    out: RelinBatch,
    backend: DefaultBackend,
    polys: Vec<Vec<u32>>,
    one_core: rayon::ThreadPool,
}

/// splitmix64 (benchmark data only).
fn next(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

fn random_poly(state: &mut u64, ctx: &RnsContext) -> Vec<u32> {
    let n = ctx.ring_dim();
    (0..ctx.poly_len())
        .map(|j| (next(state) % u64::from(ctx.moduli()[j / n].value())) as u32)
        .collect()
}

impl EngineBench {
    pub fn new() -> Result<Self> {
        let err = |what: &str, e: &dyn std::fmt::Display| format!("engine set-up, {what}: {e}");
        let primes = openfhe_primes(30, RING_DIM, 257, TOWERS).map_err(|e| err("primes", &e))?;
        let ctx = RnsContext::new(RING_DIM, &primes).map_err(|e| err("context", &e))?;
        let mut state = 0x5eed_u64;
        let key = RelinKey {
            ring_dim: RING_DIM,
            moduli: ctx.moduli_values(),
            a: (0..TOWERS).map(|_| random_poly(&mut state, &ctx)).collect(),
            b: (0..TOWERS).map(|_| random_poly(&mut state, &ctx)).collect(),
        };
        let pairs = (0..BATCH)
            .map(|_| {
                let c0 = random_poly(&mut state, &ctx);
                let c1 = random_poly(&mut state, &ctx);
                let d0 = random_poly(&mut state, &ctx);
                let d1 = random_poly(&mut state, &ctx);
                (Ciphertext { c0, c1 }, Ciphertext { c0: d0, c1: d1 })
            })
            .collect();
        let engine = Engine::new(ctx.clone(), &key).map_err(|e| err("engine", &e))?;
        let backend = backend_from_env().map_err(|e| err("backend", &e))?;
        let polys = (0..TOWERS)
            .map(|k| {
                let q = u64::from(ctx.moduli()[k].value());
                (0..RING_DIM)
                    .map(|_| (next(&mut state) % q) as u32)
                    .collect()
            })
            .collect();
        Ok(Self {
            engine,
            ctx,
            key,
            pairs,
            out: RelinBatch::new(),
            backend,
            polys,
            one_core: rayon::ThreadPoolBuilder::new()
                .num_threads(1)
                .build()
                .map_err(|e| err("pool", &e))?,
        })
    }

    pub fn backend_name(&self) -> &'static str {
        self.backend.name()
    }

    pub fn run(&mut self, op: EngineOp) -> Result<()> {
        let err = |e: &dyn std::fmt::Display| format!("{}: {e}", op.key());
        match op {
            EngineOp::BatchOneCore => {
                let (engine, pairs, out) = (&self.engine, &self.pairs, &mut self.out);
                self.one_core
                    .install(|| engine.eval_mult_into(pairs, out))
                    .map_err(|e| err(&e))?;
                std::hint::black_box(&self.out);
            }
            EngineOp::ForwardEveryTower | EngineOp::InverseEveryTower => {
                for (k, poly) in self.polys.iter_mut().enumerate() {
                    let table = self.ctx.table(k);
                    if op == EngineOp::ForwardEveryTower {
                        self.backend.forward(&table, poly).map_err(|e| err(&e))?;
                    } else {
                        self.backend.inverse(&table, poly).map_err(|e| err(&e))?;
                    }
                }
            }
        }
        Ok(())
    }

    /// The last batch's first two products equal the unbatched reference's.
    pub fn check(&mut self) -> Result<()> {
        self.run(EngineOp::BatchOneCore)?;
        for (i, (x, y)) in self.pairs.iter().take(2).enumerate() {
            let want = reference::eval_mult(&self.ctx, &self.key, x, y)
                .map_err(|e| format!("engine check, reference: {e}"))?
                .relin;
            if self.out.ciphertext(i) != want {
                return Err(format!(
                    "engine check: product {i} differs from the reference's"
                ));
            }
        }
        Ok(())
    }
}
