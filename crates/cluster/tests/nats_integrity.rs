//! Issue 28 item 6 and 7 on the NATS store, against a real single-node `nats-server -js`:
//! every append carries its body's SHA-256 in `Zeppelin-Body-Sha256`, a read of a message
//! whose body does not match it fails naming the upload, one upload is deleted by its id
//! (only from its own stream), and deleting a device's uploads is refused as not
//! implemented.

mod node;

use std::time::{Duration, Instant};

use bytes::Bytes;
use node::{Node, TestResult};
use zeppelin_cluster::connect::NatsOptions;
use zeppelin_cluster::store::DIGEST_HEADER;
use zeppelin_cluster::{layout, NatsStore};
use zeppelin_service::names::StreamName;
use zeppelin_service::principals::DeviceName;
use zeppelin_service::store::{AppendRequest, DeleteTarget, StoreError, UploadStore};

fn name(s: &str) -> TestResult<StreamName> {
    Ok(StreamName::new(s)?)
}

fn request(stream: &str, body: &[u8]) -> TestResult<AppendRequest> {
    Ok(AppendRequest {
        stream: name(stream)?,
        key: None,
        device: None,
        body: Bytes::copy_from_slice(body),
        max_uploads: 1_000,
    })
}

/// Connects once the node's JetStream answers.
async fn store(node: &Node) -> TestResult<NatsStore> {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        match NatsStore::connect(&NatsOptions::new(&node.url), 1).await {
            Ok(s) => return Ok(s),
            Err(_) if Instant::now() < deadline => {
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
            Err(e) => return Err(format!("{e}; log:\n{}", node.log()).into()),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn digests_are_checked_and_uploads_deleted_on_jetstream() -> TestResult {
    let node = Node::start()?;
    let s = store(&node).await?;
    let a = name("a")?;
    let first = s.append(request("a", &[1; 10])?).await?;
    let second = s.append(request("a", &[2; 10])?).await?;
    let elsewhere = s.append(request("b", &[3; 10])?).await?;

    // A message of stream "a" whose header does not match its body (damage, or a forgery).
    let mut headers = async_nats::HeaderMap::new();
    headers.insert(DIGEST_HEADER, "00".repeat(32).as_str());
    let damaged = s
        .jetstream()
        .publish_with_headers(
            layout::upload_subject("a", "handmade"),
            headers,
            Bytes::from_static(&[4; 10]),
        )
        .await?
        .await?
        .sequence;
    let info = s.stream_info(&a).await?.ok_or("no stream a")?;
    assert_eq!(info.count, 3);
    match s.read_chunk(&a, 0, info.last_id, 10).await {
        Err(StoreError::DigestMismatch { stream, id }) if stream == a && id == damaged => {}
        other => return Err(format!("read of a damaged message: {other:?}").into()),
    }

    // Deletes: not another stream's id; the damaged message once; then the first upload.
    assert_eq!(s.delete(&a, DeleteTarget::Upload(elsewhere.id)).await?, 0);
    assert_eq!(s.delete(&a, DeleteTarget::Upload(damaged)).await?, 1);
    assert_eq!(s.delete(&a, DeleteTarget::Upload(damaged)).await?, 0);
    assert_eq!(s.delete(&a, DeleteTarget::Upload(first.id)).await?, 1);
    let info = s.stream_info(&a).await?.ok_or("no stream a")?;
    assert_eq!(info.count, 1);
    let left = s.read_chunk(&a, 0, info.last_id, 10).await?;
    assert_eq!(left.len(), 1);
    assert_eq!(
        (left[0].id, left[0].body.as_ref()),
        (second.id, &[2u8; 10][..])
    );
    assert_eq!(s.nth_id(&a, 1).await?, Some(second.id));
    assert_eq!(
        s.stream_info(&name("b")?).await?.map(|i| i.count),
        Some(1),
        "stream b lost its upload"
    );

    let device = DeviceName::new("dev")?;
    match s.delete(&a, DeleteTarget::Device(device)).await {
        Err(StoreError::NotImplemented(_)) => {}
        other => return Err(format!("device delete on NATS: {other:?}").into()),
    }
    Ok(())
}
