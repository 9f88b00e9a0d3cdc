//! SysTick as an instruction meter, and stack high-water marks.
//!
//! QEMU models no cycles and the DWT cycle counter reads zero. Under `-icount shift=0` every
//! retired instruction advances virtual time by one nanosecond, and SysTick on the core clock
//! ticks at the board's clock rate, so ticks are proportional to retired instructions. The
//! ratio is the board's (see each firmware crate); figures are **instructions retired
//! (QEMU)**, never cycles.

use core::arch::asm;
use cortex_m::peripheral::syst::SystClkSource;
use cortex_m::peripheral::SYST;

/// Runs per measurement; the median is reported.
pub const RUNS: usize = 11;

/// SysTick's 24-bit counter.
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

/// Median of [`RUNS`] samples (sorts them in place).
pub fn median(samples: &mut [u32; RUNS]) -> u32 {
    samples.sort_unstable();
    samples[RUNS / 2]
}

/// Median over [`RUNS`] calls of `sample` (each call one measurement).
pub fn median_of<F: FnMut() -> u32>(mut sample: F) -> u32 {
    let mut samples = [0u32; RUNS];
    for s in samples.iter_mut() {
        *s = sample();
    }
    median(&mut samples)
}

/// The calibration loop: `mov` of `iterations` into a register, then `iterations` rounds of
/// `subs` + `bne`, so `2·iterations + 1` instructions once `iterations` is in a register
/// (plus whatever the caller needs to materialise it). Always inlined, so that it runs
/// inside the measured closure.
#[inline(always)]
pub fn countdown_loop(iterations: u32) {
    // SAFETY: a register-only countdown loop.
    unsafe {
        asm!(
            "mov {n}, {it}",
            "2:",
            "subs {n}, {n}, #1",
            "bne 2b",
            n = out(reg) _,
            it = in(reg) iterations,
            options(nomem, nostack),
        )
    };
}

/// The pattern painted below the stack pointer.
const PAINT: u32 = 0x5a5a_c3c3;

/// Stack high-water mark of `f`, in bytes below the measuring frame: paint `PAINT_BYTES`
/// below the stack pointer, run `f` one level deeper, then find the lowest word it changed.
///
/// The caller guarantees `PAINT_BYTES` of unused stack below its frame (its memory layout
/// reserves it), and that no interrupt handler runs meanwhile.
#[inline(never)]
pub fn stack_bytes<const PAINT_BYTES: usize, F: FnOnce()>(f: F) -> usize {
    let sp: usize;
    // SAFETY: reads the stack pointer; no memory access.
    unsafe { asm!("mov {}, sp", out(reg) sp, options(nomem, nostack, preserves_flags)) };
    let bottom = sp - PAINT_BYTES;
    // Paint with a plain store loop in asm: a call here would push its frame into the
    // region being painted. Nothing lives below the stack pointer (no interrupts are enabled).
    // SAFETY: [bottom, sp) is unused stack inside RAM (the caller's layout reserves
    // PAINT_BYTES of headroom below this frame).
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

/// Calls `f` in a frame of its own, so that its locals sit below the painted line.
#[inline(never)]
fn run_below<F: FnOnce()>(f: F) {
    f()
}
