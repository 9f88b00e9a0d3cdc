//! Who may call the service: the key owner and the registered devices (docs/server.md,
//! "Identities and roles").
//!
//! Credentials are bearer tokens: `zpo.<64 hex>` for the owner and `zpd.<device>.<64 hex>`
//! for a device, each carrying 256 random bits. The registry ([`Registry`], the JSON file
//! [`REGISTRY_FILE`]) keeps only SHA-256 of each token: a token with 256 bits of entropy
//! cannot be guessed or brute-forced from its hash, so a slow password hash (argon2) would
//! add cost per request and no security. Digests are compared with `subtle` in constant
//! time.
//!
//! A running service sees changes to the file (a device added or revoked by `zeppelin
//! devices`): [`Authenticator`] checks the file's identity (inode, size, modification time)
//! on every authenticated request and re-reads it when it changed. An unreadable or invalid
//! registry fails closed (503), a missing one lets no one in (401).

use std::collections::BTreeMap;
use std::fmt;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use rand_core::{CryptoRng, RngCore};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;
use zeroize::Zeroizing;

pub use crate::names::{DeviceName, MAX_DEVICE_NAME};
use crate::names::{NameError, StreamName};

/// The registry's file name in the service's data (or `--auth-dir`) directory.
pub const REGISTRY_FILE: &str = "principals.json";
/// The owner token's file name, written 0600 beside the registry when it is issued.
pub const OWNER_TOKEN_FILE: &str = "owner.token";
/// The largest registry file read (about 50,000 devices).
pub const MAX_REGISTRY_BYTES: u64 = 16 << 20;
/// The registry format this build reads and writes.
pub const REGISTRY_VERSION: u32 = 1;
/// The longest `Authorization` header value looked at.
const MAX_TOKEN: usize = 4 + MAX_DEVICE_NAME + 1 + 64;

const OWNER_PREFIX: &str = "zpo.";
const DEVICE_PREFIX: &str = "zpd.";

/// An authenticated caller.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Principal {
    /// The key owner: keys, aggregation, reads, metrics.
    Owner,
    /// A device: uploads to its streams, nothing else.
    Device {
        /// Its name (the scope of its idempotency keys, recorded with each upload).
        name: DeviceName,
        /// The streams it may upload to.
        streams: Vec<StreamName>,
    },
}

/// Why a registry file or a change to it was refused.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RegistryError {
    /// The file could not be read.
    #[error("credential registry {path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The file is larger than [`MAX_REGISTRY_BYTES`].
    #[error("credential registry {path}: {len} bytes, at most {max} are read")]
    TooLarge {
        /// The file.
        path: String,
        /// Its size.
        len: u64,
        /// The limit.
        max: u64,
    },
    /// The file is not a registry of this version.
    #[error("credential registry: {0}")]
    Invalid(String),
    /// A device or stream name breaks the naming rules.
    #[error(transparent)]
    Name(#[from] NameError),
    /// `devices add` of a name that is registered and not revoked.
    #[error("device {0} is already registered (revoke it first to issue a new token)")]
    DeviceExists(String),
    /// `devices revoke` of a name that is not registered.
    #[error("no device {0} is registered")]
    NoDevice(String),
    /// `devices add` without a stream.
    #[error("a device needs at least one --stream")]
    NoStreams,
}

/// One device as stored in the registry (never its token).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct DeviceEntry {
    /// Its name.
    pub name: String,
    /// The streams it may upload to.
    pub streams: Vec<String>,
    /// SHA-256 of its token, hex.
    pub token_sha256: String,
    /// Revoked devices are refused (401) and kept for the record.
    pub revoked: bool,
}

#[derive(Clone, Debug, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RegistryFile {
    version: u32,
    owner_token_sha256: Option<String>,
    devices: Vec<DeviceEntry>,
}

/// A checked device entry, ready to authenticate.
#[derive(Clone, Debug)]
struct DeviceCredential {
    digest: [u8; 32],
    streams: Vec<StreamName>,
    revoked: bool,
}

/// The principals and their token digests (the contents of [`REGISTRY_FILE`]).
#[derive(Clone, Debug, Default)]
pub struct Registry {
    owner: Option<[u8; 32]>,
    devices: BTreeMap<DeviceName, DeviceCredential>,
}

/// A newly issued token: shown once, zeroized on drop.
pub struct IssuedToken(Zeroizing<String>);

impl IssuedToken {
    /// The token text (`zpo.…` or `zpd.<device>.…`).
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for IssuedToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("IssuedToken(..)")
    }
}

fn to_hex(bytes: &[u8]) -> String {
    use fmt::Write;
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        let _ = write!(s, "{b:02x}");
    }
    s
}

fn digest_from_hex(what: &str, hex: &str) -> Result<[u8; 32], RegistryError> {
    let bad = || RegistryError::Invalid(format!("{what}: not 64 lowercase hex digits"));
    if hex.len() != 64 {
        return Err(bad());
    }
    let mut out = [0u8; 32];
    for (i, pair) in hex.as_bytes().chunks_exact(2).enumerate() {
        let nibble = |c: u8| match c {
            b'0'..=b'9' => Some(c - b'0'),
            b'a'..=b'f' => Some(c - b'a' + 10),
            _ => None,
        };
        let (hi, lo) = (
            nibble(pair[0]).ok_or_else(bad)?,
            nibble(pair[1]).ok_or_else(bad)?,
        );
        out[i] = hi << 4 | lo;
    }
    Ok(out)
}

fn token_digest(token: &str) -> [u8; 32] {
    Sha256::digest(token.as_bytes()).into()
}

/// `prefix` followed by 256 random bits in hex.
fn new_token(prefix: &str, rng: &mut (impl RngCore + CryptoRng)) -> IssuedToken {
    let mut secret = Zeroizing::new([0u8; 32]);
    rng.fill_bytes(&mut secret[..]);
    let mut text = Zeroizing::new(String::with_capacity(prefix.len() + 64));
    text.push_str(prefix);
    text.push_str(&to_hex(&secret[..]));
    IssuedToken(text)
}

impl Registry {
    /// Parses and checks a registry file's bytes.
    pub fn from_json(bytes: &[u8]) -> Result<Self, RegistryError> {
        let file: RegistryFile = serde_json::from_slice(bytes)
            .map_err(|e| RegistryError::Invalid(format!("not a registry file: {e}")))?;
        if file.version != REGISTRY_VERSION {
            return Err(RegistryError::Invalid(format!(
                "version {}, this build reads version {REGISTRY_VERSION}",
                file.version
            )));
        }
        let owner = match &file.owner_token_sha256 {
            Some(hex) => Some(digest_from_hex("owner token digest", hex)?),
            None => None,
        };
        let mut devices = BTreeMap::new();
        for entry in file.devices {
            let name = DeviceName::new(&entry.name)?;
            let streams = entry
                .streams
                .iter()
                .map(|s| StreamName::new(s))
                .collect::<Result<Vec<_>, _>>()?;
            let digest = digest_from_hex(&format!("device {name}"), &entry.token_sha256)?;
            let credential = DeviceCredential {
                digest,
                streams,
                revoked: entry.revoked,
            };
            if devices.insert(name.clone(), credential).is_some() {
                return Err(RegistryError::Invalid(format!(
                    "device {name} is listed twice"
                )));
            }
        }
        Ok(Self { owner, devices })
    }

    /// The registry file's bytes (pretty JSON, no token, only digests).
    pub fn to_json(&self) -> Vec<u8> {
        let file = RegistryFile {
            version: REGISTRY_VERSION,
            owner_token_sha256: self.owner.map(|d| to_hex(&d)),
            devices: self.devices(),
        };
        // Serialising plain strings and bools cannot fail.
        serde_json::to_vec_pretty(&file).unwrap_or_default()
    }

    /// Reads `path` (at most [`MAX_REGISTRY_BYTES`], never through a symbolic link);
    /// `Ok(None)` when it does not exist.
    pub fn read(path: &Path) -> Result<Option<Self>, RegistryError> {
        let io = |source| RegistryError::Io {
            path: path.display().to_string(),
            source,
        };
        let mut options = std::fs::OpenOptions::new();
        options.read(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options.custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC);
        }
        let file = match options.open(path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(io(e)),
        };
        let len = file.metadata().map_err(io)?.len();
        if len > MAX_REGISTRY_BYTES {
            return Err(RegistryError::TooLarge {
                path: path.display().to_string(),
                len,
                max: MAX_REGISTRY_BYTES,
            });
        }
        let mut bytes = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
        file.take(MAX_REGISTRY_BYTES)
            .read_to_end(&mut bytes)
            .map_err(io)?;
        Self::from_json(&bytes).map(Some)
    }

    /// Issues a new owner token (any earlier one stops working).
    pub fn issue_owner(&mut self, rng: &mut (impl RngCore + CryptoRng)) -> IssuedToken {
        let token = new_token(OWNER_PREFIX, rng);
        self.owner = Some(token_digest(token.as_str()));
        token
    }

    /// Whether an owner token was issued.
    pub fn has_owner(&self) -> bool {
        self.owner.is_some()
    }

    /// Registers `name` for `streams` and issues its token. A revoked name may be registered
    /// again (with a new token); a live one may not.
    pub fn add_device(
        &mut self,
        name: &DeviceName,
        streams: &[StreamName],
        rng: &mut (impl RngCore + CryptoRng),
    ) -> Result<IssuedToken, RegistryError> {
        if streams.is_empty() {
            return Err(RegistryError::NoStreams);
        }
        if self.devices.get(name).is_some_and(|d| !d.revoked) {
            return Err(RegistryError::DeviceExists(name.to_string()));
        }
        let token = new_token(&format!("{DEVICE_PREFIX}{name}."), rng);
        let mut streams = streams.to_vec();
        streams.sort();
        streams.dedup();
        self.devices.insert(
            name.clone(),
            DeviceCredential {
                digest: token_digest(token.as_str()),
                streams,
                revoked: false,
            },
        );
        Ok(token)
    }

    /// Revokes `name`: its token is refused from the next request on.
    pub fn revoke(&mut self, name: &DeviceName) -> Result<(), RegistryError> {
        let device = self
            .devices
            .get_mut(name)
            .ok_or_else(|| RegistryError::NoDevice(name.to_string()))?;
        device.revoked = true;
        Ok(())
    }

    /// Every registered device, by name (digests, never tokens).
    pub fn devices(&self) -> Vec<DeviceEntry> {
        self.devices
            .iter()
            .map(|(name, d)| DeviceEntry {
                name: name.to_string(),
                streams: d.streams.iter().map(|s| s.to_string()).collect(),
                token_sha256: to_hex(&d.digest),
                revoked: d.revoked,
            })
            .collect()
    }

    /// The registered, unrevoked device `name` (a verified client certificate's subject).
    pub fn device(&self, name: &str) -> Option<Principal> {
        let name = DeviceName::new(name).ok()?;
        let device = self.devices.get(&name)?;
        (!device.revoked).then(|| Principal::Device {
            name,
            streams: device.streams.clone(),
        })
    }

    /// The principal `token` belongs to, if any (digests compared in constant time).
    pub fn authenticate(&self, token: &str) -> Option<Principal> {
        let digest = token_digest(token);
        if token.starts_with(OWNER_PREFIX) {
            let owner = self.owner?;
            return bool::from(owner.ct_eq(&digest)).then_some(Principal::Owner);
        }
        let rest = token.strip_prefix(DEVICE_PREFIX)?;
        let (name, _) = rest.split_once('.')?;
        let name = DeviceName::new(name).ok()?;
        let device = self.devices.get(&name)?;
        let matches = bool::from(device.digest.ct_eq(&digest));
        (matches && !device.revoked).then(|| Principal::Device {
            name,
            streams: device.streams.clone(),
        })
    }
}

/// Why a request was not authenticated or not allowed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AuthError {
    /// No credential, a malformed one, or one the registry does not know (or revoked).
    #[error("{0}")]
    Unauthenticated(&'static str),
    /// Authenticated, but this principal may not do this.
    #[error("{0}")]
    Forbidden(String),
    /// The registry could not be read (the service fails closed).
    #[error("the credential registry cannot be read: {0}")]
    Registry(String),
}

/// The identity of the registry file as last read (a change means: read it again).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Stamp {
    len: u64,
    modified: Option<std::time::SystemTime>,
    #[cfg(unix)]
    inode: u64,
}

fn stamp(path: &Path) -> std::io::Result<Option<Stamp>> {
    match std::fs::symlink_metadata(path) {
        Ok(m) => Ok(Some(Stamp {
            len: m.len(),
            modified: m.modified().ok(),
            #[cfg(unix)]
            inode: std::os::unix::fs::MetadataExt::ino(&m),
        })),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

enum Source {
    /// A fixed registry (tests and the in-process demo).
    Fixed(Arc<Registry>),
    /// A registry file, re-read when it changes.
    File {
        path: PathBuf,
        cached: Mutex<(Option<Stamp>, Arc<Registry>)>,
    },
}

/// Authenticates requests against a [`Registry`] (see the module documentation).
pub struct Authenticator {
    source: Source,
}

impl fmt::Debug for Authenticator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.source {
            Source::Fixed(_) => f.write_str("Authenticator(fixed)"),
            Source::File { path, .. } => write!(f, "Authenticator({})", path.display()),
        }
    }
}

impl Default for Authenticator {
    /// No principal at all: every endpoint but health answers 401.
    fn default() -> Self {
        Self::fixed(Registry::default())
    }
}

impl Authenticator {
    /// Authenticates against `registry`, which never changes.
    pub fn fixed(registry: Registry) -> Self {
        Self {
            source: Source::Fixed(Arc::new(registry)),
        }
    }

    /// Authenticates against the registry file `path`, read now and again whenever it
    /// changes.
    pub fn from_file(path: &Path) -> Result<Self, RegistryError> {
        let io = |source| RegistryError::Io {
            path: path.display().to_string(),
            source,
        };
        let seen = stamp(path).map_err(io)?;
        let registry = Registry::read(path)?.unwrap_or_default();
        Ok(Self {
            source: Source::File {
                path: path.to_path_buf(),
                cached: Mutex::new((seen, Arc::new(registry))),
            },
        })
    }

    /// The registry as it is now (re-read if the file changed).
    fn current(&self) -> Result<Arc<Registry>, AuthError> {
        match &self.source {
            Source::Fixed(r) => Ok(r.clone()),
            Source::File { path, cached } => {
                let registry_error = |e: &dyn fmt::Display| AuthError::Registry(e.to_string());
                let now = stamp(path).map_err(|e| registry_error(&e))?;
                let mut cached = cached.lock().unwrap_or_else(PoisonError::into_inner);
                if cached.0 != now {
                    let registry = Registry::read(path)
                        .map_err(|e| {
                            tracing::error!(error = %e, "credential registry unreadable");
                            registry_error(&e)
                        })?
                        .unwrap_or_default();
                    tracing::info!(path = %path.display(), "credential registry re-read");
                    *cached = (now, Arc::new(registry));
                }
                Ok(cached.1.clone())
            }
        }
    }

    /// The principal of an `Authorization` header value (`Bearer <token>`).
    pub fn authenticate(&self, authorization: Option<&[u8]>) -> Result<Principal, AuthError> {
        let value = authorization.ok_or(AuthError::Unauthenticated(
            "authentication required: send Authorization: Bearer <token>",
        ))?;
        let malformed =
            AuthError::Unauthenticated("malformed Authorization header: expected Bearer <token>");
        if value.len() > "Bearer ".len() + MAX_TOKEN {
            return Err(malformed);
        }
        let text = std::str::from_utf8(value).map_err(|_| malformed.clone())?;
        let token = text
            .strip_prefix("Bearer ")
            .or_else(|| text.strip_prefix("bearer "))
            .ok_or(malformed)?;
        self.current()?
            .authenticate(token.trim())
            .ok_or(AuthError::Unauthenticated("invalid or revoked token"))
    }
}

impl Authenticator {
    /// The caller of a request: its `Authorization` header (see [`Self::authenticate`]),
    /// else the device its verified TLS client certificate names (`certificate`, the
    /// subject's common name). With both, a device token must name the certificate's device.
    pub fn authenticate_request(
        &self,
        authorization: Option<&[u8]>,
        certificate: Option<&str>,
    ) -> Result<Principal, AuthError> {
        match (authorization, certificate) {
            (Some(_), _) | (None, None) => {
                let principal = self.authenticate(authorization)?;
                match (&principal, certificate) {
                    (Principal::Device { name, .. }, Some(cn)) if name.as_str() != cn => {
                        Err(AuthError::Unauthenticated(
                            "the token is another device's than the client certificate's",
                        ))
                    }
                    _ => Ok(principal),
                }
            }
            (None, Some(cn)) => self.current()?.device(cn).ok_or(AuthError::Unauthenticated(
                "the client certificate names no registered (unrevoked) device",
            )),
        }
    }
}

impl Principal {
    /// Allows the owner only.
    pub fn require_owner(&self, action: &str) -> Result<(), AuthError> {
        match self {
            Principal::Owner => Ok(()),
            Principal::Device { name, .. } => Err(AuthError::Forbidden(format!(
                "device {name} may not {action}: only the key owner may"
            ))),
        }
    }

    /// Allows a device registered for `stream`; returns its name.
    pub fn require_upload(&self, stream: &StreamName) -> Result<&DeviceName, AuthError> {
        match self {
            Principal::Owner => Err(AuthError::Forbidden(
                "the key owner does not upload: uploads come from registered devices".into(),
            )),
            Principal::Device { name, streams } if streams.contains(stream) => Ok(name),
            Principal::Device { name, .. } => Err(AuthError::Forbidden(format!(
                "device {name} may not upload to stream {stream}"
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_core::OsRng;

    fn stream(s: &str) -> StreamName {
        StreamName::new(s).unwrap_or_else(|_| unreachable!())
    }

    #[test]
    fn tokens_authenticate_their_principal_only() -> Result<(), RegistryError> {
        let mut r = Registry::default();
        let owner = r.issue_owner(&mut OsRng);
        let a = DeviceName::new("dev-a")?;
        let ta = r.add_device(&a, &[stream("t")], &mut OsRng)?;
        assert_eq!(r.authenticate(owner.as_str()), Some(Principal::Owner));
        assert!(
            matches!(r.authenticate(ta.as_str()), Some(Principal::Device { name, .. }) if name == a)
        );
        // A device token with another device's name, a flipped digit, a bare secret.
        let b = DeviceName::new("dev-b")?;
        let _tb = r.add_device(&b, &[stream("t")], &mut OsRng)?;
        let swapped = ta.as_str().replacen("dev-a", "dev-b", 1);
        assert_eq!(r.authenticate(&swapped), None);
        let mut flipped = ta.as_str().to_owned();
        let last = if flipped.ends_with('0') { "1" } else { "0" };
        flipped.replace_range(flipped.len() - 1.., last);
        assert_eq!(r.authenticate(&flipped), None);
        assert_eq!(r.authenticate(&owner.as_str()[4..]), None);
        // Survives the file form; revocation holds.
        let mut back = Registry::from_json(&r.to_json())?;
        assert_eq!(back.authenticate(owner.as_str()), Some(Principal::Owner));
        back.revoke(&a)?;
        assert_eq!(back.authenticate(ta.as_str()), None);
        assert!(!String::from_utf8_lossy(&back.to_json()).contains(&ta.as_str()[12..]));
        Ok(())
    }

    #[test]
    fn bad_registry_files_are_refused() {
        assert!(Registry::from_json(b"{}").is_err());
        assert!(
            Registry::from_json(br#"{"version":1,"owner_token_sha256":"zz","devices":[]}"#)
                .is_err()
        );
        assert!(
            Registry::from_json(br#"{"version":2,"owner_token_sha256":null,"devices":[]}"#)
                .is_err()
        );
        assert!(DeviceName::new("a.b").is_err());
        assert!(DeviceName::new("-a").is_err());
    }
}
