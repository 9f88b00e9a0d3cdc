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
    /// A slot or plaintext coefficient is not below `t` (the value is not carried: it is the
    /// user's data).
    PlaintextOutOfRange { index: usize, t: u32 },
    /// A ciphertext or key residue is not below its prime.
    CoefficientOutOfRange {
        /// Polynomial (0 for `c0`/`p0`, 1 for `c1`/`p1`).
        poly: usize,
        /// RNS prime index.
        prime: usize,
        /// Coefficient index (the value is not carried: it may be a key's).
        index: usize,
    },
    /// A secret-key coefficient is not in `{-1, 0, 1}` (or its residues disagree).
    SecretKeyNotTernary { index: usize },
    /// A secret key's number of nonzero coefficients is outside the plausible range of a
    /// uniform ternary key (zero, sparse or all-nonzero keys).
    SecretKeyWeight {
        weight: usize,
        min: usize,
        max: usize,
    },
    /// A public-key row has too many residues near 0 (an all-zero key, or `p0 = −e` of a
    /// zero secret): encryption under it would reveal the plaintext.
    PublicKeyDegenerate {
        /// Polynomial (0 for `p0`, 1 for `p1`).
        poly: usize,
        /// RNS prime index.
        prime: usize,
        /// How many residues lie within `2^12` of 0.
        small: usize,
    },
    /// A key was never filled by key generation or a reader.
    KeyNotSet { key: &'static str },
    /// Device wire bytes are malformed.
    Wire(WireError),
    /// A real value does not fit the fixed-point range of a slot.
    FixedPointOutOfRange { index: usize },
    /// A fixed-point scale has too many fractional bits (the limit is 52).
    FixedPointScale { frac_bits: u32 },
    /// An output buffer is too small.
    BufferTooSmall { needed: usize, found: usize },
    /// A seeded ciphertext's `prng_type` byte names no public generator.
    UnknownGenerator { prng_type: u8 },
    /// A seeded ciphertext was made with another public generator than the one this `Bfv`
    /// expands with (`Bfv<P, A, E>` expands with `A`; [`crate::expand_seeded`] and
    /// [`crate::decrypt_seeded`] follow the ciphertext's generator).
    GeneratorMismatch {
        ciphertext: crate::prng::PublicGenerator,
        expander: crate::prng::PublicGenerator,
    },
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
            Self::PlaintextOutOfRange { index, t } => {
                write!(f, "plaintext value at index {index} is not below t = {t}")
            }
            Self::CoefficientOutOfRange { poly, prime, index } => write!(
                f,
                "polynomial {poly}, prime {prime}, coefficient {index}: residue is not below the prime"
            ),
            Self::SecretKeyNotTernary { index } => {
                write!(f, "secret-key coefficient {index} is not in {{-1, 0, 1}}")
            }
            Self::SecretKeyWeight { weight, min, max } => write!(
                f,
                "secret key has {weight} nonzero coefficients, outside the plausible {min}..={max}"
            ),
            Self::PublicKeyDegenerate { poly, prime, small } => write!(
                f,
                "public key polynomial {poly}, prime {prime} is degenerate: {small} residues near 0"
            ),
            Self::KeyNotSet { key } => {
                write!(f, "the {key} key is empty: generate or read it first")
            }
            Self::Wire(e) => write!(f, "device wire form: {e}"),
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
            Self::UnknownGenerator { prng_type } => {
                write!(f, "prng_type {prng_type:#04x} names no public generator (0xA1 = AES-128-CTR, 0xA2 = ChaCha20)")
            }
            Self::GeneratorMismatch {
                ciphertext,
                expander,
            } => write!(
                f,
                "the seeded ciphertext's public stream is {}, this expander's is {}",
                ciphertext.name(),
                expander.name()
            ),
            Self::Ring(e) => write!(f, "arithmetic core: {e}"),
        }
    }
}

impl core::error::Error for Error {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            Self::Ring(e) => Some(e),
            Self::Wire(e) => Some(e),
            _ => None,
        }
    }
}

impl From<WireError> for Error {
    fn from(e: WireError) -> Self {
        Self::Wire(e)
    }
}

impl From<zeppelin_ring::RingError> for Error {
    fn from(e: zeppelin_ring::RingError) -> Self {
        Self::Ring(e)
    }
}

/// What is wrong with device wire bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WireError {
    /// Fewer bytes than the form needs.
    Truncated { needed: usize, found: usize },
    /// A header field is not what SEAL writes (magic, header size, version, compression).
    BadHeader { offset: usize },
    /// The header's size differs from the input length.
    SizeMismatch { declared: u64, found: usize },
    /// The parms_id is no level of this preset.
    UnknownParmsId,
    /// A metadata field has a value this form does not allow.
    BadField { field: &'static str, value: u64 },
    /// A residue is not below its prime (the value is not carried).
    CoefficientOutOfRange { index: usize },
    /// The output buffer is too small.
    BufferTooSmall { needed: usize, found: usize },
}

impl fmt::Display for WireError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::Truncated { needed, found } => {
                write!(f, "truncated: the form needs {needed} bytes, found {found}")
            }
            Self::BadHeader { offset } => {
                write!(f, "bad SEAL header at byte {offset}")
            }
            Self::SizeMismatch { declared, found } => {
                write!(
                    f,
                    "size mismatch: header says {declared} bytes, input has {found}"
                )
            }
            Self::UnknownParmsId => write!(f, "unknown parms_id for this preset"),
            Self::BadField { field, value } => write!(f, "invalid {field}: {value}"),
            Self::CoefficientOutOfRange { index } => {
                write!(f, "residue at index {index} is not below its prime")
            }
            Self::BufferTooSmall { needed, found } => {
                write!(f, "output buffer holds {found} bytes, {needed} needed")
            }
        }
    }
}

impl core::error::Error for WireError {}
