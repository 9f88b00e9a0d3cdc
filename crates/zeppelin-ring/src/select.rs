//! The backend of this build: [`DefaultBackend`] and its constructors.
//!
//! | build | [`DefaultBackend`] |
//! |---|---|
//! | x86-64 | `x86::Auto`: AVX-512F, else AVX2, else [`Portable`], detected at run time |
//! | Arm with `--cfg zeppelin_mve` (and `-C target-feature=+mve`) | `mve::Mve` |
//! | anything else, or MVE with `--cfg zeppelin_backend="portable"` | [`Portable`] |
//!
//! `--cfg zeppelin_backend="portable"` / `"avx2"` caps the choice at compile time (see
//! `x86`); [`default_backend_named`] and [`default_backend_from_env`] pick one by name at run
//! time.

use crate::error::RingError;
#[cfg(not(any(
    target_arch = "x86_64",
    all(target_arch = "arm", zeppelin_mve, not(zeppelin_backend = "portable"))
)))]
use crate::portable::Portable;

/// The backend of this build: `x86::Auto` on x86-64 (AVX-512F, else AVX2, else
/// [`crate::Portable`], detected at run time), `mve::Mve` on Arm with `--cfg zeppelin_mve`
/// (unless `--cfg zeppelin_backend="portable"`), [`crate::Portable`] elsewhere.
#[cfg(target_arch = "x86_64")]
pub type DefaultBackend = crate::x86::Auto;
/// The backend of this build: `x86::Auto` on x86-64 (AVX-512F, else AVX2, else
/// [`crate::Portable`], detected at run time), `mve::Mve` on Arm with `--cfg zeppelin_mve`
/// (unless `--cfg zeppelin_backend="portable"`), [`crate::Portable`] elsewhere.
#[cfg(all(target_arch = "arm", zeppelin_mve, not(zeppelin_backend = "portable")))]
pub type DefaultBackend = crate::mve::Mve;
/// The backend of this build: `x86::Auto` on x86-64 (AVX-512F, else AVX2, else
/// [`crate::Portable`], detected at run time), `mve::Mve` on Arm with `--cfg zeppelin_mve`
/// (unless `--cfg zeppelin_backend="portable"`), [`crate::Portable`] elsewhere.
#[cfg(not(any(
    target_arch = "x86_64",
    all(target_arch = "arm", zeppelin_mve, not(zeppelin_backend = "portable"))
)))]
pub type DefaultBackend = Portable;

/// The backend of this build, detected now (on x86-64 the CPU features are read once per
/// process and cached, so this is cheap; still, call it once and keep the value).
#[inline]
pub fn default_backend() -> DefaultBackend {
    #[cfg(target_arch = "x86_64")]
    {
        crate::x86::Auto::detect()
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        DefaultBackend::default()
    }
}

/// The backend named `name` (`"portable"`, `"avx2"`, `"avx512"`, `"mve"`, or `"auto"` and
/// the empty name for [`default_backend`]) as this build's [`DefaultBackend`]. Errors:
/// [`RingError::BackendUnavailable`] if this build or CPU cannot run it (for instance
/// `"portable"` in an MVE build, whose default type is `Mve`), [`RingError::BackendUnknown`]
/// for any other name.
pub fn default_backend_named(name: &str) -> Result<DefaultBackend, RingError> {
    #[cfg(target_arch = "x86_64")]
    {
        crate::x86::Auto::from_name(name)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let this = default_backend();
        let named = match name {
            "" | "auto" => return Ok(this),
            "portable" => "portable",
            "avx2" => "avx2",
            "avx512" => "avx512",
            "mve" => "mve",
            _ => return Err(RingError::BackendUnknown),
        };
        if crate::ntt::NttBackend::name(&this) == named {
            Ok(this)
        } else {
            Err(RingError::BackendUnavailable { backend: named })
        }
    }
}

/// [`default_backend_named`] of the environment variable [`crate::BACKEND_ENV`]
/// (`ZEPPELIN_BACKEND`), or [`default_backend`] when it is not set: how tests and benchmarks
/// run a whole program on each backend the CPU has.
#[cfg(feature = "std")]
pub fn default_backend_from_env() -> Result<DefaultBackend, RingError> {
    #[cfg(target_arch = "x86_64")]
    {
        crate::x86::Auto::from_env()
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        match std::env::var(crate::BACKEND_ENV) {
            Ok(name) => default_backend_named(&name),
            Err(std::env::VarError::NotPresent) => Ok(default_backend()),
            Err(std::env::VarError::NotUnicode(_)) => Err(RingError::BackendUnknown),
        }
    }
}
