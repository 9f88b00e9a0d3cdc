//! The HTTP contract end to end (docs/server.md): every endpoint's answers and errors, the
//! idempotency rule, the limits, the aggregation's result (decrypted with the device's key
//! and compared with the plaintext sums) and a graceful shutdown that loses no acknowledged
//! upload.

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::{slots, Device, TestResult, P};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use zeppelin::Params;
use zeppelin_service::client::Client;
use zeppelin_service::principals::{Authenticator, Registry};
use zeppelin_service::store::{SqliteStore, StoreError, UploadStore};
use zeppelin_service::{start, AggregateOp, Preset, ServiceConfig, ServiceHandle, StartKeys};

struct Fixture {
    _dir: tempfile::TempDir,
    data: std::path::PathBuf,
    service: ServiceHandle,
    /// The device `dev` (uploads).
    client: Client,
    /// The key owner (keys, reads, aggregation).
    owner: Client,
}

/// Fixed test tokens (the registry holds only their SHA-256, as `zeppelin devices` writes).
const OWNER_TOKEN: &str = "zpo.00000000000000000000000000000000000000000000000000000000000000aa";
const DEVICE_TOKEN: &str =
    "zpd.dev.00000000000000000000000000000000000000000000000000000000000000bb";
const AS_OWNER: &[(&str, &str)] = &[(
    "Authorization",
    "Bearer zpo.00000000000000000000000000000000000000000000000000000000000000aa",
)];
const AS_DEVICE: &[(&str, &str)] = &[(
    "Authorization",
    "Bearer zpd.dev.00000000000000000000000000000000000000000000000000000000000000bb",
)];
/// The streams the test device may upload to.
const STREAMS: &[&str] = &["temp", "s", "other", "x", "q", "full", "sd", "m"];

fn sha256_hex(token: &str) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(token.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn test_registry() -> TestResult<Registry> {
    let file = serde_json::json!({
        "version": 1,
        "owner_token_sha256": sha256_hex(OWNER_TOKEN),
        "devices": [{
            "name": "dev",
            "streams": STREAMS,
            "token_sha256": sha256_hex(DEVICE_TOKEN),
            "revoked": false,
        }],
    });
    Ok(Registry::from_json(file.to_string().as_bytes())?)
}

async fn fixture_with(mut config: ServiceConfig, keys: StartKeys) -> TestResult<Fixture> {
    let dir = tempfile::tempdir()?;
    let data = dir.path().join("data");
    let store = Arc::new(SqliteStore::open(&data)?);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    config.auth = Arc::new(Authenticator::fixed(test_registry()?));
    let service = start(listener, store, config, keys).await?;
    let client = Client::new(service.url())?.with_token(DEVICE_TOKEN);
    let owner = Client::new(service.url())?.with_token(OWNER_TOKEN);
    Ok(Fixture {
        _dir: dir,
        data,
        service,
        client,
        owner,
    })
}

async fn fixture() -> TestResult<Fixture> {
    fixture_with(ServiceConfig::new(Preset::Seal4096), StartKeys::default()).await
}

/// A raw request: (status, body text).
async fn raw(
    url: &str,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> TestResult<(u16, String, String)> {
    let addr = url.trim_start_matches("http://");
    let mut s = tokio::net::TcpStream::connect(addr).await?;
    let mut req = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (k, v) in headers {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    req.push_str("\r\n");
    s.write_all(req.as_bytes()).await?;
    s.write_all(body).await?;
    let mut out = Vec::new();
    s.read_to_end(&mut out).await?;
    let text = String::from_utf8_lossy(&out).into_owned();
    let status = text.get(9..12).and_then(|c| c.parse().ok()).unwrap_or(0);
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    Ok((status, head.to_owned(), body.to_owned()))
}

fn error_text(body: &str) -> String {
    serde_json::from_str::<serde_json::Value>(body)
        .ok()
        .and_then(|v| v.get("error")?.as_str().map(str::to_owned))
        .unwrap_or_else(|| format!("<not a JSON error: {body}>"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn upload_count_and_sum_decrypt_to_the_plaintext_sum() -> TestResult {
    let f = fixture().await?;
    let device = Device::new(7)?;
    let t = P::T as u64;
    let mut expected = vec![0u64; P::N];
    let readings = 9;
    for r in 0..readings {
        let values = slots(|i| (i as u32 * 31 + r * 977 + 5) % 60_000);
        for (e, &v) in expected.iter_mut().zip(&values) {
            *e = (*e + v as u64) % t;
        }
        // Seeded and full wire forms both count.
        let wire = if r % 3 == 0 {
            device.encrypt_full(&values)?
        } else {
            device.encrypt_seeded(&values)?
        };
        let receipt = f.client.upload("temp", wire, None).await?;
        assert_eq!(receipt.id, (r + 1).to_string());
        assert!(!receipt.replayed);
    }
    let status = f.owner.status("temp").await?;
    assert_eq!(status.count, readings as u64);
    assert_eq!(status.preset, "seal4096");
    let sum = f.owner.aggregate("temp", &AggregateOp::Sum).await?;
    assert_eq!(sum.count, readings as u64);
    let got = device.decrypt(&sum.ciphertext)?;
    let expected: Vec<u32> = expected.iter().map(|&v| v as u32).collect();
    assert_eq!(got, expected);
    f.service.shutdown().await?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idempotency_key_makes_a_retry_count_once() -> TestResult {
    let f = fixture().await?;
    let device = Device::new(1)?;
    let a = device.encrypt_seeded(&slots(|i| i as u32))?;
    let b = device.encrypt_seeded(&slots(|i| i as u32 + 1))?;
    let first = f.client.upload("s", a.clone(), Some("dev-1/0")).await?;
    let again = f.client.upload("s", a.clone(), Some("dev-1/0")).await?;
    assert_eq!(first.id, again.id);
    assert!(!first.replayed && again.replayed);
    assert_eq!(f.owner.status("s").await?.count, 1);
    // The same key with other bytes is refused, and stores nothing.
    let err = f
        .client
        .upload("s", b.clone(), Some("dev-1/0"))
        .await
        .err()
        .ok_or("reuse accepted")?;
    assert_eq!(err.status().map(|s| s.as_u16()), Some(409), "{err}");
    // The key is per stream; no key means a new upload every time.
    assert_eq!(
        f.client
            .upload("other", a.clone(), Some("dev-1/0"))
            .await?
            .id,
        "1"
    );
    assert_eq!(f.client.upload("s", a.clone(), None).await?.id, "2");
    assert_eq!(f.client.upload("s", a, None).await?.id, "3");
    assert_eq!(f.owner.status("s").await?.count, 3);
    f.service.shutdown().await?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_requests_get_typed_json_errors() -> TestResult {
    let f = fixture().await?;
    let url = f.service.url().to_owned();
    let device = Device::new(2)?;
    let good = device.encrypt_seeded(&slots(|i| i as u32))?;
    let post =
        |path: &'static str, headers: &'static [(&'static str, &'static str)], body: Vec<u8>| {
            let url = url.clone();
            async move { raw(&url, "POST", path, headers, &body).await }
        };

    // 400: garbage, a truncated wire form, a flipped residue above its prime, a SEAL
    // (non-device) form, a bad stream name, a bad idempotency key.
    let (s, h, b) = post("/v1/streams/x/ciphertexts", AS_DEVICE, b"hello".to_vec()).await?;
    assert_eq!(s, 400, "{b}");
    assert!(h
        .to_ascii_lowercase()
        .contains("content-type: application/json"));
    assert!(error_text(&b).starts_with("bad ciphertext"), "{b}");
    let (s, _, b) = post(
        "/v1/streams/x/ciphertexts",
        AS_DEVICE,
        good[..good.len() - 8].to_vec(),
    )
    .await?;
    assert_eq!(s, 400, "{b}");
    let mut high = good.clone();
    let at = 113 + 8 * 10; // residue 10 of c0
    high[at..at + 8].copy_from_slice(&u64::MAX.to_le_bytes());
    let (s, _, b) = post("/v1/streams/x/ciphertexts", AS_DEVICE, high).await?;
    assert_eq!(s, 400, "{b}");
    let seal_zstd = {
        let ct = zeppelin_seal::device::read_any(&device.ctx, &good)?.to_seal(&device.ctx)?;
        ct.save(zeppelin_seal::ComprMode::Zstd)?
    };
    let (s, _, b) = post("/v1/streams/x/ciphertexts", AS_DEVICE, seal_zstd).await?;
    assert_eq!(s, 400, "{b}");
    assert!(error_text(&b).contains("not a device wire form"), "{b}");
    let (s, _, b) = post("/v1/streams/a%2Fb/ciphertexts", AS_DEVICE, good.clone()).await?;
    assert_eq!(s, 400, "{b}");
    assert!(error_text(&b).contains("stream name"), "{b}");
    let (s, _, b) = post(
        "/v1/streams/x/ciphertexts",
        &[
            ("Idempotency-Key", "has\tspace"),
            (
                "Authorization",
                "Bearer zpd.dev.00000000000000000000000000000000000000000000000000000000000000bb",
            ),
        ],
        good.clone(),
    )
    .await?;
    assert_eq!(s, 400, "{b}");
    // Nothing of those was stored.
    let (s, _, b) = raw(&url, "GET", "/v1/streams/x", AS_OWNER, b"").await?;
    assert_eq!(s, 404, "{b}");
    assert_eq!(error_text(&b), "no stream x");

    // 413: announced and actual length over the preset's largest wire form.
    let limit = zeppelin::wire::full_len::<P>(P::K);
    let (s, _, b) = post("/v1/streams/x/ciphertexts", AS_DEVICE, vec![0u8; limit + 1]).await?;
    assert_eq!(s, 413, "{b}");
    assert!(error_text(&b).contains(&limit.to_string()), "{b}");

    // 404: unknown routes and streams (for a caller who is let in: an anonymous caller
    // learns nothing, not even which routes exist).
    let (s, _, b) = raw(&url, "GET", "/v2/nothing", AS_OWNER, b"").await?;
    assert_eq!(s, 404, "{b}");
    let (s, _, b) = raw(&url, "GET", "/v2/nothing", &[], b"").await?;
    assert_eq!(s, 401, "{b}");
    let (s, _, b) = post(
        "/v1/streams/none/aggregate",
        AS_OWNER,
        br#"{"op":"sum"}"#.to_vec(),
    )
    .await?;
    assert_eq!(s, 404, "{b}");

    // Aggregation requests.
    f.client.upload("x", good.clone(), None).await?;
    for (body, want) in [
        (&br#"{"op":"mean"}"#[..], 400),
        (br#"{"op":"sum","weights":[1]}"#, 400),
        (br#"{"op":"dot"}"#, 400),
        (br#"{"op":"dot","weights":[1,2]}"#, 400),
        (br#"{"op":"dot","weights":[1.5]}"#, 400),
        (br#"not json"#, 400),
        (br#"{"op":"sum","extra":1}"#, 400),
        (br#"{"op":"sum_of_squares"}"#, 409),
    ] {
        let (s, _, b) = post("/v1/streams/x/aggregate", AS_OWNER, body.to_vec()).await?;
        assert_eq!(s, want, "{}: {b}", String::from_utf8_lossy(body));
        assert!(!error_text(&b).starts_with("<not"), "{b}");
    }

    // Keys: garbage and keys of another parameter set are refused.
    let (s, _, b) = raw(&url, "PUT", "/v1/keys/relin", AS_OWNER, b"junk").await?;
    assert_eq!(s, 400, "{b}");
    assert!(error_text(&b).starts_with("bad RelinKeys"), "{b}");
    let (s, _, b) = raw(&url, "PUT", "/v1/keys/galois", AS_OWNER, &good).await?;
    assert_eq!(s, 400, "{b}");
    f.service.shutdown().await?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sum_of_squares_and_dot_decrypt_to_the_plaintext_results() -> TestResult {
    let f = fixture().await?;
    let device = Device::new(3)?;
    let t = P::T as i64;
    let readings: Vec<Vec<u32>> = (0..7u32)
        .map(|r| slots(|i| (i as u32 * 13 + r * 101 + 1) % 300))
        .collect();
    for v in &readings {
        f.client
            .upload("q", device.encrypt_seeded(v)?, None)
            .await?;
    }
    // Without relinearization keys sum_of_squares is refused; PUT supplies them.
    let err = f
        .owner
        .aggregate("q", &AggregateOp::SumOfSquares)
        .await
        .err()
        .ok_or("no 409")?;
    assert_eq!(err.status().map(|s| s.as_u16()), Some(409), "{err}");
    f.owner.put_relin_keys(device.relin_keys()?).await?;
    // SEAL's default Galois key set fits the key body limit.
    f.owner.put_galois_keys(device.galois_keys()?).await?;
    let sq = f.owner.aggregate("q", &AggregateOp::SumOfSquares).await?;
    assert_eq!(sq.count, readings.len() as u64);
    let want: Vec<u32> = (0..P::N)
        .map(|i| (readings.iter().map(|v| (v[i] as i64).pow(2)).sum::<i64>() % t) as u32)
        .collect();
    let got = device.decrypt(&sq.ciphertext)?;
    assert_eq!(got, want);
    // The same check catches a wrong result: the plain sum is not the sum of squares.
    let sum = device.decrypt(&f.owner.aggregate("q", &AggregateOp::Sum).await?.ciphertext)?;
    assert_ne!(sum, want);

    // dot: signed weights reduced mod t, a zero weight, one weight per upload.
    let weights = vec![3i64, -2, 0, 1, 65_537 + 5, -65_537 * 2 - 1, 7];
    let dot = f
        .owner
        .aggregate("q", &AggregateOp::Dot(weights.clone()))
        .await?;
    let want: Vec<u32> = (0..P::N)
        .map(|i| {
            let s: i64 = readings
                .iter()
                .zip(&weights)
                .map(|(v, &w)| w * v[i] as i64)
                .sum();
            s.rem_euclid(t) as u32
        })
        .collect();
    assert_eq!(device.decrypt(&dot.ciphertext)?, want);
    let err = f
        .owner
        .aggregate("q", &AggregateOp::Dot(vec![0, 65_537, 0, 0, 0, 0, -65_537]))
        .await
        .err()
        .ok_or("zero weights accepted")?;
    assert_eq!(err.status().map(|s| s.as_u16()), Some(400), "{err}");
    f.service.shutdown().await?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn start_keys_are_checked() -> TestResult {
    let device = Device::new(4)?;
    let dir = tempfile::tempdir()?;
    let store = Arc::new(SqliteStore::open(dir.path())?);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let keys = StartKeys {
        relin: Some(device.encrypt_seeded(&slots(|i| i as u32))?),
        galois: None,
    };
    match start(listener, store, ServiceConfig::new(Preset::Seal4096), keys).await {
        Err(zeppelin_service::StartError::Keys {
            what: "relin.seal", ..
        }) => Ok(()),
        Err(e) => Err(format!("wrong error: {e}").into()),
        Ok(_) => Err("started with a ciphertext as relin keys".into()),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stream_limit_is_enforced() -> TestResult {
    let mut config = ServiceConfig::new(Preset::Seal4096);
    config.max_uploads_per_stream = 3;
    let f = fixture_with(config, StartKeys::default()).await?;
    let device = Device::new(4)?;
    let ct = device.encrypt_seeded(&slots(|i| i as u32))?;
    for i in 0..3 {
        f.client
            .upload("full", ct.clone(), Some(&format!("k{i}")))
            .await?;
    }
    let err = f
        .client
        .upload("full", ct.clone(), Some("k3"))
        .await
        .err()
        .ok_or("4th accepted")?;
    assert_eq!(err.status().map(|s| s.as_u16()), Some(409), "{err}");
    assert!(err.to_string().contains("maximum of 3"), "{err}");
    // A retry of a stored upload is still answered with its id.
    assert_eq!(f.client.upload("full", ct, Some("k1")).await?.id, "2");
    assert_eq!(f.owner.status("full").await?.count, 3);
    f.service.shutdown().await?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_body_is_cut_with_408_and_health_stays_outside_the_in_flight_limit() -> TestResult {
    let mut config = ServiceConfig::new(Preset::Seal4096);
    config.max_in_flight = 1;
    config.request_timeout = Duration::from_secs(1);
    config.body_min_rate = zeppelin_service::BodyRate {
        bytes: 1024,
        window: Duration::from_secs(1),
    };
    let f = fixture_with(config, StartKeys::default()).await?;
    let addr = f.service.url().trim_start_matches("http://").to_owned();
    // A body that never finishes: it is read outside the in-flight limit, at a minimum rate.
    let mut slow = tokio::net::TcpStream::connect(&addr).await?;
    slow.write_all(format!("POST /v1/streams/s/ciphertexts HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {DEVICE_TOKEN}\r\nContent-Length: 1000\r\n\r\nabc").as_bytes()).await?;
    tokio::time::sleep(Duration::from_millis(200)).await;
    let (s, _, b) = raw(f.service.url(), "GET", "/v1/health", &[], b"").await?;
    assert_eq!(s, 200, "{b}");
    let (s, _, b) = raw(f.service.url(), "GET", "/v1/streams", AS_OWNER, b"").await?;
    assert_eq!(s, 200, "{b}");
    // Below 1 KiB in its 1 s window: 408, and the connection is closed.
    let mut answer = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), slow.read_to_end(&mut answer)).await??;
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(
        answer.contains("slower than 1024 bytes per 1 s"),
        "{answer}"
    );
    assert_eq!(f.client.health().await?, "seal4096");
    f.service.shutdown().await?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_keeps_every_acknowledged_upload() -> TestResult {
    let f = fixture().await?;
    let device = Device::new(5)?;
    let ct = bytes::Bytes::from(device.encrypt_seeded(&slots(|i| i as u32))?);
    let mut tasks = Vec::new();
    for c in 0..16 {
        let (client, ct) = (f.client.clone(), ct.clone());
        tasks.push(tokio::spawn(async move {
            let mut acked = 0u64;
            for i in 0..1000 {
                match client
                    .upload("sd", ct.clone(), Some(&format!("{c}/{i}")))
                    .await
                {
                    Ok(_) => acked += 1,
                    Err(_) => break,
                }
            }
            acked
        }));
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let url = f.service.url().to_owned();
    f.service.shutdown().await?;
    let mut acked = 0;
    for t in tasks {
        acked += t.await?;
    }
    assert!(acked > 0 && acked < 16_000, "acked {acked}");
    // After shutdown nothing listens.
    assert!(Client::new(&url)?.health().await.is_err());
    // Every acknowledged upload is stored; at most the requests refused mid-flight are not.
    let store = SqliteStore::open(&f.data)?;
    let name = zeppelin_service::names::StreamName::new("sd")?;
    let count = store.stream_info(&name).await?.map_or(0, |i| i.count);
    assert!(
        count >= acked && count <= acked + 16,
        "stored {count}, acknowledged {acked}"
    );
    store.close().await?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn data_dir_of_another_schema_version_is_refused() -> TestResult {
    let dir = tempfile::tempdir()?;
    SqliteStore::open(dir.path())?.close().await?;
    let db = dir.path().join(zeppelin_service::store::DB_FILE);
    rusqlite::Connection::open(&db)?.execute_batch("PRAGMA user_version = 1;")?;
    match SqliteStore::open(dir.path()) {
        Err(StoreError::SchemaVersion {
            found: 1,
            expected: zeppelin_service::store::SCHEMA_VERSION,
            ..
        }) => {}
        Err(e) => return Err(format!("wrong error {e}").into()),
        Ok(_) => return Err("opened".into()),
    }
    let other = tempfile::tempdir()?;
    rusqlite::Connection::open(other.path().join(zeppelin_service::store::DB_FILE))?
        .execute_batch("CREATE TABLE t (x);")?;
    assert!(matches!(
        SqliteStore::open(other.path()),
        Err(StoreError::NotAStore { .. })
    ));
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_seal8192_service_refuses_seal4096_ciphertexts() -> TestResult {
    let f = fixture_with(ServiceConfig::new(Preset::Seal8192), StartKeys::default()).await?;
    assert_eq!(f.client.health().await?, "seal8192");
    let device = Device::new(6)?;
    let err = f
        .client
        .upload("s", device.encrypt_seeded(&slots(|i| i as u32))?, None)
        .await
        .err()
        .ok_or("accepted a seal4096 ciphertext")?;
    assert_eq!(err.status().map(|s| s.as_u16()), Some(400), "{err}");
    assert_eq!(Preset::Seal8192.max_upload_bytes(), 917_617);
    assert_eq!(Preset::Seal4096.max_upload_bytes(), 196_721);
    f.service.shutdown().await?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_count_uploads_aggregations_and_errors() -> TestResult {
    let f = fixture().await?;
    let device = Device::new(9)?;
    let mut stored_bytes = 0usize;
    for r in 0..3u32 {
        let wire = device.encrypt_seeded(&slots(|i| (i as u32 + r) % 1000))?;
        stored_bytes += wire.len();
        f.client
            .upload("m", wire.clone(), Some(&format!("k{r}")))
            .await?;
        if r == 0 {
            // The same key and bytes again: a duplicate, no bytes counted.
            assert!(f.client.upload("m", wire, Some("k0")).await?.replayed);
        }
    }
    // A rejected upload (not a ciphertext) and an aggregation of a missing stream.
    let (status, _, _) = raw(
        f.service.url(),
        "POST",
        "/v1/streams/m/ciphertexts",
        AS_DEVICE,
        b"junk",
    )
    .await?;
    assert_eq!(status, 400);
    let (status, _, _) = raw(
        f.service.url(),
        "POST",
        "/v1/streams/none/aggregate",
        AS_OWNER,
        br#"{"op":"sum"}"#,
    )
    .await?;
    assert_eq!(status, 404);
    let sum = f.owner.aggregate("m", &AggregateOp::Sum).await?;
    assert_eq!(sum.count, 3);

    let (status, head, text) = raw(f.service.url(), "GET", "/metrics", AS_OWNER, b"").await?;
    assert_eq!(status, 200);
    assert!(
        head.to_ascii_lowercase()
            .contains("content-type: text/plain; version=0.0.4"),
        "{head}"
    );
    for line in [
        r#"zeppelin_uploads_total{result="stored"} 3"#.to_owned(),
        r#"zeppelin_uploads_total{result="duplicate"} 1"#.to_owned(),
        r#"zeppelin_uploads_total{result="rejected"} 1"#.to_owned(),
        format!("zeppelin_upload_bytes_total {stored_bytes}"),
        r#"zeppelin_aggregations_total{op="sum",result="ok"} 1"#.to_owned(),
        r#"zeppelin_aggregations_total{op="sum",result="error"} 1"#.to_owned(),
        "zeppelin_aggregated_ciphertexts_total 3".to_owned(),
        r#"zeppelin_errors_total{kind="bad_request"} 1"#.to_owned(),
        r#"zeppelin_errors_total{kind="not_found"} 1"#.to_owned(),
    ] {
        assert!(
            text.lines().any(|l| l == line),
            "missing {line:?} in\n{text}"
        );
    }
    f.service.shutdown().await?;
    Ok(())
}
