//! Load test of the aggregation service on loopback: `--clients` concurrent clients upload
//! `--uploads` seeded device ciphertexts (each with an idempotency key) to a service running
//! in this process on a fresh SQLite store, then the server aggregates the stream; the key
//! owner decrypts the sum and checks it against the plaintext sum.
//!
//! Reports uploads/s, upload latency (p50, p99, max), and aggregation throughput
//! (ciphertexts combined per second) for every op the evaluator has, as
//! `OUT/load.md` and `OUT/load.json`.
//!
//! ```text
//! cargo run --release -p zeppelin-service --example service_load -- --uploads 10000 --clients 100
//! cargo run --release -p zeppelin-service --example service_load -- --short   # CI: 1,000 uploads
//! ```

#[path = "../tests/common/mod.rs"]
mod common;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::Parser;
use common::{slots, Device, TestResult, P};
use zeppelin::Params;
use zeppelin_service::client::Client;
use zeppelin_service::names::StreamName;
use zeppelin_service::principals::{Authenticator, DeviceName, Registry};
use zeppelin_service::store::SqliteStore;
use zeppelin_service::{start, AggregateOp, Preset, ServiceConfig, StartKeys};

#[derive(Parser)]
struct Args {
    /// Uploads in total.
    #[arg(long, default_value_t = 10_000)]
    uploads: usize,
    /// Concurrent clients.
    #[arg(long, default_value_t = 100)]
    clients: usize,
    /// The CI form: 1,000 uploads from 100 clients, report written to OUT/load-short.*.
    #[arg(long)]
    short: bool,
    /// Report directory.
    #[arg(long, default_value = "reports/server")]
    out: PathBuf,
    /// Distinct ciphertexts encrypted up front (uploads cycle through them).
    #[arg(long, default_value_t = 32)]
    distinct: usize,
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

struct AggRow {
    op: &'static str,
    count: u64,
    seconds: f64,
    checked: String,
}

#[tokio::main(flavor = "multi_thread")]
async fn main() -> TestResult {
    let mut args = Args::parse();
    if args.short {
        args.uploads = 1_000;
        args.clients = 100;
    }
    let (uploads, clients) = (args.uploads, args.clients.max(1));
    let distinct = args.distinct.clamp(1, uploads.max(1));

    // Other work on the machine slows both sides: the report records the load average.
    let loadavg = std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|l| l.split_whitespace().next().map(str::to_owned))
        .unwrap_or_else(|| "unknown".into());
    let device = Device::new(42)?;
    let t = u64::from(P::T);
    let mut bodies = Vec::new();
    let mut values = Vec::new();
    for d in 0..distinct {
        let v = slots(|i| ((i * 131 + d * 7919) % 1000) as u32);
        bodies.push(bytes::Bytes::from(device.encrypt_seeded(&v)?));
        values.push(v);
    }

    let dir = tempfile::tempdir()?;
    let store = Arc::new(SqliteStore::open(dir.path())?);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let mut config = ServiceConfig::new(Preset::Seal4096);
    config.max_in_flight = clients.max(256) * 2;
    let keys = StartKeys {
        relin: Some(device.relin_keys()?),
        galois: None,
    };
    let stream = "load";
    // The owner reads and aggregates; one registered device uploads (docs/server.md roles).
    let mut registry = Registry::default();
    let owner_token = registry.issue_owner(&mut rand_core::OsRng);
    let device_token = registry.add_device(
        &DeviceName::new("load")?,
        &[StreamName::new(stream)?],
        &mut rand_core::OsRng,
    )?;
    config.auth = Arc::new(Authenticator::fixed(registry));
    let service = start(listener, store, config, keys).await?;
    let owner = Client::new(service.url())?.with_token(owner_token.as_str());
    let client = Client::new(service.url())?.with_token(device_token.as_str());

    // Ingest.
    let started = Instant::now();
    let mut tasks = Vec::new();
    for c in 0..clients {
        let (client, bodies) = (client.clone(), bodies.clone());
        tasks.push(tokio::spawn(async move {
            let mut latencies = Vec::new();
            let mut ids = Vec::new();
            let mut i = c;
            while i < uploads {
                let t0 = Instant::now();
                let key = format!("client{c}/{i}");
                let receipt = client
                    .upload(stream, bodies[i % bodies.len()].clone(), Some(&key))
                    .await?;
                latencies.push(t0.elapsed());
                ids.push((receipt.id, i % bodies.len()));
                i += clients;
            }
            Ok::<_, zeppelin_service::client::ClientError>((latencies, ids))
        }));
    }
    let mut latencies = Vec::with_capacity(uploads);
    // The body of each id (ids follow the store's commit order, not the send order).
    let mut body_of_id = vec![0usize; uploads];
    for task in tasks {
        let (l, ids) = task.await??;
        latencies.extend(l);
        for (id, body) in ids {
            let id: usize = id.parse()?;
            *body_of_id
                .get_mut(id.wrapping_sub(1))
                .ok_or_else(|| format!("id {id} out of range"))? = body;
        }
    }
    let ingest = started.elapsed();
    latencies.sort();
    let count = owner.status(stream).await?.count;
    if count != uploads as u64 {
        return Err(format!("stream holds {count} uploads, {uploads} were sent").into());
    }

    // Aggregations; the sum is decrypted and checked against the plaintext sum.
    let mut expected = vec![0u64; P::N];
    for i in 0..uploads {
        for (e, &v) in expected.iter_mut().zip(&values[i % distinct]) {
            *e = (*e + u64::from(v)) % t;
        }
    }
    let mut rows = Vec::new();
    let weights: Vec<i64> = (0..uploads as i64).map(|i| i % 7 - 3).collect();
    for op in [
        AggregateOp::Sum,
        AggregateOp::SumOfSquares,
        AggregateOp::Dot(weights.clone()),
    ] {
        let t0 = Instant::now();
        match owner.aggregate(stream, &op).await {
            Ok(result) => {
                let seconds = t0.elapsed().as_secs_f64();
                let decrypted = device.decrypt(&result.ciphertext)?;
                let want: Vec<u32> = match &op {
                    AggregateOp::Sum => expected.iter().map(|&v| v as u32).collect(),
                    AggregateOp::Dot(w) => {
                        let mut dot = vec![0i64; P::N];
                        for (i, &wi) in w.iter().enumerate() {
                            for (e, &v) in dot.iter_mut().zip(&values[body_of_id[i]]) {
                                *e = (*e + wi * i64::from(v)).rem_euclid(t as i64);
                            }
                        }
                        dot.iter().map(|&v| v as u32).collect()
                    }
                    AggregateOp::SumOfSquares => {
                        let mut sq = vec![0u64; P::N];
                        for i in 0..uploads {
                            for (e, &v) in sq.iter_mut().zip(&values[i % distinct]) {
                                *e = (*e + u64::from(v) * u64::from(v)) % t;
                            }
                        }
                        sq.iter().map(|&v| v as u32).collect()
                    }
                };
                if decrypted != want {
                    return Err(format!(
                        "{}: the decrypted result differs from the plaintext",
                        op.name()
                    )
                    .into());
                }
                rows.push(AggRow {
                    op: op.name(),
                    count: result.count,
                    seconds,
                    checked: "decrypts to the plaintext result".into(),
                });
            }
            Err(e) => rows.push(AggRow {
                op: op.name(),
                count: 0,
                seconds: 0.0,
                checked: format!("not run: {e}"),
            }),
        }
    }
    service.shutdown().await?;

    let rate = uploads as f64 / ingest.as_secs_f64();
    let (p50, p99, max) = (
        percentile(&latencies, 50.0),
        percentile(&latencies, 99.0),
        latencies.last().copied().unwrap_or_default(),
    );
    let wire_bytes = bodies.first().map_or(0, |b| b.len());
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let json = serde_json::json!({
        "preset": P::NAME,
        "uploads": uploads,
        "clients": clients,
        "upload_bytes": wire_bytes,
        "cores": cores,
        "load_average_at_start": loadavg,
        "ingest_seconds": ingest.as_secs_f64(),
        "uploads_per_second": rate,
        "latency_ms": { "p50": ms(p50), "p99": ms(p99), "max": ms(max) },
        "aggregations": rows.iter().map(|r| serde_json::json!({
            "op": r.op,
            "count": r.count,
            "seconds": r.seconds,
            "ciphertexts_per_second": if r.seconds > 0.0 { r.count as f64 / r.seconds } else { 0.0 },
            "check": r.checked,
        })).collect::<Vec<_>>(),
    });
    let mut md = format!(
        "# Aggregation service load test\n\n\
         `cargo run --release -p zeppelin-service --example service_load -- --uploads {uploads} --clients {clients}`\n\n\
         Loopback, service and clients in one process on {cores} cores (they share the CPU), \
         SQLite store (WAL, synchronous=FULL, group commit) on a temp directory; preset {}, \
         seeded uploads of {wire_bytes} bytes, each with an idempotency key; 1-minute load \
         average at start {loadavg}. Every aggregate is decrypted by the key owner and \
         compared with the plaintext result.\n\n\
         | uploads | clients | seconds | uploads/s | p50 ms | p99 ms | max ms |\n|---|---|---|---|---|---|---|\n\
         | {uploads} | {clients} | {:.2} | {:.0} | {:.2} | {:.2} | {:.2} |\n\n\
         | aggregation | ciphertexts | seconds | ciphertexts/s | check |\n|---|---|---|---|---|\n",
        P::NAME,
        ingest.as_secs_f64(),
        rate,
        ms(p50),
        ms(p99),
        ms(max),
    );
    for r in &rows {
        let per_s = if r.seconds > 0.0 {
            format!("{:.0}", r.count as f64 / r.seconds)
        } else {
            "-".into()
        };
        md.push_str(&format!(
            "| {} | {} | {:.2} | {} | {} |\n",
            r.op, r.count, r.seconds, per_s, r.checked
        ));
    }
    std::fs::create_dir_all(&args.out)?;
    let stem = if args.short { "load-short" } else { "load" };
    std::fs::write(args.out.join(format!("{stem}.md")), &md)?;
    std::fs::write(
        args.out.join(format!("{stem}.json")),
        serde_json::to_string_pretty(&json)? + "\n",
    )?;
    print!("{md}");
    Ok(())
}
