//! The x86-64 backends and their selection.
//!
//! - [`Avx512`] (16 lanes) and [`Avx2`] (8 lanes): detection tokens (`cpufeatures`, works in
//!   `no_std`) whose only constructor is `detect()`, so that holding one proves the CPU runs
//!   its instructions. Both are the same kernels, written once over a lane trait
//!   (`lanes.rs`), instantiated per instruction set.
//! - [`Auto`]: the best of the three this CPU has ([`Portable`] as the last resort), chosen
//!   once by [`Auto::detect`] and kept by the caller, as RustCrypto's `aes` keeps its
//!   detection token. Every call then dispatches on the stored choice, not on the CPU.
//!
//! # Forcing a backend
//!
//! So that tests and benchmarks can run every backend the CPU has against `Portable`:
//!
//! - at compile time, `--cfg zeppelin_backend="portable"` (or `"avx2"`, `"avx512"`) caps what
//!   [`Auto::detect`] (and so [`crate::default_backend`]) may pick: `"portable"` never uses
//!   SIMD, `"avx2"` never AVX-512, `"avx512"` is the default (a CPU without the capped
//!   instruction set still gets the next one it has);
//! - at run time, [`Auto::from_name`] (and, with the `std` feature, `Auto::from_env`, which
//!   reads [`crate::BACKEND_ENV`] = `ZEPPELIN_BACKEND`) picks exactly `portable`, `avx2`,
//!   `avx512` or `auto`, and fails with [`RingError::BackendUnavailable`] if this CPU cannot
//!   run it.
//!
//! All data handled here is public or treated uniformly: no branch or memory index depends
//! on a residue.

mod aes_ctr;
mod avx2;
mod avx512;
mod lanes;
mod shoup_ntt;

pub use aes_ctr::{VaesCtr128, VAES_CTR_BYTES};
pub use avx2::Avx2;
pub use avx512::Avx512;

use crate::client::ClientKernels;
use crate::error::RingError;
use crate::modulus::{Modulus, Mont};
use crate::ntt::{NttBackend, NttView};
use crate::portable::Portable;
use crate::rns::RnsKernels;

/// The best backend this x86-64 CPU runs, chosen once; see the [module documentation](self).
///
/// ```
/// use zeppelin_ring::x86::Auto;
/// use zeppelin_ring::{NttBackend, NttTable, Portable};
/// let ntt = Auto::detect();
/// let table = NttTable::new_vec(1_061_093_377, 4096).unwrap();
/// let mut a: Vec<u32> = (0..4096).collect();
/// let mut b = a.clone();
/// ntt.forward(&table.view(), &mut a).unwrap();
/// Portable.forward(&table.view(), &mut b).unwrap();
/// assert_eq!(a, b);
/// println!("NTT backend: {}", ntt.name()); // "avx512", "avx2" or "portable"
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Auto {
    /// No SIMD (a CPU without AVX2, or forced).
    Portable(Portable),
    /// AVX2.
    Avx2(Avx2),
    /// AVX-512F.
    Avx512(Avx512),
}

/// Whether `--cfg zeppelin_backend=...` lets [`Auto::detect`] pick AVX2 / AVX-512.
const ALLOW_AVX2: bool = !cfg!(zeppelin_backend = "portable");
const ALLOW_AVX512: bool = !cfg!(any(
    zeppelin_backend = "portable",
    zeppelin_backend = "avx2"
));

impl Auto {
    /// The widest instruction set this CPU runs, within the compile-time cap of
    /// `--cfg zeppelin_backend` (see the [module documentation](self)). Cheap (the CPU
    /// features are detected once per process), but meant to be called once and kept.
    pub fn detect() -> Self {
        if ALLOW_AVX512 {
            if let Some(b) = Avx512::detect() {
                return Self::Avx512(b);
            }
        }
        if ALLOW_AVX2 {
            if let Some(b) = Avx2::detect() {
                return Self::Avx2(b);
            }
        }
        Self::Portable(Portable)
    }

    /// Exactly the backend named: `"portable"`, `"avx2"`, `"avx512"`, or `"auto"` (and the
    /// empty name) for [`Auto::detect`]. Errors: [`RingError::BackendUnavailable`] for a
    /// backend this CPU (or this target, for `"mve"`) cannot run,
    /// [`RingError::BackendUnknown`] for any other name.
    pub fn from_name(name: &str) -> Result<Self, RingError> {
        match name {
            "" | "auto" => Ok(Self::detect()),
            "portable" => Ok(Self::Portable(Portable)),
            "avx2" => Avx2::detect()
                .map(Self::Avx2)
                .ok_or(RingError::BackendUnavailable { backend: "avx2" }),
            "avx512" => Avx512::detect()
                .map(Self::Avx512)
                .ok_or(RingError::BackendUnavailable { backend: "avx512" }),
            "mve" => Err(RingError::BackendUnavailable { backend: "mve" }),
            _ => Err(RingError::BackendUnknown),
        }
    }

    /// [`Auto::from_name`] of the environment variable [`crate::BACKEND_ENV`]
    /// (`ZEPPELIN_BACKEND`), or [`Auto::detect`] when it is not set.
    #[cfg(feature = "std")]
    pub fn from_env() -> Result<Self, RingError> {
        match std::env::var(crate::BACKEND_ENV) {
            Ok(name) => Self::from_name(&name),
            Err(std::env::VarError::NotPresent) => Ok(Self::detect()),
            Err(std::env::VarError::NotUnicode(_)) => Err(RingError::BackendUnknown),
        }
    }
}

/// `Auto`'s choice, bound to `$b`, in `$body`.
macro_rules! dispatch {
    ($self:ident, $b:ident => $body:expr) => {
        match *$self {
            Auto::Portable($b) => $body,
            Auto::Avx2($b) => $body,
            Auto::Avx512($b) => $body,
        }
    };
}

impl NttBackend for Auto {
    fn name(&self) -> &'static str {
        dispatch!(self, b => b.name())
    }

    fn forward(&self, table: &NttView<'_>, a: &mut [u32]) -> Result<(), RingError> {
        dispatch!(self, b => b.forward(table, a))
    }

    fn inverse(&self, table: &NttView<'_>, a: &mut [u32]) -> Result<(), RingError> {
        dispatch!(self, b => b.inverse(table, a))
    }

    fn pointwise_mul(
        &self,
        modulus: &Modulus,
        a: &[u32],
        b: &[u32],
        out: &mut [u32],
    ) -> Result<(), RingError> {
        dispatch!(self, k => k.pointwise_mul(modulus, a, b, out))
    }

    fn pointwise_mul_add(
        &self,
        modulus: &Modulus,
        a: &[u32],
        b: &[u32],
        acc: &mut [u32],
    ) -> Result<(), RingError> {
        dispatch!(self, k => k.pointwise_mul_add(modulus, a, b, acc))
    }

    fn pointwise_mul_assign(
        &self,
        modulus: &Modulus,
        a: &mut [u32],
        b: &[u32],
    ) -> Result<(), RingError> {
        dispatch!(self, k => k.pointwise_mul_assign(modulus, a, b))
    }
}

impl RnsKernels for Auto {
    fn base_convert(
        &self,
        modulus: &Modulus,
        rows: &[&[u32]],
        weights: &[Mont],
        out: &mut [u32],
    ) -> Result<(), RingError> {
        dispatch!(self, b => b.base_convert(modulus, rows, weights, out))
    }

    fn lift_centered(
        &self,
        src: &[u32],
        from: &Modulus,
        to: &Modulus,
        dst: &mut [u32],
    ) -> Result<(), RingError> {
        dispatch!(self, b => b.lift_centered(src, from, to, dst))
    }

    fn key_switch_block(
        &self,
        modulus: &Modulus,
        count: usize,
        stride: usize,
        digits: &[u32],
        key_a: &[u32],
        key_b: &[u32],
        add_a: &[u32],
        add_b: &[u32],
        out_a: &mut [u32],
        out_b: &mut [u32],
    ) -> Result<(), RingError> {
        dispatch!(self, b => b.key_switch_block(
            modulus, count, stride, digits, key_a, key_b, add_a, add_b, out_a, out_b,
        ))
    }

    fn tensor_key_switch_block(
        &self,
        modulus: &Modulus,
        count: usize,
        stride: usize,
        digits: &[u32],
        key_a: &[u32],
        key_b: &[u32],
        x: [&[u32]; 2],
        y: [&[u32]; 2],
        out_a: &mut [u32],
        out_b: &mut [u32],
    ) -> Result<(), RingError> {
        dispatch!(self, b => b.tensor_key_switch_block(
            modulus, count, stride, digits, key_a, key_b, x, y, out_a, out_b,
        ))
    }
}

impl ClientKernels for Auto {
    fn behz_accumulate(
        &self,
        q: &Modulus,
        t: &Modulus,
        scale_mont: Mont,
        hat_t_mont: Mont,
        hat_gamma: u32,
        x: &[u32],
        c0: &[u32],
        acc_t: &mut [u32],
        acc_gamma: &mut [u32],
    ) -> Result<(), RingError> {
        dispatch!(self, b => b.behz_accumulate(
            q, t, scale_mont, hat_t_mont, hat_gamma, x, c0, acc_t, acc_gamma,
        ))
    }

    fn behz_finish(
        &self,
        t: &Modulus,
        neg_q_inv_t_mont: Mont,
        neg_q_inv_gamma: u32,
        gamma_mod_t: u32,
        gamma_inv_t_mont: Mont,
        acc_t: &mut [u32],
        acc_gamma: &[u32],
    ) -> Result<(), RingError> {
        dispatch!(self, b => b.behz_finish(
            t, neg_q_inv_t_mont, neg_q_inv_gamma, gamma_mod_t, gamma_inv_t_mont, acc_t, acc_gamma,
        ))
    }

    fn cdt_scan<const L: usize>(
        &self,
        words: &[u32; L],
        cdt: &[u32],
        base: i32,
        out: &mut [i8; L],
    ) {
        dispatch!(self, b => b.cdt_scan(words, cdt, base, out))
    }

    fn cdt_scan_symmetric<const L: usize>(
        &self,
        words: &[u32; L],
        cdt: &[u32],
        base: i32,
        out: &mut [i8; L],
    ) {
        dispatch!(self, b => b.cdt_scan_symmetric(words, cdt, base, out))
    }

    fn uniform_accept(&self, words: &[u8], mask: u32, q: u32, out: &mut [u32]) -> (usize, usize) {
        dispatch!(self, b => b.uniform_accept(words, mask, q, out))
    }

    fn encrypt_finish(
        &self,
        q: &Modulus,
        delta_mont: Mont,
        plain: &[u32],
        carry: &[u32],
        error: &[i8],
        row: &mut [u32],
        negate_error: bool,
    ) -> Result<(), RingError> {
        dispatch!(self, b => b.encrypt_finish(q, delta_mont, plain, carry, error, row, negate_error))
    }
}
