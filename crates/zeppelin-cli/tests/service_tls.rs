//! Issue 28 item 2: `zeppelin serve --tls-cert --tls-key [--client-ca]` against the real
//! binary, with certificates made by the `openssl` command and requests made by `curl` (both
//! independent of the rustls stack under test):
//!
//! - HTTPS answers health; a plain-HTTP request on the TLS port gets no HTTP answer;
//! - a device with a client certificate from the client CA uploads with no token (its
//!   subject's common name is its registered name); a certificate of another CA fails the
//!   handshake; a valid certificate naming an unregistered device is 401; a certificate for
//!   one device with another device's token is 401; a revoked device's certificate is 401;
//! - the owner (token over TLS) aggregates and the sum decrypts to the truth with
//!   `zeppelin decrypt` and the owner's secret key;
//! - with TLS a non-loopback address needs no `--insecure-listen`;
//! - a key file that is not a key is a start-up error naming the file.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

mod credentials;
#[path = "../../cluster/tests/support/pki.rs"]
mod pki;

use pki::Pki;

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

/// The test PKI (CA `ca`, the server's certificate for 127.0.0.1) with a second CA and the
/// device certificates: `dev` and `rogue-dev` (common name `dev`, signed by `rogue-ca`),
/// `stranger` and `other`.
fn pki(dir: &Path) -> TestResult<Pki> {
    let pki = Pki::new(dir)?;
    pki.ca("rogue-ca")?;
    pki.client("dev", "dev", "ca")?;
    pki.client("rogue-dev", "dev", "rogue-ca")?;
    pki.client("stranger", "stranger", "ca")?;
    pki.client("other", "other", "ca")?;
    Ok(pki)
}

/// Starts `zeppelin serve` with TLS on `listen`; the child and its `host:port`.
fn serve_tls(data: &Path, keys: &Path, pki: &Pki, listen: &str) -> TestResult<(Server, String)> {
    let mut child = zeppelin()
        .args(["serve", "--listen", listen, "--data"])
        .arg(data)
        .arg("--keys")
        .arg(keys)
        .arg("--tls-cert")
        .arg(pki.path("server.pem"))
        .arg("--tls-key")
        .arg(pki.path("server.key"))
        .arg("--client-ca")
        .arg(pki.path("ca.pem"))
        .env("ZEPPELIN_LOG", "warn")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()?;
    let stdout = child.stdout.take().ok_or("no stdout")?;
    let child = Server(child);
    let mut line = String::new();
    BufReader::new(stdout).read_line(&mut line)?;
    let addr = line
        .trim()
        .strip_prefix("listening on https://")
        .ok_or_else(|| format!("unexpected first line {line:?}"))?
        .to_owned();
    Ok((child, addr))
}

/// What curl saw: the HTTP status (`None`: no HTTP answer, e.g. a failed handshake) and the
/// body.
struct Curl {
    status: Option<u16>,
    body: Vec<u8>,
}

impl Curl {
    fn error(&self) -> TestResult<String> {
        let v: serde_json::Value = serde_json::from_slice(&self.body)?;
        Ok(v.get("error")
            .and_then(|e| e.as_str())
            .ok_or("no error text")?
            .to_owned())
    }
}

/// One request with curl over HTTPS, trusting the test CA; `cert` is a client certificate
/// of the PKI, `token` a bearer token, `body` a file to POST.
fn curl(
    pki: &Pki,
    url: &str,
    cert: Option<&str>,
    token: Option<&str>,
    body: Option<&Path>,
) -> TestResult<Curl> {
    let out_file = pki.path("curl.out");
    let _ = std::fs::remove_file(&out_file);
    let mut cmd = Command::new("curl");
    cmd.args(["-sS", "--max-time", "20", "-o"])
        .arg(&out_file)
        .args(["-w", "%{http_code}", "--cacert"])
        .arg(pki.path("ca.pem"));
    if let Some(c) = cert {
        cmd.arg("--cert")
            .arg(pki.path(&format!("{c}.pem")))
            .arg("--key")
            .arg(pki.path(&format!("{c}.key")));
    }
    if let Some(t) = token {
        cmd.arg("-H").arg(format!("Authorization: Bearer {t}"));
    }
    if let Some(b) = body {
        cmd.args([
            "-H",
            "Content-Type: application/octet-stream",
            "--data-binary",
        ])
        .arg(format!("@{}", b.display()));
    }
    let out = cmd.arg(url).output()?;
    let code: u16 = String::from_utf8_lossy(&out.stdout)
        .trim()
        .parse()
        .unwrap_or(0);
    Ok(Curl {
        status: (code != 0).then_some(code),
        body: std::fs::read(&out_file).unwrap_or_default(),
    })
}

/// Encrypts `values` (one per slot from 0) with `keys` into `dir/name.bin`.
fn encrypt(dir: &Path, keys: &Path, name: &str, values: &[u32]) -> TestResult<PathBuf> {
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
    Ok(out)
}

#[test]
fn tls_and_client_certificates_authenticate_devices_and_the_owner_decrypts_the_truth() -> TestResult
{
    let dir = tempfile::tempdir()?;
    let keys = dir.path().join("keys");
    run(zeppelin().arg("keygen").arg("--dir").arg(&keys))?;
    let data = dir.path().join("data");
    std::fs::create_dir_all(&data)?;
    let creds = credentials::issue(&data, "dev", &["s"])?;
    run(zeppelin()
        .args(["devices", "add", "--data"])
        .arg(&data)
        .args(["--device", "other", "--stream", "s"]))?;
    let pki = pki(dir.path())?;
    let (_server, addr) = serve_tls(&data, &keys, &pki, "127.0.0.1:0")?;
    let base = format!("https://{addr}");
    let upload_url = format!("{base}/v1/streams/s/ciphertexts");

    assert_eq!(
        curl(&pki, &format!("{base}/v1/health"), None, None, None)?.status,
        Some(200)
    );
    // Plain HTTP on the TLS port: no HTTP answer (the handshake fails), health still up.
    let plain = curl(&pki, &format!("http://{addr}/v1/health"), None, None, None)?;
    assert!(plain.status.is_none_or(|s| s != 200), "plain HTTP answered");

    let one = encrypt(dir.path(), &keys, "one", &[3, 5, 7])?;
    let two = encrypt(dir.path(), &keys, "two", &[10, 20, 30])?;
    // The device by its certificate alone.
    let r = curl(&pki, &upload_url, Some("dev"), None, Some(&one))?;
    assert_eq!(r.status, Some(201), "{:?}", r.error());
    // The device by its token over TLS, without a certificate.
    let r = curl(&pki, &upload_url, None, Some(&creds.device), Some(&two))?;
    assert_eq!(r.status, Some(201), "{:?}", r.error());
    // A certificate for "dev" from another CA: the handshake fails.
    let r = curl(&pki, &upload_url, Some("rogue-dev"), None, Some(&one))?;
    assert_eq!(r.status, None, "a rogue certificate got an HTTP answer");
    // A valid certificate naming no registered device.
    let r = curl(&pki, &upload_url, Some("stranger"), None, Some(&one))?;
    assert_eq!(r.status, Some(401));
    assert!(r.error()?.contains("no registered"), "{:?}", r.error());
    // One device's certificate with another device's token.
    let r = curl(
        &pki,
        &upload_url,
        Some("other"),
        Some(&creds.device),
        Some(&one),
    )?;
    assert_eq!(r.status, Some(401));
    assert!(r.error()?.contains("another device"), "{:?}", r.error());
    // A device certificate does not make its holder the owner.
    let r = curl(&pki, &format!("{base}/v1/streams"), Some("dev"), None, None)?;
    assert_eq!(r.status, Some(403));
    // Revoked: its certificate no longer counts.
    run(zeppelin()
        .args(["devices", "revoke", "--data"])
        .arg(&data)
        .args(["--device", "other"]))?;
    let r = curl(&pki, &upload_url, Some("other"), None, Some(&one))?;
    assert_eq!(r.status, Some(401));

    // The owner over TLS: two uploads, and their sum decrypts to the truth.
    let request = dir.path().join("sum.json");
    std::fs::write(&request, br#"{"op":"sum"}"#)?;
    let r = curl(
        &pki,
        &format!("{base}/v1/streams/s/aggregate"),
        None,
        Some(&creds.owner),
        Some(&request),
    )?;
    assert_eq!(r.status, Some(200));
    let result = dir.path().join("sum.seal");
    std::fs::write(&result, &r.body)?;
    let plain = run(zeppelin()
        .arg("decrypt")
        .arg("--dir")
        .arg(&keys)
        .arg("--in")
        .arg(&result))?;
    let slots: Vec<u64> = plain
        .lines()
        .take(3)
        .map(|l| l.trim().parse())
        .collect::<Result<_, _>>()?;
    assert_eq!(slots, [13, 25, 37]);
    assert_eq!(
        curl(&pki, &format!("{base}/v1/health"), None, None, None)?.status,
        Some(200)
    );
    Ok(())
}

#[test]
fn with_tls_a_public_address_needs_no_insecure_flag_and_bad_files_are_named() -> TestResult {
    let dir = tempfile::tempdir()?;
    let keys = dir.path().join("keys");
    run(zeppelin().arg("keygen").arg("--dir").arg(&keys))?;
    let data = dir.path().join("data");
    let pki = pki(dir.path())?;
    let (_server, addr) = serve_tls(&data, &keys, &pki, "0.0.0.0:0")?;
    let port = addr.rsplit(':').next().ok_or("no port")?;
    assert_eq!(
        curl(
            &pki,
            &format!("https://127.0.0.1:{port}/v1/health"),
            None,
            None,
            None
        )?
        .status,
        Some(200)
    );
    // A certificate where the key should be.
    let err = start_fails(&data, &keys, &pki.path("server.pem"), &pki.path("ca.pem"))?;
    assert!(
        err.contains("ca.pem") && err.contains("private key"),
        "{err}"
    );
    // The key of another certificate.
    let err = start_fails(&data, &keys, &pki.path("server.pem"), &pki.path("dev.key"))?;
    assert!(err.contains("TLS"), "{err}");
    Ok(())
}

/// `zeppelin serve` with TLS files `cert` and `key` must exit non-zero at start (within
/// 20 s); its stderr.
fn start_fails(data: &Path, keys: &Path, cert: &Path, key: &Path) -> TestResult<String> {
    let mut child = Server(
        zeppelin()
            .args(["serve", "--listen", "127.0.0.1:0", "--data"])
            .arg(data)
            .arg("--keys")
            .arg(keys)
            .arg("--tls-cert")
            .arg(cert)
            .arg("--tls-key")
            .arg(key)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()?,
    );
    let started = std::time::Instant::now();
    let status = loop {
        if let Some(status) = child.0.try_wait()? {
            break status;
        }
        if started.elapsed() > std::time::Duration::from_secs(20) {
            return Err(format!("serve started with --tls-key {}", key.display()).into());
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    assert!(!status.success());
    let mut err = String::new();
    std::io::Read::read_to_string(child.0.stderr.as_mut().ok_or("no stderr")?, &mut err)?;
    Ok(err)
}
