//! Instruction counting and stack high-water marks on the emulated Cortex-M33.
//!
//! QEMU models no cycles and the DWT cycle counter reads zero. Under `-icount shift=0` every
//! retired instruction advances virtual time by one nanosecond and SysTick (core clock)
//! ticks at the board's clock, so ticks are proportional to retired instructions. The
//! ratio is not assumed: [`calibrate`] measures it on a loop of known length. Figures are
//! **instructions retired (QEMU)**, never cycles.

use core::arch::asm;
use cortex_m::peripheral::syst::SystClkSource;
use cortex_m::peripheral::SYST;

/// Runs per measurement; the median is reported.
pub const RUNS: usize = 11;

const SYST_MASK: u32 = 0x00ff_ffff;

/// Free-running SysTick on the core clock, counting down from 2^24 - 1, no interrupt.
pub fn start_systick(syst: &mut SYST) {
    syst.disable_interrupt();
    syst.set_clock_source(SystClkSource::Core);
    syst.set_reload(SYST_MASK);
    syst.clear_current();
    syst.enable_counter();
}

/// SysTick ticks spanned by `f` (at most one wrap of the 24-bit counter).
#[inline(never)]
pub fn ticks<F: FnOnce()>(f: F) -> u32 {
    let start = SYST::get_current();
    f();
    let end = SYST::get_current();
    start.wrapping_sub(end) & SYST_MASK
}

/// Instructions per tick as a fraction `(instructions, ticks)`, from a `subs`/`bne` loop of
/// `2 * ITERATIONS + 2` instructions.
pub fn calibrate() -> (u64, u64) {
    const ITERATIONS: u32 = 4_000_000;
    let t = ticks(|| {
        // SAFETY: a register-only countdown loop.
        unsafe {
            asm!(
                "mov {n}, {iters}",
                "2:",
                "subs {n}, {n}, #1",
                "bne 2b",
                n = out(reg) _,
                iters = in(reg) ITERATIONS,
                options(nomem, nostack),
            );
        }
    });
    (2 * ITERATIONS as u64 + 2, t.max(1) as u64)
}

/// Converts ticks to instructions with the calibration.
pub fn to_instructions(ticks: u32, calibration: (u64, u64)) -> u64 {
    (ticks as u64 * calibration.0 + calibration.1 / 2) / calibration.1
}

/// Median of `RUNS` samples.
pub fn median(samples: &mut [u32; RUNS]) -> u32 {
    samples.sort_unstable();
    samples[RUNS / 2]
}

const PAINT_BYTES: usize = 32 * 1024;
const PAINT: u32 = 0x5a5a_c3c3;

/// Stack high-water mark of `f`, in bytes below the measuring frame: paint the region below
/// the stack pointer, run `f` one level deeper, then find the lowest word it changed.
#[inline(never)]
pub fn stack_bytes<F: FnOnce()>(f: F) -> usize {
    let sp: usize;
    // SAFETY: reads the stack pointer only.
    unsafe { asm!("mov {}, sp", out(reg) sp, options(nomem, nostack, preserves_flags)) };
    let bottom = sp - PAINT_BYTES;
    // A store loop in asm: a call here would put its own frame into the painted region.
    // SAFETY: [bottom, sp) is unused stack (4 MiB RAM, stack at its top, no interrupts).
    unsafe {
        asm!(
            "2:",
            "str {pat}, [{p}], #4",
            "cmp {p}, {end}",
            "blo 2b",
            p = inout(reg) bottom => _,
            end = in(reg) sp,
            pat = in(reg) PAINT,
            options(nostack),
        );
    }
    run_below(f);
    let mut addr = bottom;
    while addr < sp {
        // SAFETY: aligned reads of the region painted above.
        let word = unsafe { core::ptr::read_volatile(addr as *const u32) };
        if word != PAINT {
            break;
        }
        addr += 4;
    }
    sp - addr
}

#[inline(never)]
fn run_below<F: FnOnce()>(f: F) {
    f()
}
