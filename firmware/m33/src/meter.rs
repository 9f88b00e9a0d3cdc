//! Instruction counting on the emulated Cortex-M33, over the shared SysTick meter
//! (`zeppelin_harness::meter`).
//!
//! Under `-icount shift=0` SysTick ticks at the AN505's clock, proportionally to retired
//! instructions. The ratio is not assumed: [`calibrate`] measures it at start-up on a loop of
//! known length. Figures are **instructions retired (QEMU)**, never cycles.

use zeppelin_harness::meter::countdown_loop;
pub use zeppelin_harness::meter::{median, median_of, start_systick, ticks, RUNS};

/// Instructions per tick as a fraction `(instructions, ticks)`, from a `subs`/`bne` loop of
/// `2 * ITERATIONS + 2` instructions.
pub fn calibrate() -> (u64, u64) {
    const ITERATIONS: u32 = 4_000_000;
    let t = ticks(|| countdown_loop(ITERATIONS));
    (2 * ITERATIONS as u64 + 2, t.max(1) as u64)
}

/// Converts ticks to instructions with the calibration.
pub fn to_instructions(ticks: u32, calibration: (u64, u64)) -> u64 {
    (ticks as u64 * calibration.0 + calibration.1 / 2) / calibration.1
}

/// How much of the stack below the caller's frame may be painted (4 MiB RAM, stack at its
/// top, no interrupts).
const PAINT_BYTES: usize = 32 * 1024;

/// Stack high-water mark of `f`, in bytes below the measuring frame
/// (`zeppelin_harness::meter::stack_bytes` over [`PAINT_BYTES`]).
pub fn stack_bytes<F: FnOnce()>(f: F) -> usize {
    zeppelin_harness::meter::stack_bytes::<PAINT_BYTES, F>(f)
}
