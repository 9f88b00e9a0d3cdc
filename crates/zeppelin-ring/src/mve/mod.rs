//! Helium (Arm MVE) backend for Cortex-M55-class cores: four-lane Montgomery butterflies in
//! `core::arch::asm!`, a blocked schedule, and a range auditor that certifies every lazy
//! intermediate before a transform runs.
//!
//! Compiled only for `target_arch = "arm"` with `--cfg zeppelin_mve` (set together with
//! `-C target-feature=+mve`; stable Rust exposes no `target_feature = "mve"` cfg). The
//! firmware in `firmware/m55` sets both.
//!
//! # Results
//!
//! Bit-identical to [`Portable`]: both return canonical values in `[0, q)` of the same
//! evaluation map, and the intermediate values differ only by multiples of `q`. Tested on
//! target (`firmware/m55`) against `Portable` over thousands of random inputs and against
//! host-computed evaluations.
//!
//! # Butterflies
//!
//! Montgomery products use the *subtractive* form: with `q' = q^-1 mod 2^32` and a twiddle
//! `w < q` (Montgomery form), `m = lo(y·w)·q' mod 2^32` makes `y·w − m·q` divisible by
//! `2^32`, so `hi(y·w) − hi(m·q)` is exact (no carry to recover) and lies in
//! `(−q, y·w/2^32]`. Per four lanes: `vmulh.u32`, `vmul.i32` (by `w·q'`, one scalar),
//! `vmulh.u32`, `vsub.i32`. The reduction `x − 2q if x ≥ 2q` is `vmin.u32(x, x − 2q)`:
//! when `x < 2q` the subtraction wraps to a larger value. No branch, no predication.
//!
//! Control flow: the butterfly bodies are straight-line; the layer kernels repeat them in
//! counted loops (`subs`/`bne` on a public count: groups, rows), and the fused last-two-layer
//! row kernels (`ct_quad_row64`, `gs_quad_row64`) have no branch at all. Every conditional
//! branch in a kernel function is such a loop back-edge, which `security/audit`
//! checks on the linked binary.
//!
//! - forward (Cooley–Tukey): `u = reduce(x, 2q) + q`, `d = hi(y·w) − hi(m·q)`,
//!   `x' = u + d`, `y' = u − d`; values stay below `4q`.
//! - inverse (Gentleman–Sande): `x' = reduce(x + y, 2q)`, `y' = mont(x + 2q − y, w)`;
//!   values stay below `2q`.
//!
//! # Schedule
//!
//! `n = R × 64` is processed as the paper's 64-column blocking without its transposes:
//! the first `log2(n) − 6` layers run on **column strips** of 8 columns (each butterfly
//! reads two contiguous 32-byte pieces of two rows; all those layers finish on one strip
//! before the next), then the last 6 layers run as one **row kernel call per contiguous
//! 64-coefficient (256-byte) row**: four vector layers with a broadcast twiddle, then the
//! last two layers in registers after a `vld4` de-interleave (per-lane twiddles from
//! `vldrw`/`vld2`), with the final canonicalisation fused before the `vst4`. The inverse
//! runs the mirror image. The paper's four-step pays three transposes (10% of its forward
//! transform); strided access here is confined to the strip pass, whose every vector access
//! is still a contiguous 16-byte piece of a row.
//!
//! # Range auditor
//!
//! [`Schedule::forward`] / [`Schedule::inverse`] build the step list the executor runs and
//! walk it with exact worst-case bounds for the given `q` (as integers, not in units of
//! `q`), checking every intermediate a kernel forms against [`RANGE_LIMIT`] (2^31: one bit
//! of margin below the 32-bit lanes, so values are also non-negative as `i32`). A schedule
//! that cannot be certified is refused ([`RangeError`]) and the backend falls back to
//! [`Portable`] for that call; it never runs uncertified. For the presets' primes (< 2^28)
//! the largest intermediate is below `4q < 2^30`. The `const` assertions in `schedule.rs`
//! certify the schedule at compile time for every `q < 2^29` (the worst case is the
//! largest `q`).
//!
//! # Two NTT paths
//!
//! A table that carries packed twiddles ([`crate::NttTable::with_packed`]; the device
//! presets at `n = 4096` do) runs the generated radix-4 kernels of `packed.rs`: about 52,600
//! instructions forward and 53,750 inverse, against about 126,000 / 139,200 for the general
//! schedule described here, which serves every other table and degree (Seal8192's tables
//! carry no companions: they would not fit the device's DTCM).
//!
//! # Layout
//!
//! - `packed.rs`: the packed radix-4 kernels' table ([`PackedTwiddles`]), dispatch and range
//!   auditor ([`certify_packed`]); `packed_kernel.rs` is written by `gen_ntt.py`;
//! - `schedule.rs`: the range auditor ([`Schedule`], [`certify_pointwise`]);
//! - `ntt.rs`: the NTT butterflies in `asm!`, their audited passes, the executor;
//! - `pointwise.rs`: the pointwise products;
//! - `client.rs`: the BFV client's kernels (BEHZ decryption tail, CDT scan);
//! - `chacha_kernel.rs`: four ChaCha20 blocks per call (the secret keystream), written by
//!   `gen_chacha.py` (straight-line, no branch, spills to the output buffer);
//! - `arith.rs`: the scalar constants they share.
//!
//! [`Mve`] implements [`NttBackend`] and [`ClientKernels`] with these kernels, and
//! [`RnsKernels`] by delegating to [`Portable`] (a server-side kernel set).

mod arith;
mod chacha_kernel;
mod client;
mod ntt;
mod packed;
mod packed_kernel;
mod pointwise;
mod schedule;

pub use packed::{
    certify as certify_packed, PackedTwiddles, MAX_PACKED_MODULUS, PACKED_DEGREE,
    PACKED_INSTRUCTIONS,
};
pub use schedule::{
    certify_pointwise, RangeError, Schedule, Step, MAX_CERTIFIED_MODULUS, RANGE_LIMIT, ROW,
};

use crate::client::ClientKernels;
use crate::error::RingError;
use crate::modulus::{Modulus, Mont};
use crate::ntt::{NttBackend, NttView};
use crate::portable::Portable;
use crate::rns::RnsKernels;

/// The Helium backend: a unit type, available exactly in the builds for an MVE core (the
/// `cfg` that compiles this module is the proof the instructions exist). Falls back to
/// [`Portable`] for a call whose schedule the range auditor cannot certify (a modulus above
/// [`MAX_CERTIFIED_MODULUS`], or `n < 16`) or whose length is not a multiple of 4.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Mve;

// The methods are `#[inline(always)]` forwarders to `#[inline(never)]` free functions that
// take no receiver: the client's calls pass exactly the kernels' arguments (a zero-sized
// `&self` would still take a register, and push one more argument to the stack in the
// client's frames).
impl NttBackend for Mve {
    #[inline(always)]
    fn name(&self) -> &'static str {
        "mve"
    }

    #[inline(always)]
    fn forward(&self, table: &NttView<'_>, a: &mut [u32]) -> Result<(), RingError> {
        ntt::forward(table, a)
    }

    #[inline(always)]
    fn inverse(&self, table: &NttView<'_>, a: &mut [u32]) -> Result<(), RingError> {
        ntt::inverse(table, a)
    }

    #[inline(always)]
    fn pointwise_mul(
        &self,
        modulus: &Modulus,
        a: &[u32],
        b: &[u32],
        out: &mut [u32],
    ) -> Result<(), RingError> {
        pointwise::mul(modulus, a, b, out)
    }

    #[inline(always)]
    fn pointwise_mul_add(
        &self,
        modulus: &Modulus,
        a: &[u32],
        b: &[u32],
        acc: &mut [u32],
    ) -> Result<(), RingError> {
        pointwise::mul_add(modulus, a, b, acc)
    }

    #[inline(always)]
    fn pointwise_mul_assign(
        &self,
        modulus: &Modulus,
        a: &mut [u32],
        b: &[u32],
    ) -> Result<(), RingError> {
        pointwise::mul_assign(modulus, a, b)
    }
}

/// Helium has no RNS kernels of its own (they serve RNS servers, not the device): every
/// operation is [`Portable`]'s, so that [`crate::DefaultBackend`] offers them on every target.
impl RnsKernels for Mve {
    fn base_convert(
        &self,
        modulus: &Modulus,
        rows: &[&[u32]],
        weights: &[Mont],
        out: &mut [u32],
    ) -> Result<(), RingError> {
        // No Helium kernel: the portable loop (see the impl).
        Portable.base_convert(modulus, rows, weights, out)
    }

    fn lift_centered(
        &self,
        src: &[u32],
        from: &Modulus,
        to: &Modulus,
        dst: &mut [u32],
    ) -> Result<(), RingError> {
        // No Helium kernel: the portable loop (see the impl).
        Portable.lift_centered(src, from, to, dst)
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
        // No Helium kernel: the portable loop (see the impl).
        Portable.key_switch_block(
            modulus, count, stride, digits, key_a, key_b, add_a, add_b, out_a, out_b,
        )
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
        // No Helium kernel: the portable loop (see the impl).
        Portable.tensor_key_switch_block(
            modulus, count, stride, digits, key_a, key_b, x, y, out_a, out_b,
        )
    }
}

impl ClientKernels for Mve {
    #[inline(always)]
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
        client::behz_accumulate(
            q,
            t,
            scale_mont.get(),
            hat_t_mont.get(),
            hat_gamma,
            x,
            c0,
            acc_t,
            acc_gamma,
        )
    }

    #[inline(always)]
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
        client::behz_finish(
            t,
            neg_q_inv_t_mont.get(),
            neg_q_inv_gamma,
            gamma_mod_t,
            gamma_inv_t_mont.get(),
            acc_t,
            acc_gamma,
        )
    }

    fn cdt_scan<const L: usize>(
        &self,
        words: &[u32; L],
        cdt: &[u32],
        base: i32,
        out: &mut [i8; L],
    ) {
        client::cdt_scan(words, cdt, base, out)
    }

    fn cdt_scan_symmetric<const L: usize>(
        &self,
        words: &[u32; L],
        cdt: &[u32],
        base: i32,
        out: &mut [i8; L],
    ) {
        // The Helium scan of the whole table (the symmetry is not used on the M55).
        self.cdt_scan(words, cdt, base, out)
    }

    fn uniform_accept(&self, words: &[u8], mask: u32, q: u32, out: &mut [u32]) -> (usize, usize) {
        // No Helium kernel: the scalar loop (public stream only).
        crate::client::uniform_accept(words, mask, q, out)
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
        // No Helium kernel: the scalar loop (once per prime per encryption).
        crate::client::encrypt_finish(q, delta_mont, plain, carry, error, row, negate_error)
    }

    #[inline(always)]
    fn chacha20_blocks4(&self, state: &[u32; 16], out: &mut crate::chacha::Blocks4) {
        // SAFETY: `state` is 16 words, `out` 256 bytes, word-aligned (`Blocks4`), as the
        // kernel needs; on this little-endian core its words are the stream's bytes.
        unsafe { chacha_kernel::chacha20_blocks4_pass(state.as_ptr(), out.0.as_mut_ptr().cast()) }
    }
}
