//! The crate's only `unsafe` code: Cortex-M33 (Armv8-M Mainline with the DSP extension)
//! instructions that the portable code cannot express.
//!
//! * [`lane_add`] / [`lane_sub`]: the `uadd8` / `usub8` byte-lane instructions behind
//!   [`crate::arith`]'s lane arithmetic;
//! * [`isw_and`]: the ISW AND gadget of [`crate::masked`] as hand-written assembly
//!   (`rblwe_isw_and`), so the compiler cannot factor its expression and recombine shares;
//!   `firmware/m33/check-gadget.py` checks the linked binary;
//! * [`a2b_msb`]: the masked decoder's arithmetic-to-Boolean conversion (`rblwe_a2b_msb`),
//!   with share 0 and share 1 kept in disjoint registers;
//! * [`pack_shares`]: the masked decoder's store of the two message-bit shares
//!   (`rblwe_pack_shares`), with no share-to-share register or store-bus transition.
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

core::arch::global_asm!(
    ".section .text.rblwe_pack_shares,\"ax\",%progbits",
    ".global rblwe_pack_shares",
    ".type rblwe_pack_shares,%function",
    ".thumb_func",
    "rblwe_pack_shares:",
    // AAPCS: r0 = b0, r1 = b1 (the two Boolean shares of a message nibble), r2 = &m0[j],
    // r3 = &m1[j], [sp] = shift. ORs `b0 << shift` into m0[j] and `b1 << shift` into m1[j].
    // Share 0 and share 1 never follow each other in one register or on the store bus:
    // every register that held a share is zeroed, and a zero is stored (into the callee's
    // own argument slot) between the two share stores and after the second, so no
    // Hamming distance between consecutive values combines the two shares (compiled Rust
    // stored m0[j] and then m1[j] back to back: security/tvla found it).
    "    ldr   r12, [sp]",
    "    lsl   r0, r0, r12",
    "    lsl   r1, r1, r12",
    "    mov   r12, #0",
    "    ldrb  r12, [r2]",
    "    orr   r0, r0, r12",
    "    strb  r0, [r2]",
    "    mov   r0, #0",
    "    mov   r12, #0",
    "    str   r0, [sp]",
    "    ldrb  r12, [r3]",
    "    orr   r1, r1, r12",
    "    strb  r1, [r3]",
    "    mov   r1, #0",
    "    mov   r12, #0",
    "    str   r1, [sp]",
    "    bx    lr",
    ".size rblwe_pack_shares, .-rblwe_pack_shares",
);

core::arch::global_asm!(
    ".section .text.rblwe_a2b_msb,\"ax\",%progbits",
    ".global rblwe_a2b_msb",
    ".type rblwe_a2b_msb,%function",
    ".thumb_func",
    "rblwe_a2b_msb:",
    // AAPCS: r0 = x0, r1 = x1 (arithmetic shares, four byte lanes), r2 = &r[0..], r3 =
    // log2 q. Returns the two Boolean shares of the MSB nibble in r0 and r1. Same algorithm
    // as the portable `masked::a2b_msb` (ISW AND inlined). Register discipline, so that no
    // Hamming distance between consecutive values of a register combines two shares:
    //   share 0 only: r0, r4 (a0, then p0), r5 (g0), r6 (c0)
    //   share 1 only: r1, r7 (a1, then p1), r8 (g1), r9 (c1)
    //   cross terms of ISW (one share of each input, with fresh r): r12, lr; zeroed after use
    //   r10 = fresh random word, r11 = lane mask, r2 = pointer, r3 = loop counter (public).
    // Every saved register is zeroed before first use and before it is restored.
    "    push  {{r4, r5, r6, r7, r8, r9, r10, r11, lr}}",
    "    mov   r4, #0",
    "    mov   r5, #0",
    "    mov   r6, #0",
    "    mov   r7, #0",
    "    mov   r8, #0",
    "    mov   r9, #0",
    "    mov   r10, #0",
    "    mov   r12, #0",
    "    mov   lr, #0",
    "    sub   r3, r3, #1", // shift = loop count = log2 q - 1 (public)
    "    push  {{r3}}",
    "    ldr   r10, [r2], #4", // R0
    "    eor   r4, r0, r10",   // a0 = x0 ^ R0
    "    mov   r7, r10",       // a1 = R0
    "    ldr   r10, [r2], #4", // R1
    "    eor   r1, r1, r10",   // b1 = x1 ^ R1
    "    mov   r0, r10",       // b0 = R1
    "    ldr   r10, [r2], #4", // R2: g = ISW(a, b)
    "    and   r12, r4, r1",   // a0 & b1
    "    eor   r12, r12, r10", // R2 ^ (a0 & b1)
    "    and   lr, r7, r0",    // a1 & b0
    "    eor   r12, r12, lr",  // t = R2 ^ (a0 & b1) ^ (a1 & b0)
    "    mov   lr, #0",
    "    and   r5, r4, r0",  // a0 & b0
    "    eor   r5, r5, r10", // g0 = (a0 & b0) ^ R2
    "    and   r8, r7, r1",  // a1 & b1
    "    eor   r8, r8, r12", // g1 = (a1 & b1) ^ t
    "    mov   r12, #0",
    "    eor   r4, r4, r0", // p0 = a0 ^ b0
    "    eor   r7, r7, r1", // p1 = a1 ^ b1
    "    movw  r11, #0xfefe",
    "    movt  r11, #0xfefe", // carries stay inside their byte lane
    "1:",
    "    ldr   r10, [r2], #4", // fresh R for (t0, t1) = ISW(p, c)
    "    and   r12, r4, r9",   // p0 & c1
    "    eor   r12, r12, r10", // R ^ (p0 & c1)
    "    and   lr, r7, r6",    // p1 & c0
    "    eor   r12, r12, lr",  // t = R ^ (p0 & c1) ^ (p1 & c0)
    "    mov   lr, #0",
    "    and   r0, r4, r6",  // p0 & c0
    "    eor   r0, r0, r10", // t0 = (p0 & c0) ^ R
    "    and   r1, r7, r9",  // p1 & c1
    "    eor   r1, r1, r12", // t1 = (p1 & c1) ^ t
    "    mov   r12, #0",
    "    eor   r0, r0, r5",          // g0 ^ t0
    "    and   r6, r11, r0, lsl #1", // c0 = ((g0 ^ t0) << 1) & 0xfefefefe
    "    eor   r1, r1, r8",          // g1 ^ t1
    "    and   r9, r11, r1, lsl #1", // c1 = ((g1 ^ t1) << 1) & 0xfefefefe
    "    subs  r3, r3, #1",
    "    bne   1b",
    "    mov   r10, #0",
    "    eor   r0, r4, r6", // p0 ^ c0
    "    eor   r1, r7, r9", // p1 ^ c1
    "    pop   {{r2}}",     // shift
    "    lsr   r0, r0, r2",
    "    lsr   r1, r1, r2",
    "    movw  r11, #0x0101",
    "    movt  r11, #0x0101",
    "    and   r0, r0, r11", // the MSB of each lane, at bits 0, 8, 16, 24
    "    and   r1, r1, r11",
    "    orr   r0, r0, r0, lsr #7", // gather the four bits into a nibble
    "    orr   r0, r0, r0, lsr #14",
    "    and   r0, r0, #15",
    "    orr   r1, r1, r1, lsr #7",
    "    orr   r1, r1, r1, lsr #14",
    "    and   r1, r1, #15",
    "    mov   r4, #0",
    "    mov   r5, #0",
    "    mov   r6, #0",
    "    mov   r7, #0",
    "    mov   r8, #0",
    "    mov   r9, #0",
    "    mov   r11, #0",
    "    pop   {{r4, r5, r6, r7, r8, r9, r10, r11, pc}}",
    ".size rblwe_a2b_msb, .-rblwe_a2b_msb",
);

extern "C" {
    fn rblwe_a2b_msb(x0: u32, x1: u32, r: *const u32, log_q: u32) -> u64;
    fn rblwe_isw_and(x0: u32, x1: u32, y0: u32, y1: u32, r: u32) -> u64;
    fn rblwe_pack_shares(b0: u32, b1: u32, m0: *mut u8, m1: *mut u8, shift: u32);
}

/// ORs the two message-bit shares `b0 << shift` and `b1 << shift` into their buffers
/// (hand-written assembly `rblwe_pack_shares`, so no register or store-bus transition goes
/// from one share to the other).
#[inline(always)]
pub(crate) fn pack_shares(b0: u8, b1: u8, m0: &mut u8, m1: &mut u8, shift: u32) {
    // SAFETY: `rblwe_pack_shares` follows the AAPCS, reads and writes only the two bytes
    // behind `m0` and `m1` (valid, distinct `&mut u8`) and its own stack argument slot.
    unsafe { rblwe_pack_shares(u32::from(b0), u32::from(b1), m0, m1, shift) }
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

/// Masked arithmetic-to-Boolean conversion and MSB extraction of four byte lanes
/// (hand-written assembly `rblwe_a2b_msb`: the compiled Rust form moved share 0 and share 1
/// of a carry through one register, which security/tvla flagged). `r` holds at least
/// `log_q + 2` fresh random words; `log_q` is 7 or 8.
#[inline(always)]
pub(crate) fn a2b_msb(x0: u32, x1: u32, r: &[u32], log_q: u32) -> (u8, u8) {
    debug_assert!(r.len() >= log_q as usize + 2 && (7..=8).contains(&log_q));
    // SAFETY: `rblwe_a2b_msb` follows the AAPCS, restores r4-r11, reads `log_q + 2` words
    // from `r` (the caller's array holds RANDOM_WORDS_PER_GROUP >= log_q + 2) and writes
    // only its own stack frame.
    let z = unsafe { rblwe_a2b_msb(x0, x1, r.as_ptr(), log_q) };
    (z as u8, (z >> 32) as u8)
}
