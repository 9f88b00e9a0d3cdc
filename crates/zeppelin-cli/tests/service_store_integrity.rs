//! Issue 28 items 6 and 7 against the real `zeppelin serve` binary on loopback: a store that
//! checks itself, and the operator's tools. Every sum is checked independently, by
//! decrypting the service's answer with `zeppelin decrypt` and the owner's secret key
//! against the known plaintexts.
//!
//! - appends that fail on one stream (an injected SQLite trigger) do not fail another
//!   stream's concurrent appends (a savepoint per append in the group commit);
//! - one flipped bit in a stored body: the aggregation is a generic 500, the log names the
//!   upload, health stays 200; deleting that upload makes the sum right again;
//! - a database deleted beside its `-wal`, a truncated database, another application's
//!   SQLite file, another schema version: `serve` exits 1 with one line naming the file;
//! - `zeppelin store backup` during uploads: `serve` on the backup gives the same sum as the
//!   original's `first_n` over as many uploads (byte for byte), and `dot` with `first_n`
//!   answers during ingest with the count header n;
//! - the delete endpoints: anonymous 401, device 403, owner 204; the sums afterwards are those
//!   of the remaining uploads;
//! - deletes racing an aggregation (of one upload by id, of a device's uploads): every answer
//!   is either a sum that decrypts to exactly the uploads its count header covers (before or
//!   after the delete) or 409 "the stream changed" — never a silently wrong sum.

use std::fs::File;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

mod credentials;

type TestResult<T = ()> = Result<T, Box<dyn std::error::Error + Send + Sync>>;

const DB_FILE: &str = "zeppelin.sqlite3";

fn zeppelin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_zeppelin"))
}

/// Runs `cmd`; its stdout when it succeeds.
fn run(cmd: &mut Command) -> TestResult<String> {
    let out = cmd.output()?;
    if !out.status.success() {
        return Err(format!("{cmd:?}: {}", String::from_utf8_lossy(&out.stderr)).into());
    }
    Ok(String::from_utf8(out.stdout)?)
}

/// A server child, killed when the test ends.
struct Server {
    child: Child,
    addr: String,
    log: PathBuf,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Server {
    /// Stops it with SIGTERM (it commits, checkpoints and exits 0).
    fn stop(mut self) -> TestResult {
        let pid = i32::try_from(self.child.id())?;
        // SAFETY: sending a signal to our own child process.
        if unsafe { libc::kill(pid, libc::SIGTERM) } != 0 {
            return Err("kill failed".into());
        }
        let status = self.child.wait()?;
        assert!(status.success(), "serve exited with {status}");
        Ok(())
    }

    fn log_text(&self) -> TestResult<String> {
        Ok(std::fs::read_to_string(&self.log)?)
    }
}

/// `zeppelin serve --data data --keys keys` on a free loopback port; its log in `data/../`.
fn serve(data: &Path, keys: &Path) -> TestResult<Server> {
    let log = data.with_extension("log");
    let mut child = zeppelin()
        .args(["serve", "--listen", "127.0.0.1:0", "--data"])
        .arg(data)
        .arg("--keys")
        .arg(keys)
        .env("ZEPPELIN_LOG", "info")
        .stdout(Stdio::piped())
        .stderr(Stdio::from(File::create(&log)?))
        .spawn()?;
    let stdout = child.stdout.take().ok_or("no stdout")?;
    let mut server = Server {
        child,
        addr: String::new(),
        log,
    };
    let mut line = String::new();
    BufReader::new(stdout).read_line(&mut line)?;
    server.addr = line
        .trim()
        .strip_prefix("listening on http://")
        .ok_or_else(|| format!("unexpected first line {line:?}"))?
        .to_owned();
    Ok(server)
}

/// One answer: status, headers (lower case), body.
struct Answer {
    status: u16,
    head: String,
    body: Vec<u8>,
}

impl Answer {
    fn header(&self, name: &str) -> Option<&str> {
        self.head.lines().find_map(|l| {
            let (k, v) = l.split_once(':')?;
            (k == name).then(|| v.trim())
        })
    }

    fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

/// One HTTP/1.1 request on its own connection.
fn request(
    addr: &str,
    method: &str,
    path: &str,
    token: Option<&str>,
    body: &[u8],
) -> TestResult<Answer> {
    let mut s = TcpStream::connect(addr)?;
    s.set_read_timeout(Some(Duration::from_secs(60)))?;
    let mut head = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    if let Some(t) = token {
        head.push_str(&format!("Authorization: Bearer {t}\r\n"));
    }
    head.push_str("\r\n");
    s.write_all(head.as_bytes())?;
    // A refusal before the body is read may close the connection: ignore a failed write.
    let _ = s.write_all(body);
    let mut all = Vec::new();
    s.read_to_end(&mut all)?;
    let split = all
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .ok_or("no end of headers")?;
    let head = String::from_utf8_lossy(&all[..split]).to_ascii_lowercase();
    let status = head.split(' ').nth(1).ok_or("no status")?.parse::<u16>()?;
    let mut body = all[split + 4..].to_vec();
    if head.contains("transfer-encoding: chunked") {
        body = dechunk(&body)?;
    }
    Ok(Answer { status, head, body })
}

fn dechunk(mut data: &[u8]) -> TestResult<Vec<u8>> {
    let mut out = Vec::new();
    loop {
        let end = data
            .windows(2)
            .position(|w| w == b"\r\n")
            .ok_or("bad chunk")?;
        let size = usize::from_str_radix(std::str::from_utf8(&data[..end])?.trim(), 16)?;
        if size == 0 {
            return Ok(out);
        }
        let start = end + 2;
        out.extend_from_slice(data.get(start..start + size).ok_or("short chunk")?);
        data = data.get(start + size + 2..).ok_or("short chunk")?;
    }
}

fn health_is_up(addr: &str) -> TestResult {
    let a = request(addr, "GET", "/v1/health", None, b"")?;
    assert_eq!(a.status, 200, "health: {}", a.text());
    Ok(())
}

/// The keys, a data directory with the owner and device `dev` (for `streams`), and
/// ciphertexts of known plaintexts.
struct Fixture {
    dir: tempfile::TempDir,
    keys: PathBuf,
    data: PathBuf,
    owner: String,
    device: String,
}

fn fixture(streams: &[&str]) -> TestResult<Fixture> {
    let dir = tempfile::tempdir()?;
    let keys = dir.path().join("keys");
    run(zeppelin().arg("keygen").arg("--dir").arg(&keys))?;
    let data = dir.path().join("data");
    std::fs::create_dir_all(&data)?;
    let creds = credentials::issue(&data, "dev", streams)?;
    Ok(Fixture {
        dir,
        keys,
        data,
        owner: creds.owner,
        device: creds.device,
    })
}

/// The plaintext of ciphertext number `i`: slot `j` holds `(i + 1) * (j + 1)` for the first
/// three slots.
fn plaintext(i: u64) -> [u64; 3] {
    [i + 1, 2 * (i + 1), 3 * (i + 1)]
}

impl Fixture {
    /// The device ciphertext of `plaintext(i)`, made by `zeppelin encrypt`.
    fn ciphertext(&self, i: u64) -> TestResult<Vec<u8>> {
        let values = self.dir.path().join(format!("v{i}.txt"));
        let text: String = plaintext(i).iter().map(|v| format!("{v}\n")).collect();
        std::fs::write(&values, text)?;
        let out = self.dir.path().join(format!("ct{i}.bin"));
        run(zeppelin()
            .args(["encrypt", "--mode", "seeded", "--dir"])
            .arg(&self.keys)
            .arg("--in")
            .arg(&values)
            .arg("--out")
            .arg(&out))?;
        Ok(std::fs::read(out)?)
    }

    /// The first three slots of a SEAL ciphertext, decrypted with the owner's secret key.
    fn decrypt(&self, ciphertext: &[u8]) -> TestResult<Vec<u64>> {
        let file = self.dir.path().join("result.seal");
        std::fs::write(&file, ciphertext)?;
        let out = run(zeppelin()
            .arg("decrypt")
            .arg("--dir")
            .arg(&self.keys)
            .arg("--in")
            .arg(&file))?;
        out.lines()
            .take(3)
            .map(|l| Ok(l.trim().parse::<u64>()?))
            .collect()
    }

    fn upload(&self, addr: &str, stream: &str, ct: &[u8]) -> TestResult<Answer> {
        request(
            addr,
            "POST",
            &format!("/v1/streams/{stream}/ciphertexts"),
            Some(&self.device),
            ct,
        )
    }

    /// An aggregation as the owner: the answer (200 expected by the caller or not).
    fn aggregate(&self, addr: &str, stream: &str, body: &str) -> TestResult<Answer> {
        request(
            addr,
            "POST",
            &format!("/v1/streams/{stream}/aggregate"),
            Some(&self.owner),
            body.as_bytes(),
        )
    }

    /// The decrypted sum of `stream` and the count header.
    fn sum(&self, addr: &str, stream: &str) -> TestResult<(Vec<u64>, u64)> {
        let a = self.aggregate(addr, stream, r#"{"op":"sum"}"#)?;
        assert_eq!(a.status, 200, "sum of {stream}: {}", a.text());
        let count = a.header("zeppelin-count").ok_or("no count")?.parse()?;
        Ok((self.decrypt(&a.body)?, count))
    }
}

/// `Σ weight · plaintext(i)` over `(i, weight)`, slot by slot.
fn expected(terms: impl IntoIterator<Item = (u64, u64)>) -> Vec<u64> {
    let mut total = vec![0u64; 3];
    for (i, w) in terms {
        for (slot, v) in total.iter_mut().zip(plaintext(i)) {
            *slot = (*slot + w * v) % 65_537;
        }
    }
    total
}

#[test]
fn a_failing_stream_does_not_fail_another_streams_concurrent_appends() -> TestResult {
    let f = fixture(&["good", "bad"])?;
    let cts: Vec<Vec<u8>> = (0..4).map(|i| f.ciphertext(i)).collect::<TestResult<_>>()?;
    let server = serve(&f.data, &f.keys)?;
    assert_eq!(f.upload(&server.addr, "bad", &cts[0])?.status, 201);
    server.stop()?;
    // Every insert into stream "bad" fails from now on: a stand-in for a damaged stream.
    rusqlite::Connection::open(f.data.join(DB_FILE))?.execute_batch(
        "CREATE TRIGGER fail_bad BEFORE INSERT ON uploads \
         WHEN NEW.stream_id = (SELECT id FROM streams WHERE name = 'bad') \
         BEGIN SELECT RAISE(ABORT, 'injected failure'); END;",
    )?;
    let server = serve(&f.data, &f.keys)?;
    let threads: Vec<_> = (0..8usize)
        .map(|t| {
            let (addr, device) = (server.addr.clone(), f.device.clone());
            let cts = cts.clone();
            std::thread::spawn(move || -> TestResult<Vec<(bool, u16)>> {
                let mut statuses = Vec::new();
                for k in 0..10usize {
                    let good = (t + k) % 2 == 0;
                    let stream = if good { "good" } else { "bad" };
                    let a = request(
                        &addr,
                        "POST",
                        &format!("/v1/streams/{stream}/ciphertexts"),
                        Some(&device),
                        &cts[(t + k) % 4],
                    )?;
                    statuses.push((good, a.status));
                }
                Ok(statuses)
            })
        })
        .collect();
    let mut good_stored = 0u64;
    let mut terms = Vec::new();
    for (t, thread) in threads.into_iter().enumerate() {
        let statuses = thread.join().map_err(|_| "upload thread panicked")??;
        for (k, (good, status)) in statuses.into_iter().enumerate() {
            if good {
                assert_eq!(status, 201, "a good-stream upload failed");
                good_stored += 1;
                terms.push((((t + k) % 4) as u64, 1));
            } else {
                assert_eq!(status, 500, "a bad-stream upload was not refused");
            }
        }
    }
    health_is_up(&server.addr)?;
    let (sum, count) = f.sum(&server.addr, "good")?;
    assert_eq!(count, good_stored);
    assert_eq!(sum, expected(terms));
    // The failures are in the log, each rolled back alone.
    assert!(server.log_text()?.contains("rolled back alone"));
    Ok(())
}

#[test]
fn a_flipped_bit_fails_the_aggregation_until_the_upload_is_deleted() -> TestResult {
    let f = fixture(&["s"])?;
    let server = serve(&f.data, &f.keys)?;
    for i in 0..3 {
        assert_eq!(f.upload(&server.addr, "s", &f.ciphertext(i)?)?.status, 201);
    }
    // One bit of upload 2's body, flipped in the file. The running server would still sum
    // the bytes it committed (its recent uploads are in memory); restarted, it reads the disk.
    server.stop()?;
    let conn = rusqlite::Connection::open(f.data.join(DB_FILE))?;
    let mut body: Vec<u8> =
        conn.query_row("SELECT body FROM uploads WHERE seq = 2", [], |r| r.get(0))?;
    let middle = body.len() / 2;
    body[middle] ^= 0x01;
    conn.execute("UPDATE uploads SET body = ?1 WHERE seq = 2", [&body])?;
    drop(conn);
    let server = serve(&f.data, &f.keys)?;

    let a = f.aggregate(&server.addr, "s", r#"{"op":"sum"}"#)?;
    assert_eq!(a.status, 500, "{}", a.text());
    let error: serde_json::Value = serde_json::from_slice(&a.body)?;
    assert_eq!(
        error["error"],
        "internal error (details are in the server log)"
    );
    health_is_up(&server.addr)?;
    assert!(
        server
            .log_text()?
            .contains("stream s: stored upload 2 does not match its digest"),
        "the log does not name the upload"
    );

    // The operator removes the damaged upload: the sum is the other two.
    let a = request(
        &server.addr,
        "DELETE",
        "/v1/streams/s/ciphertexts/2",
        Some(&f.owner),
        b"",
    )?;
    assert_eq!(a.status, 204, "{}", a.text());
    let (sum, count) = f.sum(&server.addr, "s")?;
    assert_eq!((sum, count), (expected([(0, 1), (2, 1)]), 2));
    Ok(())
}

/// Runs `zeppelin serve` on `data`, expecting it to refuse to start: exit 1 and one line
/// naming `db`.
fn refused_at_start(data: &Path, keys: &Path, db: &Path, what: &str) -> TestResult<String> {
    let out = zeppelin()
        .args(["serve", "--listen", "127.0.0.1:0", "--data"])
        .arg(data)
        .arg("--keys")
        .arg(keys)
        .env("ZEPPELIN_LOG", "off")
        .stdin(Stdio::null())
        .output()?;
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(1), "{what}: {stderr}");
    assert!(out.stdout.is_empty(), "{what}: it listened");
    assert_eq!(stderr.trim_end().lines().count(), 1, "{what}: {stderr}");
    assert!(
        stderr.contains(&db.display().to_string()),
        "{what}: the message does not name the file: {stderr}"
    );
    Ok(stderr)
}

#[test]
fn damaged_or_foreign_stores_are_refused_at_start_naming_the_file() -> TestResult {
    let f = fixture(&["s"])?;
    let ct = f.ciphertext(0)?;
    let db = f.data.join(DB_FILE);
    let wal = f.data.join(format!("{DB_FILE}-wal"));

    // Killed with uploads in its WAL, then the database deleted: the WAL alone is refused.
    let server = serve(&f.data, &f.keys)?;
    for _ in 0..3 {
        assert_eq!(f.upload(&server.addr, "s", &ct)?.status, 201);
    }
    drop(server); // SIGKILL: the WAL is left as it is.
    assert!(wal.exists(), "no -wal after a kill");
    let saved = f.dir.path().join("saved.sqlite3");
    std::fs::rename(&db, &saved)?;
    let text = refused_at_start(&f.data, &f.keys, &db, "database deleted beside its -wal")?;
    assert!(text.contains("-wal exists"), "{text}");
    std::fs::rename(&saved, &db)?;

    // Stopped cleanly (checkpointed, no -wal), then cut in half.
    let server = serve(&f.data, &f.keys)?;
    let (_, count) = f.sum(&server.addr, "s")?;
    assert_eq!(count, 3, "the restored database and WAL lost uploads");
    server.stop()?;
    assert!(!wal.exists(), "a -wal after a clean stop");
    let intact = std::fs::read(&db)?;
    std::fs::write(&db, &intact[..intact.len() / 2])?;
    let text = refused_at_start(&f.data, &f.keys, &db, "truncated database")?;
    assert!(text.contains("truncated"), "{text}");

    // Another schema version.
    std::fs::write(&db, &intact)?;
    rusqlite::Connection::open(&db)?.execute_batch("PRAGMA user_version = 7;")?;
    let text = refused_at_start(&f.data, &f.keys, &db, "schema version 7")?;
    assert!(text.contains("schema version 7"), "{text}");

    // Another application's SQLite file.
    std::fs::remove_file(&db)?;
    rusqlite::Connection::open(&db)?
        .execute_batch("CREATE TABLE bookmarks (url TEXT); INSERT INTO bookmarks VALUES ('x');")?;
    let text = refused_at_start(&f.data, &f.keys, &db, "foreign SQLite file")?;
    assert!(text.contains("not a Zeppelin store"), "{text}");

    // The intact file serves again, with its three uploads.
    std::fs::write(&db, &intact)?;
    let server = serve(&f.data, &f.keys)?;
    assert_eq!(f.sum(&server.addr, "s")?, (expected([(0, 3)]), 3));
    Ok(())
}

#[test]
fn a_backup_during_uploads_serves_the_same_sum_and_dot_pins_first_n() -> TestResult {
    let f = fixture(&["m"])?;
    let cts: Vec<Vec<u8>> = (0..5).map(|i| f.ciphertext(i)).collect::<TestResult<_>>()?;
    let server = serve(&f.data, &f.keys)?;
    for ct in &cts {
        assert_eq!(f.upload(&server.addr, "m", ct)?.status, 201);
    }
    // Upload `k` (from 0) carries plaintext(k % 5), sequentially from one thread.
    const TOTAL: usize = 60;
    let uploader = {
        let (addr, device, cts) = (server.addr.clone(), f.device.clone(), cts.clone());
        std::thread::spawn(move || -> TestResult {
            for k in 5..TOTAL {
                let a = request(
                    &addr,
                    "POST",
                    "/v1/streams/m/ciphertexts",
                    Some(&device),
                    &cts[k % 5],
                )?;
                assert_eq!(a.status, 201, "upload {k}");
            }
            Ok(())
        })
    };
    // During ingest: dot over the first 5 uploads, whatever arrives meanwhile.
    let weights = [3u64, 0, 1, 7, 2];
    let a = f.aggregate(
        &server.addr,
        "m",
        r#"{"op":"dot","weights":[3,0,1,7,2],"first_n":5}"#,
    )?;
    assert_eq!(a.status, 200, "{}", a.text());
    assert_eq!(a.header("zeppelin-count"), Some("5"));
    let dot_terms = weights.iter().enumerate().map(|(i, &w)| (i as u64, w));
    assert_eq!(f.decrypt(&a.body)?, expected(dot_terms));
    // A first_n the stream does not hold yet is a 400.
    let a = f.aggregate(&server.addr, "m", r#"{"op":"sum","first_n":100000}"#)?;
    assert_eq!(a.status, 400, "{}", a.text());

    // The backup, while the uploads go on.
    let backup = f.dir.path().join("backup.sqlite3");
    let said = run(zeppelin()
        .args(["store", "backup", "--data"])
        .arg(&f.data)
        .arg("--out")
        .arg(&backup))?;
    assert!(said.starts_with("backed up 1 streams, "), "{said}");
    uploader.join().map_err(|_| "uploader panicked")??;

    // The backup as a store of its own.
    let restored = f.dir.path().join("restored");
    std::fs::create_dir_all(&restored)?;
    std::fs::rename(&backup, restored.join(DB_FILE))?;
    std::fs::copy(f.data.join("owner.token"), restored.join("owner.token"))?;
    std::fs::copy(
        f.data.join("principals.json"),
        restored.join("principals.json"),
    )?;
    run(zeppelin().args(["store", "check", "--data"]).arg(&restored))?;
    let copy = serve(&restored, &f.keys)?;
    let (copy_sum, n) = f.sum(&copy.addr, "m")?;
    assert!(
        (5..=TOTAL as u64).contains(&n),
        "the backup holds {n} uploads"
    );
    eprintln!("the backup taken during the uploads holds {n} of {TOTAL}");
    assert_eq!(copy_sum, expected((0..n).map(|k| (k % 5, 1))));
    // The original's first n uploads: the same ciphertext, byte for byte.
    let original = f.aggregate(
        &server.addr,
        "m",
        &format!(r#"{{"op":"sum","first_n":{n}}}"#),
    )?;
    let from_copy = f.aggregate(&copy.addr, "m", r#"{"op":"sum"}"#)?;
    assert_eq!(original.status, 200, "{}", original.text());
    assert!(original.body == from_copy.body, "the sums differ");
    assert_eq!(f.sum(&server.addr, "m")?.1, TOTAL as u64);
    Ok(())
}

#[test]
fn deletes_are_the_owners_and_sums_exclude_the_deleted_uploads() -> TestResult {
    let f = fixture(&["d"])?;
    let other = run(zeppelin()
        .args(["devices", "add", "--data"])
        .arg(&f.data)
        .args(["--device", "other", "--stream", "d"]))?
    .trim()
    .to_owned();
    let server = serve(&f.data, &f.keys)?;
    let addr = &server.addr;
    // dev: plaintexts 0, 1, 2 (ids 1, 3, 5); other: 3, 4 (ids 2, 4).
    for i in 0..5u64 {
        let token = if i % 2 == 0 { &f.device } else { &other };
        let ct = f.ciphertext(if i % 2 == 0 { i / 2 } else { 3 + i / 2 })?;
        let a = request(addr, "POST", "/v1/streams/d/ciphertexts", Some(token), &ct)?;
        assert_eq!(a.status, 201, "{}", a.text());
    }
    let paths = ["/v1/streams/d/ciphertexts/3", "/v1/streams/d/devices/other"];
    for path in paths {
        let a = request(addr, "DELETE", path, None, b"")?;
        assert_eq!(a.status, 401, "anonymous {path}: {}", a.text());
        for token in [&f.device, &other] {
            let a = request(addr, "DELETE", path, Some(token), b"")?;
            assert_eq!(a.status, 403, "device {path}: {}", a.text());
        }
    }
    assert_eq!(f.sum(addr, "d")?.1, 5, "a refused delete removed something");

    // dev's second upload (id 3, plaintext 1).
    let a = request(addr, "DELETE", paths[0], Some(&f.owner), b"")?;
    assert_eq!(a.status, 204, "{}", a.text());
    assert_eq!(a.header("zeppelin-deleted"), Some("1"));
    let again = request(addr, "DELETE", paths[0], Some(&f.owner), b"")?;
    assert_eq!(again.status, 404, "{}", again.text());
    let bad = request(
        addr,
        "DELETE",
        "/v1/streams/d/ciphertexts/-1",
        Some(&f.owner),
        b"",
    )?;
    assert_eq!(bad.status, 400, "{}", bad.text());
    assert_eq!(
        f.sum(addr, "d")?,
        (expected([(0, 1), (2, 1), (3, 1), (4, 1)]), 4)
    );

    // Every upload of device "other".
    let a = request(addr, "DELETE", paths[1], Some(&f.owner), b"")?;
    assert_eq!(a.status, 204, "{}", a.text());
    assert_eq!(a.header("zeppelin-deleted"), Some("2"));
    assert_eq!(f.sum(addr, "d")?, (expected([(0, 1), (2, 1)]), 2));
    let status = request(addr, "GET", "/v1/streams/d", Some(&f.owner), b"")?;
    let count = serde_json::from_slice::<serde_json::Value>(&status.body)?["count"].as_u64();
    assert_eq!(count, Some(2));

    // dot over the remaining two (ids 1 and 5): weights follow the id order.
    let a = f.aggregate(addr, "d", r#"{"op":"dot","weights":[5,1]}"#)?;
    assert_eq!(a.status, 200, "{}", a.text());
    assert_eq!(f.decrypt(&a.body)?, expected([(0, 5), (2, 1)]));
    // A new upload gets a fresh id after the deleted ones.
    let a = f.upload(addr, "d", &f.ciphertext(0)?)?;
    let id: serde_json::Value = serde_json::from_slice(&a.body)?;
    assert_eq!(id["id"], "6");
    Ok(())
}

/// How one aggregation raced one delete.
#[derive(Debug, PartialEq)]
enum RaceOutcome {
    /// 200 over every upload, the deleted one included (read before the delete).
    Before,
    /// 200 over the uploads without the deleted one (the delete came first).
    After,
    /// 409: the stream changed under the aggregation.
    Changed,
}

#[test]
fn deletes_racing_an_aggregation_give_a_right_sum_or_409() -> TestResult {
    const BULK: u64 = 2_000;
    const ROUNDS: u32 = 8;
    let f = fixture(&["r"])?;
    let other = run(zeppelin()
        .args(["devices", "add", "--data"])
        .arg(&f.data)
        .args(["--device", "other", "--stream", "r"]))?
    .trim()
    .to_owned();
    let server = serve(&f.data, &f.keys)?;
    let addr = server.addr.clone();
    // The bulk: plaintext(0) from "dev", four connections at a time.
    let bulk = f.ciphertext(0)?;
    let uploaders: Vec<_> = (0..4)
        .map(|_| {
            let (addr, device, ct) = (addr.clone(), f.device.clone(), bulk.clone());
            std::thread::spawn(move || -> TestResult {
                for _ in 0..BULK / 4 {
                    let a = request(
                        &addr,
                        "POST",
                        "/v1/streams/r/ciphertexts",
                        Some(&device),
                        &ct,
                    )?;
                    assert_eq!(a.status, 201, "{}", a.text());
                }
                Ok(())
            })
        })
        .collect();
    for u in uploaders {
        u.join().map_err(|_| "upload thread panicked")??;
    }
    // An undisturbed sum: how long one takes here, once the store's pages are cached (the
    // first sum reads them cold and can take several times as long).
    assert_eq!(f.sum(&addr, "r")?, (expected([(0, BULK)]), BULK));
    let started = std::time::Instant::now();
    let warm = f.aggregate(&addr, "r", r#"{"op":"sum"}"#)?;
    let undisturbed = started.elapsed();
    assert_eq!(warm.status, 200, "{}", warm.text());

    // Each round: a tail upload of plaintext(9) (the stream's last id, read last), an
    // aggregation, and after a delay a delete of the tail (by id in even rounds, as all of
    // device "other"'s uploads in odd ones).
    let tail = f.ciphertext(9)?;
    let mut outcomes = Vec::new();
    let mut overlapped = 0u32;
    for round in 0..ROUNDS {
        let by_device = round % 2 == 1;
        let token = if by_device { &other } else { &f.device };
        let a = request(
            &addr,
            "POST",
            "/v1/streams/r/ciphertexts",
            Some(token),
            &tail,
        )?;
        assert_eq!(a.status, 201, "{}", a.text());
        let id = serde_json::from_slice::<serde_json::Value>(&a.body)?["id"]
            .as_str()
            .ok_or("no id")?
            .to_owned();
        let delay = undisturbed * (round + 1) / (ROUNDS + 1);
        let (aggregator_addr, owner) = (addr.clone(), f.owner.clone());
        let aggregation =
            std::thread::spawn(move || -> TestResult<(Answer, std::time::Instant)> {
                let a = request(
                    &aggregator_addr,
                    "POST",
                    "/v1/streams/r/aggregate",
                    Some(&owner),
                    br#"{"op":"sum"}"#,
                )?;
                Ok((a, std::time::Instant::now()))
            });
        std::thread::sleep(delay);
        let path = if by_device {
            "/v1/streams/r/devices/other".to_owned()
        } else {
            format!("/v1/streams/r/ciphertexts/{id}")
        };
        let d = request(&addr, "DELETE", &path, Some(&f.owner), b"")?;
        let deleted_at = std::time::Instant::now();
        assert_eq!(d.status, 204, "delete {path}: {}", d.text());
        assert_eq!(d.header("zeppelin-deleted"), Some("1"));
        let (a, answered_at) = aggregation
            .join()
            .map_err(|_| "aggregation thread panicked")??;
        if deleted_at < answered_at {
            overlapped += 1;
        }
        let outcome = match a.status {
            200 => {
                let count: u64 = a.header("zeppelin-count").ok_or("no count")?.parse()?;
                let sum = f.decrypt(&a.body)?;
                if count == BULK + 1 {
                    assert_eq!(
                        sum,
                        expected([(0, BULK), (9, 1)]),
                        "round {round}: count {count}"
                    );
                    RaceOutcome::Before
                } else {
                    assert_eq!(
                        count, BULK,
                        "round {round}: a count no state of the stream had"
                    );
                    assert_eq!(sum, expected([(0, BULK)]), "round {round}: count {count}");
                    RaceOutcome::After
                }
            }
            409 => {
                assert!(a.text().contains("changed"), "round {round}: {}", a.text());
                RaceOutcome::Changed
            }
            other => return Err(format!("round {round}: status {other}: {}", a.text()).into()),
        };
        outcomes.push(outcome);
        health_is_up(&addr)?;
    }
    eprintln!(
        "undisturbed sum of {BULK}: {undisturbed:?}; outcomes {outcomes:?}; \
         {overlapped} of {ROUNDS} deletes answered while the aggregation ran"
    );
    assert!(
        overlapped > 0,
        "no delete landed during an aggregation: the race was not exercised"
    );
    // Afterwards the stream is the bulk alone.
    assert_eq!(f.sum(&addr, "r")?, (expected([(0, BULK)]), BULK));
    Ok(())
}
