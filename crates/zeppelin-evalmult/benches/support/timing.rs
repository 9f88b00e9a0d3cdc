//! Wall-clock timing shared by the examples (included with `#[path]`), so every figure they
//! print is a median taken the same way.

use std::time::{Duration, Instant};

/// Median of `runs` timings of `f`, after one warm-up call.
pub fn median(runs: usize, mut f: impl FnMut()) -> Duration {
    f();
    let mut times: Vec<Duration> = (0..runs)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed()
        })
        .collect();
    times.sort();
    times[runs / 2]
}
