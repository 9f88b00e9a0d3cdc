//! Errors of the arithmetic core.

use core::fmt;

/// What is wrong with a modulus, a ring size or a buffer handed to the arithmetic core.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RingError {
    /// The modulus is even, below 3, or not below 2^30 (the Montgomery bound of this core).
    ModulusOutOfRange { modulus: u64 },
    /// The modulus is not prime.
    ModulusNotPrime { modulus: u32 },
    /// The ring size is not a power of two in the supported range.
    DegreeNotSupported { degree: usize },
    /// The modulus is prime but not congruent to 1 mod 2n, so no negacyclic NTT exists.
    NotNttFriendly { modulus: u32, degree: usize },
    /// A buffer has the wrong number of coefficients.
    LengthMismatch { expected: usize, found: usize },
    /// A backend was asked for by name (`ZEPPELIN_BACKEND`, see [`crate::BACKEND_ENV`]) that
    /// this build knows but this CPU (or this target) cannot run.
    BackendUnavailable { backend: &'static str },
    /// A backend name that is none of `portable`, `avx2`, `avx512`, `mve`.
    BackendUnknown,
}

impl RingError {
    /// `Ok` if a buffer of `found` coefficients has the `expected` length, else
    /// [`RingError::LengthMismatch`]: the length check every kernel starts with.
    #[inline]
    pub const fn check_len(expected: usize, found: usize) -> Result<(), RingError> {
        if expected == found {
            Ok(())
        } else {
            Err(RingError::LengthMismatch { expected, found })
        }
    }
}

impl fmt::Display for RingError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::ModulusOutOfRange { modulus } => {
                write!(f, "modulus {modulus} must be odd and in [3, 2^30)")
            }
            Self::ModulusNotPrime { modulus } => write!(f, "modulus {modulus} is not prime"),
            Self::DegreeNotSupported { degree } => {
                write!(f, "ring degree {degree} is not a power of two in [2, 2^17]")
            }
            Self::NotNttFriendly { modulus, degree } => write!(
                f,
                "modulus {modulus} is not congruent to 1 mod 2*{degree}, so it has no negacyclic NTT of size {degree}"
            ),
            Self::LengthMismatch { expected, found } => {
                write!(f, "expected {expected} coefficients, found {found}")
            }
            Self::BackendUnavailable { backend } => {
                write!(f, "backend {backend} is not available on this CPU or target")
            }
            Self::BackendUnknown => write!(
                f,
                "unknown backend name (expected portable, avx2, avx512 or mve)"
            ),
        }
    }
}

impl core::error::Error for RingError {}
