//! `zeppelin worker` as a process against a real `nats-server -js` node: it prints `worker
//! ready`, sums the shards of a JobAggregator job to exactly the in-process result, serves
//! its counters on /metrics, and exits 0 on SIGTERM.

#[path = "../../service/tests/common/mod.rs"]
mod common;
mod credentials;
#[path = "../../cluster/tests/node/mod.rs"]
mod node;

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use async_nats::jetstream::{self, stream};
use bytes::Bytes;
use common::{slots, Device};
use node::{Node, TestResult};
use zeppelin_cluster::auth::ClusterKey;
use zeppelin_cluster::combine::{JobAggregator, JobConfig};
use zeppelin_cluster::jobs::names;
use zeppelin_seal::ComprMode;
use zeppelin_server::Evaluator;
use zeppelin_service::aggregate::Aggregation;
use zeppelin_service::names::{IdempotencyKey, StreamName};
use zeppelin_service::store::{AppendRequest, SqliteStore, UploadStore};
use zeppelin_service::{AggregateOp, Aggregator, LocalAggregator, Preset};

/// The worker process, killed in Drop if still running.
struct WorkerProcess(Child);

impl Drop for WorkerProcess {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn free_port() -> TestResult<u16> {
    Ok(std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_worker_binary_sums_shards_exactly_and_stops_on_sigterm() -> TestResult {
    let node = Node::start_with_jetstream().await?;
    let js = jetstream::new(node.client().await?);
    js.get_or_create_stream(stream::Config {
        name: names::UPLOADS_STREAM.into(),
        subjects: vec!["zeppelin.up.>".into()],
        max_messages_per_subject: 1,
        num_replicas: 1,
        ..Default::default()
    })
    .await?;
    // The service side creates the job stream and the bucket; the worker waits for them.
    let dir = tempfile::tempdir()?;
    let key_file = dir.path().join("cluster.key");
    let key = Arc::new(ClusterKey::create_file(&key_file)?);
    let aggregator = JobAggregator::connect(
        node.client().await?,
        key,
        1,
        JobConfig {
            shard_size: 4,
            timeout: Duration::from_secs(60),
            poll: Duration::from_millis(50),
        },
    )
    .await?;

    let device = Device::new(9)?;
    let sqlite = Arc::new(SqliteStore::open(dir.path())?);
    let n = 10;
    for i in 0..n {
        let body = device.encrypt_seeded(&slots(|s| ((i * 31 + s) % 1000) as u32))?;
        js.publish(
            names::upload_subject("meters", &format!("k{i}")),
            Bytes::from(body.clone()),
        )
        .await?
        .await?;
        sqlite
            .append(AppendRequest {
                stream: StreamName::new("meters")?,
                key: Some(IdempotencyKey::new(&format!("k{i}"))?),
                device: None,
                body: Bytes::from(body),
                max_uploads: 1_000,
            })
            .await?;
    }

    let metrics_port = free_port()?;
    let mut child = Command::new(env!("CARGO_BIN_EXE_zeppelin"))
        .args([
            "worker",
            "--nats",
            &node.url,
            "--threads",
            "2",
            "--ack-wait",
            "5",
            "--cluster-key",
        ])
        .arg(&key_file)
        .args(["--metrics-listen", &format!("127.0.0.1:{metrics_port}")])
        .env("ZEPPELIN_LOG", "warn")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()?;
    let stdout = child.stdout.take().ok_or("no stdout")?;
    let worker = WorkerProcess(child);
    let mut first = String::new();
    let mut reader = BufReader::new(stdout);
    tokio::task::block_in_place(|| reader.read_line(&mut first))?;
    assert_eq!(first.trim(), "worker ready");

    let codec = Preset::Seal4096.codec()?;
    let evaluator = Arc::new(Evaluator::new(codec.seal().clone())?);
    let with = Aggregation {
        store: sqlite.clone(),
        codec,
        evaluator,
        relin: None,
        chunk: 3,
    };
    let stream = StreamName::new("meters")?;
    let remote = aggregator
        .aggregate(with.clone(), stream.clone(), AggregateOp::Sum)
        .await?;
    let local = LocalAggregator
        .aggregate(with, stream, AggregateOp::Sum)
        .await?;
    assert_eq!(remote.count, n as u64);
    assert_eq!(
        remote.ciphertext.save(ComprMode::None)?,
        local.ciphertext.save(ComprMode::None)?
    );

    // 10 uploads in shards of 4: three shards, ten ciphertexts.
    let mut http = std::net::TcpStream::connect(("127.0.0.1", metrics_port))?;
    http.write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")?;
    let mut text = String::new();
    http.read_to_string(&mut text)?;
    assert!(
        text.contains("zeppelin_worker_shards_total{result=\"done\"} 3\n"),
        "{text}"
    );
    assert!(
        text.contains("zeppelin_worker_ciphertexts_total 10\n"),
        "{text}"
    );

    let mut worker = worker;
    // SAFETY: kill(2) on our own child's pid; no memory is involved.
    let sent = unsafe { libc::kill(worker.0.id() as libc::pid_t, libc::SIGTERM) };
    assert_eq!(sent, 0);
    let status = tokio::task::block_in_place(|| worker.0.wait())?;
    assert!(status.success(), "worker exited with {status}");
    Ok(())
}

/// `zeppelin serve --store nats://... --replicas 1` (worker group by default) with two
/// `zeppelin worker` processes: uploads over HTTP, the sum and the weighted sum over HTTP
/// decrypt to the plaintext truth, and equal the in-process aggregation byte for byte.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn serve_on_nats_aggregates_on_worker_processes() -> TestResult {
    use zeppelin::Params;
    let node = Node::start_with_jetstream().await?;
    let dir = tempfile::tempdir()?;
    let keys = dir.path().join("keys");
    let keygen = Command::new(env!("CARGO_BIN_EXE_zeppelin"))
        .args(["keygen", "--dir"])
        .arg(&keys)
        .stdout(Stdio::null())
        .status()?;
    assert!(keygen.success());
    let auth = dir.path().join("auth");
    let creds = credentials::issue(&auth, "flow-meter", &["flow"])?;
    let key_file = dir.path().join("cluster.key");
    ClusterKey::create_file(&key_file)?;
    let mut serve = Command::new(env!("CARGO_BIN_EXE_zeppelin"))
        .args(["serve", "--listen", "127.0.0.1:0", "--replicas", "1"])
        .arg("--cluster-key")
        .arg(&key_file)
        .args(["--shard-size", "3", "--store", &node.url, "--keys"])
        .arg(&keys)
        .arg("--auth-dir")
        .arg(&auth)
        .env("ZEPPELIN_LOG", "warn")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()?;
    let stdout = serve.stdout.take().ok_or("no stdout")?;
    let _serve = WorkerProcess(serve);
    let mut line = String::new();
    tokio::task::block_in_place(|| BufReader::new(stdout).read_line(&mut line))?;
    let url = line
        .trim()
        .strip_prefix("listening on ")
        .ok_or_else(|| format!("unexpected first line {line:?}"))?
        .to_owned();
    let mut workers = Vec::new();
    for _ in 0..2 {
        let mut child = Command::new(env!("CARGO_BIN_EXE_zeppelin"))
            .args(["worker", "--nats", &node.url, "--threads", "1"])
            .env("ZEPPELIN_CLUSTER_KEY", &key_file)
            .env("ZEPPELIN_LOG", "warn")
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()?;
        let stdout = child.stdout.take().ok_or("no stdout")?;
        workers.push(WorkerProcess(child));
        let mut ready = String::new();
        tokio::task::block_in_place(|| BufReader::new(stdout).read_line(&mut ready))?;
        assert_eq!(ready.trim(), "worker ready");
    }

    let device = Device::new(11)?;
    let client = zeppelin_service::client::Client::new(&url)?.with_token(&creds.device);
    let owner = zeppelin_service::client::Client::new(&url)?.with_token(&creds.owner);
    let sqlite_dir = tempfile::tempdir()?;
    let sqlite = Arc::new(SqliteStore::open(sqlite_dir.path())?);
    let n = 8usize;
    let mut plain = Vec::new();
    for i in 0..n {
        let s = slots(|slot| ((i * 5 + slot * 3) % 200) as u32);
        let body = device.encrypt_seeded(&s)?;
        plain.push(s);
        client
            .upload("flow", body.clone(), Some(&format!("d{i}")))
            .await?;
        sqlite
            .append(AppendRequest {
                stream: StreamName::new("flow")?,
                key: Some(IdempotencyKey::new(&format!("d{i}"))?),
                device: None,
                body: Bytes::from(body),
                max_uploads: 1_000,
            })
            .await?;
    }
    let codec = Preset::Seal4096.codec()?;
    let evaluator = Arc::new(Evaluator::new(codec.seal().clone())?);
    let with = Aggregation {
        store: sqlite.clone(),
        codec,
        evaluator,
        relin: None,
        chunk: 5,
    };
    let weights: Vec<i64> = (0..n as i64).map(|i| 2 * i - 3).collect();
    for op in [AggregateOp::Sum, AggregateOp::Dot(weights.clone())] {
        let remote = owner.aggregate("flow", &op).await?;
        let local = LocalAggregator
            .aggregate(with.clone(), StreamName::new("flow")?, op.clone())
            .await?;
        assert_eq!(remote.count, n as u64);
        assert_eq!(remote.ciphertext, local.ciphertext.save(ComprMode::None)?);
        let got = device.decrypt(&remote.ciphertext)?;
        let t = i64::from(common::P::T);
        for (slot, value) in got.iter().enumerate() {
            let truth: i64 = plain
                .iter()
                .enumerate()
                .map(|(i, p)| {
                    let w = if op == AggregateOp::Sum {
                        1
                    } else {
                        weights[i]
                    };
                    w * i64::from(p[slot])
                })
                .sum();
            assert_eq!(
                i64::from(*value),
                truth.rem_euclid(t),
                "{} slot {slot}",
                op.name()
            );
        }
    }
    // The worker group did the sums: 2 ops × 3 shards of at most 3 uploads, all acknowledged.
    let js = jetstream::new(node.client().await?);
    let mut consumer: async_nats::jetstream::consumer::PullConsumer = js
        .get_stream(names::JOBS_STREAM)
        .await?
        .get_consumer(names::WORKERS_CONSUMER)
        .await?;
    let info = consumer.info().await?;
    assert_eq!(info.ack_floor.stream_sequence, 6);
    assert_eq!(info.num_ack_pending, 0);
    Ok(())
}
