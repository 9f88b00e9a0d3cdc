//! Issue 28 item 3 with the real binaries: `zeppelin serve --store tls://USER:PASS@...`
//! and two `zeppelin worker --nats-nkey ... --nats-ca ...` processes against a
//! `nats-server` that requires TLS and authenticates every user, with the permissions of the
//! sample configuration in docs/server.md ("Securing the bus"): the service user, the worker
//! user (nkey) and an MQTT device user that may only publish to its stream's upload subjects.
//!
//! - uploads over HTTP and over MQTT (receipted), a sum over HTTP that decrypts to the
//!   truth: every part works under those permissions;
//! - the device user cannot connect as a NATS client, and its MQTT publish to another
//!   stream is not stored;
//! - with `ZEPPELIN_LOG=debug` no log line of serve or the workers holds the password, the
//!   nkey seed or the device's password; a wrong password fails the start with the URL
//!   redacted; `--help` does not show the URL from the environment;
//! - `zeppelin cluster-key new` writes a 0600 file and never replaces one; serve without
//!   the cluster key and a worker with a key file others may read refuse to start.

#[path = "../../service/tests/common/mod.rs"]
mod common;
mod credentials;
#[path = "../../cluster/tests/support/mqtt_device.rs"]
mod mqtt_device;
#[path = "../../cluster/tests/node/mod.rs"]
mod node;
#[path = "../../cluster/tests/support/pki.rs"]
mod pki;
#[path = "../../cluster/tests/support/process.rs"]
mod process;

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use common::{slots, Device, P};
use mqtt_device::{MqttDevice, ReceiptAnswer};
use node::{Node, TestResult};
use pki::Pki;
use process::spawn_ready;
use zeppelin::Params;
use zeppelin_service::client::Client;
use zeppelin_service::AggregateOp;

const SERVICE_PASSWORD: &str = "svc-pw-7Hq2-never-logged";
const DEVICE_PASSWORD: &str = "dev-pw-3Lm9-never-logged";
const WRONG_PASSWORD: &str = "wrong-pw-9Xx1";

fn zeppelin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_zeppelin"));
    c.env_remove("ZEPPELIN_STORE")
        .env_remove("ZEPPELIN_NATS")
        .env_remove("ZEPPELIN_CLUSTER_KEY")
        .env_remove("ZEPPELIN_DATA");
    c
}

/// The nats-server users and permissions of docs/server.md's sample (one account), with the
/// test's passwords and the worker's public nkey.
fn authorization(worker_nkey: &str) -> String {
    format!(
        r#"
SERVICE = {{
  publish: ["zeppelin.>", "$JS.API.>", "$JS.ACK.>", "$JS.FC.>", "$O.zeppelin-partials.>"]
  subscribe: ["_INBOX.>"]
}}
WORKER = {{
  publish: ["$JS.API.>", "$JS.ACK.>", "$JS.FC.>", "$O.zeppelin-partials.>"]
  subscribe: ["_INBOX.>"]
}}
authorization {{
  users = [
    {{user: zeppelin-service, password: "{SERVICE_PASSWORD}", permissions: $SERVICE}}
    {{nkey: {worker_nkey}, permissions: $WORKER}}
    {{user: meter-1, password: "{DEVICE_PASSWORD}", allowed_connection_types: ["MQTT"],
      permissions: {{
        publish: ["zeppelin.up.meters.>"]
        subscribe: ["zeppelin.receipt.meters.>", "$MQTT.sub.>"]
      }}}}
  ]
}}
"#
    )
}

/// Output of a run expected to fail: its stderr.
fn failing(cmd: &mut Command) -> TestResult<String> {
    let out = cmd.output()?;
    assert!(!out.status.success(), "{cmd:?} succeeded");
    Ok(String::from_utf8_lossy(&out.stderr).into_owned())
}

fn assert_no_secret(what: &str, text: &str, secrets: &[&str]) {
    for s in secrets {
        assert!(!text.contains(s), "{what} holds a secret:\n{text}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn serve_and_workers_on_an_authenticated_tls_bus() -> TestResult {
    let dir = tempfile::tempdir()?;
    let path = |f: &str| dir.path().join(f);
    let pki = Pki::new(dir.path())?;
    let worker_user = nkeys::KeyPair::new_user();
    let seed = worker_user.seed()?;
    let seed_file = path("worker.nk");
    std::fs::write(&seed_file, format!("{seed}\n"))?;
    std::fs::set_permissions(&seed_file, std::fs::Permissions::from_mode(0o600))?;
    let node = Node::start_with(&format!(
        "{}{}",
        pki.nats_tls_block(false),
        authorization(&worker_user.public_key())
    ))?;
    let port = node.port;
    let ca = pki.path("ca.pem");
    let secrets = [SERVICE_PASSWORD, DEVICE_PASSWORD, seed.as_str()];

    // The cluster key: 0600, never replaced.
    let key = path("cluster.key");
    let out = zeppelin().args(["cluster-key", "new"]).arg(&key).output()?;
    assert!(out.status.success(), "{out:?}");
    assert_eq!(std::fs::metadata(&key)?.permissions().mode() & 0o777, 0o600);
    let before = std::fs::read(&key)?;
    assert_eq!(before.len(), 32);
    let again = failing(zeppelin().args(["cluster-key", "new"]).arg(&key))?;
    assert!(again.contains("exists"), "{again}");
    assert_eq!(std::fs::read(&key)?, before);

    let keys = path("keys");
    let keygen = zeppelin().args(["keygen", "--dir"]).arg(&keys).output()?;
    assert!(keygen.status.success(), "{keygen:?}");
    let auth = path("auth");
    let creds = credentials::issue(&auth, "meter-http", &["meters"])?;
    let store_url = format!("tls://zeppelin-service:{SERVICE_PASSWORD}@127.0.0.1:{port}");
    let serve = |store: &str| {
        let mut c = zeppelin();
        c.args(["serve", "--listen", "127.0.0.1:0", "--replicas", "1"])
            .args(["--shard-size", "3", "--keys"])
            .arg(&keys)
            .arg("--auth-dir")
            .arg(&auth)
            .arg("--nats-ca")
            .arg(&ca)
            .env("ZEPPELIN_STORE", store)
            .env("ZEPPELIN_LOG", "debug");
        c
    };

    // Refusals first: a wrong password (redacted in the error), no cluster key, a key file
    // others may read, a worker without credentials.
    let wrong = failing(
        serve(&format!(
            "tls://zeppelin-service:{WRONG_PASSWORD}@127.0.0.1:{port}"
        ))
        .arg("--cluster-key")
        .arg(&key),
    )?;
    assert!(
        wrong.contains("authorization violation") && wrong.contains("tls://***@127.0.0.1"),
        "{wrong}"
    );
    assert_no_secret("the wrong-password error", &wrong, &[WRONG_PASSWORD]);
    let no_key = failing(&mut serve(&store_url))?;
    assert!(no_key.contains("--cluster-key"), "{no_key}");
    assert_no_secret("the no-key error", &no_key, &secrets);
    let open_key = path("open.key");
    std::fs::write(&open_key, &before)?;
    std::fs::set_permissions(&open_key, std::fs::Permissions::from_mode(0o644))?;
    let worker_cmd = |key_file: &Path| {
        let mut c = zeppelin();
        c.args(["worker", "--threads", "1", "--nats-nkey"])
            .arg(&seed_file)
            .arg("--nats-ca")
            .arg(&ca)
            .arg("--cluster-key")
            .arg(key_file)
            .env("ZEPPELIN_NATS", format!("tls://127.0.0.1:{port}"))
            .env("ZEPPELIN_LOG", "debug");
        c
    };
    let open = failing(&mut worker_cmd(&open_key))?;
    assert!(open.contains("chmod 600"), "{open}");
    let anonymous = failing(
        zeppelin()
            .args(["worker", "--nats", &format!("tls://127.0.0.1:{port}")])
            .arg("--nats-ca")
            .arg(&ca)
            .arg("--cluster-key")
            .arg(&key),
    )?;
    assert!(anonymous.contains("authorization violation"), "{anonymous}");
    let help = zeppelin()
        .args(["serve", "--help"])
        .env("ZEPPELIN_STORE", &store_url)
        .output()?;
    assert_no_secret(
        "serve --help",
        &String::from_utf8_lossy(&help.stdout),
        &secrets,
    );

    // The service and two workers.
    let serve_log = path("serve.log");
    let (_serve, line) = tokio::task::block_in_place(|| {
        spawn_ready(
            serve(&store_url).arg("--cluster-key").arg(&key),
            &serve_log,
            "listening on ",
        )
    })?;
    let url = line
        .strip_prefix("listening on ")
        .ok_or("no URL")?
        .to_owned();
    let mut workers = Vec::new();
    for w in 0..2 {
        let log = path(&format!("worker{w}.log"));
        workers.push(tokio::task::block_in_place(|| {
            spawn_ready(&mut worker_cmd(&key), &log, "worker ready")
        })?);
    }

    // Uploads: four over HTTP, three over MQTT as the device user.
    let device = Device::new(12)?;
    let http = Client::new(&url)?.with_token(&creds.device);
    let owner = Client::new(&url)?.with_token(&creds.owner);
    let mut plain = Vec::new();
    for i in 0..4usize {
        let s = slots(|slot| ((i * 11 + slot) % 300) as u32);
        http.upload("meters", device.encrypt_seeded(&s)?, Some(&format!("h{i}")))
            .await?;
        plain.push(s);
    }
    let mut mqtt = MqttDevice::new("meter-1", vec![node.mqtt_port], 0)
        .with_credentials("meter-1", DEVICE_PASSWORD);
    let deadline = Instant::now() + Duration::from_secs(60);
    for i in 0..3usize {
        let s = slots(|slot| ((i * 17 + slot * 2) % 300) as u32);
        let body = bytes::Bytes::from(device.encrypt_seeded(&s)?);
        let answer = mqtt
            .upload(
                "meters",
                &format!("m{i}"),
                body,
                Duration::from_secs(10),
                deadline,
            )
            .await?;
        assert!(matches!(answer, ReceiptAnswer::Stored(_)), "{answer:?}");
        plain.push(s);
    }
    // The device user: no NATS client connection, no publish to another stream.
    let as_client = zeppelin_cluster::connect::connect(
        &zeppelin_cluster::connect::NatsOptions {
            ca: Some(ca.clone()),
            ..zeppelin_cluster::connect::NatsOptions::new(format!(
                "tls://meter-1:{DEVICE_PASSWORD}@127.0.0.1:{port}"
            ))
        },
        "test",
    )
    .await;
    assert!(
        as_client.is_err(),
        "the MQTT-only user connected as a NATS client"
    );
    let mut intruder = MqttDevice::new("meter-1b", vec![node.mqtt_port], 0)
        .with_credentials("meter-1", DEVICE_PASSWORD);
    let other = intruder
        .upload(
            "other",
            "x0",
            bytes::Bytes::from(device.encrypt_seeded(&slots(|_| 1))?),
            Duration::from_secs(2),
            Instant::now() + Duration::from_secs(5),
        )
        .await;
    assert!(
        other.is_err(),
        "a publish to another stream was receipted: {other:?}"
    );
    assert!(
        owner.status("other").await.is_err(),
        "the other stream exists"
    );

    // The sum, by the workers, over all seven.
    let sum = owner.aggregate("meters", &AggregateOp::Sum).await?;
    assert_eq!(sum.count, 7);
    let got = device.decrypt(&sum.ciphertext)?;
    for (slot, value) in got.iter().enumerate() {
        let truth: u64 = plain.iter().map(|p| u64::from(p[slot])).sum();
        assert_eq!(u64::from(*value), truth % u64::from(P::T), "slot {slot}");
    }

    drop(workers);
    drop(_serve);
    for log in ["serve.log", "worker0.log", "worker1.log"] {
        let text = std::fs::read_to_string(path(log))?;
        assert!(!text.is_empty(), "{log} is empty");
        assert_no_secret(log, &text, &secrets);
    }
    // The debug log did record the connection (so the check above looked at something).
    let serve_text = std::fs::read_to_string(&serve_log)?;
    assert!(
        serve_text.contains("tls://***@127.0.0.1"),
        "no redacted URL in the serve log"
    );
    Ok(())
}
