//! Issue 28 item 3, the connection side, against real single `nats-server` nodes that
//! require authentication or TLS (configs written here, certificates made with `openssl`):
//!
//! - users with passwords and nkeys: no credentials and a wrong password are refused, the
//!   user and password in the URL and an nkey seed file work (JetStream too); an nkey file
//!   others may read is refused before connecting;
//! - a token in the URL;
//! - a `.creds` file (user JWT and seed) against an operator-mode server whose operator,
//!   account and user JWTs are made here with `nkeys` (memory resolver);
//! - `tls://` with the test CA (`NatsOptions::ca`) works, without it the server's
//!   certificate is refused; a server requiring client certificates refuses a client without
//!   one and takes one with the CA's client certificate and its key;
//! - no error message holds a password, token or seed.

mod node;
#[path = "support/pki.rs"]
mod pki;

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use bytes::Bytes;
use node::{Node, TestResult};
use pki::Pki;
use zeppelin_cluster::connect::{connect, ConnectError, NatsOptions};
use zeppelin_cluster::NatsStore;
use zeppelin_service::names::StreamName;
use zeppelin_service::store::{AppendRequest, UploadStore};

const PASSWORD: &str = "pw-Zk3q9-never-logged";
const TOKEN: &str = "tok-Yh27-never-logged";

/// Connects, or the error's text.
async fn try_connect(options: &NatsOptions) -> Result<async_nats::Client, String> {
    connect(options, "zeppelin-test").await.map_err(|e| {
        let text = e.to_string();
        let debug = format!("{e:?}");
        for secret in [PASSWORD, TOKEN, "wrong-pw-Qx81"] {
            assert!(!text.contains(secret), "secret in the error: {text}");
            assert!(!debug.contains(secret), "secret in the error: {debug}");
        }
        text
    })
}

/// A secret file with `mode`.
fn secret_file(path: &Path, text: &str, mode: u32) -> TestResult {
    std::fs::write(path, text)?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))?;
    Ok(())
}

/// Appends one upload through `client` (JetStream works for the user).
async fn append_one(client: async_nats::Client) -> TestResult {
    let store = NatsStore::open(client, 1).await?;
    store
        .append(AppendRequest {
            stream: StreamName::new("auth")?,
            key: None,
            device: None,
            body: Bytes::from_static(b"opaque"),
            max_uploads: 10,
        })
        .await?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn users_with_passwords_and_nkeys_are_required_and_work() -> TestResult {
    let user = nkeys::KeyPair::new_user();
    let node = Node::start_with(&format!(
        "authorization {{ users = [ {{user: svc, password: \"{PASSWORD}\"}}, {{nkey: {}}} ] }}",
        user.public_key()
    ))?;
    let url_with = |userinfo: &str| format!("nats://{userinfo}@127.0.0.1:{}", node.port);

    let refused = try_connect(&NatsOptions::new(&node.url)).await;
    let refused = refused.err().ok_or("connected without credentials")?;
    assert!(refused.contains("authorization violation"), "{refused}");
    let wrong = try_connect(&NatsOptions::new(url_with("svc:wrong-pw-Qx81"))).await;
    let wrong = wrong.err().ok_or("connected with a wrong password")?;
    assert!(wrong.contains("nats://***@127.0.0.1"), "{wrong}");

    let client = try_connect(&NatsOptions::new(url_with(&format!("svc:{PASSWORD}")))).await?;
    append_one(client).await?;

    let dir = tempfile::tempdir()?;
    let seed_file = dir.path().join("worker.nk");
    let seed = user.seed()?;
    secret_file(&seed_file, &format!("{seed}\n"), 0o600)?;
    let nkey = NatsOptions {
        nkey: Some(seed_file.clone()),
        ..NatsOptions::new(&node.url)
    };
    append_one(try_connect(&nkey).await?).await?;

    // Readable by others: refused before any connection, naming the file, not the seed.
    std::fs::set_permissions(&seed_file, std::fs::Permissions::from_mode(0o644))?;
    match connect(&nkey, "zeppelin-test").await {
        Err(e @ ConnectError::Secret(_)) => {
            let text = e.to_string();
            assert!(
                text.contains("worker.nk") && text.contains("0644"),
                "{text}"
            );
            assert!(!text.contains(&seed), "{text}");
        }
        other => return Err(format!("expected a permission error, got {other:?}").into()),
    }
    // Another user's seed is refused by the server.
    let other = nkeys::KeyPair::new_user().seed()?;
    secret_file(&seed_file, &other, 0o600)?;
    let refused = try_connect(&nkey).await;
    assert!(refused.is_err(), "connected with an unknown nkey");
    // Not a seed: refused without showing it.
    secret_file(&seed_file, "hello-not-a-seed", 0o600)?;
    let text = try_connect(&nkey).await.err().unwrap_or_default();
    assert!(
        text.contains("not an nkey seed") && !text.contains("hello-not"),
        "{text}"
    );
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_in_the_url_is_required_and_works() -> TestResult {
    let node = Node::start_with(&format!("authorization {{ token: \"{TOKEN}\" }}"))?;
    assert!(try_connect(&NatsOptions::new(&node.url)).await.is_err());
    let client = try_connect(&NatsOptions::new(format!(
        "nats://{TOKEN}@127.0.0.1:{}",
        node.port
    )))
    .await?;
    append_one(client).await?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tls_with_a_private_ca_and_client_certificates() -> TestResult {
    let dir = tempfile::tempdir()?;
    let pki = Pki::new(dir.path())?;
    let ca = Some(pki.path("ca.pem"));

    // Server TLS only.
    let node = Node::start_with(&pki.nats_tls_block(false))?;
    let tls_url = format!("tls://127.0.0.1:{}", node.port);
    let client = try_connect(&NatsOptions {
        ca: ca.clone(),
        ..NatsOptions::new(&tls_url)
    })
    .await?;
    append_one(client).await?;
    // nats:// with a CA: TLS is required all the same.
    let client = try_connect(&NatsOptions {
        ca: ca.clone(),
        ..NatsOptions::new(&node.url)
    })
    .await?;
    client.flush().await?;
    // Without the CA the server's certificate is not trusted.
    let untrusted = try_connect(&NatsOptions::new(&tls_url)).await;
    let untrusted = untrusted
        .err()
        .ok_or("trusted a certificate of an unknown CA")?;
    assert!(untrusted.contains("UnknownIssuer"), "{untrusted}");
    drop(node);

    // Mutual TLS, plus a password.
    let node = Node::start_with(&format!(
        "{}authorization {{ users = [ {{user: svc, password: \"{PASSWORD}\"}} ] }}",
        pki.nats_tls_block(true)
    ))?;
    let url = format!("tls://svc:{PASSWORD}@127.0.0.1:{}", node.port);
    let no_cert = try_connect(&NatsOptions {
        ca: ca.clone(),
        ..NatsOptions::new(&url)
    })
    .await;
    let no_cert = no_cert
        .err()
        .ok_or("connected without a client certificate")?;
    assert!(no_cert.to_lowercase().contains("certificate"), "{no_cert}");
    let client = try_connect(&NatsOptions {
        ca,
        cert: Some(pki.path("client.pem")),
        key: Some(pki.path("client.key")),
        ..NatsOptions::new(&url)
    })
    .await?;
    append_one(client).await?;
    Ok(())
}

/// Base64url without padding (JWT encoding).
fn b64url(bytes: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..=chunk.len() {
            out.push(char::from(A[((n >> (18 - 6 * i)) & 63) as usize]));
        }
    }
    out
}

/// A NATS JWT (ed25519-nkey) with `claims`, signed by `issuer`.
fn jwt(issuer: &nkeys::KeyPair, claims: serde_json::Value) -> TestResult<String> {
    let header = b64url(br#"{"typ":"JWT","alg":"ed25519-nkey"}"#);
    let body = b64url(serde_json::to_string(&claims)?.as_bytes());
    let signed = format!("{header}.{body}");
    let signature = issuer.sign(signed.as_bytes())?;
    Ok(format!("{signed}.{}", b64url(&signature)))
}

/// Claims of `kind` for `subject`, issued by `issuer`.
fn claims(
    issuer: &nkeys::KeyPair,
    subject: &str,
    name: &str,
    nats: serde_json::Value,
) -> serde_json::Value {
    serde_json::json!({
        "jti": format!("{name}-{}", subject.len()),
        "iat": 1_700_000_000u64,
        "iss": issuer.public_key(),
        "name": name,
        "sub": subject,
        "nats": nats,
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_creds_file_of_an_operator_mode_server_works() -> TestResult {
    let operator = nkeys::KeyPair::new_operator();
    let account = nkeys::KeyPair::new_account();
    let user = nkeys::KeyPair::new_user();
    let operator_jwt = jwt(
        &operator,
        claims(
            &operator,
            &operator.public_key(),
            "op",
            serde_json::json!({"type": "operator", "version": 2}),
        ),
    )?;
    let unlimited = serde_json::json!({
        "subs": -1, "data": -1, "payload": -1, "imports": -1, "exports": -1,
        "wildcards": true, "conn": -1, "leaf": -1,
        "mem_storage": -1, "disk_storage": -1, "streams": -1, "consumer": -1,
    });
    let account_jwt = jwt(
        &operator,
        claims(
            &operator,
            &account.public_key(),
            "zeppelin",
            serde_json::json!({"type": "account", "version": 2, "limits": unlimited}),
        ),
    )?;
    let user_jwt = jwt(
        &account,
        claims(
            &account,
            &user.public_key(),
            "zeppelin-service",
            serde_json::json!({"type": "user", "version": 2, "pub": {}, "sub": {},
                               "subs": -1, "data": -1, "payload": -1}),
        ),
    )?;
    // JetStream in operator mode needs a system account.
    let system = nkeys::KeyPair::new_account();
    let system_jwt = jwt(
        &operator,
        claims(
            &operator,
            &system.public_key(),
            "SYS",
            serde_json::json!({"type": "account", "version": 2}),
        ),
    )?;
    let node = Node::start_with(&format!(
        "operator: {operator_jwt}\nsystem_account: {sys}\nresolver: MEMORY\n\
         resolver_preload: {{ {sys}: {system_jwt}, {acc}: {account_jwt} }}\n",
        sys = system.public_key(),
        acc = account.public_key()
    ))?;
    let dir = tempfile::tempdir()?;
    let creds = dir.path().join("service.creds");
    secret_file(
        &creds,
        &format!(
            "-----BEGIN NATS USER JWT-----\n{user_jwt}\n------END NATS USER JWT------\n\n\
             ************************* IMPORTANT *************************\n\
             NKEY Seed printed below can be used to sign and prove identity.\n\n\
             -----BEGIN USER NKEY SEED-----\n{}\n------END USER NKEY SEED------\n",
            user.seed()?
        ),
        0o600,
    )?;
    assert!(
        try_connect(&NatsOptions::new(&node.url)).await.is_err(),
        "connected to an operator-mode server without credentials"
    );
    let client = try_connect(&NatsOptions {
        creds: Some(creds),
        ..NatsOptions::new(&node.url)
    })
    .await
    .map_err(|e| format!("{e}; server log:\n{}", node.log()))?;
    append_one(client).await?;
    Ok(())
}
