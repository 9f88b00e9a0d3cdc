//! The messages of distributed aggregation: a shard job (JSON on `zeppelin.job.<job>.<shard>`
//! in the work-queue stream `ZEPPELIN_JOBS`, its tag in the header
//! [`crate::auth::TAG_HEADER`]) and a partial result (the `ZPART2` object `<job>/<shard>` in
//! the bucket `zeppelin-partials`, its tag inside), with the checks applied to everything
//! read back from NATS — the tag under the cluster key first ([`crate::auth`]) — and the
//! JetStream topology both sides use.

use std::time::Duration;

use async_nats::jetstream::{self, object_store, stream};
use bytes::Bytes;
use serde::{Deserialize, Serialize};
use zeppelin_seal::{Ciphertext, ComprMode, SealContext, SealError};
use zeppelin_service::names::StreamName;
use zeppelin_service::{AggregateOp, Preset};

use crate::auth::{AuthError, ClusterKey, Domain, TAG_LEN};

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
/// The largest partial object read (a size-3 seal8192 ciphertext is under 1 MiB).
pub const MAX_PARTIAL_BYTES: u64 = 16 << 20;
/// Longest subject shown in an error about a refused message.
const MAX_SHOWN_SUBJECT: usize = 128;

/// `subject` cut to [`MAX_SHOWN_SUBJECT`] characters (it comes from the bus).
fn shown(subject: &str) -> String {
    subject.chars().take(MAX_SHOWN_SUBJECT).collect()
}

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
    /// A job message without a valid tag under the cluster key (not read further).
    #[error("job message on {subject:?} refused: {source}")]
    Unauthenticated {
        /// The subject it arrived on (cut to 128 characters).
        subject: String,
        /// Why the tag was refused.
        #[source]
        source: AuthError,
    },
    /// A partial object without a valid tag for its job under the cluster key (not decoded).
    #[error("partial {object} refused: {source}")]
    UnauthenticatedPartial {
        /// The object name.
        object: String,
        /// Why the tag was refused.
        #[source]
        source: AuthError,
    },
    /// An authenticated partial whose contents break the rules (a bug of the worker).
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
    /// Unix time (seconds) after which workers refuse the job: the coordinator has given up
    /// on it by then, so a replayed message makes no work.
    pub expires: u64,
}

/// A shard job as the coordinator publishes it: the subject, the JSON body and the tag
/// (hex, for the [`crate::auth::TAG_HEADER`] header).
#[derive(Clone, Debug)]
pub struct SignedJob {
    /// `zeppelin.job.<job>.<shard>`.
    pub subject: String,
    /// The JSON body.
    pub body: Bytes,
    /// The tag over subject and body.
    pub tag: String,
}

/// A job message after its checks: the job and what it names, typed.
#[derive(Clone, Debug)]
pub struct ValidJob {
    /// The job as read.
    pub job: ShardJob,
    /// The subject it arrived on.
    pub subject: String,
    /// The message body exactly as received (the partial's tag covers it).
    pub body: Bytes,
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

    /// The message to publish: the JSON body and its tag under `key`.
    pub fn sign(&self, key: &ClusterKey) -> Result<SignedJob, serde_json::Error> {
        let subject = names::job_subject(&self.job, self.shard);
        let body = Bytes::from(self.to_json()?);
        let tag = key.tag_hex(Domain::Job, &[subject.as_bytes(), &body]);
        Ok(SignedJob { subject, body, tag })
    }

    /// Checks a job message that arrived on `subject` with header value `tag`: the tag under
    /// `key` first (nothing of the body is read before it verifies), then the size, the JSON
    /// and every field, and that it has not expired at unix time `now`.
    pub fn open(
        key: &ClusterKey,
        subject: &str,
        tag: Option<&str>,
        body: Bytes,
        now: u64,
    ) -> Result<ValidJob, JobError> {
        key.verify_hex(Domain::Job, &[subject.as_bytes(), &body], tag)
            .map_err(|source| JobError::Unauthenticated {
                subject: shown(subject),
                source,
            })?;
        let valid = Self::parse(subject, body)?;
        if valid.job.expires < now {
            return Err(valid.job.invalid(format!(
                "expired at unix time {} (now {now})",
                valid.job.expires
            )));
        }
        Ok(valid)
    }

    /// Reads and checks a job message that arrived on `subject`, **without** its tag (see
    /// [`ShardJob::open`]).
    pub fn parse(subject: &str, body: Bytes) -> Result<ValidJob, JobError> {
        if body.len() > MAX_JOB_BYTES {
            return Err(JobError::TooLarge {
                found: body.len(),
                limit: MAX_JOB_BYTES,
            });
        }
        let job: ShardJob = serde_json::from_slice(&body)?;
        job.validate(subject, body)
    }

    fn invalid(&self, what: impl Into<String>) -> JobError {
        JobError::Invalid {
            job: self.job.chars().take(MAX_JOB_ID).collect(),
            shard: self.shard,
            what: what.into(),
        }
    }

    /// Checks every field and that the job arrived on its own subject (`body`: the message
    /// it was read from).
    pub fn validate(self, subject: &str, body: Bytes) -> Result<ValidJob, JobError> {
        if !is_job_id(&self.job) {
            return Err(self.invalid("job id is not 1 to 64 of A-Z a-z 0-9 _ -"));
        }
        if subject != names::job_subject(&self.job, self.shard) {
            return Err(self.invalid(format!("arrived on subject {:?}", shown(subject))));
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
            subject: subject.to_owned(),
            body,
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

/// Bytes of the `ZPART2` header: magic, tag, count, rejected.
const PARTIAL_HEADER: usize = 6 + TAG_LEN + 8 + 8;

impl Partial {
    /// The object bytes, for the shard job `job` answers: `ZPART2`, the tag (32 bytes), count
    /// (u64 LE), rejected (u64 LE), then the SEAL ciphertext (uncompressed, so that a re-put
    /// of the same shard is byte-identical), or nothing for an absent sum. The tag, under
    /// `key`, covers the magic, the job message (subject and body) and every byte after it.
    pub fn to_object(&self, key: &ClusterKey, job: &ValidJob) -> Result<Vec<u8>, SealError> {
        let ct = match &self.ciphertext {
            Some(ct) => ct.save(ComprMode::None)?,
            None => Vec::new(),
        };
        let mut out = Vec::with_capacity(PARTIAL_HEADER + ct.len());
        out.extend_from_slice(names::PARTIAL_MAGIC);
        out.extend_from_slice(&[0u8; TAG_LEN]);
        out.extend_from_slice(&self.count.to_le_bytes());
        out.extend_from_slice(&self.rejected.to_le_bytes());
        out.extend_from_slice(&ct);
        let tag = partial_tag_parts(&job.subject, &job.body, &out[6 + TAG_LEN..]);
        let tag = key.tag(Domain::Partial, &tag);
        out[6..6 + TAG_LEN].copy_from_slice(&tag);
        Ok(out)
    }

    /// Reads object `object`'s bytes, the partial of the job published as `job_subject` /
    /// `job_body`: checks the magic and the tag under `key` before anything else is read,
    /// then decodes under `ctx`; `max_count` bounds the count it may claim (the shard's
    /// uploads).
    pub fn from_object(
        key: &ClusterKey,
        ctx: &SealContext,
        object: &str,
        bytes: &[u8],
        job_subject: &str,
        job_body: &[u8],
        max_count: u64,
    ) -> Result<Self, JobError> {
        let bad = |what: String| JobError::BadPartial {
            object: object.to_owned(),
            what,
        };
        // No ZPART2 header: no tag to check (an old worker's ZPART1, or anything else).
        if bytes.len() < PARTIAL_HEADER || &bytes[..6] != names::PARTIAL_MAGIC {
            return Err(JobError::UnauthenticatedPartial {
                object: object.to_owned(),
                source: AuthError::Missing,
            });
        }
        let (tag, payload) = bytes[6..].split_at(TAG_LEN);
        key.verify(
            Domain::Partial,
            &partial_tag_parts(job_subject, job_body, payload),
            tag,
        )
        .map_err(|source| JobError::UnauthenticatedPartial {
            object: object.to_owned(),
            source,
        })?;
        let (header, ct) = payload.split_at(16);
        let word = |i: usize| {
            let mut w = [0u8; 8];
            w.copy_from_slice(&header[i..i + 8]);
            u64::from_le_bytes(w)
        };
        let (count, rejected) = (word(0), word(8));
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

/// What a partial's tag covers: the magic, the job message and the bytes after the tag.
fn partial_tag_parts<'a>(subject: &'a str, body: &'a [u8], payload: &'a [u8]) -> [&'a [u8]; 4] {
    [names::PARTIAL_MAGIC, subject.as_bytes(), body, payload]
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
            expires: 2_000_000_000,
        }
    }

    fn key() -> ClusterKey {
        ClusterKey::from_bytes([9u8; 32])
    }

    #[test]
    fn a_signed_job_opens_under_its_key_only() -> Result<(), Box<dyn std::error::Error>> {
        let j = job();
        let signed = j.sign(&key())?;
        assert_eq!(signed.subject, names::job_subject("0123abcd", 3));
        let valid = ShardJob::open(
            &key(),
            &signed.subject,
            Some(&signed.tag),
            signed.body.clone(),
            1_000,
        )?;
        assert_eq!(valid.job, j);
        assert_eq!(valid.op, AggregateOp::Dot(vec![1, -2, 3, 0, 7]));
        assert_eq!(valid.preset, Preset::Seal4096);
        assert_eq!(valid.body, signed.body);

        let other = ClusterKey::from_bytes([8u8; 32]);
        let open = |key: &ClusterKey, subject: &str, tag: Option<&str>, body: &[u8]| {
            ShardJob::open(key, subject, tag, Bytes::copy_from_slice(body), 1_000)
        };
        for (result, expected) in [
            (
                open(&other, &signed.subject, Some(&signed.tag), &signed.body),
                AuthError::Mismatch,
            ),
            (
                open(&key(), &signed.subject, None, &signed.body),
                AuthError::Missing,
            ),
            (
                open(&key(), &signed.subject, Some("00"), &signed.body),
                AuthError::Malformed,
            ),
            // The same body on another shard's subject.
            (
                open(
                    &key(),
                    &names::job_subject("0123abcd", 4),
                    Some(&signed.tag),
                    &signed.body,
                ),
                AuthError::Mismatch,
            ),
        ] {
            match result {
                Err(JobError::Unauthenticated { source, .. }) => assert_eq!(source, expected),
                other => panic!("expected {expected:?}, got {other:?}"),
            }
        }
        // One changed weight.
        let mut body = signed.body.to_vec();
        let at = body
            .windows(3)
            .position(|w| w == b"-2,")
            .ok_or("no weight")?;
        body[at + 1] = b'3';
        assert!(matches!(
            open(&key(), &signed.subject, Some(&signed.tag), &body),
            Err(JobError::Unauthenticated { .. })
        ));
        // Expired.
        let expired = ShardJob::open(
            &key(),
            &signed.subject,
            Some(&signed.tag),
            signed.body.clone(),
            2_000_000_001,
        );
        assert!(
            matches!(&expired, Err(JobError::Invalid { what, .. }) if what.contains("expired")),
            "{expired:?}"
        );
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
            let err = ShardJob::parse(&subject, bad.to_json()?.into())
                .err()
                .map(|e| e.to_string())
                .unwrap_or_default();
            assert!(
                err.contains(expected),
                "{err:?} should mention {expected:?}"
            );
        }
        let err = ShardJob::parse(&subject, Bytes::from_static(b"{\"job\":1}"));
        assert!(matches!(err, Err(JobError::Json(_))));
        let huge = vec![b' '; MAX_JOB_BYTES + 1];
        assert!(matches!(
            ShardJob::parse(&subject, huge.into()),
            Err(JobError::TooLarge { .. })
        ));
        Ok(())
    }

    #[test]
    fn partials_refuse_what_they_do_not_hold() -> Result<(), Box<dyn std::error::Error>> {
        let codec = Preset::Seal4096.codec()?;
        let ctx = codec.seal();
        let signed = job().sign(&key())?;
        let valid = ShardJob::open(&key(), &signed.subject, Some(&signed.tag), signed.body, 0)?;
        let (subject, body) = (valid.subject.as_str(), &valid.body[..]);
        let empty = Partial {
            ciphertext: None,
            count: 2,
            rejected: 1,
        };
        let bytes = empty.to_object(&key(), &valid)?;
        assert_eq!(&bytes[..6], b"ZPART2");
        let read = |key: &ClusterKey, bytes: &[u8], subject: &str, body: &[u8], max: u64| {
            Partial::from_object(key, ctx, "j/0", bytes, subject, body, max)
        };
        assert_eq!(read(&key(), &bytes, subject, body, 3)?, empty);
        // The count is checked after the tag.
        assert!(matches!(
            read(&key(), &bytes, subject, body, 2),
            Err(JobError::BadPartial { .. })
        ));
        let mut wrong_magic = bytes.clone();
        wrong_magic[5] = b'1';
        for short_or_old in [&wrong_magic[..], &bytes[..10]] {
            assert!(matches!(
                read(&key(), short_or_old, subject, body, 3),
                Err(JobError::UnauthenticatedPartial {
                    source: AuthError::Missing,
                    ..
                })
            ));
        }
        // A changed count, another key, another job message: refused before decoding.
        let mut more = bytes.clone();
        more[6 + TAG_LEN] = 1;
        let other_job = ShardJob {
            first_seq: 11,
            ..job()
        }
        .sign(&key())?;
        for (k, b, s, jb) in [
            (key(), &more[..], subject, body),
            (ClusterKey::from_bytes([1; 32]), &bytes[..], subject, body),
            (key(), &bytes[..], subject, &other_job.body[..]),
            (key(), &bytes[..], "zeppelin.job.0123abcd.4", body),
        ] {
            assert!(
                matches!(
                    read(&k, b, s, jb, 3),
                    Err(JobError::UnauthenticatedPartial {
                        source: AuthError::Mismatch,
                        ..
                    })
                ),
                "accepted a partial it should refuse"
            );
        }
        // Garbage after a valid tag is a ciphertext error (only a key holder can make one).
        let garbage = Partial {
            ciphertext: None,
            count: 2,
            rejected: 1,
        };
        let mut g = garbage.to_object(&key(), &valid)?;
        g.extend_from_slice(b"not a ciphertext");
        let tag = key().tag(
            Domain::Partial,
            &partial_tag_parts(subject, body, &g[6 + TAG_LEN..]),
        );
        g[6..6 + TAG_LEN].copy_from_slice(&tag);
        assert!(matches!(
            read(&key(), &g, subject, body, 3),
            Err(JobError::PartialCiphertext { .. })
        ));
        Ok(())
    }
}
