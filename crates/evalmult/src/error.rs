//! Typed errors: every way an input can be wrong says what is wrong and where.

use std::path::PathBuf;

use zeppelin_ring::RingError;

/// What is wrong with a parameter set, a key, a ciphertext, a vector directory or a frame.
#[derive(Debug, thiserror::Error)]
pub enum EvalMultError {
    /// The ring dimension is not a power of two in the supported range.
    #[error("ring dimension {ring_dim} is not a power of two in [{min}, {max}]")]
    RingDimension {
        /// The rejected ring dimension.
        ring_dim: usize,
        /// Smallest supported.
        min: usize,
        /// Largest supported.
        max: usize,
    },
    /// No towers, or more than the engine supports.
    #[error("tower count {count} is outside [1, {max}]")]
    TowerCount {
        /// The rejected count.
        count: usize,
        /// Largest supported.
        max: usize,
    },
    /// A modulus is not an odd prime below 2^30 or has no negacyclic NTT of the ring size.
    #[error("tower {tower}: {source}")]
    Modulus {
        /// Index of the tower.
        tower: usize,
        /// What the arithmetic core said about it.
        #[source]
        source: RingError,
    },
    /// A modulus appears twice: RNS towers must be distinct primes.
    #[error("modulus {modulus} appears at towers {first} and {second}")]
    DuplicateModulus {
        /// The repeated prime.
        modulus: u32,
        /// First tower holding it.
        first: usize,
        /// Second tower holding it.
        second: usize,
    },
    /// A buffer or collection has the wrong size.
    #[error("{what}: expected {expected} {unit}, found {found}")]
    Shape {
        /// Which input.
        what: String,
        /// What it should have.
        expected: usize,
        /// What it has.
        found: usize,
        /// Unit of the counts ("residues", "digits", "bytes", ...).
        unit: &'static str,
    },
    /// A residue is not reduced: `value >= modulus`.
    #[error("{what}: tower {tower}, coefficient {index}: residue {value} is not below the modulus {modulus}")]
    ResidueOutOfRange {
        /// Which input.
        what: String,
        /// Tower of the residue.
        tower: usize,
        /// Coefficient index within the tower.
        index: usize,
        /// The residue.
        value: u32,
        /// The tower's modulus.
        modulus: u32,
    },
    /// The relinearization key was made for a different ring or different moduli.
    #[error("relinearization key is for ring dimension {key_ring_dim} and moduli {key_moduli:?}, the engine for ring dimension {ring_dim} and moduli {moduli:?}")]
    KeyMismatch {
        /// Ring dimension of the engine.
        ring_dim: usize,
        /// Moduli of the engine.
        moduli: Vec<u32>,
        /// Ring dimension the key was made for.
        key_ring_dim: usize,
        /// Moduli the key was made for.
        key_moduli: Vec<u32>,
    },
    /// A file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// `manifest.json` is malformed or inconsistent.
    #[error("{path}: {reason}")]
    Manifest {
        /// The manifest file.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
    /// The arithmetic core refused a buffer (an internal length inconsistency).
    #[error("arithmetic core: {0}")]
    Ring(#[from] RingError),
    /// A stream frame is malformed.
    #[error("frame: {0}")]
    Frame(String),
}

impl EvalMultError {
    pub(crate) fn shape(
        what: impl Into<String>,
        expected: usize,
        found: usize,
        unit: &'static str,
    ) -> Self {
        Self::Shape {
            what: what.into(),
            expected,
            found,
            unit,
        }
    }
}

/// Result alias of this crate.
pub type Result<T, E = EvalMultError> = core::result::Result<T, E>;
