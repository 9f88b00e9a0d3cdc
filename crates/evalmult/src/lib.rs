//! # zeppelin-evalmult
//!
//! OpenFHE 1.5.1-exact BGVRNS `EvalMult` with BV relinearization (`digitSize = 0`), batched,
//! on the shared arithmetic core `zeppelin-ring`: the capability of the pynq_butterfly FPGA
//! accelerator in software, with the digit decomposition the FPGA left to the host done
//! inside the engine.
//!
//! - [`reference`]: the plain, unbatched algorithm (the yardstick).
//! - [`Engine`]: the batched engine (coefficient-major key reuse, all cores).
//! - [`vectors`]: directories of OpenFHE test vectors (`shared/vectors/README.md`).
//! - [`frames`], [`server`]: the FPGA's stream protocol, a TCP server and client.
#![forbid(unsafe_code)]

mod context;
mod engine;
mod error;
pub mod frames;
mod kernels;
pub mod reference;
pub mod server;
pub mod vectors;

pub use context::{
    he_standard_max_log_q, openfhe_primes, Ciphertext, RelinKey, RnsContext, MAX_RING_DIM,
    MAX_TOWERS, MIN_RING_DIM,
};
pub use engine::{tower_major_digits, Engine, EngineOptions, RelinBatch, TowerMajorDigits};
pub use error::{EvalMultError, Result};
