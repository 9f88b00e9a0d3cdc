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
//! branch in a kernel function is such a loop back-edge, which `firmware/m55/audit.sh`
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
//! the largest intermediate is below `4q < 2^30`. The `const` assertions below certify the
//! schedule at compile time for every `q < 2^29` (the worst case is the largest `q`).

#![allow(unsafe_code)]

use core::arch::asm;

use crate::error::RingError;
use crate::modulus::Modulus;
use crate::ntt::{NttBackend, NttView, Portable};

/// Every certified intermediate is below this bound (one bit of margin below 2^32).
pub const RANGE_LIMIT: u64 = 1 << 31;

/// Length of one row kernel call, in coefficients (256 bytes).
pub const ROW: usize = 64;
/// Columns per strip in the strip pass: two 4-lane vectors per row.
const STRIP: usize = 8;
/// Most steps a schedule has: one per layer (`log2 n <= 17`) plus the fused tail.
const MAX_STEPS: usize = 20;

/// Why a schedule was refused by the range auditor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RangeError {
    /// The degree is not supported by the vector schedule (needs `16 <= n`, a power of two).
    Degree {
        /// The degree asked for.
        degree: usize,
    },
    /// An intermediate may reach `bound` (exclusive) at step `step`, above [`RANGE_LIMIT`].
    Overflow {
        /// Index of the offending step.
        step: usize,
        /// Its worst-case exclusive bound.
        bound: u64,
    },
    /// A subtraction may go negative or a final reduction may leave `[0, q)` at `step`.
    Underflow {
        /// Index of the offending step.
        step: usize,
    },
}

impl core::fmt::Display for RangeError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Self::Degree { degree } => {
                write!(f, "degree {degree} not supported by the MVE schedule")
            }
            Self::Overflow { step, bound } => {
                write!(f, "step {step}: intermediate may reach {bound} >= 2^31")
            }
            Self::Underflow { step } => write!(f, "step {step}: range not certified"),
        }
    }
}

/// One step of a schedule: a butterfly layer (identified by its half-distance) and where it
/// runs, or the fused last-two-layer kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// A layer with butterfly distance `half = 2^log_half >= ROW`, run on 8-column strips.
    Strip {
        /// `log2` of the butterfly distance in coefficients.
        log_half: u8,
    },
    /// A layer with `4 <= half = 2^log_half < ROW`, inside one row, broadcast twiddle per
    /// group.
    Row {
        /// `log2` of the butterfly distance in coefficients.
        log_half: u8,
    },
    /// The two layers `half = 2, 1` on de-interleaved registers (`vld4`), per-lane
    /// twiddles; forward: canonicalised to `[0, q)` before the store.
    Quad,
    /// Inverse only: multiply by `n^-1` and canonicalise.
    Scale,
}

/// A certified schedule: the steps the executor runs, in order, and the largest
/// intermediate bound found by the auditor. Only [`Schedule::forward`] and
/// [`Schedule::inverse`] make one, so an uncertified schedule cannot run.
#[derive(Clone, Copy, Debug)]
pub struct Schedule {
    steps: [Step; MAX_STEPS],
    len: usize,
    /// The largest exclusive bound of any intermediate, over all steps.
    pub max_bound: u64,
}

/// `max floor(a·b / 2^32)` for `a < a_excl`, `b < b_excl`.
const fn hi_max(a_excl: u64, b_excl: u64) -> u64 {
    ((a_excl - 1) * (b_excl - 1)) >> 32
}

const fn max(a: u64, b: u64) -> u64 {
    if a > b {
        a
    } else {
        b
    }
}

/// Exclusive bound after `vmin.u32(x, x - m)` for `x < b`: `x - m` if `x >= m`, else `x`.
/// Valid for any `m < 2^32` (the wrapped `x - m` exceeds `x` exactly when `x < m`).
const fn reduce_bound(b: u64, m: u64) -> u64 {
    if b > m {
        max(m, b - m)
    } else {
        b
    }
}

impl Schedule {
    const fn steps_for(log_n: u32, forward: bool) -> Result<Self, RangeError> {
        match log_n {
            4..=17 => {}
            _ => {
                let degree = match 1usize.checked_shl(log_n) {
                    Some(d) => d,
                    None => 0,
                };
                return Err(RangeError::Degree { degree });
            }
        }
        let n = 1usize << log_n;
        let mut steps = [Step::Scale; MAX_STEPS];
        let mut len = 0;
        let row = if n < ROW { n } else { ROW };
        // Forward: halves from n/2 down; the inverse runs the same layers upwards.
        let mut layer_halves = [0usize; MAX_STEPS];
        let mut k = 0;
        let mut half = n >> 1;
        while half >= 4 {
            layer_halves[k] = half;
            k += 1;
            half /= 2;
        }
        if forward {
            let mut i = 0;
            while i < k {
                let h = layer_halves[i];
                steps[len] = if h >= row {
                    Step::Strip {
                        log_half: h.trailing_zeros() as u8,
                    }
                } else {
                    Step::Row {
                        log_half: h.trailing_zeros() as u8,
                    }
                };
                len += 1;
                i += 1;
            }
            steps[len] = Step::Quad;
            len += 1;
        } else {
            steps[len] = Step::Quad;
            len += 1;
            let mut i = k;
            while i > 0 {
                i -= 1;
                let h = layer_halves[i];
                steps[len] = if h >= row {
                    Step::Strip {
                        log_half: h.trailing_zeros() as u8,
                    }
                } else {
                    Step::Row {
                        log_half: h.trailing_zeros() as u8,
                    }
                };
                len += 1;
            }
            steps[len] = Step::Scale;
            len += 1;
        }
        Ok(Self {
            steps,
            len,
            max_bound: 0,
        })
    }

    /// Builds the forward schedule for `n = 2^log_n` and certifies its ranges for `q`.
    pub const fn forward(q: u32, log_n: u32) -> Result<Self, RangeError> {
        let mut s = match Self::steps_for(log_n, true) {
            Ok(s) => s,
            Err(e) => return Err(e),
        };
        let q = q as u64;
        let mut worst = 0u64;
        // Inputs are canonical.
        let mut b = q;
        let mut i = 0;
        while i < s.len {
            let layers = match s.steps[i] {
                Step::Quad => 2,
                _ => 1,
            };
            let mut l = 0;
            while l < layers {
                // u = reduce(x, 2q) + q; d in [-(q-1), dmax]; x' = u + d; y' = u - d.
                let u = reduce_bound(b, 2 * q) + q;
                let dmax = hi_max(b, q);
                if dmax + 1 > q {
                    return Err(RangeError::Underflow { step: i });
                }
                let x_next = u + dmax;
                let y_next = u + q - 1;
                let step_max = max(max(b, u), max(x_next, y_next));
                if step_max > RANGE_LIMIT {
                    return Err(RangeError::Overflow {
                        step: i,
                        bound: step_max,
                    });
                }
                worst = max(worst, step_max);
                b = max(x_next, y_next);
                l += 1;
            }
            if let Step::Quad = s.steps[i] {
                // Fused canonicalisation: reduce by 2q, then by q, must land in [0, q).
                if reduce_bound(reduce_bound(b, 2 * q), q) > q {
                    return Err(RangeError::Underflow { step: i });
                }
                b = q;
            }
            i += 1;
        }
        if b > q {
            return Err(RangeError::Underflow { step: s.len });
        }
        s.max_bound = worst;
        Ok(s)
    }

    /// Builds the inverse schedule for `n = 2^log_n` and certifies its ranges for `q`.
    pub const fn inverse(q: u32, log_n: u32) -> Result<Self, RangeError> {
        let mut s = match Self::steps_for(log_n, false) {
            Ok(s) => s,
            Err(e) => return Err(e),
        };
        let q = q as u64;
        let mut worst = 0u64;
        let mut b = q;
        let mut i = 0;
        while i < s.len {
            match s.steps[i] {
                Step::Scale => {
                    // mont(x, n^-1): hi(x·w) + q - hi(m·q) in [1, q + hi_max]; one reduce by q.
                    let t = q + hi_max(b, q) + 1;
                    worst = max(worst, t);
                    if t > 2 * q || t > RANGE_LIMIT {
                        return Err(RangeError::Underflow { step: i });
                    }
                    b = q;
                }
                step => {
                    let layers = match step {
                        Step::Quad => 2,
                        _ => 1,
                    };
                    let mut l = 0;
                    while l < layers {
                        // x' = reduce(x + y, 2q); t = x + 2q - y (needs y < 2q + 1 > 0... y <= 2q);
                        // y' = hi(t·w) + q - hi(m·q).
                        if b > 2 * q {
                            return Err(RangeError::Underflow { step: i });
                        }
                        let sum = 2 * b - 1;
                        let x_next = reduce_bound(sum, 2 * q);
                        let t = b + 2 * q;
                        let y_next = q + hi_max(t, q) + 1;
                        let step_max = max(max(sum, t), max(x_next, y_next + q));
                        if step_max > RANGE_LIMIT {
                            return Err(RangeError::Overflow {
                                step: i,
                                bound: step_max,
                            });
                        }
                        worst = max(worst, step_max);
                        b = max(x_next, y_next);
                        l += 1;
                    }
                }
            }
            i += 1;
        }
        if b > q {
            return Err(RangeError::Underflow { step: s.len });
        }
        s.max_bound = worst;
        Ok(s)
    }

    /// The certified steps, in execution order.
    pub fn steps(&self) -> &[Step] {
        &self.steps[..self.len]
    }
}

/// Certifies the pointwise product kernel for `q`: two subtractive Montgomery products then
/// one reduction; returns the largest intermediate bound.
pub const fn certify_pointwise(q: u32) -> Result<u64, RangeError> {
    let q = q as u64;
    let t = q + hi_max(q, q) + 1; // mont(a, b), a, b < q
    let h = q + hi_max(t, q) + 1; // mont(t, r2)
    let acc = 2 * q; // acc + product before the last reduction (mul_add)
    let worst = max(max(t, h + q), acc);
    if h > 2 * q || worst > RANGE_LIMIT {
        return Err(RangeError::Overflow {
            step: 0,
            bound: worst,
        });
    }
    Ok(worst)
}

/// Largest modulus the MVE schedule certifies at every supported degree.
pub const MAX_CERTIFIED_MODULUS: u32 = (1 << 29) - 1;

// Compile-time certificates: the worst case over q is the largest q (every bound grows with
// q), at the longest schedule; and the auditor refuses a modulus past the limit.
const _: () = assert!(Schedule::forward(MAX_CERTIFIED_MODULUS, 17).is_ok());
const _: () = assert!(Schedule::inverse(MAX_CERTIFIED_MODULUS, 17).is_ok());
const _: () = assert!(Schedule::forward(MAX_CERTIFIED_MODULUS, 4).is_ok());
const _: () = assert!(Schedule::inverse(MAX_CERTIFIED_MODULUS, 4).is_ok());
const _: () = assert!(certify_pointwise(MAX_CERTIFIED_MODULUS).is_ok());
const _: () = assert!(Schedule::forward((1 << 30) - 35, 12).is_err());

/// Scalar constants every kernel needs.
#[derive(Clone, Copy)]
struct Consts {
    q: u32,
    two_q: u32,
    /// `q^-1 mod 2^32`.
    q_inv: u32,
}

impl Consts {
    fn new(m: &Modulus) -> Self {
        let q = m.value();
        Self {
            q,
            two_q: 2 * q,
            q_inv: m.q_inv_neg().wrapping_neg(),
        }
    }

    /// `w·q^-1 mod 2^32`: multiplying a lane by it gives the Montgomery quotient directly.
    #[inline(always)]
    fn quotient_factor(&self, w: u32) -> u32 {
        w.wrapping_mul(self.q_inv)
    }
}

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

/// `out[i] = a[i]·b[i] mod q` (and, with `ACC`, `out[i] += a[i]·b[i] mod q`), canonical, on
/// `4·count` coefficients: a counted loop (`count >= 1`) with a branch-free body.
///
/// # Safety
/// `a`, `b` valid for reading `4·count` `u32`; `out` for reading and writing as many;
/// `count >= 1`.
#[inline(always)]
unsafe fn pointwise4<const ACC: bool>(
    a: *const u32,
    b: *const u32,
    out: *mut u32,
    count: usize,
    r2: u32,
    r2q: u32,
    c: &Consts,
) {
    // SAFETY: the caller guarantees the ranges; only q0..q7 and flags change.
    unsafe {
        asm!(
            "vdup.32 q7, {q}",
            "vdup.32 q6, {r2}",
            "2:",
            "vldrw.u32 q0, [{a}], #16",
            "vldrw.u32 q1, [{b}], #16",
            // t = mont(a, b) in [1, 2q)
            "vmulh.u32 q2, q0, q1",
            "vmul.i32 q0, q0, q1",
            "vmul.i32 q0, q0, {qi}",
            "vmulh.u32 q0, q0, q7",
            "vadd.i32 q2, q2, {q}",
            "vsub.i32 q2, q2, q0",
            // h = mont(t, 2^64 mod q) = a·b mod q, in [1, 2q)
            "vmulh.u32 q1, q2, q6",
            "vmul.i32 q2, q2, {r2q}",
            "vmulh.u32 q2, q2, q7",
            "vadd.i32 q1, q1, {q}",
            "vsub.i32 q1, q1, q2",
            "vsub.i32 q2, q1, {q}",
            "vmin.u32 q1, q1, q2",
            ".if {acc}",
            "vldrw.u32 q3, [{out}]",
            "vadd.i32 q1, q1, q3",
            "vsub.i32 q2, q1, {q}",
            "vmin.u32 q1, q1, q2",
            ".endif",
            "vstrw.32 q1, [{out}], #16",
            "subs {count}, #1",
            "bne 2b",
            a = inout(reg) a => _,
            b = inout(reg) b => _,
            out = inout(reg) out => _,
            count = inout(reg) count => _,
            r2 = in(reg) r2,
            r2q = in(reg) r2q,
            qi = in(reg) c.q_inv,
            q = in(reg) c.q,
            acc = const ACC as u32,
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
// (firmware/m55/audit.sh) holds to its strict rules.

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

/// Pointwise products on `4·chunks` coefficients.
///
/// # Safety
/// `a`, `b`, `out` valid for `4·chunks` coefficients.
#[inline(never)]
unsafe fn pointwise_pass<const ACC: bool>(
    a: *const u32,
    b: *const u32,
    out: *mut u32,
    chunks: usize,
    r2: u32,
    r2q: u32,
    c: &Consts,
) {
    // SAFETY: per the contract (chunks >= 1).
    unsafe { pointwise4::<ACC>(a, b, out, chunks, r2, r2q, c) };
}

// ----- dispatch: public schedule and sizes, shifts only -----------------------------------

/// Runs a certified forward schedule. Requires `a.len() == n == 2^log_n >= 16` and a twiddle
/// table of length `n` (checked by [`Mve::forward`]).
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

/// The Helium backend. Falls back to [`Portable`] for a call whose schedule the range
/// auditor cannot certify (a modulus above [`MAX_CERTIFIED_MODULUS`], or `n < 16`).
#[derive(Clone, Copy, Debug, Default)]
pub struct Mve;

impl NttBackend for Mve {
    const NAME: &'static str = "mve";

    fn forward(table: &NttView<'_>, a: &mut [u32]) -> Result<(), RingError> {
        table.check_len(a.len())?;
        match Schedule::forward(table.modulus.value(), table.log_n) {
            // The kernels read the table through raw pointers: it must have n entries.
            Ok(s) if table.forward.len() == a.len() => {
                run_forward(&s, table, a);
                Ok(())
            }
            _ => Portable::forward(table, a),
        }
    }

    fn inverse(table: &NttView<'_>, a: &mut [u32]) -> Result<(), RingError> {
        table.check_len(a.len())?;
        match Schedule::inverse(table.modulus.value(), table.log_n) {
            Ok(s) if table.inverse.len() == a.len() => {
                run_inverse(&s, table, a);
                Ok(())
            }
            _ => Portable::inverse(table, a),
        }
    }

    fn pointwise_mul(
        modulus: &Modulus,
        a: &[u32],
        b: &[u32],
        out: &mut [u32],
    ) -> Result<(), RingError> {
        pointwise::<false>(modulus, a, b, out)
    }

    fn pointwise_mul_add(
        modulus: &Modulus,
        a: &[u32],
        b: &[u32],
        acc: &mut [u32],
    ) -> Result<(), RingError> {
        pointwise::<true>(modulus, a, b, acc)
    }

    fn pointwise_mul_assign(modulus: &Modulus, a: &mut [u32], b: &[u32]) -> Result<(), RingError> {
        crate::ntt::check_same_len(a.len(), b.len())?;
        if a.is_empty() {
            return Ok(());
        }
        if a.len() % 4 != 0 || certify_pointwise(modulus.value()).is_err() {
            return Portable::pointwise_mul_assign(modulus, a, b);
        }
        let (c, r2, r2q) = pointwise_consts(modulus);
        let p = a.as_mut_ptr();
        // SAFETY: `a` and `b` have the same length, a multiple of 4; the kernel reads each
        // 4-lane chunk of `a` before it writes the same chunk, so in place is sound.
        unsafe { pointwise_pass::<false>(p, b.as_ptr(), p, a.len() >> 2, r2, r2q, &c) };
        Ok(())
    }
}

/// The pointwise kernel's constants: `Consts`, `r2 = 2^64 mod q` (the Montgomery form of
/// `2^32`: `mont(t, r2) = t·2^32 mod q`) and its quotient factor.
fn pointwise_consts(modulus: &Modulus) -> (Consts, u32, u32) {
    let c = Consts::new(modulus);
    let r2 = modulus.to_mont(1);
    let r2 = modulus.mul(r2, r2);
    let r2q = c.quotient_factor(r2);
    (c, r2, r2q)
}

fn pointwise<const ACC: bool>(
    modulus: &Modulus,
    a: &[u32],
    b: &[u32],
    out: &mut [u32],
) -> Result<(), RingError> {
    if a.len() != out.len() || b.len() != out.len() {
        let found = if a.len() != out.len() {
            a.len()
        } else {
            b.len()
        };
        return Err(RingError::LengthMismatch {
            expected: out.len(),
            found,
        });
    }
    if out.is_empty() {
        return Ok(());
    }
    if out.len() % 4 != 0 || certify_pointwise(modulus.value()).is_err() {
        return if ACC {
            Portable::pointwise_mul_add(modulus, a, b, out)
        } else {
            Portable::pointwise_mul(modulus, a, b, out)
        };
    }
    let (c, r2, r2q) = pointwise_consts(modulus);
    // SAFETY: the three slices have the same length, a multiple of 4.
    unsafe {
        pointwise_pass::<ACC>(
            a.as_ptr(),
            b.as_ptr(),
            out.as_mut_ptr(),
            out.len() >> 2,
            r2,
            r2q,
            &c,
        )
    };
    Ok(())
}

// ----- BEHZ decryption tail (BFV) ---------------------------------------------------------
//
// The per-coefficient tail of BFV decryption by BEHZ with γ = 2^31 (the `zeppelin` crate's
// `behz` module holds the scalar twins and the derivation). Every Montgomery product here is
// the subtractive form of the butterflies with one operand a broadcast constant below its
// modulus, so `hi(a·b) − hi(m·p)` lies in `(−p, a·b/2^32)` and one `+p` and one
// `vmin.u32(x, x − p)` give the canonical residue, the value the scalar `Modulus::mont_mul`
// returns. Bounds (`p` = q or t, all operands canonical): `a·b < p·2^32` for every product
// (`a < 2^31` for the γ-residue, `p < 2^31`), so one reduction suffices; sums of two
// residues stay below `2p < 2^32`. No branch but the loop back-edge, no division, no
// indexed load.

/// BEHZ steps 1–2 for one prime on `4·count` coefficients: `y = mont_q(reduce(x + c), scale)`,
/// `acc_t = acc_t + mont_t(y, hat_t) mod t`, `acc_γ = acc_γ + y·hat_γ mod 2^32`.
///
/// # Safety
/// `x`, `c` valid for reading `4·count` `u32`, `acc_t`, `acc_gamma` for reading and writing
/// as many; `count >= 1`.
#[inline(never)]
#[allow(clippy::too_many_arguments)]
unsafe fn behz_accumulate_pass(
    x: *const u32,
    c: *const u32,
    acc_t: *mut u32,
    acc_gamma: *mut u32,
    count: usize,
    q: &Consts,
    t: &Consts,
    scale_mont: u32,
    hat_t_mont: u32,
    hat_gamma: u32,
) {
    // Broadcast constants, read once through one pointer (keeps the loop within the GPRs).
    let k = [q.q, t.q, scale_mont, hat_t_mont];
    // SAFETY: the caller guarantees the ranges; only q0..q7, `tmp` and flags change.
    unsafe {
        asm!(
            "ldr {tmp}, [{k}]",
            "vdup.32 q7, {tmp}",
            "ldr {tmp}, [{k}, #4]",
            "vdup.32 q6, {tmp}",
            "ldr {tmp}, [{k}, #8]",
            "vdup.32 q5, {tmp}",
            "ldr {tmp}, [{k}, #12]",
            "vdup.32 q4, {tmp}",
            "2:",
            "vldrw.u32 q0, [{x}], #16",
            "vldrw.u32 q1, [{c}], #16",
            // xi = x + c mod q (both < q)
            "vadd.i32 q0, q0, q1",
            "vsub.i32 q1, q0, q7",
            "vmin.u32 q0, q0, q1",
            // y = mont_q(xi, scale), canonical
            "vmulh.u32 q1, q0, q5",
            "vmul.i32 q0, q0, {scale_q}",
            "vmulh.u32 q0, q0, q7",
            "vsub.i32 q1, q1, q0",
            "vadd.i32 q1, q1, q7",
            "vsub.i32 q0, q1, q7",
            "vmin.u32 q1, q1, q0",
            // acc_γ += y·hat_γ (mod 2^32)
            "vldrw.u32 q2, [{ag}]",
            "vmul.i32 q0, q1, {hat_g}",
            "vadd.i32 q2, q2, q0",
            "vstrw.32 q2, [{ag}], #16",
            // acc_t = acc_t + mont_t(y, hat_t) mod t
            "vmulh.u32 q0, q1, q4",
            "vmul.i32 q1, q1, {hat_t_q}",
            "vmulh.u32 q1, q1, q6",
            "vsub.i32 q0, q0, q1",
            "vadd.i32 q0, q0, q6",
            "vsub.i32 q1, q0, q6",
            "vmin.u32 q0, q0, q1",
            "vldrw.u32 q2, [{at}]",
            "vadd.i32 q0, q0, q2",
            "vsub.i32 q1, q0, q6",
            "vmin.u32 q0, q0, q1",
            "vstrw.32 q0, [{at}], #16",
            "subs {count}, #1",
            "bne 2b",
            x = inout(reg) x => _,
            c = inout(reg) c => _,
            at = inout(reg) acc_t => _,
            ag = inout(reg) acc_gamma => _,
            count = inout(reg) count => _,
            k = in(reg) k.as_ptr(),
            tmp = out(reg) _,
            scale_q = in(reg) q.quotient_factor(scale_mont),
            hat_t_q = in(reg) t.quotient_factor(hat_t_mont),
            hat_g = in(reg) hat_gamma,
            out("s0") _, out("s1") _, out("s2") _, out("s3") _,
            out("s4") _, out("s5") _, out("s6") _, out("s7") _,
            out("s8") _, out("s9") _, out("s10") _, out("s11") _,
            out("s16") _, out("s17") _, out("s18") _, out("s19") _,
            out("s20") _, out("s21") _, out("s22") _, out("s23") _,
            out("s24") _, out("s25") _, out("s26") _, out("s27") _,
            out("s28") _, out("s29") _, out("s30") _, out("s31") _,
            options(nostack),
        );
    }
}

/// BEHZ steps 3–5 on `4·count` coefficients, γ = 2^31: `z_t = mont_t(m, neg_q_inv_t)`,
/// `z_γ = acc_γ·neg_q_inv_γ mod 2^31`, `z_γ,t = mont_t(z_γ, 2^32 mod t) − (γ mod t if
/// z_γ ≥ 2^30) mod t`, `m = mont_t(z_t − z_γ,t mod t, γ^-1)`, written over `m`.
///
/// # Safety
/// `m` valid for reading and writing `4·count` `u32`, `acc_gamma` for reading as many;
/// `count >= 1`.
#[inline(never)]
#[allow(clippy::too_many_arguments)]
unsafe fn behz_finish_pass(
    m: *mut u32,
    acc_gamma: *const u32,
    count: usize,
    t: &Consts,
    neg_q_inv_t_mont: u32,
    neg_q_inv_gamma: u32,
    gamma_mod_t: u32,
    gamma_inv_t_mont: u32,
    one_mont: u32,
) {
    // Broadcast constants, read once through one pointer (keeps the loop within the GPRs).
    let k = [
        t.q,
        neg_q_inv_t_mont,
        one_mont,
        gamma_inv_t_mont,
        gamma_mod_t,
    ];
    // SAFETY: the caller guarantees the ranges; only q0..q7, `tmp` and flags change.
    unsafe {
        asm!(
            "ldr {tmp}, [{k}]",
            "vdup.32 q7, {tmp}",
            "ldr {tmp}, [{k}, #4]",
            "vdup.32 q6, {tmp}",
            "ldr {tmp}, [{k}, #8]",
            "vdup.32 q5, {tmp}",
            "ldr {tmp}, [{k}, #12]",
            "vdup.32 q4, {tmp}",
            "ldr {tmp}, [{k}, #16]",
            "vdup.32 q3, {tmp}",
            "2:",
            // s = acc_γ·neg_q_inv_γ << 1; sign mask of bit 30; z_γ = s >> 1 (< 2^31)
            "vldrw.u32 q0, [{g}], #16",
            "vmul.i32 q0, q0, {ng}",
            "vshl.i32 q0, q0, #1",
            "vshr.s32 q2, q0, #31",
            "vshr.u32 q0, q0, #1",
            "vand q2, q2, q3",
            // z_γ mod t = mont_t(z_γ, 2^32 mod t)
            "vmulh.u32 q1, q0, q5",
            "vmul.i32 q0, q0, {one_q}",
            "vmulh.u32 q0, q0, q7",
            "vsub.i32 q1, q1, q0",
            "vadd.i32 q1, q1, q7",
            "vsub.i32 q0, q1, q7",
            "vmin.u32 q1, q1, q0",
            // centring: z_γ,t = z_γ mod t − (γ mod t & mask) mod t
            "vadd.i32 q1, q1, q7",
            "vsub.i32 q1, q1, q2",
            "vsub.i32 q0, q1, q7",
            "vmin.u32 q1, q1, q0",
            // z_t = mont_t(m, neg_q_inv_t)
            "vldrw.u32 q0, [{m}]",
            "vmulh.u32 q2, q0, q6",
            "vmul.i32 q0, q0, {nqt_q}",
            "vmulh.u32 q0, q0, q7",
            "vsub.i32 q2, q2, q0",
            "vadd.i32 q2, q2, q7",
            "vsub.i32 q0, q2, q7",
            "vmin.u32 q2, q2, q0",
            // d = z_t − z_γ,t mod t
            "vadd.i32 q2, q2, q7",
            "vsub.i32 q2, q2, q1",
            "vsub.i32 q0, q2, q7",
            "vmin.u32 q2, q2, q0",
            // m = mont_t(d, γ^-1)
            "vmulh.u32 q1, q2, q4",
            "vmul.i32 q2, q2, {ginv_q}",
            "vmulh.u32 q2, q2, q7",
            "vsub.i32 q1, q1, q2",
            "vadd.i32 q1, q1, q7",
            "vsub.i32 q2, q1, q7",
            "vmin.u32 q1, q1, q2",
            "vstrw.32 q1, [{m}], #16",
            "subs {count}, #1",
            "bne 2b",
            m = inout(reg) m => _,
            g = inout(reg) acc_gamma => _,
            count = inout(reg) count => _,
            k = in(reg) k.as_ptr(),
            tmp = out(reg) _,
            ng = in(reg) neg_q_inv_gamma,
            one_q = in(reg) t.quotient_factor(one_mont),
            nqt_q = in(reg) t.quotient_factor(neg_q_inv_t_mont),
            ginv_q = in(reg) t.quotient_factor(gamma_inv_t_mont),
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

/// The common length of BEHZ rows, or an error: every row the same length, a multiple of 4.
fn behz_len(lens: [usize; 4]) -> Result<usize, RingError> {
    let n = lens[0];
    for found in lens {
        crate::ntt::check_same_len(n, found)?;
    }
    if n % 4 != 0 {
        return Err(RingError::DegreeNotSupported { degree: n });
    }
    Ok(n)
}

/// BFV decryption by BEHZ (γ = 2^31), steps 1–2 for one prime `q`, on Helium: for every
/// coefficient `j`, `y = [(x_j + c0_j)·scale]_q` (one Montgomery product by
/// `scale_mont`), `acc_t_j ← acc_t_j + mont_t(y, hat_t_mont) mod t`,
/// `acc_γ_j ← acc_γ_j + y·hat_γ mod 2^32`. Equal word for word to the scalar twin
/// `zeppelin::behz::accumulate_scalar` when `x_j, c0_j < q`, `acc_t_j < t`,
/// `scale_mont < q`, `hat_t_mont < t` (tested on target; outside that, results are
/// unspecified but memory-safe).
///
/// Errors: rows of different lengths, or a length that is not a multiple of 4.
#[allow(clippy::too_many_arguments)]
pub fn behz_accumulate(
    q: &Modulus,
    t: &Modulus,
    scale_mont: u32,
    hat_t_mont: u32,
    hat_gamma: u32,
    x: &[u32],
    c0: &[u32],
    acc_t: &mut [u32],
    acc_gamma: &mut [u32],
) -> Result<(), RingError> {
    let n = behz_len([acc_t.len(), x.len(), c0.len(), acc_gamma.len()])?;
    if n == 0 {
        return Ok(());
    }
    let (cq, ct) = (Consts::new(q), Consts::new(t));
    // SAFETY: four rows of n coefficients, n a positive multiple of 4.
    unsafe {
        behz_accumulate_pass(
            x.as_ptr(),
            c0.as_ptr(),
            acc_t.as_mut_ptr(),
            acc_gamma.as_mut_ptr(),
            n >> 2,
            &cq,
            &ct,
            scale_mont,
            hat_t_mont,
            hat_gamma,
        )
    };
    Ok(())
}

/// BFV decryption by BEHZ (γ = 2^31), steps 3–5, on Helium: `acc_t` (mod `t`, overwritten
/// with the message) and `acc_γ` become `m = (z_t − centred(z_γ))·γ^-1 mod t` with
/// `z_t = acc_t·(−Q^-1)`, `z_γ = acc_γ·(−Q^-1) mod γ` centred at bit 30. Equal word for word
/// to the scalar twin `zeppelin::behz::finish_scalar` when `acc_t_j < t`, the Montgomery
/// constants are below `t` and `gamma_mod_t < t` (tested on target).
///
/// Errors: rows of different lengths, or a length that is not a multiple of 4.
pub fn behz_finish(
    t: &Modulus,
    neg_q_inv_t_mont: u32,
    neg_q_inv_gamma: u32,
    gamma_mod_t: u32,
    gamma_inv_t_mont: u32,
    acc_t: &mut [u32],
    acc_gamma: &[u32],
) -> Result<(), RingError> {
    let n = behz_len([acc_t.len(), acc_gamma.len(), acc_t.len(), acc_t.len()])?;
    if n == 0 {
        return Ok(());
    }
    let ct = Consts::new(t);
    // SAFETY: two rows of n coefficients, n a positive multiple of 4.
    unsafe {
        behz_finish_pass(
            acc_t.as_mut_ptr(),
            acc_gamma.as_ptr(),
            n >> 2,
            &ct,
            neg_q_inv_t_mont,
            neg_q_inv_gamma,
            gamma_mod_t,
            gamma_inv_t_mont,
            t.to_mont(1),
        )
    };
    Ok(())
}

// ----- constant-time CDT scan (samplers) ----------------------------------------------------

/// `8·count` samples: for each word `w`, `out = base − #{k : (w mod 2^31) < cdt[k]}`, stored
/// as its low byte. Every word is compared with every entry (an inner loop over the public
/// table length, the table read with post-incremented immediate addressing), so the work does
/// not depend on the words. `r − c` for `r < 2^31`, `c <= 2^31` is negative exactly when
/// `r < c` and never overflows, so its sign bit is the comparison.
///
/// # Safety
/// `words` valid for reading `8·count` `u32`, `out` for writing `8·count` bytes, `cdt` for
/// reading `len` `u32`; `count >= 1`, `len >= 1`.
#[inline(never)]
unsafe fn cdt_scan_pass(
    words: *const u32,
    out: *mut i8,
    count: usize,
    cdt: *const u32,
    len: usize,
    base: i32,
) {
    // SAFETY: the caller guarantees the ranges; only q0..q4, the scratch registers and flags
    // change.
    unsafe {
        asm!(
            "vdup.32 q4, {base}",
            "2:",
            "vldrw.u32 q0, [{w}], #16",
            "vldrw.u32 q1, [{w}], #16",
            // r = w mod 2^31
            "vshl.i32 q0, q0, #1",
            "vshl.i32 q1, q1, #1",
            "vshr.u32 q0, q0, #1",
            "vshr.u32 q1, q1, #1",
            "vmov q2, q4",
            "vmov q3, q4",
            "mov {p}, {cdt}",
            "mov {k}, {len}",
            "3:",
            "ldr {c}, [{p}], #4",
            // acc −= (r < c): the sign bit of r − c
            "vsub.i32 q5, q0, {c}",
            "vsub.i32 q6, q1, {c}",
            "vshr.u32 q5, q5, #31",
            "vshr.u32 q6, q6, #31",
            "vsub.i32 q2, q2, q5",
            "vsub.i32 q3, q3, q6",
            "subs {k}, #1",
            "bne 3b",
            "vstrb.32 q2, [{o}], #4",
            "vstrb.32 q3, [{o}], #4",
            "subs {count}, #1",
            "bne 2b",
            w = inout(reg) words => _,
            o = inout(reg) out => _,
            count = inout(reg) count => _,
            cdt = in(reg) cdt,
            len = in(reg) len,
            base = in(reg) base,
            p = out(reg) _,
            k = out(reg) _,
            c = out(reg) _,
            out("s0") _, out("s1") _, out("s2") _, out("s3") _,
            out("s4") _, out("s5") _, out("s6") _, out("s7") _,
            out("s8") _, out("s9") _, out("s10") _, out("s11") _,
            out("s12") _, out("s13") _, out("s14") _, out("s15") _,
            out("s16") _, out("s17") _, out("s18") _, out("s19") _,
            out("s20") _, out("s21") _, out("s22") _, out("s23") _,
            out("s24") _, out("s25") _, out("s26") _, out("s27") _,
            options(nostack),
        );
    }
}

/// A constant-time cumulative-distribution-table sampler step on Helium, `L` words at a time
/// (`L` a positive multiple of 8): `out[j] = base − #{k : (words[j] mod 2^31) < cdt[k]}`
/// (as `i8`, wrapping), every word scanned against every entry. With `cdt` ascending and
/// `base = cdt.len() − B` this is the sample `−B + #{k : r >= cdt[k]}` of a CDT over
/// `[−B, B]` (the `zeppelin` crate's Gaussian, whose scalar twin is
/// `zeppelin::sampler::gaussian_from_word`). Entries must be at most `2^31` (larger ones give
/// unspecified results).
pub fn cdt_scan<const L: usize>(words: &[u32; L], cdt: &[u32], base: i32, out: &mut [i8; L]) {
    const {
        assert!(
            L > 0 && L.is_multiple_of(8),
            "L must be a positive multiple of 8"
        )
    };
    if cdt.is_empty() {
        out.fill(base as i8);
        return;
    }
    // SAFETY: L words and L bytes, L a positive multiple of 8; a non-empty table.
    unsafe {
        cdt_scan_pass(
            words.as_ptr(),
            out.as_mut_ptr(),
            L >> 3,
            cdt.as_ptr(),
            cdt.len(),
            base,
        )
    };
}
