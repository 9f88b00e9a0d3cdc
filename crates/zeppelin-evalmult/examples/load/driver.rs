//! The load test shared by `examples/load` (full form) and `tests/load.rs` (short form): a
//! server child process on 127.0.0.1 with small limits, then a bounded number of
//! connections mixing idle, slow-loris, oversized-frame, junk, unfinished-session,
//! non-reading and honest clients. Loopback only; every client and the whole run are
//! bounded in time.
#![allow(
    dead_code,
    reason = "each includer uses part of the driver (the test: not the CLI parsing)"
)]

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::Semaphore;
use zeppelin_evalmult::frames;
use zeppelin_evalmult::server::{Client, Server, ServerConfig};
use zeppelin_evalmult::vectors::VectorSet;

/// The environment variable that makes a process the server child.
pub const CHILD_ENV: &str = "ZEPPELIN_LOAD_SERVER_CHILD";

/// The server child's limits: 128 connections, 1 s idle, 0.5 s read grace then 256 KiB/s,
/// 1 s writes, 3 s sessions, 32 MiB per session, 64 MiB in all, 2 workers, 8 errors.
pub fn child_config() -> ServerConfig {
    let mut config = ServerConfig::new(4096);
    config.max_connections = 128;
    config.idle_timeout = Duration::from_secs(1);
    config.read_timeout = Duration::from_millis(500);
    config.min_rate = 256 << 10;
    config.write_timeout = Duration::from_secs(1);
    config.session_timeout = Duration::from_secs(3);
    config.session_memory = 32 << 20;
    config.total_memory = 64 << 20;
    config.workers = 2;
    config.max_errors = 8;
    config.shutdown_grace = Duration::from_secs(5);
    config
}

/// Bound asserted on the server child's peak resident memory (VmHWM): the global memory
/// cap (64 MiB) plus 96 MiB for the runtime, thread stacks, per-connection buffers (128 ×
/// about 30 KiB), allocator slack and the test harness.
pub const RSS_BOUND_KIB: u64 = (64 + 96) << 10;

/// Body of the server child: listens on 127.0.0.1:0, prints `LISTENING <addr>` on stdout,
/// serves until SIGTERM, prints `STATS <counters>`, exits 0.
pub fn run_child() -> ! {
    let code = match child_main() {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("server child: {e}");
            1
        }
    };
    std::process::exit(code)
}

fn child_main() -> Result<(), String> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").map_err(|e| e.to_string())?;
    let server = Server::new(listener, child_config()).map_err(|e| e.to_string())?;
    let addr = server.local_addr().map_err(|e| e.to_string())?;
    println!("LISTENING {addr}");
    let stats = server.run_until_signal().map_err(|e| e.to_string())?;
    println!("STATS {stats}");
    Ok(())
}

/// The running server child.
pub struct ServerChild {
    child: Child,
    stdout: BufReader<std::process::ChildStdout>,
    /// Where it listens.
    pub addr: SocketAddr,
}

impl ServerChild {
    /// Starts `command` (which must end up in [`run_child`]) and waits for its address.
    pub fn start(mut command: Command) -> Result<Self, String> {
        let mut child = command
            .env(CHILD_ENV, "1")
            .stdout(Stdio::piped())
            .stdin(Stdio::null())
            .spawn()
            .map_err(|e| format!("spawning the server child: {e}"))?;
        let stdout = child.stdout.take().ok_or("no stdout")?;
        let mut stdout = BufReader::new(stdout);
        let mut line = String::new();
        loop {
            line.clear();
            if stdout.read_line(&mut line).map_err(|e| e.to_string())? == 0 {
                return Err("server child ended before listening".into());
            }
            if let Some(addr) = line.trim().strip_prefix("LISTENING ") {
                let addr = addr.parse().map_err(|e| format!("{addr}: {e}"))?;
                return Ok(Self {
                    child,
                    stdout,
                    addr,
                });
            }
        }
    }

    /// Whether it is still running.
    pub fn alive(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// `VmHWM` (peak resident set) and `VmRSS` of the child, KiB, from /proc.
    pub fn memory_kib(&self) -> Result<(u64, u64), String> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .map_err(|e| e.to_string())?;
        let field = |name: &str| {
            status
                .lines()
                .find_map(|l| l.strip_prefix(name))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
                .ok_or(format!("no {name} in /proc/<pid>/status"))
        };
        Ok((field("VmHWM:")?, field("VmRSS:")?))
    }

    /// SIGTERM, then waits (at most `limit`) for the exit; returns the exit code and the
    /// child's `STATS` line.
    pub fn terminate(mut self, limit: Duration) -> Result<(Option<i32>, String), String> {
        let status = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .map_err(|e| e.to_string())?;
        if !status.success() {
            return Err("kill -TERM failed".into());
        }
        let deadline = Instant::now() + limit;
        loop {
            match self.child.try_wait().map_err(|e| e.to_string())? {
                Some(status) => {
                    let mut rest = String::new();
                    let _ = std::io::Read::read_to_string(&mut self.stdout, &mut rest);
                    let stats = rest
                        .lines()
                        .find_map(|l| l.strip_prefix("STATS "))
                        .unwrap_or("")
                        .to_owned();
                    return Ok((status.code(), stats));
                }
                None if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(20)),
                None => {
                    let _ = self.child.kill();
                    let _ = self.child.wait();
                    return Err(format!(
                        "server child still running {limit:?} after SIGTERM"
                    ));
                }
            }
        }
    }
}

impl Drop for ServerChild {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// The OpenFHE vectors (`$ZEPPELIN_VECTORS` or `../shared/vectors` beside the repository).
pub fn vectors() -> Result<VectorSet, String> {
    let dir = std::env::var_os("ZEPPELIN_VECTORS")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/vectors")
        })
        .join("openfhe-bv-n4096-l4-b2");
    VectorSet::load(&dir).map_err(|e| e.to_string())
}

/// The kinds of client, in the order connections cycle through them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Connects and sends nothing.
    Idle,
    /// Sends a frame one byte at a time, 5 bytes a second.
    SlowLoris,
    /// A length prefix above the limit, a 256 MiB junk claim, or a valid header declaring a
    /// 134 MiB frame; then as many bytes as it can in one second.
    Oversized,
    /// Random bytes, or random small frames.
    Junk,
    /// A profile and the first pair frame of a session, then nothing.
    Unfinished,
    /// Whole RLMP sessions without ever reading the replies.
    NonReader,
    /// A whole session through [`Client::eval_mult`], retried until it succeeds.
    Honest,
}

const CYCLE: [Kind; 10] = [
    Kind::Idle,
    Kind::SlowLoris,
    Kind::Honest,
    Kind::Oversized,
    Kind::Junk,
    Kind::Unfinished,
    Kind::Honest,
    Kind::Junk,
    Kind::NonReader,
    Kind::Oversized,
];

/// What the run gave.
#[derive(Debug, Default)]
pub struct Report {
    /// Connections opened (honest retries included).
    pub connections: u64,
    /// Connections per kind (idle, slow-loris, oversized, junk, unfinished, non-reader,
    /// honest).
    pub per_kind: [u64; 7],
    /// Honest sessions run, and how many gave results equal to OpenFHE's.
    pub honest: u64,
    /// Honest sessions equal to the vectors.
    pub honest_equal: u64,
    /// Honest sessions that gave other results or never succeeded.
    pub honest_failed: u64,
    /// Attempts honest clients needed beyond the first (refused at a cap, ...).
    pub honest_retries: u64,
    /// Wall time of the load.
    pub elapsed: Duration,
}

fn kind_index(kind: Kind) -> usize {
    match kind {
        Kind::Idle => 0,
        Kind::SlowLoris => 1,
        Kind::Oversized => 2,
        Kind::Junk => 3,
        Kind::Unfinished => 4,
        Kind::NonReader => 5,
        Kind::Honest => 6,
    }
}

#[derive(Default)]
struct Counters {
    connections: AtomicU64,
    per_kind: [AtomicU64; 7],
    honest: AtomicU64,
    honest_equal: AtomicU64,
    honest_failed: AtomicU64,
    honest_retries: AtomicU64,
}

/// Longest any one attacking client lives.
const CLIENT_LIFE: Duration = Duration::from_secs(6);
/// Longest an honest client keeps retrying.
const HONEST_PATIENCE: Duration = Duration::from_secs(40);

/// The vectors and the encoded frames the clients send, made once.
pub struct Workload {
    /// The OpenFHE vectors.
    pub set: VectorSet,
    profile: Vec<u8>,
    /// RLMD pair 0 (what an unfinished session sends).
    rlmd_first: Vec<u8>,
    /// RLMP pairs 0 and 1 with the reference digits (what a non-reader repeats).
    rlmp: Vec<Vec<u8>>,
}

impl Workload {
    /// Encodes the frames for `set`.
    pub fn new(set: VectorSet) -> Result<Self, String> {
        let ctx = &set.context;
        let text = |e: zeppelin_evalmult::EvalMultError| e.to_string();
        let profile = encode(&frames::encode_profile(&ctx.moduli_values()).map_err(text)?);
        let rlmd_first =
            encode(&frames::encode_pair_frame(ctx, &set.key, &set.pairs, None, 0).map_err(text)?);
        let digits: Vec<_> = set
            .pairs
            .iter()
            .map(|(x, y)| {
                zeppelin_evalmult::reference::eval_mult(ctx, &set.key, x, y)
                    .and_then(|r| zeppelin_evalmult::tower_major_digits(ctx, &r.digits))
            })
            .collect::<Result<_, _>>()
            .map_err(text)?;
        let rlmp = (0..2)
            .map(|p| {
                frames::encode_pair_frame(ctx, &set.key, &set.pairs, Some(&digits), p)
                    .map(|f| encode(&f))
            })
            .collect::<Result<_, _>>()
            .map_err(text)?;
        Ok(Self {
            set,
            profile,
            rlmd_first,
            rlmp,
        })
    }
}

/// Runs `connections` client connections (at most `concurrency` at once) against `addr`,
/// the whole within `limit`.
pub fn run_load(
    addr: SocketAddr,
    set: Arc<Workload>,
    connections: usize,
    concurrency: usize,
    limit: Duration,
) -> Result<Report, String> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .max_blocking_threads(32)
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    let counters = Arc::new(Counters::default());
    let started = Instant::now();
    let outcome = runtime.block_on(async {
        let gate = Arc::new(Semaphore::new(concurrency));
        // Honest clients block (the std client): a few at a time on the blocking pool.
        let honest_gate = Arc::new(Semaphore::new(16));
        let mut tasks = tokio::task::JoinSet::new();
        let mut opened = 0usize;
        let mut index = 0usize;
        while opened < connections {
            let kind = CYCLE[index % CYCLE.len()];
            index += 1;
            opened += 1;
            let Ok(permit) = gate.clone().acquire_owned().await else {
                break;
            };
            let (counters, set, honest_gate) = (counters.clone(), set.clone(), honest_gate.clone());
            let seed = index as u64;
            tasks.spawn(async move {
                if kind == Kind::Honest {
                    let Ok(slot) = honest_gate.acquire_owned().await else {
                        return;
                    };
                    let counters2 = counters.clone();
                    let _ = tokio::task::spawn_blocking(move || honest(addr, &set.set, &counters2))
                        .await;
                    drop(slot);
                } else {
                    counters.connections.fetch_add(1, Ordering::Relaxed);
                    counters.per_kind[kind_index(kind)].fetch_add(1, Ordering::Relaxed);
                    let _ = tokio::time::timeout(CLIENT_LIFE, attack(addr, kind, seed, &set)).await;
                }
                drop(permit);
            });
            // Reap finished clients as we go.
            while tasks.try_join_next().is_some() {}
        }
        tokio::time::timeout(limit.saturating_sub(started.elapsed()), async {
            while tasks.join_next().await.is_some() {}
        })
        .await
        .map_err(|_| format!("load not finished within {limit:?}"))
    });
    runtime.shutdown_timeout(Duration::from_secs(1));
    outcome?;
    let get = |a: &AtomicU64| a.load(Ordering::Relaxed);
    Ok(Report {
        connections: get(&counters.connections),
        per_kind: std::array::from_fn(|k| get(&counters.per_kind[k])),
        honest: get(&counters.honest),
        honest_equal: get(&counters.honest_equal),
        honest_failed: get(&counters.honest_failed),
        honest_retries: get(&counters.honest_retries),
        elapsed: started.elapsed(),
    })
}

/// One honest session through the blocking client, retried (after a refusal or a reset)
/// until it succeeds or [`HONEST_PATIENCE`] is spent.
fn honest(addr: SocketAddr, set: &VectorSet, counters: &Counters) {
    counters.honest.fetch_add(1, Ordering::Relaxed);
    let deadline = Instant::now() + HONEST_PATIENCE;
    let mut attempt = 0u32;
    loop {
        counters.connections.fetch_add(1, Ordering::Relaxed);
        counters.per_kind[kind_index(Kind::Honest)].fetch_add(1, Ordering::Relaxed);
        if attempt > 0 {
            counters.honest_retries.fetch_add(1, Ordering::Relaxed);
        }
        attempt += 1;
        let result = Client::connect(addr).and_then(|mut client| {
            client.set_timeout(Some(Duration::from_secs(10)))?;
            client.eval_mult(&set.context, &set.key, &set.pairs, None)
        });
        match result {
            Ok(got) => {
                if Some(&got) == set.expected.as_ref() {
                    counters.honest_equal.fetch_add(1, Ordering::Relaxed);
                } else {
                    counters.honest_failed.fetch_add(1, Ordering::Relaxed);
                }
                return;
            }
            Err(_) if Instant::now() < deadline => {
                let pause = 20u64 << attempt.min(5);
                std::thread::sleep(Duration::from_millis(pause));
            }
            Err(_) => {
                counters.honest_failed.fetch_add(1, Ordering::Relaxed);
                return;
            }
        }
    }
}

/// A small xorshift generator: junk needs no cryptographic randomness.
struct Junk(u64);

impl Junk {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

fn encode(words: &[u64]) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(8 * (words.len() + 1));
    bytes.extend_from_slice(&(words.len() as u64).to_le_bytes());
    for w in words {
        bytes.extend_from_slice(&w.to_le_bytes());
    }
    bytes
}

/// Reads and discards until the server closes.
async fn read_to_close(stream: &mut TcpStream) {
    let mut sink = [0u8; 4096];
    while let Ok(k) = stream.read(&mut sink).await {
        if k == 0 {
            break;
        }
    }
}

async fn attack(addr: SocketAddr, kind: Kind, seed: u64, work: &Workload) -> std::io::Result<()> {
    let mut stream = TcpStream::connect(addr).await?;
    let mut junk = Junk(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    let ctx = &work.set.context;
    match kind {
        Kind::Idle => {
            read_to_close(&mut stream).await;
            Ok(())
        }
        Kind::SlowLoris => {
            let frame = encode(&[u64::from(frames::CMD_RLPT), 0]);
            for &byte in frame.iter().cycle() {
                if stream.write_all(&[byte]).await.is_err() {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
            Ok(())
        }
        Kind::Oversized => {
            match seed % 3 {
                0 => {
                    stream
                        .write_all(&(frames::MAX_FRAME_WORDS + 1).to_le_bytes())
                        .await?
                }
                1 => {
                    stream
                        .write_all(&frames::MAX_FRAME_WORDS.to_le_bytes())
                        .await?;
                    stream.write_all(&[0x5A; 24]).await?;
                }
                _ => {
                    stream.write_all(&work.profile).await?;
                    let header = frames::PairHeader {
                        with_digits: false,
                        ciphertexts: 1024,
                        digits: ctx.towers(),
                        pair_index: 0,
                        pair_count: 2,
                    };
                    let len = header.frame_len(ctx.ring_dim()) as u64;
                    stream.write_all(&len.to_le_bytes()).await?;
                    for w in [
                        u64::from(frames::CMD_RLMD),
                        frames::word(1024, ctx.towers() as u32),
                        frames::word(0, 2),
                    ] {
                        stream.write_all(&w.to_le_bytes()).await?;
                    }
                }
            }
            let chunk = vec![0xC3u8; 64 << 10];
            let until = Instant::now() + Duration::from_secs(1);
            while Instant::now() < until {
                if stream.write_all(&chunk).await.is_err() {
                    break;
                }
            }
            Ok(())
        }
        Kind::Junk => {
            if seed % 2 == 0 {
                let bytes: Vec<u8> = (0..4096).map(|_| junk.next() as u8).collect();
                stream.write_all(&bytes).await?;
            } else {
                for _ in 0..16 {
                    let words: Vec<u64> = (0..(junk.next() % 16)).map(|_| junk.next()).collect();
                    stream.write_all(&encode(&words)).await?;
                }
            }
            read_to_close(&mut stream).await;
            Ok(())
        }
        Kind::Unfinished => {
            stream.write_all(&work.profile).await?;
            stream.write_all(&work.rlmd_first).await?;
            read_to_close(&mut stream).await;
            Ok(())
        }
        Kind::NonReader => {
            stream.write_all(&work.profile).await?;
            for _ in 0..64 {
                for frame in &work.rlmp {
                    stream.write_all(frame).await?;
                }
            }
            Ok(())
        }
        Kind::Honest => Ok(()),
    }
}

/// Starts the server child with `command`, runs the load, checks every goal; returns the
/// figures as a few lines of text, or what failed.
pub fn check(
    command: Command,
    work: Arc<Workload>,
    connections: usize,
    concurrency: usize,
    limit: Duration,
) -> Result<String, String> {
    let mut server = ServerChild::start(command)?;
    let (_, rss_before) = server.memory_kib()?;
    let report = run_load(server.addr, work.clone(), connections, concurrency, limit)?;
    if !server.alive() {
        return Err("the server child died under load".into());
    }
    // Still serving after the load: one more honest session.
    let counters = Counters::default();
    honest(server.addr, &work.set, &counters);
    let after_ok = counters.honest_equal.load(Ordering::Relaxed) == 1;
    let (hwm, rss) = server.memory_kib()?;
    let (code, stats) = server.terminate(Duration::from_secs(15))?;
    let text = format!(
        "load: {} connections in {:.1} s (idle {}, slow-loris {}, oversized {}, junk {}, \
         unfinished {}, non-reader {}, honest {})\n\
         load: honest sessions {}: {} equal to OpenFHE's, {} failed, {} retries; after the load: {}\n\
         load: server VmHWM {} KiB (bound {} KiB), VmRSS {} KiB at start, {} KiB at end; exit {:?} on SIGTERM\n\
         load: server counters: {}",
        report.connections,
        report.elapsed.as_secs_f64(),
        report.per_kind[0],
        report.per_kind[1],
        report.per_kind[2],
        report.per_kind[3],
        report.per_kind[4],
        report.per_kind[5],
        report.per_kind[6],
        report.honest,
        report.honest_equal,
        report.honest_failed,
        report.honest_retries,
        if after_ok { "served" } else { "FAILED" },
        hwm,
        RSS_BOUND_KIB,
        rss_before,
        rss,
        code,
        stats,
    );
    let mut failures = Vec::new();
    if report.connections < connections as u64 {
        failures.push(format!("only {} connections opened", report.connections));
    }
    if report.honest == 0 || report.honest_equal != report.honest || report.honest_failed > 0 {
        failures.push("not every honest client got OpenFHE's results".to_owned());
    }
    if !after_ok {
        failures.push("no honest session after the load".to_owned());
    }
    if hwm >= RSS_BOUND_KIB {
        failures.push(format!(
            "VmHWM {hwm} KiB over the bound {RSS_BOUND_KIB} KiB"
        ));
    }
    if code != Some(0) {
        failures.push(format!("exit {code:?} on SIGTERM"));
    }
    if failures.is_empty() {
        Ok(text)
    } else {
        Err(format!("{}\n{text}", failures.join("; ")))
    }
}
