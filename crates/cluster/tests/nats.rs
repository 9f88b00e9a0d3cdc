//! `NatsStore`, the receipt task and the service on JetStream, against a real single-node
//! `nats-server -js` (with its MQTT gateway), started by each test on free loopback ports.
//!
//! - the store contract: ids, counts, chunked reads, duplicates, reused keys, '.' refused;
//! - MQTT: a real MQTT client (rumqttc) publishes a device ciphertext; the receipt arrives
//!   over MQTT and the stored bytes read back identical; an invalid body gets an error
//!   receipt and is deleted;
//! - end to end: the HTTP service on a `NatsStore` gives byte-identical SEAL results to the
//!   service on SQLite for the same uploads, and they decrypt to the plaintext truth.

#[path = "../../service/tests/common/mod.rs"]
mod common;
mod node;

use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use common::{slots, Device, P};
use node::{Node, TestResult};
use rumqttc::{AsyncClient, Event, MqttOptions, Packet, QoS};
use zeppelin::Params;
use zeppelin_cluster::connect::NatsOptions;
use zeppelin_cluster::{layout, receipts, NatsStore};
use zeppelin_service::client::Client;
use zeppelin_service::names::{IdempotencyKey, StreamName};
use zeppelin_service::principals::{Authenticator, DeviceName, Registry};
use zeppelin_service::store::{AppendRequest, SqliteStore, StoreError, UploadStore};
use zeppelin_service::{start, AggregateOp, Metrics, Preset, ServiceConfig, StartKeys};

fn name(s: &str) -> TestResult<StreamName> {
    Ok(StreamName::new(s)?)
}

fn request(stream: &str, key: Option<&str>, body: &[u8]) -> TestResult<AppendRequest> {
    Ok(AppendRequest {
        stream: name(stream)?,
        key: key.map(IdempotencyKey::new).transpose()?,
        device: None,
        body: Bytes::copy_from_slice(body),
        max_uploads: 1_000,
    })
}

/// Connects once the node's JetStream answers (it may take a moment after the port opens).
async fn store(node: &Node) -> TestResult<NatsStore> {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        match NatsStore::connect(&NatsOptions::new(&node.url), 1).await {
            Ok(s) => return Ok(s),
            Err(e) if Instant::now() < deadline => {
                eprintln!("waiting for JetStream: {e}");
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
            Err(e) => return Err(format!("{e}; log:\n{}", node.log()).into()),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn store_contract_on_jetstream() -> TestResult {
    let node = Node::start()?;
    let s = store(&node).await?;
    assert!(s.stream_info(&name("a")?).await?.is_none());

    // Interleaved streams: ids increase but are not contiguous within a stream.
    let mut ids_a = Vec::new();
    for i in 0..5u8 {
        let a = s
            .append(request("a", Some(&format!("k{i}")), &[i; 10])?)
            .await?;
        assert!(!a.duplicate);
        ids_a.push(a.id);
        let b = s.append(request("b", None, &[100 + i; 7])?).await?;
        assert!(b.id > a.id);
    }
    assert!(ids_a.windows(2).all(|w| w[1] == w[0] + 2), "{ids_a:?}");

    let info = s.stream_info(&name("a")?).await?.expect("stream a");
    assert_eq!(info.count, 5);
    assert!(info.last_id >= ids_a[4]);
    // Reads in chunks of 2 up to the last id give every upload once, in id order.
    let mut read = Vec::new();
    let mut after = 0;
    loop {
        let chunk = s.read_chunk(&name("a")?, after, info.last_id, 2).await?;
        if chunk.is_empty() {
            break;
        }
        assert!(chunk.len() <= 2);
        after = chunk.last().map(|u| u.id).unwrap_or(after);
        read.extend(chunk);
    }
    assert_eq!(read.iter().map(|u| u.id).collect::<Vec<_>>(), ids_a);
    for (i, u) in read.iter().enumerate() {
        assert_eq!(u.body.as_ref(), &[i as u8; 10]);
    }
    // (after, through] bounds: only ids_a[1] and ids_a[2].
    let mid = s.read_chunk(&name("a")?, ids_a[0], ids_a[2], 10).await?;
    assert_eq!(mid.iter().map(|u| u.id).collect::<Vec<_>>(), &ids_a[1..3]);

    // The same key and bytes: a duplicate with the first id; other bytes: KeyReused.
    let again = s.append(request("a", Some("k3"), &[3; 10])?).await?;
    assert_eq!((again.id, again.duplicate), (ids_a[3], true));
    match s.append(request("a", Some("k3"), &[9; 10])?).await {
        Err(StoreError::KeyReused { id, key, .. }) => {
            assert_eq!((id, key.as_str()), (ids_a[3], "k3"));
        }
        other => panic!("expected KeyReused, got {other:?}"),
    }
    // A key that is hashed into its subject token behaves the same.
    let hashed = s.append(request("a", Some("device-1/0"), b"x")?).await?;
    assert!(!hashed.duplicate);
    assert!(
        s.append(request("a", Some("device-1/0"), b"x")?)
            .await?
            .duplicate
    );
    assert!(matches!(
        s.append(request("a", Some("device-1/0"), b"y")?).await,
        Err(StoreError::KeyReused { .. })
    ));
    assert_eq!(s.stream_info(&name("a")?).await?.map(|i| i.count), Some(6));

    // A '.' in the stream name cannot be a NATS subject token: refused with a typed error.
    match s.append(request("x.y", Some("k"), b"z")?).await {
        Err(StoreError::Unsupported(why)) => assert!(why.contains("'.'"), "{why}"),
        other => panic!("expected Unsupported, got {other:?}"),
    }

    // The per-stream limit.
    let mut full = request("a", Some("k-new"), b"n")?;
    full.max_uploads = 6;
    assert!(matches!(
        s.append(full).await,
        Err(StoreError::StreamFull { max: 6, .. })
    ));

    let listed = s.list_streams().await?;
    let counts: Vec<(String, u64)> = listed
        .iter()
        .map(|i| (i.name.to_string(), i.count))
        .collect();
    assert_eq!(counts, [("a".to_owned(), 6), ("b".to_owned(), 5)]);
    s.close().await?;
    assert!(matches!(
        s.append(request("a", None, b"late")?).await,
        Err(StoreError::Closed)
    ));
    Ok(())
}

/// An MQTT client connected to the node, with its event loop polled on a task; incoming
/// publishes come out of the returned channel.
async fn mqtt(
    node: &Node,
    id: &str,
) -> TestResult<(AsyncClient, tokio::sync::mpsc::Receiver<rumqttc::Publish>)> {
    let mut options = MqttOptions::new(id, "127.0.0.1", node.mqtt_port);
    options.set_keep_alive(Duration::from_secs(10));
    options.set_max_packet_size(1 << 20, 1 << 20);
    let (client, mut events) = AsyncClient::new(options, 16);
    let (tx, rx) = tokio::sync::mpsc::channel(16);
    let (ready_tx, ready_rx) = tokio::sync::oneshot::channel();
    let mut ready = Some(ready_tx);
    tokio::spawn(async move {
        loop {
            match events.poll().await {
                Ok(Event::Incoming(Packet::SubAck(_))) => {
                    if let Some(r) = ready.take() {
                        let _ = r.send(());
                    }
                }
                Ok(Event::Incoming(Packet::Publish(p))) => {
                    if tx.send(p).await.is_err() {
                        return;
                    }
                }
                Ok(_) => {}
                Err(e) => {
                    eprintln!("mqtt {e}");
                    tokio::time::sleep(Duration::from_millis(200)).await;
                }
            }
        }
    });
    client
        .subscribe(
            format!("{}/#", layout::MQTT_RECEIPT_PREFIX),
            QoS::AtLeastOnce,
        )
        .await?;
    tokio::time::timeout(Duration::from_secs(10), ready_rx).await??;
    Ok((client, rx))
}

async fn next_receipt(
    rx: &mut tokio::sync::mpsc::Receiver<rumqttc::Publish>,
) -> TestResult<(String, serde_json::Value)> {
    let p = tokio::time::timeout(Duration::from_secs(20), rx.recv())
        .await?
        .ok_or("MQTT event loop stopped")?;
    Ok((p.topic.clone(), serde_json::from_slice(&p.payload)?))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mqtt_upload_is_stored_and_receipted_over_mqtt() -> TestResult {
    let node = Node::start()?;
    let s = store(&node).await?;
    let metrics = Arc::new(Metrics::default());
    let codec = Preset::Seal4096.codec()?;
    let task = receipts::spawn(s.client().clone(), codec, metrics.clone()).await?;
    let (client, mut rx) = mqtt(&node, "device-7").await?;

    let device = Device::new(7)?;
    let wire = device.encrypt_seeded(&slots(|i| i as u32 * 3 + 1))?;
    client
        .publish(
            layout::mqtt_upload_topic("meter", "dev7-r1"),
            QoS::AtLeastOnce,
            false,
            wire.clone(),
        )
        .await?;
    let (topic, receipt) = next_receipt(&mut rx).await?;
    assert_eq!(topic, layout::mqtt_receipt_topic("meter", "dev7-r1"));
    let id: u64 = receipt["id"]
        .as_str()
        .ok_or_else(|| format!("receipt without id: {receipt}"))?
        .parse()?;
    // The stored upload is the published bytes, under the receipt's id.
    let info = s.stream_info(&name("meter")?).await?.expect("stream meter");
    assert_eq!(info.count, 1);
    let stored = s.read_chunk(&name("meter")?, 0, info.last_id, 10).await?;
    assert_eq!(stored.len(), 1);
    assert_eq!(stored[0].id, id);
    assert_eq!(stored[0].body.as_ref(), wire.as_slice());
    // And it decrypts to what was encrypted (the stored bytes are the device's).
    let seal = Preset::Seal4096.codec()?.to_seal(&stored[0].body)?;
    let got = device.decrypt(&seal.save(zeppelin_seal::ComprMode::None)?)?;
    assert_eq!(got, slots(|i| i as u32 * 3 + 1));

    // An invalid body: an error receipt, and the stream no longer holds it.
    client
        .publish(
            layout::mqtt_upload_topic("meter", "dev7-bad"),
            QoS::AtLeastOnce,
            false,
            b"not a ciphertext".to_vec(),
        )
        .await?;
    let (topic, receipt) = next_receipt(&mut rx).await?;
    assert_eq!(topic, layout::mqtt_receipt_topic("meter", "dev7-bad"));
    let error = receipt["error"].as_str().unwrap_or_default();
    assert!(error.starts_with("bad ciphertext"), "{receipt}");
    assert_eq!(
        s.stream_info(&name("meter")?).await?.map(|i| i.count),
        Some(1)
    );
    let all = s.read_chunk(&name("meter")?, 0, u64::MAX, 10).await?;
    assert_eq!(all.iter().map(|u| u.id).collect::<Vec<_>>(), [id]);

    // A re-publish of the same bytes under the same key replaces the message: still one.
    client
        .publish(
            layout::mqtt_upload_topic("meter", "dev7-r1"),
            QoS::AtLeastOnce,
            false,
            wire.clone(),
        )
        .await?;
    let (topic, receipt) = next_receipt(&mut rx).await?;
    assert_eq!(topic, layout::mqtt_receipt_topic("meter", "dev7-r1"));
    assert!(receipt["id"].is_string(), "{receipt}");
    assert_eq!(
        s.stream_info(&name("meter")?).await?.map(|i| i.count),
        Some(1)
    );

    let text = metrics.render();
    assert!(
        text.contains("zeppelin_receipts_total{result=\"stored\"} 2"),
        "{text}"
    );
    assert!(
        text.contains("zeppelin_receipts_total{result=\"invalid\"} 1"),
        "{text}"
    );
    task.stop();
    Ok(())
}

/// Starts the service on `store`, uploads `wires` to stream "t" through HTTP (interleaved
/// with uploads to another stream, and retried once each) and returns the SEAL bytes and
/// counts of each op over "t".
async fn aggregate_through_http(
    store: Arc<dyn UploadStore>,
    wires: &[Vec<u8>],
    ops: &[AggregateOp],
) -> TestResult<Vec<(Vec<u8>, u64)>> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    // The owner aggregates; one registered device uploads (docs/server.md roles).
    let mut registry = Registry::default();
    let owner_token = registry.issue_owner(&mut rand_core::OsRng);
    let device_token = registry.add_device(
        &DeviceName::new("meter")?,
        &[name("t")?, name("other")?],
        &mut rand_core::OsRng,
    )?;
    let mut config = ServiceConfig::new(Preset::Seal4096);
    config.auth = Arc::new(Authenticator::fixed(registry));
    let service = start(listener, store, config, StartKeys::default()).await?;
    let client = Client::new(service.url())?.with_token(device_token.as_str());
    let owner = Client::new(service.url())?.with_token(owner_token.as_str());
    for (i, wire) in wires.iter().enumerate() {
        let key = format!("r{i}");
        assert!(!client.upload("t", wire.clone(), Some(&key)).await?.replayed);
        // Another stream in between: the NATS ids of "t" are not contiguous.
        client.upload("other", wires[0].clone(), Some(&key)).await?;
        // A retry counts once.
        assert!(client.upload("t", wire.clone(), Some(&key)).await?.replayed);
    }
    assert_eq!(owner.status("t").await?.count, wires.len() as u64);
    let mut results = Vec::new();
    for op in ops {
        let result = owner.aggregate("t", op).await?;
        results.push((result.ciphertext, result.count));
    }
    service.shutdown().await?;
    Ok(results)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn service_on_jetstream_matches_sqlite_byte_for_byte() -> TestResult {
    let node = Node::start()?;
    let nats: Arc<dyn UploadStore> = Arc::new(store(&node).await?);
    let dir = tempfile::tempdir()?;
    let sqlite: Arc<dyn UploadStore> = Arc::new(SqliteStore::open(dir.path())?);

    let device = Device::new(3)?;
    let t = u64::from(P::T);
    let readings: Vec<Vec<u32>> = (0..6u32)
        .map(|r| slots(|i| (i as u32 * 17 + r * 1_001 + 9) % 50_000))
        .collect();
    let wires = readings
        .iter()
        .map(|v| device.encrypt_seeded(v))
        .collect::<Result<Vec<_>, _>>()?;
    let weights: Vec<i64> = vec![3, -1, 0, 7, 2, 5];

    let ops = [AggregateOp::Sum, AggregateOp::Dot(weights)];
    let on_nats = aggregate_through_http(nats, &wires, &ops).await?;
    let on_sqlite = aggregate_through_http(sqlite, &wires, &ops).await?;
    for ((op, (nats_bytes, n)), (sqlite_bytes, m)) in ops.iter().zip(&on_nats).zip(&on_sqlite) {
        assert_eq!((*n, *m), (6, 6));
        assert!(
            nats_bytes == sqlite_bytes,
            "{}: SEAL bytes differ",
            op.name()
        );
        // The plaintext truth, weights by position.
        let w: Vec<i64> = match op {
            AggregateOp::Dot(w) => w.clone(),
            _ => vec![1; readings.len()],
        };
        let expected: Vec<u32> = (0..P::N)
            .map(|slot| {
                let s: i128 = readings
                    .iter()
                    .zip(&w)
                    .map(|(r, &w)| i128::from(r[slot]) * i128::from(w))
                    .sum();
                s.rem_euclid(i128::from(t)) as u32
            })
            .collect();
        assert_eq!(device.decrypt(nats_bytes)?, expected, "{}", op.name());
    }
    Ok(())
}
