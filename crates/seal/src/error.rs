//! Everything that can be wrong with SEAL bytes, parameters or keys.

use crate::params::ParmsId;

/// Why a SEAL object could not be read, written or converted.
///
/// Every variant names what is wrong; the `Display` text is one line, meant to be shown to a
/// user as it is.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SealError {
    /// The input ended before the object did.
    #[error(
        "truncated input: {what} needs {needed} bytes at offset {offset}, only {available} left"
    )]
    Truncated {
        /// The field being read.
        what: &'static str,
        /// Byte offset (in the decompressed member stream) where the read started.
        offset: u64,
        /// Bytes the field needs.
        needed: u64,
        /// Bytes that were left.
        available: u64,
    },
    /// The first two bytes are not SEAL's magic number.
    #[error("bad magic 0x{found:04X} in {what} header (SEAL writes 0xA15E)")]
    BadMagic {
        /// The object whose header was read.
        what: &'static str,
        /// The value found.
        found: u16,
    },
    /// The header's own size field is not 16.
    #[error("bad header size {found} in {what} header (expected 16)")]
    BadHeaderSize {
        /// The object whose header was read.
        what: &'static str,
        /// The value found.
        found: u8,
    },
    /// A serialization version other than 4.0 to 4.4.
    #[error("unsupported SEAL serialization version {major}.{minor} in {what} header (accepted: 4.0 to 4.4)")]
    UnsupportedVersion {
        /// The object whose header was read.
        what: &'static str,
        /// Major version.
        major: u8,
        /// Minor version.
        minor: u8,
    },
    /// A compression mode other than none (0), zlib (1) or zstd (2), or a compressed nested object.
    #[error("unsupported compression mode {found} in {what} header")]
    UnsupportedCompression {
        /// The object whose header was read.
        what: &'static str,
        /// The value found.
        found: u8,
    },
    /// The reserved header bytes are not zero.
    #[error("reserved bytes of the {what} header are 0x{found:04X}, expected 0")]
    BadReserved {
        /// The object whose header was read.
        what: &'static str,
        /// The value found.
        found: u16,
    },
    /// The header's size disagrees with the bytes that make up the object.
    #[error(
        "size mismatch in {what}: header says {declared} bytes, {actual} bytes make up the object"
    )]
    SizeMismatch {
        /// The object.
        what: &'static str,
        /// The size in the header.
        declared: u64,
        /// The size found.
        actual: u64,
    },
    /// The object's parms_id belongs to no level of the parameters in use.
    #[error("unknown parms_id {found} in {what}: not a level of these encryption parameters")]
    UnknownParmsId {
        /// The object.
        what: &'static str,
        /// The parms_id read.
        found: ParmsId,
    },
    /// The object is at a level where it may not be (for example a ciphertext at the key level).
    #[error("{what} is at the wrong level: {reason}")]
    WrongLevel {
        /// The object.
        what: &'static str,
        /// What the level should be.
        reason: String,
    },
    /// A residue that is not reduced modulo its prime.
    #[error("coefficient {value} at index {index} of {what} is not below its modulus {modulus}")]
    CoefficientOutOfRange {
        /// The object.
        what: &'static str,
        /// Index into the object's coefficient array.
        index: usize,
        /// The value found.
        value: u64,
        /// The modulus it must be below.
        modulus: u64,
    },
    /// A ring degree that does not match the parameters.
    #[error("wrong poly_modulus_degree in {what}: {found}, expected {expected}")]
    WrongDegree {
        /// The object.
        what: &'static str,
        /// The value found.
        found: u64,
        /// The value expected.
        expected: u64,
    },
    /// A count field that is larger than the object can be.
    #[error("oversized count in {what}: {found} exceeds the limit {limit}")]
    OversizedCount {
        /// The field.
        what: &'static str,
        /// The value found.
        found: u64,
        /// The largest acceptable value.
        limit: u64,
    },
    /// A count field that differs from what the metadata implies.
    #[error("count mismatch in {what}: {found}, expected {expected}")]
    CountMismatch {
        /// The field.
        what: &'static str,
        /// The value found.
        found: u64,
        /// The value expected.
        expected: u64,
    },
    /// Any other inconsistent field.
    #[error("invalid {what}: {reason}")]
    Invalid {
        /// The field or object.
        what: &'static str,
        /// What is wrong with it.
        reason: String,
    },
    /// Encryption parameters SEAL (or this crate) would not accept.
    #[error("invalid encryption parameters: {0}")]
    InvalidParameters(String),
    /// A seeded ciphertext names a PRNG other than blake2xb (1) or shake256 (2).
    #[error("unsupported prng_type {0} (SEAL knows 1 = blake2xb and 2 = shake256)")]
    UnknownPrngType(u8),
    /// Bytes follow the object.
    #[error("{count} trailing bytes after the {what}")]
    TrailingBytes {
        /// The object.
        what: &'static str,
        /// How many bytes follow it.
        count: u64,
    },
    /// The compressed body is not a valid zlib or zstd stream.
    #[error("decompression of the {what} failed: {reason}")]
    Decompression {
        /// The object.
        what: &'static str,
        /// The decompressor's message.
        reason: String,
    },
    /// Compression failed while writing.
    #[error("compression failed: {0}")]
    Compression(String),
    /// An error of the arithmetic core (a modulus it cannot handle, a wrong length).
    #[error("arithmetic: {0}")]
    Ring(#[from] zeppelin_ring::RingError),
    /// A feature this crate does not implement for the given input.
    #[error("unsupported: {0}")]
    Unsupported(String),
}

/// Shorthand for results of this crate.
pub type Result<T> = core::result::Result<T, SealError>;
