//! The evaluator's errors: every refused input names what is wrong with it.

use zeppelin_seal::SealError;

/// Why an evaluator operation refused its inputs.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EvalError {
    /// A SEAL object or context error (a level this context does not know, a bad length, ...).
    #[error(transparent)]
    Seal(#[from] SealError),
    /// Two operands that must be at the same level are not.
    #[error("{operation}: operands at different levels ({left} and {right} primes)")]
    LevelMismatch {
        /// The operation.
        operation: &'static str,
        /// Primes of the left operand's level.
        left: usize,
        /// Primes of the right operand's level.
        right: usize,
    },
    /// A ciphertext of a size the operation does not take.
    #[error("{operation}: ciphertext of size {size}, expected {expected}")]
    Size {
        /// The operation.
        operation: &'static str,
        /// The size found.
        size: usize,
        /// What the operation takes.
        expected: &'static str,
    },
    /// A ciphertext in NTT form (BFV ciphertexts are kept in coefficient form).
    #[error("{operation}: ciphertext is in NTT form (BFV ciphertexts are in coefficient form)")]
    NttForm {
        /// The operation.
        operation: &'static str,
    },
    /// A ciphertext of another ring degree than the context's.
    #[error("ciphertext of degree {found}, the context's is {expected}")]
    Degree {
        /// Degree found.
        found: usize,
        /// The context's degree.
        expected: usize,
    },
    /// The operation needs more than an empty list.
    #[error("{operation}: no ciphertexts given")]
    Empty {
        /// The operation.
        operation: &'static str,
    },
    /// Too few NTT-friendly primes below 2^30 for the multiplication's auxiliary base.
    #[error("degree {n}: {needed} auxiliary primes needed for multiplication, {found} found")]
    AuxiliaryPrimes {
        /// The ring degree.
        n: usize,
        /// Primes needed.
        needed: usize,
        /// Primes found.
        found: usize,
    },
    /// A base-conversion constant that is not invertible modulo one of the primes.
    #[error("a multiplication constant is not invertible modulo {modulus}")]
    NotInvertible {
        /// The modulus.
        modulus: u32,
    },
}

/// The evaluator's result type.
pub type Result<T> = std::result::Result<T, EvalError>;
