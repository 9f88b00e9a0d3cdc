//! TLS on the service's own listener (docs/server.md, "TLS"): a certificate chain and key in
//! PEM, and optionally a CA whose client certificates identify devices (mutual TLS).
//!
//! rustls with the `ring` provider (the one async-nats already brings), TLS 1.2 and 1.3,
//! ALPN `http/1.1`. With a client CA, a client certificate is optional (the owner and
//! token-holding devices connect without one) but, when presented, must chain to the CA;
//! its subject's common name is a device name ([`ClientIdentity`]), which the
//! authenticator maps to that registered device (docs/server.md, "Identities and roles").

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::WebPkiClientVerifier;
use rustls::{RootCertStore, ServerConfig};
use tokio_rustls::TlsAcceptor;

/// The most bytes read of one PEM file (a chain of a few certificates, or a key).
const MAX_PEM_BYTES: u64 = 1 << 20;

/// The TLS files of `zeppelin serve --tls-cert --tls-key [--client-ca]`.
#[derive(Clone, Debug)]
pub struct TlsFiles {
    /// The server's certificate chain, leaf first (PEM).
    pub cert: PathBuf,
    /// The server's private key (PEM: PKCS#8, PKCS#1 or SEC1).
    pub key: PathBuf,
    /// CA certificates (PEM) whose client certificates identify devices.
    pub client_ca: Option<PathBuf>,
}

/// Why the TLS configuration was refused (each names the file, never its contents).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TlsError {
    /// A file could not be read.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A file is larger than a PEM file of certificates or a key can be.
    #[error("{path}: {len} bytes, at most {MAX_PEM_BYTES} are read")]
    TooLarge {
        /// The file.
        path: String,
        /// Its size.
        len: u64,
    },
    /// A file holds no PEM object of the kind expected.
    #[error("{path}: no {what} in PEM form")]
    Missing {
        /// The file.
        path: String,
        /// `certificate` or `private key`.
        what: &'static str,
    },
    /// A file's PEM is malformed.
    #[error("{path}: malformed PEM ({what})")]
    Pem {
        /// The file.
        path: String,
        /// `certificate` or `private key`.
        what: &'static str,
    },
    /// rustls refused the certificates or key (for example a key that does not match the
    /// certificate, or a client CA that is not a CA certificate).
    #[error("{what}: {message}")]
    Rustls {
        /// `server certificate and key` or `client CA`.
        what: &'static str,
        /// rustls's reason.
        message: String,
    },
}

/// The device a verified client certificate names (its subject's common name), a request
/// extension on connections that presented one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClientIdentity(pub String);

/// A TLS acceptor for the service's listener.
#[derive(Clone)]
pub struct TlsServer {
    acceptor: TlsAcceptor,
    mutual: bool,
}

impl fmt::Debug for TlsServer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TlsServer")
            .field("mutual", &self.mutual)
            .finish_non_exhaustive()
    }
}

fn read_pem(path: &Path) -> Result<Vec<u8>, TlsError> {
    let io = |source| TlsError::Io {
        path: path.display().to_string(),
        source,
    };
    let len = std::fs::metadata(path).map_err(io)?.len();
    if len > MAX_PEM_BYTES {
        return Err(TlsError::TooLarge {
            path: path.display().to_string(),
            len,
        });
    }
    std::fs::read(path).map_err(io)
}

fn certificates(path: &Path) -> Result<Vec<CertificateDer<'static>>, TlsError> {
    let pem = read_pem(path)?;
    let certs = CertificateDer::pem_slice_iter(&pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|_| TlsError::Pem {
            path: path.display().to_string(),
            what: "certificate",
        })?;
    if certs.is_empty() {
        return Err(TlsError::Missing {
            path: path.display().to_string(),
            what: "certificate",
        });
    }
    Ok(certs)
}

fn private_key(path: &Path) -> Result<PrivateKeyDer<'static>, TlsError> {
    let pem = zeroize::Zeroizing::new(read_pem(path)?);
    PrivateKeyDer::from_pem_slice(&pem).map_err(|e| match e {
        rustls::pki_types::pem::Error::NoItemsFound => TlsError::Missing {
            path: path.display().to_string(),
            what: "private key",
        },
        _ => TlsError::Pem {
            path: path.display().to_string(),
            what: "private key",
        },
    })
}

impl TlsServer {
    /// Loads `files` and builds the acceptor.
    pub fn load(files: &TlsFiles) -> Result<Self, TlsError> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let builder = ServerConfig::builder_with_provider(provider.clone())
            .with_safe_default_protocol_versions()
            .map_err(|e| TlsError::Rustls {
                what: "protocol versions",
                message: e.to_string(),
            })?;
        let builder = match &files.client_ca {
            None => builder.with_no_client_auth(),
            Some(ca) => {
                let mut roots = RootCertStore::empty();
                for cert in certificates(ca)? {
                    roots.add(cert).map_err(|e| TlsError::Rustls {
                        what: "client CA",
                        message: e.to_string(),
                    })?;
                }
                let verifier = WebPkiClientVerifier::builder_with_provider(roots.into(), provider)
                    .allow_unauthenticated()
                    .build()
                    .map_err(|e| TlsError::Rustls {
                        what: "client CA",
                        message: e.to_string(),
                    })?;
                builder.with_client_cert_verifier(verifier)
            }
        };
        let mut config = builder
            .with_single_cert(certificates(&files.cert)?, private_key(&files.key)?)
            .map_err(|e| TlsError::Rustls {
                what: "server certificate and key",
                message: e.to_string(),
            })?;
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        Ok(Self {
            acceptor: TlsAcceptor::from(Arc::new(config)),
            mutual: files.client_ca.is_some(),
        })
    }

    /// The acceptor (the accept loop wraps each TCP connection with it).
    pub(crate) fn acceptor(&self) -> &TlsAcceptor {
        &self.acceptor
    }
}

/// The device named by a verified client certificate: its subject's common name, if it has
/// exactly one that is a UTF-8 or printable string. `None` for anything else (the
/// connection then authenticates by bearer token only).
pub(crate) fn client_identity(certificate: &CertificateDer<'_>) -> Option<ClientIdentity> {
    use x509_cert::der::{Decode, Tag, Tagged};
    let cert = x509_cert::Certificate::from_der(certificate.as_ref()).ok()?;
    let mut names = cert
        .tbs_certificate
        .subject
        .0
        .iter()
        .flat_map(|rdn| rdn.0.iter())
        .filter(|atv| atv.oid == x509_cert::der::oid::db::rfc4519::CN);
    let cn = names.next()?;
    if names.next().is_some() {
        return None;
    }
    match cn.value.tag() {
        Tag::Utf8String | Tag::PrintableString => {
            let text = std::str::from_utf8(cn.value.value()).ok()?;
            Some(ClientIdentity(text.to_owned()))
        }
        _ => None,
    }
}
