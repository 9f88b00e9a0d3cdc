//! Connecting to NATS with credentials and TLS ([`NatsOptions`], [`connect`]), the one place
//! every Zeppelin process (the service, the workers) opens its NATS connection.
//!
//! - URLs: comma-separated `nats://HOST:PORT` or `tls://HOST:PORT` (TLS required), the scheme
//!   may be left out (`nats://`). Credentials may ride in the URL: `nats://USER:PASS@HOST`
//!   (user and password) or `nats://TOKEN@HOST` (a token), percent-encoded where they hold
//!   `@ : / %`. Several URLs carrying credentials must carry the same ones; they apply to
//!   every server. The credentials are taken out of the URLs before they reach the NATS
//!   client, and every URL this crate prints or puts in an error is [`redact_urls`]ed.
//! - Files: an nkey seed ([`NatsOptions::nkey`]) or a `.creds` file (a user JWT and its
//!   seed, [`NatsOptions::creds`]), read by [`read_secret_file`] (refused when group or
//!   others may access them; wiped from this crate's memory after use — the NATS client
//!   keeps its own copy for reconnects). One authentication method at a time.
//! - TLS: [`NatsOptions::ca`] trusts a private CA (else the system's roots), and
//!   [`NatsOptions::cert`] + [`NatsOptions::key`] present a client certificate (NATS
//!   `verify` / mutual TLS). Any `tls://` URL, a CA or a client certificate makes TLS
//!   required for every server.

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use async_nats::ServerAddr;
use zeroize::Zeroizing;

use crate::auth::{read_secret_file, SecretFileError};

/// How to reach and authenticate to the NATS servers. Its `Debug` form redacts the URLs.
#[derive(Clone, Default)]
pub struct NatsOptions {
    /// Comma-separated server URLs (see the module docs; may hold credentials).
    pub urls: String,
    /// A `.creds` file (user JWT and nkey seed, as `nsc` writes them).
    pub creds: Option<PathBuf>,
    /// A file holding an nkey seed (`SU...`).
    pub nkey: Option<PathBuf>,
    /// CA certificates (PEM) to trust for the servers' TLS certificates.
    pub ca: Option<PathBuf>,
    /// A client certificate chain (PEM) for mutual TLS; needs [`NatsOptions::key`].
    pub cert: Option<PathBuf>,
    /// The client certificate's private key (PEM; a secret file).
    pub key: Option<PathBuf>,
}

impl fmt::Debug for NatsOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("NatsOptions")
            .field("urls", &redact_urls(&self.urls))
            .field("creds", &self.creds)
            .field("nkey", &self.nkey)
            .field("ca", &self.ca)
            .field("cert", &self.cert)
            .field("key", &self.key)
            .finish()
    }
}

impl NatsOptions {
    /// Options with these URLs and nothing else.
    pub fn new(urls: impl Into<String>) -> Self {
        Self {
            urls: urls.into(),
            ..Self::default()
        }
    }
}

/// Why a NATS connection was not made. No variant holds a credential.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConnectError {
    /// No URL at all.
    #[error("no NATS URL given")]
    NoUrl,
    /// A URL that does not parse (shown redacted).
    #[error("bad NATS URL {url:?}: {reason}")]
    BadUrl {
        /// The URL, credentials replaced by `***`.
        url: String,
        /// Why.
        reason: String,
    },
    /// URLs carrying different credentials.
    #[error(
        "the NATS URLs carry different credentials; give them once (they apply to every server)"
    )]
    MixedCredentials,
    /// More than one authentication method.
    #[error("more than one NATS authentication method: {0}; use one")]
    AuthConflict(String),
    /// A secret file that could not be used.
    #[error(transparent)]
    Secret(#[from] SecretFileError),
    /// A credentials or nkey file whose contents are not usable.
    #[error("{}: {reason}", path.display())]
    BadSecret {
        /// The file.
        path: PathBuf,
        /// What is wrong (never its contents).
        reason: String,
    },
    /// A client certificate without its key, or a key without a certificate.
    #[error("a NATS client certificate needs both the certificate and its key")]
    HalfClientCert,
    /// The connection failed (the URLs shown redacted).
    #[error("connecting to {urls}: {reason}")]
    Connect {
        /// The URLs, credentials replaced by `***`.
        urls: String,
        /// Why.
        reason: String,
    },
}

/// `urls` with the user-info part of each (anything before `@` in the authority) replaced
/// by `***`: the form in which a NATS URL is ever printed. Works on text that does not parse.
pub fn redact_urls(urls: &str) -> String {
    urls.split(',')
        .map(redact_url)
        .collect::<Vec<_>>()
        .join(",")
}

fn redact_url(url: &str) -> String {
    let (scheme, rest) = match url.find("://") {
        Some(i) => url.split_at(i + 3),
        None => ("", url),
    };
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(end);
    match authority.rfind('@') {
        Some(at) => format!("{scheme}***{}{tail}", &authority[at..]),
        None => url.to_owned(),
    }
}

/// Decodes `%XX` escapes (URL user info); `None` for a bad escape or non-UTF-8.
fn percent_decode(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = bytes.get(i + 1..i + 3)?;
            let hex = std::str::from_utf8(hex).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// Credentials found in the URLs.
#[derive(Clone, PartialEq, Eq)]
enum UrlAuth {
    UserPassword(String, String),
    Token(String),
}

/// The URLs without credentials, the credentials they carried, and whether any asks for TLS.
struct ParsedUrls {
    addrs: Vec<ServerAddr>,
    auth: Option<UrlAuth>,
    tls: bool,
}

fn parse(urls: &str) -> Result<ParsedUrls, ConnectError> {
    let mut addrs = Vec::new();
    let mut auth: Option<UrlAuth> = None;
    let mut tls = false;
    for u in urls.split(',').map(str::trim).filter(|u| !u.is_empty()) {
        let bad = |reason: String| ConnectError::BadUrl {
            url: redact_url(u),
            reason,
        };
        let addr: ServerAddr = u.parse().map_err(|e: std::io::Error| bad(e.to_string()))?;
        if addr.is_websocket() {
            return Err(bad("websocket URLs are not supported here".into()));
        }
        tls |= addr.tls_required();
        let found = match (addr.username(), addr.password()) {
            (None, None) => None,
            (Some(user), Some(pass)) => Some(UrlAuth::UserPassword(
                percent_decode(user).ok_or_else(|| bad("bad %-escape in the user".into()))?,
                percent_decode(pass).ok_or_else(|| bad("bad %-escape in the password".into()))?,
            )),
            (Some(token), None) => Some(UrlAuth::Token(
                percent_decode(token).ok_or_else(|| bad("bad %-escape in the token".into()))?,
            )),
            (None, Some(_)) => return Err(bad("a password without a user".into())),
        };
        let addr = if found.is_some() {
            let mut url = addr.into_inner();
            url.set_password(None)
                .and_then(|()| url.set_username(""))
                .map_err(|()| bad("cannot remove the credentials".into()))?;
            ServerAddr::from_url(url).map_err(|e| bad(e.to_string()))?
        } else {
            addr
        };
        if let Some(found) = found {
            match &auth {
                Some(seen) if *seen != found => return Err(ConnectError::MixedCredentials),
                _ => auth = Some(found),
            }
        }
        addrs.push(addr);
    }
    if addrs.is_empty() {
        return Err(ConnectError::NoUrl);
    }
    Ok(ParsedUrls { addrs, auth, tls })
}

/// The server addresses of `urls` without their credentials (for code that only needs the
/// addresses; [`connect`] applies the credentials).
pub fn server_addrs(urls: &str) -> Result<Vec<ServerAddr>, ConnectError> {
    parse(urls).map(|p| p.addrs)
}

/// A secret file as text, wiped on drop.
fn secret_text(path: &std::path::Path) -> Result<Zeroizing<String>, ConnectError> {
    let bytes = read_secret_file(path)?;
    let text = std::str::from_utf8(&bytes).map_err(|_| ConnectError::BadSecret {
        path: path.to_owned(),
        reason: "not UTF-8 text".into(),
    })?;
    Ok(Zeroizing::new(text.to_owned()))
}

/// Replaces every occurrence of a secret in `text` by `***` (a last guard on messages from
/// the NATS client, which is never given a URL with credentials).
fn scrub(text: String, secrets: &[&str]) -> String {
    secrets
        .iter()
        .filter(|s| s.len() >= 3)
        .fold(text, |t, s| t.replace(s, "***"))
}

/// The client options for `options` (credentials and TLS applied) and the clean addresses.
fn client_options(
    options: &NatsOptions,
) -> Result<(async_nats::ConnectOptions, Vec<ServerAddr>, Vec<String>), ConnectError> {
    let parsed = parse(&options.urls)?;
    let mut methods = Vec::new();
    if let Some(a) = &parsed.auth {
        methods.push(match a {
            UrlAuth::UserPassword(..) => "user and password in the URL",
            UrlAuth::Token(_) => "token in the URL",
        });
    }
    if options.creds.is_some() {
        methods.push("credentials file");
    }
    if options.nkey.is_some() {
        methods.push("nkey file");
    }
    if methods.len() > 1 {
        return Err(ConnectError::AuthConflict(methods.join(", ")));
    }
    let mut secrets = Vec::new();
    let mut client = async_nats::ConnectOptions::new();
    match parsed.auth {
        Some(UrlAuth::UserPassword(user, pass)) => {
            secrets.push(pass.clone());
            client = client.user_and_password(user, pass);
        }
        Some(UrlAuth::Token(token)) => {
            secrets.push(token.clone());
            client = client.token(token);
        }
        None => {}
    }
    if let Some(path) = &options.nkey {
        let text = secret_text(path)?;
        let seed = text.trim();
        if !seed.starts_with('S') || seed.contains(char::is_whitespace) {
            return Err(ConnectError::BadSecret {
                path: path.clone(),
                reason: "not an nkey seed (one line starting with S)".into(),
            });
        }
        client = client.nkey(seed.to_owned());
    }
    if let Some(path) = &options.creds {
        let text = secret_text(path)?;
        client = client
            .credentials(&text)
            .map_err(|e| ConnectError::BadSecret {
                path: path.clone(),
                reason: format!("not a NATS credentials file ({})", e.kind()),
            })?;
    }
    match (&options.cert, &options.key) {
        (Some(cert), Some(key)) => {
            // Checked like every secret file (async-nats reads it again itself).
            drop(read_secret_file(key)?);
            client = client.add_client_certificate(cert.clone(), key.clone());
        }
        (None, None) => {}
        _ => return Err(ConnectError::HalfClientCert),
    }
    if let Some(ca) = &options.ca {
        client = client.add_root_certificates(ca.clone());
    }
    if parsed.tls || options.ca.is_some() || options.cert.is_some() {
        client = client.require_tls(true);
    }
    Ok((client, parsed.addrs, secrets))
}

/// Connects to the NATS servers of `options` (see the module docs); the client reconnects
/// to any of them, without limit, when a connection drops. `name` is the connection name
/// the servers show.
pub async fn connect(
    options: &NatsOptions,
    name: &str,
) -> Result<async_nats::Client, ConnectError> {
    let (client, addrs, secrets) = client_options(options)?;
    let shown = redact_urls(&options.urls);
    tracing::debug!(urls = %shown, "connecting to NATS");
    let secret_refs: Vec<&str> = secrets.iter().map(String::as_str).collect();
    client
        .name(name)
        .connection_timeout(Duration::from_secs(5))
        .max_reconnects(None)
        .event_callback(|event| async move {
            tracing::info!(%event, "NATS connection");
        })
        .connect(addrs)
        .await
        .map_err(|e| ConnectError::Connect {
            urls: shown.clone(),
            reason: scrub(e.to_string(), &secret_refs),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_redacted_before_they_are_shown() {
        assert_eq!(
            redact_urls("nats://alice:s3cret@h1:4222,tls://tok@h2:4222,h3:4222"),
            "nats://***@h1:4222,tls://***@h2:4222,h3:4222"
        );
        assert_eq!(redact_urls("a:b@c@h:1/x"), "***@h:1/x");
        assert_eq!(redact_urls("nats://h:4222/p@q"), "nats://h:4222/p@q");
        assert_eq!(redact_urls("not a url"), "not a url");
        let o = NatsOptions::new("nats://u:hunter22@h:1");
        assert!(!format!("{o:?}").contains("hunter22"));
    }

    #[test]
    fn credentials_are_taken_out_of_the_urls() -> Result<(), ConnectError> {
        let p = parse("nats://svc:p%40ss@127.0.0.1:4222, tls://svc:p%40ss@127.0.0.2:4223")?;
        assert!(p.tls);
        assert!(
            p.auth == Some(UrlAuth::UserPassword("svc".into(), "p@ss".into())),
            "user and password decoded"
        );
        for a in &p.addrs {
            assert!(!a.as_url_str().contains("svc"), "{}", a.as_url_str());
            assert!(!a.as_url_str().contains("ss"), "{}", a.as_url_str());
        }
        let t = parse("nats://T0KEN@h:1,h:2")?;
        assert!(t.auth == Some(UrlAuth::Token("T0KEN".into())));
        assert!(!t.tls);
        assert!(parse("nats://h:1")?.auth.is_none());
        Ok(())
    }

    #[test]
    fn conflicting_or_bad_urls_are_refused_without_their_secrets() {
        assert!(matches!(
            parse("nats://a:b@h:1,nats://a:c@h:2"),
            Err(ConnectError::MixedCredentials)
        ));
        assert!(matches!(parse(" , "), Err(ConnectError::NoUrl)));
        let e = parse("http://u:topsecret@h:1")
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(e.contains("bad NATS URL"), "{e}");
        assert!(!e.contains("topsecret"), "{e}");
        let e = parse("nats://u:%zz@h:1")
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(e.contains("%-escape") && !e.contains("%zz"), "{e}");
        let both = NatsOptions {
            nkey: Some("x".into()),
            ..NatsOptions::new("nats://u:p@h:1")
        };
        assert!(matches!(
            client_options(&both),
            Err(ConnectError::AuthConflict(_))
        ));
        let half = NatsOptions {
            cert: Some("c.pem".into()),
            ..NatsOptions::new("tls://h:1")
        };
        assert!(matches!(
            client_options(&half),
            Err(ConnectError::HalfClientCert)
        ));
    }

    #[test]
    fn scrub_removes_secrets() {
        assert_eq!(
            scrub("auth failed for hunter22!".into(), &["hunter22", ""]),
            "auth failed for ***!"
        );
    }
}
