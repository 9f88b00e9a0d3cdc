//! Issue 28 (identities and roles) against the real `zeppelin serve` binary on loopback:
//! every attack of the issue that credentials answer is tried and refused with a JSON 401 or
//! 403, health answers throughout, and the owner still decrypts the right sums afterwards
//! (with `zeppelin decrypt` and the owner's secret key: an independent check that no key was
//! replaced and no foreign upload counted).
//!
//! - anonymous: key PUT, upload, stream list and state, aggregation, metrics: 401;
//! - a device: key PUT, reads, aggregation, metrics: 403; upload to a stream it is not
//!   registered for: 403;
//! - a device squatting another device's idempotency key: the victim's genuine upload is
//!   still 201 (not "replayed") and counted;
//! - a wrong token, a token with another device's name, a revoked device: 401 (the running
//!   server sees `zeppelin devices revoke` at its next request);
//! - the registry and `devices list` never hold a token; owner.token is 0600;
//! - plain HTTP on a non-loopback address is refused without `--insecure-listen`.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

type TestResult<T = ()> = Result<T, Box<dyn std::error::Error + Send + Sync>>;

fn zeppelin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_zeppelin"))
}

/// Runs `cmd`; its stdout when it succeeds.
fn run(cmd: &mut Command) -> TestResult<String> {
    let out = cmd.output()?;
    if !out.status.success() {
        return Err(format!("{cmd:?}: {}", String::from_utf8_lossy(&out.stderr)).into());
    }
    Ok(String::from_utf8(out.stdout)?)
}

/// A server child, killed when the test ends.
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn serve(data: &Path, keys: &Path) -> TestResult<(Server, String)> {
    let mut child = zeppelin()
        .args(["serve", "--listen", "127.0.0.1:0", "--data"])
        .arg(data)
        .arg("--keys")
        .arg(keys)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()?;
    let stdout = child.stdout.take().ok_or("no stdout")?;
    let child = Server(child);
    let mut line = String::new();
    BufReader::new(stdout).read_line(&mut line)?;
    let addr = line
        .trim()
        .strip_prefix("listening on http://")
        .ok_or_else(|| format!("unexpected first line {line:?}"))?
        .to_owned();
    Ok((child, addr))
}

/// One answer: status, headers (lower case), body.
struct Answer {
    status: u16,
    head: String,
    body: Vec<u8>,
}

impl Answer {
    /// The `error` text of a JSON error body (fails if the body is not one).
    fn error(&self) -> TestResult<String> {
        assert!(
            self.head.contains("content-type: application/json"),
            "{}",
            self.head
        );
        let v: serde_json::Value = serde_json::from_slice(&self.body)?;
        Ok(v.get("error")
            .and_then(|e| e.as_str())
            .ok_or("no error text")?
            .to_owned())
    }

    fn json(&self) -> TestResult<serde_json::Value> {
        Ok(serde_json::from_slice(&self.body)?)
    }
}

/// One HTTP/1.1 request on its own connection (bounded by a 60 s read timeout).
fn request(
    addr: &str,
    method: &str,
    path: &str,
    token: Option<&str>,
    extra: &[(&str, &str)],
    body: &[u8],
) -> TestResult<Answer> {
    let mut s = TcpStream::connect(addr)?;
    s.set_read_timeout(Some(Duration::from_secs(60)))?;
    let mut head = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    if let Some(t) = token {
        head.push_str(&format!("Authorization: Bearer {t}\r\n"));
    }
    for (k, v) in extra {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    // As curl does: the body only after "100 Continue", so that a request refused before
    // its body is read (401, 403) is answered instead of reset mid-body.
    head.push_str("Expect: 100-continue\r\n\r\n");
    s.write_all(head.as_bytes())?;
    let mut all = Vec::new();
    let mut buf = [0u8; 4096];
    let interim = loop {
        let n = s.read(&mut buf)?;
        if n == 0 {
            break false;
        }
        all.extend_from_slice(&buf[..n]);
        if all.windows(4).any(|w| w == b"\r\n\r\n") {
            break all.starts_with(b"HTTP/1.1 100");
        }
    };
    if interim {
        all.clear();
        s.write_all(body)?;
    }
    s.read_to_end(&mut all)?;
    let split = all
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .ok_or("no end of headers")?;
    let head = String::from_utf8_lossy(&all[..split]).to_ascii_lowercase();
    let status = head.split(' ').nth(1).ok_or("no status")?.parse::<u16>()?;
    let mut body = all[split + 4..].to_vec();
    if head.contains("transfer-encoding: chunked") {
        body = dechunk(&body)?;
    }
    Ok(Answer { status, head, body })
}

fn dechunk(mut data: &[u8]) -> TestResult<Vec<u8>> {
    let mut out = Vec::new();
    loop {
        let end = data
            .windows(2)
            .position(|w| w == b"\r\n")
            .ok_or("bad chunk")?;
        let size = usize::from_str_radix(std::str::from_utf8(&data[..end])?.trim(), 16)?;
        if size == 0 {
            return Ok(out);
        }
        let start = end + 2;
        out.extend_from_slice(data.get(start..start + size).ok_or("short chunk")?);
        data = data.get(start + size + 2..).ok_or("short chunk")?;
    }
}

fn health_is_up(addr: &str) -> TestResult {
    let a = request(addr, "GET", "/v1/health", None, &[], b"")?;
    assert_eq!(
        a.status,
        200,
        "health: {}",
        String::from_utf8_lossy(&a.body)
    );
    Ok(())
}

/// Expects `status` with a JSON error body; returns its text.
fn refused(a: &Answer, status: u16, what: &str) -> TestResult<String> {
    assert_eq!(
        a.status,
        status,
        "{what}: {}",
        String::from_utf8_lossy(&a.body)
    );
    let text = a.error()?;
    assert!(text.len() < 300, "{what}: long error {text}");
    Ok(text)
}

/// Encrypts `values` (one per slot from 0) with the key directory `keys`.
fn encrypt(dir: &Path, keys: &Path, name: &str, values: &[u32]) -> TestResult<Vec<u8>> {
    let input = dir.join(format!("{name}.txt"));
    std::fs::write(
        &input,
        values.iter().map(|v| format!("{v}\n")).collect::<String>(),
    )?;
    let out = dir.join(format!("{name}.bin"));
    run(zeppelin()
        .args(["encrypt", "--mode", "seeded", "--dir"])
        .arg(keys)
        .arg("--in")
        .arg(&input)
        .arg("--out")
        .arg(&out))?;
    Ok(std::fs::read(out)?)
}

/// The first `n` slots of a SEAL ciphertext, decrypted with `keys`' secret key.
fn decrypt(dir: &Path, keys: &Path, ciphertext: &[u8], n: usize) -> TestResult<Vec<u64>> {
    let file = dir.join("result.seal");
    std::fs::write(&file, ciphertext)?;
    let out = run(zeppelin()
        .arg("decrypt")
        .arg("--dir")
        .arg(keys)
        .arg("--in")
        .arg(&file))?;
    out.lines()
        .take(n)
        .map(|l| Ok(l.trim().parse::<u64>()?))
        .collect()
}

fn add_device(data: &Path, name: &str, stream: &str) -> TestResult<String> {
    let out = run(zeppelin()
        .args(["devices", "add", "--data"])
        .arg(data)
        .args(["--device", name, "--stream", stream]))?;
    let token = out.trim().to_owned();
    assert!(token.starts_with(&format!("zpd.{name}.")), "{token}");
    Ok(token)
}

#[test]
fn every_credential_attack_is_refused_and_the_owner_decrypts_the_truth() -> TestResult {
    let dir = tempfile::tempdir()?;
    let (keys, foreign, data) = (
        dir.path().join("keys"),
        dir.path().join("foreign"),
        dir.path().join("data"),
    );
    for k in [&keys, &foreign] {
        run(zeppelin().arg("keygen").arg("--dir").arg(k))?;
        run(zeppelin().arg("keys").arg("--dir").arg(k).arg("--relin"))?;
    }
    let (_server, addr) = serve(&data, &keys)?;
    health_is_up(&addr)?;

    // The owner token was issued at first start, 0600; the registry holds digests only.
    let owner_file = data.join("owner.token");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&owner_file)?.permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "owner.token mode {mode:o}");
    }
    let owner = std::fs::read_to_string(&owner_file)?.trim().to_owned();
    let dev_a = add_device(&data, "dev-a", "t")?;
    let dev_b = add_device(&data, "dev-b", "t")?;
    let dev_c = add_device(&data, "dev-c", "u")?;
    let registry = std::fs::read_to_string(data.join("principals.json"))?;
    let listing = run(zeppelin().args(["devices", "list", "--data"]).arg(&data))?;
    for token in [&owner, &dev_a, &dev_b, &dev_c] {
        let secret = token.rsplit('.').next().ok_or("token")?;
        assert!(!registry.contains(secret) && !listing.contains(secret));
    }
    assert!(listing.contains("dev-a\tactive\tt"), "{listing}");

    let foreign_relin = std::fs::read(foreign.join("relin.seal"))?;
    let own_relin = std::fs::read(keys.join("relin.seal"))?;
    let ct_a = encrypt(dir.path(), &keys, "a", &[3, 5, 7])?;
    let ct_b = encrypt(dir.path(), &keys, "b", &[10, 20, 30])?;
    let ct_foreign = encrypt(dir.path(), &foreign, "f", &[1000, 1000, 1000])?;

    // Anonymous: keys, upload, every read, aggregation, metrics.
    for path in ["/v1/keys/relin", "/v1/keys/galois"] {
        let a = request(&addr, "PUT", path, None, &[], &foreign_relin)?;
        refused(&a, 401, "anonymous key PUT")?;
        assert!(a.head.contains("www-authenticate: bearer"), "{}", a.head);
    }
    let a = request(
        &addr,
        "POST",
        "/v1/streams/t/ciphertexts",
        None,
        &[],
        &ct_foreign,
    )?;
    refused(&a, 401, "anonymous upload")?;
    for path in ["/v1/streams", "/v1/streams/t", "/metrics"] {
        refused(
            &request(&addr, "GET", path, None, &[], b"")?,
            401,
            "anonymous read",
        )?;
    }
    let sum = br#"{"op":"sum"}"#;
    let a = request(&addr, "POST", "/v1/streams/t/aggregate", None, &[], sum)?;
    refused(&a, 401, "anonymous aggregate")?;
    // One-hot dot, the issue's way to read one device's upload: also the owner's only.
    let dot = br#"{"op":"dot","weights":[1,0]}"#;
    let a = request(&addr, "POST", "/v1/streams/t/aggregate", None, &[], dot)?;
    refused(&a, 401, "anonymous dot")?;
    health_is_up(&addr)?;

    // Wrong credentials: a flipped digit, another device's name on A's secret, a bare
    // secret, the owner's secret as a device token, garbage.
    let mut flipped = dev_a.clone();
    let last = if flipped.ends_with('0') { "1" } else { "0" };
    flipped.replace_range(flipped.len() - 1.., last);
    let renamed = dev_a.replacen("dev-a", "dev-b", 1);
    let bare = dev_a.rsplit('.').next().ok_or("token")?.to_owned();
    let owner_as_device = owner.replacen("zpo.", "zpd.dev-a.", 1);
    for (token, what) in [
        (flipped.as_str(), "flipped"),
        (renamed.as_str(), "renamed"),
        (bare.as_str(), "bare"),
        (owner_as_device.as_str(), "owner secret as device"),
        ("x", "garbage"),
    ] {
        let a = request(
            &addr,
            "POST",
            "/v1/streams/t/ciphertexts",
            Some(token),
            &[],
            &ct_a,
        )?;
        refused(&a, 401, what)?;
    }
    let a = request(
        &addr,
        "GET",
        "/v1/streams",
        None,
        &[("Authorization", "Basic b3duZXI6b3duZXI=")],
        b"",
    )?;
    refused(&a, 401, "basic auth")?;

    // A device may not do the owner's work.
    for path in ["/v1/keys/relin", "/v1/keys/galois"] {
        let a = request(&addr, "PUT", path, Some(&dev_a), &[], &foreign_relin)?;
        refused(&a, 403, "device key PUT")?;
    }
    for path in ["/v1/streams", "/v1/streams/t", "/metrics"] {
        let a = request(&addr, "GET", path, Some(&dev_a), &[], b"")?;
        refused(&a, 403, "device read")?;
    }
    let a = request(
        &addr,
        "POST",
        "/v1/streams/t/aggregate",
        Some(&dev_a),
        &[],
        sum,
    )?;
    refused(&a, 403, "device aggregate")?;
    // ... nor upload to a stream it is not registered for; nor does the owner upload.
    let a = request(
        &addr,
        "POST",
        "/v1/streams/t/ciphertexts",
        Some(&dev_c),
        &[],
        &ct_a,
    )?;
    let text = refused(&a, 403, "device C into stream t")?;
    assert!(
        text.contains("dev-c") && text.contains("stream t"),
        "{text}"
    );
    let a = request(
        &addr,
        "POST",
        "/v1/streams/t/ciphertexts",
        Some(&owner),
        &[],
        &ct_a,
    )?;
    refused(&a, 403, "owner upload")?;
    health_is_up(&addr)?;

    // Squatting: device A stores its own bytes under the key device B will use; B's
    // genuine upload with that key is still a new upload.
    let key = [("Idempotency-Key", "reading-1")];
    let a = request(
        &addr,
        "POST",
        "/v1/streams/t/ciphertexts",
        Some(&dev_a),
        &key,
        &ct_a,
    )?;
    assert_eq!(a.status, 201, "{}", String::from_utf8_lossy(&a.body));
    let b = request(
        &addr,
        "POST",
        "/v1/streams/t/ciphertexts",
        Some(&dev_b),
        &key,
        &ct_b,
    )?;
    assert_eq!(b.status, 201, "{}", String::from_utf8_lossy(&b.body));
    assert!(b.head.contains("idempotent-replayed: false"), "{}", b.head);
    assert_ne!(a.json()?["id"], b.json()?["id"]);
    // B's own retry is still recognised as B's.
    let again = request(
        &addr,
        "POST",
        "/v1/streams/t/ciphertexts",
        Some(&dev_b),
        &key,
        &ct_b,
    )?;
    assert_eq!(again.status, 201);
    assert!(
        again.head.contains("idempotent-replayed: true"),
        "{}",
        again.head
    );
    assert_eq!(again.json()?["id"], b.json()?["id"]);

    // Revocation reaches the running server at its next request.
    run(zeppelin()
        .args(["devices", "revoke", "--data"])
        .arg(&data)
        .args(["--device", "dev-b"]))?;
    let a = request(
        &addr,
        "POST",
        "/v1/streams/t/ciphertexts",
        Some(&dev_b),
        &[],
        &ct_foreign,
    )?;
    refused(&a, 401, "revoked device")?;
    assert!(
        run(zeppelin().args(["devices", "list", "--data"]).arg(&data))?
            .contains("dev-b\trevoked\tt")
    );
    health_is_up(&addr)?;

    // The owner: reads, the real keys, and sums that decrypt to the truth (3+10, 5+20,
    // 7+30 and their squares): no foreign upload and no foreign key took effect.
    let a = request(&addr, "GET", "/v1/streams/t", Some(&owner), &[], b"")?;
    assert_eq!(a.status, 200);
    assert_eq!(a.json()?["count"], 2);
    let a = request(&addr, "GET", "/metrics", Some(&owner), &[], b"")?;
    assert_eq!(a.status, 200);
    let a = request(
        &addr,
        "PUT",
        "/v1/keys/relin",
        Some(&owner),
        &[],
        &own_relin,
    )?;
    assert_eq!(a.status, 204, "{}", String::from_utf8_lossy(&a.body));
    let a = request(&addr, "PUT", "/v1/keys/relin", Some(&owner), &[], b"junk")?;
    refused(&a, 400, "owner junk keys")?;
    let a = request(
        &addr,
        "POST",
        "/v1/streams/t/aggregate",
        Some(&owner),
        &[],
        sum,
    )?;
    assert_eq!(a.status, 200);
    assert_eq!(decrypt(dir.path(), &keys, &a.body, 3)?, [13, 25, 37]);
    let squares = br#"{"op":"sum_of_squares"}"#;
    let a = request(
        &addr,
        "POST",
        "/v1/streams/t/aggregate",
        Some(&owner),
        &[],
        squares,
    )?;
    assert_eq!(a.status, 200, "{}", String::from_utf8_lossy(&a.body));
    assert_eq!(
        decrypt(dir.path(), &keys, &a.body, 3)?,
        [9 + 100, 25 + 400, 49 + 900]
    );
    health_is_up(&addr)?;
    Ok(())
}

#[test]
fn plain_http_off_loopback_needs_insecure_listen() -> TestResult {
    let dir = tempfile::tempdir()?;
    let keys = dir.path().join("keys");
    run(zeppelin().arg("keygen").arg("--dir").arg(&keys))?;
    let out = zeppelin()
        .args(["serve", "--listen", "0.0.0.0:0", "--data"])
        .arg(dir.path().join("data"))
        .arg("--keys")
        .arg(&keys)
        .stdout(Stdio::null())
        .output()?;
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--insecure-listen"), "{err}");
    Ok(())
}
