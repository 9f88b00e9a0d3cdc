//! Everything that can be wrong with SEAL bytes, parameters or keys, and with the bridge to
//! the device client.

use std::fmt;

use crate::parms_id::ParmsId;

/// Why a SEAL object could not be read, written or converted.
///
/// Every variant names what is wrong with typed fields; the `Display` text is one line, meant
/// to be shown to a user as it is (it includes the text of a wrapped cause, which is also
/// available through [`std::error::Error::source`]).
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
    #[error("{what} is at the wrong level: {rule}")]
    WrongLevel {
        /// The object.
        what: &'static str,
        /// Where it must be.
        rule: LevelRule,
    },
    /// A residue that is not reduced modulo its prime. The value itself is not carried: it
    /// may be a secret key's or a plaintext's.
    #[error("coefficient at index {index} of {what} is not below its modulus {modulus}")]
    CoefficientOutOfRange {
        /// The object.
        what: &'static str,
        /// Index into the object's coefficient array.
        index: usize,
        /// The modulus it must be below.
        modulus: u64,
    },
    /// An uncompressed object longer than any object of its kind in this context.
    #[error(
        "{what} of {size} bytes is longer than any {what} of these parameters ({limit} bytes)"
    )]
    OversizedObject {
        /// The object.
        what: &'static str,
        /// Its member bytes.
        size: u64,
        /// The most its members can be in this context.
        limit: u64,
    },
    /// A compressed object whose decompressed members would exceed the longest object of
    /// its kind in this context; decompression stopped there.
    #[error("the compressed {what} decompresses beyond {limit} bytes, the most it can be under these parameters")]
    DecompressionLimit {
        /// The object.
        what: &'static str,
        /// The most its members can be in this context.
        limit: u64,
    },
    /// A public key row with too many residues near zero (an all-zero key, or `c0 = -e` of a
    /// zero secret), under which ciphertexts would reveal their plaintexts.
    #[error("degenerate {what}: polynomial {poly} modulo prime {prime} has {small} residues near zero (at most {limit} allowed)")]
    PublicKeyDegenerate {
        /// The object.
        what: &'static str,
        /// 0 for `c0`, 1 for `c1`.
        poly: usize,
        /// Index of the prime in the key level.
        prime: usize,
        /// Residues found within the small window of zero.
        small: usize,
        /// The most a genuine key row has.
        limit: usize,
    },
    /// A public key that is not an encryption of zero under the secret key it was given with.
    #[error("the public key does not belong to the secret key: c0 + c1·s is not within the noise bound {bound} (at least one coefficient outside)")]
    KeyPairMismatch {
        /// The error bound every coefficient of `c0 + c1·s` must respect.
        bound: i64,
    },
    /// Two secret keys that should be the same key (SEAL's and the device's) differ.
    #[error("the SEAL secret key and the device secret key are different keys")]
    SecretKeysDiffer,
    /// A SEAL secret key whose number of nonzero coefficients is implausible for a uniform
    /// ternary secret (zero, sparse or all-nonzero keys).
    #[error("secret key weight {weight} is outside the plausible range {min}..={max}")]
    SecretKeyWeight {
        /// Nonzero coefficients found.
        weight: usize,
        /// Smallest accepted weight.
        min: usize,
        /// Largest accepted weight.
        max: usize,
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
    /// A `scheme` byte that is no SEAL `scheme_type`.
    #[error("invalid scheme: {found} is not a SEAL scheme_type")]
    UnknownScheme {
        /// The byte found.
        found: u8,
    },
    /// A serialized modulus SEAL would not load.
    #[error("invalid {what}: modulus {value} is 1 or wider than 61 bits")]
    BadModulus {
        /// The field.
        what: &'static str,
        /// The value found.
        value: u64,
    },
    /// A ciphertext with exactly one polynomial.
    #[error("invalid ciphertext size: {found} (a ciphertext has 0 or at least 2 polynomials)")]
    BadCiphertextSize {
        /// The size found.
        found: u64,
    },
    /// A BFV object with a scale other than 1.
    #[error("invalid scale in {what}: {found} (BFV objects have scale 1)")]
    BadScale {
        /// The object.
        what: &'static str,
        /// The scale found.
        found: f64,
    },
    /// A BFV ciphertext with a correction factor other than 1.
    #[error("invalid correction_factor: {found} (BFV ciphertexts have 1)")]
    BadCorrectionFactor {
        /// The value found.
        found: u64,
    },
    /// A public or key-switching key that is not a size-2 NTT-form ciphertext.
    #[error("invalid {what}: a key is a size-2 NTT-form ciphertext (found size {size}, NTT form {is_ntt_form})")]
    NotAKey {
        /// The object.
        what: &'static str,
        /// Its number of polynomials.
        size: usize,
        /// Its NTT flag.
        is_ntt_form: bool,
    },
    /// SEAL's seeded form exists for two-polynomial ciphertexts only.
    #[error("only a size-2 ciphertext has SEAL's seeded form (size {size})")]
    NotSeedable {
        /// The ciphertext's size.
        size: usize,
    },
    /// An operation that needs a fresh ciphertext (size 2, coefficient form).
    #[error("{operation} needs a fresh ciphertext (size 2, coefficient form); found size {size}, NTT form {is_ntt_form}")]
    NotFresh {
        /// The operation.
        operation: &'static str,
        /// The ciphertext's size.
        size: usize,
        /// Its NTT flag.
        is_ntt_form: bool,
    },
    /// A BFV operation on a ciphertext in NTT form (BFV ciphertexts are in coefficient form).
    #[error("{operation} needs a ciphertext in coefficient form, not NTT form")]
    NttForm {
        /// The operation.
        operation: &'static str,
    },
    /// A ciphertext without polynomials.
    #[error("empty ciphertext (no polynomials)")]
    EmptyCiphertext,
    /// Loaded key-switching keys carry no generator seeds, so SEAL's seeded form cannot be written.
    #[error("no generator seeds for SEAL's seeded form of key-switching keys (only keys made here have them)")]
    MissingSeeds,
    /// The decompressed body of a compressed object continues after the object.
    #[error("the decompressed body of the {what} continues after the object's {after} bytes")]
    DecompressedTrailing {
        /// The object.
        what: &'static str,
        /// Bytes the object's members used.
        after: u64,
    },
    /// A name (for example a compression mode on a command line) that is not known.
    #[error("unknown {what} {name:?} (expected {expected})")]
    UnknownName {
        /// What the name should name.
        what: &'static str,
        /// The name given.
        name: String,
        /// The accepted names.
        expected: &'static str,
    },
    /// Encryption parameters SEAL (or this crate) would not accept.
    #[error("invalid encryption parameters: {0}")]
    InvalidParameters(ParameterError),
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
    #[error("decompression of the {what} failed: {source}")]
    Decompression {
        /// The object.
        what: &'static str,
        /// The decompressor's error.
        #[source]
        source: std::io::Error,
    },
    /// Compression failed while writing.
    #[error("compression failed: {source}")]
    Compression {
        /// The compressor's error.
        #[source]
        source: std::io::Error,
    },
    /// Modulus switching needs a prime to drop and one to keep.
    #[error("modulus switching needs at least two primes, found {primes}")]
    LastLevel {
        /// The primes of the input's level.
        primes: usize,
    },
    /// A prime the 30-bit arithmetic core cannot compute with.
    #[error("prime {prime} is wider than the 30-bit arithmetic core supports")]
    PrimeTooWide {
        /// The prime.
        prime: u64,
    },
    /// A row-rotation step outside SEAL's range.
    #[error("invalid rotation step {step}: its magnitude must be below {limit}")]
    RotationStep {
        /// The step.
        step: i64,
        /// `n / 2`.
        limit: u64,
    },
    /// A Galois element that is even or not below `2n`.
    #[error("invalid Galois element {element}: not odd and below {limit}")]
    BadGaloisElement {
        /// The element.
        element: u32,
        /// `2n`.
        limit: u64,
    },
    /// A SEAL secret key whose coefficients are not all in `{-1, 0, 1}`.
    #[error(
        "secret key: coefficient {index} is not -1, 0 or 1 (the device keeps ternary secrets)"
    )]
    SecretKeyNotTernary {
        /// The first coefficient that is not ternary.
        index: usize,
    },
    /// A SEAL secret key that is not ternary (checked without naming the coefficient, in
    /// constant time).
    #[error("secret key: not a ternary polynomial with the same coefficients modulo every prime")]
    SecretKeyMalformed,
    /// A SEAL secret key whose residues modulo some prime are not those of its ternary secret.
    #[error("secret key: the residues modulo prime {prime} disagree with the ternary secret")]
    SecretKeyInconsistent {
        /// Index of the prime in the key level.
        prime: usize,
    },
    /// A SEAL object or parameter set that does not fit a device preset.
    #[error("{what} does not fit the device preset {preset}: {mismatch}")]
    DeviceMismatch {
        /// The object.
        what: &'static str,
        /// The preset's name (`Params::NAME`).
        preset: &'static str,
        /// What differs.
        mismatch: Mismatch,
    },
    /// The device client refused an input or an operation.
    #[error("{operation}: {source}")]
    Device {
        /// The device operation.
        operation: &'static str,
        /// The device client's error.
        #[source]
        source: zeppelin::Error,
    },
    /// The device's wire form could not be read or written.
    #[error("device wire form: {0}")]
    DeviceWire(zeppelin::wire::WireError),
    /// An error of the arithmetic core (a modulus it cannot handle, a wrong length).
    #[error("arithmetic: {0}")]
    Ring(#[from] zeppelin_ring::RingError),
}

impl From<zeppelin::wire::WireError> for SealError {
    fn from(e: zeppelin::wire::WireError) -> Self {
        SealError::DeviceWire(e)
    }
}

/// Where an object must be in the modulus-switching chain.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum LevelRule {
    /// Keys live at the key level (all primes, the special prime included).
    KeyLevel,
    /// Ciphertexts live at a data level, never at the key level.
    DataLevel,
}

impl fmt::Display for LevelRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            LevelRule::KeyLevel => "it must be at the key level",
            LevelRule::DataLevel => "it cannot be at the key level",
        })
    }
}

/// What makes encryption parameters unusable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ParameterError {
    /// A scheme other than BFV.
    NotBfv {
        /// The scheme byte.
        scheme: u8,
    },
    /// A ring degree that is not a power of two in `[2, 131072]`.
    Degree {
        /// The degree.
        n: u64,
    },
    /// No primes.
    NoPrimes,
    /// A prime outside 2 to 60 bits.
    PrimeSize {
        /// The prime.
        prime: u64,
    },
    /// A modulus that is not a prime congruent to 1 mod `2n`.
    NotNttPrime {
        /// The modulus.
        prime: u64,
        /// `2n`.
        two_n: u64,
    },
    /// A prime that appears twice.
    DuplicatePrime {
        /// The prime.
        prime: u64,
    },
    /// A plain modulus outside 2 to 60 bits.
    PlainModulusSize {
        /// The plain modulus.
        t: u64,
    },
    /// A plain modulus that shares a factor with the coefficient modulus.
    PlainNotCoprime {
        /// The plain modulus.
        t: u64,
    },
    /// Key switching needs a special prime, so at least two primes.
    NoSpecialPrime,
}

impl fmt::Display for ParameterError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::NotBfv { scheme } => {
                write!(f, "scheme {scheme} is not BFV (only BFV is supported)")
            }
            Self::Degree { n } => write!(
                f,
                "poly_modulus_degree {n} is not a power of two in [2, 131072]"
            ),
            Self::NoPrimes => f.write_str("coeff_modulus is empty"),
            Self::PrimeSize { prime } => write!(f, "prime {prime} is not 2 to 60 bits"),
            Self::NotNttPrime { prime, two_n } => {
                write!(f, "{prime} is not a prime congruent to 1 mod {two_n}")
            }
            Self::DuplicatePrime { prime } => write!(f, "prime {prime} appears twice"),
            Self::PlainModulusSize { t } => write!(f, "plain modulus {t} is not 2 to 60 bits"),
            Self::PlainNotCoprime { t } => write!(
                f,
                "plain modulus {t} is not coprime to the coefficient modulus"
            ),
            Self::NoSpecialPrime => {
                f.write_str("key switching needs at least two primes (a special prime)")
            }
        }
    }
}

/// How a SEAL object or parameter set differs from what a device preset accepts
/// (see [`crate::device`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Mismatch {
    /// The parameters are not BFV.
    Scheme {
        /// The scheme byte found.
        found: u8,
    },
    /// Another ring degree.
    Degree {
        /// The preset's degree.
        expected: u64,
        /// The degree found.
        found: u64,
    },
    /// Another plain modulus.
    PlainModulus {
        /// The preset's plain modulus.
        expected: u64,
        /// The plain modulus found.
        found: u64,
    },
    /// Another number of primes in the coefficient modulus.
    PrimeCount {
        /// The number the preset's SEAL parameters have.
        expected: usize,
        /// The number found.
        found: usize,
    },
    /// Another prime.
    Prime {
        /// Position in the coefficient modulus.
        index: usize,
        /// The preset's prime.
        expected: u64,
        /// The prime found.
        found: u64,
    },
    /// A parms_id that is no level of the preset's data primes (other primes, another
    /// degree or plain modulus, or SEAL's key level).
    ParmsId {
        /// The parms_id found.
        found: ParmsId,
    },
    /// `coeff_modulus_size` disagrees with the level of the parms_id.
    CoeffModulusSize {
        /// The level's number of primes.
        expected: usize,
        /// The value found.
        found: usize,
    },
    /// A ciphertext that does not have two polynomials.
    Size {
        /// Its number of polynomials.
        found: usize,
    },
    /// A ciphertext in NTT form (BFV ciphertexts are in coefficient form).
    NttForm,
    /// A device ciphertext level outside `1..=K` (level 0: never written).
    Level {
        /// The level found.
        found: usize,
        /// `K`, the preset's number of data primes.
        max: usize,
    },
    /// A residue array whose length disagrees with the metadata.
    DataLength {
        /// Residues the metadata implies.
        expected: usize,
        /// Residues found.
        found: usize,
    },
    /// The device primes of a level neither form a SEAL data level nor start with SEAL's
    /// first data level, so there is no SEAL level to switch to.
    NoSealLevel {
        /// The device level.
        level: usize,
    },
    /// A device data prime that SEAL's key level does not have (so a SEAL key has no
    /// residues for it).
    MissingKeyPrime {
        /// The device prime.
        prime: u32,
    },
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::Scheme { found } => write!(f, "scheme {found} is not BFV (1)"),
            Self::Degree { expected, found } => {
                write!(f, "ring degree {found}, the preset has {expected}")
            }
            Self::PlainModulus { expected, found } => {
                write!(f, "plain modulus {found}, the preset has {expected}")
            }
            Self::PrimeCount { expected, found } => write!(
                f,
                "{found} primes in the coefficient modulus, the preset's SEAL parameters have {expected}"
            ),
            Self::Prime {
                index,
                expected,
                found,
            } => write!(f, "prime {index} is {found}, the preset's is {expected}"),
            Self::ParmsId { found } => write!(
                f,
                "parms_id {found} is no data level of the preset's primes"
            ),
            Self::CoeffModulusSize { expected, found } => write!(
                f,
                "coeff_modulus_size {found}, but its parms_id is a level of {expected} primes"
            ),
            Self::Size { found } => write!(
                f,
                "{found} polynomials; the device decrypts size 2 (relinearize first)"
            ),
            Self::NttForm => f.write_str("NTT form; BFV ciphertexts are in coefficient form"),
            Self::Level { found, max } => write!(f, "level {found} is not in 1..={max}"),
            Self::DataLength { expected, found } => {
                write!(f, "{found} residues, the metadata implies {expected}")
            }
            Self::NoSealLevel { level } => write!(
                f,
                "the device primes of level {level} neither form a SEAL level nor start with SEAL's first data level"
            ),
            Self::MissingKeyPrime { prime } => write!(
                f,
                "device prime {prime} is not a prime of SEAL's key level"
            ),
        }
    }
}

/// Shorthand for results of this crate.
pub type Result<T> = core::result::Result<T, SealError>;
