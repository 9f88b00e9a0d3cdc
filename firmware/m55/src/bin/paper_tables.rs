//! The paper's remaining tables on target, in an image of their own (both 4096 presets):
//!
//! - Table 3 (`ntt_e2e.rs`): end-to-end encryption and decryption with the scalar NTT
//!   against the Helium NTT, same image, same objects, keystream excluded, outputs checked
//!   byte for byte against the recording run.
//! - Table 7 (`stages.rs`): live memory per stage of encryption and decryption (painted
//!   stack high-water mark + the exact sizes of the objects live in the stage).
//!
//! Its own image so that the audited test image keeps its code and inlining unchanged: the
//! extra call sites of the measurement keystreams (`tape.rs`, test-only stand-ins) would
//! otherwise pull them out of line onto that image's audited secret path. The library code
//! measured here is the code the audited images run. Prints `TABLE3`, `TABLE7`, `METRIC`
//! and PASS/FAIL lines, then `RESULT n passed, m failed`; exit status 0 only if all passed.
#![no_std]
#![no_main]

#[path = "../bfv_bench.rs"]
#[expect(
    dead_code,
    reason = "the objects and seeds of the main image's table; its table runs there"
)]
mod bfv_bench;
#[path = "../harness.rs"]
#[expect(dead_code, reason = "shared with the main image, which uses all of it")]
mod harness;
#[path = "../meter.rs"]
#[expect(dead_code, reason = "shared with the main image, which uses all of it")]
mod meter;
#[path = "../metric.rs"]
#[expect(dead_code, reason = "shared with the main image, which uses all of it")]
mod metric;
#[path = "../ntt_e2e.rs"]
mod ntt_e2e;
#[path = "../scalar_ntt.rs"]
mod scalar_ntt;
#[path = "../stages.rs"]
mod stages;
#[path = "../table_aes.rs"]
#[expect(
    dead_code,
    reason = "needed by bfv_bench's table, which runs in the main image"
)]
mod table_aes;
#[path = "../tape.rs"]
mod tape;

use cortex_m_semihosting::hprintln;
use harness::{Harness, TestRng};
use scalar_ntt::ScalarNtt;
use zeppelin::params::Params;
use zeppelin::{Seal4096, Workspace, Zeppelin4096};
use zeppelin_harness::report;

static mut SEAL: bfv_bench::Objects<Seal4096> = bfv_bench::Objects::zeroed();
static mut ZEPPELIN: bfv_bench::Objects<Zeppelin4096> = bfv_bench::Objects::zeroed();
static mut SEAL_SCALAR: Workspace<Seal4096, ScalarNtt> = Workspace::with_backend(ScalarNtt);
static mut ZEPPELIN_SCALAR: Workspace<Zeppelin4096, ScalarNtt> = Workspace::with_backend(ScalarNtt);

/// Table 7 (which also makes the keys and the ciphertexts), then Table 3, for preset `P`.
fn tables<P: Params>(
    h: &mut Harness,
    o: &mut bfv_bench::Objects<P>,
    scalar_ws: &mut Workspace<P, ScalarNtt>,
    preset: &str,
) {
    let mut rng = TestRng::new(0x5107);
    for s in o.slots.as_mut().iter_mut() {
        *s = rng.below(P::T);
    }
    stages::run(h, o, preset);
    ntt_e2e::run(h, o, scalar_ws, preset);
}

#[cortex_m_rt::entry]
fn main() -> ! {
    let mut core = match cortex_m::Peripherals::take() {
        Some(p) => p,
        None => report::fail_and_exit(format_args!("harness: core peripherals already taken")),
    };
    meter::start_systick(&mut core.SYST);
    let mut h = Harness::default();
    // SAFETY: single-threaded firmware without interrupts; the only references to the statics.
    let (seal, zep, seal_scalar, zep_scalar) = unsafe {
        (
            &mut *core::ptr::addr_of_mut!(SEAL),
            &mut *core::ptr::addr_of_mut!(ZEPPELIN),
            &mut *core::ptr::addr_of_mut!(SEAL_SCALAR),
            &mut *core::ptr::addr_of_mut!(ZEPPELIN_SCALAR),
        )
    };
    tables(&mut h, seal, seal_scalar, "Seal4096");
    tables(&mut h, zep, zep_scalar, "Zeppelin4096");
    hprintln!("RESULT {} passed, {} failed", h.passed, h.failed);
    h.exit()
}

#[panic_handler]
fn panic(info: &core::panic::PanicInfo) -> ! {
    report::fail_and_exit(format_args!("panic: {}", info))
}
