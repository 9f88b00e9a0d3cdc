//! A worker of the group: pulls one shard job at a time from the durable work-queue consumer
//! `zeppelin-workers`, checks its tag under the cluster key (a job without a valid one is
//! terminated unread and counted, see [`crate::auth`]), reads the shard's uploads, sums them
//! on its rayon pool with zeppelin-service's own code, puts the tagged partial into the object
//! store and acknowledges (awaited double ack). While it computes it sends in-progress
//! acknowledgements every third of the ack wait, so only a dead worker's shard is
//! redelivered.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use async_nats::jetstream::{self, consumer, AckKind};
use bytes::Bytes;
use futures_util::StreamExt;
use zeppelin_server::Evaluator;
use zeppelin_service::aggregate::{sum_uploads, BadUpload};
use zeppelin_service::store::StoredUpload;
use zeppelin_service::{Codec, Preset};

use crate::auth::{unix_now, ClusterKey, RefusalLog, TAG_HEADER};
use crate::jobs::{names, JobError, NatsError, Partial, ShardJob, Topology, ValidJob};

/// How a worker runs.
#[derive(Clone, Debug)]
pub struct WorkerConfig {
    /// Threads of its rayon pool (0: one per core).
    pub threads: usize,
    /// The consumer's ack wait: a shard not acknowledged (nor marked in progress) within it
    /// is redelivered to another worker. Used when this worker creates the consumer.
    pub ack_wait: Duration,
}

impl Default for WorkerConfig {
    fn default() -> Self {
        Self {
            threads: 0,
            ack_wait: Duration::from_secs(30),
        }
    }
}

/// The worker's counters (Prometheus text by [`WorkerMetrics::render`]).
#[derive(Debug, Default)]
pub struct WorkerMetrics {
    /// Shards summed and acknowledged.
    pub shards_done: AtomicU64,
    /// Shard messages refused (not a valid job; terminated, not redelivered).
    pub shards_invalid: AtomicU64,
    /// Shard messages refused because their tag does not verify under the cluster key (not
    /// read further; terminated).
    pub shards_unauthenticated: AtomicU64,
    /// Shards that failed (left for redelivery).
    pub shards_failed: AtomicU64,
    /// Ciphertexts summed.
    pub ciphertexts: AtomicU64,
    /// Upload bodies skipped because they did not decode.
    pub rejected: AtomicU64,
}

impl WorkerMetrics {
    /// The counters in the Prometheus text format (0.0.4).
    pub fn render(&self) -> String {
        let get = |c: &AtomicU64| c.load(Ordering::Relaxed);
        format!(
            "# HELP zeppelin_worker_shards_total Shard jobs by result.\n\
             # TYPE zeppelin_worker_shards_total counter\n\
             zeppelin_worker_shards_total{{result=\"done\"}} {}\n\
             zeppelin_worker_shards_total{{result=\"invalid\"}} {}\n\
             zeppelin_worker_shards_total{{result=\"unauthenticated\"}} {}\n\
             zeppelin_worker_shards_total{{result=\"failed\"}} {}\n\
             # HELP zeppelin_worker_ciphertexts_total Ciphertexts summed.\n\
             # TYPE zeppelin_worker_ciphertexts_total counter\n\
             zeppelin_worker_ciphertexts_total {}\n\
             # HELP zeppelin_worker_rejected_total Upload bodies skipped because they do not decode.\n\
             # TYPE zeppelin_worker_rejected_total counter\n\
             zeppelin_worker_rejected_total {}\n",
            get(&self.shards_done),
            get(&self.shards_invalid),
            get(&self.shards_unauthenticated),
            get(&self.shards_failed),
            get(&self.ciphertexts),
            get(&self.rejected),
        )
    }
}

/// Why a worker stopped or a shard failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WorkerError {
    /// NATS failed.
    #[error(transparent)]
    Nats(#[from] NatsError),
    /// The rayon pool could not be built.
    #[error("thread pool: {0}")]
    Pool(String),
    /// A job message that is not valid.
    #[error(transparent)]
    Job(#[from] JobError),
    /// The sum failed.
    #[error("shard sum: {0}")]
    Sum(#[from] zeppelin_service::ServiceError),
    /// The preset's codec or evaluator could not be built, or the partial not written.
    #[error("preset: {0}")]
    Seal(String),
}

/// A connected worker, subscribed to the job consumer.
pub struct Worker {
    js: jetstream::Context,
    topology: Topology,
    consumer: consumer::Consumer<consumer::pull::Config>,
    pool: Arc<rayon::ThreadPool>,
    kernels: HashMap<&'static str, Arc<Kernel>>,
    metrics: Arc<WorkerMetrics>,
    ack_wait: Duration,
    key: Arc<ClusterKey>,
    refusals: RefusalLog,
}

/// What summing needs for one preset.
struct Kernel {
    codec: Arc<dyn Codec>,
    evaluator: Evaluator,
}

/// Reads `count` at most uploads of `filter` with sequences `first_seq ..= last_seq` from
/// the uploads stream in order, over an ordered consumer (a deleted upload is simply not
/// there: the read stops at `last_seq` or when the stream has nothing more).
pub async fn read_uploads(
    js: &jetstream::Context,
    filter: &str,
    first_seq: u64,
    last_seq: u64,
    count: u64,
    headers_only: bool,
) -> Result<Vec<StoredUpload>, NatsError> {
    let uploads = js
        .get_stream(names::UPLOADS_STREAM)
        .await
        .map_err(|e| NatsError::new(format!("stream {}", names::UPLOADS_STREAM), e))?;
    let consumer = uploads
        .create_consumer(consumer::pull::OrderedConfig {
            filter_subject: filter.to_owned(),
            deliver_policy: consumer::DeliverPolicy::ByStartSequence {
                start_sequence: first_seq,
            },
            headers_only,
            ..Default::default()
        })
        .await
        .map_err(|e| NatsError::new(format!("reader of {filter}"), e))?;
    // Grows as read: `count` may be a bound only (the coordinator's scan passes u64::MAX).
    let mut out = Vec::with_capacity(usize::try_from(count.min(4096)).unwrap_or(0));
    if consumer.cached_info().num_pending == 0 {
        return Ok(out);
    }
    let mut messages = consumer
        .messages()
        .await
        .map_err(|e| NatsError::new(format!("reading {filter}"), e))?;
    while (out.len() as u64) < count {
        let Some(message) = messages.next().await else {
            break;
        };
        let message = message.map_err(|e| NatsError::new(format!("reading {filter}"), e))?;
        let info = message
            .info()
            .map_err(|e| NatsError::new(format!("reading {filter}"), e.to_string()))?;
        let (seq, pending) = (info.stream_sequence, info.pending);
        if seq > last_seq {
            break;
        }
        out.push(StoredUpload {
            id: seq,
            body: message.message.payload.clone(),
        });
        if seq == last_seq || pending == 0 {
            break;
        }
    }
    Ok(out)
}

impl Worker {
    /// Connects to the job consumer over `client` (creating the durable consumer with
    /// `config.ack_wait` if it does not exist; the stream and bucket must exist or appear).
    /// Only jobs tagged under `key` are done, and partials are tagged under it.
    pub async fn connect(
        client: async_nats::Client,
        key: Arc<ClusterKey>,
        config: &WorkerConfig,
        metrics: Arc<WorkerMetrics>,
    ) -> Result<Self, WorkerError> {
        let js = jetstream::new(client);
        let topology = Topology::open(&js).await?;
        let consumer = topology
            .jobs
            .get_or_create_consumer(
                names::WORKERS_CONSUMER,
                consumer::pull::Config {
                    durable_name: Some(names::WORKERS_CONSUMER.into()),
                    ack_policy: consumer::AckPolicy::Explicit,
                    ack_wait: config.ack_wait,
                    max_deliver: -1,
                    ..Default::default()
                },
            )
            .await
            .map_err(|e| NatsError::new(format!("consumer {}", names::WORKERS_CONSUMER), e))?;
        let ack_wait = consumer.cached_info().config.ack_wait;
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(config.threads)
            .thread_name(|i| format!("zeppelin-worker-{i}"))
            .build()
            .map_err(|e| WorkerError::Pool(e.to_string()))?;
        Ok(Self {
            js,
            topology,
            consumer,
            pool: Arc::new(pool),
            kernels: HashMap::new(),
            metrics,
            ack_wait,
            key,
            refusals: RefusalLog::default(),
        })
    }

    /// The consumer's ack wait (the existing consumer's, if another worker created it).
    pub fn ack_wait(&self) -> Duration {
        self.ack_wait
    }

    /// Processes jobs until `stop` resolves (checked between jobs; a shard in progress is
    /// finished first).
    pub async fn run(
        mut self,
        stop: impl std::future::Future<Output = ()>,
    ) -> Result<(), WorkerError> {
        tokio::pin!(stop);
        loop {
            let batch = tokio::select! {
                _ = &mut stop => return Ok(()),
                batch = self.consumer.fetch().max_messages(1).expires(Duration::from_secs(5)).messages() => batch,
            };
            let mut batch = batch.map_err(|e| NatsError::new("fetching a job", e))?;
            loop {
                let message = tokio::select! {
                    _ = &mut stop => return Ok(()),
                    message = batch.next() => message,
                };
                let Some(message) = message else { break };
                let message = match message {
                    Ok(m) => m,
                    Err(e) => {
                        tracing::warn!(error = %e, "job fetch failed");
                        break;
                    }
                };
                self.handle(message).await;
            }
        }
    }

    async fn handle(&mut self, message: jetstream::Message) {
        let subject = message.subject.to_string();
        let tag = message
            .headers
            .as_ref()
            .and_then(|h| h.get(TAG_HEADER))
            .map(|v| v.as_str().to_owned());
        let opened = ShardJob::open(
            &self.key,
            &subject,
            tag.as_deref(),
            message.payload.clone(),
            unix_now(),
        );
        let job = match opened {
            Ok(job) => job,
            Err(e) => {
                if matches!(e, JobError::Unauthenticated { .. }) {
                    self.metrics
                        .shards_unauthenticated
                        .fetch_add(1, Ordering::Relaxed);
                    if let Some(refused) = self.refusals.note() {
                        tracing::warn!(error = %e, refused, "unauthenticated job refused (not done)");
                    }
                } else {
                    self.metrics.shards_invalid.fetch_add(1, Ordering::Relaxed);
                    tracing::warn!(error = %e, "job refused");
                }
                if let Err(e) = message.ack_with(AckKind::Term).await {
                    tracing::warn!(error = %e, "terminating the refused job failed");
                }
                return;
            }
        };
        let started = Instant::now();
        // In-progress acknowledgements while the shard is read and summed.
        let progress = {
            let message = message.clone();
            let every = (self.ack_wait / 3).max(Duration::from_millis(100));
            tokio::spawn(async move {
                let mut tick = tokio::time::interval(every);
                tick.tick().await;
                loop {
                    tick.tick().await;
                    if let Err(e) = message.ack_with(AckKind::Progress).await {
                        tracing::warn!(error = %e, "in-progress ack failed");
                    }
                }
            })
        };
        let result = self.compute(&job).await;
        progress.abort();
        match result {
            Ok(partial) => match message.double_ack().await {
                Ok(()) => {
                    self.metrics.shards_done.fetch_add(1, Ordering::Relaxed);
                    self.metrics
                        .ciphertexts
                        .fetch_add(partial.count, Ordering::Relaxed);
                    self.metrics
                        .rejected
                        .fetch_add(partial.rejected, Ordering::Relaxed);
                    tracing::info!(
                        job = %job.job.job,
                        shard = job.job.shard,
                        count = partial.count,
                        rejected = partial.rejected,
                        ms = started.elapsed().as_millis() as u64,
                        "shard done"
                    );
                }
                Err(e) => {
                    self.metrics.shards_failed.fetch_add(1, Ordering::Relaxed);
                    tracing::warn!(error = %e, "ack failed; the shard will be redelivered")
                }
            },
            Err(e) => {
                self.metrics.shards_failed.fetch_add(1, Ordering::Relaxed);
                tracing::warn!(job = %job.job.job, shard = job.job.shard, error = %e, "shard failed; asking for redelivery");
                let _ = message
                    .ack_with(AckKind::Nak(Some(Duration::from_secs(1))))
                    .await;
            }
        }
    }

    fn kernel(&mut self, preset: Preset) -> Result<Arc<Kernel>, WorkerError> {
        if let Some(k) = self.kernels.get(preset.name()) {
            return Ok(k.clone());
        }
        let codec = preset
            .codec()
            .map_err(|e| WorkerError::Seal(e.to_string()))?;
        let evaluator =
            Evaluator::new(codec.seal().clone()).map_err(|e| WorkerError::Seal(e.to_string()))?;
        let kernel = Arc::new(Kernel { codec, evaluator });
        self.kernels.insert(preset.name(), kernel.clone());
        Ok(kernel)
    }

    /// Reads, sums and stores one shard's partial (idempotent: the same shard always gives
    /// the same object bytes).
    async fn compute(&mut self, job: &ValidJob) -> Result<Partial, WorkerError> {
        let kernel = self.kernel(job.preset)?;
        let j = &job.job;
        let uploads =
            read_uploads(&self.js, &j.filter, j.first_seq, j.last_seq, j.count, false).await?;
        let (pool, stream, op) = (self.pool.clone(), job.stream.clone(), job.op.clone());
        let k = kernel.clone();
        let sum = tokio::task::spawn_blocking(move || {
            pool.install(|| {
                sum_uploads(
                    &*k.codec,
                    &k.evaluator,
                    &stream,
                    &op,
                    0,
                    &uploads,
                    BadUpload::Skip,
                )
            })
        })
        .await
        .map_err(|e| WorkerError::Seal(format!("sum task: {e}")))??;
        let partial = Partial {
            ciphertext: sum.ciphertext,
            count: sum.count,
            rejected: sum.rejected,
        };
        let bytes = partial
            .to_object(&self.key, job)
            .map_err(|e| WorkerError::Seal(e.to_string()))?;
        let name = names::partial_object(&j.job, j.shard);
        let mut reader: &[u8] = &Bytes::from(bytes);
        self.topology
            .partials
            .put(name.as_str(), &mut reader)
            .await
            .map_err(|e| NatsError::new(format!("putting partial {name}"), e))?;
        Ok(partial)
    }
}
