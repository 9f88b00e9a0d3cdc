//! # zeppelin-ring
//!
//! The one arithmetic core of Zeppelin, shared by the BFV device client, the SEAL adapter and
//! the OpenFHE-exact EvalMult engine. `no_std`, no allocator (the `alloc` feature adds
//! run-time-sized NTT tables for servers).
//!
//! - [`Modulus`]: a prime `q < 2^30` with constant-time 32-bit Montgomery arithmetic.
//! - [`NttTable`], [`NttView`], [`NttBackend`]: the negacyclic NTT (SEAL's and OpenFHE's
//!   evaluation map, see [`ntt`]) with interchangeable backends; [`Ntt`] is the one chosen
//!   for the target.
//! - [`RnsKernels`]: the centred lift, the key-switch multiply-accumulate and the Shoup
//!   forward NTT of RNS servers (see [`rns`]), portable everywhere and SIMD on x86-64.
//! - [`ct`]: the masks every constant-time choice is made of.
#![no_std]
#![deny(unsafe_code)]

#[cfg(feature = "alloc")]
extern crate alloc;

pub mod ct;
mod error;
pub mod modulus;
#[cfg(all(target_arch = "arm", zeppelin_mve))]
pub mod mve;
pub mod ntt;
pub mod rns;

pub use error::RingError;
pub use modulus::Modulus;
pub use ntt::{Ntt, NttBackend, NttTable, NttView, Portable};
pub use rns::RnsKernels;
#[cfg(feature = "alloc")]
pub use rns::ShoupTable;
#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
mod x86;
#[cfg(target_arch = "x86_64")]
pub use x86::X86;
