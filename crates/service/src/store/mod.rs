//! Where uploads live: the [`UploadStore`] trait and its default backend, [`SqliteStore`].
//!
//! The trait is shaped for a networked, asynchronous store as well as an embedded one: every
//! method returns a boxed `Send` future, an append is acknowledged only once it is durable,
//! and a stream is read back in bounded chunks by sequence number (what a log such as NATS
//! JetStream offers as well).
//!
//! A stream's uploads carry ids that strictly increase in the order the store accepted them;
//! ids are opaque and need not be contiguous (SQLite numbers a stream's uploads 1, 2, 3, ...;
//! NATS JetStream uses its stream sequence, shared by every device stream). A reader that saw
//! [`StreamInfo::last_id`] reads exactly the uploads up to it while more arrive.

mod check;
mod recent;
mod sqlite;

use std::future::Future;
use std::pin::Pin;

use bytes::Bytes;

use crate::names::{IdempotencyKey, StreamName};

pub use check::{backup, check_store, StoreSummary};
pub use recent::DEFAULT_RECENT_BYTES;
pub use sqlite::{body_digest, body_sha256, SqliteStore, DB_FILE, PAGE_SIZE, SCHEMA_VERSION};

/// A boxed `Send` future (the trait's methods return these so that it can be used as
/// `dyn UploadStore`).
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// One upload to append.
#[derive(Clone, Debug)]
pub struct AppendRequest {
    /// The stream.
    pub stream: StreamName,
    /// The client's idempotency key, if any: an append with a key the stream already holds
    /// stores nothing and returns the first upload's id.
    pub key: Option<IdempotencyKey>,
    /// The device that sent it (recorded with the upload; `None` for uploads that did not
    /// come through the authenticated HTTP API, such as tests and tools).
    pub device: Option<crate::principals::DeviceName>,
    /// The upload's bytes (already validated by the caller).
    pub body: Bytes,
    /// The most uploads the stream may hold; a new upload beyond it is refused
    /// ([`StoreError::StreamFull`]), checked atomically with the append.
    pub max_uploads: u64,
}

/// What an append did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Appended {
    /// The upload's id (strictly increasing within the stream).
    pub id: u64,
    /// Whether the key was already there (nothing new was stored).
    pub duplicate: bool,
}

/// A stream's state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StreamInfo {
    /// The stream.
    pub name: StreamName,
    /// Uploads it holds with ids up to `last_id`.
    pub count: u64,
    /// The highest id of an upload counted in `count` (SQLite: `count` itself).
    pub last_id: u64,
}

/// One stored upload.
#[derive(Clone, Debug)]
pub struct StoredUpload {
    /// Its id.
    pub id: u64,
    /// Its bytes.
    pub body: Bytes,
}

/// Which uploads of a stream a delete removes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DeleteTarget {
    /// The upload with this id.
    Upload(u64),
    /// Every upload the device sent to the stream.
    Device(crate::principals::DeviceName),
}

/// Why the store refused or failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// The stream holds the most uploads allowed.
    #[error("stream {stream} already holds the maximum of {max} uploads")]
    StreamFull {
        /// The stream.
        stream: StreamName,
        /// The limit.
        max: u64,
    },
    /// An idempotency key was sent again with other bytes.
    #[error(
        "Idempotency-Key {key:?} of stream {stream} was used for upload {id} with other bytes"
    )]
    KeyReused {
        /// The stream.
        stream: StreamName,
        /// The key.
        key: String,
        /// The upload it belongs to.
        id: u64,
    },
    /// The data directory was written by another schema version.
    #[error("data directory {path}: schema version {found}, this build reads version {expected}")]
    SchemaVersion {
        /// The database file.
        path: String,
        /// The version found.
        found: i64,
        /// The version this build reads and writes.
        expected: i64,
    },
    /// The database file is not a Zeppelin store.
    #[error(
        "data directory {path}: the database is not a Zeppelin store (application_id {found:#x})"
    )]
    NotAStore {
        /// The database file.
        path: String,
        /// Its application id.
        found: i64,
    },
    /// The data directory could not be created or opened.
    #[error("data directory {path}: {source}")]
    Io {
        /// The directory.
        path: String,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// SQLite failed.
    #[error("SQLite: {0}")]
    Sqlite(#[from] rusqlite::Error),
    /// A stored row is not what this build wrote (a damaged or edited database).
    #[error("stored data is damaged: {0}")]
    Corrupt(String),
    /// The write transaction holding this append failed and was rolled back (nothing of it
    /// is stored; a retry with the same idempotency key is safe).
    #[error("the write transaction failed and was rolled back: {0}")]
    WriteFailed(String),
    /// The store is closed (shutting down).
    #[error("the store is closed")]
    Closed,
    /// The NATS server or JetStream failed or refused (the cause is in the text).
    #[error("NATS: {0}")]
    Nats(String),
    /// The request cannot be stored by this backend (the reason is in the text).
    #[error("not supported by this store: {0}")]
    Unsupported(String),
    /// A stored upload's bytes no longer match the digest stored with them (the
    /// store was damaged or edited).
    #[error("stream {stream}: stored upload {id} does not match its digest")]
    DigestMismatch {
        /// The stream.
        stream: StreamName,
        /// The upload.
        id: u64,
    },
    /// The store's files failed the check at start (or before a backup): the text says
    /// what is wrong; nothing was written.
    #[error("store {path}: {problem}; refusing to use it")]
    Damaged {
        /// The database file.
        path: String,
        /// What is wrong.
        problem: String,
    },
    /// The operation exists but this backend does not offer it (HTTP 501).
    #[error("not implemented by this store: {0}")]
    NotImplemented(&'static str),
}

/// The store's result type.
pub type StoreResult<T> = Result<T, StoreError>;

/// A durable store of streams of uploads.
pub trait UploadStore: Send + Sync + 'static {
    /// Appends an upload; resolves only after it is durable (for SQLite: its transaction
    /// committed with `synchronous=FULL`).
    fn append(&self, request: AppendRequest) -> BoxFuture<'_, StoreResult<Appended>>;

    /// The stream's state, `None` if it holds no upload.
    fn stream_info<'a>(
        &'a self,
        stream: &'a StreamName,
    ) -> BoxFuture<'a, StoreResult<Option<StreamInfo>>>;

    /// Every stream, by name.
    fn list_streams(&self) -> BoxFuture<'_, StoreResult<Vec<StreamInfo>>>;

    /// The stream's uploads with ids in `(after, through]`, in id order, at most `max` of
    /// them (fewer than `max` only when no more uploads up to `through` exist).
    fn read_chunk<'a>(
        &'a self,
        stream: &'a StreamName,
        after: u64,
        through: u64,
        max: usize,
    ) -> BoxFuture<'a, StoreResult<Vec<StoredUpload>>>;

    /// Removes the uploads `target` names from `stream`; resolves, once durable, to how many
    /// were removed (0: none matched). The stream's count drops by as many; ids are never
    /// reused. The default refuses ([`StoreError::NotImplemented`]).
    fn delete<'a>(
        &'a self,
        stream: &'a StreamName,
        target: DeleteTarget,
    ) -> BoxFuture<'a, StoreResult<u64>> {
        let _ = (stream, target);
        Box::pin(async { Err(StoreError::NotImplemented("deleting uploads")) })
    }

    /// The id of the stream's `n`-th upload (from 1, in id order), `None` if it holds fewer
    /// than `n`. The default reads the uploads in chunks; a backend with an index overrides it.
    fn nth_id<'a>(
        &'a self,
        stream: &'a StreamName,
        n: u64,
    ) -> BoxFuture<'a, StoreResult<Option<u64>>> {
        Box::pin(async move {
            let Some(info) = self.stream_info(stream).await? else {
                return Ok(None);
            };
            if n == 0 || n > info.count {
                return Ok(None);
            }
            let (mut after, mut seen) = (0u64, 0u64);
            loop {
                let chunk = self.read_chunk(stream, after, info.last_id, 256).await?;
                let Some(last) = chunk.last() else {
                    return Ok(None);
                };
                let left = n - seen;
                if (chunk.len() as u64) >= left {
                    let index = usize::try_from(left - 1).unwrap_or(usize::MAX);
                    return Ok(chunk.get(index).map(|u| u.id));
                }
                seen += chunk.len() as u64;
                after = last.id;
            }
        })
    }

    /// Finishes every append already submitted and refuses new ones; resolves once the
    /// store has nothing left to commit.
    fn close(&self) -> BoxFuture<'_, StoreResult<()>>;
}
