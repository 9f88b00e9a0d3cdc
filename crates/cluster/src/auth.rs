//! The cluster key and the one place where messages on the bus are authenticated.
//!
//! The coordinator (`zeppelin serve`) and every worker share a [`ClusterKey`]: 32 random bytes
//! in a file only its owner may read (`zeppelin cluster-key new FILE`). Everything the
//! coordinator trusts from the bus, and everything a worker acts on, carries an
//! HMAC-SHA256 tag under it:
//!
//! - a shard job: the tag over its subject and its exact JSON body, in the message header
//!   [`TAG_HEADER`] (hex); workers check it before reading the JSON;
//! - a partial result: the tag over the job message it answers (subject and body: job id,
//!   shard, preset, stream, upload range and count, op and weights) and the partial's own
//!   bytes (count, rejected, ciphertext), stored in the object; the coordinator checks it
//!   before decoding anything.
//!
//! Every input is framed (a domain label, then each part with its length), so no two
//! different inputs give the same MAC input. Tags are compared in constant time
//! (`hmac`'s `verify_slice`).

use std::fmt;
use std::path::{Path, PathBuf};

use hmac::{Hmac, Mac};
use sha2::Sha256;
use zeroize::{Zeroize, Zeroizing};

/// Bytes of a cluster key.
pub const KEY_LEN: usize = 32;
/// Bytes of a tag (HMAC-SHA256).
pub const TAG_LEN: usize = 32;
/// The header of a job message that holds its tag (64 lowercase hex digits).
pub const TAG_HEADER: &str = "Zeppelin-Tag";
/// The largest secret file read ([`read_secret_file`]): NATS credentials are a few KiB.
pub const MAX_SECRET_FILE: u64 = 64 << 10;

type HmacSha256 = Hmac<Sha256>;

/// What a tag authenticates (each kind has its own label, so a tag of one kind never
/// verifies as another).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Domain {
    /// A shard job message: parts `[subject, body]`.
    Job,
    /// A partial result: parts `[magic, job subject, job body, partial bytes]`.
    Partial,
}

impl Domain {
    fn label(self) -> &'static [u8] {
        match self {
            Domain::Job => b"zeppelin-cluster/job/v1",
            Domain::Partial => b"zeppelin-cluster/partial/v1",
        }
    }
}

/// Why a tag was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AuthError {
    /// No tag where one is required.
    #[error("no authentication tag")]
    Missing,
    /// A tag that is not 32 bytes (64 hex digits in a header).
    #[error("malformed authentication tag")]
    Malformed,
    /// A tag that does not verify under the cluster key.
    #[error("authentication tag does not verify under the cluster key")]
    Mismatch,
}

/// Why a secret file (the cluster key, NATS credentials) was not read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SecretFileError {
    /// The file could not be read.
    #[error("cannot read {}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// Group or others have access to the file.
    #[error(
        "{} is accessible by group or others (mode {mode:04o}): it holds a secret; \
         `chmod 600` it",
        path.display()
    )]
    Permissions {
        /// The file.
        path: PathBuf,
        /// Its permission bits.
        mode: u32,
    },
    /// Not a regular file, or larger than [`MAX_SECRET_FILE`].
    #[error("{}: {what}", path.display())]
    Unusable {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        what: String,
    },
    /// A cluster key file that does not hold exactly [`KEY_LEN`] bytes.
    #[error(
        "{} holds {found} bytes, a cluster key is {KEY_LEN} random bytes \
         (`zeppelin cluster-key new FILE`)",
        path.display()
    )]
    KeyLength {
        /// The file.
        path: PathBuf,
        /// Its size.
        found: usize,
    },
    /// The file to create already exists.
    #[error("{} exists: refusing to replace a cluster key", path.display())]
    Exists {
        /// The file.
        path: PathBuf,
    },
}

/// Reads a secret file: a regular file of at most [`MAX_SECRET_FILE`] bytes that neither
/// group nor others may access (on Unix; symbolic links are followed, the target is checked).
/// The bytes are wiped from memory when the result is dropped.
pub fn read_secret_file(path: &Path) -> Result<Zeroizing<Vec<u8>>, SecretFileError> {
    use std::io::Read;
    let io = |source| SecretFileError::Io {
        path: path.to_owned(),
        source,
    };
    let mut file = std::fs::File::open(path).map_err(io)?;
    let meta = file.metadata().map_err(io)?;
    if !meta.is_file() {
        return Err(SecretFileError::Unusable {
            path: path.to_owned(),
            what: "not a regular file".into(),
        });
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = meta.permissions().mode() & 0o7777;
        if mode & 0o077 != 0 {
            return Err(SecretFileError::Permissions {
                path: path.to_owned(),
                mode,
            });
        }
    }
    if meta.len() > MAX_SECRET_FILE {
        return Err(SecretFileError::Unusable {
            path: path.to_owned(),
            what: format!("{} bytes, over the limit of {MAX_SECRET_FILE}", meta.len()),
        });
    }
    let mut bytes = Zeroizing::new(Vec::with_capacity(meta.len() as usize));
    file.by_ref()
        .take(MAX_SECRET_FILE + 1)
        .read_to_end(&mut bytes)
        .map_err(io)?;
    if bytes.len() as u64 > MAX_SECRET_FILE {
        return Err(SecretFileError::Unusable {
            path: path.to_owned(),
            what: format!("grew over the limit of {MAX_SECRET_FILE} bytes while read"),
        });
    }
    Ok(bytes)
}

/// The key shared by the coordinator and the workers. Wiped from memory when dropped; its
/// `Debug` form does not show it.
#[derive(Clone)]
pub struct ClusterKey([u8; KEY_LEN]);

impl fmt::Debug for ClusterKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ClusterKey(..)")
    }
}

impl Drop for ClusterKey {
    fn drop(&mut self) {
        self.0.zeroize();
    }
}

impl ClusterKey {
    /// A key of these bytes.
    pub fn from_bytes(bytes: [u8; KEY_LEN]) -> Self {
        Self(bytes)
    }

    /// A fresh random key (the operating system's generator).
    pub fn generate() -> Self {
        use rand_core::{OsRng, RngCore};
        let mut key = [0u8; KEY_LEN];
        OsRng.fill_bytes(&mut key);
        Self(key)
    }

    /// Reads a key file: exactly [`KEY_LEN`] bytes, checked as [`read_secret_file`] does.
    pub fn load(path: &Path) -> Result<Self, SecretFileError> {
        let bytes = read_secret_file(path)?;
        let key: [u8; KEY_LEN] =
            bytes
                .as_slice()
                .try_into()
                .map_err(|_| SecretFileError::KeyLength {
                    path: path.to_owned(),
                    found: bytes.len(),
                })?;
        Ok(Self(key))
    }

    /// Writes a fresh key to `path`, created with mode 0600 (never replacing a file), synced.
    pub fn create_file(path: &Path) -> Result<Self, SecretFileError> {
        use std::io::Write;
        let io = |source| SecretFileError::Io {
            path: path.to_owned(),
            source,
        };
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options.mode(0o600);
        }
        let mut file = options.open(path).map_err(|source| {
            if source.kind() == std::io::ErrorKind::AlreadyExists {
                SecretFileError::Exists {
                    path: path.to_owned(),
                }
            } else {
                io(source)
            }
        })?;
        let key = Self::generate();
        let written = file.write_all(&key.0).and_then(|()| file.sync_all());
        if let Err(source) = written {
            drop(file);
            let _ = std::fs::remove_file(path);
            return Err(io(source));
        }
        Ok(key)
    }

    /// The MAC state for `domain` with the key; HMAC pads a key shorter than SHA-256's
    /// 64-byte block with zeros, so keying with the zero-padded block is HMAC under the
    /// 32-byte key (checked in the tests) and cannot fail.
    fn mac(&self, domain: Domain, parts: &[&[u8]]) -> HmacSha256 {
        let mut block = Zeroizing::new([0u8; 64]);
        block[..KEY_LEN].copy_from_slice(&self.0);
        let mut mac = <HmacSha256 as hmac::digest::KeyInit>::new(&(*block).into());
        let label = domain.label();
        mac.update(&(label.len() as u64).to_le_bytes());
        mac.update(label);
        for part in parts {
            mac.update(&(part.len() as u64).to_le_bytes());
            mac.update(part);
        }
        mac
    }

    /// The tag of `parts` for `domain`.
    pub fn tag(&self, domain: Domain, parts: &[&[u8]]) -> [u8; TAG_LEN] {
        self.mac(domain, parts).finalize().into_bytes().into()
    }

    /// Checks `tag` against `parts` for `domain`, in constant time.
    pub fn verify(&self, domain: Domain, parts: &[&[u8]], tag: &[u8]) -> Result<(), AuthError> {
        if tag.len() != TAG_LEN {
            return Err(AuthError::Malformed);
        }
        self.mac(domain, parts)
            .verify_slice(tag)
            .map_err(|_| AuthError::Mismatch)
    }

    /// The tag of `parts` as lowercase hex (the form of [`TAG_HEADER`]).
    pub fn tag_hex(&self, domain: Domain, parts: &[&[u8]]) -> String {
        crate::hex::encode(&self.tag(domain, parts))
    }

    /// Checks a hex tag (a [`TAG_HEADER`] value; `None`: missing).
    pub fn verify_hex(
        &self,
        domain: Domain,
        parts: &[&[u8]],
        tag: Option<&str>,
    ) -> Result<(), AuthError> {
        let tag = tag.ok_or(AuthError::Missing)?;
        let bytes = unhex(tag.trim()).ok_or(AuthError::Malformed)?;
        self.verify(domain, parts, &bytes)
    }
}

/// Unix time now, in seconds (0 if the clock is before 1970).
pub fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// Bounds the log lines about refused messages: at most one per [`RefusalLog::EVERY`],
/// each saying how many were refused since the last one (a party flooding the bus with
/// forgeries cannot flood the log).
#[derive(Debug, Default)]
pub struct RefusalLog {
    state: std::sync::Mutex<(Option<std::time::Instant>, u64)>,
}

impl RefusalLog {
    /// The shortest time between two lines.
    pub const EVERY: std::time::Duration = std::time::Duration::from_secs(10);

    /// Records one refusal; `Some(n)` when a line should be logged now, `n` being the
    /// refusals it stands for (this one and those not logged before it).
    pub fn note(&self) -> Option<u64> {
        let mut state = self
            .state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let (last, pending) = &mut *state;
        *pending += 1;
        let now = std::time::Instant::now();
        if last.is_some_and(|t| now.duration_since(t) < Self::EVERY) {
            return None;
        }
        *last = Some(now);
        Some(std::mem::take(pending))
    }
}

fn unhex(s: &str) -> Option<Vec<u8>> {
    (s.len() == 2 * TAG_LEN)
        .then(|| crate::hex::decode(s))
        .flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_padded_block_key_is_hmac_under_the_32_byte_key() -> Result<(), Box<dyn std::error::Error>>
    {
        let key = ClusterKey::from_bytes([7u8; KEY_LEN]);
        let mut reference = HmacSha256::new_from_slice(&[7u8; KEY_LEN])?;
        let label = Domain::Job.label();
        reference.update(&(label.len() as u64).to_le_bytes());
        reference.update(label);
        reference.update(&3u64.to_le_bytes());
        reference.update(b"abc");
        let expected: [u8; TAG_LEN] = reference.finalize().into_bytes().into();
        assert_eq!(key.tag(Domain::Job, &[b"abc"]), expected);
        Ok(())
    }

    #[test]
    fn hmac_sha256_matches_rfc_4231_case_2() -> Result<(), Box<dyn std::error::Error>> {
        // The padding argument above relies on the hmac crate being HMAC: RFC 4231, test 2.
        let mut m = HmacSha256::new_from_slice(b"Jefe")?;
        m.update(b"what do ya want for nothing?");
        assert_eq!(
            crate::hex::encode(&m.finalize().into_bytes()),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
        let mut block = [0u8; 64];
        block[..4].copy_from_slice(b"Jefe");
        let mut padded = <HmacSha256 as hmac::digest::KeyInit>::new(&block.into());
        padded.update(b"what do ya want for nothing?");
        assert_eq!(
            crate::hex::encode(&padded.finalize().into_bytes()),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
        Ok(())
    }

    #[test]
    fn tags_bind_key_domain_and_framing() {
        let a = ClusterKey::from_bytes([1u8; KEY_LEN]);
        let b = ClusterKey::from_bytes([2u8; KEY_LEN]);
        let t = a.tag(Domain::Job, &[b"subj", b"body"]);
        assert_eq!(a.verify(Domain::Job, &[b"subj", b"body"], &t), Ok(()));
        assert_eq!(
            b.verify(Domain::Job, &[b"subj", b"body"], &t),
            Err(AuthError::Mismatch)
        );
        assert_eq!(
            a.verify(Domain::Partial, &[b"subj", b"body"], &t),
            Err(AuthError::Mismatch)
        );
        // Moving bytes between parts changes the tag.
        assert_eq!(
            a.verify(Domain::Job, &[b"sub", b"jbody"], &t),
            Err(AuthError::Mismatch)
        );
        assert_eq!(
            a.verify(Domain::Job, &[b"subj", b"body"], &t[..31]),
            Err(AuthError::Malformed)
        );
        let h = a.tag_hex(Domain::Job, &[b"x"]);
        assert_eq!(a.verify_hex(Domain::Job, &[b"x"], Some(&h)), Ok(()));
        assert_eq!(
            a.verify_hex(Domain::Job, &[b"x"], None),
            Err(AuthError::Missing)
        );
        assert_eq!(
            a.verify_hex(Domain::Job, &[b"x"], Some("zz")),
            Err(AuthError::Malformed)
        );
        let mut flipped = h.into_bytes();
        flipped[0] = if flipped[0] == b'0' { b'1' } else { b'0' };
        let flipped = String::from_utf8(flipped).unwrap_or_default();
        assert_eq!(
            a.verify_hex(Domain::Job, &[b"x"], Some(&flipped)),
            Err(AuthError::Mismatch)
        );
        assert_eq!(format!("{a:?}"), "ClusterKey(..)");
    }

    #[test]
    fn refusal_lines_are_bounded() {
        let log = RefusalLog::default();
        assert_eq!(log.note(), Some(1));
        assert_eq!(log.note(), None);
        assert_eq!(log.note(), None);
    }

    #[cfg(unix)]
    #[test]
    fn key_files_are_created_0600_and_refused_when_others_can_read(
    ) -> Result<(), Box<dyn std::error::Error>> {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir()?;
        let path = dir.path().join("cluster.key");
        let key = ClusterKey::create_file(&path)?;
        assert_eq!(
            std::fs::metadata(&path)?.permissions().mode() & 0o777,
            0o600
        );
        let loaded = ClusterKey::load(&path)?;
        assert_eq!(loaded.0, key.0);
        assert!(matches!(
            ClusterKey::create_file(&path),
            Err(SecretFileError::Exists { .. })
        ));
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644))?;
        let err = ClusterKey::load(&path).err().map(|e| e.to_string());
        assert!(
            err.as_deref().is_some_and(|e| e.contains("mode 0644")),
            "{err:?}"
        );
        let short = dir.path().join("short.key");
        std::fs::write(&short, [0u8; 31])?;
        std::fs::set_permissions(&short, std::fs::Permissions::from_mode(0o600))?;
        assert!(matches!(
            ClusterKey::load(&short),
            Err(SecretFileError::KeyLength { found: 31, .. })
        ));
        Ok(())
    }
}
