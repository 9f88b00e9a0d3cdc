//! The accelerator as a service: a [`Session`] state machine over the frames of
//! [`crate::frames`], a TCP [`Server`] that stays up under hostile clients, and a matching
//! blocking [`Client`].
//!
//! # Why tokio
//!
//! The threats are many cheap connections (idle, slow-loris, junk) against few expensive
//! computations. On tokio an open connection costs a task and a few kilobytes of buffers, not
//! a thread, so the connection cap can be generous and timeouts are plain deadlines on each
//! read; a thread-per-connection or fixed worker pool would either spend a thread on every
//! slow client or let a handful of them occupy every worker. The CPU-bound relinearization
//! never runs on the async workers: each frame is processed on tokio's blocking pool, at most
//! [`ServerConfig::workers`] at once (a semaphore), and the RLMD engine spreads over the cores
//! with rayon as before.
//!
//! # Limits (all in [`ServerConfig`], checked by [`ServerConfig::validate`] at start)
//!
//! - **Connections**: at most `max_connections` at once; one more gets a single RLER frame
//!   ([`frames::codes::BUSY`]) and is closed.
//! - **Timeouts**: `idle_timeout` for the next frame to begin (then RLER
//!   [`frames::codes::TIMEOUT`] and close); once begun, a frame must arrive within
//!   `read_timeout` plus one second per `min_rate` bytes received (slow-loris clients are
//!   dropped); replies must be taken within `write_timeout`.
//! - **Frame lengths before allocation**: a frame's length prefix and first three words are
//!   judged by [`Session::admit`] against the session (profile loaded, ring dimension,
//!   towers, declared ciphertext count, session in progress) before its body is read; a
//!   refused frame is read and discarded (never stored) and answered with RLER; a prefix above
//!   [`frames::MAX_FRAME_WORDS`] closes the connection.
//! - **Memory**: every admitted frame reserves its size and the working set of its
//!   computation from the connection's account (`session_memory`) and the global pool
//!   (`total_memory`) before anything is allocated; beyond either cap the frame is refused
//!   with RLER [`frames::codes::BUSY`]. Buffered RLMD frames and the profile stay accounted
//!   until the session ends.
//! - **Sessions expire** `session_timeout` after their first pair frame: the buffered frames
//!   are dropped and the client gets RLER [`frames::codes::TIMEOUT`].
//! - **Errors**: `max_errors` refused frames in a row close the connection.
//! - **accept() errors** (EMFILE, ENFILE, ENOBUFS, ...) are counted and survived with an
//!   exponential back-off from 5 ms to 1 s.
//! - **Shutdown** ([`Server::run_until_signal`] on SIGTERM or SIGINT, or
//!   [`ServerHandle::shutdown`]): stop accepting, close idle connections with RLER
//!   [`frames::codes::SHUTDOWN`], let computations in flight finish and send their replies
//!   within `shutdown_grace`, then cancel what is left and return.

mod budget;
mod client;
mod config;
mod connection;
mod session;
mod stats;

use std::future::Future;
use std::net::SocketAddr;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use tokio::io::AsyncWriteExt;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{oneshot, watch, Semaphore};
use tokio::task::JoinSet;
use tokio::time::{sleep, sleep_until, timeout, Instant};

pub use crate::error::RemoteError;
use crate::error::{FrameError, ServerError};
use crate::frames::{self, codes};
pub use client::Client;
pub use config::{ServerConfig, MAX_WORKERS};
use connection::Shared;
pub use session::{Admission, Refusal, Session};
use stats::Stats;
pub use stats::StatsSnapshot;

/// Refused connections being answered at once (each holds a socket for at most
/// [`REFUSAL_TIME`]); beyond this they are closed without an answer.
const MAX_REFUSALS: usize = 64;
/// How long a refused connection is given to receive its RLER frame.
const REFUSAL_TIME: Duration = Duration::from_millis(500);
/// Back-off after a failed `accept()`: first and longest pause.
const BACKOFF_FIRST: Duration = Duration::from_millis(5);
const BACKOFF_MAX: Duration = Duration::from_secs(1);

/// A validated server bound to a listening socket, not yet running.
pub struct Server {
    listener: std::net::TcpListener,
    config: ServerConfig,
}

impl Server {
    /// Validates `config` (typed [`crate::ConfigError`]) and takes `listener`.
    pub fn new(listener: std::net::TcpListener, config: ServerConfig) -> Result<Self, ServerError> {
        config.validate()?;
        listener
            .set_nonblocking(true)
            .map_err(|source| ServerError::Io {
                what: "making the listener non-blocking",
                source,
            })?;
        Ok(Self { listener, config })
    }

    /// The address it listens on.
    pub fn local_addr(&self) -> Result<SocketAddr, ServerError> {
        self.listener
            .local_addr()
            .map_err(|source| ServerError::Io {
                what: "reading the listening address",
                source,
            })
    }

    /// Serves until SIGTERM or SIGINT, then shuts down gracefully and returns the counters.
    pub fn run_until_signal(self) -> Result<StatsSnapshot, ServerError> {
        let runtime = self.runtime()?;
        let stats = Arc::new(Stats::default());
        let result = runtime.block_on(async {
            use tokio::signal::unix::{signal, SignalKind};
            let io = |source| ServerError::Io {
                what: "installing the signal handlers",
                source,
            };
            let mut term = signal(SignalKind::terminate()).map_err(io)?;
            let mut int = signal(SignalKind::interrupt()).map_err(io)?;
            let stop = async move {
                tokio::select! {
                    _ = term.recv() => {}
                    _ = int.recv() => {}
                }
            };
            self.run(stop, stats).await
        });
        // Computations still running after the grace period are abandoned with the runtime.
        runtime.shutdown_timeout(Duration::from_millis(100));
        result
    }

    /// Serves on a thread of its own until [`ServerHandle::shutdown`].
    pub fn spawn(self) -> Result<ServerHandle, ServerError> {
        let addr = self.local_addr()?;
        let runtime = self.runtime()?;
        let stats = Arc::new(Stats::default());
        let (trigger, stop) = oneshot::channel::<()>();
        let shared_stats = stats.clone();
        let thread = std::thread::Builder::new()
            .name("evalmult-server".into())
            .spawn(move || {
                let result = runtime.block_on(self.run(
                    async move {
                        let _ = stop.await;
                    },
                    shared_stats,
                ));
                runtime.shutdown_timeout(Duration::from_millis(100));
                result
            })
            .map_err(|source| ServerError::Io {
                what: "starting the server thread",
                source,
            })?;
        Ok(ServerHandle {
            addr,
            stats,
            trigger: Some(trigger),
            thread: Some(thread),
        })
    }

    fn runtime(&self) -> Result<tokio::runtime::Runtime, ServerError> {
        let io_threads = std::thread::available_parallelism()
            .map_or(1, usize::from)
            .min(4);
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(io_threads)
            // The compute semaphore bounds what runs there; a little room for the rest.
            .max_blocking_threads(self.config.workers + 2)
            .thread_name("evalmult-io")
            .enable_all()
            .build()
            .map_err(|source| ServerError::Io {
                what: "starting the async runtime",
                source,
            })
    }

    /// The accept loop until `stop` completes, then the graceful shutdown.
    async fn run(
        self,
        stop: impl Future<Output = ()>,
        stats: Arc<Stats>,
    ) -> Result<StatsSnapshot, ServerError> {
        let listener = TcpListener::from_std(self.listener).map_err(|source| ServerError::Io {
            what: "registering the listener",
            source,
        })?;
        let config = self.config;
        let grace = config.shutdown_grace;
        let connections = Arc::new(Semaphore::new(config.max_connections));
        let refusals = Arc::new(Semaphore::new(MAX_REFUSALS));
        let shared = Arc::new(Shared {
            pool: budget::MemoryPool::new(config.total_memory),
            compute: Arc::new(Semaphore::new(config.workers)),
            stats: stats.clone(),
            config,
        });
        let (shutdown_tx, shutdown_rx) = watch::channel(false);
        let mut tasks = JoinSet::new();
        let mut backoff = BACKOFF_FIRST;
        tokio::pin!(stop);
        loop {
            tokio::select! {
                biased;
                () = &mut stop => break,
                Some(_) = tasks.join_next(), if !tasks.is_empty() => {}
                accepted = listener.accept() => match accepted {
                    Ok((stream, _)) => {
                        backoff = BACKOFF_FIRST;
                        match connections.clone().try_acquire_owned() {
                            Ok(permit) => {
                                stats.accepted.fetch_add(1, Ordering::Relaxed);
                                tasks.spawn(connection::serve(
                                    stream,
                                    shared.clone(),
                                    shutdown_rx.clone(),
                                    permit,
                                ));
                            }
                            Err(_) => {
                                stats.refused.fetch_add(1, Ordering::Relaxed);
                                if let Ok(slot) = refusals.clone().try_acquire_owned() {
                                    let max = shared.config.max_connections;
                                    tasks.spawn(async move {
                                        refuse(stream, max).await;
                                        drop(slot);
                                    });
                                }
                            }
                        }
                    }
                    Err(error) => {
                        stats.accept_errors.fetch_add(1, Ordering::Relaxed);
                        if !is_per_connection(&error) {
                            // Out of descriptors or buffers: wait for some to be freed
                            // (connections keep being served meanwhile).
                            tokio::select! {
                                biased;
                                () = &mut stop => break,
                                () = sleep(backoff) => {}
                            }
                            backoff = (backoff * 2).min(BACKOFF_MAX);
                        }
                    }
                },
            }
        }
        drop(listener);
        let _ = shutdown_tx.send(true);
        let deadline = Instant::now() + grace;
        loop {
            tokio::select! {
                joined = tasks.join_next() => if joined.is_none() { break },
                () = sleep_until(deadline) => {
                    stats
                        .cancelled_at_shutdown
                        .fetch_add(tasks.len() as u64, Ordering::Relaxed);
                    tasks.abort_all();
                    break;
                }
            }
        }
        Ok(stats.snapshot(shared.pool.peak()))
    }
}

/// Errors of `accept()` that concern one pending connection only (retry at once); every
/// other one (EMFILE, ENFILE, ENOBUFS, ENOMEM) gets the back-off.
fn is_per_connection(error: &std::io::Error) -> bool {
    use std::io::ErrorKind::{ConnectionAborted, ConnectionReset, Interrupted, WouldBlock};
    matches!(
        error.kind(),
        ConnectionAborted | ConnectionReset | Interrupted | WouldBlock
    )
}

/// One RLER frame for a connection over the cap, then close (reading what it already sent,
/// briefly, so that the close does not reset the connection before the frame is read).
async fn refuse(stream: TcpStream, max: usize) {
    let message = FrameError::ConnectionLimit { max }.to_string();
    let reply = frames::encode_error(codes::BUSY, &message);
    let (mut read, write) = stream.into_split();
    let mut writer = tokio::io::BufWriter::new(write);
    let _ = timeout(REFUSAL_TIME, async {
        connection::write_frames(&mut writer, &[reply]).await?;
        writer.shutdown().await?;
        let mut sink = [0u8; 4096];
        let mut drained = 0usize;
        while drained < (1 << 20) {
            match tokio::io::AsyncReadExt::read(&mut read, &mut sink).await? {
                0 => break,
                k => drained += k,
            }
        }
        Ok::<(), std::io::Error>(())
    })
    .await;
}

/// A server running on its own thread ([`Server::spawn`]).
pub struct ServerHandle {
    addr: SocketAddr,
    stats: Arc<Stats>,
    trigger: Option<oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<Result<StatsSnapshot, ServerError>>>,
}

impl ServerHandle {
    /// The address it listens on.
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// The counters now (`memory_peak` is reported by [`ServerHandle::shutdown`] only).
    pub fn stats(&self) -> StatsSnapshot {
        self.stats.snapshot(0)
    }

    /// Graceful shutdown; returns the final counters.
    pub fn shutdown(mut self) -> Result<StatsSnapshot, ServerError> {
        self.stop()
    }

    fn stop(&mut self) -> Result<StatsSnapshot, ServerError> {
        if let Some(trigger) = self.trigger.take() {
            let _ = trigger.send(());
        }
        match self.thread.take() {
            Some(thread) => thread.join().map_err(|_| ServerError::Thread)?,
            None => Err(ServerError::Thread),
        }
    }
}

impl Drop for ServerHandle {
    fn drop(&mut self) {
        if self.thread.is_some() {
            let _ = self.stop();
        }
    }
}
