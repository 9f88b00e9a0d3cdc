//! SEAL's seeded pseudo-random generators (Blake2xb and SHAKE256) and its uniform sampler,
//! reproduced so that a seeded SEAL ciphertext expands here exactly as SEAL expands it.
//!
//! A generator is a 64-byte seed plus a 64-bit block counter starting at 0. It produces its
//! stream in 4096-byte blocks:
//! - Blake2xb: block `i` is BLAKE2Xb with a 4096-byte output, keyed with the seed, over the
//!   8 little-endian bytes of `i`;
//! - SHAKE256: block `i` is the first 4096 bytes of SHAKE256 over `seed || le64(i)`.
//!
//! [`sample_poly_uniform`] draws one little-endian `u64` per coefficient, prime by prime, and
//! then, in that order, replaces every draw at or above the largest multiple of `q` (minus one)
//! by fresh draws from the continuing stream before reducing it mod `q`.

use sha3::digest::{ExtendableOutput, Update, XofReader};
use zeroize::Zeroize;

use crate::error::{Result, SealError};
use crate::wire::{self, Reader};

/// Bytes in a SEAL PRNG seed.
pub const SEED_BYTES: usize = 64;
/// Bytes SEAL's generators produce per refill.
const BLOCK_BYTES: usize = 4096;
/// Serialized size of `UniformRandomGeneratorInfo` (header, type byte, seed).
pub const PRNG_INFO_BYTES: usize = wire::HEADER_SIZE + 1 + SEED_BYTES;

/// SEAL's `prng_type`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PrngType {
    /// BLAKE2Xb (type byte 1).
    Blake2xb,
    /// SHAKE256 (type byte 2).
    Shake256,
}

impl PrngType {
    /// The byte SEAL writes.
    pub const fn byte(self) -> u8 {
        match self {
            PrngType::Blake2xb => 1,
            PrngType::Shake256 => 2,
        }
    }

    /// From SEAL's byte; `unknown` (0) and anything else are refused.
    pub fn from_byte(b: u8) -> Result<Self> {
        match b {
            1 => Ok(PrngType::Blake2xb),
            2 => Ok(PrngType::Shake256),
            other => Err(SealError::UnknownPrngType(other)),
        }
    }
}

impl std::str::FromStr for PrngType {
    type Err = SealError;
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "blake2xb" => Ok(PrngType::Blake2xb),
            "shake256" => Ok(PrngType::Shake256),
            other => Err(SealError::UnknownName {
                what: "prng type",
                name: other.to_owned(),
                expected: "blake2xb or shake256",
            }),
        }
    }
}

/// SEAL's `UniformRandomGeneratorInfo`: which generator and its seed.
#[derive(Clone, PartialEq, Eq)]
pub struct PrngInfo {
    /// The generator.
    pub prng_type: PrngType,
    /// The 64-byte seed (SEAL's eight `u64` words, little-endian).
    pub seed: [u8; SEED_BYTES],
}

impl std::fmt::Debug for PrngInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PrngInfo")
            .field("prng_type", &self.prng_type)
            .finish_non_exhaustive()
    }
}

impl PrngInfo {
    /// Appends the nested serialized form (81 bytes).
    pub(crate) fn put(&self, out: &mut Vec<u8>) {
        let mut members = Vec::with_capacity(1 + SEED_BYTES);
        members.push(self.prng_type.byte());
        members.extend_from_slice(&self.seed);
        wire::put_nested(out, &members);
    }

    /// Reads the nested serialized form.
    pub(crate) fn read(r: &mut Reader<'_>) -> Result<Self> {
        let what = "UniformRandomGeneratorInfo";
        let start = r.offset();
        let declared = r.nested_header(what)?;
        let prng_type = PrngType::from_byte(r.u8("prng_type")?)?;
        let seed = r.array::<SEED_BYTES>("prng seed")?;
        r.check_nested_end(what, start, declared)?;
        Ok(Self { prng_type, seed })
    }
}

/// A SEAL generator: the stream a [`PrngInfo`] stands for.
pub struct SealPrng {
    info: PrngInfo,
    counter: u64,
    buffer: Box<[u8; BLOCK_BYTES]>,
    head: usize,
}

impl Drop for SealPrng {
    fn drop(&mut self) {
        self.info.seed.zeroize();
        self.buffer.zeroize();
    }
}

impl SealPrng {
    /// The generator for `info`, positioned at the start of its stream.
    pub fn new(info: &PrngInfo) -> Self {
        Self {
            info: info.clone(),
            counter: 0,
            buffer: Box::new([0u8; BLOCK_BYTES]),
            head: BLOCK_BYTES,
        }
    }

    fn refill(&mut self) {
        let counter = self.counter.to_le_bytes();
        match self.info.prng_type {
            PrngType::Blake2xb => blake2xb(&self.info.seed, &counter, &mut self.buffer[..]),
            PrngType::Shake256 => {
                let mut h = sha3::Shake256::default();
                h.update(&self.info.seed);
                h.update(&counter);
                h.finalize_xof().read(&mut self.buffer[..]);
            }
        }
        self.counter = self.counter.wrapping_add(1);
        self.head = 0;
    }

    /// Fills `out` with the next bytes of the stream.
    pub fn fill(&mut self, out: &mut [u8]) {
        let mut done = 0;
        while done < out.len() {
            if self.head == BLOCK_BYTES {
                self.refill();
            }
            let take = (out.len() - done).min(BLOCK_BYTES - self.head);
            out[done..done + take].copy_from_slice(&self.buffer[self.head..self.head + take]);
            self.head += take;
            done += take;
        }
    }

    /// The next little-endian `u64` of the stream.
    pub fn next_u64(&mut self) -> u64 {
        let mut b = [0u8; 8];
        self.fill(&mut b);
        u64::from_le_bytes(b)
    }
}

/// BLAKE2Xb (the BLAKE2X construction over BLAKE2b) with a key of up to 64 bytes and an
/// output of `out.len() < 2^32` bytes, as in the BLAKE2 reference code SEAL ships.
pub fn blake2xb(key: &[u8], input: &[u8], out: &mut [u8]) {
    let xof_length = out.len() as u64;
    // The root: an ordinary keyed BLAKE2b-512 whose node offset word carries the XOF length
    // in its high 32 bits (BLAKE2X splits that word into node_offset and xof_length).
    let root = blake2b_simd::Params::new()
        .hash_length(64)
        .key(key)
        .fanout(1)
        .max_depth(1)
        .max_leaf_length(0)
        .node_offset(xof_length << 32)
        .node_depth(0)
        .inner_hash_length(0)
        .hash(input);
    for (i, chunk) in out.chunks_mut(64).enumerate() {
        let block = blake2b_simd::Params::new()
            .hash_length(chunk.len())
            .fanout(0)
            .max_depth(0)
            .max_leaf_length(64)
            .node_offset((xof_length << 32) | i as u64)
            .node_depth(0)
            .inner_hash_length(64)
            .hash(root.as_bytes());
        chunk.copy_from_slice(block.as_bytes());
    }
}

/// SEAL's `sample_poly_uniform`: a polynomial with residues uniform in `[0, q_j)` for every
/// prime, `n` coefficients per prime, laid out prime after prime.
pub fn sample_poly_uniform(prng: &mut SealPrng, coeff_modulus: &[u64], n: usize) -> Vec<u64> {
    let total = coeff_modulus.len() * n;
    let mut bytes = vec![0u8; total * 8];
    prng.fill(&mut bytes);
    let mut out: Vec<u64> = bytes
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]))
        .collect();
    bytes.zeroize();
    for (j, &q) in coeff_modulus.iter().enumerate() {
        // Public data: plain division is fine here.
        let max_multiple = u64::MAX - (u64::MAX % q) - 1;
        for v in out[j * n..(j + 1) * n].iter_mut() {
            let mut r = *v;
            while r >= max_multiple {
                r = prng.next_u64();
            }
            *v = r % q;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_are_block_concatenations() {
        for t in [PrngType::Blake2xb, PrngType::Shake256] {
            let info = PrngInfo {
                prng_type: t,
                seed: [7u8; 64],
            };
            let mut a = SealPrng::new(&info);
            let mut whole = vec![0u8; 3 * BLOCK_BYTES + 5];
            a.fill(&mut whole);
            let mut b = SealPrng::new(&info);
            let mut pieces = vec![0u8; whole.len()];
            for chunk in pieces.chunks_mut(1000) {
                b.fill(chunk);
            }
            assert_eq!(whole, pieces);
            assert_ne!(whole[..BLOCK_BYTES], whole[BLOCK_BYTES..2 * BLOCK_BYTES]);
        }
    }

    #[test]
    fn shake256_block_zero_is_plain_shake() {
        // Independent check against the sha3 one-shot API: block 0 = SHAKE256(seed || 0^8).
        let info = PrngInfo {
            prng_type: PrngType::Shake256,
            seed: [0xAB; 64],
        };
        let mut p = SealPrng::new(&info);
        let mut got = [0u8; 64];
        p.fill(&mut got);
        let mut input = vec![0xAB; 64];
        input.extend_from_slice(&0u64.to_le_bytes());
        let mut want = [0u8; 64];
        sha3::Shake256::default()
            .chain(&input)
            .finalize_xof()
            .read(&mut want);
        assert_eq!(got, want);
    }

    #[test]
    fn blake2xb_output_blocks_differ_and_depend_on_length() {
        let mut a = [0u8; 128];
        blake2xb(&[1u8; 64], b"x", &mut a);
        let mut b = [0u8; 64];
        blake2xb(&[1u8; 64], b"x", &mut b);
        // BLAKE2X binds the output length into every block.
        assert_ne!(a[..64], b[..]);
        assert_ne!(a[..64], a[64..]);
    }

    #[test]
    fn uniform_sampler_is_reduced() {
        let info = PrngInfo {
            prng_type: PrngType::Blake2xb,
            seed: [3u8; 64],
        };
        let q = [134_176_769u64, 268_369_921];
        let v = sample_poly_uniform(&mut SealPrng::new(&info), &q, 4096);
        assert_eq!(v.len(), 8192);
        assert!(v[..4096].iter().all(|&x| x < q[0]));
        assert!(v[4096..].iter().all(|&x| x < q[1]));
    }
}
