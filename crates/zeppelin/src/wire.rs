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
//!   seed bytes) whose `prng_type` names the device's public generator
//!   ([`PublicGenerator::prng_type`]: [`AES_CTR_PRNG_TYPE`] for AES-128-CTR,
//!   [`CHACHA20_PRNG_TYPE`] for ChaCha20; both unknown to SEAL, which refuses them cleanly) and
//!   whose seed bytes are the 32-byte public seed followed by 32 zero bytes. `zeppelin adapt`
//!   expands it into a SEAL ciphertext.
//!
//! Sizes at `n = 4096`: three primes 196,721 B full and 98,498 B seeded (50.07 %); four primes
//! 262,257 B and 131,266 B.

use crate::ciphertext::{Ciphertext, SeededCiphertext};
pub use crate::error::WireError;
use crate::params::Params;
use crate::prng::{PublicGenerator, PublicSeed};

/// `prng_type` byte of Zeppelin's AES-128-CTR public stream (SEAL uses 1 and 2).
pub const AES_CTR_PRNG_TYPE: u8 = PublicGenerator::AesCtr128.prng_type();
/// `prng_type` byte of Zeppelin's ChaCha20 public stream.
pub const CHACHA20_PRNG_TYPE: u8 = PublicGenerator::ChaCha20.prng_type();
const HEADER: usize = 16;
const METADATA: usize = 32 + 1 + 8 + 8 + 8 + 8 + 8;
const PRNG_INFO: usize = HEADER + 1 + 64;
const SEED: usize = 32;

/// SEAL's parms_id of level `level` (the first `level` data primes) of preset `P`, or `None`
/// for a level outside `1..=K`. Computed at compile time from the preset
/// ([`Params::parms_ids`]).
pub fn parms_id<P: Params>(level: usize) -> Option<&'static [u8; 32]> {
    P::parms_ids().get(level.checked_sub(1)?)
}

/// Bytes of the full form of preset `P` at level `level`.
pub const fn full_len<P: Params>(level: usize) -> usize {
    HEADER + METADATA + HEADER + 8 + 8 * 2 * level * P::N
}

/// Bytes of the seeded form of preset `P` at level `level`.
pub const fn seeded_len<P: Params>(level: usize) -> usize {
    HEADER + METADATA + HEADER + 8 + 8 * level * P::N + PRNG_INFO
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
fn put_prefix<P: Params>(
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
    put_u64(out, 57, P::N as u64);
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
    let len = full_len::<P>(level);
    let out = take(out, len)?;
    let at = put_prefix::<P>(out, len, parms_id, level, 2 * level * P::N);
    let at = put_words(out, at, &ct.c0());
    put_words(out, at, &ct.c1());
    Ok(len)
}

/// Writes the seeded form of `ct` into `out`; returns the length.
pub fn write_seeded<P: Params>(
    ct: &SeededCiphertext<P>,
    out: &mut [u8],
) -> Result<usize, WireError> {
    let level = ct.level();
    let parms_id = parms_id::<P>(level).ok_or(WireError::UnknownParmsId)?;
    let len = seeded_len::<P>(level);
    let out = take(out, len)?;
    let at = put_prefix::<P>(out, len, parms_id, level, level * P::N);
    let at = put_words(out, at, &ct.c0());
    put_header(&mut out[at..], PRNG_INFO);
    out[at + HEADER] = ct.generator().prng_type();
    let seed_at = at + HEADER + 1;
    out[seed_at..seed_at + SEED].copy_from_slice(&ct.seed().0);
    out[seed_at + SEED..seed_at + 64].fill(0);
    Ok(len)
}

#[inline]
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
    field("poly_modulus_degree", 57, P::N as u64)?;
    field("coeff_modulus_size", 65, level as u64)?;
    field("scale", 73, 1.0f64.to_bits())?;
    field("correction_factor", 81, 1)?;
    let count = if seeded {
        level * P::N
    } else {
        2 * level * P::N
    };
    let needed = if seeded {
        seeded_len::<P>(level)
    } else {
        full_len::<P>(level)
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

/// The `level·n` residues at `at` (little-endian `u64`s), each checked below its prime.
/// The `level` rows of 8-byte residues at `at`, one slice of `8·n` bytes per prime.
fn rows_at<P: Params>(
    b: &[u8],
    at: usize,
    level: usize,
) -> Result<core::slice::ChunksExact<'_, u8>, WireError> {
    let n = P::N;
    let src = b.get(at..at + 8 * level * n).ok_or(WireError::Truncated {
        needed: at + 8 * level * n,
        found: b.len(),
    })?;
    Ok(src.chunks_exact(8 * n))
}

/// The residues of one row (8 bytes each, little-endian).
#[inline]
fn residues(row: &[u8]) -> impl Iterator<Item = u64> + '_ {
    row.chunks_exact(8).map(|w| {
        let mut word = [0u8; 8];
        word.copy_from_slice(w);
        u64::from_le_bytes(word)
    })
}

/// Checks that every residue at `at` is below its prime (before anything is written, so a
/// refused input leaves the output as it was).
fn check_rows_at<P: Params>(b: &[u8], at: usize, level: usize) -> Result<(), WireError> {
    for (i, (row, &q)) in rows_at::<P>(b, at, level)?.zip(P::DATA_PRIMES).enumerate() {
        let q = u64::from(q);
        // The whole row first, branch-free so that it vectorises: the top bit of
        // `(q − 1 − v) | v` is set exactly when `v >= q` (q < 2^63). The position is looked
        // for only on refusal.
        let out_of_range = residues(row).fold(0, |acc, v| acc | ((q - 1).wrapping_sub(v) | v));
        if out_of_range >> 63 != 0 {
            let j = residues(row).position(|v| v >= q).unwrap_or(0);
            return Err(WireError::CoefficientOutOfRange {
                index: i * P::N + j,
            });
        }
    }
    Ok(())
}

/// Copies the checked residues at `at` into `dst`.
fn read_rows<P: Params>(
    b: &[u8],
    at: usize,
    level: usize,
    dst: &mut [u32],
) -> Result<(), WireError> {
    for (row, d) in rows_at::<P>(b, at, level)?.zip(dst.chunks_exact_mut(P::N)) {
        for (v, d) in residues(row).zip(d.iter_mut()) {
            *d = v as u32;
        }
    }
    Ok(())
}

/// Parses the seeded form into `out`, checking every field and residue first. On error `out`
/// is unchanged.
pub fn read_seeded<P: Params>(
    bytes: &[u8],
    out: &mut SeededCiphertext<P>,
) -> Result<(), WireError> {
    let level = check_prefix::<P>(bytes, true)?;
    let info = 113 + 8 * level * P::N;
    check_header(bytes, info, PRNG_INFO as u64)?;
    let prng_type = bytes[info + HEADER];
    let generator = PublicGenerator::from_prng_type(prng_type).ok_or(WireError::BadField {
        field: "prng_type",
        value: u64::from(prng_type),
    })?;
    let seed_at = info + HEADER + 1;
    if bytes[seed_at + SEED..seed_at + 64].iter().any(|&b| b != 0) {
        return Err(WireError::BadField {
            field: "seed padding",
            value: 1,
        });
    }
    check_rows_at::<P>(bytes, 113, level)?;
    let mut seed = [0u8; SEED];
    seed.copy_from_slice(&bytes[seed_at..seed_at + SEED]);
    let c0 = out
        .c0_mut(level, generator, PublicSeed(seed))
        .map_err(|_| WireError::BadField {
            field: "level",
            value: level as u64,
        })?;
    read_rows::<P>(bytes, 113, level, c0)
}

/// Parses the full form (or a SEAL ciphertext with `compr_mode` none at a level of this
/// preset) into `out`, checking every field and residue first. On error `out` is unchanged.
pub fn read_full<P: Params>(bytes: &[u8], out: &mut Ciphertext<P>) -> Result<(), WireError> {
    let level = check_prefix::<P>(bytes, false)?;
    let c1_at = 113 + 8 * level * P::N;
    check_rows_at::<P>(bytes, 113, level)?;
    check_rows_at::<P>(bytes, c1_at, level)?;
    let (c0, c1) = out.rows_mut(level).map_err(|_| WireError::BadField {
        field: "level",
        value: level as u64,
    })?;
    read_rows::<P>(bytes, 113, level, c0)?;
    read_rows::<P>(bytes, c1_at, level, c1)
}
