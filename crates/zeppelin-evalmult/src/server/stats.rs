//! Counters of what the server did (for operators, tests and the load test).

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};

macro_rules! stats {
    ($($(#[$doc:meta])* $name:ident),* $(,)?) => {
        /// Live counters, updated by the server.
        #[derive(Debug, Default)]
        pub(crate) struct Stats {
            $(pub(crate) $name: AtomicU64,)*
        }

        /// A copy of the counters at one moment.
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
        pub struct StatsSnapshot {
            $($(#[$doc])* pub $name: u64,)*
            /// Most bytes accounted at once (all connections).
            pub memory_peak: u64,
        }

        impl Stats {
            pub(crate) fn snapshot(&self, memory_peak: usize) -> StatsSnapshot {
                StatsSnapshot {
                    $($name: self.$name.load(Ordering::Relaxed),)*
                    memory_peak: memory_peak as u64,
                }
            }
        }

        impl fmt::Display for StatsSnapshot {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                $(write!(f, concat!(stringify!($name), "={} "), self.$name)?;)*
                write!(f, "memory_peak={}", self.memory_peak)
            }
        }
    };
}

stats! {
    /// Connections accepted and served.
    accepted,
    /// Connections refused at the connection cap.
    refused,
    /// Failed `accept()` calls (survived).
    accept_errors,
    /// Connections closed for idling.
    idle_timeouts,
    /// Connections closed for sending a frame too slowly.
    read_timeouts,
    /// Connections closed for not taking their replies.
    write_timeouts,
    /// Connections closed after a fatal frame or too many refused frames.
    fatal_closes,
    /// Frames answered with RLER.
    frames_refused,
    /// Frames refused by a memory cap (also in `frames_refused`).
    memory_refusals,
    /// Sessions dropped on expiry.
    sessions_expired,
    /// Sessions answered in full (RLEN sent).
    sessions_completed,
    /// Frames handed to the session (computations started).
    computations,
    /// Computations running now.
    computing,
    /// Connection tasks cancelled at shutdown after the grace period.
    cancelled_at_shutdown,
}
