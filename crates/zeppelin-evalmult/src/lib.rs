//! # zeppelin-evalmult
//!
//! OpenFHE 1.5.1-exact BGVRNS `EvalMult` with BV relinearization (`digitSize = 0`), batched,
//! on the shared arithmetic core `zeppelin-ring`: the capability of the pynq_butterfly FPGA
//! accelerator (`shared/seeds/pynq-butterfly-readme.txt`) in software, with the BV digit
//! decomposition that the FPGA left to the host done inside the engine.
//!
//! - [`reference`](mod@reference): the plain, unbatched algorithm, written the obvious way (the yardstick;
//!   it reproduces `shared/vectors/openfhe-bv-n4096-l4-b2` residue for residue).
//! - [`Engine`]: the batched engine: tensor, in-engine digit decomposition (centred lift,
//!   OpenFHE's NTT convention), key-switch multiply-accumulate with the evaluation key
//!   streamed once per coefficient block across a group of ciphertexts, on all cores (rayon),
//!   with the kernels of `zeppelin_ring` (its `NttBackend` and `RnsKernels` on the
//!   backend chosen once per engine, [`backend_from_env`]: AVX-512 or AVX2 when the CPU has
//!   them, portable code otherwise, or the one `ZEPPELIN_BACKEND` names); the engine keeps no
//!   arithmetic kernel of its own.
//! - [`RnsContext`], [`RelinKey`], [`Ciphertext`]: validated inputs; every bad input
//!   (modulus not an NTT-friendly prime for `n` or not below 2^30, residue `>= q`, wrong
//!   shape, key for other moduli) is an [`EvalMultError`].
//! - [`vectors`]: directories in the layout of `shared/vectors/README.md` (read, and results
//!   compared residue for residue); `zeppelin evalmult --in DIR --out OUT [--check]` writes
//!   the results through the CLI's atomic writer (the library writes no files).
//! - [`frames`], [`server`]: the FPGA's stream protocol (RLPT, RLMP, ...) as a codec, a TCP
//!   server (`zeppelin evalmult serve`) that stays up under hostile clients (connection cap,
//!   timeouts, frames judged before allocation, memory caps, expiring sessions, accept
//!   back-off, graceful shutdown; on tokio, see [`server`]) and a matching blocking client.
//!   Load test: `cargo run --release -p zeppelin-evalmult --example load -- --connections
//!   5000` (short form: `cargo test --release -p zeppelin-evalmult --test load`).
//!
//! Security: N = 4096 with 12 × 30-bit towers (the FPGA's benchmark) is **not** 128-bit
//! secure; [`RnsContext::is_he_standard_128`] says which parameter sets are (N = 16384 with
//! 12 towers is). Throughput: `cargo run --release -p zeppelin-evalmult --example throughput`
//! and `cargo bench -p zeppelin-evalmult --bench evalmult`.
//!
//! ```
//! use zeppelin_evalmult::{openfhe_primes, Engine, RnsContext};
//! // The FPGA's towers: 30-bit primes ≡ 1 mod 2N·257, descending, as OpenFHE makes them.
//! let moduli = openfhe_primes(30, 4096, 257, 12).unwrap();
//! let ctx = RnsContext::new(4096, &moduli).unwrap();
//! assert!(!ctx.is_he_standard_128());
//! ```
#![forbid(unsafe_code)]

mod context;
mod engine;
mod error;
pub mod frames;
pub mod reference;
pub mod server;
pub mod vectors;

pub use context::{
    he_standard_max_log_q, openfhe_primes, Ciphertext, RelinKey, RnsContext, MAX_RING_DIM,
    MAX_TOWERS, MIN_RING_DIM,
};
pub use engine::{
    backend_from_env, tower_major_digits, Engine, EngineOptions, RelinBatch, TowerMajorDigits,
};
pub use error::{
    CiphertextId, Component, ConfigError, EvalMultError, Factor, FrameError, Input, KeyPart,
    ManifestError, PairKind, Result, ServerError,
};
