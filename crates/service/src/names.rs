//! Checked names from outside: a stream's name and an upload's idempotency key.

use std::fmt;

/// The longest stream name.
pub const MAX_STREAM_NAME: usize = 64;
/// The longest idempotency key.
pub const MAX_IDEMPOTENCY_KEY: usize = 128;

/// Why a name from a request was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NameError {
    /// Empty.
    #[error("{what} is empty")]
    Empty {
        /// What was named.
        what: &'static str,
    },
    /// Too long.
    #[error("{what} has {len} bytes, at most {max} are allowed")]
    TooLong {
        /// What was named.
        what: &'static str,
        /// Its length.
        len: usize,
        /// The limit.
        max: usize,
    },
    /// A byte outside the allowed set.
    #[error("{what} has a byte 0x{byte:02x} at offset {offset}; allowed: {allowed}")]
    BadByte {
        /// What was named.
        what: &'static str,
        /// The byte.
        byte: u8,
        /// Where.
        offset: usize,
        /// The allowed set, in words.
        allowed: &'static str,
    },
}

fn check(
    what: &'static str,
    s: &str,
    max: usize,
    allowed: &'static str,
    ok: impl Fn(usize, u8) -> bool,
) -> Result<(), NameError> {
    if s.is_empty() {
        return Err(NameError::Empty { what });
    }
    if s.len() > max {
        return Err(NameError::TooLong {
            what,
            len: s.len(),
            max,
        });
    }
    match s.bytes().enumerate().find(|&(i, b)| !ok(i, b)) {
        Some((offset, byte)) => Err(NameError::BadByte {
            what,
            byte,
            offset,
            allowed,
        }),
        None => Ok(()),
    }
}

/// A stream's name: 1 to [`MAX_STREAM_NAME`] bytes of `A-Z a-z 0-9 . _ -`, not starting
/// with `.` or `-` (so it is safe in a URL path segment, a file name or a NATS subject).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct StreamName(String);

impl StreamName {
    /// Checks `name`.
    pub fn new(name: &str) -> Result<Self, NameError> {
        check(
            "stream name",
            name,
            MAX_STREAM_NAME,
            "A-Z a-z 0-9 . _ -, not . or - first",
            |i, b| b.is_ascii_alphanumeric() || b == b'_' || (i > 0 && (b == b'.' || b == b'-')),
        )?;
        Ok(Self(name.to_owned()))
    }

    /// The name.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for StreamName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// An upload's `Idempotency-Key`: 1 to [`MAX_IDEMPOTENCY_KEY`] bytes of visible ASCII
/// (`!` to `~`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct IdempotencyKey(String);

impl IdempotencyKey {
    /// Checks `key`.
    pub fn new(key: &str) -> Result<Self, NameError> {
        check(
            "Idempotency-Key",
            key,
            MAX_IDEMPOTENCY_KEY,
            "visible ASCII (! to ~)",
            |_, b| b.is_ascii_graphic(),
        )?;
        Ok(Self(key.to_owned()))
    }

    /// The key as stored: `device/key` (a device name has no `/`), so that two devices'
    /// keys never collide and a device cannot occupy another's keys.
    pub fn scoped(device: &DeviceName, key: &IdempotencyKey) -> Self {
        Self(format!("{device}/{}", key.0))
    }

    /// The key.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// The longest device name.
pub const MAX_DEVICE_NAME: usize = 64;

/// A device's name: 1 to [`MAX_DEVICE_NAME`] bytes of `A-Z a-z 0-9 _ -`, not `-` first (no
/// `.` or `/`, so it is unambiguous inside a token and as an idempotency-key scope).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct DeviceName(String);

impl DeviceName {
    /// Checks `name`.
    pub fn new(name: &str) -> Result<Self, NameError> {
        if name.is_empty() {
            return Err(NameError::Empty {
                what: "device name",
            });
        }
        if name.len() > MAX_DEVICE_NAME {
            return Err(NameError::TooLong {
                what: "device name",
                len: name.len(),
                max: MAX_DEVICE_NAME,
            });
        }
        let ok = |i: usize, b: u8| b.is_ascii_alphanumeric() || b == b'_' || (i > 0 && b == b'-');
        if let Some((offset, byte)) = name.bytes().enumerate().find(|&(i, b)| !ok(i, b)) {
            return Err(NameError::BadByte {
                what: "device name",
                byte,
                offset,
                allowed: "A-Z a-z 0-9 _ -, not - first",
            });
        }
        Ok(Self(name.to_owned()))
    }

    /// The name.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for DeviceName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stream_names() {
        assert!(StreamName::new("sensors.temp-1_a").is_ok());
        assert_eq!(
            StreamName::new(""),
            Err(NameError::Empty {
                what: "stream name"
            })
        );
        assert!(matches!(
            StreamName::new(".hidden"),
            Err(NameError::BadByte { offset: 0, .. })
        ));
        assert!(matches!(
            StreamName::new("a/b"),
            Err(NameError::BadByte { byte: b'/', .. })
        ));
        assert!(matches!(
            StreamName::new(&"x".repeat(65)),
            Err(NameError::TooLong { len: 65, .. })
        ));
        assert!(StreamName::new(&"x".repeat(64)).is_ok());
    }

    #[test]
    fn idempotency_keys() {
        assert!(IdempotencyKey::new("device-7/reading-42").is_ok());
        assert!(matches!(
            IdempotencyKey::new("a b"),
            Err(NameError::BadByte { byte: b' ', .. })
        ));
        assert!(IdempotencyKey::new(&"k".repeat(129)).is_err());
    }
}
