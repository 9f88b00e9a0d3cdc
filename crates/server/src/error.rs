//! The evaluator's errors: every refused input names what is wrong with it.

use zeppelin_seal::SealError;

/// Why an evaluator operation refused its inputs.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EvalError {
    /// A SEAL object or context error (a level this context does not know, a bad length, ...).
    #[error(transparent)]
    Seal(#[from] SealError),
    /// The arithmetic core refused an operand (a length or table mismatch: a bug here, as
    /// the evaluator sizes every buffer itself).
    #[error(transparent)]
    Ring(#[from] zeppelin_ring::RingError),
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
    /// Parameters the evaluator cannot compute with (see [`crate::Evaluator::new`]).
    #[error("unsupported parameters: {what}")]
    Unsupported {
        /// What is unsupported.
        what: &'static str,
    },
    /// A plaintext the operation cannot take.
    #[error("{operation}: {problem}")]
    Plaintext {
        /// The operation.
        operation: &'static str,
        /// What is wrong with it.
        problem: PlaintextProblem,
    },
    /// Key-switching keys that are not for this context's key level.
    #[error("{what}: keys of another context or level (parms_id is not this context's key level)")]
    ForeignKeys {
        /// The keys.
        what: &'static str,
    },
    /// A key-switching key of the wrong shape (decomposition count, size, form or length).
    #[error("{what}: malformed key-switching key ({problem})")]
    MalformedKey {
        /// The keys.
        what: &'static str,
        /// What is wrong with it.
        problem: &'static str,
    },
    /// No relinearization key for `s^2`.
    #[error("relinearize: the RelinKeys hold no key for s^2")]
    MissingRelinKey,
    /// No Galois key for an element (and, for a row rotation, none for some step of its
    /// non-adjacent form either).
    #[error("no Galois key for element {galois_elt}")]
    MissingGaloisKey {
        /// The element.
        galois_elt: u32,
    },
    /// A Galois element that is not odd and below `2n`.
    #[error("Galois element {galois_elt} is not an odd number below {two_n}")]
    GaloisElement {
        /// The element.
        galois_elt: u64,
        /// `2n`.
        two_n: u64,
    },
    /// Rotations need batching (`t` prime and `t ≡ 1 mod 2n`) and key switching (a special
    /// prime).
    #[error("{operation}: the parameters do not support it ({missing})")]
    NotSupportedByParameters {
        /// The operation.
        operation: &'static str,
        /// What the parameters lack.
        missing: &'static str,
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

/// What is wrong with a plaintext operand.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PlaintextProblem {
    /// An NTT-form plaintext (BFV plaintexts here are coefficients mod `t`).
    #[error("plaintext is in NTT form (parms_id set); BFV takes coefficient-form plaintexts")]
    NttForm,
    /// More coefficients than the ring degree.
    #[error("plaintext has {len} coefficients, more than the ring degree {n}")]
    TooLong {
        /// Coefficients found.
        len: usize,
        /// The ring degree.
        n: usize,
    },
    /// A coefficient at or above the plain modulus.
    #[error("plaintext coefficient {index} is {value}, not below t = {t}")]
    NotBelowT {
        /// Its index.
        index: usize,
        /// Its value.
        value: u64,
        /// The plain modulus.
        t: u64,
    },
    /// The zero plaintext (SEAL refuses it: the product would be a transparent ciphertext).
    #[error("plaintext is zero (the product would be transparent)")]
    Zero,
}

/// The evaluator's result type.
pub type Result<T> = std::result::Result<T, EvalError>;
