//! Crash test of `zeppelin serve` (the real binary): 100 clients ingest 10,000 uploads with
//! idempotency keys, the server is killed with SIGKILL mid-ingest and restarted on the same
//! data directory; then every acknowledged upload must be there exactly once:
//!
//! 1. re-sending each acknowledged upload with its key is answered "replayed" with the id
//!    first acknowledged, and stores nothing (the count does not grow);
//! 2. the clients then retry everything not acknowledged, and the stream ends with exactly
//!    10,000 uploads whose ids are 1..=10,000, one per key;
//! 3. the SQLite file, read directly after a clean SIGTERM shutdown, holds exactly those
//!    10,000 keys once each, the ids dense, every body one of the ciphertexts sent.

use std::collections::{HashMap, HashSet};
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use zeppelin_service::client::Client;

type TestResult<T = ()> = Result<T, Box<dyn std::error::Error + Send + Sync>>;

const UPLOADS: usize = 10_000;
const CLIENTS: usize = 100;
const KILL_AFTER: u64 = 4_000;
const STREAM: &str = "crash";

fn zeppelin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_zeppelin"))
}

fn run(cmd: &mut Command) -> TestResult {
    let out = cmd.output()?;
    if !out.status.success() {
        return Err(format!("{cmd:?}: {}", String::from_utf8_lossy(&out.stderr)).into());
    }
    Ok(())
}

/// The device name the crash test's clients upload as.
const DEVICE: &str = "crash-fleet";

/// Issues the owner token and registers [`DEVICE`] for [`STREAM`] in `data`: (owner, device).
fn credentials(data: &Path) -> TestResult<(String, String)> {
    run(zeppelin().args(["devices", "owner", "--data"]).arg(data))?;
    let owner = std::fs::read_to_string(data.join("owner.token"))?
        .trim()
        .to_owned();
    let out = zeppelin()
        .args(["devices", "add", "--data"])
        .arg(data)
        .args(["--device", DEVICE, "--stream", STREAM])
        .output()?;
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).into_owned().into());
    }
    Ok((owner, String::from_utf8(out.stdout)?.trim().to_owned()))
}

/// A server child that is killed if the test ends early (a failed assertion).
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        // Already reaped (waited for) children are left alone by `kill`.
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `zeppelin serve` on a free port; returns the child and its URL.
fn serve(data: &Path, keys: &Path, log: &Path) -> TestResult<(Server, String)> {
    let mut child = zeppelin()
        .args(["serve", "--listen", "127.0.0.1:0", "--data"])
        .arg(data)
        .arg("--keys")
        .arg(keys)
        .stdout(Stdio::piped())
        .stderr(
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(log)?,
        )
        .spawn()?;
    let stdout = child.stdout.take().ok_or("no stdout")?;
    let child = Server(child);
    let mut line = String::new();
    BufReader::new(stdout).read_line(&mut line)?;
    let url = line
        .trim()
        .strip_prefix("listening on ")
        .ok_or_else(|| format!("unexpected first line {line:?}"))?
        .to_owned();
    Ok((child, url))
}

/// Every upload: (key, body index).
fn plan(bodies: usize) -> Vec<(String, usize)> {
    (0..UPLOADS)
        .map(|i| (format!("dev{}/{}", i % CLIENTS, i / CLIENTS), i % bodies))
        .collect()
}

/// Uploads `todo` against a restarted server, every request answered; the replies by key
/// (id, whether it was a replay).
fn ingest_without_failure(
    runtime: &tokio::runtime::Runtime,
    client: &Client,
    bodies: &[bytes::Bytes],
    todo: Vec<(String, usize)>,
) -> TestResult<HashMap<String, (String, bool)>> {
    let replies = Arc::new(std::sync::Mutex::new(HashMap::new()));
    let failures = runtime.block_on(ingest(
        client,
        bodies,
        todo,
        replies.clone(),
        Arc::new(AtomicU64::new(0)),
    ))?;
    assert_eq!(failures, 0);
    let replies = replies
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .clone();
    Ok(replies)
}

/// Sends every upload of `todo` (from `CLIENTS` tasks), recording acknowledged ids in
/// `acked`; stops a task at its first transport failure (the server is gone).
async fn ingest(
    client: &Client,
    bodies: &[bytes::Bytes],
    todo: Vec<(String, usize)>,
    acked: Arc<std::sync::Mutex<HashMap<String, (String, bool)>>>,
    counter: Arc<AtomicU64>,
) -> TestResult<usize> {
    let mut per_client: Vec<Vec<(String, usize)>> = vec![Vec::new(); CLIENTS];
    for (i, item) in todo.into_iter().enumerate() {
        per_client[i % CLIENTS].push(item);
    }
    let mut tasks = Vec::new();
    for items in per_client {
        let (client, bodies, acked, counter) = (
            client.clone(),
            bodies.to_vec(),
            acked.clone(),
            counter.clone(),
        );
        tasks.push(tokio::spawn(async move {
            let mut failures = 0usize;
            for (key, body) in items {
                match client
                    .upload(STREAM, bodies[body].clone(), Some(&key))
                    .await
                {
                    Ok(receipt) => {
                        counter.fetch_add(1, Ordering::Relaxed);
                        acked
                            .lock()
                            .unwrap_or_else(std::sync::PoisonError::into_inner)
                            .insert(key, (receipt.id, receipt.replayed));
                    }
                    Err(_) => {
                        failures += 1;
                        break;
                    }
                }
            }
            failures
        }));
    }
    let mut failures = 0;
    for t in tasks {
        failures += t.await?;
    }
    Ok(failures)
}

#[test]
fn kill_9_mid_ingest_loses_no_acknowledged_upload_and_duplicates_none() -> TestResult {
    let started = Instant::now();
    let dir = tempfile::tempdir()?;
    let (keys, data, log) = (
        dir.path().join("keys"),
        dir.path().join("data"),
        dir.path().join("serve.log"),
    );
    run(zeppelin().arg("keygen").arg("--dir").arg(&keys))?;
    // A few distinct, valid seeded ciphertexts made by the CLI.
    let mut bodies = Vec::new();
    for b in 0..4 {
        let values = dir.path().join(format!("v{b}"));
        std::fs::write(
            &values,
            (0..64)
                .map(|i| format!("{}\n", i * 7 + b))
                .collect::<String>(),
        )?;
        let out = dir.path().join(format!("c{b}.bin"));
        run(zeppelin()
            .args(["encrypt", "--mode", "seeded", "--dir"])
            .arg(&keys)
            .arg("--in")
            .arg(&values)
            .arg("--out")
            .arg(&out))?;
        bodies.push(bytes::Bytes::from(std::fs::read(&out)?));
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let acked = Arc::new(std::sync::Mutex::new(HashMap::new()));
    let counter = Arc::new(AtomicU64::new(0));

    // Phase 1: ingest, and SIGKILL once KILL_AFTER uploads were acknowledged.
    let (owner_token, device_token) = credentials(&data)?;
    let (mut first, url) = serve(&data, &keys, &log)?;
    let client = Client::new(&url)?.with_token(&device_token);
    let all = plan(bodies.len());
    let watcher_counter = counter.clone();
    let pid = first.0.id();
    let killer = std::thread::spawn(move || {
        let deadline = Instant::now() + Duration::from_secs(120);
        while watcher_counter.load(Ordering::Relaxed) < KILL_AFTER && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(1));
        }
        signal(pid, libc::SIGKILL)
    });
    let failures = runtime.block_on(ingest(
        &client,
        &bodies,
        all.clone(),
        acked.clone(),
        counter.clone(),
    ))?;
    killer.join().map_err(|_| "killer thread panicked")??;
    let status = first.0.wait()?;
    assert_eq!(
        std::os::unix::process::ExitStatusExt::signal(&status),
        Some(9),
        "the server was not killed by SIGKILL: {status:?}"
    );
    let acked_before: HashMap<String, (String, bool)> = acked
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .clone();
    let n_acked = acked_before.len();
    assert!(
        failures > 0,
        "the kill came after the ingest ended ({n_acked} acknowledged)"
    );
    assert!(
        n_acked >= KILL_AFTER as usize && n_acked < UPLOADS,
        "{n_acked} acknowledged"
    );

    // Phase 2: restart on the same data directory.
    let (mut second, url) = serve(&data, &keys, &log)?;
    let client = Client::new(&url)?.with_token(&device_token);
    let owner = Client::new(&url)?.with_token(&owner_token);
    let count_after_restart = runtime.block_on(owner.status(STREAM))?.count;
    assert!(
        count_after_restart as usize >= n_acked,
        "{count_after_restart} stored after the restart, {n_acked} had been acknowledged"
    );
    // 1. Every acknowledged upload, re-sent with its key, is a replay with the same id.
    let resend: Vec<(String, usize)> = all
        .iter()
        .filter(|(k, _)| acked_before.contains_key(k))
        .cloned()
        .collect();
    let replies = ingest_without_failure(&runtime, &client, &bodies, resend)?;
    assert_eq!(replies.len(), n_acked);
    for (key, (id, _)) in &acked_before {
        let (again, replayed) = &replies[key];
        assert!(
            replayed,
            "acknowledged upload {key} (id {id}) was stored again as {again}"
        );
        assert_eq!(
            again, id,
            "acknowledged upload {key}: id {id} before the crash, {again} after"
        );
    }
    assert_eq!(
        runtime.block_on(owner.status(STREAM))?.count,
        count_after_restart
    );
    // 2. Retry everything else: the stream ends with every upload exactly once.
    let rest: Vec<(String, usize)> = all
        .iter()
        .filter(|(k, _)| !acked_before.contains_key(k))
        .cloned()
        .collect();
    let finals = ingest_without_failure(&runtime, &client, &bodies, rest)?;
    // Uploads that committed but whose answer the kill cut off come back as replays.
    let in_flight_committed = finals.values().filter(|(_, replayed)| *replayed).count();
    assert_eq!(in_flight_committed, count_after_restart as usize - n_acked);
    assert_eq!(
        runtime.block_on(owner.status(STREAM))?.count,
        UPLOADS as u64
    );
    let ids: HashSet<u64> = acked_before
        .values()
        .chain(finals.values())
        .map(|(id, _)| id.parse::<u64>())
        .collect::<Result<_, _>>()?;
    assert_eq!(ids, (1..=UPLOADS as u64).collect::<HashSet<_>>());

    // 3. A clean shutdown exits 0; the file holds each key once with dense ids.
    signal(second.0.id(), libc::SIGTERM)?;
    let status = second.0.wait()?;
    assert!(status.success(), "SIGTERM shutdown: {status:?}");
    let db = rusqlite::Connection::open_with_flags(
        data.join(zeppelin_service::store::DB_FILE),
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
    )?;
    let mut stmt = db.prepare("SELECT u.seq, u.idem_key, u.body, u.device FROM uploads u JOIN streams s ON u.stream_id = s.id WHERE s.name = ?1 ORDER BY u.seq")?;
    let rows = stmt.query_map([STREAM], |r| {
        Ok((
            r.get::<_, i64>(0)?,
            r.get::<_, String>(1)?,
            r.get::<_, Vec<u8>>(2)?,
            r.get::<_, String>(3)?,
        ))
    })?;
    let expected: HashMap<&str, usize> = all.iter().map(|(k, b)| (k.as_str(), *b)).collect();
    let mut seen = HashSet::new();
    for (next, row) in (1i64..).zip(rows) {
        let (seq, scoped, body, device) = row?;
        assert_eq!(seq, next, "ids not dense");
        // Keys are stored scoped to their device, and each upload records its device.
        assert_eq!(device, DEVICE);
        let key = scoped
            .strip_prefix(&format!("{DEVICE}/"))
            .ok_or_else(|| format!("key {scoped} not scoped to {DEVICE}"))?
            .to_owned();
        assert!(seen.insert(key.clone()), "key {key} stored twice");
        let b = expected
            .get(key.as_str())
            .ok_or_else(|| format!("unknown key {key}"))?;
        assert_eq!(body, bodies[*b].as_ref(), "body of {key}");
    }
    assert_eq!(seen.len(), UPLOADS);
    eprintln!(
        "crash test: killed after {n_acked} acknowledged uploads; {count_after_restart} stored after restart \
         ({} committed but unanswered); all {UPLOADS} exactly once; {:.1} s",
        count_after_restart as usize - n_acked,
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// Sends `signal` to our own child `pid` (not yet reaped, so the pid is still its).
fn signal(pid: u32, signal: i32) -> TestResult {
    let pid = i32::try_from(pid)?;
    // SAFETY: kill(2) has no memory effects; the pid is our unreaped child's.
    if unsafe { libc::kill(pid, signal) } != 0 {
        return Err(std::io::Error::last_os_error().into());
    }
    Ok(())
}

#[test]
fn serve_refuses_what_it_cannot_serve() -> TestResult {
    let dir = tempfile::tempdir()?;
    // A preset without a special prime: the service needs SEAL's key switching.
    let keys = dir.path().join("keys");
    run(zeppelin()
        .args(["keygen", "--preset", "zeppelin4096", "--dir"])
        .arg(&keys))?;
    let out = zeppelin()
        .args(["serve", "--listen", "127.0.0.1:0", "--data"])
        .arg(dir.path().join("data"))
        .arg("--keys")
        .arg(&keys)
        .output()?;
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("runs presets seal4096 and seal8192"),
        "{stderr}"
    );
    // A data directory of another schema version.
    let keys = dir.path().join("keys4096");
    run(zeppelin().arg("keygen").arg("--dir").arg(&keys))?;
    let data = dir.path().join("old");
    std::fs::create_dir(&data)?;
    rusqlite::Connection::open(data.join(zeppelin_service::store::DB_FILE))?.execute_batch(
        "PRAGMA application_id = 1515211854; PRAGMA user_version = 7; CREATE TABLE t (x);",
    )?;
    let out = zeppelin()
        .args(["serve", "--listen", "127.0.0.1:0", "--data"])
        .arg(&data)
        .arg("--keys")
        .arg(&keys)
        .output()?;
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!(
            "schema version 7, this build reads version {}",
            zeppelin_service::store::SCHEMA_VERSION
        )),
        "{stderr}"
    );
    Ok(())
}
