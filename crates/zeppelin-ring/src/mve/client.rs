//! The BFV device client's kernels on Helium: the BEHZ decryption tail and the Gaussian
//! sampler's constant-time CDT scan (the [`crate::ClientKernels`] of [`super::Mve`]).

use core::arch::asm;

use super::arith::Consts;
use crate::client::ClientKernels;
use crate::error::RingError;
use crate::modulus::{Modulus, Mont};
use crate::portable::Portable;

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
#[expect(
    clippy::too_many_arguments,
    reason = "the kernel's operands, in registers for the asm"
)]
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
#[expect(
    clippy::too_many_arguments,
    reason = "the kernel's operands, in registers for the asm"
)]
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

/// The common length of BEHZ rows, or the first mismatch.
fn behz_len(lens: [usize; 4]) -> Result<usize, RingError> {
    for found in lens {
        RingError::check_len(lens[0], found)?;
    }
    Ok(lens[0])
}

/// [`crate::ClientKernels::behz_accumulate`] on Helium: the kernel on the whole 4-lane
/// vectors, [`Portable`] on a tail (none for the presets). Equal word for word to the
/// portable loop (tested on target) in the trait's input ranges.
#[expect(
    clippy::too_many_arguments,
    reason = "the kernel's operands, as in ClientKernels"
)]
pub(super) fn behz_accumulate(
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
    let done = n & !3;
    if done > 0 {
        let (cq, ct) = (Consts::new(q), Consts::new(t));
        // SAFETY: four rows of at least `done` coefficients, `done` a positive multiple of 4.
        unsafe {
            behz_accumulate_pass(
                x.as_ptr(),
                c0.as_ptr(),
                acc_t.as_mut_ptr(),
                acc_gamma.as_mut_ptr(),
                done >> 2,
                &cq,
                &ct,
                scale_mont,
                hat_t_mont,
                hat_gamma,
            )
        };
    }
    if done < n {
        accumulate_tail(
            q,
            t,
            [scale_mont, hat_t_mont, hat_gamma],
            &x[done..],
            &c0[done..],
            &mut acc_t[done..],
            &mut acc_gamma[done..],
        )?;
    }
    Ok(())
}

/// The portable loop on a tail shorter than a vector; out of line, so that the kernel's
/// caller keeps its small frame (the client's stack high-water mark).
#[cold]
#[inline(never)]
fn accumulate_tail(
    q: &Modulus,
    t: &Modulus,
    [scale_mont, hat_t_mont, hat_gamma]: [u32; 3],
    x: &[u32],
    c0: &[u32],
    acc_t: &mut [u32],
    acc_gamma: &mut [u32],
) -> Result<(), RingError> {
    Portable.behz_accumulate(
        q,
        t,
        Mont::from_word(scale_mont),
        Mont::from_word(hat_t_mont),
        hat_gamma,
        x,
        c0,
        acc_t,
        acc_gamma,
    )
}

/// [`crate::ClientKernels::behz_finish`] on Helium: the kernel on the whole 4-lane vectors,
/// [`Portable`] on a tail (none for the presets). Equal word for word to the portable loop
/// (tested on target) in the trait's input ranges.
pub(super) fn behz_finish(
    t: &Modulus,
    neg_q_inv_t_mont: u32,
    neg_q_inv_gamma: u32,
    gamma_mod_t: u32,
    gamma_inv_t_mont: u32,
    acc_t: &mut [u32],
    acc_gamma: &[u32],
) -> Result<(), RingError> {
    RingError::check_len(acc_t.len(), acc_gamma.len())?;
    let n = acc_t.len();
    let done = n & !3;
    if done > 0 {
        let ct = Consts::new(t);
        // SAFETY: two rows of at least `done` coefficients, `done` a positive multiple of 4.
        unsafe {
            behz_finish_pass(
                acc_t.as_mut_ptr(),
                acc_gamma.as_ptr(),
                done >> 2,
                &ct,
                neg_q_inv_t_mont,
                neg_q_inv_gamma,
                gamma_mod_t,
                gamma_inv_t_mont,
                t.to_mont(1),
            )
        };
    }
    if done < n {
        finish_tail(
            t,
            [
                neg_q_inv_t_mont,
                neg_q_inv_gamma,
                gamma_mod_t,
                gamma_inv_t_mont,
            ],
            &mut acc_t[done..],
            &acc_gamma[done..],
        )?;
    }
    Ok(())
}

/// The portable loop on a tail shorter than a vector, out of line (see [`accumulate_tail`]).
#[cold]
#[inline(never)]
fn finish_tail(
    t: &Modulus,
    [neg_q_inv_t_mont, neg_q_inv_gamma, gamma_mod_t, gamma_inv_t_mont]: [u32; 4],
    acc_t: &mut [u32],
    acc_gamma: &[u32],
) -> Result<(), RingError> {
    Portable.behz_finish(
        t,
        Mont::from_word(neg_q_inv_t_mont),
        neg_q_inv_gamma,
        gamma_mod_t,
        Mont::from_word(gamma_inv_t_mont),
        acc_t,
        acc_gamma,
    )
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

/// [`crate::ClientKernels::cdt_scan`] on Helium (`L` a positive multiple of 8, checked at
/// compile time). Entries must be at most `2^31` (larger ones give unspecified results).
pub(super) fn cdt_scan<const L: usize>(
    words: &[u32; L],
    cdt: &[u32],
    base: i32,
    out: &mut [i8; L],
) {
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
