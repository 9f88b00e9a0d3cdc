//! The self-describing file container for keys and ciphertexts (`ZRBL`).
//!
//! A container is an 8-byte [`Header`] followed by the library's byte form of one object
//! (the "Byte formats" table of the crate README), so a Set 1 object is never taken for a
//! Set 2 object of the same length:
//!
//! | bytes | field | values |
//! |---|---|---|
//! | 0..4 | magic | [`MAGIC`] (`ZRBL`) |
//! | 4 | format version | [`VERSION`] (1) |
//! | 5 | parameter set | 1, 2, 3 ([`SetId`]) |
//! | 6 | kind | 1 public key, 2 secret key, 3 ciphertext ([`Kind`]) |
//! | 7 | scheme | 0 CPA, 1 CCA2 ([`Scheme`]) |
//!
//! The payload length ([`Header::payload_len`]) is the `BYTES` constant of the object's type
//! ([`PublicKey::BYTES`], [`SecretKey::BYTES`], [`Ciphertext::BYTES`] and their
//! [`cca`](crate::cca) counterparts), so it cannot drift from the readers.
//!
//! `no_std` and no allocation: [`open()`] parses a borrowed `&[u8]` and returns the payload as
//! a sub-slice, [`write()`] frames a payload into a caller buffer. Every malformed input is
//! refused with a [`ContainerError`] that names what is wrong; the payload itself is then
//! read with the object's own `from_bytes`, which checks coefficients and key structure.
//!
//! ```
//! use rblwe::container::{self, Header, Kind, Scheme};
//! use rblwe::{cpa, EntropyPool, Hardened, KatEntropy, PublicParameter, Set1, SetId};
//!
//! let mut pool: EntropyPool<_, 1024> = EntropyPool::new(KatEntropy::new(b"container doc"));
//! let a = PublicParameter::<Set1>::from_seed(&[7u8; 32]);
//! let (pk, _sk) = cpa::keygen::<Set1, Hardened, _, 1024>(&a, &mut pool)?;
//! let header = Header::new(SetId::Set1, Kind::PublicKey, Scheme::Cpa);
//! let mut file = [0u8; container::HEADER_BYTES + 512];
//! let len = container::write(header, pk.to_bytes().as_ref(), &mut file)?;
//! assert_eq!(len, header.file_len());
//!
//! let (read, payload) = container::open(&file[..len], Kind::PublicKey)?;
//! assert_eq!(read, header);
//! assert_eq!(rblwe::PublicKey::<Set1>::from_bytes(payload)?, pk);
//! # Ok::<(), Box<dyn core::error::Error>>(())
//! ```

use core::fmt;

use crate::cca::{CcaCiphertext, CcaPublicKey, CcaSecretKey};
use crate::cpa::{Ciphertext, PublicKey, SecretKey};
use crate::params::{ParamSet, Set1, Set2, Set3, SetId};

/// The first four bytes of every container.
pub const MAGIC: [u8; 4] = *b"ZRBL";
/// The format version this code reads and writes.
pub const VERSION: u8 = 1;
/// Header length in bytes.
pub const HEADER_BYTES: usize = 8;

/// What a container holds (header byte 6).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A public key.
    PublicKey = 1,
    /// A secret key.
    SecretKey = 2,
    /// A ciphertext.
    Ciphertext = 3,
}

impl Kind {
    /// All kinds.
    pub const ALL: [Kind; 3] = [Kind::PublicKey, Kind::SecretKey, Kind::Ciphertext];

    /// Its header byte.
    pub const fn to_byte(self) -> u8 {
        self as u8
    }

    /// The kind with header byte `b`, if any.
    pub fn from_byte(b: u8) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.to_byte() == b)
    }

    /// "public key", "secret key" or "ciphertext".
    pub const fn name(self) -> &'static str {
        match self {
            Kind::PublicKey => "public key",
            Kind::SecretKey => "secret key",
            Kind::Ciphertext => "ciphertext",
        }
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Which scheme an object belongs to (header byte 7).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scheme {
    /// The CPA-secure scheme ([`crate::cpa`]).
    Cpa = 0,
    /// The CCA2 wrapper ([`crate::cca`]).
    Cca2 = 1,
}

impl Scheme {
    /// Both schemes.
    pub const ALL: [Scheme; 2] = [Scheme::Cpa, Scheme::Cca2];

    /// Its header byte.
    pub const fn to_byte(self) -> u8 {
        self as u8
    }

    /// The scheme with header byte `b`, if any.
    pub fn from_byte(b: u8) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.to_byte() == b)
    }

    /// "CPA" or "CCA2".
    pub const fn name(self) -> &'static str {
        match self {
            Scheme::Cpa => "CPA",
            Scheme::Cca2 => "CCA2",
        }
    }
}

impl fmt::Display for Scheme {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The header byte of a parameter set (header byte 5).
pub const fn set_to_byte(set: SetId) -> u8 {
    match set {
        SetId::Set1 => 1,
        SetId::Set2 => 2,
        SetId::Set3 => 3,
    }
}

/// The parameter set with header byte `b`, if any.
pub fn set_from_byte(b: u8) -> Option<SetId> {
    SetId::ALL.into_iter().find(|s| set_to_byte(*s) == b)
}

/// A header field that can hold an unknown value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HeaderField {
    /// Byte 5.
    Set,
    /// Byte 6.
    Kind,
    /// Byte 7.
    Scheme,
}

impl fmt::Display for HeaderField {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            HeaderField::Set => "parameter set",
            HeaderField::Kind => "object kind",
            HeaderField::Scheme => "scheme",
        })
    }
}

/// The 8-byte header: `"ZRBL" ‖ version ‖ set (1, 2, 3) ‖ kind (1 pk, 2 sk, 3 ct) ‖
/// scheme (0 CPA, 1 CCA2)`.
///
/// Displays as `"<set name> <scheme> <kind>"`, e.g. `set1 CPA public key`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    /// Parameter set.
    pub set: SetId,
    /// Object kind.
    pub kind: Kind,
    /// Scheme.
    pub scheme: Scheme,
}

impl Header {
    /// A header for an object of `kind` and `scheme` under `set`.
    pub const fn new(set: SetId, kind: Kind, scheme: Scheme) -> Self {
        Self { set, kind, scheme }
    }

    /// The header bytes.
    pub const fn to_bytes(self) -> [u8; HEADER_BYTES] {
        [
            MAGIC[0],
            MAGIC[1],
            MAGIC[2],
            MAGIC[3],
            VERSION,
            set_to_byte(self.set),
            self.kind.to_byte(),
            self.scheme.to_byte(),
        ]
    }

    /// Parses the header at the start of `bytes` (which may go on with the payload): checks
    /// the magic, the version and that every field is known. Neither the kind nor the length
    /// is checked here (see [`open()`]).
    pub fn parse(bytes: &[u8]) -> Result<Self, ContainerError> {
        let Some(head) = bytes.first_chunk::<HEADER_BYTES>() else {
            return Err(ContainerError::TooShort { len: bytes.len() });
        };
        let [m0, m1, m2, m3, version, set, kind, scheme] = *head;
        if [m0, m1, m2, m3] != MAGIC {
            return Err(ContainerError::BadMagic {
                found: [m0, m1, m2, m3],
            });
        }
        if version != VERSION {
            return Err(ContainerError::UnsupportedVersion { version });
        }
        let bad = |field, value| ContainerError::UnknownField { field, value };
        Ok(Self {
            set: set_from_byte(set).ok_or_else(|| bad(HeaderField::Set, set))?,
            kind: Kind::from_byte(kind).ok_or_else(|| bad(HeaderField::Kind, kind))?,
            scheme: Scheme::from_byte(scheme).ok_or_else(|| bad(HeaderField::Scheme, scheme))?,
        })
    }

    /// Length of the object's byte form after the header: the `BYTES` constant of its type.
    pub const fn payload_len(self) -> usize {
        match self.set {
            SetId::Set1 => payload_len::<Set1>(self.kind, self.scheme),
            SetId::Set2 => payload_len::<Set2>(self.kind, self.scheme),
            SetId::Set3 => payload_len::<Set3>(self.kind, self.scheme),
        }
    }

    /// Length of the whole container: header plus payload.
    pub const fn file_len(self) -> usize {
        HEADER_BYTES + self.payload_len()
    }
}

impl fmt::Display for Header {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {} {}", self.set.name(), self.scheme, self.kind)
    }
}

/// Serialized size of an object of `kind` and `scheme` in parameter set `P`.
const fn payload_len<P: ParamSet>(kind: Kind, scheme: Scheme) -> usize {
    match (scheme, kind) {
        (Scheme::Cpa, Kind::PublicKey) => PublicKey::<P>::BYTES,
        (Scheme::Cca2, Kind::PublicKey) => CcaPublicKey::<P>::BYTES,
        (Scheme::Cpa, Kind::SecretKey) => SecretKey::<P>::BYTES,
        (Scheme::Cca2, Kind::SecretKey) => CcaSecretKey::<P, SecretKey<P>>::BYTES,
        (Scheme::Cpa, Kind::Ciphertext) => Ciphertext::<P>::BYTES,
        (Scheme::Cca2, Kind::Ciphertext) => CcaCiphertext::<P>::BYTES,
    }
}

/// Parses a whole container that must hold a `expected` object: the header ([`Header::parse`]),
/// then the kind, then the length (exactly [`Header::file_len`], so truncated and padded
/// inputs are refused). Returns the header and the payload.
pub fn open(bytes: &[u8], expected: Kind) -> Result<(Header, &[u8]), ContainerError> {
    let header = Header::parse(bytes)?;
    if header.kind != expected {
        return Err(ContainerError::WrongKind {
            expected,
            found: header,
        });
    }
    let payload = &bytes[HEADER_BYTES..];
    if payload.len() != header.payload_len() {
        return Err(ContainerError::WrongLength {
            header,
            expected: header.file_len(),
            actual: bytes.len(),
        });
    }
    Ok((header, payload))
}

/// Writes `header ‖ payload` into the start of `out` and returns the bytes written
/// ([`Header::file_len`]). `payload` must be exactly [`Header::payload_len`] bytes and `out`
/// at least [`Header::file_len`]; nothing is written otherwise.
pub fn write(header: Header, payload: &[u8], out: &mut [u8]) -> Result<usize, ContainerError> {
    if payload.len() != header.payload_len() {
        return Err(ContainerError::PayloadLength {
            header,
            expected: header.payload_len(),
            actual: payload.len(),
        });
    }
    let len = header.file_len();
    let Some(dst) = out.get_mut(..len) else {
        return Err(ContainerError::BufferTooSmall {
            needed: len,
            actual: out.len(),
        });
    };
    let (head, body) = dst.split_at_mut(HEADER_BYTES);
    head.copy_from_slice(&header.to_bytes());
    body.copy_from_slice(payload);
    Ok(len)
}

/// Everything a container can be refused for. Each variant says what is wrong; the
/// messages do not name the file (callers that have one prefix it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ContainerError {
    /// Shorter than the header.
    TooShort {
        /// The input's length.
        len: usize,
    },
    /// The input does not start with [`MAGIC`].
    BadMagic {
        /// Its first four bytes.
        found: [u8; 4],
    },
    /// A format version other than [`VERSION`].
    UnsupportedVersion {
        /// The version byte.
        version: u8,
    },
    /// A header byte outside its range.
    UnknownField {
        /// Which field.
        field: HeaderField,
        /// The byte.
        value: u8,
    },
    /// An object of another kind than the caller needs (e.g. a secret key where a public key
    /// is expected).
    WrongKind {
        /// The kind the caller needs.
        expected: Kind,
        /// The input's header.
        found: Header,
    },
    /// The input's length does not match its header (truncated or padded).
    WrongLength {
        /// The input's header.
        header: Header,
        /// Header plus payload length.
        expected: usize,
        /// The input's length.
        actual: usize,
    },
    /// [`write()`]: the payload is not the header's object size.
    PayloadLength {
        /// The header it was to be framed with.
        header: Header,
        /// [`Header::payload_len`].
        expected: usize,
        /// The payload's length.
        actual: usize,
    },
    /// [`write()`]: the output buffer cannot hold the container.
    BufferTooSmall {
        /// [`Header::file_len`].
        needed: usize,
        /// The buffer's length.
        actual: usize,
    },
}

impl fmt::Display for ContainerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ContainerError::TooShort { len } => write!(
                f,
                "{len} bytes, shorter than the {HEADER_BYTES}-byte rblwe header"
            ),
            ContainerError::BadMagic { found } => write!(
                f,
                "not a zeppelin rblwe file (magic {found:02x?}, expected \"ZRBL\")"
            ),
            ContainerError::UnsupportedVersion { version } => write!(
                f,
                "format version {version} is not supported (this build reads version {VERSION})"
            ),
            ContainerError::UnknownField { field, value } => {
                write!(f, "unknown {field} byte {value} in the header")
            }
            ContainerError::WrongKind { expected, found } => {
                write!(f, "expected a {expected}, found a {found}")
            }
            ContainerError::WrongLength {
                header,
                expected,
                actual,
            } => write!(
                f,
                "a {header} file is {expected} bytes, this one is {actual} (truncated or padded)"
            ),
            ContainerError::PayloadLength {
                header,
                expected,
                actual,
            } => write!(
                f,
                "a {header} payload is {expected} bytes, this one is {actual}"
            ),
            ContainerError::BufferTooSmall { needed, actual } => write!(
                f,
                "output buffer of {actual} bytes cannot hold the {needed}-byte container"
            ),
        }
    }
}

impl core::error::Error for ContainerError {}

#[cfg(test)]
mod tests {
    extern crate std;
    use std::string::ToString;

    use super::*;

    fn every_header() -> impl Iterator<Item = Header> {
        SetId::ALL.into_iter().flat_map(|set| {
            Kind::ALL.into_iter().flat_map(move |kind| {
                Scheme::ALL
                    .into_iter()
                    .map(move |scheme| Header::new(set, kind, scheme))
            })
        })
    }

    /// A container of `header` with a recognisable payload, in a buffer with room to spare.
    fn container(header: Header, buf: &mut [u8; 2048]) -> usize {
        let mut payload = [0u8; 2048];
        for (i, b) in payload.iter_mut().enumerate() {
            *b = (i as u8).wrapping_mul(31) ^ 0x5a;
        }
        write(header, &payload[..header.payload_len()], buf).unwrap()
    }

    #[test]
    fn header_bytes_are_the_documented_layout() {
        let h = Header::new(SetId::Set3, Kind::Ciphertext, Scheme::Cca2);
        assert_eq!(h.to_bytes(), [b'Z', b'R', b'B', b'L', 1, 3, 3, 1]);
        let h = Header::new(SetId::Set1, Kind::PublicKey, Scheme::Cpa);
        assert_eq!(h.to_bytes(), [b'Z', b'R', b'B', b'L', 1, 1, 1, 0]);
        let h = Header::new(SetId::Set2, Kind::SecretKey, Scheme::Cca2);
        assert_eq!(h.to_bytes(), [b'Z', b'R', b'B', b'L', 1, 2, 2, 1]);
    }

    /// The documented table (docs/cli.md, "File format"), written out independently of the
    /// `BYTES` constants.
    #[test]
    fn payload_lengths_are_the_documented_table() {
        for h in every_header() {
            let n = h.set.n();
            let expected = match (h.scheme, h.kind) {
                (_, Kind::PublicKey) => 2 * n,
                (Scheme::Cpa, Kind::SecretKey) => n / 8,
                (Scheme::Cca2, Kind::SecretKey) => n / 8 + 32 + 2 * n,
                (Scheme::Cpa, Kind::Ciphertext) => 2 * n,
                (Scheme::Cca2, Kind::Ciphertext) => 2 * n + n / 4,
            };
            assert_eq!(h.payload_len(), expected, "{h}");
            assert_eq!(h.file_len(), HEADER_BYTES + expected, "{h}");
        }
        // Two spot values from the table: set 3 CCA2 ciphertext, set 1 CCA2 secret key.
        let h = Header::new(SetId::Set3, Kind::Ciphertext, Scheme::Cca2);
        assert_eq!(h.payload_len(), 512 + 512 + 64 + 64);
        let h = Header::new(SetId::Set1, Kind::SecretKey, Scheme::Cca2);
        assert_eq!(h.payload_len(), 576);
    }

    #[test]
    fn every_header_round_trips() {
        for h in every_header() {
            let mut buf = [0u8; 2048];
            let len = container(h, &mut buf);
            assert_eq!(len, h.file_len());
            assert_eq!(buf[..HEADER_BYTES], h.to_bytes());
            assert_eq!(Header::parse(&buf[..len]), Ok(h));
            assert_eq!(Header::parse(&buf[..HEADER_BYTES]), Ok(h));
            let (read, payload) = open(&buf[..len], h.kind).unwrap();
            assert_eq!(read, h);
            assert_eq!(payload, &buf[HEADER_BYTES..len]);
            assert!(
                buf[len..].iter().all(|&b| b == 0),
                "wrote past the container"
            );
        }
    }

    #[test]
    fn header_display_names_set_scheme_and_kind() {
        let h = Header::new(SetId::Set1, Kind::PublicKey, Scheme::Cpa);
        assert_eq!(format_args!("{h}").to_string(), "set1 CPA public key");
    }

    #[test]
    fn short_inputs_are_refused() {
        let h = Header::new(SetId::Set1, Kind::Ciphertext, Scheme::Cpa);
        let bytes = h.to_bytes();
        for len in 0..HEADER_BYTES {
            assert_eq!(
                Header::parse(&bytes[..len]),
                Err(ContainerError::TooShort { len })
            );
            assert_eq!(
                open(&bytes[..len], Kind::Ciphertext),
                Err(ContainerError::TooShort { len })
            );
        }
    }

    #[test]
    fn every_bad_magic_byte_is_refused() {
        let h = Header::new(SetId::Set2, Kind::SecretKey, Scheme::Cpa);
        let mut buf = [0u8; 2048];
        let len = container(h, &mut buf);
        for at in 0..4 {
            for v in [0u8, b'z', 0xff, MAGIC[at] ^ 1] {
                let mut b = buf;
                b[at] = v;
                let mut found = MAGIC;
                found[at] = v;
                assert_eq!(
                    open(&b[..len], Kind::SecretKey),
                    Err(ContainerError::BadMagic { found })
                );
            }
        }
    }

    #[test]
    fn every_other_version_is_refused() {
        let h = Header::new(SetId::Set1, Kind::PublicKey, Scheme::Cca2);
        let mut buf = [0u8; 2048];
        let len = container(h, &mut buf);
        for version in (0..=u8::MAX).filter(|&v| v != VERSION) {
            buf[4] = version;
            assert_eq!(
                open(&buf[..len], Kind::PublicKey),
                Err(ContainerError::UnsupportedVersion { version })
            );
        }
    }

    #[test]
    fn every_unknown_set_kind_and_scheme_byte_is_refused() {
        let h = Header::new(SetId::Set3, Kind::Ciphertext, Scheme::Cpa);
        let mut buf = [0u8; 2048];
        let len = container(h, &mut buf);
        let fields = [
            (5, HeaderField::Set, &[1u8, 2, 3][..]),
            (6, HeaderField::Kind, &[1, 2, 3][..]),
            (7, HeaderField::Scheme, &[0, 1][..]),
        ];
        for (at, field, known) in fields {
            for value in 0..=u8::MAX {
                let mut b = buf;
                b[at] = value;
                let got = Header::parse(&b[..len]);
                if known.contains(&value) {
                    assert!(got.is_ok(), "{field} {value}");
                } else {
                    assert_eq!(got, Err(ContainerError::UnknownField { field, value }));
                    assert_eq!(
                        open(&b[..len], Kind::Ciphertext),
                        Err(ContainerError::UnknownField { field, value })
                    );
                }
            }
        }
        assert_eq!(set_from_byte(0), None);
        assert_eq!(Kind::from_byte(0), None);
        assert_eq!(Scheme::from_byte(2), None);
    }

    #[test]
    fn the_wrong_kind_is_refused_before_the_length() {
        for h in every_header() {
            let mut buf = [0u8; 2048];
            let len = container(h, &mut buf);
            for expected in Kind::ALL.into_iter().filter(|k| *k != h.kind) {
                let want = Err(ContainerError::WrongKind { expected, found: h });
                assert_eq!(open(&buf[..len], expected), want);
                // Even when the length is wrong too.
                assert_eq!(open(&buf[..len - 1], expected), want);
            }
        }
    }

    #[test]
    fn every_truncated_or_padded_length_is_refused() {
        for h in every_header() {
            let mut buf = [0u8; 2048];
            let len = container(h, &mut buf);
            for actual in (HEADER_BYTES..len).chain([len + 1, len + 7, 2048]) {
                assert_eq!(
                    open(&buf[..actual], h.kind),
                    Err(ContainerError::WrongLength {
                        header: h,
                        expected: len,
                        actual,
                    })
                );
            }
        }
    }

    /// Set 1 and set 2 objects have the same length: only the header tells them apart.
    #[test]
    fn set_byte_separates_objects_of_equal_length() {
        let h1 = Header::new(SetId::Set1, Kind::Ciphertext, Scheme::Cpa);
        let h2 = Header::new(SetId::Set2, Kind::Ciphertext, Scheme::Cpa);
        assert_eq!(h1.file_len(), h2.file_len());
        let mut buf = [0u8; 2048];
        let len = container(h1, &mut buf);
        buf[5] = 2;
        assert_eq!(open(&buf[..len], Kind::Ciphertext).map(|r| r.0), Ok(h2));
    }

    #[test]
    fn write_refuses_wrong_payloads_and_small_buffers_untouched() {
        let h = Header::new(SetId::Set1, Kind::SecretKey, Scheme::Cpa);
        let payload = [0x11u8; 64];
        let mut out = [0xeeu8; 128];
        for actual in [0, 31, 33, 64] {
            assert_eq!(
                write(h, &payload[..actual], &mut out),
                Err(ContainerError::PayloadLength {
                    header: h,
                    expected: 32,
                    actual,
                })
            );
        }
        for actual in [0, 8, 39] {
            assert_eq!(
                write(h, &payload[..32], &mut out[..actual]),
                Err(ContainerError::BufferTooSmall { needed: 40, actual })
            );
        }
        assert!(out.iter().all(|&b| b == 0xee), "written on failure");
        assert_eq!(write(h, &payload[..32], &mut out[..40]), Ok(40));
    }

    #[test]
    fn messages_name_what_is_wrong() {
        let h = Header::new(SetId::Set1, Kind::Ciphertext, Scheme::Cpa);
        let cases = [
            (
                ContainerError::TooShort { len: 5 },
                "5 bytes, shorter than the 8-byte rblwe header",
            ),
            (
                ContainerError::UnsupportedVersion { version: 2 },
                "format version 2 is not supported (this build reads version 1)",
            ),
            (
                ContainerError::UnknownField {
                    field: HeaderField::Set,
                    value: 4,
                },
                "unknown parameter set byte 4 in the header",
            ),
            (
                ContainerError::WrongKind {
                    expected: Kind::SecretKey,
                    found: h,
                },
                "expected a secret key, found a set1 CPA ciphertext",
            ),
            (
                ContainerError::WrongLength {
                    header: h,
                    expected: 520,
                    actual: 519,
                },
                "a set1 CPA ciphertext file is 520 bytes, this one is 519 (truncated or padded)",
            ),
        ];
        for (e, text) in cases {
            assert_eq!(format_args!("{e}").to_string(), text);
        }
    }
}
