//! Keystreams and the two structurally separate PRNG states.
//!
//! - [`PublicPrng`] (`prng_a`) expands a [`PublicSeed`] into the uniform mask `a` (or `â`).
//!   Its seed travels with the ciphertext; only the rejection sampler reads it.
//! - [`SecretPrng`] (`prng_e`) expands a [`SecretSeed`] into secrets and errors (`s`, `u`,
//!   `e`). It is never serialized, and it and its seed are zeroized when dropped.
//!
//! The two are different types, and each sampler takes exactly one of them, so a secret can
//! never be drawn from the public stream by mistake. The keystream generator itself is behind
//! [`Keystream`]; [`AesCtr128`] (RustCrypto `aes` + `ctr`, constant-time software AES) is the
//! default, and a board can plug in its AES peripheral.

use aes::Aes128;
use ctr::cipher::{KeyIvInit, StreamCipher};
use rand_core::{CryptoRng, RngCore};
use zeroize::Zeroize;

/// Bytes in a seed.
pub const SEED_BYTES: usize = 32;

/// A generator of keystream bytes from a 32-byte seed.
///
/// Implementations must be deterministic (same seed, same bytes, on every target) and, for
/// the secret stream, constant-time. Two instances with the same seed must produce the same
/// stream however the output is split into [`Keystream::fill`] calls.
pub trait Keystream: Sized {
    /// Starts the stream for `seed`.
    fn from_seed(seed: &[u8; SEED_BYTES]) -> Self;
    /// Overwrites `out` with the next `out.len()` keystream bytes.
    fn fill(&mut self, out: &mut [u8]);
}

/// A [`Keystream`] that may feed secrets: its running time and memory addresses do not depend
/// on its key (seed) or output. [`SecretPrng`], the samplers and the secret-stream parameter
/// `E` of [`crate::Bfv`] require it, so a keystream with secret-indexed tables (such as the
/// firmware's table AES, fine for the public stream) cannot be plugged into the secret stream.
///
/// Implementing it is a promise the compiler cannot check (this crate forbids `unsafe`, so it
/// is a plain marker trait, implemented deliberately per type): the implementation must be
/// constant-time in the above sense, which `security/audit` checks on the compiled firmware.
///
/// A keystream that only implements [`Keystream`] is refused as the secret stream:
///
/// ```compile_fail,E0277
/// use zeppelin::{Bfv, Keystream, Seal4096, SecretKey, SecretSeed};
/// /// Stands in for the firmware's `TableAesCtr128` (a table AES: `Keystream` only).
/// struct TableAesCtr128;
/// impl Keystream for TableAesCtr128 {
///     fn from_seed(_: &[u8; 32]) -> Self { TableAesCtr128 }
///     fn fill(&mut self, out: &mut [u8]) { out.fill(0) }
/// }
/// let mut sk = Box::new(SecretKey::<Seal4096>::zeroed());
/// let seed = SecretSeed::from_bytes([7; 32]);
/// // E = TableAesCtr128: error[E0277]: the trait bound `TableAesCtr128: SecretKeystream` is not satisfied
/// Bfv::<Seal4096, zeppelin::AesCtr128, TableAesCtr128>::generate_secret_key_with(&seed, &mut sk).ok();
/// ```
///
/// while the same keystream is accepted as the public stream `A`:
///
/// ```
/// use zeppelin::{Bfv, Keystream, Seal4096, SecretKey, SecretSeed};
/// struct TableAesCtr128;
/// impl Keystream for TableAesCtr128 {
///     fn from_seed(_: &[u8; 32]) -> Self { TableAesCtr128 }
///     fn fill(&mut self, out: &mut [u8]) { out.fill(0) }
/// }
/// let mut sk = Box::new(SecretKey::<Seal4096>::zeroed());
/// let seed = SecretSeed::from_bytes([7; 32]);
/// Bfv::<Seal4096, TableAesCtr128, zeppelin::AesCtr128>::generate_secret_key_with(&seed, &mut sk)?;
/// # Ok::<(), zeppelin::Error>(())
/// ```
pub trait SecretKeystream: Keystream {}

// RustCrypto's software `aes` is the fixsliced constant-time implementation (no table
// lookups), and `ctr`'s counter arithmetic depends only on the output length.
impl SecretKeystream for AesCtr128 {}

/// AES-128 in counter mode: key = `seed[0..16]`, initial counter block = `seed[16..32]`,
/// incremented as one 128-bit big-endian integer (`ctr::Ctr128BE`). The keystream is the
/// encryption of the all-zero message. Zeroized on drop (the `zeroize` features of `aes`/`ctr`).
pub struct AesCtr128 {
    cipher: ctr::Ctr128BE<Aes128>,
}

impl Keystream for AesCtr128 {
    fn from_seed(seed: &[u8; SEED_BYTES]) -> Self {
        let (key, iv) = seed.split_at(16);
        Self {
            cipher: ctr::Ctr128BE::<Aes128>::new(key.into(), iv.into()),
        }
    }

    fn fill(&mut self, out: &mut [u8]) {
        out.fill(0);
        self.cipher.apply_keystream(out);
    }
}

/// A public seed: the seed of `prng_a`, sent with the ciphertext (or public key).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct PublicSeed(pub [u8; SEED_BYTES]);

impl PublicSeed {
    /// A fresh seed from a cryptographic RNG (the device's TRNG).
    pub fn generate<R: RngCore + CryptoRng>(rng: &mut R) -> Self {
        let mut s = [0u8; SEED_BYTES];
        rng.fill_bytes(&mut s);
        Self(s)
    }
}

/// A secret seed: the seed of `prng_e`. Never serialized by this crate; zeroized on drop;
/// its `Debug` output does not show the bytes.
#[derive(Clone)]
pub struct SecretSeed([u8; SEED_BYTES]);

impl SecretSeed {
    /// Wraps explicit bytes (for known-answer tests and reproducible runs).
    pub const fn from_bytes(bytes: [u8; SEED_BYTES]) -> Self {
        Self(bytes)
    }

    /// A fresh seed from a cryptographic RNG (the device's TRNG).
    pub fn generate<R: RngCore + CryptoRng>(rng: &mut R) -> Self {
        let mut s = Self([0; SEED_BYTES]);
        rng.fill_bytes(&mut s.0);
        s
    }

    pub(crate) fn bytes(&self) -> &[u8; SEED_BYTES] {
        &self.0
    }
}

impl Drop for SecretSeed {
    fn drop(&mut self) {
        self.0.zeroize();
    }
}

impl core::fmt::Debug for SecretSeed {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("SecretSeed(..)")
    }
}

/// Keystream bytes per refill. On x86-64, 32 AES blocks: the `aes` crate's AES-NI backend
/// keeps eight blocks in flight only when one call asks for at least eight, so a refill runs
/// four full pipelines. Elsewhere two blocks: what the bitsliced software AES computes in one
/// pass (and a small stack on the microcontrollers).
#[cfg(target_arch = "x86_64")]
const BUFFER_BYTES: usize = 512;
#[cfg(not(target_arch = "x86_64"))]
const BUFFER_BYTES: usize = 32;

/// A keystream read four bytes at a time through a small buffer.
struct Buffered<S: Keystream> {
    stream: S,
    buffer: [u8; BUFFER_BYTES],
    /// Next unread byte; depends only on how many words were read (public).
    pos: usize,
}

impl<S: Keystream> Buffered<S> {
    fn new(seed: &[u8; SEED_BYTES]) -> Self {
        Self {
            stream: S::from_seed(seed),
            buffer: [0; BUFFER_BYTES],
            pos: BUFFER_BYTES,
        }
    }

    /// Refills the buffer when every byte of it has been read (the position is public).
    #[inline(always)]
    fn refill_if_read(&mut self) {
        if self.pos == BUFFER_BYTES {
            self.stream.fill(&mut self.buffer);
            self.pos = 0;
        }
    }

    /// The next four keystream bytes as a little-endian word.
    #[inline]
    fn next_u32(&mut self) -> u32 {
        self.refill_if_read();
        let b = &self.buffer;
        let p = self.pos;
        let w = u32::from_le_bytes([b[p], b[p + 1], b[p + 2], b[p + 3]]);
        self.pos = p + 4;
        w
    }

    /// The next `out.len()` keystream words (little-endian), as that many
    /// [`Self::next_u32`] calls would give them. Trip counts and addresses depend only on
    /// `out.len()` and the read position (counts, never keystream values).
    #[inline]
    fn fill_words(&mut self, out: &mut [u32]) {
        let mut done = 0;
        while done < out.len() {
            self.refill_if_read();
            let unread = &self.buffer[self.pos..];
            let take = (unread.len() / 4).min(out.len() - done);
            for (o, w) in out[done..done + take]
                .iter_mut()
                .zip(unread.chunks_exact(4))
            {
                *o = u32::from_le_bytes([w[0], w[1], w[2], w[3]]);
            }
            self.pos += 4 * take;
            done += take;
        }
    }

    /// Hands the unread keystream bytes (at least one word; refilled first when none are
    /// left) to `read`, which returns how many whole words it consumed (at most the number
    /// it was given); the next read starts after them.
    #[inline]
    fn read_words(&mut self, read: impl FnOnce(&[u8]) -> usize) {
        self.refill_if_read();
        let unread = &self.buffer[self.pos..];
        let words = read(unread).min(unread.len() / 4);
        self.pos += 4 * words;
    }
}

/// `prng_a`: the public stream that yields the uniform mask from a [`PublicSeed`].
pub struct PublicPrng<S: Keystream = AesCtr128> {
    inner: Buffered<S>,
}

impl<S: Keystream> PublicPrng<S> {
    /// Starts the public stream.
    pub fn new(seed: &PublicSeed) -> Self {
        Self {
            inner: Buffered::new(&seed.0),
        }
    }

    /// The next keystream word (little-endian).
    #[inline]
    pub fn next_u32(&mut self) -> u32 {
        self.inner.next_u32()
    }

    /// Hands the unread keystream bytes (at least four, a multiple of four) to `read`, which
    /// returns how many whole little-endian words it consumed; the stream continues after
    /// them. For bulk readers such as the uniform sampler: the same stream as
    /// [`Self::next_u32`], without a call per word.
    #[inline]
    pub fn read_words(&mut self, read: impl FnOnce(&[u8]) -> usize) {
        self.inner.read_words(read)
    }
}

/// `prng_e`: the secret stream that yields secrets and errors from a [`SecretSeed`].
/// Its buffer is zeroized on drop (and the AES state by the keystream's own drop).
pub struct SecretPrng<S: SecretKeystream = AesCtr128> {
    inner: Buffered<S>,
}

impl<S: SecretKeystream> SecretPrng<S> {
    /// Starts the secret stream.
    pub fn new(seed: &SecretSeed) -> Self {
        Self {
            inner: Buffered::new(seed.bytes()),
        }
    }

    /// The next keystream word (little-endian).
    // Kept out of line: the secret stream's word reader is one function the firmware's
    // binary audit (security/audit) checks with its reviewed findings, whichever
    // sampler calls it.
    #[inline(never)]
    pub fn next_u32(&mut self) -> u32 {
        self.inner.next_u32()
    }

    /// The next `out.len()` keystream words, as that many [`Self::next_u32`] calls would
    /// give them (one call per block of words instead of one per word).
    // Kept out of line for the binary audit, as `next_u32`.
    #[inline(never)]
    pub fn fill_words(&mut self, out: &mut [u32]) {
        self.inner.fill_words(out)
    }
}

impl<S: SecretKeystream> Drop for SecretPrng<S> {
    fn drop(&mut self) {
        self.inner.buffer.zeroize();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aes_ctr_matches_fips197_block() {
        // FIPS-197 Appendix C.1: AES-128(key 000102..0f, block 00112233..ff) = 69c4e0d8...
        let mut seed = [0u8; 32];
        for (i, b) in seed[..16].iter_mut().enumerate() {
            *b = i as u8;
        }
        for (i, b) in seed[16..].iter_mut().enumerate() {
            *b = (i as u8) * 0x11;
        }
        let mut ks = AesCtr128::from_seed(&seed);
        let mut out = [0u8; 16];
        ks.fill(&mut out);
        assert_eq!(
            out,
            [
                0x69, 0xc4, 0xe0, 0xd8, 0x6a, 0x7b, 0x04, 0x30, 0xd8, 0xcd, 0xb7, 0x80, 0x70, 0xb4,
                0xc5, 0x5a
            ]
        );
    }

    #[test]
    fn stream_is_independent_of_split() {
        let seed = [7u8; 32];
        let mut a = AesCtr128::from_seed(&seed);
        let mut whole = [0u8; 200];
        a.fill(&mut whole);
        let mut b = AesCtr128::from_seed(&seed);
        let mut parts = [0u8; 200];
        b.fill(&mut parts[..3]);
        b.fill(&mut parts[3..100]);
        b.fill(&mut parts[100..]);
        assert_eq!(whole, parts);
        let mut p = PublicPrng::<AesCtr128>::new(&PublicSeed(seed));
        for chunk in whole[..200 / 4 * 4].chunks_exact(4) {
            assert_eq!(
                p.next_u32(),
                u32::from_le_bytes([chunk[0], chunk[1], chunk[2], chunk[3]])
            );
        }
    }

    /// The word of the stream at `index` (0-based), from one long `fill`.
    fn word_at(stream: &[u8], index: usize) -> u32 {
        let b = &stream[4 * index..4 * index + 4];
        u32::from_le_bytes([b[0], b[1], b[2], b[3]])
    }

    #[test]
    fn bulk_readers_follow_the_word_stream() {
        let seed = [9u8; 32];
        let mut whole = [0u8; 8 * BUFFER_BYTES];
        AesCtr128::from_seed(&seed).fill(&mut whole);
        let total = whole.len() / 4;
        // The secret stream: single words and blocks of every size across refills.
        let mut e = SecretPrng::<AesCtr128>::new(&SecretSeed::from_bytes(seed));
        let mut at = 0;
        for size in (0..).map(|k| k % 37) {
            if at + size + 1 > total {
                break;
            }
            let mut block = [0u32; 36];
            e.fill_words(&mut block[..size]);
            for (k, &w) in block[..size].iter().enumerate() {
                assert_eq!(w, word_at(&whole, at + k));
            }
            at += size;
            assert_eq!(e.next_u32(), word_at(&whole, at));
            at += 1;
        }
        // The public stream: partial consumption of what `read_words` hands over.
        let mut a = PublicPrng::<AesCtr128>::new(&PublicSeed(seed));
        let mut at = 0;
        for step in (1..).map(|k| k % 29) {
            if at + step + 1 > total {
                break;
            }
            let mut given = 0;
            a.read_words(|bytes| {
                assert_eq!(bytes.len() % 4, 0);
                assert_eq!(word_at(bytes, 0), word_at(&whole, at));
                given = (bytes.len() / 4).min(step);
                given
            });
            at += given;
            assert_eq!(a.next_u32(), word_at(&whole, at));
            at += 1;
        }
    }
}
