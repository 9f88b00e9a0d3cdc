//! The SQLite store's checks before it is used (at open, and around a backup), the full
//! check of `zeppelin store check`, and the online backup of `zeppelin store backup`.
//!
//! Each refusal is one [`StoreError::Damaged`] naming the database file: a store that is not
//! the one written last never starts as an empty or wrong store.

use std::fs::{self, File, OpenOptions};
use std::io::Read;
use std::path::{Path, PathBuf};

use rusqlite::{params, Connection, OpenFlags};

use super::sqlite::{body_digest, APPLICATION_ID, DB_FILE, SCHEMA_VERSION};
use super::{StoreError, StoreResult};

/// The 16 bytes every SQLite 3 database file starts with.
const SQLITE_MAGIC: &[u8; 16] = b"SQLite format 3\0";
/// Most problem rows `PRAGMA quick_check` reports.
const QUICK_CHECK_ROWS: u32 = 4;

/// What a check or a backup found.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StoreSummary {
    /// Streams holding at least one upload.
    pub streams: u64,
    /// Uploads in all streams.
    pub uploads: u64,
}

/// A mapper of SQLite errors to [`StoreError::Damaged`] naming `path`.
pub(super) fn damaged(path: &Path) -> impl Fn(rusqlite::Error) -> StoreError + Copy + '_ {
    move |e| refuse(path, e.to_string())
}

fn refuse(path: &Path, problem: impl Into<String>) -> StoreError {
    StoreError::Damaged {
        path: path.display().to_string(),
        problem: problem.into(),
    }
}

/// `path` with `suffix` appended to its file name (`-wal`, `-shm`).
fn sidecar(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}

fn exists(path: &Path) -> bool {
    fs::symlink_metadata(path).is_ok()
}

/// The file-level checks, before SQLite opens anything (SQLite would create an empty
/// database in place of a missing one and read a foreign or cut file as far as it can):
///
/// - the database missing while its `-wal` or `-shm` exists (the WAL is part of the store);
/// - not a regular file, empty, shorter than a header, not an SQLite file;
/// - without a `-wal`, shorter than the page count its header records, or not a whole
///   number of pages (cut). With a `-wal` (or the `-journal` of a migration's `VACUUM` cut
///   short), the pages it holds complete the file, and `PRAGMA quick_check` after the open
///   checks the result instead.
///
/// `may_create`: a missing database without sidecars is a new store (`serve`); otherwise it
/// is refused (a backup or check of nothing).
pub(super) fn files_before_open(path: &Path, may_create: bool) -> StoreResult<()> {
    let (wal, shm) = (sidecar(path, "-wal"), sidecar(path, "-shm"));
    let meta = match fs::symlink_metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            for side in [&wal, &shm] {
                if exists(side) {
                    return Err(refuse(
                        path,
                        format!(
                            "the database file is missing but {} exists (the -wal file is part \
                             of the store: restore the database and its -wal together, or \
                             remove both to start an empty store)",
                            side.display()
                        ),
                    ));
                }
            }
            if may_create {
                return Ok(());
            }
            return Err(refuse(path, "no store here (the database file is missing)"));
        }
        Err(e) => return Err(refuse(path, format!("cannot read it: {e}"))),
    };
    if !meta.file_type().is_file() {
        return Err(refuse(path, "not a regular file"));
    }
    let len = meta.len();
    if len == 0 {
        return Err(refuse(
            path,
            "the database file is empty (truncated?); remove it (and any -wal) to start an empty store",
        ));
    }
    let mut header = [0u8; 100];
    let mut file = File::open(path).map_err(|e| refuse(path, format!("cannot open it: {e}")))?;
    if len < header.len() as u64 {
        return Err(refuse(
            path,
            format!("truncated: {len} bytes, shorter than an SQLite header"),
        ));
    }
    file.read_exact(&mut header)
        .map_err(|e| refuse(path, format!("cannot read its header: {e}")))?;
    if &header[..16] != SQLITE_MAGIC {
        return Err(refuse(path, "not an SQLite database file"));
    }
    let page_size = match u16::from_be_bytes([header[16], header[17]]) {
        1 => 65_536u64,
        n => u64::from(n),
    };
    if !(512..=65_536).contains(&page_size) || !page_size.is_power_of_two() {
        return Err(refuse(
            path,
            format!("damaged header: page size {page_size}"),
        ));
    }
    let wal_holds_pages = fs::metadata(&wal).is_ok_and(|m| m.len() > 0);
    // A rollback journal left by a crash inside a migration's VACUUM: SQLite restores the
    // file from it at open.
    let journal = sidecar(path, "-journal");
    let journal_holds_pages = fs::metadata(&journal).is_ok_and(|m| m.len() > 0);
    if !wal_holds_pages && !journal_holds_pages {
        let field = |at: usize| {
            u32::from_be_bytes([header[at], header[at + 1], header[at + 2], header[at + 3]])
        };
        let (pages, change_counter, valid_for) = (field(28), field(24), field(92));
        let expected = u64::from(pages) * page_size;
        if len % page_size != 0 || (change_counter == valid_for && len < expected) {
            return Err(refuse(
                path,
                format!(
                    "truncated: {len} bytes, the header records {pages} pages of {page_size} bytes"
                ),
            ));
        }
    }
    Ok(())
}

/// `PRAGMA quick_check`: "ok" or the first problems it found.
pub(super) fn quick_check(conn: &Connection, path: &Path) -> StoreResult<()> {
    let mut stmt = conn
        .prepare(&format!("PRAGMA quick_check({QUICK_CHECK_ROWS})"))
        .map_err(damaged(path))?;
    let rows: Vec<String> = stmt
        .query_map([], |r| r.get(0))
        .and_then(|rows| rows.collect())
        .map_err(damaged(path))?;
    if rows.len() == 1 && rows[0] == "ok" {
        return Ok(());
    }
    let text: String = rows.join("; ").chars().take(300).collect();
    Err(refuse(path, format!("PRAGMA quick_check failed: {text}")))
}

/// The application id and schema version of a store this build can read as it is.
fn identity(conn: &Connection, path: &Path) -> StoreResult<()> {
    let app: i64 = conn
        .query_row("PRAGMA application_id", [], |r| r.get(0))
        .map_err(damaged(path))?;
    if app != APPLICATION_ID {
        return Err(StoreError::NotAStore {
            path: path.display().to_string(),
            found: app,
        });
    }
    let version: i64 = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .map_err(damaged(path))?;
    if version != SCHEMA_VERSION {
        return Err(StoreError::SchemaVersion {
            path: path.display().to_string(),
            found: version,
            expected: SCHEMA_VERSION,
        });
    }
    Ok(())
}

/// `PRAGMA quick_check`, then every stream's count and last id against its rows and no row
/// outside a stream (all from the indexes: no body is read). One read transaction.
pub(super) fn consistency(conn: &Connection, path: &Path) -> StoreResult<StoreSummary> {
    quick_check(conn, path)?;
    let mut stmt = conn
        .prepare(
            "SELECT s.name, s.count, s.last_seq, \
             (SELECT count(*) FROM uploads u WHERE u.stream_id = s.id), \
             (SELECT coalesce(max(u.seq), 0) FROM uploads u WHERE u.stream_id = s.id) \
             FROM streams s ORDER BY s.name",
        )
        .map_err(damaged(path))?;
    let rows = stmt
        .query_map([], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, i64>(1)?,
                r.get::<_, i64>(2)?,
                r.get::<_, i64>(3)?,
                r.get::<_, i64>(4)?,
            ))
        })
        .map_err(damaged(path))?;
    let mut summary = StoreSummary::default();
    for row in rows {
        let (name, count, last_seq, rows, max_seq) = row.map_err(damaged(path))?;
        let shown: String = name.chars().take(64).collect();
        if count != rows {
            return Err(refuse(
                path,
                format!("stream {shown:?} records {count} uploads but holds {rows}"),
            ));
        }
        if max_seq > last_seq {
            return Err(refuse(
                path,
                format!("stream {shown:?} records last id {last_seq} but holds upload {max_seq}"),
            ));
        }
        if count > 0 {
            summary.streams += 1;
            summary.uploads += count as u64;
        }
    }
    let orphans: i64 = conn
        .query_row(
            "SELECT count(*) FROM uploads WHERE stream_id NOT IN (SELECT id FROM streams)",
            [],
            |r| r.get(0),
        )
        .map_err(damaged(path))?;
    if orphans != 0 {
        return Err(refuse(
            path,
            format!("{orphans} uploads belong to no stream"),
        ));
    }
    Ok(summary)
}

/// Every upload's body against its digest (reads the whole store).
fn digests(conn: &Connection, path: &Path) -> StoreResult<()> {
    let mut stmt = conn
        .prepare(
            "SELECT s.name, u.seq, u.body, u.digest FROM uploads u JOIN streams s \
             ON u.stream_id = s.id",
        )
        .map_err(damaged(path))?;
    let mut rows = stmt.query([]).map_err(damaged(path))?;
    while let Some(row) = rows.next().map_err(damaged(path))? {
        let body = row
            .get_ref(2)
            .and_then(|v| Ok(v.as_blob()?))
            .map_err(damaged(path))?;
        let digest = row
            .get_ref(3)
            .and_then(|v| Ok(v.as_blob()?))
            .map_err(damaged(path))?;
        if body_digest(body).as_slice() != digest {
            let name: String = row.get(0).map_err(damaged(path))?;
            let id: i64 = row.get(1).map_err(damaged(path))?;
            return Err(upload_damaged(path, &name, id));
        }
    }
    Ok(())
}

/// The refusal of a store whose upload `id` of stream `name` does not match its digest.
pub(super) fn upload_damaged(path: &Path, name: &str, id: i64) -> StoreError {
    let shown: String = name.chars().take(64).collect();
    refuse(
        path,
        format!("stream {shown:?}: upload {id} does not match its digest"),
    )
}

/// Opens an existing store for reading without creating or migrating anything.
fn open_existing(path: &Path) -> StoreResult<Connection> {
    files_before_open(path, false)?;
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(damaged(path))?;
    conn.busy_timeout(std::time::Duration::from_secs(10))
        .map_err(damaged(path))?;
    identity(&conn, path)?;
    Ok(conn)
}

/// The full check of the store in `dir` (`zeppelin store check`): the checks at open, then
/// every body against its digest, in one read transaction. Writes nothing (a running
/// `serve` may keep writing meanwhile).
pub fn check_store(dir: &Path) -> StoreResult<StoreSummary> {
    let path = dir.join(DB_FILE);
    let mut conn = open_existing(&path)?;
    let tx = conn.transaction().map_err(damaged(&path))?;
    let summary = consistency(&tx, &path)?;
    digests(&tx, &path)?;
    drop(tx);
    Ok(summary)
}

/// Copies the store in `dir` to the file `out` while it may be in use (`zeppelin store
/// backup`): `VACUUM INTO` a temporary file created exclusively (0600) beside `out`, which
/// reads one consistent snapshot (the database and its WAL) without blocking the writer;
/// then the copy is checked like a store at open plus every digest, synced and renamed onto
/// `out`. The copy is a complete database file without a `-wal`: put it in an empty data
/// directory as `zeppelin.sqlite3` and `serve` opens it.
pub fn backup(dir: &Path, out: &Path) -> StoreResult<StoreSummary> {
    let source_path = dir.join(DB_FILE);
    let source = open_existing(&source_path)?;
    let parent = match out.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = out
        .file_name()
        .ok_or_else(|| refuse(out, "the backup path names no file"))?
        .to_string_lossy()
        .into_owned();
    let staged = staged_file(&parent, &name)?;
    let result = (|| -> StoreResult<StoreSummary> {
        source
            .execute("VACUUM INTO ?1", params![staged.to_string_lossy()])
            .map_err(damaged(&source_path))?;
        let copy = Connection::open_with_flags(
            &staged,
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(damaged(&staged))?;
        identity(&copy, &staged)?;
        let summary = consistency(&copy, &staged)?;
        digests(&copy, &staged)?;
        copy.close().map_err(|(_, e)| damaged(&staged)(e))?;
        let io = |e: std::io::Error| refuse(out, format!("writing the backup: {e}"));
        File::open(&staged).and_then(|f| f.sync_all()).map_err(io)?;
        fs::rename(&staged, out).map_err(io)?;
        // The rename is durable once the directory is synced.
        File::open(&parent).and_then(|d| d.sync_all()).map_err(io)?;
        Ok(summary)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&staged);
    }
    result
}

/// A new empty file beside the target, created exclusively (never through a symlink) with
/// mode 0600 (`VACUUM INTO` writes into an empty file).
fn staged_file(parent: &Path, name: &str) -> StoreResult<PathBuf> {
    let mut options = OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    for attempt in 0..16u32 {
        let path = parent.join(format!(
            ".{name}.{}.{nanos}.{attempt}.tmp",
            std::process::id()
        ));
        match options.open(&path) {
            Ok(_) => return Ok(path),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(refuse(&path, format!("cannot create the backup file: {e}"))),
        }
    }
    Err(refuse(parent, "cannot create a temporary backup file"))
}
