//! # zeppelin-service
//!
//! The aggregation service (docs/server.md is its contract): devices upload BFV ciphertexts
//! in the device wire form over HTTP into a stream; the store (SQLite by default, behind
//! [`store::UploadStore`]) acknowledges an upload only once it is durable; the server sums a
//! stream (`sum`, `sum_of_squares`, `dot`) with `zeppelin-server`'s evaluator and returns a
//! SEAL `Ciphertext` that only the key owner can decrypt.
//!
//! - [`start`] runs the service on a listener and a store and returns a [`ServiceHandle`]
//!   (its URL, and a graceful [`ServiceHandle::shutdown`]); `zeppelin serve` and the fleet
//!   demo use it.
//! - [`client::Client`] is the HTTP client of the contract.
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use std::sync::Arc;
//! use zeppelin_service::{client::Client, start, store::SqliteStore, Preset, ServiceConfig, StartKeys};
//!
//! let store = Arc::new(SqliteStore::open(std::path::Path::new("/tmp/zeppelin-data"))?);
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
//! let service = start(listener, store, ServiceConfig::new(Preset::Seal4096), StartKeys::default()).await?;
//! let client = Client::new(service.url())?;
//! # let ciphertext: Vec<u8> = Vec::new();
//! let receipt = client.upload("temperature", ciphertext, Some("device-1/0")).await?;
//! let sum = client.aggregate("temperature", &zeppelin_service::AggregateOp::Sum).await?;
//! assert_eq!(sum.count, 1);
//! service.shutdown().await?;
//! # Ok(()) }
//! ```

mod admission;
pub mod aggregate;
pub mod aggregator;
pub mod client;
mod codec;
mod conn;
pub mod error;
pub mod heap;
mod http;
mod limits;
pub mod linear;
mod metrics;
pub mod names;
pub mod principals;
mod state;
pub mod store;
pub mod tls;

use std::net::SocketAddr;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use tokio::sync::{watch, Semaphore};
use zeppelin_server::Evaluator;

pub use aggregate::{AggregateOp, AggregateRequest};
pub use aggregator::{Aggregator, LocalAggregator};
pub use codec::{Codec, Preset, UploadError};
pub use conn::{default_max_connections, PeerAddr};
pub use error::ServiceError;
pub use http::{COUNT, DELETED, IDEMPOTENCY_KEY, IDEMPOTENT_REPLAYED, PRESET};
pub use limits::{BodyRate, PrincipalKey, RateLimit};
pub use metrics::Metrics;
use store::UploadStore;

/// The service's limits and preset.
#[derive(Clone, Debug)]
pub struct ServiceConfig {
    /// The preset of every ciphertext and key.
    pub preset: Preset,
    /// Most uploads one stream may hold (409 beyond).
    pub max_uploads_per_stream: u64,
    /// Most requests in flight at once (503 beyond).
    pub max_in_flight: usize,
    /// Time limit of every request but aggregation (503 beyond).
    pub request_timeout: Duration,
    /// Time limit of an aggregation (503 beyond).
    pub aggregate_timeout: Duration,
    /// Uploads read and combined per chunk of an aggregation (bounds its memory).
    pub aggregate_chunk: usize,
    /// Aggregations computed at once (each uses every core); others wait.
    pub max_concurrent_aggregations: usize,
    /// Most connections open at once (default: the file-descriptor limit less a headroom);
    /// at the cap the longest-idle connection is closed.
    pub max_connections: usize,
    /// Time a client has to send a request's headers.
    pub header_read_timeout: Duration,
    /// Time a connection may stay open with no request in progress.
    pub idle_timeout: Duration,
    /// The least a request body must deliver per window (408 below it). The request time
    /// limits start once the body is read.
    pub body_min_rate: BodyRate,
    /// Bytes of request bodies buffered at once, over every request (503 beyond).
    pub body_budget: usize,
    /// Aggregations waiting for their turn at most (503 beyond).
    pub max_queued_aggregations: usize,
    /// Requests per principal ([`PrincipalKey`]); `None`: unlimited. `/v1/health` and
    /// `/metrics` are not counted.
    pub rate_limit: Option<RateLimit>,
    /// The counters `GET /metrics` shows (shared: a receipt task of the same process adds to
    /// them).
    pub metrics: Arc<Metrics>,
    /// Who may call (docs/server.md, "Identities and roles"); the default lets no one in
    /// but `GET /v1/health`.
    pub auth: Arc<principals::Authenticator>,
    /// TLS on the listener (`None`: plain HTTP; `zeppelin serve` allows that on loopback
    /// only).
    pub tls: Option<tls::TlsServer>,
}

impl ServiceConfig {
    /// The defaults (docs/server.md): 1,000,000 uploads per stream, 256 requests in flight,
    /// 30 s per request, 600 s per aggregation, chunks of 256 uploads, one aggregation at a
    /// time and 16 waiting; connections capped below the fd limit, 10 s to send headers,
    /// 60 s idle; bodies at 1 KiB per 10 s at least, 256 MiB of bodies buffered at once; no
    /// rate limit.
    pub fn new(preset: Preset) -> Self {
        Self {
            preset,
            max_uploads_per_stream: 1_000_000,
            max_in_flight: 256,
            request_timeout: Duration::from_secs(30),
            aggregate_timeout: Duration::from_secs(600),
            aggregate_chunk: 256,
            max_concurrent_aggregations: 1,
            max_connections: conn::default_max_connections(),
            header_read_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(60),
            body_min_rate: BodyRate {
                bytes: 1024,
                window: Duration::from_secs(10),
            },
            body_budget: 256 << 20,
            max_queued_aggregations: 16,
            // Off by default: a fleet's right rate depends on its devices' schedule (the
            // operator sets it; `zeppelin serve --rate-limit`).
            rate_limit: None,
            metrics: Arc::new(Metrics::default()),
            auth: Arc::new(principals::Authenticator::default()),
            tls: None,
        }
    }
}

/// SEAL key bytes the service starts with (the public parts of a key directory).
#[derive(Clone, Debug, Default)]
pub struct StartKeys {
    /// SEAL `RelinKeys` bytes (`relin.seal`).
    pub relin: Option<Vec<u8>>,
    /// SEAL `GaloisKeys` bytes (`galois.seal`).
    pub galois: Option<Vec<u8>>,
}

/// Why the service did not start or did not stop cleanly.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StartError {
    /// The preset's SEAL context could not be built.
    #[error("preset {preset}: {source}")]
    Preset {
        /// The preset.
        preset: &'static str,
        /// Why.
        #[source]
        source: zeppelin_seal::SealError,
    },
    /// The evaluator could not be built.
    #[error("evaluator: {0}")]
    Evaluator(#[from] zeppelin_server::EvalError),
    /// Start keys that do not load under the preset.
    #[error("{what}: {source}")]
    Keys {
        /// `relin.seal` or `galois.seal`.
        what: &'static str,
        /// Why.
        #[source]
        source: error::KeysProblem,
    },
    /// The listener failed.
    #[error("listener: {0}")]
    Io(#[from] std::io::Error),
    /// Closing the store failed.
    #[error("closing the store: {0}")]
    Store(#[from] store::StoreError),
    /// The server task failed.
    #[error("server task: {0}")]
    Task(String),
}

/// A running service.
pub struct ServiceHandle {
    addr: SocketAddr,
    url: String,
    stop: Option<watch::Sender<bool>>,
    task: tokio::task::JoinHandle<std::io::Result<()>>,
    store: Arc<dyn UploadStore>,
}

impl ServiceHandle {
    /// The address it listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Its base URL, `http://ADDR` or `https://ADDR` with TLS (no trailing slash).
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Stops accepting connections, lets in-flight requests finish (at most 30 s), commits
    /// every acknowledged upload and closes the store.
    pub async fn shutdown(mut self) -> Result<(), StartError> {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(true);
        }
        let served = match tokio::time::timeout(http::SHUTDOWN_GRACE, &mut self.task).await {
            Ok(joined) => joined.map_err(|e| StartError::Task(e.to_string()))?,
            Err(_) => {
                tracing::warn!("in-flight requests still running after the grace period");
                self.task.abort();
                Ok(())
            }
        };
        self.store.close().await?;
        tracing::info!("service stopped; store closed");
        Ok(served?)
    }

    /// Waits for SIGTERM or SIGINT (Ctrl-C), then [`ServiceHandle::shutdown`].
    pub async fn run_until_signal(self) -> Result<(), StartError> {
        let signal = wait_for_signal().await;
        tracing::info!(signal, "shutting down");
        self.shutdown().await
    }
}

async fn wait_for_signal() -> &'static str {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => tokio::select! {
                _ = term.recv() => "SIGTERM",
                _ = tokio::signal::ctrl_c() => "SIGINT",
            },
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
                "SIGINT"
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
        "Ctrl-C"
    }
}

/// Starts the service on `listener` over `store` (see [`ServiceConfig`] for the limits),
/// aggregating in process ([`LocalAggregator`]). Must be called inside a multi-threaded
/// tokio runtime. Sets the process's allocator to keep freed memory for the next
/// aggregation ([`heap::retain_freed_memory`]), as [`start_with_aggregator`] does.
pub async fn start(
    listener: tokio::net::TcpListener,
    store: Arc<dyn UploadStore>,
    config: ServiceConfig,
    keys: StartKeys,
) -> Result<ServiceHandle, StartError> {
    start_with_aggregator(listener, store, config, keys, Arc::new(LocalAggregator)).await
}

/// [`start`] with the aggregations computed by `aggregator` (for example a worker group).
pub async fn start_with_aggregator(
    listener: tokio::net::TcpListener,
    store: Arc<dyn UploadStore>,
    config: ServiceConfig,
    keys: StartKeys,
    aggregator: Arc<dyn Aggregator>,
) -> Result<ServiceHandle, StartError> {
    heap::retain_freed_memory();
    let codec = config.preset.codec().map_err(|source| StartError::Preset {
        preset: config.preset.name(),
        source,
    })?;
    let evaluator = Arc::new(Evaluator::new(codec.seal().clone())?);
    let relin = match &keys.relin {
        Some(b) => Some(Arc::new(http::relin_keys(&*codec, &evaluator, b).map_err(
            |source| StartError::Keys {
                what: "relin.seal",
                source,
            },
        )?)),
        None => None,
    };
    let galois = match &keys.galois {
        Some(b) => Some(Arc::new(
            http::galois_keys(&*codec, &evaluator, b).map_err(|source| StartError::Keys {
                what: "galois.seal",
                source,
            })?,
        )),
        None => None,
    };
    let addr = listener.local_addr()?;
    let state = Arc::new(state::AppState {
        store: store.clone(),
        codec,
        evaluator,
        relin: RwLock::new(relin),
        galois: RwLock::new(galois),
        in_flight: Arc::new(Semaphore::new(config.max_in_flight.max(1))),
        aggregations: limits::AggregationGate::new(
            config.max_concurrent_aggregations,
            config.max_queued_aggregations,
        ),
        body_budget: limits::BodyBudget::new(config.body_budget),
        rate_limiter: limits::RateLimiter::new(config.rate_limit),
        aggregator,
        config,
    });
    let conn_limits = conn::ConnLimits {
        max_connections: state.config.max_connections,
        header_read_timeout: state.config.header_read_timeout,
        idle_timeout: state.config.idle_timeout,
    };
    let tls = state.config.tls.clone();
    let scheme = if tls.is_some() { "https" } else { "http" };
    let app = http::router(state);
    let (stop, stopped) = watch::channel(false);
    let task = tokio::spawn(conn::serve(listener, app, conn_limits, tls, stopped));
    tracing::info!(%addr, scheme, "listening");
    Ok(ServiceHandle {
        addr,
        url: format!("{scheme}://{addr}"),
        stop: Some(stop),
        task,
        store,
    })
}

/// Installs a `tracing` subscriber writing one line per event to stderr: JSON objects when
/// `json`, else `key=value` text. The filter comes from `ZEPPELIN_LOG` (tracing's
/// `EnvFilter` syntax, for example `info` or `zeppelin_service=debug`), default `info`.
pub fn init_logging(json: bool) {
    use tracing_subscriber::EnvFilter;
    let filter = EnvFilter::try_from_env("ZEPPELIN_LOG").unwrap_or_else(|_| EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_writer(std::io::stderr);
    // A second call (tests) keeps the first subscriber.
    let _ = if json {
        builder.json().try_init()
    } else {
        builder.try_init()
    };
}
