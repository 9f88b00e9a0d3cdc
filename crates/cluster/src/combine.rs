//! The coordinator of distributed aggregation ([`JobAggregator`], an
//! `zeppelin_service::Aggregator`): snapshot the uploads stream, list the device stream's
//! sequences (headers only), cut them into shards of K, publish one job per shard, wait for
//! every partial in the object store, add the partials by tree reduction, relinearize once
//! (`sum_of_squares`) and delete the job's objects.
//!
//! Jobs are tagged under the cluster key, and a partial is combined only once its tag —
//! over the job message it answers and its own bytes — verifies ([`crate::auth`]). A partial
//! that does not verify (written to the bucket by a party on the bus) is never decoded: it
//! is counted ([`JobAggregator::partials_refused_total`], `zeppelin_partials_refused_total`),
//! logged (at most one line per 10 s), deleted, and the shard's job is published again, so
//! a worker writes the genuine partial; after [`MAX_REFUSALS_PER_SHARD`] refusals of one
//! shard the aggregation fails with `503`.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use async_nats::jetstream::{self, message::PublishMessage};
use rayon::prelude::*;
use tokio::io::AsyncReadExt;
use zeppelin_seal::Ciphertext;
use zeppelin_service::aggregate::{add_optional, check_op, finish, Aggregated, Aggregation};
use zeppelin_service::names::StreamName;
use zeppelin_service::store::BoxFuture;
use zeppelin_service::{AggregateOp, Aggregator, Metrics, ServiceError};

use crate::auth::{unix_now, ClusterKey, RefusalLog, TAG_HEADER};
use crate::jobs::{
    names, new_job_id, JobError, JobOp, NatsError, Partial, ShardJob, SignedJob, Topology,
    MAX_PARTIAL_BYTES,
};
use crate::worker::read_uploads;

/// How the coordinator cuts and waits.
#[derive(Clone, Debug)]
pub struct JobConfig {
    /// Uploads per shard.
    pub shard_size: u64,
    /// How long to wait for every partial (then 503 naming the first missing shard).
    pub timeout: Duration,
    /// How often the bucket is polled for partials.
    pub poll: Duration,
}

impl Default for JobConfig {
    fn default() -> Self {
        Self {
            shard_size: 1_000,
            timeout: Duration::from_secs(590),
            poll: Duration::from_millis(100),
        }
    }
}

/// Refused partials of one shard after which the aggregation fails (`503`).
pub const MAX_REFUSALS_PER_SHARD: u32 = 5;
/// How long one read of a partial may take (one is at most [`MAX_PARTIAL_BYTES`]: milliseconds
/// on a healthy bus).
const PARTIAL_READ_TIMEOUT: Duration = Duration::from_secs(5);
/// How long past the aggregation's timeout a job message stays valid for workers.
const JOB_GRACE: Duration = Duration::from_secs(60);

/// Aggregation by the worker group on NATS (see the module docs).
pub struct JobAggregator {
    js: jetstream::Context,
    topology: Topology,
    config: JobConfig,
    rejected: AtomicU64,
    key: Arc<ClusterKey>,
    refused: AtomicU64,
    refusals: RefusalLog,
    metrics: Option<Arc<Metrics>>,
}

fn unavailable(e: impl std::fmt::Display) -> ServiceError {
    ServiceError::Unavailable(e.to_string())
}

/// One shard as cut by the coordinator: the job, the message published for it, and how
/// often a partial for it was refused.
struct Cut {
    job: ShardJob,
    signed: SignedJob,
    refusals: u32,
}

impl JobAggregator {
    /// Creates (or opens) the job stream and partials bucket with `replicas` replicas. Jobs
    /// are tagged, and partials checked, under `key`.
    pub async fn connect(
        client: async_nats::Client,
        key: Arc<ClusterKey>,
        replicas: usize,
        config: JobConfig,
    ) -> Result<Self, NatsError> {
        let js = jetstream::new(client);
        let topology = Topology::ensure(&js, replicas).await?;
        Ok(Self {
            js,
            topology,
            config,
            rejected: AtomicU64::new(0),
            key,
            refused: AtomicU64::new(0),
            refusals: RefusalLog::default(),
            metrics: None,
        })
    }

    /// Also counts refused partials in the service's `metrics`
    /// (`zeppelin_partials_refused_total`).
    pub fn with_metrics(mut self, metrics: Arc<Metrics>) -> Self {
        self.metrics = Some(metrics);
        self
    }

    /// Partial results refused (no valid tag) over every aggregation so far.
    pub fn partials_refused_total(&self) -> u64 {
        self.refused.load(Ordering::Relaxed)
    }

    /// Upload bodies the workers skipped because they did not decode, over every
    /// aggregation so far.
    pub fn rejected_total(&self) -> u64 {
        self.rejected.load(Ordering::Relaxed)
    }

    /// The stream's upload sequences up to the uploads stream's last sequence now.
    async fn snapshot(&self, stream: &StreamName) -> Result<Vec<u64>, ServiceError> {
        let token = stream.as_str();
        if token.contains('.') {
            return Err(ServiceError::NoStream(stream.to_string()));
        }
        let uploads = self
            .js
            .get_stream(names::UPLOADS_STREAM)
            .await
            .map_err(unavailable)?;
        let last = uploads
            .get_info()
            .await
            .map_err(unavailable)?
            .state
            .last_sequence;
        if last == 0 {
            return Err(ServiceError::NoStream(stream.to_string()));
        }
        let filter = names::stream_filter(token);
        let headers = read_uploads(&self.js, &filter, 1, last, u64::MAX, true)
            .await
            .map_err(unavailable)?;
        Ok(headers.iter().map(|u| u.id).collect())
    }

    async fn run(
        &self,
        with: Aggregation,
        stream: StreamName,
        op: AggregateOp,
    ) -> Result<Aggregated, ServiceError> {
        let started = Instant::now();
        let seqs = self.snapshot(&stream).await?;
        if seqs.is_empty() {
            return Err(ServiceError::NoStream(stream.to_string()));
        }
        let count = seqs.len() as u64;
        let t = with.codec.seal().plain_modulus();
        check_op(&op, count, t, with.relin.is_some())?;
        let job_id = new_job_id();
        let expires = unix_now() + (self.config.timeout + JOB_GRACE).as_secs();
        let mut cuts = self.cut(&job_id, &with, &stream, &op, &seqs, expires)?;
        let scanned = started.elapsed();
        for cut in &cuts {
            self.publish(cut, names::job_msg_id(&job_id, cut.job.shard))
                .await?;
        }
        let published = started.elapsed();
        let result = self.wait_and_combine(&job_id, &mut cuts, &with).await;
        self.cleanup(&job_id, cuts.len() as u64).await;
        let (total, covered, rejected) = result?;
        self.rejected.fetch_add(rejected, Ordering::Relaxed);
        if rejected > 0 {
            tracing::warn!(stream = %stream, rejected, "upload bodies that do not decode were skipped");
        }
        let total = total.ok_or(ServiceError::ZeroWeights)?;
        let (eval, relin) = (with.evaluator.clone(), with.relin.clone());
        let ciphertext =
            tokio::task::spawn_blocking(move || finish(&eval, &op, total, relin.as_deref()))
                .await
                .map_err(|e| ServiceError::Internal(format!("finish task: {e}")))??;
        tracing::info!(
            job = %job_id,
            stream = %stream,
            shards = cuts.len(),
            count = covered,
            scan_ms = scanned.as_millis() as u64,
            publish_ms = (published - scanned).as_millis() as u64,
            total_ms = started.elapsed().as_millis() as u64,
            "job combined"
        );
        Ok(Aggregated {
            ciphertext,
            count: covered,
        })
    }

    fn cut(
        &self,
        job_id: &str,
        with: &Aggregation,
        stream: &StreamName,
        op: &AggregateOp,
        seqs: &[u64],
        expires: u64,
    ) -> Result<Vec<Cut>, ServiceError> {
        let k = usize::try_from(
            self.config
                .shard_size
                .clamp(1, crate::jobs::MAX_SHARD_UPLOADS),
        )
        .unwrap_or(1_000);
        let filter = names::stream_filter(stream.as_str());
        let mut position = 0u64;
        seqs.chunks(k)
            .enumerate()
            .map(|(shard, chunk)| {
                let n = chunk.len() as u64;
                let weights = match op {
                    AggregateOp::Dot(w) => {
                        let from = usize::try_from(position).unwrap_or(usize::MAX);
                        Some(w.iter().skip(from).take(chunk.len()).copied().collect())
                    }
                    _ => None,
                };
                let job = ShardJob {
                    job: job_id.to_owned(),
                    shard: shard as u64,
                    preset: with.codec.preset_name().to_owned(),
                    stream: stream.to_string(),
                    filter: filter.clone(),
                    first_seq: chunk[0],
                    last_seq: chunk[chunk.len() - 1],
                    count: n,
                    first_position: position,
                    op: JobOp::of(op),
                    weights,
                    expires,
                };
                position += n;
                let signed = job
                    .sign(&self.key)
                    .map_err(|e| ServiceError::Internal(e.to_string()))?;
                Ok(Cut {
                    job,
                    signed,
                    refusals: 0,
                })
            })
            .collect()
    }

    /// Publishes the shard job of `cut` (tagged) with message id `msg_id`, awaiting the
    /// JetStream acknowledgement.
    async fn publish(&self, cut: &Cut, msg_id: String) -> Result<(), ServiceError> {
        let mut headers = async_nats::HeaderMap::new();
        headers.insert(TAG_HEADER, cut.signed.tag.as_str());
        let publish = PublishMessage::build()
            .payload(cut.signed.body.clone())
            .headers(headers)
            .message_id(msg_id);
        self.js
            .send_publish(cut.signed.subject.clone(), publish)
            .await
            .map_err(unavailable)?
            .await
            .map_err(unavailable)?;
        Ok(())
    }

    /// Reads partial `name` (at most [`MAX_PARTIAL_BYTES`]): `None` when it is not there, or
    /// not readable within [`PARTIAL_READ_TIMEOUT`] (the caller polls again).
    ///
    /// The bound matters: an object rewritten while it is read (a party on the bus putting
    /// its forgery again and again) has its chunks purged under the reader, and the object
    /// store's reader then waits for chunks that never come.
    async fn read_partial(&self, name: &str) -> Result<Option<Vec<u8>>, ServiceError> {
        match tokio::time::timeout(PARTIAL_READ_TIMEOUT, self.read_partial_unbounded(name)).await {
            Ok(read) => read,
            Err(_) => {
                tracing::debug!(object = %name, "reading a partial timed out; polling again");
                Ok(None)
            }
        }
    }

    async fn read_partial_unbounded(&self, name: &str) -> Result<Option<Vec<u8>>, ServiceError> {
        match self.topology.partials.get(name).await {
            Ok(object) => {
                let mut bytes = Vec::new();
                object
                    .take(MAX_PARTIAL_BYTES + 1)
                    .read_to_end(&mut bytes)
                    .await
                    .map_err(|e| unavailable(format!("reading partial {name}: {e}")))?;
                Ok(Some(bytes))
            }
            Err(e) if e.kind() == async_nats::jetstream::object_store::GetErrorKind::NotFound => {
                Ok(None)
            }
            Err(e) => Err(unavailable(format!("reading partial {name}: {e}"))),
        }
    }

    /// A partial of `cut` that was refused: counted, logged (bounded), deleted, and the
    /// shard's job published again under a new message id; `503` once the shard had
    /// [`MAX_REFUSALS_PER_SHARD`].
    async fn refuse(
        &self,
        job_id: &str,
        cut: &mut Cut,
        name: &str,
        error: &JobError,
    ) -> Result<(), ServiceError> {
        self.refused.fetch_add(1, Ordering::Relaxed);
        if let Some(m) = &self.metrics {
            m.partial_refused();
        }
        cut.refusals += 1;
        if let Some(refused) = self.refusals.note() {
            tracing::warn!(
                job = %job_id,
                shard = cut.job.shard,
                %error,
                refused,
                "partial refused (not written by a worker holding the cluster key); asking for it again"
            );
        }
        if let Err(e) = self.topology.partials.delete(name).await {
            if e.kind() != async_nats::jetstream::object_store::DeleteErrorKind::NotFound {
                tracing::warn!(object = %name, error = %e, "deleting a refused partial failed");
            }
        }
        if cut.refusals >= MAX_REFUSALS_PER_SHARD {
            return Err(ServiceError::Unavailable(format!(
                "shard {} of job {job_id}: {} partials refused (no valid tag under the cluster \
                 key: a party on the bus is writing them, or a worker has another key)",
                cut.job.shard, cut.refusals
            )));
        }
        let msg_id = format!(
            "{}.r{}",
            names::job_msg_id(job_id, cut.job.shard),
            cut.refusals
        );
        self.publish(cut, msg_id).await
    }

    /// Waits for every partial (refusing those without a valid tag), then adds them (tree
    /// reduction on rayon).
    async fn wait_and_combine(
        &self,
        job_id: &str,
        cuts: &mut [Cut],
        with: &Aggregation,
    ) -> Result<(Option<Ciphertext>, u64, u64), ServiceError> {
        let deadline = Instant::now() + self.config.timeout;
        let mut partials: Vec<Option<Partial>> = vec![None; cuts.len()];
        let mut missing: Vec<usize> = (0..cuts.len()).collect();
        loop {
            let mut still = Vec::new();
            for &i in &missing {
                let name = names::partial_object(job_id, cuts[i].job.shard);
                let Some(bytes) = self.read_partial(&name).await? else {
                    still.push(i);
                    continue;
                };
                let read = if bytes.len() as u64 > MAX_PARTIAL_BYTES {
                    Err(JobError::UnauthenticatedPartial {
                        object: name.clone(),
                        source: crate::auth::AuthError::Malformed,
                    })
                } else {
                    let cut = &cuts[i];
                    Partial::from_object(
                        &self.key,
                        with.codec.seal(),
                        &name,
                        &bytes,
                        &cut.signed.subject,
                        &cut.signed.body,
                        cut.job.count,
                    )
                };
                match read {
                    Ok(partial) => partials[i] = Some(partial),
                    Err(e @ JobError::UnauthenticatedPartial { .. }) => {
                        self.refuse(job_id, &mut cuts[i], &name, &e).await?;
                        still.push(i);
                    }
                    // Tagged by a key holder and still wrong: a bug, not the bus.
                    Err(e) => return Err(ServiceError::Internal(e.to_string())),
                }
            }
            missing = still;
            if missing.is_empty() {
                break;
            }
            if Instant::now() >= deadline {
                let first = &cuts[missing[0]];
                let refused = if first.refusals > 0 {
                    format!(", {} of its partials refused", first.refusals)
                } else {
                    String::new()
                };
                return Err(ServiceError::Unavailable(format!(
                    "shard {} of job {job_id} not finished after {} s ({} of {} shards missing{refused})",
                    first.job.shard,
                    self.config.timeout.as_secs(),
                    missing.len(),
                    cuts.len()
                )));
            }
            tokio::time::sleep(self.config.poll).await;
        }
        let partials: Vec<Partial> = partials.into_iter().flatten().collect();
        let covered: u64 = partials.iter().map(|p| p.count).sum();
        let rejected: u64 = partials.iter().map(|p| p.rejected).sum();
        let eval = with.evaluator.clone();
        let total = tokio::task::spawn_blocking(move || {
            partials
                .into_par_iter()
                .map(|p| Ok(p.ciphertext))
                .try_reduce(|| None, |a, b| add_optional(&eval, a, b))
        })
        .await
        .map_err(|e| ServiceError::Internal(format!("combine task: {e}")))??;
        Ok((total, covered, rejected))
    }

    /// Deletes the job's partials and any shard job still queued (best effort: logged).
    async fn cleanup(&self, job_id: &str, shards: u64) {
        for shard in 0..shards {
            let name = names::partial_object(job_id, shard);
            if let Err(e) = self.topology.partials.delete(name.as_str()).await {
                if e.kind() != async_nats::jetstream::object_store::DeleteErrorKind::NotFound {
                    tracing::warn!(object = %name, error = %e, "deleting a partial failed");
                }
            }
        }
        let filter = format!("{}.{job_id}.>", names::JOB_PREFIX);
        if let Err(e) = self.topology.jobs.purge().filter(filter).await {
            tracing::warn!(job = %job_id, error = %e, "purging the job's shards failed");
        }
    }
}

impl Aggregator for JobAggregator {
    fn aggregate(
        &self,
        with: Aggregation,
        stream: StreamName,
        op: AggregateOp,
    ) -> BoxFuture<'_, Result<Aggregated, ServiceError>> {
        Box::pin(self.run(with, stream, op))
    }
}
