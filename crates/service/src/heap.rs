//! [`retain_freed_memory`]: glibc's allocator keeps what an aggregation frees for the next.
//!
//! An aggregation reads its stream in chunks of 256 uploads (25 MB at 98 KB each) and frees
//! each chunk after adding it up. With glibc's defaults that memory goes back to the kernel
//! as soon as the free space at the top of the heap passes 128 KiB, so the next chunk takes
//! a page fault and a zeroed page for every 4 KiB it reads: on the 2026-12-07 machine that
//! cost more than reading the rows and checking their digests together (reading 2,048
//! uploads from the store: 20k uploads/s with the defaults, 81k with this setting,
//! `cargo bench -p zeppelin-service --bench aggregate -- 'SQLite store'`).

use std::sync::OnceLock;

/// Free heap memory kept at the top of an arena before glibc returns it to the kernel: a few
/// chunks of uploads in flight (the reader runs one chunk ahead of the computation).
pub const TRIM_THRESHOLD: usize = 128 << 20;
/// Allocations at least this large get their own mapping (glibc's 64-bit maximum). Below
/// it they come from the arenas and are reused; setting the trim threshold would otherwise
/// freeze glibc's adaptive mmap threshold at 128 KiB, which would map (and fault in) every
/// upload of a larger preset anew.
pub const MMAP_THRESHOLD: usize = 32 << 20;

/// Sets glibc's trim and mmap thresholds to [`TRIM_THRESHOLD`] and [`MMAP_THRESHOLD`] for the
/// whole process, once; [`crate::start`] calls it. The cost is resident memory: after an
/// aggregation the process keeps up to 128 MiB per arena of freed heap for the next, which
/// the kernel can still reclaim only by swapping. Returns whether both were set (false on a
/// target without glibc, where nothing is done).
///
/// ```
/// let set = zeppelin_service::heap::retain_freed_memory();
/// assert_eq!(set, cfg!(all(target_os = "linux", target_env = "gnu")));
/// ```
pub fn retain_freed_memory() -> bool {
    static SET: OnceLock<bool> = OnceLock::new();
    *SET.get_or_init(set_thresholds)
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn set_thresholds() -> bool {
    let as_param = |bytes: usize| libc::c_int::try_from(bytes).unwrap_or(libc::c_int::MAX);
    // SAFETY: mallopt only stores these parameters (under the allocator's lock); any value
    // is valid for both.
    let trim = unsafe { libc::mallopt(libc::M_TRIM_THRESHOLD, as_param(TRIM_THRESHOLD)) };
    // SAFETY: as above.
    let mmap = unsafe { libc::mallopt(libc::M_MMAP_THRESHOLD, as_param(MMAP_THRESHOLD)) };
    if trim != 1 || mmap != 1 {
        tracing::warn!(
            "glibc refused the allocator's trim or mmap threshold; keeping its defaults"
        );
    }
    trim == 1 && mmap == 1
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn set_thresholds() -> bool {
    false
}
