//! Kernels for RNS servers (OpenFHE-style BV key switching): the [`RnsKernels`] trait and
//! the shape checks every implementation shares.
//!
//! [`RnsKernels`] has four operations:
//!
//! - [`RnsKernels::lift_centered`]: a residue mod `p` to its centred representative mod `q`
//!   (the CRT decomposition step);
//! - [`RnsKernels::key_switch_block`]: a multiply-accumulate over many digits with 64-bit
//!   lazy accumulation and one reduction per output;
//! - [`RnsKernels::tensor_key_switch_block`]: the same with the ciphertext tensor joined to
//!   the sums;
//! - [`RnsKernels::base_convert`]: a sum of rows with one constant weight per row, the
//!   matrix-vector product of RNS base conversions (BEHZ, HPS).
//!
//! The trait has no default methods. [`crate::Portable`] is the reference implementation
//! (plain Rust, every target); the SIMD backends compute exactly its results, lane for lane,
//! and hand what their vectors do not cover (short tails) back to it. The conformance tests
//! compare every backend the CPU has against `Portable` and against big-integer sums.
//!
//! All data handled here is public or treated uniformly: no branch or memory index depends
//! on a residue.

use crate::error::RingError;
use crate::modulus::{Modulus, Mont};
use crate::ntt::NttBackend;

/// Products `< 2^60` accumulated before a reduction: 16 of them stay below 2^64.
pub(crate) const MAX_LAZY_TERMS: usize = 16;

/// The RNS server kernels; see the [module documentation](self).
///
/// ```
/// use zeppelin_ring::{Modulus, Portable, RnsKernels};
/// let (p, q) = (Modulus::new(12_289).unwrap(), Modulus::new(65_537).unwrap());
/// let mut lifted = [0u32; 3];
/// Portable.lift_centered(&[1, 6144, 12_288], &p, &q, &mut lifted).unwrap();
/// assert_eq!(lifted, [1, 6144, 65_536]); // 12_288 ≡ −1 mod p, so −1 mod q
/// ```
pub trait RnsKernels: NttBackend {
    /// `dst[j] = centred(src[j]) mod to`, where `centred(v) = v` for `v <= (p−1)/2` and
    /// `v − p` otherwise, `p = from` (OpenFHE's CRT decomposition step). Requires
    /// `src[j] < p`; outputs are in `[0, to)`.
    fn lift_centered(
        &self,
        src: &[u32],
        from: &Modulus,
        to: &Modulus,
        dst: &mut [u32],
    ) -> Result<(), RingError>;

    /// Key-switch multiply-accumulate over one coefficient block, for `count` digits:
    ///
    /// ```text
    /// out_a[j] = (add_a[j] + Σ_i digits[i·stride + j] · key_a[i·stride + j] · 2^-32) mod q
    /// out_b[j] = (add_b[j] + Σ_i digits[i·stride + j] · key_b[i·stride + j] · 2^-32) mod q
    /// ```
    ///
    /// for `j < out_a.len()`. Keys are expected in Montgomery form (`k·2^32 mod q`, see
    /// [`Modulus::to_mont`]), so the sums are the plain products `Σ d·k`. All inputs `< q`.
    /// Products are accumulated unreduced in 64 bits (at most 16 at a time, each `< 2^60`)
    /// and reduced once per output.
    #[expect(
        clippy::too_many_arguments,
        reason = "the kernel's operands: a parameter struct would be rebuilt per block"
    )]
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
    ) -> Result<(), RingError>;

    /// The tensor and the key switch of one coefficient block in one pass:
    ///
    /// ```text
    /// out_b[j] = x0·y0         + Σ_i digits[i·stride + j] · key_b[i·stride + j] · 2^-32  mod q
    /// out_a[j] = x0·y1 + x1·y0 + Σ_i digits[i·stride + j] · key_a[i·stride + j] · 2^-32  mod q
    /// ```
    ///
    /// (`x`, `y` at index `j`), i.e. `relin_c0` and `relin_c1` of BV relinearization. Keys in
    /// Montgomery form as in [`RnsKernels::key_switch_block`]; all inputs `< q`. The tensor
    /// products join the same unreduced 64-bit sums, so each output is reduced once.
    #[expect(
        clippy::too_many_arguments,
        reason = "the kernel's operands: a parameter struct would be rebuilt per block"
    )]
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
    ) -> Result<(), RingError>;

    /// A base conversion's sum, one constant weight per row:
    ///
    /// ```text
    /// out[j] = Σ_i rows[i][j] · weights[i] · 2^-32  mod p      (j < out.len())
    /// ```
    ///
    /// With the weights in Montgomery form (`w·2^32 mod p`, from [`Modulus::mont`]) this is
    /// the plain `Σ_i rows[i][j]·w_i mod p`. Row entries need not be below `p`: defined (and
    /// equal across backends) for entries `< 2^30`, whose products (`< 2^60`) are
    /// accumulated unreduced in 64 bits, 16 at a time, each group reduced once; outputs are
    /// in `[0, p)`. No rows give zeros.
    ///
    /// Errors: `rows` and `weights` of different lengths, or a row shorter than `out`.
    fn base_convert(
        &self,
        modulus: &Modulus,
        rows: &[&[u32]],
        weights: &[Mont],
        out: &mut [u32],
    ) -> Result<(), RingError>;
}

/// Checks the shapes of [`RnsKernels::base_convert`]: one weight per row, every row at least
/// as long as `out`.
pub(crate) fn check_base_convert(
    rows: &[&[u32]],
    weights: &[Mont],
    out: &[u32],
) -> Result<(), RingError> {
    RingError::check_len(rows.len(), weights.len())?;
    for row in rows {
        if row.len() < out.len() {
            return Err(RingError::LengthMismatch {
                expected: out.len(),
                found: row.len(),
            });
        }
    }
    Ok(())
}

/// Checks the shapes of a key switch: `extra` and `out_b` as long as `out_a`, a `stride` of
/// at least one block, and `(count−1)·stride + len` entries in each of `streams`.
pub(crate) fn check_key_switch(
    count: usize,
    stride: usize,
    streams: [&[u32]; 3],
    extra: &[&[u32]],
    out_a: &[u32],
    out_b: &[u32],
) -> Result<(), RingError> {
    let len = out_a.len();
    RingError::check_len(len, out_b.len())?;
    for part in extra {
        RingError::check_len(len, part.len())?;
    }
    if count > 0 {
        if stride < len {
            return Err(RingError::LengthMismatch {
                expected: len,
                found: stride,
            });
        }
        let needed = (count - 1) * stride + len;
        for found in streams.map(<[u32]>::len) {
            if found < needed {
                return Err(RingError::LengthMismatch {
                    expected: needed,
                    found,
                });
            }
        }
    }
    Ok(())
}
