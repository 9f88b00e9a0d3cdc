//! Every name Zeppelin uses in NATS: streams, subjects, consumers, buckets, headers and MQTT
//! topics, and the mapping of an upload's idempotency key to its subject token.
//!
//! One upload is one message on `zeppelin.up.<stream>.<token>` in the JetStream stream
//! [`UPLOADS_STREAM`], which keeps at most one message per subject: each (stream, key) pair
//! holds at most one upload, forever (not only within a deduplication window).
//!
//! - `<stream>` is the device stream name. NATS separates subject tokens with `.`, which a
//!   [`StreamName`] may contain, so names with `.` are refused here ([`LayoutError`]).
//! - `<token>` is the idempotency key itself when it is [`is_literal_key`]
//!   (`[A-Za-z0-9_-]{1,128}`, safe in a NATS subject and an MQTT topic), else `~` and the
//!   lowercase hex SHA-256 of the key (the original key then travels in [`KEY_HEADER`]);
//!   an upload without key gets `~r` and 32 random hex digits.

use sha2::{Digest, Sha256};
use zeppelin_service::names::{IdempotencyKey, StreamName};

/// The JetStream stream holding every upload.
pub const UPLOADS_STREAM: &str = "ZEPPELIN_UPLOADS";
/// The first tokens of every upload subject.
pub const UPLOAD_PREFIX: &str = "zeppelin.up";
/// The subjects of [`UPLOADS_STREAM`].
pub const UPLOAD_SUBJECTS: &str = "zeppelin.up.>";
/// The first tokens of every receipt subject (core NATS, not stored).
pub const RECEIPT_PREFIX: &str = "zeppelin.receipt";
/// The durable pull consumer of [`UPLOADS_STREAM`] shared by every receipt task.
pub const RECEIPTS_CONSUMER: &str = "zeppelin-receipts";
/// Header carrying the original idempotency key when the subject token is its hash.
pub const KEY_HEADER: &str = "Zeppelin-Key";

/// The MQTT topic prefix of uploads (`zeppelin/up/<stream>/<key>`).
pub const MQTT_UPLOAD_PREFIX: &str = "zeppelin/up";
/// The MQTT topic prefix of receipts (`zeppelin/receipt/<stream>/<key>`).
pub const MQTT_RECEIPT_PREFIX: &str = "zeppelin/receipt";

/// The JetStream work-queue stream of aggregation shard jobs.
pub const JOBS_STREAM: &str = "ZEPPELIN_JOBS";
/// The first tokens of every job subject.
pub const JOB_PREFIX: &str = "zeppelin.job";
/// The subjects of [`JOBS_STREAM`].
pub const JOB_SUBJECTS: &str = "zeppelin.job.>";
/// The durable pull consumer of [`JOBS_STREAM`] shared by every worker.
pub const WORKERS_CONSUMER: &str = "zeppelin-workers";
/// The object store bucket of partial results.
pub const PARTIALS_BUCKET: &str = "zeppelin-partials";
/// The first bytes of a partial result object.
pub const PARTIAL_MAGIC: &[u8; 6] = b"ZPART2";

/// Longest literal key (the service's idempotency key limit).
pub const MAX_LITERAL_KEY: usize = zeppelin_service::names::MAX_IDEMPOTENCY_KEY;

/// A name that cannot be placed in a NATS subject.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LayoutError {
    /// A stream name with `.` (a NATS subject token separator).
    #[error(
        "stream name {0:?} contains '.', which separates NATS subject tokens: \
         the NATS store takes stream names of A-Z a-z 0-9 _ - only"
    )]
    DotInStream(String),
}

/// The stream name as a subject token: refused if it contains `.`.
pub fn stream_token(stream: &StreamName) -> Result<&str, LayoutError> {
    let s = stream.as_str();
    if s.contains('.') {
        return Err(LayoutError::DotInStream(s.to_owned()));
    }
    Ok(s)
}

/// Whether `key` is used as its own subject token: 1 to [`MAX_LITERAL_KEY`] bytes of
/// `A-Z a-z 0-9 _ -`.
pub fn is_literal_key(key: &str) -> bool {
    !key.is_empty()
        && key.len() <= MAX_LITERAL_KEY
        && key
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// The subject token of an idempotency key: the key itself when [`is_literal_key`], else
/// `~` + hex SHA-256 of the key.
pub fn key_token(key: &IdempotencyKey) -> String {
    let k = key.as_str();
    if is_literal_key(k) {
        k.to_owned()
    } else {
        format!("~{}", crate::hex::encode(&Sha256::digest(k.as_bytes())))
    }
}

/// Whether the token of `key` is a hash (so the message carries [`KEY_HEADER`]).
pub fn key_is_hashed(key: &IdempotencyKey) -> bool {
    !is_literal_key(key.as_str())
}

/// A fresh token for an upload without idempotency key: `~r` + 32 random hex digits.
pub fn random_token() -> String {
    use rand_core::{OsRng, RngCore};
    let mut b = [0u8; 16];
    OsRng.fill_bytes(&mut b);
    format!("~r{}", crate::hex::encode(&b))
}

/// The subject of one upload: `zeppelin.up.<stream>.<token>`.
pub fn upload_subject(stream: &str, token: &str) -> String {
    format!("{UPLOAD_PREFIX}.{stream}.{token}")
}

/// The filter subject of every upload of a device stream: `zeppelin.up.<stream>.*`.
pub fn stream_filter(stream: &str) -> String {
    format!("{UPLOAD_PREFIX}.{stream}.*")
}

/// The subject of an upload's receipt: `zeppelin.receipt.<stream>.<token>`.
pub fn receipt_subject(stream: &str, token: &str) -> String {
    format!("{RECEIPT_PREFIX}.{stream}.{token}")
}

/// Splits an upload subject into `(stream, token)`; `None` for any other subject.
pub fn parse_upload_subject(subject: &str) -> Option<(&str, &str)> {
    let rest = subject.strip_prefix(UPLOAD_PREFIX)?.strip_prefix('.')?;
    let (stream, token) = rest.split_once('.')?;
    if stream.is_empty() || token.is_empty() || token.contains('.') {
        return None;
    }
    Some((stream, token))
}

/// The MQTT topic a device publishes an upload to: `zeppelin/up/<stream>/<key>` (the NATS
/// MQTT gateway maps `/` to `.`, so it lands on [`upload_subject`]).
pub fn mqtt_upload_topic(stream: &str, key: &str) -> String {
    format!("{MQTT_UPLOAD_PREFIX}/{stream}/{key}")
}

/// The MQTT topic of an upload's receipt: `zeppelin/receipt/<stream>/<key>`.
pub fn mqtt_receipt_topic(stream: &str, key: &str) -> String {
    format!("{MQTT_RECEIPT_PREFIX}/{stream}/{key}")
}

/// The subject of shard `shard` of job `job`: `zeppelin.job.<job>.<shard>`.
pub fn job_subject(job: &str, shard: u64) -> String {
    format!("{JOB_PREFIX}.{job}.{shard}")
}

/// The `Nats-Msg-Id` of a shard job (`<job>.<shard>`), so a re-published shard is dropped.
pub fn job_msg_id(job: &str, shard: u64) -> String {
    format!("{job}.{shard}")
}

/// The object name of a shard's partial result in [`PARTIALS_BUCKET`]: `<job>/<shard>`.
pub fn partial_object(job: &str, shard: u64) -> String {
    format!("{job}/{shard}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name(s: &str) -> StreamName {
        StreamName::new(s).expect("valid test name")
    }

    fn key(s: &str) -> IdempotencyKey {
        IdempotencyKey::new(s).expect("valid test key")
    }

    #[test]
    fn streams_with_a_dot_are_refused() {
        assert_eq!(stream_token(&name("temp-1_a")), Ok("temp-1_a"));
        assert_eq!(
            stream_token(&name("sensors.temp")),
            Err(LayoutError::DotInStream("sensors.temp".into()))
        );
    }

    #[test]
    fn literal_keys_are_their_own_token() {
        assert_eq!(key_token(&key("dev-7_reading-42")), "dev-7_reading-42");
        assert!(!key_is_hashed(&key("dev-7_reading-42")));
        let long = "k".repeat(128);
        assert_eq!(key_token(&key(&long)), long);
    }

    #[test]
    fn other_keys_are_hashed_with_sha256() {
        // SHA-256("abc") from FIPS 180-2, appendix B.1.
        let abc = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
        // "abc" is literal; "a.c" and "a/c" are not (subject and topic separators).
        assert_eq!(key_token(&key("abc")), "abc");
        let dotted = key_token(&key("a.c"));
        assert_eq!(dotted.len(), 65);
        assert!(dotted.starts_with('~'));
        assert_ne!(dotted, key_token(&key("a/c")));
        assert!(key_is_hashed(&key("device-1/0")));
        // The known digest checks the hashing and the hex encoding.
        assert_eq!(crate::hex::encode(&Sha256::digest(b"abc")), abc);
        assert_eq!(
            key_token(&key("abc!")),
            format!("~{}", crate::hex::encode(&Sha256::digest(b"abc!")))
        );
    }

    #[test]
    fn random_tokens_are_fresh_and_well_formed() {
        let a = random_token();
        let b = random_token();
        assert_ne!(a, b);
        assert_eq!(a.len(), 34);
        assert!(a.starts_with("~r"));
        assert!(a[2..].bytes().all(|c| c.is_ascii_hexdigit()));
        // Never a literal key, so it cannot collide with a client's key.
        assert!(!is_literal_key(&a));
    }

    #[test]
    fn subjects_and_topics() {
        assert_eq!(upload_subject("temp", "k1"), "zeppelin.up.temp.k1");
        assert_eq!(stream_filter("temp"), "zeppelin.up.temp.*");
        assert_eq!(receipt_subject("temp", "k1"), "zeppelin.receipt.temp.k1");
        assert_eq!(
            parse_upload_subject("zeppelin.up.temp.k1"),
            Some(("temp", "k1"))
        );
        assert_eq!(parse_upload_subject("zeppelin.up.temp"), None);
        assert_eq!(parse_upload_subject("zeppelin.up.temp.a.b"), None);
        assert_eq!(parse_upload_subject("zeppelin.upx.temp.k"), None);
        assert_eq!(mqtt_upload_topic("temp", "k1"), "zeppelin/up/temp/k1");
        assert_eq!(mqtt_receipt_topic("temp", "k1"), "zeppelin/receipt/temp/k1");
        // The MQTT gateway maps '/' to '.': the topics are the subjects.
        assert_eq!(
            mqtt_upload_topic("temp", "k1").replace('/', "."),
            upload_subject("temp", "k1")
        );
        assert_eq!(
            mqtt_receipt_topic("temp", "k1").replace('/', "."),
            receipt_subject("temp", "k1")
        );
        assert_eq!(job_subject("j1", 3), "zeppelin.job.j1.3");
        assert_eq!(job_msg_id("j1", 3), "j1.3");
        assert_eq!(partial_object("j1", 3), "j1/3");
    }
}
