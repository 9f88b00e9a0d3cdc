//! [`SqliteStore`]: the embedded default backend, one SQLite database in the data directory.
//!
//! - WAL journal, `synchronous=FULL`: a commit has reached the disk when it returns, so an
//!   acknowledged upload survives `kill -9` and power loss.
//! - One writer thread owns the write connection and commits every append waiting for it in
//!   one transaction (group commit): a hundred concurrent clients share one fsync instead of
//!   paying one each. Each append is acknowledged after its transaction commits.
//! - Readers use their own connections (WAL lets them read while the writer writes), on
//!   tokio's blocking threads.
//! - `PRAGMA application_id` marks the file as a Zeppelin store and `PRAGMA user_version`
//!   holds [`SCHEMA_VERSION`]; a file of another version is refused, never migrated silently.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;

use bytes::Bytes;
use rusqlite::{params, Connection, OptionalExtension, TransactionBehavior};
use tokio::sync::{mpsc, oneshot};

use super::{
    AppendRequest, Appended, BoxFuture, StoreError, StoreResult, StoredUpload, StreamInfo,
    UploadStore,
};
use crate::names::StreamName;

/// The database's file name in the data directory.
pub const DB_FILE: &str = "zeppelin.sqlite3";
/// The schema this build reads and writes (`PRAGMA user_version`).
/// Version 2 (issue 28) records each upload's device.
pub const SCHEMA_VERSION: i64 = 2;
/// `PRAGMA application_id` of a Zeppelin store ("ZPLN").
const APPLICATION_ID: i64 = 0x5A50_4C4E;
/// Most appends in one transaction, and most bytes (bounds the writer's memory and the
/// latency of the first append of a batch).
const MAX_BATCH: usize = 512;
const MAX_BATCH_BYTES: usize = 64 << 20;
/// Appends waiting for the writer before `append` waits for room.
const QUEUE: usize = 1024;
/// How long a connection waits for a lock another connection holds.
const BUSY_TIMEOUT_MS: u64 = 10_000;

const SCHEMA: &str = "
CREATE TABLE streams (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    count INTEGER NOT NULL
);
CREATE TABLE uploads (
    stream_id INTEGER NOT NULL REFERENCES streams(id),
    seq INTEGER NOT NULL,
    idem_key TEXT,
    body BLOB NOT NULL,
    device TEXT,
    UNIQUE (stream_id, seq),
    UNIQUE (stream_id, idem_key)
);
";

struct Job {
    request: AppendRequest,
    reply: oneshot::Sender<StoreResult<Appended>>,
}

struct Inner {
    path: PathBuf,
    writer: Mutex<Option<mpsc::Sender<Job>>>,
    writer_thread: Mutex<Option<JoinHandle<()>>>,
    readers: Mutex<Vec<Connection>>,
}

/// The SQLite store in a data directory (see the module documentation).
#[derive(Clone)]
pub struct SqliteStore {
    inner: Arc<Inner>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // A panic elsewhere cannot leave these values half-updated (they are taken or pushed
    // whole), so a poisoned lock is still usable.
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

fn configure(conn: &Connection) -> rusqlite::Result<()> {
    conn.busy_timeout(std::time::Duration::from_millis(BUSY_TIMEOUT_MS))?;
    let mode: String = conn.query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))?;
    if !mode.eq_ignore_ascii_case("wal") {
        return Err(rusqlite::Error::InvalidParameterName(format!(
            "journal_mode is {mode}, WAL could not be set"
        )));
    }
    // Checkpoints every 64 MiB of WAL rather than SQLite's 4 MiB: each checkpoint syncs the
    // database file too, and uploads are ~100 KB each.
    conn.execute_batch(
        "PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON; PRAGMA wal_autocheckpoint = 16384;",
    )
}

impl SqliteStore {
    /// Opens (creating it if needed) the store in `dir`: `dir/zeppelin.sqlite3`.
    pub fn open(dir: &Path) -> StoreResult<Self> {
        let io = |source| StoreError::Io {
            path: dir.display().to_string(),
            source,
        };
        std::fs::create_dir_all(dir).map_err(io)?;
        let path = dir.join(DB_FILE);
        let mut conn = Connection::open(&path)?;
        configure(&conn)?;
        init_schema(&mut conn, &path)?;
        let (tx, rx) = mpsc::channel(QUEUE);
        let writer_thread = std::thread::Builder::new()
            .name("zeppelin-store-writer".into())
            .spawn(move || writer_loop(conn, rx))
            .map_err(io)?;
        Ok(Self {
            inner: Arc::new(Inner {
                path,
                writer: Mutex::new(Some(tx)),
                writer_thread: Mutex::new(Some(writer_thread)),
                readers: Mutex::new(Vec::new()),
            }),
        })
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.inner.path
    }

    /// Runs `f` with a reader connection on a blocking thread.
    fn read<T: Send + 'static>(
        &self,
        f: impl FnOnce(&Connection) -> StoreResult<T> + Send + 'static,
    ) -> BoxFuture<'static, StoreResult<T>> {
        let inner = self.inner.clone();
        Box::pin(async move {
            tokio::task::spawn_blocking(move || {
                let pooled = lock(&inner.readers).pop();
                let conn = match pooled {
                    Some(c) => c,
                    None => {
                        let c = Connection::open(&inner.path)?;
                        configure(&c)?;
                        c.execute_batch("PRAGMA query_only = ON;")?;
                        c
                    }
                };
                let result = f(&conn);
                lock(&inner.readers).push(conn);
                result
            })
            .await
            .map_err(|e| StoreError::WriteFailed(format!("reader task: {e}")))?
        })
    }
}

fn init_schema(conn: &mut Connection, path: &Path) -> StoreResult<()> {
    let shown = || path.display().to_string();
    let app: i64 = conn.query_row("PRAGMA application_id", [], |r| r.get(0))?;
    let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    if app == 0 && version == 0 {
        let tables: i64 = conn.query_row("SELECT count(*) FROM sqlite_master", [], |r| r.get(0))?;
        if tables != 0 {
            return Err(StoreError::NotAStore {
                path: shown(),
                found: 0,
            });
        }
        let tx = conn.transaction_with_behavior(TransactionBehavior::Exclusive)?;
        tx.execute_batch(SCHEMA)?;
        tx.execute_batch(&format!(
            "PRAGMA application_id = {APPLICATION_ID}; PRAGMA user_version = {SCHEMA_VERSION};"
        ))?;
        tx.commit()?;
        return Ok(());
    }
    if app != APPLICATION_ID {
        return Err(StoreError::NotAStore {
            path: shown(),
            found: app,
        });
    }
    if version != SCHEMA_VERSION {
        return Err(StoreError::SchemaVersion {
            path: shown(),
            found: version,
            expected: SCHEMA_VERSION,
        });
    }
    Ok(())
}

fn writer_loop(mut conn: Connection, mut rx: mpsc::Receiver<Job>) {
    while let Some(first) = rx.blocking_recv() {
        let mut bytes = first.request.body.len();
        let mut batch = vec![first];
        while batch.len() < MAX_BATCH && bytes < MAX_BATCH_BYTES {
            match rx.try_recv() {
                Ok(job) => {
                    bytes += job.request.body.len();
                    batch.push(job);
                }
                Err(_) => break,
            }
        }
        commit_batch(&mut conn, batch);
    }
    tracing::debug!("store writer: queue closed, every append committed");
}

/// Applies every job in one transaction and answers each after the commit (or, if any SQL
/// statement or the commit fails, answers every job of the batch with the failure: the
/// transaction is rolled back whole).
fn commit_batch(conn: &mut Connection, batch: Vec<Job>) {
    let size = batch.len();
    let result = (|| -> rusqlite::Result<Vec<StoreResult<Appended>>> {
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let mut outcomes = Vec::with_capacity(batch.len());
        for job in &batch {
            outcomes.push(apply(&tx, &job.request)?);
        }
        tx.commit()?;
        Ok(outcomes)
    })();
    match result {
        Ok(outcomes) => {
            tracing::trace!(appends = size, "store: batch committed");
            for (job, outcome) in batch.into_iter().zip(outcomes) {
                // A client that gave up (timed out) no longer listens; its upload is stored.
                let _ = job.reply.send(outcome);
            }
        }
        Err(e) => {
            tracing::error!(appends = size, error = %e, "store: batch rolled back");
            let text = e.to_string();
            for job in batch {
                let _ = job.reply.send(Err(StoreError::WriteFailed(text.clone())));
            }
        }
    }
}

fn as_count(v: i64) -> rusqlite::Result<u64> {
    u64::try_from(v).map_err(|_| rusqlite::Error::IntegralValueOutOfRange(0, v))
}

fn as_sql(v: u64) -> rusqlite::Result<i64> {
    i64::try_from(v).map_err(|e| rusqlite::Error::ToSqlConversionFailure(Box::new(e)))
}

/// One append inside the batch's transaction. The outer error aborts the batch; the inner
/// one is this append's own refusal (the stream is full, the key was reused).
fn apply(
    tx: &rusqlite::Transaction<'_>,
    req: &AppendRequest,
) -> rusqlite::Result<StoreResult<Appended>> {
    let stream: Option<(i64, i64)> = tx
        .prepare_cached("SELECT id, count FROM streams WHERE name = ?1")?
        .query_row([req.stream.as_str()], |r| Ok((r.get(0)?, r.get(1)?)))
        .optional()?;
    if let (Some((stream_id, _)), Some(key)) = (stream, &req.key) {
        let found: Option<(i64, Vec<u8>)> = tx
            .prepare_cached("SELECT seq, body FROM uploads WHERE stream_id = ?1 AND idem_key = ?2")?
            .query_row(params![stream_id, key.as_str()], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .optional()?;
        if let Some((seq, body)) = found {
            let id = as_count(seq)?;
            return Ok(if body == req.body.as_ref() {
                Ok(Appended {
                    id,
                    duplicate: true,
                })
            } else {
                Err(StoreError::KeyReused {
                    stream: req.stream.clone(),
                    key: key.as_str().to_owned(),
                    id,
                })
            });
        }
    }
    let count = as_count(stream.map_or(0, |(_, c)| c))?;
    if count >= req.max_uploads {
        return Ok(Err(StoreError::StreamFull {
            stream: req.stream.clone(),
            max: req.max_uploads,
        }));
    }
    let stream_id = match stream {
        Some((id, _)) => id,
        None => {
            tx.prepare_cached("INSERT INTO streams (name, count) VALUES (?1, 0)")?
                .execute([req.stream.as_str()])?;
            tx.last_insert_rowid()
        }
    };
    let seq = as_sql(count + 1)?;
    tx.prepare_cached(
        "INSERT INTO uploads (stream_id, seq, idem_key, body, device) VALUES (?1, ?2, ?3, ?4, ?5)",
    )?
    .execute(params![
        stream_id,
        seq,
        req.key.as_ref().map(|k| k.as_str()),
        req.body.as_ref(),
        req.device.as_ref().map(|d| d.as_str())
    ])?;
    tx.prepare_cached("UPDATE streams SET count = ?1 WHERE id = ?2")?
        .execute(params![seq, stream_id])?;
    Ok(Ok(Appended {
        id: count + 1,
        duplicate: false,
    }))
}

fn stream_name(name: String) -> StoreResult<StreamName> {
    StreamName::new(&name).map_err(|e| StoreError::Corrupt(format!("stream {name:?}: {e}")))
}

impl UploadStore for SqliteStore {
    fn append(&self, request: AppendRequest) -> BoxFuture<'_, StoreResult<Appended>> {
        Box::pin(async move {
            let sender = lock(&self.inner.writer).clone().ok_or(StoreError::Closed)?;
            let (reply, answer) = oneshot::channel();
            sender
                .send(Job { request, reply })
                .await
                .map_err(|_| StoreError::Closed)?;
            answer.await.map_err(|_| StoreError::Closed)?
        })
    }

    fn stream_info<'a>(
        &'a self,
        stream: &'a StreamName,
    ) -> BoxFuture<'a, StoreResult<Option<StreamInfo>>> {
        let name = stream.clone();
        self.read(move |conn| {
            let count: Option<i64> = conn
                .prepare_cached("SELECT count FROM streams WHERE name = ?1")?
                .query_row([name.as_str()], |r| r.get(0))
                .optional()?;
            match count {
                Some(c) if c > 0 => {
                    let count = as_count(c)?;
                    Ok(Some(StreamInfo {
                        name,
                        count,
                        last_id: count,
                    }))
                }
                _ => Ok(None),
            }
        })
    }

    fn list_streams(&self) -> BoxFuture<'_, StoreResult<Vec<StreamInfo>>> {
        self.read(|conn| {
            let mut stmt = conn
                .prepare_cached("SELECT name, count FROM streams WHERE count > 0 ORDER BY name")?;
            let rows = stmt.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?)))?;
            let mut out = Vec::new();
            for row in rows {
                let (name, count) = row?;
                let count = as_count(count)?;
                out.push(StreamInfo {
                    name: stream_name(name)?,
                    count,
                    last_id: count,
                });
            }
            Ok(out)
        })
    }

    fn read_chunk<'a>(
        &'a self,
        stream: &'a StreamName,
        after: u64,
        through: u64,
        max: usize,
    ) -> BoxFuture<'a, StoreResult<Vec<StoredUpload>>> {
        let name = stream.clone();
        self.read(move |conn| {
            let mut stmt = conn.prepare_cached(
                "SELECT u.seq, u.body FROM uploads u JOIN streams s ON u.stream_id = s.id \
                 WHERE s.name = ?1 AND u.seq > ?2 AND u.seq <= ?3 ORDER BY u.seq LIMIT ?4",
            )?;
            let limit = i64::try_from(max).unwrap_or(i64::MAX);
            let rows = stmt.query_map(
                params![name.as_str(), as_sql(after)?, as_sql(through)?, limit],
                |r| Ok((r.get::<_, i64>(0)?, r.get::<_, Vec<u8>>(1)?)),
            )?;
            let mut out = Vec::new();
            for (expected, row) in (after + 1..).zip(rows) {
                let (seq, body) = row?;
                let id = as_count(seq)?;
                if id != expected {
                    return Err(StoreError::Corrupt(format!(
                        "stream {name}: upload {expected} is missing (next stored id {id})"
                    )));
                }
                out.push(StoredUpload {
                    id,
                    body: Bytes::from(body),
                });
            }
            Ok(out)
        })
    }

    fn close(&self) -> BoxFuture<'_, StoreResult<()>> {
        let inner = self.inner.clone();
        Box::pin(async move {
            // Dropping the sender lets the writer drain what is queued, commit it and stop.
            drop(lock(&inner.writer).take());
            let thread = lock(&inner.writer_thread).take();
            if let Some(thread) = thread {
                tokio::task::spawn_blocking(move || thread.join())
                    .await
                    .map_err(|e| StoreError::WriteFailed(format!("writer task: {e}")))?
                    .map_err(|_| StoreError::WriteFailed("the writer thread panicked".into()))?;
            }
            lock(&inner.readers).clear();
            Ok(())
        })
    }
}
