//! The messages of distributed aggregation: a shard job (JSON on `zeppelin.job.<job>.<shard>`
//! in the work-queue stream `ZEPPELIN_JOBS`) and a partial result (the `ZPART1` object
//! `<job>/<shard>` in the bucket `zeppelin-partials`), with the checks applied to everything
//! read back from NATS, and the JetStream topology both sides use.

use std::time::Duration;

use async_nats::jetstream::{self, object_store, stream};
use serde::{Deserialize, Serialize};
use zeppelin_seal::{Ciphertext, ComprMode, SealContext, SealError};
use zeppelin_service::names::StreamName;
use zeppelin_service::{AggregateOp, Preset};

/// The NATS names distributed aggregation uses (zeppelin-cluster's [`crate::layout`]).
pub mod names {
    pub use crate::layout::{
        job_msg_id, job_subject, partial_object, stream_filter, upload_subject, JOBS_STREAM,
        JOB_PREFIX, JOB_SUBJECTS, PARTIALS_BUCKET, PARTIAL_MAGIC, UPLOADS_STREAM, WORKERS_CONSUMER,
    };
}

/// Most uploads one shard may hold (a worker keeps a shard's uploads in memory).
pub const MAX_SHARD_UPLOADS: u64 = 100_000;
/// Longest job id.
pub const MAX_JOB_ID: usize = 64;
/// The largest job message (a dot shard of [`MAX_SHARD_UPLOADS`] weights fits).
pub const MAX_JOB_BYTES: usize = 4 << 20;

/// Why a job message or a partial read from NATS was refused.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum JobError {
    /// Not the job JSON.
    #[error("job message is not the expected JSON: {0}")]
    Json(#[from] serde_json::Error),
    /// A job message over [`MAX_JOB_BYTES`].
    #[error("job message of {found} bytes, over the limit of {limit}")]
    TooLarge {
        /// Its size.
        found: usize,
        /// The limit.
        limit: usize,
    },
    /// A field that breaks the rules.
    #[error("job {job:?} shard {shard}: {what}")]
    Invalid {
        /// The job id (cut to [`MAX_JOB_ID`] characters).
        job: String,
        /// The shard index.
        shard: u64,
        /// What is wrong.
        what: String,
    },
    /// A partial object that is not `ZPART1`.
    #[error("partial {object}: {what}")]
    BadPartial {
        /// The object name.
        object: String,
        /// What is wrong.
        what: String,
    },
    /// A partial whose ciphertext does not load under the preset.
    #[error("partial {object}: {source}")]
    PartialCiphertext {
        /// The object name.
        object: String,
        /// Why.
        #[source]
        source: SealError,
    },
}

/// The op of a job, without its weights (those travel per shard).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum JobOp {
    /// `Σ ct_i`.
    Sum,
    /// `Σ ct_i²`, not relinearized (the combiner relinearizes once).
    SumOfSquares,
    /// `Σ w_i · ct_i`.
    Dot,
}

impl JobOp {
    /// The op of an aggregation request.
    pub fn of(op: &AggregateOp) -> Self {
        match op {
            AggregateOp::Sum => JobOp::Sum,
            AggregateOp::SumOfSquares => JobOp::SumOfSquares,
            AggregateOp::Dot(_) => JobOp::Dot,
        }
    }
}

/// One shard of an aggregation job: `count` uploads of `stream` with sequences in
/// `first_seq ..= last_seq`, the `first_position`-th upload of the job onward.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShardJob {
    /// The job id (`[A-Za-z0-9_-]{1,64}`).
    pub job: String,
    /// The shard index (0-based).
    pub shard: u64,
    /// The preset name of the uploads.
    pub preset: String,
    /// The device stream.
    pub stream: String,
    /// The filter subject of the stream's uploads.
    pub filter: String,
    /// The first upload's sequence in `ZEPPELIN_UPLOADS`.
    pub first_seq: u64,
    /// The last upload's sequence.
    pub last_seq: u64,
    /// The uploads in the shard.
    pub count: u64,
    /// The job-wide position of the shard's first upload.
    pub first_position: u64,
    /// The op.
    pub op: JobOp,
    /// `dot`: this shard's weights (one per upload, in order); other ops: none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weights: Option<Vec<i64>>,
}

/// A job message after its checks: the job and what it names, typed.
#[derive(Clone, Debug)]
pub struct ValidJob {
    /// The job as read.
    pub job: ShardJob,
    /// Its preset.
    pub preset: Preset,
    /// Its stream.
    pub stream: StreamName,
    /// The op with this shard's weights (`dot` indexes them from 0 in the shard).
    pub op: AggregateOp,
}

/// Whether `id` is a job id: 1 to [`MAX_JOB_ID`] bytes of `A-Z a-z 0-9 _ -`.
pub fn is_job_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= MAX_JOB_ID
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// A fresh job id: 32 random hex digits.
pub fn new_job_id() -> String {
    use rand_core::{OsRng, RngCore};
    let mut b = [0u8; 16];
    OsRng.fill_bytes(&mut b);
    b.iter().map(|b| format!("{b:02x}")).collect()
}

impl ShardJob {
    /// The JSON body of the job message.
    pub fn to_json(&self) -> Result<Vec<u8>, serde_json::Error> {
        serde_json::to_vec(self)
    }

    /// Reads and checks a job message that arrived on `subject`.
    pub fn parse(subject: &str, body: &[u8]) -> Result<ValidJob, JobError> {
        if body.len() > MAX_JOB_BYTES {
            return Err(JobError::TooLarge {
                found: body.len(),
                limit: MAX_JOB_BYTES,
            });
        }
        let job: ShardJob = serde_json::from_slice(body)?;
        job.validate(subject)
    }

    fn invalid(&self, what: impl Into<String>) -> JobError {
        JobError::Invalid {
            job: self.job.chars().take(MAX_JOB_ID).collect(),
            shard: self.shard,
            what: what.into(),
        }
    }

    /// Checks every field and that the job arrived on its own subject.
    pub fn validate(self, subject: &str) -> Result<ValidJob, JobError> {
        if !is_job_id(&self.job) {
            return Err(self.invalid("job id is not 1 to 64 of A-Z a-z 0-9 _ -"));
        }
        if subject != names::job_subject(&self.job, self.shard) {
            return Err(self.invalid(format!("arrived on subject {subject:?}")));
        }
        let preset = Preset::from_name(&self.preset)
            .ok_or_else(|| self.invalid(format!("unknown preset {:?}", self.preset)))?;
        let stream =
            StreamName::new(&self.stream).map_err(|e| self.invalid(format!("stream: {e}")))?;
        if self.stream.contains('.') || self.filter != names::stream_filter(&self.stream) {
            return Err(self.invalid(format!(
                "filter {:?} is not the stream's upload subjects",
                self.filter
            )));
        }
        if self.first_seq == 0 || self.first_seq > self.last_seq {
            return Err(self.invalid(format!(
                "sequences {} to {} are not a range",
                self.first_seq, self.last_seq
            )));
        }
        let span = self.last_seq - self.first_seq + 1;
        if self.count == 0 || self.count > span || self.count > MAX_SHARD_UPLOADS {
            return Err(self.invalid(format!(
                "count {} for {span} sequences (limit {MAX_SHARD_UPLOADS})",
                self.count
            )));
        }
        if self.first_position.checked_add(self.count).is_none() {
            return Err(self.invalid("first_position overflows"));
        }
        let op = match (self.op, &self.weights) {
            (JobOp::Sum, None) => AggregateOp::Sum,
            (JobOp::SumOfSquares, None) => AggregateOp::SumOfSquares,
            (JobOp::Dot, Some(w)) if w.len() as u64 == self.count => AggregateOp::Dot(w.clone()),
            (JobOp::Dot, Some(w)) => {
                return Err(self.invalid(format!("{} weights for {} uploads", w.len(), self.count)))
            }
            (JobOp::Dot, None) => return Err(self.invalid("dot without weights")),
            (_, Some(_)) => return Err(self.invalid("weights for an op that takes none")),
        };
        Ok(ValidJob {
            preset,
            stream,
            op,
            job: self,
        })
    }
}

/// A shard's partial result: the sum of its terms (absent when nothing added to it), the
/// uploads it covers and the uploads left out because they did not decode.
#[derive(Clone, Debug, PartialEq)]
pub struct Partial {
    /// The sum (size 2, or 3 for `sum_of_squares`); `None` when no upload added anything.
    pub ciphertext: Option<Ciphertext>,
    /// Uploads covered.
    pub count: u64,
    /// Uploads skipped (their bodies did not decode).
    pub rejected: u64,
}

/// Bytes of the `ZPART1` header: magic, count, rejected.
const PARTIAL_HEADER: usize = 6 + 8 + 8;

impl Partial {
    /// The object bytes: `ZPART1`, count (u64 LE), rejected (u64 LE), then the SEAL
    /// ciphertext (uncompressed, so that a re-put of the same shard is byte-identical), or
    /// nothing for an absent sum.
    pub fn to_bytes(&self) -> Result<Vec<u8>, SealError> {
        let ct = match &self.ciphertext {
            Some(ct) => ct.save(ComprMode::None)?,
            None => Vec::new(),
        };
        let mut out = Vec::with_capacity(PARTIAL_HEADER + ct.len());
        out.extend_from_slice(names::PARTIAL_MAGIC);
        out.extend_from_slice(&self.count.to_le_bytes());
        out.extend_from_slice(&self.rejected.to_le_bytes());
        out.extend_from_slice(&ct);
        Ok(out)
    }

    /// Reads object `object`'s bytes under `ctx`; `max_count` bounds the count it may claim
    /// (the shard's uploads).
    pub fn from_bytes(
        ctx: &SealContext,
        object: &str,
        bytes: &[u8],
        max_count: u64,
    ) -> Result<Self, JobError> {
        let bad = |what: String| JobError::BadPartial {
            object: object.to_owned(),
            what,
        };
        if bytes.len() < PARTIAL_HEADER {
            return Err(bad(format!(
                "{} bytes, shorter than the header",
                bytes.len()
            )));
        }
        let (header, ct) = bytes.split_at(PARTIAL_HEADER);
        if &header[..6] != names::PARTIAL_MAGIC {
            return Err(bad("no ZPART1 magic".into()));
        }
        let word = |i: usize| {
            let mut w = [0u8; 8];
            w.copy_from_slice(&header[i..i + 8]);
            u64::from_le_bytes(w)
        };
        let (count, rejected) = (word(6), word(14));
        if count.checked_add(rejected).is_none_or(|n| n > max_count) {
            return Err(bad(format!(
                "{count} uploads and {rejected} rejected for a shard of {max_count}"
            )));
        }
        let ciphertext = if ct.is_empty() {
            None
        } else {
            Some(
                Ciphertext::load(ctx, ct).map_err(|source| JobError::PartialCiphertext {
                    object: object.to_owned(),
                    source,
                })?,
            )
        };
        Ok(Self {
            ciphertext,
            count,
            rejected,
        })
    }
}

/// The JetStream side of distributed aggregation: the job stream and the partials bucket.
pub struct Topology {
    /// The `ZEPPELIN_JOBS` stream.
    pub jobs: stream::Stream,
    /// The `zeppelin-partials` bucket.
    pub partials: object_store::ObjectStore,
}

/// Why NATS failed (connect, stream, consumer, object store).
#[derive(Debug, thiserror::Error)]
#[error("NATS: {what}: {source}")]
pub struct NatsError {
    /// What was being done.
    pub what: String,
    /// Why it failed.
    #[source]
    pub source: Box<dyn std::error::Error + Send + Sync>,
}

impl NatsError {
    /// Wraps `source` with what was being done.
    pub fn new(
        what: impl Into<String>,
        source: impl Into<Box<dyn std::error::Error + Send + Sync>>,
    ) -> Self {
        Self {
            what: what.into(),
            source: source.into(),
        }
    }
}

impl Topology {
    /// Creates (or opens) the job stream and the partials bucket with `replicas` replicas
    /// (the service does this; workers [`Topology::open`] them).
    pub async fn ensure(js: &jetstream::Context, replicas: usize) -> Result<Self, NatsError> {
        let jobs = js
            .get_or_create_stream(stream::Config {
                name: names::JOBS_STREAM.into(),
                subjects: vec![names::JOB_SUBJECTS.into()],
                retention: stream::RetentionPolicy::WorkQueue,
                storage: stream::StorageType::File,
                num_replicas: replicas,
                duplicate_window: Duration::from_secs(120),
                ..Default::default()
            })
            .await
            .map_err(|e| NatsError::new(format!("stream {}", names::JOBS_STREAM), e))?;
        let partials = match js.get_object_store(names::PARTIALS_BUCKET).await {
            Ok(store) => store,
            Err(_) => js
                .create_object_store(object_store::Config {
                    bucket: names::PARTIALS_BUCKET.into(),
                    storage: stream::StorageType::File,
                    num_replicas: replicas,
                    ..Default::default()
                })
                .await
                .map_err(|e| NatsError::new(format!("bucket {}", names::PARTIALS_BUCKET), e))?,
        };
        Ok(Self { jobs, partials })
    }

    /// Opens the job stream and the partials bucket, waiting (polling every second) until
    /// the service has created them.
    pub async fn open(js: &jetstream::Context) -> Result<Self, NatsError> {
        let mut warned = false;
        loop {
            let jobs = js.get_stream(names::JOBS_STREAM).await;
            let partials = js.get_object_store(names::PARTIALS_BUCKET).await;
            match (jobs, partials) {
                (Ok(jobs), Ok(partials)) => return Ok(Self { jobs, partials }),
                (jobs, _) => {
                    if !warned {
                        tracing::info!(
                            found_jobs_stream = jobs.is_ok(),
                            "waiting for the service to create {} and {}",
                            names::JOBS_STREAM,
                            names::PARTIALS_BUCKET
                        );
                        warned = true;
                    }
                    tokio::time::sleep(Duration::from_secs(1)).await;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job() -> ShardJob {
        ShardJob {
            job: "0123abcd".into(),
            shard: 3,
            preset: "seal4096".into(),
            stream: "temperature".into(),
            filter: names::stream_filter("temperature"),
            first_seq: 10,
            last_seq: 20,
            count: 5,
            first_position: 15,
            op: JobOp::Dot,
            weights: Some(vec![1, -2, 3, 0, 7]),
        }
    }

    #[test]
    fn a_job_round_trips_through_json() -> Result<(), JobError> {
        let j = job();
        let body = j.to_json()?;
        let valid = ShardJob::parse(&names::job_subject("0123abcd", 3), &body)?;
        assert_eq!(valid.job, j);
        assert_eq!(valid.op, AggregateOp::Dot(vec![1, -2, 3, 0, 7]));
        assert_eq!(valid.preset, Preset::Seal4096);
        Ok(())
    }

    #[test]
    fn bad_jobs_are_refused_with_what_is_wrong() -> Result<(), JobError> {
        let subject = names::job_subject("0123abcd", 3);
        let cases: Vec<(ShardJob, &str)> = vec![
            (
                ShardJob {
                    job: "a.b".into(),
                    ..job()
                },
                "job id",
            ),
            (ShardJob { shard: 4, ..job() }, "arrived on subject"),
            (
                ShardJob {
                    preset: "bfv".into(),
                    ..job()
                },
                "unknown preset",
            ),
            (
                ShardJob {
                    filter: "zeppelin.up.>".into(),
                    ..job()
                },
                "filter",
            ),
            (
                ShardJob {
                    first_seq: 21,
                    ..job()
                },
                "not a range",
            ),
            (ShardJob { count: 12, ..job() }, "count 12"),
            (
                ShardJob {
                    weights: Some(vec![1]),
                    ..job()
                },
                "1 weights for 5",
            ),
            (
                ShardJob {
                    weights: None,
                    ..job()
                },
                "dot without weights",
            ),
            (
                ShardJob {
                    op: JobOp::Sum,
                    ..job()
                },
                "takes none",
            ),
        ];
        for (bad, expected) in cases {
            let err = ShardJob::parse(&subject, &bad.to_json()?)
                .err()
                .map(|e| e.to_string())
                .unwrap_or_default();
            assert!(
                err.contains(expected),
                "{err:?} should mention {expected:?}"
            );
        }
        let err = ShardJob::parse(&subject, b"{\"job\":1}");
        assert!(matches!(err, Err(JobError::Json(_))));
        let huge = vec![b' '; MAX_JOB_BYTES + 1];
        assert!(matches!(
            ShardJob::parse(&subject, &huge),
            Err(JobError::TooLarge { .. })
        ));
        Ok(())
    }

    #[test]
    fn partials_refuse_what_they_do_not_hold() -> Result<(), Box<dyn std::error::Error>> {
        let codec = Preset::Seal4096.codec()?;
        let ctx = codec.seal();
        let empty = Partial {
            ciphertext: None,
            count: 2,
            rejected: 1,
        };
        let bytes = empty.to_bytes()?;
        assert_eq!(Partial::from_bytes(ctx, "j/0", &bytes, 3)?, empty);
        assert!(matches!(
            Partial::from_bytes(ctx, "j/0", &bytes, 2),
            Err(JobError::BadPartial { .. })
        ));
        let mut wrong_magic = bytes.clone();
        wrong_magic[0] = b'X';
        assert!(Partial::from_bytes(ctx, "j/0", &wrong_magic, 3).is_err());
        assert!(Partial::from_bytes(ctx, "j/0", &bytes[..10], 3).is_err());
        let mut garbage = bytes;
        garbage.extend_from_slice(b"not a ciphertext");
        assert!(matches!(
            Partial::from_bytes(ctx, "j/0", &garbage, 3),
            Err(JobError::PartialCiphertext { .. })
        ));
        Ok(())
    }
}
