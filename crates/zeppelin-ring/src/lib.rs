//! # zeppelin-ring
//!
//! The one arithmetic core of Zeppelin, shared by the BFV device client, the SEAL adapter and
//! the OpenFHE-exact EvalMult engine. `no_std`, no allocator (the `alloc` feature adds
//! run-time-sized NTT tables for servers; `std` adds reading `ZEPPELIN_BACKEND`).
//!
//! - [`Modulus`]: a prime `q < 2^30` with constant-time 32-bit Montgomery arithmetic.
//! - [`NttTable`], [`NttView`]: the negacyclic NTT's tables (SEAL's and OpenFHE's evaluation
//!   map, see [`ntt`]).
//! - One backend layer, three traits (no default methods but `chacha20_blocks4`):
//!   - [`NttBackend`]: forward and inverse NTT, the three pointwise products;
//!   - [`RnsKernels`]: the centred lift, the key-switch multiply-accumulate and the
//!     base-conversion sums of RNS servers (see [`rns`]);
//!   - [`ClientKernels`]: the BFV client's BEHZ decryption tail and CDT scan (see
//!     [`client`]), and the four-block ChaCha20 of the device's secret keystream (see
//!     [`chacha`]; the one method with a default body, the portable block function).
//! - The backends, one module each, each implementing all three traits (delegating to
//!   [`Portable`] in code where it has no faster kernel): [`Portable`] (every target),
//!   `x86::{Avx2, Avx512}` (detection tokens) and `x86::Auto` (the best of them, chosen once),
//!   `mve::Mve` (Helium, `--cfg zeppelin_mve` on Arm). [`DefaultBackend`] /
//!   [`default_backend`] is the one for this build.
//! - [`ct`]: the masks every constant-time choice is made of.
//!
//! # Choosing a backend
//!
//! A backend is a value the caller keeps: `let ntt = default_backend();` once, then
//! `ntt.forward(&table.view(), &mut a)`. Tests and benchmarks force one with
//! `--cfg zeppelin_backend="portable"` (or `"avx2"`) at compile time, or, at run time,
//! with [`default_backend_named`] / (feature `std`) `default_backend_from_env`, which read
//! names such as the environment variable [`BACKEND_ENV`] holds.
#![no_std]
#![deny(unsafe_code)]

#[cfg(feature = "alloc")]
extern crate alloc;
#[cfg(feature = "std")]
extern crate std;

pub mod chacha;
pub mod checks;
pub mod client;
pub mod ct;
mod error;
pub mod modulus;
#[cfg(all(target_arch = "arm", zeppelin_mve))]
#[expect(unsafe_code, reason = "the Helium kernels are inline assembly")]
pub mod mve;
pub mod ntt;
mod portable;
pub mod rns;
mod select;
#[cfg(target_arch = "x86_64")]
#[expect(unsafe_code, reason = "the AVX2 and AVX-512 kernels are intrinsics")]
pub mod x86;

#[cfg(test)]
mod conformance;

pub use client::ClientKernels;
pub use error::RingError;
pub use modulus::{Modulus, Mont};
pub use ntt::{NttBackend, NttTable, NttView};
pub use portable::Portable;
pub use rns::RnsKernels;
#[cfg(feature = "std")]
pub use select::default_backend_from_env;
pub use select::{default_backend, default_backend_named, DefaultBackend};

/// The environment variable that names a backend for `default_backend_from_env` (and
/// `x86::Auto::from_env`): `portable`, `avx2`, `avx512`, `mve` or `auto`.
pub const BACKEND_ENV: &str = "ZEPPELIN_BACKEND";
