//! The crate's only `unsafe` code: Cortex-M33 (Armv8-M Mainline with the DSP extension)
//! instructions that the portable code cannot express.
//!
//! * [`lane_add`] / [`lane_sub`]: the `uadd8` / `usub8` byte-lane instructions behind
//!   [`crate::arith`]'s lane arithmetic;
//! * [`isw_and`]: the ISW AND gadget of [`crate::masked`] as hand-written assembly
//!   (`rblwe_isw_and`), so the compiler cannot factor its expression and recombine shares;
//!   `firmware/m33/check-gadget.py` checks the linked binary.
//!
//! Compiled only for `target_arch = "arm"` with `target_feature = "dsp"`; everywhere else the
//! portable forms in `arith` and `masked` are used and this module does not exist.

/// Lane-wise `x + y mod 256` (`uadd8`).
#[inline(always)]
pub(crate) fn lane_add(x: u32, y: u32) -> u32 {
    let r: u32;
    // SAFETY: `uadd8` reads two registers and writes one register and the GE flags; it
    // touches no memory and no stack.
    unsafe {
        core::arch::asm!("uadd8 {r}, {x}, {y}", r = lateout(reg) r, x = in(reg) x, y = in(reg) y,
            options(pure, nomem, nostack));
    }
    r
}

/// Lane-wise `x - y mod 256` (`usub8`).
#[inline(always)]
pub(crate) fn lane_sub(x: u32, y: u32) -> u32 {
    let r: u32;
    // SAFETY: `usub8` reads two registers and writes one register and the GE flags; it
    // touches no memory and no stack.
    unsafe {
        core::arch::asm!("usub8 {r}, {x}, {y}", r = lateout(reg) r, x = in(reg) x, y = in(reg) y,
            options(pure, nomem, nostack));
    }
    r
}

core::arch::global_asm!(
    ".section .text.rblwe_isw_and,\"ax\",%progbits",
    ".global rblwe_isw_and",
    ".type rblwe_isw_and,%function",
    ".thumb_func",
    "rblwe_isw_and:",
    // AAPCS: r0 = x0, r1 = x1, r2 = y0, r3 = y1, [sp] = r. Returns z0 in r0, z1 in r1.
    // Share 0 of an input and share 1 of the same input never meet in one instruction;
    // the two cross products enter t only after r does.
    "    ldr   r12, [sp]",
    "    push  {{r4, r5}}",
    "    and   r4, r0, r3",  // x0 & y1
    "    eor   r4, r4, r12", // r ^ (x0 & y1)
    "    and   r5, r1, r2",  // x1 & y0
    "    eor   r4, r4, r5",  // t = r ^ (x0 & y1) ^ (x1 & y0)
    "    and   r0, r0, r2",  // x0 & y0
    "    eor   r0, r0, r12", // z0 = (x0 & y0) ^ r
    "    and   r1, r1, r3",  // x1 & y1
    "    eor   r1, r1, r4",  // z1 = (x1 & y1) ^ t
    "    pop   {{r4, r5}}",
    "    bx    lr",
    ".size rblwe_isw_and, .-rblwe_isw_and",
);

extern "C" {
    fn rblwe_isw_and(x0: u32, x1: u32, y0: u32, y1: u32, r: u32) -> u64;
}

/// ISW AND gadget on two-share Boolean values (hand-written assembly): returns shares of
/// `(x0 ^ x1) & (y0 ^ y1)`, masked by the fresh random `r`.
#[inline(always)]
pub(crate) fn isw_and(x0: u32, x1: u32, y0: u32, y1: u32, r: u32) -> (u32, u32) {
    // SAFETY: `rblwe_isw_and` follows the AAPCS, reads only its arguments, restores r4/r5
    // and touches no other memory.
    let z = unsafe { rblwe_isw_and(x0, x1, y0, y1, r) };
    (z as u32, (z >> 32) as u32)
}
