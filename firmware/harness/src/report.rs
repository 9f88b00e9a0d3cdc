//! PASS/FAIL bookkeeping printed over semihosting, and the exit status QEMU returns.

use cortex_m_semihosting::{debug, hprintln};

/// Counts of passed and failed checks.
#[derive(Default)]
pub struct Harness {
    pub passed: u32,
    pub failed: u32,
}

impl Harness {
    /// Records one named check and prints `PASS name` or `FAIL name: why`.
    pub fn check(&mut self, name: &str, ok: bool, why: core::fmt::Arguments<'_>) {
        if self.record(ok) {
            hprintln!("PASS {}", name);
        } else {
            hprintln!("FAIL {}: {}", name, why);
        }
    }

    /// Records one named check and prints `PASS name detail` or `FAIL name detail`.
    pub fn check_detail(&mut self, name: &str, detail: &str, ok: bool) {
        if self.record(ok) {
            hprintln!("PASS {} {}", name, detail);
        } else {
            hprintln!("FAIL {} {}", name, detail);
        }
    }

    /// Counts one outcome and returns it.
    pub fn record(&mut self, ok: bool) -> bool {
        if ok {
            self.passed += 1;
        } else {
            self.failed += 1;
        }
        ok
    }

    /// Exits QEMU with status 0 if no check failed, 1 otherwise.
    pub fn exit(&self) -> ! {
        exit(self.failed == 0)
    }
}

/// Exits QEMU through semihosting: status 0 on success, 1 otherwise.
#[expect(
    clippy::empty_loop,
    reason = "reached only without a semihosting host (QEMU exits first); a plain loop keeps the measured images unchanged"
)]
pub fn exit(success: bool) -> ! {
    debug::exit(if success {
        debug::EXIT_SUCCESS
    } else {
        debug::EXIT_FAILURE
    });
    // Reached only without a semihosting host.
    loop {}
}

/// Prints `FAIL what` and exits with status 1: for a harness that cannot go on, and for
/// panic handlers.
pub fn fail_and_exit(what: core::fmt::Arguments<'_>) -> ! {
    hprintln!("FAIL {}", what);
    exit(false)
}
