//! [`NatsStore`]: the upload store on a NATS JetStream stream ([`layout::UPLOADS_STREAM`]),
//! replicated by JetStream's Raft groups.
//!
//! - An append publishes `zeppelin.up.<stream>.<token>` with
//!   `Nats-Expected-Last-Subject-Sequence: 0` (stored only if the subject holds no message:
//!   atomic in JetStream) and resolves after JetStream's publish acknowledgement, which it
//!   sends once a quorum of the stream's replicas stored the message.
//! - JetStream refusing with "wrong last sequence" means the key is already there: the stored
//!   message is read and compared byte for byte (same bytes: a duplicate; other bytes:
//!   [`StoreError::KeyReused`]). A retry of an append whose acknowledgement was lost lands
//!   there too, so it is safe.
//! - Ids are JetStream stream sequences: increasing, shared by every device stream, so not
//!   contiguous within one.
//! - A device stream's count is the pending count of a fresh consumer filtered on its
//!   subjects; the per-stream upload limit is checked against a count cached per instance
//!   (several service instances may together overshoot it a little).
//! - Every append carries the SHA-256 of its body in the [`DIGEST_HEADER`] header, checked on
//!   every read of the store ([`StoreError::DigestMismatch`]); a message without it (MQTT
//!   ingest publishes directly) is read as it is.
//! - One upload is deleted with JetStream's message delete; deleting a device's uploads is
//!   [`StoreError::NotImplemented`] (the messages do not record the device).

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use async_nats::jetstream::consumer::{pull, AckPolicy, DeliverPolicy};
use async_nats::jetstream::context::PublishErrorKind;
use async_nats::jetstream::stream::{self, DiscardPolicy, StorageType};
use async_nats::HeaderMap;
use bytes::Bytes;
use futures_util::StreamExt;
use zeppelin_service::names::{IdempotencyKey, StreamName};
use zeppelin_service::store::{
    body_sha256, AppendRequest, Appended, BoxFuture, DeleteTarget, StoreError, StoreResult,
    StoredUpload, StreamInfo, UploadStore,
};

use crate::connect::{ConnectError, NatsOptions};
use crate::layout;

/// How long an ephemeral read consumer lives unused before the server removes it (it is
/// deleted after each read; this bounds the leftovers of a crashed reader).
const READER_INACTIVE: Duration = Duration::from_secs(30);
/// How long a pull waits for the messages it asked for.
const FETCH_EXPIRES: Duration = Duration::from_secs(5);

/// The message header holding the hex SHA-256 of an upload's body.
pub const DIGEST_HEADER: &str = "Zeppelin-Body-Sha256";

/// Connects to the NATS servers of `options` (credentials and TLS: [`crate::connect`]); the
/// client reconnects to any of them, without limit, when a connection drops.
pub async fn connect(options: &NatsOptions) -> StoreResult<async_nats::Client> {
    crate::connect::connect(options, "zeppelin")
        .await
        // The message holds no credential (see `ConnectError`).
        .map_err(|e: ConnectError| StoreError::Nats(e.to_string()))
}

fn nats(what: &str, e: impl std::fmt::Display) -> StoreError {
    StoreError::Nats(format!("{what}: {e}"))
}

/// The stream name as a subject token, or [`StoreError::Unsupported`].
fn token_of(stream: &StreamName) -> StoreResult<&str> {
    layout::stream_token(stream).map_err(|e| StoreError::Unsupported(e.to_string()))
}

/// The configuration of [`layout::UPLOADS_STREAM`] with `replicas` replicas.
pub fn uploads_stream_config(replicas: usize) -> stream::Config {
    stream::Config {
        name: layout::UPLOADS_STREAM.to_owned(),
        subjects: vec![layout::UPLOAD_SUBJECTS.to_owned()],
        storage: StorageType::File,
        num_replicas: replicas.max(1),
        // One message per (stream, key) subject, forever; a re-published MQTT upload
        // replaces the old one.
        max_messages_per_subject: 1,
        discard: DiscardPolicy::Old,
        ..Default::default()
    }
}

/// The JetStream upload store (see the module documentation).
pub struct NatsStore {
    client: async_nats::Client,
    js: async_nats::jetstream::Context,
    uploads: stream::Stream,
    /// Uploads per device stream as this instance last knew them (for the upload limit).
    counts: Mutex<HashMap<String, u64>>,
    closed: AtomicBool,
}

impl NatsStore {
    /// Connects to the servers of `options` and opens (creating it if missing, with `replicas` replicas) the
    /// upload stream.
    pub async fn connect(options: &NatsOptions, replicas: usize) -> StoreResult<Self> {
        Self::open(connect(options).await?, replicas).await
    }

    /// Opens the upload stream over an existing connection (creating the stream if missing).
    /// An existing stream must keep one message per subject.
    pub async fn open(client: async_nats::Client, replicas: usize) -> StoreResult<Self> {
        let js = async_nats::jetstream::new(client.clone());
        let uploads = js
            .get_or_create_stream(uploads_stream_config(replicas))
            .await
            .map_err(|e| nats(&format!("opening stream {}", layout::UPLOADS_STREAM), e))?;
        let config = &uploads.cached_info().config;
        if config.max_messages_per_subject != 1 {
            return Err(StoreError::Unsupported(format!(
                "stream {} exists with max_msgs_per_subject {}, the store needs 1",
                layout::UPLOADS_STREAM,
                config.max_messages_per_subject
            )));
        }
        Ok(Self {
            client,
            js,
            uploads,
            counts: Mutex::new(HashMap::new()),
            closed: AtomicBool::new(false),
        })
    }

    /// The NATS connection (the receipt task and the workers share it).
    pub fn client(&self) -> &async_nats::Client {
        &self.client
    }

    /// The JetStream context.
    pub fn jetstream(&self) -> &async_nats::jetstream::Context {
        &self.js
    }

    fn cached_count(&self, stream: &str) -> Option<u64> {
        self.counts
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(stream)
            .copied()
    }

    fn set_count(&self, stream: &str, f: impl FnOnce(Option<u64>) -> u64) {
        let mut counts = self.counts.lock().unwrap_or_else(PoisonError::into_inner);
        let next = f(counts.get(stream).copied());
        counts.insert(stream.to_owned(), next);
    }

    /// The message stored under `subject`, if any.
    async fn stored(&self, subject: &str) -> StoreResult<Option<(u64, Bytes)>> {
        use async_nats::jetstream::stream::LastRawMessageErrorKind as K;
        match self.uploads.get_last_raw_message_by_subject(subject).await {
            Ok(m) => Ok(Some((m.sequence, m.payload))),
            Err(e) if matches!(e.kind(), K::NoMessageFound) => Ok(None),
            Err(e) => Err(nats(&format!("reading {subject}"), e)),
        }
    }

    /// What an append whose key is already stored returns.
    fn existing(
        request: &AppendRequest,
        key: Option<&IdempotencyKey>,
        id: u64,
        body: &Bytes,
    ) -> StoreResult<Appended> {
        if *body == request.body {
            Ok(Appended {
                id,
                duplicate: true,
            })
        } else {
            Err(StoreError::KeyReused {
                stream: request.stream.clone(),
                key: key.map_or_else(String::new, |k| k.as_str().to_owned()),
                id,
            })
        }
    }

    async fn append_inner(&self, request: AppendRequest) -> StoreResult<Appended> {
        if self.closed.load(Ordering::Acquire) {
            return Err(StoreError::Closed);
        }
        let stream = token_of(&request.stream)?.to_owned();
        let key = request.key.clone();
        let token = key
            .as_ref()
            .map_or_else(layout::random_token, layout::key_token);
        let subject = layout::upload_subject(&stream, &token);

        let count = match self.cached_count(&stream) {
            Some(c) => c,
            None => {
                let c = self.count(&stream).await?.map_or(0, |(c, _)| c);
                self.set_count(&stream, |_| c);
                c
            }
        };
        if count >= request.max_uploads {
            // A retry of an upload already stored is still answered as a duplicate.
            if let Some((id, body)) = self.stored(&subject).await? {
                return Self::existing(&request, key.as_ref(), id, &body);
            }
            return Err(StoreError::StreamFull {
                stream: request.stream.clone(),
                max: request.max_uploads,
            });
        }

        let mut headers = HeaderMap::new();
        headers.insert("Nats-Expected-Last-Subject-Sequence", "0");
        headers.insert(
            DIGEST_HEADER,
            crate::hex::encode(&body_sha256(&request.body)).as_str(),
        );
        if let Some(k) = key.as_ref().filter(|k| layout::key_is_hashed(k)) {
            headers.insert(layout::KEY_HEADER, k.as_str());
        }
        // Two rounds: a message found by "wrong last sequence" may be deleted (an invalid
        // upload the receipt task removed) before it is read; then publish again.
        for _ in 0..2 {
            let ack = self
                .js
                .publish_with_headers(subject.clone(), headers.clone(), request.body.clone())
                .await
                .map_err(|e| nats(&format!("publishing {subject}"), e))?
                .await;
            match ack {
                Ok(ack) => {
                    self.set_count(&stream, |c| c.unwrap_or(0) + 1);
                    return Ok(Appended {
                        id: ack.sequence,
                        duplicate: false,
                    });
                }
                Err(e) if e.kind() == PublishErrorKind::WrongLastSequence => {
                    if let Some((id, body)) = self.stored(&subject).await? {
                        return Self::existing(&request, key.as_ref(), id, &body);
                    }
                }
                Err(e) => return Err(nats(&format!("publishing {subject}"), e)),
            }
        }
        Err(StoreError::Nats(format!(
            "{subject}: the stored message changed twice while appending; retry"
        )))
    }

    /// `(count, last id)` of a device stream now, `None` when it holds no upload: the pending
    /// count of a fresh consumer on the stream's filter, then the upload stream's last
    /// sequence (read after it, so the first `count` uploads all have ids up to it).
    async fn count(&self, stream: &str) -> StoreResult<Option<(u64, u64)>> {
        let filter = layout::stream_filter(stream);
        let consumer = self
            .uploads
            .create_consumer(pull::Config {
                filter_subject: filter.clone(),
                deliver_policy: DeliverPolicy::All,
                ack_policy: AckPolicy::None,
                inactive_threshold: READER_INACTIVE,
                memory_storage: true,
                ..Default::default()
            })
            .await
            .map_err(|e| nats(&format!("counting {filter}"), e))?;
        let info = consumer.cached_info();
        let pending = info.num_pending;
        self.forget_consumer(info.name.clone());
        if pending == 0 {
            return Ok(None);
        }
        let last = self
            .uploads
            .get_info()
            .await
            .map_err(|e| nats(&format!("stream {}", layout::UPLOADS_STREAM), e))?
            .state
            .last_sequence;
        Ok(Some((pending, last)))
    }

    /// Deletes an ephemeral consumer in the background (it would expire anyway).
    fn forget_consumer(&self, name: String) {
        let uploads = self.uploads.clone();
        tokio::spawn(async move {
            if let Err(e) = uploads.delete_consumer(&name).await {
                tracing::debug!(consumer = name, error = %e, "deleting a read consumer");
            }
        });
    }

    async fn read_inner(
        &self,
        stream: &StreamName,
        after: u64,
        through: u64,
        max: usize,
    ) -> StoreResult<Vec<StoredUpload>> {
        let Ok(token) = layout::stream_token(stream) else {
            return Ok(Vec::new());
        };
        if max == 0 || after >= through {
            return Ok(Vec::new());
        }
        let filter = layout::stream_filter(token);
        let consumer = self
            .uploads
            .create_consumer(pull::Config {
                filter_subject: filter.clone(),
                deliver_policy: DeliverPolicy::ByStartSequence {
                    start_sequence: after + 1,
                },
                ack_policy: AckPolicy::None,
                inactive_threshold: READER_INACTIVE,
                memory_storage: true,
                ..Default::default()
            })
            .await
            .map_err(|e| nats(&format!("reading {filter}"), e))?;
        let name = consumer.cached_info().name.clone();
        let pending = consumer.cached_info().num_pending;
        let want = usize::try_from(pending).map_or(max, |p| p.min(max));
        let mut out = Vec::with_capacity(want.min(1024));
        let result = async {
            while out.len() < want {
                let mut batch = consumer
                    .batch()
                    .max_messages(want - out.len())
                    .expires(FETCH_EXPIRES)
                    .messages()
                    .await
                    .map_err(|e| nats(&format!("reading {filter}"), e))?;
                let before = out.len();
                while let Some(message) = batch.next().await {
                    let message = message.map_err(|e| nats(&format!("reading {filter}"), e))?;
                    let seq = message
                        .info()
                        .map_err(|e| nats(&format!("reading {filter}"), e))?
                        .stream_sequence;
                    if seq > through {
                        return Ok(());
                    }
                    let recorded = message
                        .headers
                        .as_ref()
                        .and_then(|h| h.get(DIGEST_HEADER))
                        .map(|v| v.as_str().to_owned());
                    if let Some(recorded) = recorded {
                        if recorded != crate::hex::encode(&body_sha256(&message.payload)) {
                            tracing::error!(%stream, id = seq, "stored upload does not match its digest");
                            return Err(StoreError::DigestMismatch {
                                stream: stream.clone(),
                                id: seq,
                            });
                        }
                    }
                    out.push(StoredUpload {
                        id: seq,
                        body: message.payload.clone(),
                    });
                }
                if out.len() == before {
                    // Nothing more arrived (messages deleted since the consumer started).
                    return Ok(());
                }
            }
            Ok::<(), StoreError>(())
        }
        .await;
        self.forget_consumer(name);
        result.map(|()| out)
    }

    /// Deletes upload `id` of `stream` (0 when the stream holds no such upload).
    async fn delete_inner(&self, stream: &StreamName, target: DeleteTarget) -> StoreResult<u64> {
        use async_nats::jetstream::stream::RawMessageErrorKind as K;
        let DeleteTarget::Upload(id) = target else {
            return Err(StoreError::NotImplemented(
                "deleting a device's uploads from the NATS store (its messages do not record the device)",
            ));
        };
        let Ok(token) = layout::stream_token(stream) else {
            return Ok(0);
        };
        let message = match self.uploads.get_raw_message(id).await {
            Ok(m) => m,
            Err(e) if matches!(e.kind(), K::NoMessageFound) => return Ok(0),
            Err(e) => return Err(nats(&format!("reading upload {id}"), e)),
        };
        // An id is a sequence of the whole upload stream: it must be one of this stream's.
        if layout::parse_upload_subject(message.subject.as_str()).map(|(s, _)| s) != Some(token) {
            return Ok(0);
        }
        let removed = self
            .uploads
            .delete_message(id)
            .await
            .map_err(|e| nats(&format!("deleting upload {id}"), e))?;
        if !removed {
            return Ok(0);
        }
        self.set_count(token, |c| c.unwrap_or(1).saturating_sub(1));
        Ok(1)
    }

    async fn list_inner(&self) -> StoreResult<Vec<StreamInfo>> {
        let mut info = self
            .uploads
            .info_with_subjects(layout::UPLOAD_SUBJECTS)
            .await
            .map_err(|e| nats("listing streams", e))?;
        let last_id = info.info.state.last_sequence;
        let mut counts: BTreeMap<String, u64> = BTreeMap::new();
        while let Some(entry) = info.next().await {
            let (subject, n) = entry.map_err(|e| nats("listing streams", e))?;
            if let Some((stream, _)) = layout::parse_upload_subject(&subject) {
                *counts.entry(stream.to_owned()).or_default() += n as u64;
            }
        }
        let mut out = Vec::with_capacity(counts.len());
        for (name, count) in counts {
            // A subject published by hand under a name the service would refuse is skipped.
            if let Ok(name) = StreamName::new(&name) {
                out.push(StreamInfo {
                    name,
                    count,
                    last_id,
                });
            }
        }
        Ok(out)
    }
}

impl UploadStore for NatsStore {
    fn append(&self, request: AppendRequest) -> BoxFuture<'_, StoreResult<Appended>> {
        Box::pin(self.append_inner(request))
    }

    fn stream_info<'a>(
        &'a self,
        stream: &'a StreamName,
    ) -> BoxFuture<'a, StoreResult<Option<StreamInfo>>> {
        Box::pin(async move {
            // A name with '.' can hold no upload here.
            let Ok(token) = layout::stream_token(stream) else {
                return Ok(None);
            };
            let counted = self.count(token).await?;
            self.set_count(token, |_| counted.map_or(0, |(c, _)| c));
            Ok(counted.map(|(count, last_id)| StreamInfo {
                name: stream.clone(),
                count,
                last_id,
            }))
        })
    }

    fn list_streams(&self) -> BoxFuture<'_, StoreResult<Vec<StreamInfo>>> {
        Box::pin(self.list_inner())
    }

    fn read_chunk<'a>(
        &'a self,
        stream: &'a StreamName,
        after: u64,
        through: u64,
        max: usize,
    ) -> BoxFuture<'a, StoreResult<Vec<StoredUpload>>> {
        Box::pin(self.read_inner(stream, after, through, max))
    }

    fn delete<'a>(
        &'a self,
        stream: &'a StreamName,
        target: DeleteTarget,
    ) -> BoxFuture<'a, StoreResult<u64>> {
        Box::pin(self.delete_inner(stream, target))
    }

    fn close(&self) -> BoxFuture<'_, StoreResult<()>> {
        Box::pin(async move {
            self.closed.store(true, Ordering::Release);
            // Every append was acknowledged by JetStream before it returned: nothing is
            // buffered here but what the connection still has to write.
            self.client
                .flush()
                .await
                .map_err(|e| nats("flushing the connection", e))
        })
    }
}
