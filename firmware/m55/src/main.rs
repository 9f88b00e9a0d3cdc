//! Zeppelin on the emulated Cortex-M55 (QEMU `mps3-an547`): on-target tests with PASS/FAIL
//! lines, then measurements (instructions retired under QEMU `-icount shift=0`, stack
//! high-water marks). The exit status is the number of failures (0: all passed).
#![no_std]
#![no_main]

mod audit_controls;
mod behz_tests;
mod bfv_bench;
mod chacha_tests;
mod harness;
mod kat;
mod meter;
mod metric;
mod mve_tests;
mod ring_tests;
mod sampler_tests;
mod table_aes;
mod tape;

use cortex_m_rt::entry;
use cortex_m_semihosting::hprintln;
use harness::Harness;
use zeppelin::{Seal4096, Zeppelin4096};
use zeppelin_harness::report;
use zeppelin_ring::mve::Mve;
use zeppelin_ring::Portable;

static mut BUFS: [[u32; ring_tests::N]; 4] = [[0; ring_tests::N]; 4];
static mut SEAL: bfv_bench::Objects<Seal4096> = bfv_bench::Objects::zeroed();
static mut ZEPPELIN: bfv_bench::Objects<Zeppelin4096> = bfv_bench::Objects::zeroed();
static mut SCRATCH: [u32; ring_tests::N] = [0; ring_tests::N];
static mut SAMPLES: [i8; ring_tests::N] = [0; ring_tests::N];
static mut EXPECT: [u32; ring_tests::N] = [0; ring_tests::N];

#[entry]
fn main() -> ! {
    let mut core = match cortex_m::Peripherals::take() {
        Some(p) => p,
        None => fail_hard("core peripherals already taken"),
    };
    meter::start_systick(&mut core.SYST);
    audit_controls::keep();
    let mut h = Harness::default();
    let (expected, measured) = meter::calibrate(500_000);
    h.check(
        "instruction counter: a 1,000,001-instruction asm loop measures within 0.1%",
        measured.abs_diff(expected) <= expected / 1000,
        format_args!("expected {expected}, measured {measured}"),
    );
    hprintln!(
        "INFO calibration: {} instructions executed, {} measured",
        expected,
        measured
    );
    // SAFETY: single-threaded firmware, no interrupts; the only references to these buffers.
    let (scratch, expect) = unsafe {
        (
            &mut *core::ptr::addr_of_mut!(SCRATCH),
            &mut *core::ptr::addr_of_mut!(EXPECT),
        )
    };
    // SAFETY: as above.
    let bufs = unsafe { &mut *core::ptr::addr_of_mut!(BUFS) };
    ring_tests::run(&mut h, Portable, scratch, expect);
    ring_tests::run(&mut h, Mve, scratch, expect);
    mve_tests::run(&mut h, bufs);
    mve_tests::ablation(bufs);
    behz_tests::run(&mut h, bufs, scratch, expect);
    behz_tests::ablation(bufs);
    sampler_tests::run(&mut h);
    // SAFETY: as above.
    let samples = unsafe { &mut *core::ptr::addr_of_mut!(SAMPLES) };
    sampler_tests::ablation(&mut bufs[0], samples);
    table_aes::self_test(&mut h);
    table_aes::keystream_cost();
    chacha_tests::run(&mut h);
    chacha_tests::cost(&mut h);
    // SAFETY: as above.
    let (seal, zep) = unsafe {
        (
            &mut *core::ptr::addr_of_mut!(SEAL),
            &mut *core::ptr::addr_of_mut!(ZEPPELIN),
        )
    };
    kat::run_all(&mut h, seal, zep);
    let rows = bfv_bench::run(&mut h, seal);
    bfv_bench::print_table::<Seal4096>("Seal4096", &rows);
    let rows = bfv_bench::run(&mut h, zep);
    bfv_bench::print_table::<Zeppelin4096>("Zeppelin4096", &rows);
    // Each preset's NTTs on its own tables (METRIC lines; Tables 3 and 7: src/bin/paper_tables.rs).
    metric::ntt_metrics::<Seal4096, _>("Seal4096", "portable", Portable, &mut bufs[0]);
    metric::ntt_metrics::<Seal4096, _>("Seal4096", "mve", Mve, &mut bufs[0]);
    metric::ntt_metrics::<Zeppelin4096, _>("Zeppelin4096", "portable", Portable, &mut bufs[0]);
    metric::ntt_metrics::<Zeppelin4096, _>("Zeppelin4096", "mve", Mve, &mut bufs[0]);

    hprintln!("RESULT {} passed, {} failed", h.passed, h.failed);
    h.exit()
}

fn fail_hard(why: &str) -> ! {
    report::fail_and_exit(format_args!("harness: {}", why))
}

#[panic_handler]
fn panic(info: &core::panic::PanicInfo) -> ! {
    report::fail_and_exit(format_args!("panic: {}", info))
}
