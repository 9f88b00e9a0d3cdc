//! Fault test of the scale-out service (the real `zeppelin` binary on a three-node NATS
//! JetStream cluster, docs/server.md "Cluster (NATS JetStream)"):
//!
//! - `zeppelin serve --store nats://A,B,C --aggregate workers` (public key directory only)
//!   and three `zeppelin worker` processes (no key at all);
//! - 10,000 uploads (`ZEPPELIN_FAULT_UPLOADS` overrides), each a fresh seeded encryption of
//!   known slots, from 100 concurrent devices: half over HTTP (`Idempotency-Key`, retried on
//!   any failure until `201`), half over MQTT QoS 1 through the NATS gateway with receipts
//!   (re-published until the receipt arrives); plus a few garbage MQTT uploads that must be
//!   refused by receipt and removed;
//! - during the ingest the leader of `ZEPPELIN_UPLOADS` is killed with SIGKILL and restarted;
//! - during the `sum` aggregation one of the three workers is killed with SIGKILL while
//!   every worker holds a shard, so its shard is redelivered after the ack wait;
//!
//! then every acknowledged upload is in the stream exactly once with the bytes sent (read
//! back with async-nats), nothing else is, and the `sum` and `sum_of_squares` aggregates
//! decrypt in Microsoft SEAL (seal-python) to the plaintext truth mod t.

#[path = "../../cluster/tests/support/cluster.rs"]
mod cluster;
mod credentials;
#[path = "../../cluster/tests/support/mqtt_device.rs"]
mod mqtt_device;
#[path = "../../cluster/tests/support/process.rs"]
mod process;
#[path = "../../zeppelin-seal/tests/support/mod.rs"]
mod seal_support;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use async_nats::jetstream;
use cluster::{all_messages, Cluster, NODES};
use mqtt_device::{MqttDevice, ReceiptAnswer};
use process::{run, spawn_ready};
use sha2::{Digest, Sha256};
use zeppelin::{encoder, Bfv, Params, Plaintext, Seal4096, SecretKey, SeededCiphertext, Workspace};
use zeppelin_cli::keydir::KeyDir;
use zeppelin_seal::device;
use zeppelin_service::client::Client;
use zeppelin_service::AggregateOp;

type TestResult<T = ()> = Result<T, Box<dyn std::error::Error + Send + Sync>>;
type P = Seal4096;

const DEFAULT_UPLOADS: usize = 10_000;
const CLIENTS: usize = 100;
const WORKERS: usize = 3;
const GARBAGE: usize = 5;
const STREAM: &str = "fleet";
const UPLOADS_STREAM: &str = "ZEPPELIN_UPLOADS";
const JOBS_STREAM: &str = "ZEPPELIN_JOBS";
const WORKERS_CONSUMER: &str = "zeppelin-workers";
/// Short enough that a killed worker's shard comes back quickly.
const ACK_WAIT_SECS: u64 = 5;
const SHARD_SIZE: usize = 500;
/// How long an MQTT device waits for a receipt before publishing again.
const RECEIPT_TIMEOUT: Duration = Duration::from_secs(10);
/// Every upload must be acknowledged within this time from the start of the ingest.
const INGEST_DEADLINE: Duration = Duration::from_secs(300);

fn zeppelin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_zeppelin"))
}

/// Slot `j` of upload `i` (below 1,000, different for every upload).
fn value(i: usize, j: usize) -> u64 {
    ((i * 7919 + j * 104_729 + i * j) % 1000) as u64
}

/// The plaintext truth mod t of `sum` and `sum_of_squares` over uploads `0..n`.
fn truth(n: usize) -> (Vec<u64>, Vec<u64>) {
    let t = u64::from(P::T);
    let mut sum = vec![0u64; P::N];
    let mut squares = vec![0u64; P::N];
    for i in 0..n {
        for j in 0..P::N {
            let v = value(i, j);
            sum[j] = (sum[j] + v) % t;
            squares[j] = (squares[j] + v * v) % t;
        }
    }
    (sum, squares)
}

/// The device side: the key directory's secret key, encrypting fresh seeded ciphertexts.
struct Encryptor {
    sk: Box<SecretKey<P>>,
}

impl Encryptor {
    fn open(keys: &Path) -> TestResult<Self> {
        let dir = KeyDir::new(keys);
        let ctx = dir.device_context::<P>()?;
        let sk = dir.device_secret_key::<P>(&ctx)?;
        Ok(Self { sk })
    }

    /// A fresh (randomized) seeded encryption of upload `i`'s slots, in the wire form.
    fn upload(&self, i: usize) -> TestResult<bytes::Bytes> {
        let slots: Vec<u32> = (0..P::N).map(|j| value(i, j) as u32).collect();
        let mut plain = Box::new(Plaintext::<P>::zeroed());
        encoder::encode::<P>(&slots, &mut plain)?;
        let mut ws = Box::new(Workspace::<P>::new());
        let mut ct = Box::new(SeededCiphertext::<P>::zeroed());
        Bfv::<P>::encrypt_seeded(&self.sk, &plain, &mut rand_core::OsRng, &mut ct, &mut ws)?;
        Ok(device::to_wire_seeded(&ct)?.into())
    }
}

/// What the ingest recorded for every acknowledged upload, by key.
#[derive(Default)]
struct Acks {
    /// key -> (SHA-256 of the bytes sent, acknowledged id, over HTTP).
    by_key: HashMap<String, ([u8; 32], u64, bool)>,
    mqtt_republishes: u64,
    mqtt_reconnects: u64,
    http_retries: u64,
}

/// The registered device the HTTP clients upload as.
const HTTP_DEVICE: &str = "fault-fleet";

/// The subject token an acknowledged upload is stored under: HTTP keys are scoped to their
/// device (`device/key`, hashed into the subject), MQTT keys are literal.
fn stored_token(key: &str, over_http: bool) -> TestResult<String> {
    use zeppelin_service::names::IdempotencyKey;
    if !over_http {
        return Ok(key.to_owned());
    }
    let device = zeppelin_service::principals::DeviceName::new(HTTP_DEVICE)?;
    let scoped = IdempotencyKey::scoped(&device, &IdempotencyKey::new(key)?);
    Ok(zeppelin_cluster::layout::key_token(&scoped))
}

fn key_of(i: usize, http: bool) -> String {
    if http {
        format!("h{i}")
    } else {
        format!("m{i}")
    }
}

/// One device: uploads `i = c, c + CLIENTS, ...` below `uploads` (HTTP if `c` is even,
/// else MQTT), each until acknowledged.
#[allow(clippy::too_many_arguments, reason = "one device's whole setting")]
async fn device(
    c: usize,
    uploads: usize,
    encryptor: Arc<Encryptor>,
    http: Client,
    mqtt_ports: Vec<u16>,
    acks: Arc<Mutex<Acks>>,
    acked: Arc<AtomicU64>,
    deadline: Instant,
) -> TestResult {
    let over_http = c.is_multiple_of(2);
    let mut mqtt = MqttDevice::new(format!("device{c}"), mqtt_ports, c);
    let mut retries = 0u64;
    for i in (c..uploads).step_by(CLIENTS) {
        let key = key_of(i, over_http);
        let body = encryptor.upload(i)?;
        let digest: [u8; 32] = Sha256::digest(&body).into();
        let id = if over_http {
            loop {
                match http.upload(STREAM, body.clone(), Some(&key)).await {
                    Ok(receipt) => break receipt.id.parse::<u64>()?,
                    // Overloaded or a store failure (a NATS node down): retry with the key.
                    Err(e) if e.status().is_none_or(|s| s.as_u16() == 503) => {
                        retries += 1;
                        if Instant::now() > deadline {
                            return Err(format!("{key}: not acknowledged in time: {e}").into());
                        }
                        tokio::time::sleep(Duration::from_millis(100)).await;
                    }
                    Err(e) => return Err(format!("{key}: {e}").into()),
                }
            }
        } else {
            match mqtt
                .upload(STREAM, &key, body, RECEIPT_TIMEOUT, deadline)
                .await?
            {
                ReceiptAnswer::Stored(id) => id.parse::<u64>()?,
                ReceiptAnswer::Refused(e) => return Err(format!("{key} refused: {e}").into()),
            }
        };
        let token = stored_token(&key, over_http)?;
        acks.lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .by_key
            .insert(token, (digest, id, over_http));
        acked.fetch_add(1, Ordering::Relaxed);
    }
    let mut acks = acks
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    acks.mqtt_republishes += mqtt.republishes;
    acks.mqtt_reconnects += mqtt.reconnects;
    acks.http_retries += retries;
    Ok(())
}

/// The node name (`n0`...) leading `stream`, as its index.
async fn leader_of(js: &jetstream::Context, stream: &str) -> TestResult<usize> {
    let info = js.get_stream(stream).await?.info().await?.clone();
    let leader = info
        .cluster
        .and_then(|c| c.leader)
        .ok_or_else(|| format!("{stream} has no leader"))?;
    leader
        .strip_prefix('n')
        .and_then(|n| n.parse().ok())
        .ok_or_else(|| format!("unexpected node name {leader}").into())
}

/// Writes `slots` and has SEAL decrypt `ciphertext` with the key directory's secret key and
/// compare (asserts; returns SEAL's line).
fn seal_check(
    dir: &Path,
    keys: &Path,
    name: &str,
    ciphertext: &[u8],
    slots: &[u64],
) -> TestResult<String> {
    let ct = dir.join(format!("{name}.seal"));
    let expected = dir.join(format!("{name}.expected"));
    std::fs::write(&ct, ciphertext)?;
    std::fs::write(
        &expected,
        slots.iter().map(|v| format!("{v}\n")).collect::<String>(),
    )?;
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/cluster_decrypt.py");
    let out = seal_support::run_python(&[
        script.as_os_str(),
        keys.as_os_str(),
        ct.as_os_str(),
        expected.as_os_str(),
    ]);
    Ok(format!("{name}: {}", out.trim()))
}

#[test]
fn node_and_worker_kills_lose_no_acknowledged_upload_and_the_aggregate_is_exact() -> TestResult {
    let uploads: usize = match std::env::var("ZEPPELIN_FAULT_UPLOADS") {
        Ok(v) => v.parse()?,
        Err(_) => DEFAULT_UPLOADS,
    };
    assert!(uploads >= 2 * CLIENTS, "at least {} uploads", 2 * CLIENTS);
    let started = Instant::now();
    let dir = tempfile::tempdir()?;
    let keys = dir.path().join("keys");
    run(zeppelin().arg("keygen").arg("--dir").arg(&keys))?;
    run(zeppelin().args(["keys", "--relin", "--dir"]).arg(&keys))?;
    // The service gets the public part only; the workers get no key at all. Both get the
    // cluster key, which authenticates the jobs and the partials on the bus.
    let cluster_key = dir.path().join("cluster.key");
    run(zeppelin().args(["cluster-key", "new"]).arg(&cluster_key))?;
    let public = dir.path().join("public");
    std::fs::create_dir(&public)?;
    for f in ["preset", "params.seal", "relin.seal"] {
        std::fs::copy(keys.join(f), public.join(f))?;
    }
    let encryptor = Arc::new(Encryptor::open(&keys)?);
    let auth = dir.path().join("auth");
    let creds = credentials::issue(&auth, HTTP_DEVICE, &[STREAM])?;

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    // async-nats spawns tasks when a JetStream context is made: inside the runtime.
    let _in_runtime = runtime.enter();
    let cluster = runtime.block_on(Cluster::start())?;
    let nats = cluster.nats_arg();
    let (_serve, line) = spawn_ready(
        zeppelin()
            .args(["serve", "--listen", "127.0.0.1:0", "--store", &nats])
            .args(["--aggregate", "workers", "--shard-size"])
            .arg(SHARD_SIZE.to_string())
            .arg("--cluster-key")
            .arg(&cluster_key)
            .args(["--max-in-flight", "1024", "--keys"])
            .arg(&public)
            .arg("--auth-dir")
            .arg(&auth),
        &dir.path().join("serve.log"),
        "listening on ",
    )?;
    let url = line
        .strip_prefix("listening on ")
        .ok_or("no URL")?
        .to_owned();
    let mut workers = Vec::new();
    for w in 0..WORKERS {
        let (worker, _) = spawn_ready(
            zeppelin()
                .args(["worker", "--nats", &nats, "--threads", "1", "--ack-wait"])
                .arg(ACK_WAIT_SECS.to_string())
                .arg("--cluster-key")
                .arg(&cluster_key),
            &dir.path().join(format!("worker{w}.log")),
            "worker ready",
        )?;
        workers.push(Some(worker));
    }
    let http = Client::new(&url)?.with_token(&creds.device);
    let owner = Client::new(&url)?.with_token(&creds.owner);
    let js = jetstream::new(runtime.block_on(cluster.connect())?);
    eprintln!(
        "cluster faults: cluster, service and {WORKERS} workers up after {:.1} s",
        started.elapsed().as_secs_f64()
    );

    // Garbage over MQTT: refused by receipt and removed from the stream.
    let garbage_refused = runtime.block_on(async {
        let mut device = MqttDevice::new("garbage", vec![cluster.mqtt_port(0)], 0);
        let mut refused = Vec::new();
        for g in 0..GARBAGE {
            let answer = device
                .upload(
                    STREAM,
                    &format!("junk{g}"),
                    bytes::Bytes::from(vec![g as u8; 1000 + g]),
                    RECEIPT_TIMEOUT,
                    Instant::now() + Duration::from_secs(60),
                )
                .await?;
            refused.push(answer);
        }
        Ok::<_, Box<dyn std::error::Error + Send + Sync>>(refused)
    })?;
    for answer in &garbage_refused {
        assert!(
            matches!(answer, ReceiptAnswer::Refused(_)),
            "a garbage upload was receipted as stored: {answer:?}"
        );
    }

    // Ingest, with the uploads stream's leader killed at 30 % and restarted at 60 %.
    let acks = Arc::new(Mutex::new(Acks::default()));
    let acked = Arc::new(AtomicU64::new(0));
    let ingest_started = Instant::now();
    let deadline = ingest_started + INGEST_DEADLINE;
    let mqtt_ports: Vec<u16> = (0..NODES).map(|i| cluster.mqtt_port(i)).collect();
    let (victim, acked_at_kill, acked_at_restart) = runtime.block_on(async {
        let mut devices = Vec::new();
        for c in 0..CLIENTS {
            devices.push(tokio::spawn(device(
                c,
                uploads,
                encryptor.clone(),
                http.clone(),
                mqtt_ports.clone(),
                acks.clone(),
                acked.clone(),
                deadline,
            )));
        }
        let wait_for = |n: u64| {
            let acked = acked.clone();
            async move {
                while acked.load(Ordering::Relaxed) < n && Instant::now() < deadline {
                    tokio::time::sleep(Duration::from_millis(5)).await;
                }
                acked.load(Ordering::Relaxed)
            }
        };
        wait_for(uploads as u64 * 3 / 10).await;
        let victim = leader_of(&js, UPLOADS_STREAM).await?;
        cluster.kill(victim);
        let at_kill = acked.load(Ordering::Relaxed);
        let at_restart = wait_for(uploads as u64 * 6 / 10).await;
        cluster.restart(victim).await?;
        for d in devices {
            d.await??;
        }
        Ok::<_, Box<dyn std::error::Error + Send + Sync>>((victim, at_kill, at_restart))
    })?;
    let ingest_seconds = ingest_started.elapsed().as_secs_f64();
    assert!(
        (acked_at_kill as usize) < uploads,
        "the node was killed after the ingest ended"
    );
    let acks = std::mem::take(
        &mut *acks
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner),
    );
    assert_eq!(acks.by_key.len(), uploads, "every upload acknowledged");
    eprintln!(
        "cluster faults: {uploads} uploads acknowledged in {ingest_seconds:.1} s ({:.0}/s); \
         leader n{victim} killed at {acked_at_kill}, restarted at {acked_at_restart}; \
         {} HTTP retries, {} MQTT re-publishes, {} MQTT reconnects",
        uploads as f64 / ingest_seconds,
        acks.http_retries,
        acks.mqtt_republishes,
        acks.mqtt_reconnects
    );

    // Every acknowledged upload is in the stream exactly once, with the bytes sent; nothing
    // else is (the garbage was removed).
    let stored = runtime.block_on(all_messages(&js, UPLOADS_STREAM))?;
    let replicas = runtime
        .block_on(async {
            let mut stream = js.get_stream(UPLOADS_STREAM).await?;
            Ok::<_, Box<dyn std::error::Error + Send + Sync>>(stream.info().await?.clone())
        })?
        .config
        .num_replicas;
    assert_eq!(replicas, NODES, "{UPLOADS_STREAM} replicas");
    let mut seen = HashMap::new();
    for m in &stored {
        let key = m
            .subject
            .strip_prefix(&format!("zeppelin.up.{STREAM}."))
            .ok_or_else(|| format!("unexpected subject {}", m.subject))?;
        let (digest, id, over_http) = acks
            .by_key
            .get(key)
            .ok_or_else(|| format!("{key} is stored but was never acknowledged"))?;
        assert!(
            seen.insert(key.to_owned(), m.sequence).is_none(),
            "{key} stored twice"
        );
        let got: [u8; 32] = Sha256::digest(&m.payload).into();
        assert_eq!(&got, digest, "{key}: stored bytes differ from those sent");
        if *over_http {
            // HTTP uploads are created once (expected last subject sequence 0).
            assert_eq!(*id, m.sequence, "{key}: acknowledged id vs stored sequence");
        } else {
            // A re-publish after the receipt was sent replaces the message (same bytes).
            assert!(
                *id <= m.sequence,
                "{key}: receipt {id} after stored {}",
                m.sequence
            );
        }
    }
    assert_eq!(seen.len(), uploads, "stored uploads");
    assert_eq!(stored.len(), uploads, "messages in {UPLOADS_STREAM}");
    assert_eq!(
        runtime.block_on(owner.status(STREAM))?.count,
        uploads as u64
    );

    // `sum`, with one worker killed while every worker holds a shard.
    let (sum_truth, squares_truth) = truth(uploads);
    let aggregate_started = Instant::now();
    let (sum, ack_pending_at_kill) = runtime.block_on(async {
        let request = {
            let owner = owner.clone();
            tokio::spawn(async move { owner.aggregate(STREAM, &AggregateOp::Sum).await })
        };
        let mut pending = 0;
        while !request.is_finished() {
            if let Ok(stream) = js.get_stream(JOBS_STREAM).await {
                if let Ok(info) = stream.consumer_info(WORKERS_CONSUMER).await {
                    pending = info.num_ack_pending;
                    if pending >= WORKERS {
                        break;
                    }
                }
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let killed = workers[0].take();
        assert!(
            pending >= WORKERS,
            "the aggregation ended before every worker held a shard ({pending} pending)"
        );
        drop(killed);
        Ok::<_, Box<dyn std::error::Error + Send + Sync>>((request.await??, pending))
    })?;
    let sum_seconds = aggregate_started.elapsed().as_secs_f64();
    assert_eq!(sum.count, uploads as u64, "uploads the sum covers");
    // The killed worker's shard was delivered again: more deliveries than shard jobs.
    let (deliveries, jobs) = runtime.block_on(async {
        let mut stream = js.get_stream(JOBS_STREAM).await?;
        let last = stream.info().await?.state.last_sequence;
        let info = stream.consumer_info(WORKERS_CONSUMER).await?;
        Ok::<_, Box<dyn std::error::Error + Send + Sync>>((info.delivered.consumer_sequence, last))
    })?;
    assert_eq!(jobs as usize, uploads.div_ceil(SHARD_SIZE), "shard jobs");
    assert!(
        deliveries > jobs,
        "{deliveries} deliveries of {jobs} jobs: the killed worker's shard was not redelivered"
    );
    let sum_line = seal_check(dir.path(), &keys, "sum", &sum.ciphertext, &sum_truth)?;

    // `sum_of_squares` on the two workers left.
    let squares_started = Instant::now();
    let squares = runtime.block_on(owner.aggregate(STREAM, &AggregateOp::SumOfSquares))?;
    let squares_seconds = squares_started.elapsed().as_secs_f64();
    assert_eq!(squares.count, uploads as u64);
    let squares_line = seal_check(
        dir.path(),
        &keys,
        "sum_of_squares",
        &squares.ciphertext,
        &squares_truth,
    )?;
    eprintln!(
        "cluster faults: every acknowledged upload stored once ({} messages, R{replicas}); \
         sum in {sum_seconds:.1} s with worker 0 killed at {ack_pending_at_kill} shards in \
         progress ({deliveries} deliveries of {jobs} jobs); sum_of_squares in \
         {squares_seconds:.1} s; {sum_line}; {squares_line}; total {:.1} s",
        stored.len(),
        started.elapsed().as_secs_f64()
    );
    Ok(())
}
