//! The coordinator of distributed aggregation ([`JobAggregator`], an
//! `zeppelin_service::Aggregator`): snapshot the uploads stream, list the device stream's
//! sequences (headers only), cut them into shards of K, publish one job per shard, wait for
//! every partial in the object store, add the partials by tree reduction, relinearize once
//! (`sum_of_squares`) and delete the job's objects.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use async_nats::jetstream::{self, message::PublishMessage};
use rayon::prelude::*;
use tokio::io::AsyncReadExt;
use zeppelin_seal::Ciphertext;
use zeppelin_service::aggregate::{add_optional, check_op, finish, Aggregated, Aggregation};
use zeppelin_service::names::StreamName;
use zeppelin_service::store::BoxFuture;
use zeppelin_service::{AggregateOp, Aggregator, ServiceError};

use crate::jobs::{names, new_job_id, JobOp, NatsError, Partial, ShardJob, Topology};
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

/// Aggregation by the worker group on NATS (see the module docs).
pub struct JobAggregator {
    js: jetstream::Context,
    topology: Topology,
    config: JobConfig,
    rejected: AtomicU64,
}

fn unavailable(e: impl std::fmt::Display) -> ServiceError {
    ServiceError::Unavailable(e.to_string())
}

/// One shard as cut by the coordinator.
struct Cut {
    job: ShardJob,
}

impl JobAggregator {
    /// Creates (or opens) the job stream and partials bucket with `replicas` replicas.
    pub async fn connect(
        client: async_nats::Client,
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
        })
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
        let cuts = self.cut(&job_id, &with, &stream, &op, &seqs);
        let scanned = started.elapsed();
        for cut in &cuts {
            let body = cut
                .job
                .to_json()
                .map_err(|e| ServiceError::Internal(e.to_string()))?;
            let publish = PublishMessage::build()
                .payload(body.into())
                .message_id(names::job_msg_id(&job_id, cut.job.shard));
            self.js
                .send_publish(names::job_subject(&job_id, cut.job.shard), publish)
                .await
                .map_err(unavailable)?
                .await
                .map_err(unavailable)?;
        }
        let published = started.elapsed();
        let result = self.wait_and_combine(&job_id, &cuts, &with).await;
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
    ) -> Vec<Cut> {
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
                };
                position += n;
                Cut { job }
            })
            .collect()
    }

    /// Waits for every partial, then adds them (tree reduction on rayon).
    async fn wait_and_combine(
        &self,
        job_id: &str,
        cuts: &[Cut],
        with: &Aggregation,
    ) -> Result<(Option<Ciphertext>, u64, u64), ServiceError> {
        let deadline = Instant::now() + self.config.timeout;
        let mut partials: Vec<Option<Partial>> = vec![None; cuts.len()];
        let mut missing: Vec<usize> = (0..cuts.len()).collect();
        loop {
            let mut still = Vec::new();
            for &i in &missing {
                let name = names::partial_object(job_id, cuts[i].job.shard);
                match self.topology.partials.get(name.as_str()).await {
                    Ok(mut object) => {
                        let mut bytes = Vec::new();
                        object
                            .read_to_end(&mut bytes)
                            .await
                            .map_err(|e| unavailable(format!("reading partial {name}: {e}")))?;
                        let partial = Partial::from_bytes(
                            with.codec.seal(),
                            &name,
                            &bytes,
                            cuts[i].job.count,
                        )
                        .map_err(|e| ServiceError::Internal(e.to_string()))?;
                        partials[i] = Some(partial);
                    }
                    Err(e)
                        if e.kind()
                            == async_nats::jetstream::object_store::GetErrorKind::NotFound =>
                    {
                        still.push(i)
                    }
                    Err(e) => return Err(unavailable(format!("reading partial {name}: {e}"))),
                }
            }
            missing = still;
            if missing.is_empty() {
                break;
            }
            if Instant::now() >= deadline {
                return Err(ServiceError::Unavailable(format!(
                    "shard {} of job {job_id} not finished after {} s ({} of {} shards missing)",
                    cuts[missing[0]].job.shard,
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
