//! Instruction counting and stack high-water marks on the emulated Cortex-M55.
//!
//! QEMU models no cycles and the DWT cycle counter reads zero. Under `-icount shift=0` every
//! retired instruction advances virtual time by one nanosecond, and SysTick, clocked at the
//! AN547's 32 MHz, ticks once per 31.25 retired instructions. Figures from here are
//! therefore **instructions retired (QEMU)**, with a resolution of one tick (31.25), and are
//! never to be read as cycles: an MVE instruction counts once although it works on four lanes.

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

/// Instructions retired by `f`, from the SysTick ticks it spans (one wrap at most: an
/// operation may take up to 2^24 ticks, about 524 million instructions).
#[inline(never)]
pub fn instructions<F: FnMut()>(mut f: F) -> u32 {
    let start = SYST::get_current();
    f();
    let end = SYST::get_current();
    let ticks = start.wrapping_sub(end) & SYST_MASK;
    // 31.25 instructions per tick, exactly.
    ticks * 125 / 4
}

/// Median over [`RUNS`] runs of [`instructions`]; `f` is called `RUNS` times.
pub fn median_instructions<F: FnMut()>(mut f: F) -> u32 {
    let mut samples = [0u32; RUNS];
    for s in samples.iter_mut() {
        *s = instructions(&mut f);
    }
    samples.sort_unstable();
    samples[RUNS / 2]
}

/// How much of the stack below the caller's frame may be painted.
const PAINT_BYTES: usize = 16 * 1024;
const PAINT: u32 = 0x5a5a_c3c3;

/// Stack high-water mark of `f`, in bytes below the measuring frame: paint the region below
/// the stack pointer, run `f` one level deeper, then find the lowest word it changed.
#[inline(never)]
pub fn stack_bytes<F: FnOnce()>(f: F) -> usize {
    let sp: usize;
    // SAFETY: reads the stack pointer; no memory access.
    unsafe { asm!("mov {}, sp", out(reg) sp, options(nomem, nostack, preserves_flags)) };
    let bottom = sp - PAINT_BYTES;
    // Paint with a plain store loop in asm: a call here would push its frame into the
    // region being painted. Nothing lives below the stack pointer (no interrupts are enabled).
    // SAFETY: [bottom, sp) is unused stack inside RAM (the stack has PAINT_BYTES of headroom,
    // checked by the linker's _stack_end assertion and by `stack_headroom`).
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

/// Calibration: a loop of exactly `2·iterations + 1` instructions (`subs` + `bne` per
/// iteration, one `mov`) measured with [`instructions`]; checks the 31.25 instructions per
/// tick scale on this QEMU. Returns (expected, measured).
pub fn calibrate(iterations: u32) -> (u32, u32) {
    let measured = instructions(|| {
        // SAFETY: register-only loop.
        unsafe {
            asm!(
                "mov {n}, {it}",
                "2:",
                "subs {n}, {n}, #1",
                "bne 2b",
                it = in(reg) iterations,
                n = out(reg) _,
                options(nomem, nostack),
            )
        };
    });
    (2 * iterations + 1, measured)
}
