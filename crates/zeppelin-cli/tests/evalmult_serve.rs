//! `zeppelin evalmult serve` as a process, on 127.0.0.1: a bad ring dimension refused before
//! listening, accept() failures (EMFILE under a low RLIMIT_NOFILE) survived, SIGTERM ending
//! with exit 0 after telling idle clients. Every wait is bounded, so a server that does not
//! behave fails the test instead of hanging it.
#![expect(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test helpers outside #[test] fns unwrap and call expect on failure (clippy.toml exempts only #[test] fns)"
)]

use std::io::{BufRead, BufReader, Read};
use std::net::{SocketAddr, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use zeppelin_evalmult::frames::{self, codes, Incoming};
use zeppelin_evalmult::server::Client;
use zeppelin_evalmult::vectors::VectorSet;

const BIN: &str = env!("CARGO_BIN_EXE_zeppelin");

fn vectors() -> VectorSet {
    let dir = std::env::var_os("ZEPPELIN_VECTORS")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/vectors")
        })
        .join("openfhe-bv-n4096-l4-b2");
    VectorSet::load(&dir).expect("shared OpenFHE vectors")
}

fn wait(child: &mut Child, limit: Duration) -> Option<ExitStatus> {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if let Some(status) = child.try_wait().unwrap() {
            return Some(status);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
    None
}

/// A running server and the lines it wrote to stderr after its address.
struct Served {
    child: Child,
    addr: SocketAddr,
    stderr: BufReader<std::process::ChildStderr>,
}

/// Starts `sh -c '<prefix> exec zeppelin evalmult serve --listen 127.0.0.1:0 <args>'`.
fn serve(shell_prefix: &str, args: &[&str]) -> Served {
    let script = format!("{shell_prefix} exec \"$0\" evalmult serve --listen 127.0.0.1:0 \"$@\"");
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(script)
        .arg(BIN)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    stderr.read_line(&mut line).unwrap();
    let addr = line
        .trim()
        .rsplit_once(" on ")
        .unwrap_or_else(|| panic!("no address in {line:?}"))
        .1
        .parse()
        .unwrap();
    Served {
        child,
        addr,
        stderr,
    }
}

impl Served {
    /// SIGTERM; the exit status within 15 s and the rest of stderr.
    fn terminate(mut self) -> (Option<ExitStatus>, String) {
        let kill = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(kill.success());
        let status = wait(&mut self.child, Duration::from_secs(15));
        let mut rest = String::new();
        let _ = self.stderr.read_to_string(&mut rest);
        (status, rest)
    }
}

fn honest_with_retries(addr: SocketAddr, set: &VectorSet, patience: Duration) {
    let deadline = Instant::now() + patience;
    loop {
        let result = Client::connect(addr).and_then(|mut client| {
            client.set_timeout(Some(Duration::from_secs(10)))?;
            client.eval_mult(&set.context, &set.key, &set.pairs, None)
        });
        match result {
            Ok(got) => {
                assert_eq!(&got, set.expected.as_ref().unwrap());
                return;
            }
            Err(e) if Instant::now() >= deadline => panic!("never served: {e}"),
            Err(_) => std::thread::sleep(Duration::from_millis(50)),
        }
    }
}

#[test]
fn ring_dimension_3_is_refused_before_listening() {
    // Regression: this used to start a server.
    let mut child = Command::new(BIN)
        .args([
            "evalmult",
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--ring-dim",
            "3",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let status = wait(&mut child, Duration::from_secs(10)).expect("it kept running");
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    assert_eq!(status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("ring dimension 3 is not a power of two in [16, 131072]"),
        "{stderr}"
    );
    assert!(!stderr.contains("serving"), "{stderr}");
}

#[test]
fn accept_errors_under_a_low_descriptor_limit_are_survived() {
    let set = vectors();
    // 32 descriptors: about 20 connections, then accept() fails with EMFILE.
    let served = serve("ulimit -n 32 &&", &["--idle-timeout", "30"]);
    let addr = served.addr;
    let hogs: Vec<TcpStream> = (0..60).map(|_| TcpStream::connect(addr).unwrap()).collect();
    std::thread::sleep(Duration::from_millis(500));
    drop(hogs);
    // Regression: the old server ended at the first EMFILE; this one serves again as soon as
    // descriptors are free.
    honest_with_retries(addr, &set, Duration::from_secs(20));
    let (status, stderr) = served.terminate();
    assert_eq!(status.and_then(|s| s.code()), Some(0), "{stderr}");
    let errors: u64 = stderr
        .split_once("accept_errors=")
        .and_then(|(_, rest)| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no counters in {stderr:?}"));
    assert!(errors > 0, "no accept() error happened: {stderr}");
}

#[test]
fn sigterm_tells_idle_clients_and_exits_0() {
    let set = vectors();
    let served = serve("", &["--shutdown-grace", "5"]);
    honest_with_retries(served.addr, &set, Duration::from_secs(10));
    let mut idle = TcpStream::connect(served.addr).unwrap();
    idle.set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    std::thread::sleep(Duration::from_millis(100));
    let started = Instant::now();
    let (status, stderr) = served.terminate();
    // Regression: SIGTERM used to kill the server (no exit status, no goodbye).
    assert_eq!(status.and_then(|s| s.code()), Some(0), "{stderr}");
    assert!(started.elapsed() < Duration::from_secs(10));
    assert!(stderr.contains("stopped:"), "{stderr}");
    let Incoming::Frame(frame) = frames::read_frame(&mut idle).unwrap() else {
        panic!("no RLER before the close");
    };
    assert_eq!(frames::decode_error(&frame).unwrap().0, codes::SHUTDOWN);
}
