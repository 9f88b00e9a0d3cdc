//! The Helium negative controls of the binary audit (`security/audit`); the core-ISA ones are
//! in `zeppelin_harness::audit_controls`. Linked, never called (see [`keep`]).

use core::hint::black_box;

extern "C" {
    /// R3 (MVE gather): `vldrw.u32 q1, [r1, q0, uxtw #2]` with secret offsets in q0.
    fn zeppelin_audit_leaky_gather(secret: *const u32, table: *const u32, out: *mut u32);
    /// R4 (MVE scatter): `vstrw.32 q1, [r1, q0, uxtw #2]` with secret offsets in q0.
    fn zeppelin_audit_leaky_scatter(secret: *const u32, table: *mut u32);
}

core::arch::global_asm!(
    ".section .text.zeppelin_audit_mve_controls,\"ax\",%progbits",
    ".p2align 1",
    ".global zeppelin_audit_leaky_gather",
    ".type zeppelin_audit_leaky_gather,%function",
    ".thumb_func",
    "zeppelin_audit_leaky_gather:",
    "    vldrw.u32 q0, [r0]",
    "    vldrw.u32 q1, [r1, q0, uxtw #2]",
    "    vstrw.32 q1, [r2]",
    "    bx lr",
    ".size zeppelin_audit_leaky_gather, . - zeppelin_audit_leaky_gather",
    "",
    ".global zeppelin_audit_leaky_scatter",
    ".type zeppelin_audit_leaky_scatter,%function",
    ".thumb_func",
    "zeppelin_audit_leaky_scatter:",
    "    vldrw.u32 q0, [r0]",
    "    vmov.i32 q1, #0",
    "    vstrw.32 q1, [r1, q0, uxtw #2]",
    "    bx lr",
    ".size zeppelin_audit_leaky_scatter, . - zeppelin_audit_leaky_scatter",
    ".text",
);

/// Keeps every audit control in the image (addresses escape through `black_box`).
pub fn keep() {
    zeppelin_harness::audit_controls::keep();
    black_box([
        zeppelin_audit_leaky_gather as *const () as usize,
        zeppelin_audit_leaky_scatter as *const () as usize,
    ]);
}
