//! The Helium NTT: the butterfly kernels in `asm!` (two vector pairs per twiddle, the
//! `half = 4` layer, the fused last two layers on `vld4`-de-interleaved registers, the
//! `n^-1` scaling), the `#[inline(never)]` passes the binary audit names, and the executor
//! of a certified [`Schedule`] (see the [backend documentation](super) for the blocking).

use core::arch::asm;

use super::arith::Consts;
use super::schedule::{Schedule, Step, ROW};
use crate::error::RingError;
use crate::ntt::{NttBackend, NttView};
use crate::portable::Portable;

/// Columns per strip in the strip pass: two 4-lane vectors per row.
const STRIP: usize = 8;

/// `count >= 1` times: forward butterflies on two 4-lane vector pairs sharing one twiddle,
/// `(x[0..4], y[0..4])` and `(x[4..8], y[4..8])`, then `x` and `y` advance by `stride` bytes.
/// The loop counts the public `count` down (`subs`/`bne`, the only branch); the body has
/// none.
///
/// # Safety
/// For each of the `count` steps, `x` and `y` must be valid for reading and writing 8 `u32`,
/// not overlapping; `count >= 1`.
#[inline(always)]
unsafe fn ct2_run(x: *mut u32, y: *mut u32, count: usize, stride: usize, w: u32, c: &Consts) {
    let wq = c.quotient_factor(w);
    // SAFETY: the caller guarantees the ranges; only q0..q7 and flags change.
    unsafe {
        asm!(
            "vdup.32 q6, {w}",
            "vdup.32 q7, {q}",
            "2:",
            "vldrw.u32 q0, [{x}]",
            "vldrw.u32 q1, [{x}, #16]",
            "vldrw.u32 q2, [{y}]",
            "vldrw.u32 q3, [{y}, #16]",
            // d = hi(y·w) - hi(m·q), m = y·(w·q^-1)
            "vmulh.u32 q4, q2, q6",
            "vmulh.u32 q5, q3, q6",
            "vmul.i32 q2, q2, {wq}",
            "vmul.i32 q3, q3, {wq}",
            "vmulh.u32 q2, q2, q7",
            "vmulh.u32 q3, q3, q7",
            "vsub.i32 q4, q4, q2",
            "vsub.i32 q5, q5, q3",
            // u = min(x, x - 2q) + q
            "vsub.i32 q2, q0, {tq}",
            "vsub.i32 q3, q1, {tq}",
            "vmin.u32 q0, q0, q2",
            "vmin.u32 q1, q1, q3",
            "vadd.i32 q0, q0, {q}",
            "vadd.i32 q1, q1, {q}",
            // y' = u - d, x' = u + d
            "vsub.i32 q2, q0, q4",
            "vsub.i32 q3, q1, q5",
            "vadd.i32 q0, q0, q4",
            "vadd.i32 q1, q1, q5",
            "vstrw.32 q0, [{x}]",
            "vstrw.32 q1, [{x}, #16]",
            "vstrw.32 q2, [{y}]",
            "vstrw.32 q3, [{y}, #16]",
            "add {x}, {x}, {stride}",
            "add {y}, {y}, {stride}",
            "subs {count}, #1",
            "bne 2b",
            x = inout(reg) x => _,
            y = inout(reg) y => _,
            count = inout(reg) count => _,
            stride = in(reg) stride,
            w = in(reg) w,
            wq = in(reg) wq,
            q = in(reg) c.q,
            tq = in(reg) c.two_q,
            out("s0") _, out("s1") _, out("s2") _, out("s3") _,
            out("s4") _, out("s5") _, out("s6") _, out("s7") _,
            out("s8") _, out("s9") _, out("s10") _, out("s11") _,
            out("s12") _, out("s13") _, out("s14") _, out("s15") _,
            out("s16") _, out("s17") _, out("s18") _, out("s19") _,
            out("s20") _, out("s21") _, out("s22") _, out("s23") _,
            out("s24") _, out("s25") _, out("s26") _, out("s27") _,
            out("s28") _, out("s29") _, out("s30") _, out("s31") _,
            options(nostack),
        );
    }
}

/// The forward layer `half = 4` on `count` consecutive groups of 8 coefficients: butterflies
/// `(a[8g..8g+4], a[8g+4..8g+8])` with twiddle `tw[g]`. A counted loop (`count >= 1`) whose
/// body has no branch; the twiddle index is the loop position (public).
///
/// # Safety
/// `a` valid for reading and writing `8·count` `u32`, `tw` for reading `count`.
#[inline(always)]
unsafe fn ct1(a: *mut u32, tw: *const u32, count: usize, c: &Consts) {
    // SAFETY: the caller guarantees the ranges; only q0..q7 and flags change.
    unsafe {
        asm!(
            "vdup.32 q7, {q}",
            "2:",
            "ldr {w}, [{tw}], #4",
            "mul {wq}, {w}, {qi}",
            "vdup.32 q6, {w}",
            "vldrw.u32 q0, [{a}]",
            "vldrw.u32 q2, [{a}, #16]",
            "vmulh.u32 q4, q2, q6",
            "vmul.i32 q2, q2, {wq}",
            "vmulh.u32 q2, q2, q7",
            "vsub.i32 q4, q4, q2",
            "vsub.i32 q2, q0, {tq}",
            "vmin.u32 q0, q0, q2",
            "vadd.i32 q0, q0, {q}",
            "vsub.i32 q2, q0, q4",
            "vadd.i32 q0, q0, q4",
            "vstrw.32 q2, [{a}, #16]",
            "vstrw.32 q0, [{a}], #32",
            "subs {count}, #1",
            "bne 2b",
            a = inout(reg) a => _,
            tw = inout(reg) tw => _,
            count = inout(reg) count => _,
            w = out(reg) _,
            wq = out(reg) _,
            qi = in(reg) c.q_inv,
            q = in(reg) c.q,
            tq = in(reg) c.two_q,
            out("s0") _, out("s1") _, out("s2") _, out("s3") _,
            out("s8") _, out("s9") _, out("s10") _, out("s11") _,
            out("s16") _, out("s17") _, out("s18") _, out("s19") _,
            out("s24") _, out("s25") _, out("s26") _, out("s27") _,
            out("s28") _, out("s29") _, out("s30") _, out("s31") _,
            options(nostack),
        );
    }
}

/// The last two forward layers (`half = 2`, then `half = 1`) on 16 coefficients,
/// de-interleaved by `vld4` so that every butterfly is lane-wise, then canonicalised.
/// `tw2`: the 4 twiddles of layer `half = 2`; `tw1`: the 8 of layer `half = 1`.
///
/// # Safety
/// `a` valid for reading and writing 16 `u32`; `tw2` for reading 4, `tw1` for reading 8.
#[inline(always)]
unsafe fn ct_quad(a: *mut u32, tw2: *const u32, tw1: *const u32, c: &Consts) {
    // SAFETY: the caller guarantees the ranges; only q0..q7 and flags change.
    unsafe {
        asm!(
            "vld40.32 {{q0, q1, q2, q3}}, [{a}]",
            "vld41.32 {{q0, q1, q2, q3}}, [{a}]",
            "vld42.32 {{q0, q1, q2, q3}}, [{a}]",
            "vld43.32 {{q0, q1, q2, q3}}, [{a}]",
            // lane k of q0..q3 holds a[4k..4k+4]; layer half = 2 pairs (q0,q2), (q1,q3).
            "vldrw.u32 q4, [{tw2}]",
            "vdup.32 q7, {q}",
            "vmul.i32 q6, q4, {qi}",
            // (q0, q2), twiddle lanes q4, quotient factors q6, temp q5
            "vmulh.u32 q5, q2, q4",
            "vmul.i32 q2, q2, q6",
            "vmulh.u32 q2, q2, q7",
            "vsub.i32 q5, q5, q2",
            "vsub.i32 q2, q0, {tq}",
            "vmin.u32 q0, q0, q2",
            "vadd.i32 q0, q0, {q}",
            "vsub.i32 q2, q0, q5",
            "vadd.i32 q0, q0, q5",
            // (q1, q3)
            "vmulh.u32 q5, q3, q4",
            "vmul.i32 q3, q3, q6",
            "vmulh.u32 q3, q3, q7",
            "vsub.i32 q5, q5, q3",
            "vsub.i32 q3, q1, {tq}",
            "vmin.u32 q1, q1, q3",
            "vadd.i32 q1, q1, {q}",
            "vsub.i32 q3, q1, q5",
            "vadd.i32 q1, q1, q5",
            // layer half = 1 pairs (q0,q1) with even twiddles, (q2,q3) with odd ones.
            "vld20.32 {{q4, q5}}, [{tw1}]",
            "vld21.32 {{q4, q5}}, [{tw1}]",
            // (q0, q1), twiddle lanes q4, temp q6
            "vmulh.u32 q6, q1, q4",
            "vmul.i32 q1, q1, q4",
            "vmul.i32 q1, q1, {qi}",
            "vmulh.u32 q1, q1, q7",
            "vsub.i32 q6, q6, q1",
            "vsub.i32 q1, q0, {tq}",
            "vmin.u32 q0, q0, q1",
            "vadd.i32 q0, q0, {q}",
            "vsub.i32 q1, q0, q6",
            "vadd.i32 q0, q0, q6",
            // (q2, q3), twiddle lanes q5, temp q6
            "vmulh.u32 q6, q3, q5",
            "vmul.i32 q3, q3, q5",
            "vmul.i32 q3, q3, {qi}",
            "vmulh.u32 q3, q3, q7",
            "vsub.i32 q6, q6, q3",
            "vsub.i32 q3, q2, {tq}",
            "vmin.u32 q2, q2, q3",
            "vadd.i32 q2, q2, {q}",
            "vsub.i32 q3, q2, q6",
            "vadd.i32 q2, q2, q6",
            // canonicalise: x < 4q -> reduce by 2q -> reduce by q
            "vsub.i32 q4, q0, {tq}",
            "vsub.i32 q5, q1, {tq}",
            "vmin.u32 q0, q0, q4",
            "vmin.u32 q1, q1, q5",
            "vsub.i32 q4, q2, {tq}",
            "vsub.i32 q5, q3, {tq}",
            "vmin.u32 q2, q2, q4",
            "vmin.u32 q3, q3, q5",
            "vsub.i32 q4, q0, {q}",
            "vsub.i32 q5, q1, {q}",
            "vmin.u32 q0, q0, q4",
            "vmin.u32 q1, q1, q5",
            "vsub.i32 q4, q2, {q}",
            "vsub.i32 q5, q3, {q}",
            "vmin.u32 q2, q2, q4",
            "vmin.u32 q3, q3, q5",
            "vst40.32 {{q0, q1, q2, q3}}, [{a}]",
            "vst41.32 {{q0, q1, q2, q3}}, [{a}]",
            "vst42.32 {{q0, q1, q2, q3}}, [{a}]",
            "vst43.32 {{q0, q1, q2, q3}}, [{a}]",
            a = in(reg) a,
            tw2 = in(reg) tw2,
            tw1 = in(reg) tw1,
            qi = in(reg) c.q_inv,
            q = in(reg) c.q,
            tq = in(reg) c.two_q,
            out("s0") _, out("s1") _, out("s2") _, out("s3") _,
            out("s4") _, out("s5") _, out("s6") _, out("s7") _,
            out("s8") _, out("s9") _, out("s10") _, out("s11") _,
            out("s12") _, out("s13") _, out("s14") _, out("s15") _,
            out("s16") _, out("s17") _, out("s18") _, out("s19") _,
            out("s20") _, out("s21") _, out("s22") _, out("s23") _,
            out("s24") _, out("s25") _, out("s26") _, out("s27") _,
            out("s28") _, out("s29") _, out("s30") _, out("s31") _,
            options(nostack),
        );
    }
}

/// `count >= 1` times: inverse butterflies on two 4-lane vector pairs sharing one twiddle,
/// then `x` and `y` advance by `stride` bytes (counted loop, branch-free body).
///
/// # Safety
/// As [`ct2_run`].
#[inline(always)]
unsafe fn gs2_run(x: *mut u32, y: *mut u32, count: usize, stride: usize, w: u32, c: &Consts) {
    let wq = c.quotient_factor(w);
    // SAFETY: the caller guarantees the ranges; only q0..q7 and flags change.
    unsafe {
        asm!(
            "vdup.32 q6, {w}",
            "vdup.32 q7, {q}",
            "2:",
            "vldrw.u32 q0, [{x}]",
            "vldrw.u32 q1, [{x}, #16]",
            "vldrw.u32 q2, [{y}]",
            "vldrw.u32 q3, [{y}, #16]",
            // t = x + 2q - y; s = x + y
            "vsub.i32 q4, q0, q2",
            "vsub.i32 q5, q1, q3",
            "vadd.i32 q0, q0, q2",
            "vadd.i32 q1, q1, q3",
            "vadd.i32 q4, q4, {tq}",
            "vadd.i32 q5, q5, {tq}",
            // x' = min(s, s - 2q)
            "vsub.i32 q2, q0, {tq}",
            "vsub.i32 q3, q1, {tq}",
            "vmin.u32 q0, q0, q2",
            "vmin.u32 q1, q1, q3",
            // y' = hi(t·w) + q - hi(m·q)
            "vmulh.u32 q2, q4, q6",
            "vmulh.u32 q3, q5, q6",
            "vmul.i32 q4, q4, {wq}",
            "vmul.i32 q5, q5, {wq}",
            "vmulh.u32 q4, q4, q7",
            "vmulh.u32 q5, q5, q7",
            "vadd.i32 q2, q2, {q}",
            "vadd.i32 q3, q3, {q}",
            "vsub.i32 q2, q2, q4",
            "vsub.i32 q3, q3, q5",
            "vstrw.32 q0, [{x}]",
            "vstrw.32 q1, [{x}, #16]",
            "vstrw.32 q2, [{y}]",
            "vstrw.32 q3, [{y}, #16]",
            "add {x}, {x}, {stride}",
            "add {y}, {y}, {stride}",
            "subs {count}, #1",
            "bne 2b",
            x = inout(reg) x => _,
            y = inout(reg) y => _,
            count = inout(reg) count => _,
            stride = in(reg) stride,
            w = in(reg) w,
            wq = in(reg) wq,
            q = in(reg) c.q,
            tq = in(reg) c.two_q,
            out("s0") _, out("s1") _, out("s2") _, out("s3") _,
            out("s4") _, out("s5") _, out("s6") _, out("s7") _,
            out("s8") _, out("s9") _, out("s10") _, out("s11") _,
            out("s12") _, out("s13") _, out("s14") _, out("s15") _,
            out("s16") _, out("s17") _, out("s18") _, out("s19") _,
            out("s20") _, out("s21") _, out("s22") _, out("s23") _,
            out("s24") _, out("s25") _, out("s26") _, out("s27") _,
            out("s28") _, out("s29") _, out("s30") _, out("s31") _,
            options(nostack),
        );
    }
}

/// The inverse layer `half = 4` on `count` consecutive groups of 8 coefficients (mirror of
/// [`ct1`]).
///
/// # Safety
/// As [`ct1`].
#[inline(always)]
unsafe fn gs1(a: *mut u32, tw: *const u32, count: usize, c: &Consts) {
    // SAFETY: the caller guarantees the ranges; only q0..q7 and flags change.
    unsafe {
        asm!(
            "vdup.32 q7, {q}",
            "2:",
            "ldr {w}, [{tw}], #4",
            "mul {wq}, {w}, {qi}",
            "vdup.32 q6, {w}",
            "vldrw.u32 q0, [{a}]",
            "vldrw.u32 q2, [{a}, #16]",
            "vsub.i32 q4, q0, q2",
            "vadd.i32 q0, q0, q2",
            "vadd.i32 q4, q4, {tq}",
            "vsub.i32 q2, q0, {tq}",
            "vmin.u32 q0, q0, q2",
            "vmulh.u32 q2, q4, q6",
            "vmul.i32 q4, q4, {wq}",
            "vmulh.u32 q4, q4, q7",
            "vadd.i32 q2, q2, {q}",
            "vsub.i32 q2, q2, q4",
            "vstrw.32 q2, [{a}, #16]",
            "vstrw.32 q0, [{a}], #32",
            "subs {count}, #1",
            "bne 2b",
            a = inout(reg) a => _,
            tw = inout(reg) tw => _,
            count = inout(reg) count => _,
            w = out(reg) _,
            wq = out(reg) _,
            qi = in(reg) c.q_inv,
            q = in(reg) c.q,
            tq = in(reg) c.two_q,
            out("s0") _, out("s1") _, out("s2") _, out("s3") _,
            out("s8") _, out("s9") _, out("s10") _, out("s11") _,
            out("s16") _, out("s17") _, out("s18") _, out("s19") _,
            out("s24") _, out("s25") _, out("s26") _, out("s27") _,
            out("s28") _, out("s29") _, out("s30") _, out("s31") _,
            options(nostack),
        );
    }
}

/// The first two inverse layers (`half = 1`, then `half = 2`) on 16 coefficients,
/// de-interleaved by `vld4`. `tw1`: the 8 twiddles of layer `half = 1`; `tw2`: the 4 of
/// layer `half = 2`.
///
/// # Safety
/// As [`ct_quad`].
#[inline(always)]
unsafe fn gs_quad(a: *mut u32, tw2: *const u32, tw1: *const u32, c: &Consts) {
    // SAFETY: the caller guarantees the ranges; only q0..q7 and flags change.
    unsafe {
        asm!(
            "vld40.32 {{q0, q1, q2, q3}}, [{a}]",
            "vld41.32 {{q0, q1, q2, q3}}, [{a}]",
            "vld42.32 {{q0, q1, q2, q3}}, [{a}]",
            "vld43.32 {{q0, q1, q2, q3}}, [{a}]",
            "vdup.32 q7, {q}",
            "vld20.32 {{q4, q5}}, [{tw1}]",
            "vld21.32 {{q4, q5}}, [{tw1}]",
            // half = 1: (q0, q1) with q4, temp q6
            "vsub.i32 q6, q0, q1",
            "vadd.i32 q0, q0, q1",
            "vadd.i32 q6, q6, {tq}",
            "vsub.i32 q1, q0, {tq}",
            "vmin.u32 q0, q0, q1",
            "vmulh.u32 q1, q6, q4",
            "vmul.i32 q6, q6, q4",
            "vmul.i32 q6, q6, {qi}",
            "vmulh.u32 q6, q6, q7",
            "vadd.i32 q1, q1, {q}",
            "vsub.i32 q1, q1, q6",
            // (q2, q3) with q5, temp q6
            "vsub.i32 q6, q2, q3",
            "vadd.i32 q2, q2, q3",
            "vadd.i32 q6, q6, {tq}",
            "vsub.i32 q3, q2, {tq}",
            "vmin.u32 q2, q2, q3",
            "vmulh.u32 q3, q6, q5",
            "vmul.i32 q6, q6, q5",
            "vmul.i32 q6, q6, {qi}",
            "vmulh.u32 q6, q6, q7",
            "vadd.i32 q3, q3, {q}",
            "vsub.i32 q3, q3, q6",
            // half = 2: (q0, q2), (q1, q3) with the lanes of tw2 (q4), factors q5, temp q6
            "vldrw.u32 q4, [{tw2}]",
            "vmul.i32 q5, q4, {qi}",
            "vsub.i32 q6, q0, q2",
            "vadd.i32 q0, q0, q2",
            "vadd.i32 q6, q6, {tq}",
            "vsub.i32 q2, q0, {tq}",
            "vmin.u32 q0, q0, q2",
            "vmulh.u32 q2, q6, q4",
            "vmul.i32 q6, q6, q5",
            "vmulh.u32 q6, q6, q7",
            "vadd.i32 q2, q2, {q}",
            "vsub.i32 q2, q2, q6",
            "vsub.i32 q6, q1, q3",
            "vadd.i32 q1, q1, q3",
            "vadd.i32 q6, q6, {tq}",
            "vsub.i32 q3, q1, {tq}",
            "vmin.u32 q1, q1, q3",
            "vmulh.u32 q3, q6, q4",
            "vmul.i32 q6, q6, q5",
            "vmulh.u32 q6, q6, q7",
            "vadd.i32 q3, q3, {q}",
            "vsub.i32 q3, q3, q6",
            "vst40.32 {{q0, q1, q2, q3}}, [{a}]",
            "vst41.32 {{q0, q1, q2, q3}}, [{a}]",
            "vst42.32 {{q0, q1, q2, q3}}, [{a}]",
            "vst43.32 {{q0, q1, q2, q3}}, [{a}]",
            a = in(reg) a,
            tw2 = in(reg) tw2,
            tw1 = in(reg) tw1,
            qi = in(reg) c.q_inv,
            q = in(reg) c.q,
            tq = in(reg) c.two_q,
            out("s0") _, out("s1") _, out("s2") _, out("s3") _,
            out("s4") _, out("s5") _, out("s6") _, out("s7") _,
            out("s8") _, out("s9") _, out("s10") _, out("s11") _,
            out("s12") _, out("s13") _, out("s14") _, out("s15") _,
            out("s16") _, out("s17") _, out("s18") _, out("s19") _,
            out("s20") _, out("s21") _, out("s22") _, out("s23") _,
            out("s24") _, out("s25") _, out("s26") _, out("s27") _,
            out("s28") _, out("s29") _, out("s30") _, out("s31") _,
            options(nostack),
        );
    }
}

/// `a[i] = mont(a[i], w)` reduced to `[0, q)` on `8·count` coefficients (the inverse's
/// `n^-1`), a counted loop (`count >= 1`) with a branch-free body.
///
/// # Safety
/// `a` valid for reading and writing `8·count` `u32`; `count >= 1`.
#[inline(always)]
unsafe fn scale2(a: *mut u32, count: usize, w: u32, c: &Consts) {
    let wq = c.quotient_factor(w);
    // SAFETY: the caller guarantees the range; only q0..q7 and flags change.
    unsafe {
        asm!(
            "vdup.32 q6, {w}",
            "vdup.32 q7, {q}",
            "2:",
            "vldrw.u32 q0, [{a}]",
            "vldrw.u32 q1, [{a}, #16]",
            "vmulh.u32 q2, q0, q6",
            "vmulh.u32 q3, q1, q6",
            "vmul.i32 q0, q0, {wq}",
            "vmul.i32 q1, q1, {wq}",
            "vmulh.u32 q0, q0, q7",
            "vmulh.u32 q1, q1, q7",
            "vadd.i32 q2, q2, {q}",
            "vadd.i32 q3, q3, {q}",
            "vsub.i32 q2, q2, q0",
            "vsub.i32 q3, q3, q1",
            "vsub.i32 q0, q2, {q}",
            "vsub.i32 q1, q3, {q}",
            "vmin.u32 q2, q2, q0",
            "vmin.u32 q3, q3, q1",
            "vstrw.32 q3, [{a}, #16]",
            "vstrw.32 q2, [{a}], #32",
            "subs {count}, #1",
            "bne 2b",
            a = inout(reg) a => _,
            count = inout(reg) count => _,
            w = in(reg) w,
            wq = in(reg) wq,
            q = in(reg) c.q,
            out("s0") _, out("s1") _, out("s2") _, out("s3") _,
            out("s4") _, out("s5") _, out("s6") _, out("s7") _,
            out("s8") _, out("s9") _, out("s10") _, out("s11") _,
            out("s12") _, out("s13") _, out("s14") _, out("s15") _,
            out("s24") _, out("s25") _, out("s26") _, out("s27") _,
            out("s28") _, out("s29") _, out("s30") _, out("s31") _,
            options(nostack),
        );
    }
}

// ----- kernel passes ---------------------------------------------------------------------
//
// Each pass below is one `#[inline(never)]` function on raw pointers whose only control flow
// is loops over public counts (groups, rows, blocks) computed by the dispatcher with shifts;
// no bounds checks, no division, no data-dependent branch. Counts are at least 1 (loops are
// do-while, so there is no zero-trip test either). They are the functions the binary audit
// (security/audit) holds to its strict rules.

/// The loop both layer shapes share: `groups` groups of `2·half` coefficients, one twiddle
/// each (`tw` points at the group's first twiddle), butterflies (Cooley–Tukey forward, or
/// Gentleman–Sande inverse when `INVERSE`) on `pairs` 8-coefficient vector pairs `stride`
/// bytes apart.
///
/// # Safety
/// `a` is the first coefficient of the groups inside the array, `tw` valid for `groups`
/// reads, `groups >= 1`, `pairs >= 1`, every group inside the array.
#[inline(always)]
unsafe fn butterfly_groups<const INVERSE: bool>(
    a: *mut u32,
    tw: *const u32,
    groups: usize,
    half: usize,
    pairs: usize,
    stride: usize,
    c: &Consts,
) {
    let mut block = a;
    let mut twp = tw;
    let mut g = 0;
    loop {
        // SAFETY: per the contract, every address stays inside the array and the table.
        unsafe {
            let w = twp.read();
            if INVERSE {
                gs2_run(block, block.add(half), pairs, stride, w, c);
            } else {
                ct2_run(block, block.add(half), pairs, stride, w, c);
            }
            block = block.add(2 * half);
            twp = twp.add(1);
        }
        g += 1;
        if g >= groups {
            break;
        }
    }
}

/// A strip layer on one 8-column strip: `groups = n / (2·half)` groups (`tw` points at
/// `forward[groups]` or `inverse[groups]`), rows `half / row` apart.
///
/// # Safety
/// `a` is the strip's first coefficient inside an `n`-coefficient array, `tw` valid for
/// `groups` reads, `groups·2·half <= n`, `half` a multiple of `row`, `row` a power of two.
#[inline(never)]
unsafe fn strip_layer<const INVERSE: bool>(
    a: *mut u32,
    tw: *const u32,
    groups: usize,
    half: usize,
    row: usize,
    c: &Consts,
) {
    // half / row >= 1 rows, one row (4·row bytes) apart; a shift, not a division.
    let pairs = half >> row.trailing_zeros();
    // SAFETY: per the contract.
    unsafe { butterfly_groups::<INVERSE>(a, tw, groups, half, pairs, 4 * row, c) };
}

/// A layer with `8 <= half < row` inside one row: `groups` groups of `2·half`.
///
/// # Safety
/// `a` valid for `groups·2·half` coefficients, `tw` for `groups` reads, `half % 8 == 0`.
#[inline(never)]
unsafe fn row_layer<const INVERSE: bool>(
    a: *mut u32,
    tw: *const u32,
    groups: usize,
    half: usize,
    c: &Consts,
) {
    // half / 8 >= 1 steps of 8 contiguous coefficients (32 bytes).
    // SAFETY: per the contract.
    unsafe { butterfly_groups::<INVERSE>(a, tw, groups, half, half >> 3, 32, c) };
}

/// Forward layer `half = 4` inside one row: `groups` groups of 8.
///
/// # Safety
/// `a` valid for `8·groups` coefficients, `tw` for `groups` reads.
#[inline(never)]
unsafe fn ct_row_layer4(a: *mut u32, tw: *const u32, groups: usize, c: &Consts) {
    // SAFETY: per the contract (groups >= 1).
    unsafe { ct1(a, tw, groups, c) };
}

/// Inverse layer `half = 4` inside one row.
///
/// # Safety
/// As [`ct_row_layer4`].
#[inline(never)]
unsafe fn gs_row_layer4(a: *mut u32, tw: *const u32, groups: usize, c: &Consts) {
    // SAFETY: per the contract (groups >= 1).
    unsafe { gs1(a, tw, groups, c) };
}

/// The fused last two forward layers on one 64-coefficient row: four 16-coefficient blocks
/// with a constant trip count (unrolled by the compiler: no branch at all).
///
/// # Safety
/// `a` valid for 64 coefficients; `tw2` for 16 reads, `tw1` for 32.
#[inline(never)]
unsafe fn ct_quad_row64(a: *mut u32, tw2: *const u32, tw1: *const u32, c: &Consts) {
    for b in 0..4 {
        // SAFETY: per the contract.
        unsafe { ct_quad(a.add(16 * b), tw2.add(4 * b), tw1.add(8 * b), c) };
    }
}

/// The fused last two forward layers on one 16-coefficient block (rows shorter than 64).
///
/// # Safety
/// `a` valid for 16 coefficients; `tw2` for 4 reads, `tw1` for 8.
#[inline(never)]
unsafe fn ct_quad_block(a: *mut u32, tw2: *const u32, tw1: *const u32, c: &Consts) {
    // SAFETY: per the contract.
    unsafe { ct_quad(a, tw2, tw1, c) };
}

/// The fused first two inverse layers on one 64-coefficient row (no branch at all).
///
/// # Safety
/// As [`ct_quad_row64`].
#[inline(never)]
unsafe fn gs_quad_row64(a: *mut u32, tw2: *const u32, tw1: *const u32, c: &Consts) {
    for b in 0..4 {
        // SAFETY: per the contract.
        unsafe { gs_quad(a.add(16 * b), tw2.add(4 * b), tw1.add(8 * b), c) };
    }
}

/// The fused first two inverse layers on one 16-coefficient block.
///
/// # Safety
/// As [`ct_quad_block`].
#[inline(never)]
unsafe fn gs_quad_block(a: *mut u32, tw2: *const u32, tw1: *const u32, c: &Consts) {
    // SAFETY: per the contract.
    unsafe { gs_quad(a, tw2, tw1, c) };
}

/// Multiplies `8·chunks` coefficients by the Montgomery constant `w`, canonical output.
///
/// # Safety
/// `a` valid for `8·chunks` coefficients.
#[inline(never)]
unsafe fn scale_pass(a: *mut u32, chunks: usize, w: u32, c: &Consts) {
    // SAFETY: per the contract (chunks >= 1).
    unsafe { scale2(a, chunks, w, c) };
}

// ----- dispatch: public schedule and sizes, shifts only -----------------------------------

/// Runs a certified forward schedule. Requires `a.len() == n == 2^log_n >= 16` and a twiddle
/// table of length `n` (checked by `Mve::forward`).
fn run_forward(s: &Schedule, view: &NttView<'_>, a: &mut [u32]) {
    let c = Consts::new(&view.modulus);
    let log_n = view.log_n;
    let n = a.len();
    let log_row = if log_n < 6 { log_n } else { 6 };
    let row = 1usize << log_row;
    let tw = view.forward.as_ptr();
    let base = a.as_mut_ptr();
    // Strip pass: every strip layer on one 8-column strip before the next strip.
    let mut strip = 0;
    while strip < row {
        for step in s.steps() {
            if let Step::Strip { log_half } = *step {
                let half = 1usize << log_half;
                let groups = n >> (log_half + 1);
                // SAFETY: strip + 8 <= row <= half, groups·2·half = n; the table has n entries.
                unsafe {
                    strip_layer::<false>(base.add(strip), tw.add(groups), groups, half, row, &c)
                };
            }
        }
        strip += STRIP;
    }
    // Row pass: one sequence of kernel calls per contiguous row.
    let mut r0 = 0;
    while r0 < n {
        for step in s.steps() {
            // SAFETY (all arms): the row [r0, r0 + row) is inside `a`; twiddle indices are
            // below n (groups + first + per_row <= 2·groups <= n/4 ... n).
            unsafe {
                match *step {
                    Step::Row { log_half } => {
                        let half = 1usize << log_half;
                        let shift = log_half + 1;
                        let (groups, first, per_row) = (n >> shift, r0 >> shift, row >> shift);
                        let t = tw.add(groups + first);
                        if half >= 8 {
                            row_layer::<false>(base.add(r0), t, per_row, half, &c);
                        } else {
                            ct_row_layer4(base.add(r0), t, per_row, &c);
                        }
                    }
                    Step::Quad => {
                        let b0 = r0 >> 4;
                        let tw2 = tw.add((n >> 2) + 4 * b0);
                        let tw1 = tw.add((n >> 1) + 8 * b0);
                        if row == ROW {
                            ct_quad_row64(base.add(r0), tw2, tw1, &c);
                        } else {
                            let mut b = 0;
                            while b < row >> 4 {
                                ct_quad_block(
                                    base.add(r0 + 16 * b),
                                    tw2.add(4 * b),
                                    tw1.add(8 * b),
                                    &c,
                                );
                                b += 1;
                            }
                        }
                    }
                    Step::Strip { .. } | Step::Scale => {}
                }
            }
        }
        r0 += row;
    }
}

/// Runs a certified inverse schedule (the mirror image of [`run_forward`]).
fn run_inverse(s: &Schedule, view: &NttView<'_>, a: &mut [u32]) {
    let c = Consts::new(&view.modulus);
    let log_n = view.log_n;
    let n = a.len();
    let log_row = if log_n < 6 { log_n } else { 6 };
    let row = 1usize << log_row;
    let tw = view.inverse.as_ptr();
    let base = a.as_mut_ptr();
    let mut r0 = 0;
    while r0 < n {
        for step in s.steps() {
            // SAFETY: as in run_forward.
            unsafe {
                match *step {
                    Step::Quad => {
                        let b0 = r0 >> 4;
                        let tw2 = tw.add((n >> 2) + 4 * b0);
                        let tw1 = tw.add((n >> 1) + 8 * b0);
                        if row == ROW {
                            gs_quad_row64(base.add(r0), tw2, tw1, &c);
                        } else {
                            let mut b = 0;
                            while b < row >> 4 {
                                gs_quad_block(
                                    base.add(r0 + 16 * b),
                                    tw2.add(4 * b),
                                    tw1.add(8 * b),
                                    &c,
                                );
                                b += 1;
                            }
                        }
                    }
                    Step::Row { log_half } => {
                        let half = 1usize << log_half;
                        let shift = log_half + 1;
                        let (groups, first, per_row) = (n >> shift, r0 >> shift, row >> shift);
                        let t = tw.add(groups + first);
                        if half >= 8 {
                            row_layer::<true>(base.add(r0), t, per_row, half, &c);
                        } else {
                            gs_row_layer4(base.add(r0), t, per_row, &c);
                        }
                    }
                    Step::Strip { .. } | Step::Scale => {}
                }
            }
        }
        r0 += row;
    }
    let mut strip = 0;
    while strip < row {
        for step in s.steps() {
            if let Step::Strip { log_half } = *step {
                let half = 1usize << log_half;
                let groups = n >> (log_half + 1);
                // SAFETY: as in run_forward.
                unsafe {
                    strip_layer::<true>(base.add(strip), tw.add(groups), groups, half, row, &c)
                };
            }
        }
        strip += STRIP;
    }
    if s.steps().last() == Some(&Step::Scale) {
        // SAFETY: n is a multiple of 16.
        unsafe { scale_pass(base, n >> 3, view.n_inv_mont, &c) };
    }
}

/// `Mve::forward`: the certified schedule, or [`Portable`] when the auditor refuses it (or
/// the table is not `n` entries long).
#[inline(never)]
pub(super) fn forward(table: &NttView<'_>, a: &mut [u32]) -> Result<(), RingError> {
    table.check_len(a.len())?;
    if super::packed::try_forward(table, a) {
        return Ok(());
    }
    match Schedule::forward(table.modulus.value(), table.log_n) {
        // The kernels read the table through raw pointers: it must have n entries.
        Ok(s) if table.forward.len() == a.len() => {
            run_forward(&s, table, a);
            Ok(())
        }
        _ => Portable.forward(table, a),
    }
}

/// `Mve::inverse`: the certified schedule, or [`Portable`] when the auditor refuses it (or
/// the table is not `n` entries long).
#[inline(never)]
pub(super) fn inverse(table: &NttView<'_>, a: &mut [u32]) -> Result<(), RingError> {
    table.check_len(a.len())?;
    if super::packed::try_inverse(table, a) {
        return Ok(());
    }
    match Schedule::inverse(table.modulus.value(), table.log_n) {
        Ok(s) if table.inverse.len() == a.len() => {
            run_inverse(&s, table, a);
            Ok(())
        }
        _ => Portable.inverse(table, a),
    }
}
