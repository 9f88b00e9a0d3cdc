//! SEAL's framing: the 16-byte `SEALHeader`, optional zlib/zstd compression of the body, and
//! a bounded little-endian reader that never allocates by a length it has not checked.
//!
//! Layout of the header (all little-endian): magic `u16` 0xA15E, header size `u8` 16, version
//! major `u8`, version minor `u8`, compression `u8` (0 none, 1 zlib, 2 zstd), reserved `u16` 0,
//! total size `u64` (header included; for compressed objects the compressed size).

use std::io::{BufRead, Read, Write};

use zeroize::Zeroizing;

use crate::error::{Result, SealError};

/// SEAL's magic number.
pub const SEAL_MAGIC: u16 = 0xA15E;
/// Size of the `SEALHeader` in bytes.
pub const HEADER_SIZE: usize = 16;
/// The version this crate writes: SEAL 4.1.
pub const WRITE_VERSION: (u8, u8) = (4, 1);
/// The highest minor version of major 4 this crate reads (seal-python 4.4 writes 4.4).
pub const MAX_READ_MINOR: u8 = 4;

/// How the body after the header is compressed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ComprMode {
    /// Stored as is.
    None,
    /// zlib (deflate with the zlib wrapper), SEAL's `compr_mode_type::zlib`.
    Zlib,
    /// One zstd frame, SEAL's `compr_mode_type::zstd`.
    Zstd,
}

impl ComprMode {
    /// The byte SEAL writes for this mode.
    pub const fn byte(self) -> u8 {
        match self {
            ComprMode::None => 0,
            ComprMode::Zlib => 1,
            ComprMode::Zstd => 2,
        }
    }

    fn from_byte(b: u8) -> Option<Self> {
        match b {
            0 => Some(ComprMode::None),
            1 => Some(ComprMode::Zlib),
            2 => Some(ComprMode::Zstd),
            _ => None,
        }
    }
}

impl std::str::FromStr for ComprMode {
    type Err = SealError;
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "none" => Ok(ComprMode::None),
            "zlib" => Ok(ComprMode::Zlib),
            "zstd" => Ok(ComprMode::Zstd),
            other => Err(SealError::UnknownName {
                what: "compression mode",
                name: other.to_owned(),
                expected: "none, zlib or zstd",
            }),
        }
    }
}

/// A parsed `SEALHeader`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SealHeader {
    /// Major serialization version (4).
    pub version_major: u8,
    /// Minor serialization version (0 to 4).
    pub version_minor: u8,
    /// Compression of the body.
    pub compr_mode: ComprMode,
    /// Total size in bytes, header included.
    pub size: u64,
}

impl SealHeader {
    /// A header as this crate writes it (version 4.1).
    pub const fn new(compr_mode: ComprMode, size: u64) -> Self {
        Self {
            version_major: WRITE_VERSION.0,
            version_minor: WRITE_VERSION.1,
            compr_mode,
            size,
        }
    }

    /// The 16 bytes of the header.
    pub fn to_bytes(&self) -> [u8; HEADER_SIZE] {
        let mut b = [0u8; HEADER_SIZE];
        b[0..2].copy_from_slice(&SEAL_MAGIC.to_le_bytes());
        b[2] = HEADER_SIZE as u8;
        b[3] = self.version_major;
        b[4] = self.version_minor;
        b[5] = self.compr_mode.byte();
        b[8..16].copy_from_slice(&self.size.to_le_bytes());
        b
    }

    /// Parses and validates 16 header bytes of the object `what`.
    pub fn parse(b: &[u8; HEADER_SIZE], what: &'static str) -> Result<Self> {
        let magic = u16::from_le_bytes([b[0], b[1]]);
        if magic != SEAL_MAGIC {
            return Err(SealError::BadMagic { what, found: magic });
        }
        if b[2] as usize != HEADER_SIZE {
            return Err(SealError::BadHeaderSize { what, found: b[2] });
        }
        let (major, minor) = (b[3], b[4]);
        if major != 4 || minor > MAX_READ_MINOR {
            return Err(SealError::UnsupportedVersion { what, major, minor });
        }
        let compr_mode = ComprMode::from_byte(b[5])
            .ok_or(SealError::UnsupportedCompression { what, found: b[5] })?;
        let reserved = u16::from_le_bytes([b[6], b[7]]);
        if reserved != 0 {
            return Err(SealError::BadReserved {
                what,
                found: reserved,
            });
        }
        let mut size = [0u8; 8];
        size.copy_from_slice(&b[8..16]);
        let size = u64::from_le_bytes(size);
        if size < HEADER_SIZE as u64 {
            return Err(SealError::SizeMismatch {
                what,
                declared: size,
                actual: HEADER_SIZE as u64,
            });
        }
        Ok(Self {
            version_major: major,
            version_minor: minor,
            compr_mode,
            size,
        })
    }
}

/// What bounds the bytes a [`Reader`] may still deliver.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bound {
    /// The member stream is the input itself, of exactly this many bytes: reading past it is
    /// [`SealError::Truncated`].
    Input(u64),
    /// The member stream is decompressed; the object cannot be longer than this in its
    /// context, so decompression stops there with [`SealError::DecompressionLimit`].
    Decompressed(u64),
}

impl Bound {
    fn limit(self) -> u64 {
        match self {
            Bound::Input(n) | Bound::Decompressed(n) => n,
        }
    }
}

/// A little-endian reader over a byte stream that counts what it consumed, turns every short
/// read into [`SealError::Truncated`], and never reads (or lets a caller allocate for) more
/// than its [`Bound`].
pub struct Reader<'a> {
    src: &'a mut dyn Read,
    offset: u64,
    bound: Bound,
    what: &'static str,
}

impl<'a> Reader<'a> {
    /// Reads the members of the object `what` from `src`, at most `bound` bytes.
    pub fn new(src: &'a mut dyn Read, what: &'static str, bound: Bound) -> Self {
        Self {
            src,
            offset: 0,
            bound,
            what,
        }
    }

    /// Bytes consumed so far.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// The most bytes the stream may still deliver.
    pub fn remaining(&self) -> u64 {
        self.bound.limit().saturating_sub(self.offset)
    }

    /// Fails unless `needed` more bytes fit within the bound (checked before a caller
    /// allocates for them).
    pub fn ensure_available(&self, needed: u64, field: &'static str) -> Result<()> {
        let available = self.remaining();
        if needed <= available {
            return Ok(());
        }
        Err(match self.bound {
            Bound::Input(_) => SealError::Truncated {
                what: field,
                offset: self.offset,
                needed,
                available,
            },
            Bound::Decompressed(limit) => SealError::DecompressionLimit {
                what: self.what,
                limit,
            },
        })
    }

    /// Fills `buf` completely or fails with `Truncated` (or `Decompression` when the
    /// decompressor rejects its input, or `DecompressionLimit` past the bound).
    pub fn read_exact(&mut self, buf: &mut [u8], field: &'static str) -> Result<()> {
        self.ensure_available(buf.len() as u64, field)?;
        let mut filled = 0usize;
        while filled < buf.len() {
            let rest = buf.get_mut(filled..).unwrap_or_default();
            match self.src.read(rest) {
                Ok(0) => {
                    return Err(SealError::Truncated {
                        what: field,
                        offset: self.offset,
                        needed: buf.len() as u64,
                        available: filled as u64,
                    })
                }
                Ok(k) => filled += k,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => {
                    return Err(SealError::Truncated {
                        what: field,
                        offset: self.offset,
                        needed: buf.len() as u64,
                        available: filled as u64,
                    })
                }
                Err(source) => {
                    return Err(SealError::Decompression {
                        what: self.what,
                        source,
                    })
                }
            }
        }
        self.offset += buf.len() as u64;
        Ok(())
    }

    /// One byte.
    pub fn u8(&mut self, field: &'static str) -> Result<u8> {
        let mut b = [0u8; 1];
        self.read_exact(&mut b, field)?;
        Ok(b[0])
    }

    /// A little-endian `u64`.
    pub fn u64(&mut self, field: &'static str) -> Result<u64> {
        let mut b = [0u8; 8];
        self.read_exact(&mut b, field)?;
        Ok(u64::from_le_bytes(b))
    }

    /// A little-endian `f64`.
    pub fn f64(&mut self, field: &'static str) -> Result<f64> {
        Ok(f64::from_bits(self.u64(field)?))
    }

    /// A fixed-size byte array.
    pub fn array<const N: usize>(&mut self, field: &'static str) -> Result<[u8; N]> {
        let mut b = [0u8; N];
        self.read_exact(&mut b, field)?;
        Ok(b)
    }

    /// `count` little-endian `u64` words. The caller must have checked `count` against the
    /// metadata; here it is checked against what the stream can still deliver before
    /// anything is allocated. From the input itself the output is allocated once at its final
    /// size; from a decompressor (whose output is only bounded by the parameters) it starts
    /// small and doubles as data actually arrives, each smaller buffer wiped as it is
    /// replaced. Either way no reallocation leaves a copy behind: the words are returned in a
    /// [`Zeroizing`] buffer and the staging buffer is wiped, since they may be a secret key's.
    pub fn u64_words(&mut self, count: usize, field: &'static str) -> Result<Zeroizing<Vec<u64>>> {
        const CHUNK: usize = 512;
        let bytes = (count as u64).saturating_mul(8);
        self.ensure_available(bytes, field)?;
        let initial = match self.bound {
            Bound::Input(_) => count,
            Bound::Decompressed(_) => count.min(CHUNK * 8),
        };
        let mut out = Zeroizing::new(Vec::with_capacity(initial));
        let mut buf = Zeroizing::new([0u8; CHUNK * 8]);
        let mut left = count;
        while left > 0 {
            let take = left.min(CHUNK);
            let bytes = buf.get_mut(..take * 8).unwrap_or_default();
            self.read_exact(bytes, field)?;
            if out.capacity() - out.len() < take {
                let grown = out
                    .capacity()
                    .saturating_mul(2)
                    .max(out.len() + take)
                    .min(count);
                let mut bigger = Zeroizing::new(Vec::with_capacity(grown));
                bigger.extend_from_slice(&out);
                // The old buffer is wiped as it drops.
                out = bigger;
            }
            out.extend(
                bytes
                    .chunks_exact(8)
                    .map(|c| u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]])),
            );
            left -= take;
        }
        Ok(out)
    }

    /// Reads and checks the header of a nested object (always uncompressed, as SEAL writes
    /// them); returns the size it declares.
    pub fn nested_header(&mut self, what: &'static str) -> Result<u64> {
        let raw: [u8; HEADER_SIZE] = self.array(what)?;
        let header = SealHeader::parse(&raw, what)?;
        if header.compr_mode != ComprMode::None {
            return Err(SealError::UnsupportedCompression {
                what,
                found: header.compr_mode.byte(),
            });
        }
        Ok(header.size)
    }

    /// Checks that a nested object that started at `start` (its header's first byte) and
    /// declared `declared` bytes ends here.
    pub fn check_nested_end(&self, what: &'static str, start: u64, declared: u64) -> Result<()> {
        let actual = self.offset - start;
        if actual != declared {
            return Err(SealError::SizeMismatch {
                what,
                declared,
                actual,
            });
        }
        Ok(())
    }
}

/// Little-endian writer helpers.
pub(crate) trait WriteLe {
    fn put_u8(&mut self, v: u8);
    fn put_u64(&mut self, v: u64);
    fn put_f64(&mut self, v: f64);
    fn put_u64s(&mut self, v: &[u64]);
}

impl WriteLe for Vec<u8> {
    fn put_u8(&mut self, v: u8) {
        self.push(v);
    }
    fn put_u64(&mut self, v: u64) {
        self.extend_from_slice(&v.to_le_bytes());
    }
    fn put_f64(&mut self, v: f64) {
        self.extend_from_slice(&v.to_bits().to_le_bytes());
    }
    fn put_u64s(&mut self, v: &[u64]) {
        self.reserve(v.len() * 8);
        for w in v {
            self.extend_from_slice(&w.to_le_bytes());
        }
    }
}

/// Appends a nested, uncompressed object: a header followed by `members`.
pub(crate) fn put_nested(out: &mut Vec<u8>, members: &[u8]) {
    let header = SealHeader::new(ComprMode::None, (HEADER_SIZE + members.len()) as u64);
    out.extend_from_slice(&header.to_bytes());
    out.extend_from_slice(members);
}

/// Appends a nested `DynArray<u64>`: header, count, words.
pub(crate) fn put_dynarray(out: &mut Vec<u8>, words: &[u64]) {
    let header = SealHeader::new(ComprMode::None, (HEADER_SIZE + 8 + 8 * words.len()) as u64);
    out.extend_from_slice(&header.to_bytes());
    out.put_u64(words.len() as u64);
    out.put_u64s(words);
}

/// Reads a nested `DynArray<u64>` whose element count must be exactly `expected`
/// (or, when `alternative` is given, that count instead: SEAL's seeded ciphertexts).
///
/// On error the words read so far are wiped (they may be a secret key's); on success the
/// caller owns them.
pub(crate) fn read_dynarray(
    r: &mut Reader<'_>,
    what: &'static str,
    expected: u64,
    alternative: Option<u64>,
) -> Result<Vec<u64>> {
    let start = r.offset();
    let declared = r.nested_header(what)?;
    let count = r.u64(what)?;
    let largest = expected.max(alternative.unwrap_or(0));
    if count > largest {
        return Err(SealError::OversizedCount {
            what,
            found: count,
            limit: largest,
        });
    }
    if count != expected && Some(count) != alternative {
        return Err(SealError::CountMismatch {
            what,
            found: count,
            expected,
        });
    }
    let count = usize::try_from(count).map_err(|_| SealError::OversizedCount {
        what,
        found: count,
        limit: usize::MAX as u64,
    })?;
    let mut words = r.u64_words(count, what)?;
    r.check_nested_end(what, start, declared)?;
    Ok(std::mem::take(&mut *words))
}

/// Wraps serialized members into a complete object: header, then the members stored as they
/// are or compressed (zstd with its content checksum, zlib with its adler32, so a corrupted
/// compressed body is refused on load).
///
/// The output is allocated once, with room for the worst case, and written in place, so no
/// copy of the members (a secret key's, for [`SecretKey::save`](crate::SecretKey::save)) is
/// left in freed memory by this function. The compressors' own internal state (zlib's window,
/// zstd's context) is freed by those libraries without wiping; callers that compress secrets
/// accept that.
pub fn frame(members: &[u8], compr_mode: ComprMode) -> Result<Vec<u8>> {
    let compression = |source| SealError::Compression { source };
    let mut out = Vec::with_capacity(HEADER_SIZE + compressed_bound(members.len(), compr_mode));
    out.extend_from_slice(&[0u8; HEADER_SIZE]);
    match compr_mode {
        ComprMode::None => out.extend_from_slice(members),
        ComprMode::Zlib => {
            let mut enc = flate2::write::ZlibEncoder::new(out, flate2::Compression::default());
            enc.write_all(members).map_err(compression)?;
            out = enc.finish().map_err(compression)?;
        }
        ComprMode::Zstd => {
            let mut enc = zstd::bulk::Compressor::new(0).map_err(compression)?;
            enc.include_checksum(true).map_err(compression)?;
            enc.include_contentsize(true).map_err(compression)?;
            let spare = out.capacity() - out.len();
            out.resize(HEADER_SIZE + spare, 0);
            let body = out.get_mut(HEADER_SIZE..).unwrap_or_default();
            let written = enc.compress_to_buffer(members, body).map_err(compression)?;
            out.truncate(HEADER_SIZE + written);
        }
    }
    let header = SealHeader::new(compr_mode, out.len() as u64);
    if let Some(h) = out.get_mut(..HEADER_SIZE) {
        h.copy_from_slice(&header.to_bytes());
    }
    Ok(out)
}

/// The largest body `compr_mode` can make of `len` bytes (zlib's and zstd's documented
/// bounds, with margin), so [`frame`] never reallocates.
fn compressed_bound(len: usize, compr_mode: ComprMode) -> usize {
    match compr_mode {
        ComprMode::None => len,
        // zlib's compressBound: len + len/4096 + len/16384 + len/2^25 + 13.
        ComprMode::Zlib => len + len / 1024 + 64,
        ComprMode::Zstd => zstd::zstd_safe::compress_bound(len) + 64,
    }
}

/// [`frame`] into a buffer that is wiped when it drops: for secret members.
pub fn frame_secret(members: &[u8], compr_mode: ComprMode) -> Result<Zeroizing<Vec<u8>>> {
    frame(members, compr_mode).map(Zeroizing::new)
}

/// Reads a complete object `what` from `bytes` (which must hold exactly that object): checks
/// the header, decompresses lazily and hands the member stream to `parse`, then checks that
/// the members used exactly the declared bytes.
///
/// `max_members` is the longest member stream the object can have in its context: a
/// compressed body is never decompressed beyond it ([`SealError::DecompressionLimit`]), and
/// an uncompressed one longer than it is refused before parsing.
pub fn unframe<T>(
    bytes: &[u8],
    what: &'static str,
    max_members: u64,
    parse: impl FnOnce(&mut Reader<'_>) -> Result<T>,
) -> Result<T> {
    let raw: &[u8; HEADER_SIZE] = bytes
        .get(..HEADER_SIZE)
        .and_then(|h| h.try_into().ok())
        .ok_or(SealError::Truncated {
            what: "SEALHeader",
            offset: 0,
            needed: HEADER_SIZE as u64,
            available: bytes.len() as u64,
        })?;
    let header = SealHeader::parse(raw, what)?;
    let total = bytes.len() as u64;
    if header.size > total {
        return Err(SealError::Truncated {
            what,
            offset: 0,
            needed: header.size,
            available: total,
        });
    }
    if header.size < total {
        return Err(SealError::TrailingBytes {
            what,
            count: total - header.size,
        });
    }
    let body = bytes.get(HEADER_SIZE..).unwrap_or_default();
    match header.compr_mode {
        ComprMode::None => {
            if body.len() as u64 > max_members {
                return Err(SealError::OversizedObject {
                    what,
                    size: body.len() as u64,
                    limit: max_members,
                });
            }
            let mut src = body;
            let mut reader = Reader::new(&mut src, what, Bound::Input(body.len() as u64));
            let value = parse(&mut reader)?;
            let used = reader.offset();
            if used != body.len() as u64 {
                return Err(SealError::SizeMismatch {
                    what,
                    declared: header.size,
                    actual: HEADER_SIZE as u64 + used,
                });
            }
            Ok(value)
        }
        ComprMode::Zlib => {
            let mut dec = flate2::bufread::ZlibDecoder::new(body);
            let value = {
                let mut reader = Reader::new(&mut dec, what, Bound::Decompressed(max_members));
                let value = parse(&mut reader)?;
                expect_end(&mut reader, what)?;
                value
            };
            let used = dec.total_in();
            if used != body.len() as u64 {
                return Err(SealError::TrailingBytes {
                    what,
                    count: body.len() as u64 - used,
                });
            }
            Ok(value)
        }
        ComprMode::Zstd => {
            let mut dec = zstd::stream::read::Decoder::with_buffer(body)
                .map_err(|source| SealError::Decompression { what, source })?
                .single_frame();
            // A frame header may ask for a window of up to 2^31 bytes: allow no more than
            // the object can need (and at least zstd's usual 2^20, at most 2^27).
            let window_log = (64 - max_members.leading_zeros()).clamp(20, 27);
            dec.window_log_max(window_log)
                .map_err(|source| SealError::Decompression { what, source })?;
            let value = {
                let mut reader = Reader::new(&mut dec, what, Bound::Decompressed(max_members));
                let value = parse(&mut reader)?;
                expect_end(&mut reader, what)?;
                value
            };
            let mut rest = dec.finish();
            let left = rest.fill_buf().map(|b| b.len()).unwrap_or(0);
            if left != 0 {
                return Err(SealError::TrailingBytes {
                    what,
                    count: left as u64,
                });
            }
            Ok(value)
        }
    }
}

/// After the members of a compressed object: the decompressed stream must end here (and,
/// for zstd, the frame's content checksum is verified by the decoder when it reaches the end).
fn expect_end(reader: &mut Reader<'_>, what: &'static str) -> Result<()> {
    let mut probe = [0u8; 1];
    let at = reader.offset();
    // Probe one byte past the members even at the limit (the limit bounds the members).
    let mut raw = Reader::new(reader.src, what, Bound::Decompressed(1));
    match raw.read_exact(&mut probe, what) {
        Ok(()) => Err(SealError::DecompressedTrailing { what, after: at }),
        Err(SealError::Truncated { .. }) => Ok(()),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_round_trip_and_rejections() {
        let h = SealHeader::new(ComprMode::Zstd, 1234);
        let b = h.to_bytes();
        assert_eq!(&b[..8], &[0x5E, 0xA1, 0x10, 4, 1, 2, 0, 0]);
        assert_eq!(SealHeader::parse(&b, "x").unwrap(), h);
        let mut bad = b;
        bad[0] = 0;
        assert!(matches!(
            SealHeader::parse(&bad, "x"),
            Err(SealError::BadMagic { .. })
        ));
        let mut bad = b;
        bad[4] = 5;
        assert!(matches!(
            SealHeader::parse(&bad, "x"),
            Err(SealError::UnsupportedVersion { .. })
        ));
        let mut bad = b;
        bad[3] = 3;
        assert!(matches!(
            SealHeader::parse(&bad, "x"),
            Err(SealError::UnsupportedVersion { .. })
        ));
        let mut bad = b;
        bad[5] = 3;
        assert!(matches!(
            SealHeader::parse(&bad, "x"),
            Err(SealError::UnsupportedCompression { .. })
        ));
    }

    #[test]
    fn frame_unframe_every_mode() {
        let members: Vec<u8> = (0..10_000u32).flat_map(|i| (i % 7).to_le_bytes()).collect();
        for mode in [ComprMode::None, ComprMode::Zlib, ComprMode::Zstd] {
            let bytes = frame(&members, mode).unwrap();
            let back = unframe(&bytes, "test", members.len() as u64, |r| {
                let mut v = vec![0u8; members.len()];
                r.read_exact(&mut v, "body")?;
                Ok(v)
            })
            .unwrap();
            assert_eq!(back, members, "{mode:?}");
            // The members must use the whole body.
            let short = unframe(&bytes, "test", members.len() as u64, |r| {
                let mut v = vec![0u8; members.len() - 1];
                r.read_exact(&mut v, "body")?;
                Ok(v)
            });
            assert!(short.is_err(), "{mode:?}");
        }
    }
}
