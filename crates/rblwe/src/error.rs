//! Typed errors (a hand enum with `Display`: this crate is `no_std`).

use core::fmt;

/// Everything that can go wrong in this crate. Each variant says what was wrong.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Error {
    /// A byte string had the wrong length for the parameter set.
    WrongLength {
        /// What was being read (e.g. "public key").
        what: &'static str,
        /// The length the parameter set requires.
        expected: usize,
        /// The length that was given.
        actual: usize,
    },
    /// A polynomial coefficient was not below `q` (for `q = 128`, a byte >= 128).
    CoefficientOutOfRange {
        /// What was being read.
        what: &'static str,
        /// Index of the first offending coefficient.
        index: usize,
        /// Its value.
        value: u8,
        /// The modulus it must be below.
        q: u16,
    },
    /// A key failed structural validation (e.g. implausible Hamming weight of a binary
    /// secret, which is what a zeroing fault produces).
    InvalidKey {
        /// Which check failed.
        reason: &'static str,
    },
    /// A public polynomial (`a` or `p` of a public key) with too many coefficients in
    /// `{-1, 0, 1}` for a uniform polynomial: an all-zero key, `a = 0`, or a binary `p`, under
    /// which a ciphertext reveals its message.
    DegeneratePublicKey {
        /// Which polynomial ("a" or "p").
        poly: &'static str,
        /// Coefficients found in `{-1, 0, 1}`.
        small: usize,
        /// The most a uniform polynomial plausibly has.
        limit: usize,
    },
    /// A public key that does not belong to the secret key it was given with: `p + a·r2` is
    /// not a binary polynomial.
    KeyPairMismatch,
    /// The caller's true random number generator reported a failure.
    Entropy,
    /// A redundancy check found an inconsistency: a fault was injected or memory is corrupt.
    /// Outputs have been erased.
    FaultDetected {
        /// Which check fired.
        check: &'static str,
    },
    /// An internal primitive refused its input (e.g. an HKDF output length); never expected
    /// for the built-in parameter sets.
    Internal {
        /// What failed.
        what: &'static str,
    },
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::WrongLength {
                what,
                expected,
                actual,
            } => write!(f, "{what}: expected {expected} bytes, got {actual}"),
            Error::CoefficientOutOfRange {
                what,
                index,
                value,
                q,
            } => write!(
                f,
                "{what}: coefficient {index} is {value}, which is not below q = {q}"
            ),
            Error::InvalidKey { reason } => write!(f, "invalid key: {reason}"),
            Error::DegeneratePublicKey { poly, small, limit } => write!(
                f,
                "degenerate public key: {small} coefficients of {poly} are -1, 0 or 1 (a uniform polynomial has at most {limit})"
            ),
            Error::KeyPairMismatch => write!(
                f,
                "the public key does not belong to the secret key (p + a*r2 is not binary)"
            ),
            Error::Entropy => write!(f, "the random number generator failed"),
            Error::FaultDetected { check } => {
                write!(f, "fault detected by the {check} check; outputs erased")
            }
            Error::Internal { what } => write!(f, "internal error: {what}"),
        }
    }
}

impl core::error::Error for Error {}
