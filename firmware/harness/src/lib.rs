//! The on-target harness shared by the Zeppelin firmware images (`firmware/m55` on the
//! AN547, `firmware/m33` on the AN505), both run under QEMU with `-icount shift=0`:
//!
//! - [`meter`]: a free-running SysTick read around an operation, the median of
//!   [`meter::RUNS`] runs, the calibration loop, and stack high-water marks by painting.
//! - [`report`]: PASS/FAIL bookkeeping printed over semihosting, and the exit status.
//! - [`audit_controls`]: the deliberately leaky negative controls of the binary audit.
//! - [`trace`]: markers, inputs and leaky controls of the trace-equivalence images
//!   (`security/trace`).
//!
//! What differs per board stays in each firmware crate: the ratio of retired instructions to
//! SysTick ticks (fixed on the M55, calibrated at start-up on the M33), how much stack may be
//! painted, and the exact wording of its report lines.
#![no_std]

pub mod audit_controls;
pub mod meter;
pub mod report;
pub mod trace;
