//! Distributed aggregation against a real `nats-server -js` node: uploads published straight
//! into ZEPPELIN_UPLOADS, in-process workers, the JobAggregator; every result must be
//! byte-identical to the service's in-process aggregation over the same uploads (SQLite), the
//! sum must decrypt to the plaintext truth, a shard taken by a worker that dies is redelivered
//! after the ack wait, and a body that does not decode is skipped and counted.
//!
//! A party on the bus without the cluster key (issue 28 item 3): partials it writes into the
//! bucket — of another ciphertext under its own key, or in the old untagged format — are
//! refused and counted, and the aggregate is the genuine workers' (decrypted and compared
//! with the truth); one that keeps writing them makes the aggregation fail with a 503; job
//! messages it publishes (untagged, tagged under another key, garbage tag) are not done.

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
use zeppelin_cluster::auth::TAG_HEADER;
use zeppelin_cluster::combine::MAX_REFUSALS_PER_SHARD;
use zeppelin_cluster::combine::{JobAggregator, JobConfig};
use zeppelin_cluster::jobs::{names, JobOp, Partial, ShardJob};
use zeppelin_cluster::worker::{Worker, WorkerConfig, WorkerMetrics};
use zeppelin_seal::ComprMode;
use zeppelin_server::Evaluator;
use zeppelin_service::aggregate::{sum_uploads, Aggregation, BadUpload};
use zeppelin_service::names::{IdempotencyKey, StreamName};
use zeppelin_service::store::{AppendRequest, SqliteStore, StoredUpload, UploadStore};
use zeppelin_service::{AggregateOp, Aggregator, LocalAggregator, Metrics, Preset, ServiceError};

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

/// The shard job subjects of the job in the queue, once there are `shards` of them: what any
/// bus participant allowed to read `ZEPPELIN_JOBS` sees.
async fn queued_jobs(js: &jetstream::Context, shards: usize) -> TestResult<Vec<(String, Bytes)>> {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let stream = js.get_stream(names::JOBS_STREAM).await?;
        let mut info = stream.info_with_subjects("zeppelin.job.>").await?;
        let mut subjects = Vec::new();
        while let Some(entry) = info.next().await {
            subjects.push(entry?.0);
        }
        if subjects.len() >= shards {
            subjects.sort();
            let mut out = Vec::new();
            for subject in subjects {
                let m = stream.get_last_raw_message_by_subject(&subject).await?;
                out.push((subject, m.payload));
            }
            return Ok(out);
        }
        if Instant::now() > deadline {
            return Err(format!("only {} shard jobs queued", subjects.len()).into());
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Puts `bytes` as object `name` into the partials bucket, as a bus party can.
async fn put_object(js: &jetstream::Context, name: &str, bytes: Vec<u8>) -> TestResult {
    let bucket = js.get_object_store(names::PARTIALS_BUCKET).await?;
    let mut reader: &[u8] = &bytes;
    bucket.put(name, &mut reader).await?;
    Ok(())
}

/// Waits until `f()` holds (20 s at most).
async fn until(what: &str, f: impl Fn() -> bool) -> TestResult {
    let deadline = Instant::now() + Duration::from_secs(20);
    while !f() {
        if Instant::now() > deadline {
            return Err(format!("timed out waiting for {what}").into());
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn forged_partials_are_refused_and_the_genuine_sum_is_combined() -> TestResult {
    let node = Node::start_with_jetstream().await?;
    let js = jetstream::new(node.client().await?);
    uploads_stream(&js).await?;
    let device = Device::new(6)?;
    let n = 9;
    let (bodies, plain) = readings(&device, n)?;
    publish(&js, "temps", &bodies).await?;
    let reference = Reference::new(&device, "temps", &bodies).await?;
    let metrics = Arc::new(Metrics::default());
    let aggregator = Arc::new(
        JobAggregator::connect(node.client().await?, cluster_key(), 1, job_config(3))
            .await?
            .with_metrics(metrics.clone()),
    );
    let stream = StreamName::new("temps")?;
    let job = {
        let (aggregator, with, stream) =
            (aggregator.clone(), reference.with.clone(), stream.clone());
        tokio::spawn(async move { aggregator.aggregate(with, stream, AggregateOp::Sum).await })
    };

    // The forger reads the queued jobs and, before any worker ran, writes partials for
    // shards 0 and 1: the sum of another ciphertext under its own key, and an untagged
    // object in the old ZPART1 layout.
    let forger = jetstream::new(node.client().await?);
    let jobs = queued_jobs(&forger, 3).await?;
    let codec = Preset::Seal4096.codec()?;
    let evaluator = Evaluator::new(codec.seal().clone())?;
    let other = device.encrypt_seeded(&slots(|s| (s % 7) as u32))?;
    let uploads: Vec<StoredUpload> = (0..3)
        .map(|i| StoredUpload {
            id: i,
            body: Bytes::from(other.clone()),
        })
        .collect();
    let fake = sum_uploads(
        &*codec,
        &evaluator,
        &stream,
        &AggregateOp::Sum,
        0,
        &uploads,
        BadUpload::Skip,
    )?;
    let forged = Partial {
        ciphertext: fake.ciphertext.clone(),
        count: 3,
        rejected: 0,
    };
    let (subject0, body0) = &jobs[0];
    let job0 = ShardJob::parse(subject0, body0.clone())?;
    let forger_key = ClusterKey::from_bytes([0x77; 32]);
    put_object(
        &forger,
        &names::partial_object(&job0.job.job, 0),
        forged.to_object(&forger_key, &job0)?,
    )
    .await?;
    let mut untagged = b"ZPART1".to_vec();
    untagged.extend_from_slice(&3u64.to_le_bytes());
    untagged.extend_from_slice(&0u64.to_le_bytes());
    untagged.extend_from_slice(
        &fake
            .ciphertext
            .as_ref()
            .ok_or("no fake sum")?
            .save(ComprMode::None)?,
    );
    put_object(&forger, &names::partial_object(&job0.job.job, 1), untagged).await?;
    until("both forgeries refused", || {
        aggregator.partials_refused_total() >= 2
    })
    .await?;

    // Now the genuine workers: the shards asked for again are summed and combined.
    let (tasks, _) = workers(&node, 2).await?;
    let remote = job.await??;
    let local = LocalAggregator
        .aggregate(reference.with.clone(), stream, AggregateOp::Sum)
        .await?;
    assert_eq!(remote.count, n as u64);
    assert_eq!(
        remote.ciphertext.save(ComprMode::None)?,
        local.ciphertext.save(ComprMode::None)?
    );
    let sum = device.decrypt(&remote.ciphertext.save(ComprMode::None)?)?;
    for (slot, got) in sum.iter().enumerate() {
        let truth: u64 = plain.iter().map(|p| u64::from(p[slot])).sum();
        assert_eq!(u64::from(*got), truth % u64::from(P::T), "slot {slot}");
    }
    assert_eq!(aggregator.partials_refused_total(), 2);
    assert_eq!(metrics.partials_refused(), 2);
    assert!(metrics
        .render()
        .lines()
        .any(|l| l == "zeppelin_partials_refused_total 2"));
    for t in tasks {
        t.abort();
    }
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_persistent_forger_makes_the_aggregation_fail_with_503() -> TestResult {
    let node = Node::start_with_jetstream().await?;
    let js = jetstream::new(node.client().await?);
    uploads_stream(&js).await?;
    let device = Device::new(7)?;
    let (bodies, _) = readings(&device, 4)?;
    publish(&js, "temps", &bodies).await?;
    let reference = Reference::new(&device, "temps", &bodies).await?;
    let aggregator = Arc::new(
        JobAggregator::connect(node.client().await?, cluster_key(), 1, job_config(4)).await?,
    );
    let job = {
        let (aggregator, with) = (aggregator.clone(), reference.with.clone());
        tokio::spawn(async move {
            aggregator
                .aggregate(with, StreamName::new("temps")?, AggregateOp::Sum)
                .await
                .map_err(|e| -> Box<dyn std::error::Error + Send + Sync> { Box::new(e) })
        })
    };
    let forger = jetstream::new(node.client().await?);
    let jobs = queued_jobs(&forger, 1).await?;
    let job0 = ShardJob::parse(&jobs[0].0, jobs[0].1.clone())?;
    let name = names::partial_object(&job0.job.job, 0);
    let forged = Partial {
        ciphertext: None,
        count: 4,
        rejected: 0,
    }
    .to_object(&ClusterKey::from_bytes([0x66; 32]), &job0)?;
    // No worker runs; the forger writes its partial again whenever it is gone.
    let writer = tokio::spawn(async move {
        loop {
            let _ = put_object(&forger, &name, forged.clone()).await;
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    });
    let result = tokio::time::timeout(Duration::from_secs(30), job).await??;
    writer.abort();
    match result {
        Err(e) => {
            let e = e.downcast::<ServiceError>().map_err(|e| e.to_string())?;
            match *e {
                ServiceError::Unavailable(ref why) => {
                    assert!(why.contains("partials refused"), "{why}")
                }
                ref other => return Err(format!("expected a 503, got {other:?}").into()),
            }
        }
        Ok(_) => return Err("a job with only forged partials succeeded".into()),
    }
    assert_eq!(
        aggregator.partials_refused_total(),
        u64::from(MAX_REFUSALS_PER_SHARD)
    );
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn forged_jobs_are_not_done() -> TestResult {
    let node = Node::start_with_jetstream().await?;
    let js = jetstream::new(node.client().await?);
    uploads_stream(&js).await?;
    let device = Device::new(8)?;
    let (bodies, _) = readings(&device, 4)?;
    publish(&js, "temps", &bodies).await?;
    let reference = Reference::new(&device, "temps", &bodies).await?;
    // Creates the job stream and the bucket.
    let aggregator =
        JobAggregator::connect(node.client().await?, cluster_key(), 1, job_config(2)).await?;
    let (tasks, metrics) = workers(&node, 1).await?;

    // Jobs a bus party publishes: a well-formed shard of the real uploads, without a tag,
    // with a tag under its own key, and with a garbage tag.
    let forged = |id: &str| ShardJob {
        job: id.into(),
        shard: 0,
        preset: "seal4096".into(),
        stream: "temps".into(),
        filter: names::stream_filter("temps"),
        first_seq: 1,
        last_seq: 4,
        count: 4,
        first_position: 0,
        op: JobOp::Sum,
        weights: None,
        expires: u64::MAX,
    };
    let forger = jetstream::new(node.client().await?);
    let untagged = forged("forged1").sign(&cluster_key())?;
    forger
        .publish(untagged.subject.clone(), untagged.body.clone())
        .await?
        .await?;
    let own_key = forged("forged2").sign(&ClusterKey::from_bytes([0x11; 32]))?;
    let mut headers = async_nats::HeaderMap::new();
    headers.insert(TAG_HEADER, own_key.tag.as_str());
    forger
        .publish_with_headers(own_key.subject.clone(), headers, own_key.body.clone())
        .await?
        .await?;
    let garbage = forged("forged3").sign(&cluster_key())?;
    let mut headers = async_nats::HeaderMap::new();
    headers.insert(TAG_HEADER, "not-hex");
    forger
        .publish_with_headers(garbage.subject.clone(), headers, garbage.body.clone())
        .await?
        .await?;
    until("three forged jobs refused", || {
        metrics
            .shards_unauthenticated
            .load(std::sync::atomic::Ordering::Relaxed)
            == 3
    })
    .await?;
    assert_eq!(
        metrics
            .shards_done
            .load(std::sync::atomic::Ordering::Relaxed),
        0
    );
    let bucket = js.get_object_store(names::PARTIALS_BUCKET).await?;
    for id in ["forged1", "forged2", "forged3"] {
        let name = names::partial_object(id, 0);
        assert!(
            bucket.info(name.as_str()).await.is_err(),
            "a worker wrote {name}"
        );
    }
    assert!(metrics
        .render()
        .contains("zeppelin_worker_shards_total{result=\"unauthenticated\"} 3\n"));

    // The worker still does genuine jobs.
    let stream = StreamName::new("temps")?;
    let remote = aggregator
        .aggregate(reference.with.clone(), stream.clone(), AggregateOp::Sum)
        .await?;
    let local = LocalAggregator
        .aggregate(reference.with.clone(), stream, AggregateOp::Sum)
        .await?;
    assert_eq!(
        remote.ciphertext.save(ComprMode::None)?,
        local.ciphertext.save(ComprMode::None)?
    );
    assert_eq!(
        metrics
            .shards_done
            .load(std::sync::atomic::Ordering::Relaxed),
        2
    );
    for t in tasks {
        t.abort();
    }
    Ok(())
}
