//! # zeppelin-server
//!
//! A BFV evaluator over Microsoft SEAL 4.1 ciphertexts and keys, on the shared arithmetic core
//! (`zeppelin-ring`): what SEAL's `Evaluator` does to the ciphertexts a Zeppelin device
//! uploads, on the same bytes ([`zeppelin_seal`] reads and writes them).
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
