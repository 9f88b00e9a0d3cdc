//! # zeppelin-server
//!
//! A BFV evaluator over Microsoft SEAL 4.1 ciphertexts and keys, on the shared arithmetic core
//! (`zeppelin-ring`): what SEAL's `Evaluator` does to the ciphertexts a Zeppelin device
//! uploads, on the same bytes ([`zeppelin_seal`] reads and writes them).
//!
//! [`Evaluator`] has SEAL's BFV operations, each giving the ciphertext SEAL 4.1 gives for the
//! same inputs and keys, **byte for byte** (checked against seal-python in
//! `tests/seal_ops.rs` for Seal4096 and Seal8192, at every level):
//!
//! | operation | SEAL's |
//! |---|---|
//! | [`Evaluator::add`], [`Evaluator::sub`], [`Evaluator::negate`] | `add`, `sub`, `negate` |
//! | [`Evaluator::add_plain`], [`Evaluator::sub_plain`] | `add_plain`, `sub_plain` (`Δm` rounded as SEAL rounds it) |
//! | [`Evaluator::multiply_plain`] | `multiply_plain` (with SEAL's monomial path) |
//! | [`Evaluator::relinearize`] | `relinearize` (SEAL's `RelinKeys`) |
//! | [`Evaluator::rotate_rows`], [`Evaluator::rotate_columns`], [`Evaluator::apply_galois`] | the same, with SEAL's `GaloisKeys` and SEAL's fallback to the NAF of a step without a key |
//! | [`Evaluator::mod_switch_to_next`] | `mod_switch_to_next` |
//! | [`Evaluator::sum`] | `add_many`, as a tree on all cores |
//!
//! Keys may be passed as loaded ([`zeppelin_seal::RelinKeys`], [`zeppelin_seal::GaloisKeys`],
//! converted on every call) or prepared once ([`Evaluator::prepare_relin_keys`],
//! [`Evaluator::prepare_galois_keys`]), which a server holding keys should do.
//! [`Evaluator::map_many`] and [`Evaluator::relinearize_many`] run many ciphertexts on all
//! cores. Every refused input is an [`EvalError`].
//!
//! Internally residues are 32-bit (every preset's primes are below 2^30), the transforms and
//! the key-switching multiply-accumulate are the core's backend kernels (AVX-512 / AVX2 /
//! portable), and every level's constants are computed once, at [`Evaluator::new`].
//!
//! ```
//! use std::sync::Arc;
//! use zeppelin_seal::{Ciphertext, EncryptionParameters, SealContext};
//! use zeppelin_server::Evaluator;
//!
//! let ctx = Arc::new(SealContext::new(EncryptionParameters::for_preset::<zeppelin::Seal4096>())?);
//! let eval = Evaluator::new(ctx.clone())?;
//! let a = Ciphertext::new(ctx.first_level(), ctx.n(), 2, false, vec![5; 2 * 3 * ctx.n()])?;
//! let sum = eval.add(&a, &a)?;
//! assert_eq!(sum.data[0], 10);
//! assert_eq!(eval.sub(&sum, &a)?, a);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod batch;
mod bconv;
pub mod behz;
pub mod error;
pub mod evaluator;
mod galois;
pub mod keyswitch;
mod plain;
mod tables;

pub use error::{EvalError, PlaintextProblem, Result};
pub use evaluator::Evaluator;
pub use keyswitch::{GaloisKeySource, PreparedGaloisKeys, PreparedRelinKeys, RelinKeySource};
