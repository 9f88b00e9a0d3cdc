//! The server rows: zeppelin-server's `Evaluator` on SEAL's own ciphertexts and keys at
//! Seal4096, which the driver writes to a directory (`--seal-dir`) before starting the round
//! server, with SEAL's outputs of the same operations: at start every output of ours must be
//! byte-identical to SEAL's (but for the header's minor version).

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use serde_json::{json, Value};
use zeppelin_seal::{
    Ciphertext, ComprMode, EncryptionParameters, GaloisKeys, RelinKeys, SealContext,
};
use zeppelin_server::{Evaluator, PreparedGaloisKeys, PreparedRelinKeys};

use crate::Result;

/// An evaluator operation timed against SEAL's.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum ServerOp {
    /// `multiply(a, b)` (BEHZ).
    Multiply,
    /// `relinearize(multiply(a, b))`.
    MultiplyRelin,
    /// `rotate_rows(a, 1)`.
    RotateRows,
}

impl ServerOp {
    pub const ALL: [ServerOp; 3] = [
        ServerOp::Multiply,
        ServerOp::MultiplyRelin,
        ServerOp::RotateRows,
    ];

    /// The row key (the driver's SEAL timings use the same).
    pub fn key(self) -> &'static str {
        match self {
            ServerOp::Multiply => "multiply",
            ServerOp::MultiplyRelin => "multiply_relin",
            ServerOp::RotateRows => "rotate_rows",
        }
    }

    /// SEAL's output of the operation in the directory.
    fn seal_file(self) -> &'static str {
        match self {
            ServerOp::Multiply => "seal_multiply.seal",
            ServerOp::MultiplyRelin => "seal_multiply_relin.seal",
            ServerOp::RotateRows => "seal_rotate_rows.seal",
        }
    }
}

/// The evaluator, SEAL's inputs and prepared keys, and SEAL's outputs.
pub struct ServerBench {
    eval: Evaluator,
    a: Ciphertext,
    b: Ciphertext,
    relin: PreparedRelinKeys,
    galois: PreparedGaloisKeys,
    seal_outputs: Vec<(ServerOp, Vec<u8>)>,
    params: Vec<u64>,
}

fn read(dir: &Path, name: &str) -> Result<Vec<u8>> {
    std::fs::read(dir.join(name)).map_err(|e| format!("{}: {e}", dir.join(name).display()))
}

/// Our bytes equal SEAL's but for the minor version of each SEAL header.
fn same_bytes_but_version(ours: &[u8], seal: &[u8]) -> bool {
    if ours.len() != seal.len() {
        return false;
    }
    let mut normalized = ours.to_vec();
    for i in 0..normalized.len().saturating_sub(4) {
        if normalized[i..i + 5] == [0x5E, 0xA1, 0x10, 4, 1] {
            normalized[i + 4] = seal[i + 4];
        }
    }
    normalized == seal
}

impl ServerBench {
    /// Loads everything from `dir` and checks every operation against SEAL's output.
    pub fn new(dir: &Path) -> Result<Self> {
        let e = |e: &dyn std::fmt::Display| e.to_string();
        let parms = EncryptionParameters::load(&read(dir, "params.seal")?).map_err(|x| e(&x))?;
        let params = parms.coeff_modulus.clone();
        let ctx = Arc::new(SealContext::new(parms).map_err(|x| e(&x))?);
        let eval = Evaluator::new(ctx.clone()).map_err(|x| e(&x))?;
        let load = |name: &str| -> Result<Ciphertext> {
            Ciphertext::load(&ctx, &read(dir, name)?).map_err(|x| format!("{name}: {x}"))
        };
        let (a, b) = (load("a.seal")?, load("b.seal")?);
        let relin = RelinKeys::load(&ctx, &read(dir, "relin.seal")?).map_err(|x| e(&x))?;
        let galois = GaloisKeys::load(&ctx, &read(dir, "galois.seal")?).map_err(|x| e(&x))?;
        let relin = eval.prepare_relin_keys(&relin).map_err(|x| e(&x))?;
        let galois = eval.prepare_galois_keys(&galois).map_err(|x| e(&x))?;
        let mut seal_outputs = Vec::new();
        for op in ServerOp::ALL {
            seal_outputs.push((op, read(dir, op.seal_file())?));
        }
        let bench = Self {
            eval,
            a,
            b,
            relin,
            galois,
            seal_outputs,
            params,
        };
        bench.check()?;
        Ok(bench)
    }

    fn compute(&self, op: ServerOp) -> Result<Ciphertext> {
        let e = |x: zeppelin_server::EvalError| x.to_string();
        match op {
            ServerOp::Multiply => self.eval.multiply(&self.a, &self.b).map_err(e),
            ServerOp::MultiplyRelin => {
                let product = self.eval.multiply(&self.a, &self.b).map_err(e)?;
                self.eval.relinearize(&product, &self.relin).map_err(e)
            }
            ServerOp::RotateRows => self.eval.rotate_rows(&self.a, 1, &self.galois).map_err(e),
        }
    }

    /// One timed call.
    pub fn run(&self, op: ServerOp) -> Result<()> {
        std::hint::black_box(self.compute(op)?);
        Ok(())
    }

    /// Every output is byte-identical with SEAL's.
    pub fn check(&self) -> Result<()> {
        for (op, seal) in &self.seal_outputs {
            let ours = self
                .compute(*op)?
                .save(ComprMode::None)
                .map_err(|x| x.to_string())?;
            if !same_bytes_but_version(&ours, seal) {
                return Err(format!("{}: our output is not SEAL's", op.key()));
            }
        }
        Ok(())
    }

    /// For `info`: what the rows run on.
    pub fn describe(&self) -> Value {
        json!({
            "coeff_modulus": self.params,
            "backend": zeppelin_ring::NttBackend::name(&zeppelin_ring::default_backend()),
            "checks": "multiply, multiply + relinearize and rotate_rows byte-identical with SEAL's",
        })
    }

    /// Products relinearized per second: `relinearize(multiply(a, b))` of a batch of
    /// `batch` pairs, for at least `seconds`, on every core (rayon) and on one.
    pub fn throughput(&self, seconds: f64) -> Result<Value> {
        let threads = rayon::current_num_threads();
        let batch = 16 * threads;
        let pairs: Vec<(Ciphertext, Ciphertext)> = (0..batch)
            .map(|_| (self.a.clone(), self.b.clone()))
            .collect();
        let one = |pair: &(Ciphertext, Ciphertext)| -> Result<Ciphertext> {
            let product = self
                .eval
                .multiply(&pair.0, &pair.1)
                .map_err(|x| x.to_string())?;
            self.eval
                .relinearize(&product, &self.relin)
                .map_err(|x| x.to_string())
        };
        let measure = |parallel: bool| -> Result<f64> {
            let start = Instant::now();
            let mut done = 0usize;
            while done == 0 || start.elapsed().as_secs_f64() < seconds {
                if parallel {
                    use rayon::prelude::*;
                    let out: Result<Vec<Ciphertext>> = pairs.par_iter().map(one).collect();
                    std::hint::black_box(out?);
                } else {
                    for pair in &pairs {
                        std::hint::black_box(one(pair)?);
                    }
                }
                done += batch;
            }
            Ok(done as f64 / start.elapsed().as_secs_f64())
        };
        let single = measure(false)?;
        let all = measure(true)?;
        Ok(json!({
            "operation": "multiply + relinearize",
            "batch": batch,
            "threads": threads,
            "ct_per_s_one_core": single,
            "ct_per_s_all_cores": all,
        }))
    }
}
