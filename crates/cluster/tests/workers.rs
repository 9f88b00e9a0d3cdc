//! Distributed aggregation against a real `nats-server -js` node: uploads published straight
//! into ZEPPELIN_UPLOADS, in-process workers, the JobAggregator; every result must be
//! byte-identical to the service's in-process aggregation over the same uploads (SQLite), the
//! sum must decrypt to the plaintext truth, a shard taken by a worker that dies is redelivered
//! after the ack wait, and a body that does not decode is skipped and counted.

#[path = "../../service/tests/common/mod.rs"]
mod common;
mod node;

use std::sync::Arc;
use std::time::{Duration, Instant};

use async_nats::jetstream::{self, consumer, stream};
use bytes::Bytes;
use common::{slots, Device, P};
use futures_util::StreamExt;
use node::{Node, TestResult};
use zeppelin::Params;
use zeppelin_cluster::auth::ClusterKey;
use zeppelin_cluster::combine::{JobAggregator, JobConfig};
use zeppelin_cluster::jobs::names;
use zeppelin_cluster::worker::{Worker, WorkerConfig, WorkerMetrics};
use zeppelin_seal::ComprMode;
use zeppelin_server::Evaluator;
use zeppelin_service::aggregate::Aggregation;
use zeppelin_service::names::{IdempotencyKey, StreamName};
use zeppelin_service::store::{AppendRequest, SqliteStore, UploadStore};
use zeppelin_service::{AggregateOp, Aggregator, LocalAggregator, Preset};

const ACK_WAIT: Duration = Duration::from_secs(2);

/// The uploads stream as the NATS store lays it out (one node: one replica).
async fn uploads_stream(js: &jetstream::Context) -> TestResult<stream::Stream> {
    Ok(js
        .get_or_create_stream(stream::Config {
            name: names::UPLOADS_STREAM.into(),
            subjects: vec!["zeppelin.up.>".into()],
            max_messages_per_subject: 1,
            num_replicas: 1,
            ..Default::default()
        })
        .await?)
}

/// Publishes `bodies` as uploads of `stream` (keys `k0`, `k1`, ...), awaiting each PubAck.
async fn publish(js: &jetstream::Context, stream: &str, bodies: &[Vec<u8>]) -> TestResult {
    for (i, body) in bodies.iter().enumerate() {
        js.publish(
            names::upload_subject(stream, &format!("k{i}")),
            Bytes::from(body.clone()),
        )
        .await?
        .await?;
    }
    Ok(())
}

/// The same bodies in a SQLite store, and the service's pieces for aggregating them.
struct Reference {
    store: Arc<SqliteStore>,
    with: Aggregation,
    _dir: tempfile::TempDir,
}

impl Reference {
    async fn new(device: &Device, stream: &str, bodies: &[Vec<u8>]) -> TestResult<Self> {
        let dir = tempfile::tempdir()?;
        let store = Arc::new(SqliteStore::open(dir.path())?);
        for (i, body) in bodies.iter().enumerate() {
            store
                .append(AppendRequest {
                    stream: StreamName::new(stream)?,
                    key: Some(IdempotencyKey::new(&format!("k{i}"))?),
                    device: None,
                    body: Bytes::from(body.clone()),
                    max_uploads: 1_000_000,
                })
                .await?;
        }
        let codec = Preset::Seal4096.codec()?;
        let evaluator = Arc::new(Evaluator::new(codec.seal().clone())?);
        let relin = evaluator.prepare_relin_keys(&codec.relin_keys(&device.relin_keys()?)?)?;
        let with = Aggregation {
            store: store.clone(),
            codec,
            evaluator,
            relin: Some(Arc::new(relin)),
            chunk: 7,
        };
        Ok(Self {
            store,
            with,
            _dir: dir,
        })
    }
}

/// The cluster key of these tests' coordinators and workers.
fn cluster_key() -> Arc<ClusterKey> {
    Arc::new(ClusterKey::from_bytes([0x5a; 32]))
}

/// Starts `n` in-process workers; returns their tasks and shared counters.
async fn workers(
    node: &Node,
    n: usize,
) -> TestResult<(Vec<tokio::task::JoinHandle<()>>, Arc<WorkerMetrics>)> {
    let metrics = Arc::new(WorkerMetrics::default());
    let mut tasks = Vec::new();
    for _ in 0..n {
        let worker = Worker::connect(
            node.client().await?,
            cluster_key(),
            &WorkerConfig {
                threads: 1,
                ack_wait: ACK_WAIT,
            },
            metrics.clone(),
        )
        .await?;
        tasks.push(tokio::spawn(async move {
            let _ = worker.run(std::future::pending()).await;
        }));
    }
    Ok((tasks, metrics))
}

fn job_config(shard_size: u64) -> JobConfig {
    JobConfig {
        shard_size,
        timeout: Duration::from_secs(60),
        poll: Duration::from_millis(50),
    }
}

/// Upload bodies and the slots each one encrypts.
type Readings = (Vec<Vec<u8>>, Vec<Vec<u32>>);

/// Encryptions of readings `r_i(slot) = (7 i + slot) mod 97` and the readings.
fn readings(device: &Device, n: usize) -> TestResult<Readings> {
    let mut bodies = Vec::new();
    let mut plain = Vec::new();
    for i in 0..n {
        let s = slots(|slot| ((7 * i + slot) % 97) as u32);
        bodies.push(device.encrypt_seeded(&s)?);
        plain.push(s);
    }
    Ok((bodies, plain))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn workers_match_local_aggregation_byte_for_byte() -> TestResult {
    let node = Node::start_with_jetstream().await?;
    let js = jetstream::new(node.client().await?);
    uploads_stream(&js).await?;
    let device = Device::new(3)?;
    let n = 23;
    let (bodies, plain) = readings(&device, n)?;
    publish(&js, "temps", &bodies).await?;
    // Another device stream in between: the filter must leave it out.
    publish(&js, "other", &bodies[..3]).await?;
    let reference = Reference::new(&device, "temps", &bodies).await?;

    let aggregator =
        JobAggregator::connect(node.client().await?, cluster_key(), 1, job_config(5)).await?;
    let (tasks, metrics) = workers(&node, 3).await?;
    let stream = StreamName::new("temps")?;
    let weights: Vec<i64> = (0..n as i64).map(|i| (i * 13) % 11 - 5).collect();
    for op in [
        AggregateOp::Sum,
        AggregateOp::SumOfSquares,
        AggregateOp::Dot(weights.clone()),
    ] {
        let local = LocalAggregator
            .aggregate(reference.with.clone(), stream.clone(), op.clone())
            .await?;
        let remote = aggregator
            .aggregate(reference.with.clone(), stream.clone(), op.clone())
            .await?;
        assert_eq!(remote.count, n as u64, "{}", op.name());
        assert_eq!(local.count, n as u64);
        assert_eq!(
            remote.ciphertext.save(ComprMode::None)?,
            local.ciphertext.save(ComprMode::None)?,
            "{}: worker result differs from the local one",
            op.name()
        );
        if op == AggregateOp::Sum {
            let sum = device.decrypt(&remote.ciphertext.save(ComprMode::None)?)?;
            for (slot, got) in sum.iter().enumerate() {
                let truth: u64 = plain.iter().map(|p| u64::from(p[slot])).sum();
                assert_eq!(u64::from(*got), truth % u64::from(P::T), "slot {slot}");
            }
        }
    }
    // 3 ops × 5 shards, each summed once (no redelivery here).
    assert_eq!(
        metrics
            .shards_done
            .load(std::sync::atomic::Ordering::Relaxed),
        15
    );
    // The job objects are gone afterwards.
    let partials = js.get_object_store(names::PARTIALS_BUCKET).await?;
    let mut list = partials.list().await?;
    let mut left = 0;
    while let Some(entry) = list.next().await {
        entry?;
        left += 1;
    }
    assert_eq!(left, 0, "partials left in the bucket");
    for t in tasks {
        t.abort();
    }
    drop(reference.store);
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_shard_of_a_dead_worker_is_redelivered_and_counted_once() -> TestResult {
    let node = Node::start_with_jetstream().await?;
    let js = jetstream::new(node.client().await?);
    uploads_stream(&js).await?;
    let device = Device::new(4)?;
    let n = 12;
    let (bodies, _) = readings(&device, n)?;
    publish(&js, "temps", &bodies).await?;
    let reference = Reference::new(&device, "temps", &bodies).await?;
    let aggregator = Arc::new(
        JobAggregator::connect(node.client().await?, cluster_key(), 1, job_config(4)).await?,
    );

    // A "worker" that takes one shard and dies without acknowledging it (its connection
    // is dropped), before any real worker runs.
    let thief_client = node.client().await?;
    let thief_js = jetstream::new(thief_client.clone());
    let jobs = thief_js.get_stream(names::JOBS_STREAM).await?;
    let consumer: consumer::PullConsumer = jobs
        .get_or_create_consumer(
            names::WORKERS_CONSUMER,
            consumer::pull::Config {
                durable_name: Some(names::WORKERS_CONSUMER.into()),
                ack_policy: consumer::AckPolicy::Explicit,
                ack_wait: ACK_WAIT,
                max_deliver: -1,
                ..Default::default()
            },
        )
        .await?;
    let stream = StreamName::new("temps")?;
    let job = {
        let (aggregator, with, stream) =
            (aggregator.clone(), reference.with.clone(), stream.clone());
        tokio::spawn(async move {
            aggregator
                .aggregate(with, stream, AggregateOp::SumOfSquares)
                .await
        })
    };
    let mut taken = consumer
        .fetch()
        .max_messages(1)
        .expires(Duration::from_secs(10))
        .messages()
        .await?;
    let stolen = taken.next().await.ok_or("the thief got no shard")??;
    let stolen_at = Instant::now();
    let stolen_subject = stolen.subject.to_string();
    drop(taken);
    drop(consumer);
    drop(thief_js);
    drop(thief_client);

    let (tasks, metrics) = workers(&node, 2).await?;
    let remote = job.await??;
    let elapsed = stolen_at.elapsed();
    let local = LocalAggregator
        .aggregate(reference.with.clone(), stream, AggregateOp::SumOfSquares)
        .await?;
    assert_eq!(remote.count, n as u64);
    assert_eq!(
        remote.ciphertext.save(ComprMode::None)?,
        local.ciphertext.save(ComprMode::None)?
    );
    // The stolen shard could only be finished after its ack wait ran out.
    assert!(
        elapsed >= ACK_WAIT,
        "finished {elapsed:?} after {stolen_subject} was taken, before the ack wait"
    );
    assert_eq!(
        metrics
            .shards_done
            .load(std::sync::atomic::Ordering::Relaxed),
        3
    );
    for t in tasks {
        t.abort();
    }
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_body_that_does_not_decode_is_skipped_and_counted() -> TestResult {
    let node = Node::start_with_jetstream().await?;
    let js = jetstream::new(node.client().await?);
    uploads_stream(&js).await?;
    let device = Device::new(5)?;
    let (good, _) = readings(&device, 6)?;
    let mut mixed = good.clone();
    mixed.insert(2, b"not a ciphertext".to_vec());
    publish(&js, "mixed", &mixed).await?;
    let reference = Reference::new(&device, "mixed", &good).await?;
    let aggregator =
        JobAggregator::connect(node.client().await?, cluster_key(), 1, job_config(3)).await?;
    let (tasks, metrics) = workers(&node, 2).await?;
    let stream = StreamName::new("mixed")?;
    let remote = aggregator
        .aggregate(reference.with.clone(), stream.clone(), AggregateOp::Sum)
        .await?;
    let local = LocalAggregator
        .aggregate(reference.with.clone(), stream, AggregateOp::Sum)
        .await?;
    assert_eq!(remote.count, 6);
    assert_eq!(aggregator.rejected_total(), 1);
    assert_eq!(
        metrics.rejected.load(std::sync::atomic::Ordering::Relaxed),
        1
    );
    assert_eq!(
        remote.ciphertext.save(ComprMode::None)?,
        local.ciphertext.save(ComprMode::None)?
    );
    for t in tasks {
        t.abort();
    }
    Ok(())
}
