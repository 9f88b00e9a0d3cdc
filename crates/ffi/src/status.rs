//! Status codes: every function of the C ABI returns one, and [`zeppelin_strerror`] names it.

use core::ffi::{c_char, CStr};

/// The result of a call. `ZEPPELIN_STATUS_OK` (0) is success; every other value says what
/// was wrong, and the call left its outputs unchanged or wiped (never half-written secrets).
#[repr(i32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ZeppelinStatus {
    /// Success.
    Ok = 0,
    /// A required pointer was NULL.
    NullPointer = 1,
    /// A pointer is not aligned as its type (objects: `ZEPPELIN_OBJECT_ALIGN`) requires.
    Misaligned = 2,
    /// The caller's storage for an object is smaller than the object's size constant.
    StorageTooSmall = 3,
    /// A handle does not point at an initialised object of the expected kind.
    BadObject = 4,
    /// The preset or RBLWE parameter-set number is not one this library offers.
    UnknownPreset = 5,
    /// Objects of different presets (or parameter sets) were passed to one call.
    PresetMismatch = 6,
    /// An output buffer is too small.
    BufferTooSmall = 7,
    /// An input has the wrong length.
    Length = 8,
    /// A ciphertext level is outside `1..=K` (or the ciphertext is empty).
    Level = 9,
    /// A slot or plaintext coefficient is not below the plaintext modulus `t`.
    PlaintextRange = 10,
    /// A ciphertext or key coefficient is not below its modulus.
    CoefficientRange = 11,
    /// A key failed validation (not ternary/binary, implausible weight, bad structure).
    InvalidKey = 12,
    /// A public key is degenerate: a ciphertext under it would reveal the plaintext.
    DegeneratePublicKey = 13,
    /// A key object was never filled by key generation or a reader.
    KeyNotSet = 14,
    /// Wire bytes are shorter or longer than their form.
    WireTruncated = 15,
    /// A wire header field is not what SEAL writes.
    WireHeader = 16,
    /// The wire header's size differs from the input length.
    WireSize = 17,
    /// The wire parms_id is no level of this preset.
    WireParmsId = 18,
    /// A wire metadata field has a value the form does not allow.
    WireField = 19,
    /// A real value does not fit the fixed-point range of a slot.
    FixedPointRange = 20,
    /// A fixed-point scale has too many fractional bits (the limit is 52).
    FixedPointScale = 21,
    /// The entropy callback (the board's TRNG) reported a failure.
    Entropy = 22,
    /// The public keystream callback (the board's AES engine) reported a failure.
    Keystream = 23,
    /// A redundancy check found an inconsistency (fault or corrupt memory); outputs erased.
    FaultDetected = 24,
    /// An RBLWE public key does not belong to the secret key given with it.
    KeyPairMismatch = 25,
    /// An internal primitive refused its input (not expected with the built-in presets).
    Internal = 26,
    /// A public key read from bytes carries no public seed (only keygen records it).
    NoPublicSeed = 27,
    /// A seeded ciphertext's public generator (`prng_type`) is unknown, or not the one the
    /// call expands with.
    PublicGenerator = 28,
}

/// Every status, in code order (for `zeppelin_strerror` and the tests).
pub(crate) const ALL_STATUSES: [ZeppelinStatus; 29] = [
    ZeppelinStatus::Ok,
    ZeppelinStatus::NullPointer,
    ZeppelinStatus::Misaligned,
    ZeppelinStatus::StorageTooSmall,
    ZeppelinStatus::BadObject,
    ZeppelinStatus::UnknownPreset,
    ZeppelinStatus::PresetMismatch,
    ZeppelinStatus::BufferTooSmall,
    ZeppelinStatus::Length,
    ZeppelinStatus::Level,
    ZeppelinStatus::PlaintextRange,
    ZeppelinStatus::CoefficientRange,
    ZeppelinStatus::InvalidKey,
    ZeppelinStatus::DegeneratePublicKey,
    ZeppelinStatus::KeyNotSet,
    ZeppelinStatus::WireTruncated,
    ZeppelinStatus::WireHeader,
    ZeppelinStatus::WireSize,
    ZeppelinStatus::WireParmsId,
    ZeppelinStatus::WireField,
    ZeppelinStatus::FixedPointRange,
    ZeppelinStatus::FixedPointScale,
    ZeppelinStatus::Entropy,
    ZeppelinStatus::Keystream,
    ZeppelinStatus::FaultDetected,
    ZeppelinStatus::KeyPairMismatch,
    ZeppelinStatus::Internal,
    ZeppelinStatus::NoPublicSeed,
    ZeppelinStatus::PublicGenerator,
];

impl ZeppelinStatus {
    /// What the status means, as a NUL-terminated static string.
    pub const fn message(self) -> &'static CStr {
        match self {
            Self::Ok => c"ok",
            Self::NullPointer => c"a required pointer is NULL",
            Self::Misaligned => c"a pointer is not aligned as its type requires",
            Self::StorageTooSmall => c"the storage is smaller than the object's size constant",
            Self::BadObject => c"the handle is not an initialised object of the expected kind",
            Self::UnknownPreset => c"unknown preset or RBLWE parameter set",
            Self::PresetMismatch => c"objects of different presets passed to one call",
            Self::BufferTooSmall => c"an output buffer is too small",
            Self::Length => c"an input has the wrong length",
            Self::Level => c"level outside 1..=K, or an empty ciphertext",
            Self::PlaintextRange => c"a slot or plaintext coefficient is not below t",
            Self::CoefficientRange => c"a ciphertext or key coefficient is not below its modulus",
            Self::InvalidKey => c"a key failed validation",
            Self::DegeneratePublicKey => c"degenerate public key (would reveal the plaintext)",
            Self::KeyNotSet => c"the key was never generated or read",
            Self::WireTruncated => c"wire bytes are shorter or longer than their form",
            Self::WireHeader => c"bad SEAL header in wire bytes",
            Self::WireSize => c"wire header size differs from the input length",
            Self::WireParmsId => c"wire parms_id is no level of this preset",
            Self::WireField => c"a wire metadata field has a value the form does not allow",
            Self::FixedPointRange => c"a real value does not fit the fixed-point range",
            Self::FixedPointScale => c"fixed-point scale above 52 fractional bits",
            Self::Entropy => c"the entropy callback reported a failure",
            Self::Keystream => c"the keystream callback reported a failure",
            Self::FaultDetected => c"fault detected: outputs erased",
            Self::KeyPairMismatch => c"the public key does not belong to the secret key",
            Self::Internal => c"internal primitive refused its input",
            Self::NoPublicSeed => c"the public key was read from bytes: its public seed is unknown",
            Self::PublicGenerator => {
                c"the seeded ciphertext's public generator is unknown or not the one this call expands with"
            }
        }
    }
}

/// The status code a Rust result becomes.
pub(crate) type Result<T> = core::result::Result<T, ZeppelinStatus>;

/// Turns a result into the status the C caller receives.
pub(crate) fn status(r: Result<()>) -> ZeppelinStatus {
    match r {
        Ok(()) => ZeppelinStatus::Ok,
        Err(e) => e,
    }
}

/// Runs the body of a C entry point and returns its status.
pub(crate) fn run(body: impl FnOnce() -> Result<()>) -> ZeppelinStatus {
    status(body())
}

impl From<zeppelin::WireError> for ZeppelinStatus {
    fn from(e: zeppelin::WireError) -> Self {
        use zeppelin::WireError as W;
        match e {
            W::Truncated { .. } => Self::WireTruncated,
            W::BadHeader { .. } => Self::WireHeader,
            W::SizeMismatch { .. } => Self::WireSize,
            W::UnknownParmsId => Self::WireParmsId,
            W::BadField { .. } => Self::WireField,
            W::CoefficientOutOfRange { .. } => Self::CoefficientRange,
            W::BufferTooSmall { .. } => Self::BufferTooSmall,
        }
    }
}

impl From<zeppelin::Error> for ZeppelinStatus {
    fn from(e: zeppelin::Error) -> Self {
        use zeppelin::Error as E;
        match e {
            E::InvalidLevel { .. } => Self::Level,
            E::LengthMismatch { .. } => Self::Length,
            E::PlaintextOutOfRange { .. } => Self::PlaintextRange,
            E::CoefficientOutOfRange { .. } => Self::CoefficientRange,
            E::SecretKeyNotTernary { .. } | E::SecretKeyWeight { .. } => Self::InvalidKey,
            E::PublicKeyDegenerate { .. } => Self::DegeneratePublicKey,
            E::KeyNotSet { .. } => Self::KeyNotSet,
            E::Wire(w) => w.into(),
            E::FixedPointOutOfRange { .. } => Self::FixedPointRange,
            E::FixedPointScale { .. } => Self::FixedPointScale,
            E::BufferTooSmall { .. } => Self::BufferTooSmall,
            E::UnknownGenerator { .. } | E::GeneratorMismatch { .. } => Self::PublicGenerator,
            E::Ring(_) => Self::Internal,
        }
    }
}

impl From<rblwe::Error> for ZeppelinStatus {
    fn from(e: rblwe::Error) -> Self {
        use rblwe::Error as E;
        match e {
            E::WrongLength { .. } => Self::Length,
            E::CoefficientOutOfRange { .. } => Self::CoefficientRange,
            E::InvalidKey { .. } => Self::InvalidKey,
            E::DegeneratePublicKey { .. } => Self::DegeneratePublicKey,
            E::KeyPairMismatch => Self::KeyPairMismatch,
            E::Entropy => Self::Entropy,
            E::FaultDetected { .. } => Self::FaultDetected,
            E::Internal { .. } => Self::Internal,
        }
    }
}

/// The name of a status code as a static NUL-terminated string (never NULL; an unknown
/// code gives "unknown status code").
#[no_mangle]
pub extern "C" fn zeppelin_strerror(code: i32) -> *const c_char {
    match ALL_STATUSES.iter().find(|s| **s as i32 == code) {
        Some(s) => s.message().as_ptr(),
        None => c"unknown status code".as_ptr(),
    }
}
