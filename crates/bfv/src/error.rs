//! Typed errors of the BFV client.

use core::fmt;

/// What is wrong with an input handed to the BFV client. Every fallible operation checks its
/// inputs before it writes anything, so an error leaves the outputs as they were.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Error {
    /// A level is not in `1..=K` for the preset.
    InvalidLevel { level: usize, max: usize },
    /// A slice has the wrong number of elements.
    LengthMismatch { expected: usize, found: usize },
    /// A slot or plaintext coefficient is not below `t`.
    PlaintextOutOfRange { index: usize, value: u32 },
    /// A ciphertext or key residue is not below its prime.
    CoefficientOutOfRange {
        /// Polynomial (0 for `c0`/`p0`, 1 for `c1`/`p1`).
        poly: usize,
        /// RNS prime index.
        prime: usize,
        /// Coefficient index.
        index: usize,
        /// The offending value.
        value: u32,
    },
    /// A secret-key coefficient is not in `{-1, 0, 1}` (or its residues disagree).
    SecretKeyNotTernary { index: usize },
    /// A real value does not fit the fixed-point range of a slot.
    FixedPointOutOfRange { index: usize },
    /// A fixed-point scale has too many fractional bits (the limit is 52).
    FixedPointScale { frac_bits: u32 },
    /// An output buffer is too small.
    BufferTooSmall { needed: usize, found: usize },
    /// The arithmetic core refused an input (cannot happen with the built-in presets).
    Ring(zeppelin_ring::RingError),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::InvalidLevel { level, max } => {
                write!(f, "level {level} is not in 1..={max} for this preset")
            }
            Self::LengthMismatch { expected, found } => {
                write!(f, "expected {expected} elements, found {found}")
            }
            Self::PlaintextOutOfRange { index, value } => {
                write!(f, "plaintext value {value} at index {index} is not below t = 65537")
            }
            Self::CoefficientOutOfRange {
                poly,
                prime,
                index,
                value,
            } => write!(
                f,
                "polynomial {poly}, prime {prime}, coefficient {index}: residue {value} is not below the prime"
            ),
            Self::SecretKeyNotTernary { index } => {
                write!(f, "secret-key coefficient {index} is not in {{-1, 0, 1}}")
            }
            Self::FixedPointOutOfRange { index } => write!(
                f,
                "value at index {index} is outside the fixed-point range of a slot (or not finite)"
            ),
            Self::FixedPointScale { frac_bits } => {
                write!(f, "{frac_bits} fractional bits is more than the 52 supported")
            }
            Self::BufferTooSmall { needed, found } => {
                write!(f, "output buffer holds {found} bytes, {needed} needed")
            }
            Self::Ring(e) => write!(f, "arithmetic core: {e}"),
        }
    }
}

impl core::error::Error for Error {}

impl From<zeppelin_ring::RingError> for Error {
    fn from(e: zeppelin_ring::RingError) -> Self {
        Self::Ring(e)
    }
}
