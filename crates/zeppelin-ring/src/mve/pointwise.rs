//! The Helium pointwise products `a·b mod q` (out of place, in place, multiply-accumulate):
//! one `asm!` loop, two subtractive Montgomery products per four lanes, certified for `q` by
//! [`certify_pointwise`].

use core::arch::asm;

use super::arith::Consts;
use super::schedule::certify_pointwise;
use crate::error::RingError;
use crate::modulus::Modulus;
use crate::ntt::NttBackend;
use crate::portable::Portable;

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

/// The pointwise kernel's constants: `Consts`, `r2 = 2^64 mod q` (the Montgomery form of
/// `2^32`: `mont(t, r2) = t·2^32 mod q`) and its quotient factor.
fn pointwise_consts(modulus: &Modulus) -> (Consts, u32, u32) {
    let c = Consts::new(modulus);
    let r2 = modulus.to_mont(1);
    let r2 = modulus.mul(r2, r2);
    let r2q = c.quotient_factor(r2);
    (c, r2, r2q)
}

/// `Mve::pointwise_mul`.
#[inline(never)]
pub(super) fn mul(
    modulus: &Modulus,
    a: &[u32],
    b: &[u32],
    out: &mut [u32],
) -> Result<(), RingError> {
    pointwise::<false>(modulus, a, b, out)
}

/// `Mve::pointwise_mul_add`.
#[inline(never)]
pub(super) fn mul_add(
    modulus: &Modulus,
    a: &[u32],
    b: &[u32],
    acc: &mut [u32],
) -> Result<(), RingError> {
    pointwise::<true>(modulus, a, b, acc)
}

/// `out = a·b` (with `ACC`, `out += a·b`) mod `q` on Helium; [`Portable`] when the length is
/// not a multiple of 4 or `q` is not certified.
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
            Portable.pointwise_mul_add(modulus, a, b, out)
        } else {
            Portable.pointwise_mul(modulus, a, b, out)
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

/// `Mve::pointwise_mul_assign`: `a = a·b mod q` in place on Helium; [`Portable`] when the
/// length is not a multiple of 4 or `q` is not certified.
#[inline(never)]
pub(super) fn mul_assign(modulus: &Modulus, a: &mut [u32], b: &[u32]) -> Result<(), RingError> {
    RingError::check_len(a.len(), b.len())?;
    if a.is_empty() {
        return Ok(());
    }
    if a.len() % 4 != 0 || certify_pointwise(modulus.value()).is_err() {
        return Portable.pointwise_mul_assign(modulus, a, b);
    }
    let (c, r2, r2q) = pointwise_consts(modulus);
    let p = a.as_mut_ptr();
    // SAFETY: `a` and `b` have the same length, a multiple of 4; the kernel reads each
    // 4-lane chunk of `a` before it writes the same chunk, so in place is sound.
    unsafe { pointwise_pass::<false>(p, b.as_ptr(), p, a.len() >> 2, r2, r2q, &c) };
    Ok(())
}
