//! Instruction counting on the emulated Cortex-M55, over the shared SysTick meter
//! (`zeppelin_harness::meter`).
//!
//! Under `-icount shift=0` SysTick, clocked at the AN547's 32 MHz, ticks once per 31.25
//! retired instructions. Figures from here are therefore **instructions retired (QEMU)**,
//! with a resolution of one tick (31.25), and are never to be read as cycles: an MVE
//! instruction counts once although it works on four lanes.

use zeppelin_harness::meter::{countdown_loop, median_of, ticks};
pub use zeppelin_harness::meter::{start_systick, RUNS};

/// Instructions retired by `f`, from the SysTick ticks it spans (one wrap at most: an
/// operation may take up to 2^24 ticks, about 524 million instructions).
pub fn instructions<F: FnMut()>(f: F) -> u32 {
    // 31.25 instructions per tick, exactly.
    ticks(f) * 125 / 4
}

/// Median over [`RUNS`] runs of [`instructions`]; `f` is called `RUNS` times.
pub fn median_instructions<F: FnMut()>(mut f: F) -> u32 {
    median_of(|| instructions(&mut f))
}

/// [`median_instructions`] of `f`, and the stack high-water mark of one more call of it.
pub fn median_of_instructions_stack<F: FnMut()>(mut f: F) -> (u32, usize) {
    let n = median_instructions(&mut f);
    (n, stack_bytes(f))
}

/// How much of the stack below the caller's frame may be painted.
const PAINT_BYTES: usize = 16 * 1024;

/// Stack high-water mark of `f`, in bytes below the measuring frame
/// (`zeppelin_harness::meter::stack_bytes` over [`PAINT_BYTES`]; the stack, at the top of
/// the 2 MiB SRAM, has that much headroom below every measuring frame).
pub fn stack_bytes<F: FnOnce()>(f: F) -> usize {
    zeppelin_harness::meter::stack_bytes::<PAINT_BYTES, F>(f)
}

/// Calibration: a loop of exactly `2·iterations + 1` instructions (`subs` + `bne` per
/// iteration, one `mov`) measured with [`instructions`]; checks the 31.25 instructions per
/// tick scale on this QEMU. Returns (expected, measured).
pub fn calibrate(iterations: u32) -> (u32, u32) {
    let measured = instructions(|| countdown_loop(iterations));
    (2 * iterations + 1, measured)
}
