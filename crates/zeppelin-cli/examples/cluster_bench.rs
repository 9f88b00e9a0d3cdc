//! Figures of the scale-out service on this machine (docs/server.md, "Cluster (NATS
//! JetStream)"): a three-node JetStream cluster on loopback (the test harness), the real
//! `zeppelin serve --store nats://... --aggregate workers` and `zeppelin worker` processes.
//!
//! Measures ingest uploads/s over HTTP (`--clients` concurrent clients with idempotency
//! keys) and over MQTT QoS 1 with receipts (as many devices), the stream's stored bytes per
//! ciphertext, and `sum` aggregation ciphertexts/s with 1, 2 and 4 worker processes (each
//! result decrypted with the key directory's secret key and compared with the plaintext
//! sum); writes `OUT/cluster.{md,json}` (`cluster-short.*` for `--short`).
//!
//! ```text
//! cargo build --release -p zeppelin-cli
//! cargo run --release -p zeppelin-cli --example cluster_bench             # 10,000 per path
//! cargo run --release -p zeppelin-cli --example cluster_bench -- --short  # CI: 1,000
//! ```
//!
//! The `zeppelin` binary is `ZEPPELIN_BIN` or the one next to this example's directory
//! (`target/release/zeppelin`).

#[path = "../../cluster/tests/support/cluster.rs"]
mod cluster;
#[path = "../../cluster/tests/support/mqtt_device.rs"]
mod mqtt_device;
#[path = "../../cluster/tests/support/process.rs"]
mod process;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::Parser;
use cluster::{Cluster, NODES};
use mqtt_device::{MqttDevice, ReceiptAnswer};
use process::{run, spawn_ready};
use zeppelin::{encoder, Bfv, Params, Plaintext, Seal4096, SeededCiphertext, Workspace};
use zeppelin_cli::keydir::KeyDir;
use zeppelin_seal::device::{self, AnyCiphertext};
use zeppelin_service::client::Client;
use zeppelin_service::AggregateOp;

type BenchResult<T = ()> = Result<T, Box<dyn std::error::Error + Send + Sync>>;
type P = Seal4096;

#[derive(Parser)]
struct Args {
    /// Uploads over each of HTTP and MQTT.
    #[arg(long, default_value_t = 10_000)]
    uploads: usize,
    /// Concurrent clients per path.
    #[arg(long, default_value_t = 100)]
    clients: usize,
    /// Uploads per aggregation shard (the service's --shard-size).
    #[arg(long, default_value_t = 1_000)]
    shard_size: usize,
    /// The CI form: 1,000 uploads per path, shards of 250; report OUT/cluster-short.*.
    #[arg(long)]
    short: bool,
    /// Report directory.
    #[arg(long, default_value = "reports/server")]
    out: PathBuf,
    /// Distinct ciphertexts encrypted up front (uploads cycle through them).
    #[arg(long, default_value_t = 32)]
    distinct: usize,
}

fn zeppelin_bin() -> BenchResult<PathBuf> {
    if let Some(p) = std::env::var_os("ZEPPELIN_BIN") {
        return Ok(PathBuf::from(p));
    }
    let exe = std::env::current_exe()?;
    let bin = exe
        .parent()
        .and_then(Path::parent)
        .map(|d| d.join("zeppelin"))
        .ok_or("no directory above the example")?;
    if !bin.exists() {
        return Err(format!(
            "{} is missing: run `cargo build --release -p zeppelin-cli` (or set ZEPPELIN_BIN)",
            bin.display()
        )
        .into());
    }
    Ok(bin)
}

struct AggRow {
    workers: usize,
    count: u64,
    seconds: f64,
}

#[tokio::main(flavor = "multi_thread")]
async fn main() -> BenchResult {
    let mut args = Args::parse();
    if args.short {
        args.uploads = 1_000;
        args.shard_size = 250;
    }
    let (uploads, clients) = (args.uploads.max(1), args.clients.max(1));
    let bin = zeppelin_bin()?;
    let loadavg = std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|l| l.split_whitespace().next().map(str::to_owned))
        .unwrap_or_else(|| "unknown".into());
    let dir = tempfile::tempdir()?;
    let keys = dir.path().join("keys");
    run(Command::new(&bin).arg("keygen").arg("--dir").arg(&keys))?;
    let public = dir.path().join("public");
    std::fs::create_dir(&public)?;
    for f in ["preset", "params.seal"] {
        std::fs::copy(keys.join(f), public.join(f))?;
    }
    let key_dir = KeyDir::new(&keys);
    let ctx = key_dir.device_context::<P>()?;
    let sk = key_dir.device_secret_key::<P>(&ctx)?;
    let distinct = args.distinct.clamp(1, uploads);
    let mut bodies = Vec::new();
    let mut values = Vec::new();
    for d in 0..distinct {
        let v: Vec<u32> = (0..P::N)
            .map(|i| ((i * 131 + d * 7919) % 1000) as u32)
            .collect();
        let mut plain = Box::new(Plaintext::<P>::zeroed());
        encoder::encode::<P>(&v, &mut plain)?;
        let mut ws = Box::new(Workspace::<P>::new());
        let mut ct = Box::new(SeededCiphertext::<P>::zeroed());
        Bfv::<P>::encrypt_seeded(&sk, &plain, &mut rand_core::OsRng, &mut ct, &mut ws)?;
        bodies.push(bytes::Bytes::from(device::to_wire_seeded(&ct)?));
        values.push(v);
    }
    let bodies = Arc::new(bodies);

    // The owner and one registered device for the HTTP stream (docs/server.md roles).
    let auth = dir.path().join("auth");
    let status = Command::new(&bin)
        .args(["devices", "owner", "--data"])
        .arg(&auth)
        .stdout(std::process::Stdio::null())
        .status()?;
    if !status.success() {
        return Err("zeppelin devices owner failed".into());
    }
    let owner_token = std::fs::read_to_string(auth.join("owner.token"))?
        .trim()
        .to_owned();
    let added = Command::new(&bin)
        .args([
            "devices",
            "add",
            "--device",
            "bench-http",
            "--stream",
            "http",
            "--data",
        ])
        .arg(&auth)
        .output()?;
    if !added.status.success() {
        return Err("zeppelin devices add failed".into());
    }
    let device_token = String::from_utf8(added.stdout)?.trim().to_owned();
    // The key the service and the workers authenticate jobs and partials with.
    let cluster_key = dir.path().join("cluster.key");
    run(Command::new(&bin)
        .args(["cluster-key", "new"])
        .arg(&cluster_key))?;
    let cluster = Cluster::start().await?;
    let nats = cluster.nats_arg();
    let (_serve, line) = spawn_ready(
        Command::new(&bin)
            .args(["serve", "--listen", "127.0.0.1:0", "--store", &nats])
            .args(["--aggregate", "workers", "--shard-size"])
            .arg(args.shard_size.to_string())
            .arg("--cluster-key")
            .arg(&cluster_key)
            .args(["--max-in-flight", "1024", "--keys"])
            .arg(&public)
            .arg("--auth-dir")
            .arg(&auth),
        &dir.path().join("serve.log"),
        "listening on ",
    )?;
    let url = line.strip_prefix("listening on ").ok_or("no URL")?;
    let http = Client::new(url)?.with_token(&device_token);
    let owner = Client::new(url)?.with_token(&owner_token);

    // HTTP ingest into stream "http".
    let started = Instant::now();
    let mut tasks = Vec::new();
    for c in 0..clients {
        let (http, bodies) = (http.clone(), bodies.clone());
        tasks.push(tokio::spawn(async move {
            for i in (c..uploads).step_by(clients) {
                http.upload(
                    "http",
                    bodies[i % bodies.len()].clone(),
                    Some(&format!("h{i}")),
                )
                .await?;
            }
            Ok::<_, zeppelin_service::client::ClientError>(())
        }));
    }
    for t in tasks {
        t.await??;
    }
    let http_seconds = started.elapsed().as_secs_f64();

    // MQTT ingest (receipted) into stream "mqtt".
    let ports: Vec<u16> = (0..NODES).map(|i| cluster.mqtt_port(i)).collect();
    let deadline = Instant::now() + Duration::from_secs(600);
    let started = Instant::now();
    let mut tasks = Vec::new();
    for c in 0..clients {
        let (bodies, ports) = (bodies.clone(), ports.clone());
        tasks.push(tokio::spawn(async move {
            let mut device = MqttDevice::new(format!("bench{c}"), ports, c);
            for i in (c..uploads).step_by(clients) {
                let answer = device
                    .upload(
                        "mqtt",
                        &format!("m{i}"),
                        bodies[i % bodies.len()].clone(),
                        Duration::from_secs(10),
                        deadline,
                    )
                    .await?;
                if let ReceiptAnswer::Refused(e) = answer {
                    return Err(format!("m{i} refused: {e}").into());
                }
            }
            Ok::<_, Box<dyn std::error::Error + Send + Sync>>(device.republishes)
        }));
    }
    let mut republishes = 0;
    for t in tasks {
        republishes += t.await??;
    }
    let mqtt_seconds = started.elapsed().as_secs_f64();

    // Stored bytes per ciphertext (one replica's file store; the cluster keeps three).
    let js = async_nats::jetstream::new(cluster.connect().await?);
    let state = js
        .get_stream("ZEPPELIN_UPLOADS")
        .await?
        .info()
        .await?
        .state
        .clone();
    let bytes_per_ciphertext = state.bytes as f64 / state.messages.max(1) as f64;

    // Aggregation with 1, 2 and 4 workers over stream "http".
    let t = u64::from(P::T);
    let mut expected = vec![0u32; P::N];
    for i in 0..uploads {
        for (e, &v) in expected.iter_mut().zip(&values[i % distinct]) {
            *e = ((u64::from(*e) + u64::from(v)) % t) as u32;
        }
    }
    let mut rows = Vec::new();
    for workers in [1usize, 2, 4] {
        let mut procs = Vec::new();
        for w in 0..workers {
            procs.push(spawn_ready(
                Command::new(&bin)
                    .args(["worker", "--nats", &nats, "--cluster-key"])
                    .arg(&cluster_key),
                &dir.path().join(format!("worker{workers}-{w}.log")),
                "worker ready",
            )?);
        }
        let t0 = Instant::now();
        let result = owner.aggregate("http", &AggregateOp::Sum).await?;
        let seconds = t0.elapsed().as_secs_f64();
        drop(procs);
        let ct = zeppelin_seal::Ciphertext::load(ctx.seal(), &result.ciphertext)?;
        let mut plain = Box::new(Plaintext::<P>::zeroed());
        let mut ws = Box::new(Workspace::<P>::new());
        AnyCiphertext::<P>::Seal(ct).decrypt(&ctx, &sk, &mut plain, &mut ws)?;
        let mut slots = vec![0u32; P::N];
        encoder::decode::<P>(&plain, &mut slots)?;
        if slots != expected || result.count != uploads as u64 {
            return Err(format!(
                "{workers} workers: the sum of {} uploads does not decrypt to the plaintext sum",
                result.count
            )
            .into());
        }
        rows.push(AggRow {
            workers,
            count: result.count,
            seconds,
        });
    }

    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let wire = bodies.first().map_or(0, |b| b.len());
    let json = serde_json::json!({
        "preset": P::NAME,
        "uploads_per_path": uploads,
        "clients": clients,
        "upload_bytes": wire,
        "cores": cores,
        "load_average_at_start": loadavg,
        "nodes": NODES,
        "replicas": NODES,
        "http": { "seconds": http_seconds, "uploads_per_second": uploads as f64 / http_seconds },
        "mqtt": { "seconds": mqtt_seconds, "uploads_per_second": uploads as f64 / mqtt_seconds,
                  "republishes": republishes },
        "stored_bytes_per_ciphertext": bytes_per_ciphertext,
        "shard_size": args.shard_size,
        "aggregation": rows.iter().map(|r| serde_json::json!({
            "workers": r.workers, "count": r.count, "seconds": r.seconds,
            "ciphertexts_per_second": r.count as f64 / r.seconds,
            "check": "decrypts to the plaintext sum",
        })).collect::<Vec<_>>(),
    });
    let command = if args.short {
        "cargo run --release -p zeppelin-cli --example cluster_bench -- --short".to_owned()
    } else {
        format!(
            "cargo run --release -p zeppelin-cli --example cluster_bench -- --uploads {uploads} --clients {clients} --shard-size {}",
            args.shard_size
        )
    };
    let mut md = format!(
        "# Scale-out service (NATS JetStream) figures\n\n`{command}`\n\n\
         One machine, {cores} cores shared by everything: three `nats-server` 2.9 nodes \
         (JetStream file store, R{NODES}, MQTT gateway) on loopback, one `zeppelin serve \
         --store nats://... --aggregate workers`, the worker processes and the clients. \
         Preset {}, seeded uploads of {wire} bytes; 1-minute load average at start {loadavg}.\n\n\
         | ingest | uploads | clients | seconds | uploads/s |\n|---|---|---|---|---|\n\
         | HTTP (`201` after the JetStream ack) | {uploads} | {clients} | {http_seconds:.2} | {:.0} |\n\
         | MQTT QoS 1, until the receipt ({republishes} re-publishes) | {uploads} | {clients} | {mqtt_seconds:.2} | {:.0} |\n\n\
         Stream storage: {bytes_per_ciphertext:.0} bytes per stored ciphertext per replica \
         (`ZEPPELIN_UPLOADS` state bytes / messages: the {wire}-byte body, subject, headers \
         and the file store's record), times {NODES} replicas on the cluster.\n\n\
         | `sum` aggregation | workers | ciphertexts | seconds | ciphertexts/s | check |\n|---|---|---|---|---|---|\n",
        P::NAME,
        uploads as f64 / http_seconds,
        uploads as f64 / mqtt_seconds,
    );
    for r in &rows {
        md.push_str(&format!(
            "| shards of {} | {} | {} | {:.2} | {:.0} | decrypts to the plaintext sum |\n",
            args.shard_size,
            r.workers,
            r.count,
            r.seconds,
            r.count as f64 / r.seconds
        ));
    }
    std::fs::create_dir_all(&args.out)?;
    let stem = if args.short {
        "cluster-short"
    } else {
        "cluster"
    };
    std::fs::write(args.out.join(format!("{stem}.md")), &md)?;
    std::fs::write(
        args.out.join(format!("{stem}.json")),
        serde_json::to_string_pretty(&json)? + "\n",
    )?;
    print!("{md}");
    Ok(())
}
