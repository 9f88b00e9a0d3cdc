//! Negative controls of the static binary audit (`security/audit`): one deliberately leaky
//! function per rule and per acceptance heuristic. They are linked into the test images (kept
//! alive by [`keep`], never called) and the audit must flag each of them by exactly its rule,
//! with the pinned count, so that a broken disassembly parser or a too-lenient rule cannot
//! produce a green audit. Nothing here is on any secret path.
//!
//! The Rust controls are the compiler's own output for the leaky pattern; the assembly ones
//! pin shapes the compiler emits only at other optimisation levels or not on demand
//! (`leaky_bitlen` is LLVM's `opt-level = "s"` code for a bit-length loop, the shape the
//! review showed passing R2; the IT-block return, the table branch and `vsqrt`).

use core::hint::black_box;

/// R1 (variable-latency instruction): `udiv` of a secret.
#[inline(never)]
pub fn leaky_udiv(secret: u32, divisor: u32) -> u32 {
    secret / (divisor | 1)
}

/// R1 (variable-latency instruction): `vdiv.f32` of a secret.
#[inline(never)]
pub fn leaky_vdiv(secret: f32, divisor: f32) -> f32 {
    secret / divisor
}

/// R1 (call of a variable-latency helper): 64-bit division calls `__aeabi_uldivmod`.
#[inline(never)]
pub fn leaky_udiv64(secret: u64, divisor: u64) -> u64 {
    secret / (divisor | 1)
}

/// R2 (conditional branch): a call made only when a secret bit is set.
#[inline(never)]
pub fn leaky_branch(secret: u32) -> u32 {
    if secret & 0x80 != 0 {
        return sink(secret);
    }
    secret
}

#[inline(never)]
fn sink(x: u32) -> u32 {
    black_box(x)
}

/// Bounds-check heuristic (R2): a branch on a secret to an explicit panic is not one of
/// Rust's compiler-inserted checks, so it must not be accepted as a bounds check.
#[inline(never)]
pub fn leaky_secret_panic(secret: u32) -> u32 {
    if secret == 0x5a {
        panic!("audit control: secret-dependent abort");
    }
    secret.wrapping_add(1)
}

/// R3 (register-indexed load): a table lookup at a secret index.
#[inline(never)]
pub fn leaky_table_load(table: &[u8; 256], secret: u8) -> u8 {
    table[secret as usize]
}

/// R3 (load through a register+register address): `add.w r0, r0, r1, lsl #2 ; ldrb r0, [r0, #3]`.
#[inline(never)]
pub fn leaky_sbox_offset(table: &[[u8; 4]; 64], secret: u32) -> u8 {
    table[(secret & 63) as usize][3]
}

/// R4 (register-indexed store): `str.w r2, [r0, r1, lsl #2]` at a secret index.
#[inline(never)]
pub fn leaky_store(buf: &mut [u32; 64], secret: u32, value: u32) {
    buf[(secret & 63) as usize] = value;
}

/// R4 (store through a register+register address).
#[inline(never)]
pub fn leaky_store_offset(buf: &mut [[u32; 2]; 64], secret: u32, value: u32) {
    buf[(secret & 63) as usize][1] = value;
}

extern "C" {
    /// R5 / back-edge heuristic: trip count = bit length of the secret (`lsrs ; bne`).
    pub fn zeppelin_audit_leaky_bitlen(secret: u32) -> u32;
    /// R5 / loop-exit heuristic: leaves a loop when a secret byte is zero.
    pub fn zeppelin_audit_leaky_loop_exit(secret: *const u8) -> u32;
    /// R5 / loop-guard heuristic: skips a counted loop when a secret bit is clear.
    pub fn zeppelin_audit_leaky_loop_guard(secret: u32, out: *mut u32);
    /// R2 (pc write in an IT block): returns early when the secret is zero.
    pub fn zeppelin_audit_leaky_it_return(secret: u32) -> u32;
    /// R2 (table branch): `tbb` indexed by a secret.
    pub fn zeppelin_audit_leaky_table_branch(secret: u32) -> u32;
    /// R1 (variable-latency instruction): `vsqrt.f32` of a secret (`core` has no `sqrt`).
    pub fn zeppelin_audit_leaky_vsqrt(secret: f32) -> f32;
}

core::arch::global_asm!(
    ".section .text.zeppelin_audit_controls,\"ax\",%progbits",
    ".p2align 1",
    ".global zeppelin_audit_leaky_bitlen",
    ".type zeppelin_audit_leaky_bitlen,%function",
    ".thumb_func",
    "zeppelin_audit_leaky_bitlen:",
    "    movs r1, #0",
    "1:  adds r1, #1",
    "    lsrs r0, r0, #1",
    "    bne 1b",
    "    mov r0, r1",
    "    bx lr",
    ".size zeppelin_audit_leaky_bitlen, . - zeppelin_audit_leaky_bitlen",
    "",
    ".global zeppelin_audit_leaky_loop_exit",
    ".type zeppelin_audit_leaky_loop_exit,%function",
    ".thumb_func",
    "zeppelin_audit_leaky_loop_exit:",
    "    movs r2, #0",
    "1:  ldrb r3, [r0], #1",
    "    cmp r3, #0",
    "    beq 2f",
    "    adds r2, #1",
    "    b 1b",
    "2:  mov r0, r2",
    "    bx lr",
    ".size zeppelin_audit_leaky_loop_exit, . - zeppelin_audit_leaky_loop_exit",
    "",
    ".global zeppelin_audit_leaky_loop_guard",
    ".type zeppelin_audit_leaky_loop_guard,%function",
    ".thumb_func",
    "zeppelin_audit_leaky_loop_guard:",
    "    movs r2, #0",
    "    movs r3, #8",
    "    tst r0, #1",
    "    beq 2f",
    "1:  str r2, [r1], #4",
    "    subs r3, #1",
    "    bne 1b",
    "2:  bx lr",
    ".size zeppelin_audit_leaky_loop_guard, . - zeppelin_audit_leaky_loop_guard",
    "",
    ".global zeppelin_audit_leaky_it_return",
    ".type zeppelin_audit_leaky_it_return,%function",
    ".thumb_func",
    "zeppelin_audit_leaky_it_return:",
    "    cmp r0, #0",
    "    it eq",
    "    bxeq lr",
    "    movs r0, #1",
    "    bx lr",
    ".size zeppelin_audit_leaky_it_return, . - zeppelin_audit_leaky_it_return",
    "",
    ".global zeppelin_audit_leaky_table_branch",
    ".type zeppelin_audit_leaky_table_branch,%function",
    ".thumb_func",
    "zeppelin_audit_leaky_table_branch:",
    "    and r0, r0, #1",
    "    tbb [pc, r0]",
    "3:  .byte (4f - 3b) / 2, (5f - 3b) / 2",
    "4:  movs r0, #7",
    "    bx lr",
    "5:  movs r0, #9",
    "    bx lr",
    ".size zeppelin_audit_leaky_table_branch, . - zeppelin_audit_leaky_table_branch",
    "",
    ".global zeppelin_audit_leaky_vsqrt",
    ".type zeppelin_audit_leaky_vsqrt,%function",
    ".thumb_func",
    "zeppelin_audit_leaky_vsqrt:",
    // vsqrt.f32 s0, s0, as its encoding: the M33 build has no FPU feature for the assembler.
    "    .inst.w 0xeeb10ac0",
    "    bx lr",
    ".size zeppelin_audit_leaky_vsqrt, . - zeppelin_audit_leaky_vsqrt",
    ".text",
);

/// Keeps every control in the linked image (their addresses escape through `black_box`);
/// none is called.
pub fn keep() {
    black_box([
        leaky_udiv as *const () as usize,
        leaky_vdiv as *const () as usize,
        leaky_udiv64 as *const () as usize,
        zeppelin_audit_leaky_vsqrt as *const () as usize,
        leaky_branch as *const () as usize,
        leaky_secret_panic as *const () as usize,
        leaky_table_load as *const () as usize,
        leaky_sbox_offset as *const () as usize,
        leaky_store as *const () as usize,
        leaky_store_offset as *const () as usize,
        zeppelin_audit_leaky_bitlen as *const () as usize,
        zeppelin_audit_leaky_loop_exit as *const () as usize,
        zeppelin_audit_leaky_loop_guard as *const () as usize,
        zeppelin_audit_leaky_it_return as *const () as usize,
        zeppelin_audit_leaky_table_branch as *const () as usize,
    ]);
}
