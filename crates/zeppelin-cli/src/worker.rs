//! `zeppelin worker --nats URL[,URL...] --cluster-key FILE [--nats-creds FILE | --nats-nkey
//! FILE] [--nats-ca PEM] [--nats-cert PEM --nats-key PEM] [--threads N] [--ack-wait SECS]
//! [--metrics-listen ADDR] [--log-json]`: one worker of the aggregation group
//! (docs/server.md). It pulls shard jobs from the JetStream consumer `zeppelin-workers` one at
//! a time, does only those tagged under the cluster key, sums each shard on N threads and
//! stores the tagged partial in the object store. Prints `worker ready` on stdout once
//! subscribed; on SIGTERM or SIGINT it finishes the shard in hand and exits 0.
//!
//! Also the `serve` side of distributed aggregation: [`AggregateArgs`] (`--aggregate
//! workers|local`, `--shard-size K`, `--cluster-key FILE`) and [`aggregator`], which builds
//! the service's aggregator from them.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use clap::{Args, ValueEnum};
use zeppelin_cluster::combine::{JobAggregator, JobConfig};
use zeppelin_cluster::worker::{Worker, WorkerConfig, WorkerMetrics};
use zeppelin_service::{Aggregator, LocalAggregator, ServiceConfig};

use crate::error::{CliError, CliResult};
use crate::nats::{load_cluster_key, NatsArgs};

/// Arguments of `zeppelin worker`.
#[derive(Args)]
pub struct WorkerArgs {
    /// NATS URLs of the cluster, comma-separated (`nats://HOST:PORT,...`, `tls://...`;
    /// credentials as `nats://USER:PASS@HOST` or `nats://TOKEN@HOST`: prefer the environment
    /// variable to the command line, which other users can see).
    #[arg(
        long,
        env = "ZEPPELIN_NATS",
        value_name = "URLS",
        hide_env_values = true
    )]
    pub nats: String,
    /// The cluster key shared with the service (`zeppelin cluster-key new FILE`; mode 0600):
    /// only jobs tagged under it are done, and partials are tagged under it.
    #[arg(long, env = "ZEPPELIN_CLUSTER_KEY", value_name = "FILE")]
    pub cluster_key: PathBuf,
    /// NATS credentials and TLS.
    #[command(flatten)]
    pub nats_args: NatsArgs,
    /// Threads summing a shard (0: one per core).
    #[arg(long, env = "ZEPPELIN_THREADS", default_value_t = 0)]
    pub threads: usize,
    /// Seconds a shard may go unacknowledged before it is redelivered to another worker
    /// (applies when this worker creates the shared consumer).
    #[arg(long, env = "ZEPPELIN_ACK_WAIT", default_value_t = 30)]
    pub ack_wait: u64,
    /// Serve the worker's counters at http://ADDR/metrics (Prometheus text format).
    #[arg(long, env = "ZEPPELIN_METRICS_LISTEN", value_name = "ADDR")]
    pub metrics_listen: Option<String>,
    /// Log one JSON object per line on stderr (default: key=value text).
    #[arg(long, env = "ZEPPELIN_LOG_JSON")]
    pub log_json: bool,
}

/// Who computes aggregations in `zeppelin serve`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum AggregateMode {
    /// The worker group on NATS (`zeppelin worker`); the default with a NATS store.
    Workers,
    /// This process's cores; the default (and only choice) with the SQLite store.
    Local,
}

/// `zeppelin serve`'s aggregation flags.
#[derive(Args, Clone, Debug)]
pub struct AggregateArgs {
    /// Who aggregates: `workers` (default with --store nats://) or `local`.
    #[arg(long, env = "ZEPPELIN_AGGREGATE", value_enum)]
    pub aggregate: Option<AggregateMode>,
    /// Uploads per shard job (`--aggregate workers`).
    #[arg(long, env = "ZEPPELIN_SHARD_SIZE", default_value_t = 1_000)]
    pub shard_size: u64,
    /// The cluster key shared with the workers (`zeppelin cluster-key new FILE`; mode 0600);
    /// required with `--aggregate workers`.
    #[arg(long, env = "ZEPPELIN_CLUSTER_KEY", value_name = "FILE")]
    pub cluster_key: Option<PathBuf>,
}

/// The service's aggregator: the worker group over `nats` (creating the job stream and the
/// partials bucket with `replicas` replicas), or in process.
pub async fn aggregator(
    args: &AggregateArgs,
    nats: Option<&async_nats::Client>,
    replicas: usize,
    config: &ServiceConfig,
) -> CliResult<Arc<dyn Aggregator>> {
    let mode = args.aggregate.unwrap_or(if nats.is_some() {
        AggregateMode::Workers
    } else {
        AggregateMode::Local
    });
    match (mode, nats) {
        (AggregateMode::Local, _) => Ok(Arc::new(LocalAggregator)),
        (AggregateMode::Workers, None) => Err(CliError::WorkersNeedNats),
        (AggregateMode::Workers, Some(client)) => {
            let key = load_cluster_key(args.cluster_key.as_ref().ok_or(CliError::NoClusterKey)?)?;
            // Within the request's own limit, so the 503 names the missing shard.
            let timeout = config
                .aggregate_timeout
                .saturating_sub(Duration::from_secs(5))
                .max(Duration::from_secs(1));
            let jobs = JobAggregator::connect(
                client.clone(),
                key,
                replicas,
                JobConfig {
                    shard_size: args.shard_size.max(1),
                    timeout,
                    ..JobConfig::default()
                },
            )
            .await?
            .with_metrics(config.metrics.clone());
            tracing::info!(
                shard_size = args.shard_size,
                "aggregation by the worker group"
            );
            Ok(Arc::new(jobs))
        }
    }
}

/// Runs `zeppelin worker`.
pub fn run(a: &WorkerArgs) -> CliResult<()> {
    zeppelin_service::init_logging(a.log_json);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(CliError::Runtime)?;
    runtime.block_on(work(a))
}

async fn work(a: &WorkerArgs) -> CliResult<()> {
    // The key first: a worker without it must not even connect.
    let key = load_cluster_key(&a.cluster_key)?;
    let client = zeppelin_cluster::store::connect(&a.nats_args.options(&a.nats)).await?;
    let metrics = Arc::new(WorkerMetrics::default());
    let metrics_server = match &a.metrics_listen {
        Some(addr) => Some(serve_metrics(addr, metrics.clone()).await?),
        None => None,
    };
    let config = WorkerConfig {
        threads: a.threads,
        ack_wait: Duration::from_secs(a.ack_wait.max(1)),
    };
    let worker = Worker::connect(client, key, &config, metrics).await?;
    tracing::info!(
        ack_wait_s = worker.ack_wait().as_secs(),
        threads = a.threads,
        "subscribed"
    );
    // The one line a script waits for (the logs go to stderr).
    crate::console::line(format_args!("worker ready"))?;
    worker.run(stop_signal()).await?;
    tracing::info!("worker stopped");
    if let Some(server) = metrics_server {
        server.abort();
    }
    Ok(())
}

/// Resolves on SIGTERM or SIGINT.
async fn stop_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        if let Ok(mut term) = signal(SignalKind::terminate()) {
            tokio::select! {
                _ = term.recv() => {},
                _ = tokio::signal::ctrl_c() => {},
            }
            return;
        }
    }
    let _ = tokio::signal::ctrl_c().await;
}

/// Serves `GET /metrics` with the worker's counters on `addr`.
async fn serve_metrics(
    addr: &str,
    metrics: Arc<WorkerMetrics>,
) -> CliResult<tokio::task::JoinHandle<()>> {
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|source| CliError::Listen {
            addr: addr.to_owned(),
            source,
        })?;
    let app = axum::Router::new().route(
        "/metrics",
        axum::routing::get(move || {
            let metrics = metrics.clone();
            async move {
                (
                    [(
                        axum::http::header::CONTENT_TYPE,
                        "text/plain; version=0.0.4",
                    )],
                    metrics.render(),
                )
            }
        }),
    );
    Ok(tokio::spawn(async move {
        if let Err(e) = axum::serve(listener, app).await {
            tracing::warn!(error = %e, "metrics server stopped");
        }
    }))
}
