//! The device's wire forms in SEAL's `Ciphertext` layout, written into a caller buffer and
//! parsed from a byte slice without allocating. [`read_full`] also reads any SEAL ciphertext
//! (`compr_mode` none) at a level whose primes are a prefix of the preset's.
//!
//! Both forms are a SEAL 4.1 `Ciphertext` with `compr_mode` none:
//!
//! ```text
//! SEALHeader (16)         5E A1 10 04 01 00 00 00 | total size u64
//! parms_id (32)           BLAKE2b-256 of [1, 4096, q_0..q_{L-1}, 65537]
//! is_ntt_form u8 = 0, size u64 = 2, n u64 = 4096, coeff_modulus_size u64 = L,
//! scale f64 = 1.0, correction_factor u64 = 1
//! DynArray                header (16) | count u64 | count × u64 residues
//! ```
//!
//! - **full**: the DynArray holds `c0 ‖ c1` (`count = 2·L·n`). For the Seal4096 preset this is
//!   byte for byte a SEAL ciphertext at the level with the first `L` primes.
//! - **seeded**: the DynArray holds only `c0` (`count = L·n`) and is followed, as in SEAL's own
//!   seeded form, by a `UniformRandomGeneratorInfo` (header with size 81, `prng_type` u8, 64
//!   seed bytes) whose `prng_type` is [`AES_CTR_PRNG_TYPE`] (Zeppelin's AES-128-CTR `prng_a`,
//!   unknown to SEAL, which refuses it cleanly) and whose seed bytes are the 32-byte public seed
//!   followed by 32 zero bytes. `zeppelin adapt` expands it into a SEAL ciphertext.
//!
//! Sizes at `n = 4096`: three primes 196,721 B full and 98,498 B seeded (50.07 %); four primes
//! 262,257 B and 131,266 B.

use core::fmt;

use crate::ciphertext::{Ciphertext, SeededCiphertext};
use crate::params::{Params, N};
use crate::prng::PublicSeed;

/// `prng_type` byte of Zeppelin's AES-128-CTR public stream (SEAL uses 1 and 2).
pub const AES_CTR_PRNG_TYPE: u8 = 0xA1;
const HEADER: usize = 16;
const METADATA: usize = 32 + 1 + 8 + 8 + 8 + 8 + 8;
const PRNG_INFO: usize = HEADER + 1 + 64;
const SEED: usize = 32;

/// The first data primes of both presets, in order.
const PRIMES: [u32; 4] = [134_176_769, 134_111_233, 134_012_929, 133_963_777];

/// SEAL's parms_id of the levels `[1, 4096, q_0..q_{L-1}, 65537]` for `L = 1..=4` over
/// [`PRIMES`] (BLAKE2b-256 over little-endian `u64` words; checked against SEAL and against
/// `zeppelin-seal`'s computation in the CLI's tests).
const LEVEL_IDS: [[u8; 32]; 4] = [
    hex32(*b"b525c264723a3249a1e0e34c1d422d29968354a6f5de97379b0996cf2de7b4bd"),
    hex32(*b"696d8536219a6e73e3e6cd662eaaeb8573c4ce701f7365536de5269d00dacf55"),
    hex32(*b"6d37577ae9a22d7d39145d4e663537329ca1f8d29377ab6dff9462fda8b38549"),
    hex32(*b"15c5f285fd5eff9c6f4d20abc42eaa1f9720fd37500cb4d2026bd58988283100"),
];

const fn hex_digit(c: u8) -> u8 {
    match c {
        b'0'..=b'9' => c - b'0',
        _ => c - b'a' + 10,
    }
}

const fn hex32(h: [u8; 64]) -> [u8; 32] {
    let mut out = [0u8; 32];
    let mut i = 0;
    while i < 32 {
        out[i] = (hex_digit(h[2 * i]) << 4) | hex_digit(h[2 * i + 1]);
        i += 1;
    }
    out
}

/// SEAL's parms_id of level `level` (the first `level` data primes) of preset `P`, or `None`
/// for a level or preset outside the table.
pub fn parms_id<P: Params>(level: usize) -> Option<&'static [u8; 32]> {
    if level == 0 || level > P::K || level > PRIMES.len() {
        return None;
    }
    if P::DATA_PRIMES.get(..level)? != PRIMES.get(..level)? {
        return None;
    }
    LEVEL_IDS.get(level - 1)
}

/// What is wrong with device wire bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WireError {
    /// Fewer bytes than the form needs.
    Truncated { needed: usize, found: usize },
    /// A header field is not what SEAL writes (magic, header size, version, compression).
    BadHeader { offset: usize },
    /// The header's size differs from the input length.
    SizeMismatch { declared: u64, found: usize },
    /// The parms_id is no level of this preset.
    UnknownParmsId,
    /// A metadata field has a value this form does not allow.
    BadField { field: &'static str, value: u64 },
    /// A residue is not below its prime.
    CoefficientOutOfRange { index: usize, value: u64 },
    /// The output buffer is too small.
    BufferTooSmall { needed: usize, found: usize },
}

impl fmt::Display for WireError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::Truncated { needed, found } => {
                write!(f, "truncated: the form needs {needed} bytes, found {found}")
            }
            Self::BadHeader { offset } => {
                write!(f, "bad SEAL header at byte {offset}")
            }
            Self::SizeMismatch { declared, found } => {
                write!(
                    f,
                    "size mismatch: header says {declared} bytes, input has {found}"
                )
            }
            Self::UnknownParmsId => write!(f, "unknown parms_id for this preset"),
            Self::BadField { field, value } => write!(f, "invalid {field}: {value}"),
            Self::CoefficientOutOfRange { index, value } => {
                write!(f, "residue {value} at index {index} is not below its prime")
            }
            Self::BufferTooSmall { needed, found } => {
                write!(f, "output buffer holds {found} bytes, {needed} needed")
            }
        }
    }
}

/// Bytes of the full form at level `level`.
pub const fn full_len(level: usize) -> usize {
    HEADER + METADATA + HEADER + 8 + 8 * 2 * level * N
}

/// Bytes of the seeded form at level `level`.
pub const fn seeded_len(level: usize) -> usize {
    HEADER + METADATA + HEADER + 8 + 8 * level * N + PRNG_INFO
}

fn put_header(out: &mut [u8], size: usize) {
    out[0] = 0x5E;
    out[1] = 0xA1;
    out[2] = HEADER as u8;
    out[3] = 4;
    out[4] = 1;
    out[5] = 0;
    out[6] = 0;
    out[7] = 0;
    out[8..16].copy_from_slice(&(size as u64).to_le_bytes());
}

fn put_u64(out: &mut [u8], at: usize, v: u64) {
    out[at..at + 8].copy_from_slice(&v.to_le_bytes());
}

/// Header, metadata and the DynArray header with `count`; returns the offset of the data.
fn put_prefix(
    out: &mut [u8],
    total: usize,
    parms_id: &[u8; 32],
    level: usize,
    count: usize,
) -> usize {
    put_header(out, total);
    out[16..48].copy_from_slice(parms_id);
    out[48] = 0;
    put_u64(out, 49, 2);
    put_u64(out, 57, N as u64);
    put_u64(out, 65, level as u64);
    put_u64(out, 73, 1.0f64.to_bits());
    put_u64(out, 81, 1);
    put_header(&mut out[89..], HEADER + 8 + 8 * count);
    put_u64(out, 105, count as u64);
    113
}

fn put_words(out: &mut [u8], at: usize, words: &[u32]) -> usize {
    for (chunk, &w) in out[at..at + 8 * words.len()].chunks_exact_mut(8).zip(words) {
        chunk.copy_from_slice(&u64::from(w).to_le_bytes());
    }
    at + 8 * words.len()
}

fn take(out: &mut [u8], needed: usize) -> Result<&mut [u8], WireError> {
    let found = out.len();
    out.get_mut(..needed)
        .ok_or(WireError::BufferTooSmall { needed, found })
}

/// Writes the full form of `ct` into `out`; returns the length.
pub fn write_full<P: Params>(ct: &Ciphertext<P>, out: &mut [u8]) -> Result<usize, WireError> {
    let level = ct.level();
    let parms_id = parms_id::<P>(level).ok_or(WireError::UnknownParmsId)?;
    let len = full_len(level);
    let out = take(out, len)?;
    let at = put_prefix(out, len, parms_id, level, 2 * level * N);
    let at = put_words(out, at, ct.c0());
    put_words(out, at, ct.c1());
    Ok(len)
}

/// Writes the seeded form of `ct` into `out`; returns the length.
pub fn write_seeded<P: Params>(
    ct: &SeededCiphertext<P>,
    out: &mut [u8],
) -> Result<usize, WireError> {
    let level = ct.level();
    let parms_id = parms_id::<P>(level).ok_or(WireError::UnknownParmsId)?;
    let len = seeded_len(level);
    let out = take(out, len)?;
    let at = put_prefix(out, len, parms_id, level, level * N);
    let at = put_words(out, at, ct.c0());
    put_header(&mut out[at..], PRNG_INFO);
    out[at + HEADER] = AES_CTR_PRNG_TYPE;
    let seed_at = at + HEADER + 1;
    out[seed_at..seed_at + SEED].copy_from_slice(&ct.seed().0);
    out[seed_at + SEED..seed_at + 64].fill(0);
    Ok(len)
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(w)
}

fn check_header(b: &[u8], at: usize, size: u64) -> Result<(), WireError> {
    let ok = b[at] == 0x5E
        && b[at + 1] == 0xA1
        && b[at + 2] == HEADER as u8
        && b[at + 3] == 4
        && b[at + 4] <= 4
        && b[at + 5] == 0
        && b[at + 6] == 0
        && b[at + 7] == 0;
    if !ok {
        return Err(WireError::BadHeader { offset: at });
    }
    let declared = u64_at(b, at + 8);
    if declared != size {
        return Err(WireError::SizeMismatch {
            declared,
            found: size as usize,
        });
    }
    Ok(())
}

/// Checks the common prefix and returns the level.
fn check_prefix<P: Params>(b: &[u8], seeded: bool) -> Result<usize, WireError> {
    let min = HEADER + METADATA + HEADER + 8;
    if b.len() < min {
        return Err(WireError::Truncated {
            needed: min,
            found: b.len(),
        });
    }
    check_header(b, 0, b.len() as u64)?;
    let level = (1..=P::K)
        .find(|&l| parms_id::<P>(l).is_some_and(|id| id[..] == b[16..48]))
        .ok_or(WireError::UnknownParmsId)?;
    let field = |field, at, want: u64| {
        let v = u64_at(b, at);
        if v == want {
            Ok(())
        } else {
            Err(WireError::BadField { field, value: v })
        }
    };
    if b[48] != 0 {
        return Err(WireError::BadField {
            field: "is_ntt_form",
            value: u64::from(b[48]),
        });
    }
    field("size", 49, 2)?;
    field("poly_modulus_degree", 57, N as u64)?;
    field("coeff_modulus_size", 65, level as u64)?;
    field("scale", 73, 1.0f64.to_bits())?;
    field("correction_factor", 81, 1)?;
    let count = if seeded { level * N } else { 2 * level * N };
    let needed = if seeded {
        seeded_len(level)
    } else {
        full_len(level)
    };
    if b.len() != needed {
        return Err(WireError::Truncated {
            needed,
            found: b.len(),
        });
    }
    check_header(b, 89, (HEADER + 8 + 8 * count) as u64)?;
    field("data count", 105, count as u64)?;
    Ok(level)
}

fn read_rows<P: Params>(
    b: &[u8],
    at: usize,
    level: usize,
    dst: &mut [u32],
) -> Result<(), WireError> {
    let src = b.get(at..at + 8 * level * N).ok_or(WireError::Truncated {
        needed: at + 8 * level * N,
        found: b.len(),
    })?;
    for (p, (row, bytes)) in dst
        .chunks_exact_mut(N)
        .zip(src.chunks_exact(8 * N))
        .take(level)
        .enumerate()
    {
        let q = u64::from(P::DATA_PRIMES.get(p).copied().unwrap_or(0));
        for (j, (d, chunk)) in row.iter_mut().zip(bytes.chunks_exact(8)).enumerate() {
            let v = u64_at(chunk, 0);
            if v >= q {
                return Err(WireError::CoefficientOutOfRange {
                    index: p * N + j,
                    value: v,
                });
            }
            *d = v as u32;
        }
    }
    Ok(())
}

/// Whether `bytes` look like the seeded device form (SEAL header, then the AES `prng_type`
/// where SEAL's seeded form has its generator).
pub fn is_seeded_form(bytes: &[u8]) -> bool {
    bytes.len() > PRNG_INFO && bytes[bytes.len() - PRNG_INFO + HEADER] == AES_CTR_PRNG_TYPE
}

/// Parses the seeded form into `out`. On error `out` may hold part of the input (it is
/// rewritten completely by the next successful parse).
pub fn read_seeded<P: Params>(
    bytes: &[u8],
    out: &mut SeededCiphertext<P>,
) -> Result<(), WireError> {
    let level = check_prefix::<P>(bytes, true)?;
    let info = 113 + 8 * level * N;
    check_header(bytes, info, PRNG_INFO as u64)?;
    if bytes[info + HEADER] != AES_CTR_PRNG_TYPE {
        return Err(WireError::BadField {
            field: "prng_type",
            value: u64::from(bytes[info + HEADER]),
        });
    }
    let seed_at = info + HEADER + 1;
    if bytes[seed_at + SEED..seed_at + 64].iter().any(|&b| b != 0) {
        return Err(WireError::BadField {
            field: "seed padding",
            value: 1,
        });
    }
    let mut seed = [0u8; SEED];
    seed.copy_from_slice(&bytes[seed_at..seed_at + SEED]);
    let c0 = out
        .c0_mut(level, PublicSeed(seed))
        .map_err(|_| WireError::BadField {
            field: "level",
            value: level as u64,
        })?;
    read_rows::<P>(bytes, 113, level, c0)
}

/// Parses the full form (or a SEAL ciphertext with `compr_mode` none at a level of this
/// preset) into `out`.
pub fn read_full<P: Params>(bytes: &[u8], out: &mut Ciphertext<P>) -> Result<(), WireError> {
    let level = check_prefix::<P>(bytes, false)?;
    let (c0, c1) = out.rows_mut(level).map_err(|_| WireError::BadField {
        field: "level",
        value: level as u64,
    })?;
    read_rows::<P>(bytes, 113, level, c0)?;
    read_rows::<P>(bytes, 113 + 8 * level * N, level, c1)
}
