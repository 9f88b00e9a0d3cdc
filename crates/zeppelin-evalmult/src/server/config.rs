//! The server's limits, validated before it listens.

use std::time::Duration;

use crate::context::{MAX_RING_DIM, MIN_RING_DIM};
use crate::error::ConfigError;
use crate::server::session::Session;

/// Most compute workers a server accepts (each may hold a frame and its working set).
pub const MAX_WORKERS: usize = 256;

const MIB: usize = 1 << 20;

/// Every limit of a server. [`ServerConfig::new`] gives the defaults; [`ServerConfig::validate`]
/// (called by the server before it listens) refuses a configuration that cannot work.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServerConfig {
    /// Ring dimension of every session (fixed per server, as on the FPGA).
    pub ring_dim: usize,
    /// Connections served at once; one more is answered with one RLER frame
    /// ([`crate::frames::codes::BUSY`]) and closed.
    pub max_connections: usize,
    /// Longest wait for the next frame to begin; then the connection is closed.
    pub idle_timeout: Duration,
    /// Time a frame has to begin arriving once its first byte is in; from then on it must
    /// keep up with [`ServerConfig::min_rate`] (slow senders are dropped).
    pub read_timeout: Duration,
    /// Slowest accepted transfer rate of a frame, bytes per second, after the
    /// [`ServerConfig::read_timeout`] grace.
    pub min_rate: u64,
    /// Longest time replies may take to be taken by the client.
    pub write_timeout: Duration,
    /// Longest time from a session's first pair frame to its last one; then the session
    /// (its buffered frames) is dropped and the client told so
    /// ([`crate::frames::codes::TIMEOUT`]).
    pub session_timeout: Duration,
    /// Bytes one connection may hold at once (its profile, buffered frames, the frame being
    /// read and the working set of its computation).
    pub session_memory: usize,
    /// Bytes all connections together may hold at once.
    pub total_memory: usize,
    /// Computations run at once (each on the blocking pool; the RLMD engine itself uses all
    /// cores through rayon).
    pub workers: usize,
    /// Consecutive refused frames after which a connection is closed.
    pub max_errors: usize,
    /// After a shutdown request: how long in-flight work may take to finish before it is
    /// cancelled.
    pub shutdown_grace: Duration,
}

impl ServerConfig {
    /// The defaults for ring dimension `ring_dim`: 256 connections, 60 s idle, 10 s read
    /// grace then at least 1 MiB/s, 10 s writes, 120 s per session, 256 MiB per session,
    /// 1 GiB in all, one worker per core, 32 consecutive errors, 10 s shutdown grace.
    pub fn new(ring_dim: usize) -> Self {
        Self {
            ring_dim,
            max_connections: 256,
            idle_timeout: Duration::from_secs(60),
            read_timeout: Duration::from_secs(10),
            min_rate: MIB as u64,
            write_timeout: Duration::from_secs(10),
            session_timeout: Duration::from_secs(120),
            session_memory: 256 * MIB,
            total_memory: 1024 * MIB,
            workers: std::thread::available_parallelism().map_or(1, usize::from),
            max_errors: 32,
            shutdown_grace: Duration::from_secs(10),
        }
    }

    /// Checks the configuration: the ring dimension is a power of two in
    /// [[`MIN_RING_DIM`], [`MAX_RING_DIM`]], counts, timeouts and the rate are positive, the
    /// per-session cap is within the global one and holds the smallest session.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let n = self.ring_dim;
        if !n.is_power_of_two() || !(MIN_RING_DIM..=MAX_RING_DIM).contains(&n) {
            return Err(ConfigError::RingDimension {
                ring_dim: n,
                min: MIN_RING_DIM,
                max: MAX_RING_DIM,
            });
        }
        let positive: [(&'static str, bool); 9] = [
            ("max connections", self.max_connections > 0),
            ("idle timeout", !self.idle_timeout.is_zero()),
            ("read timeout", !self.read_timeout.is_zero()),
            ("minimum rate", self.min_rate > 0),
            ("write timeout", !self.write_timeout.is_zero()),
            ("session timeout", !self.session_timeout.is_zero()),
            ("workers", self.workers > 0),
            ("max errors", self.max_errors > 0),
            ("total memory", self.total_memory > 0),
        ];
        if let Some(&(what, _)) = positive.iter().find(|(_, ok)| !ok) {
            return Err(ConfigError::Zero { what });
        }
        if self.workers > MAX_WORKERS {
            return Err(ConfigError::TooManyWorkers {
                workers: self.workers,
                max: MAX_WORKERS,
            });
        }
        if self.session_memory > self.total_memory {
            return Err(ConfigError::SessionAboveTotal {
                session: self.session_memory,
                total: self.total_memory,
            });
        }
        let needed = Session::minimum_session_bytes(n);
        if self.session_memory < needed {
            return Err(ConfigError::SessionTooSmall {
                session: self.session_memory,
                needed,
                ring_dim: n,
            });
        }
        Ok(())
    }
}
