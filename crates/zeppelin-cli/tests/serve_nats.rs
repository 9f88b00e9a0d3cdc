//! `zeppelin serve` (the real binary) on the NATS JetStream store of a real single-node
//! `nats-server -js`: the store URL from `ZEPPELIN_STORE`, HTTP uploads acknowledged, a retry
//! replayed, a sum over them, the receipt task started by `serve` (its receipts counted on
//! `GET /metrics`), and a clean SIGTERM shutdown.

#[path = "../../service/tests/common/mod.rs"]
mod common;
mod credentials;
#[path = "../../cluster/tests/node/mod.rs"]
mod node;

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::{slots, Device};
use node::{Node, TestResult};
use zeppelin_service::client::Client;
use zeppelin_service::AggregateOp;

/// A server child that is killed if the test ends early.
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `GET /metrics` over a plain TCP connection: the body.
fn metrics(url: &str, owner: &str) -> TestResult<String> {
    let addr = url.trim_start_matches("http://");
    let mut s = std::net::TcpStream::connect(addr)?;
    write!(
        s,
        "GET /metrics HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {owner}\r\nConnection: close\r\n\r\n"
    )?;
    let mut text = String::new();
    s.read_to_string(&mut text)?;
    Ok(text
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_owned())
        .unwrap_or_default())
}

#[test]
fn serve_on_jetstream_stores_sums_and_receipts() -> TestResult {
    let node = Node::start()?;
    let dir = tempfile::tempdir()?;
    let keys = dir.path().join("keys");
    let out = Command::new(env!("CARGO_BIN_EXE_zeppelin"))
        .arg("keygen")
        .arg("--dir")
        .arg(&keys)
        .output()?;
    assert!(out.status.success(), "keygen: {:?}", out);
    let auth = dir.path().join("auth");
    let creds = credentials::issue(&auth, "meter-5", &["meter"])?;

    let mut child = Command::new(env!("CARGO_BIN_EXE_zeppelin"))
        .args([
            "serve",
            "--replicas",
            "1",
            "--listen",
            "127.0.0.1:0",
            "--keys",
        ])
        .arg(&keys)
        .arg("--auth-dir")
        .arg(&auth)
        .env("ZEPPELIN_STORE", &node.url)
        .env_remove("ZEPPELIN_DATA")
        // This test is about the store: aggregate in process (with NATS the default is the
        // worker group, tested in worker_cli.rs).
        .env("ZEPPELIN_AGGREGATE", "local")
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(dir.path().join("serve.log"))?)
        .spawn()?;
    let stdout = child.stdout.take().ok_or("no stdout")?;
    let mut server = Server(child);
    let mut line = String::new();
    BufReader::new(stdout).read_line(&mut line)?;
    let url = line
        .trim()
        .strip_prefix("listening on ")
        .ok_or_else(|| {
            let log = std::fs::read_to_string(dir.path().join("serve.log")).unwrap_or_default();
            format!("unexpected first line {line:?}; log:\n{log}")
        })?
        .to_owned();

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let client = Client::new(&url)?.with_token(&creds.device);
    let owner = Client::new(&url)?.with_token(&creds.owner);
    let device = Device::new(5)?;
    let mut ids = Vec::new();
    for r in 0..3u32 {
        let wire = device.encrypt_seeded(&slots(|i| i as u32 + r))?;
        let key = format!("dev5-{r}");
        let receipt = runtime.block_on(client.upload("meter", wire.clone(), Some(&key)))?;
        assert!(!receipt.replayed);
        let again = runtime.block_on(client.upload("meter", wire, Some(&key)))?;
        assert!(again.replayed);
        assert_eq!(again.id, receipt.id);
        ids.push(receipt.id.parse::<u64>()?);
    }
    assert!(ids.windows(2).all(|w| w[1] > w[0]), "{ids:?}");
    assert_eq!(runtime.block_on(owner.status("meter"))?.count, 3);
    let sum = runtime.block_on(owner.aggregate("meter", &AggregateOp::Sum))?;
    assert_eq!(sum.count, 3);
    // The decrypted sum is the slot-wise sum of the three readings.
    let expected = slots(|i| 3 * i as u32 + 3);
    assert_eq!(device.decrypt(&sum.ciphertext)?, expected);

    // The receipt task `serve` started answers every stored upload.
    let deadline = Instant::now() + Duration::from_secs(20);
    let text = loop {
        let text = metrics(&url, &creds.owner)?;
        if text.contains("zeppelin_receipts_total{result=\"stored\"} 3")
            || Instant::now() > deadline
        {
            break text;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    for line in [
        r#"zeppelin_receipts_total{result="stored"} 3"#,
        r#"zeppelin_uploads_total{result="stored"} 3"#,
        r#"zeppelin_uploads_total{result="duplicate"} 3"#,
        r#"zeppelin_aggregations_total{op="sum",result="ok"} 1"#,
    ] {
        assert!(
            text.lines().any(|l| l == line),
            "missing {line:?} in\n{text}"
        );
    }

    let pid = i32::try_from(server.0.id())?;
    // SAFETY: kill(2) has no memory effects; the pid is our unreaped child's.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGTERM) }, 0);
    let status = server.0.wait()?;
    assert!(status.success(), "SIGTERM shutdown: {status:?}");
    Ok(())
}
