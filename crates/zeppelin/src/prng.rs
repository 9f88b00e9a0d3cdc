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
//! default, and a board can plug in its AES peripheral. [`ChaCha20`] (RFC 8439, four blocks
//! per call on the backend's kernel: Helium `asm!` on the Cortex-M55) is the fast
//! constant-time choice for the secret stream, which never leaves the device, and the fast
//! software choice for the public stream.
//!
//! The receiver must re-expand the public stream, so a public keystream names its generator
//! ([`PublicKeystream::GENERATOR`], a [`PublicGenerator`]); a seeded ciphertext records it and
//! its wire forms carry it as the `prng_type` byte.

use aes::Aes128;
#[cfg(target_arch = "x86_64")]
use ctr::cipher::StreamCipherSeek;
use ctr::cipher::{KeyIvInit, StreamCipher};
use rand_core::{CryptoRng, RngCore};
use zeppelin_ring::chacha::{initial_state_from_key_bytes, Blocks4};
use zeppelin_ring::{ClientKernels, Portable};
use zeroize::Zeroize;

/// Bytes in a seed.
pub const SEED_BYTES: usize = 32;

/// A generator of keystream bytes from a 32-byte seed.
///
/// Implementations must be deterministic (same seed, same bytes, on every target) and, for
/// the secret stream, constant-time. Two instances with the same seed must produce the same
/// stream however the output is split into [`Keystream::fill`] calls.
///
/// [`PublicPrng`] and [`SecretPrng`] read the stream through one [`Keystream::Buffer`],
/// refilled whole by [`Keystream::fill_buffer`]: a byte stream names [`ByteBuffer`] and keeps
/// the default `fill_buffer`; a block stream names its block type and writes its blocks
/// straight into the buffer, so the device holds each keystream byte once.
///
/// ```
/// use zeppelin::{ByteBuffer, Keystream};
/// /// A stand-in: a counter, not a cipher.
/// struct Counting(u8);
/// impl Keystream for Counting {
///     type Buffer = ByteBuffer;
///     fn from_seed(seed: &[u8; 32]) -> Self { Counting(seed[0]) }
///     fn fill(&mut self, out: &mut [u8]) {
///         for b in out { *b = self.0; self.0 = self.0.wrapping_add(1); }
///     }
/// }
/// let mut k = Counting::from_seed(&[7; 32]);
/// let mut out = [0u8; 3];
/// k.fill(&mut out);
/// assert_eq!(out, [7, 8, 9]);
/// ```
pub trait Keystream: Sized {
    /// What the PRNGs read this stream through, one refill at a time.
    type Buffer: KeystreamBuffer;
    /// Starts the stream for `seed`.
    fn from_seed(seed: &[u8; SEED_BYTES]) -> Self;
    /// Overwrites `out` with the next `out.len()` keystream bytes.
    fn fill(&mut self, out: &mut [u8]);
    /// Overwrites the whole `buffer` with the next keystream bytes: [`Keystream::fill`] on
    /// its bytes, unless the stream writes into the buffer more directly.
    #[inline]
    fn fill_buffer(&mut self, buffer: &mut Self::Buffer) {
        self.fill(buffer.bytes_mut())
    }
}

/// A buffer of keystream bytes, as [`Keystream::Buffer`] names it.
pub trait KeystreamBuffer: Sized {
    /// The buffer before its first refill.
    const ZERO: Self;
    /// Its bytes.
    fn bytes(&self) -> &[u8];
    /// Its bytes, to be overwritten.
    fn bytes_mut(&mut self) -> &mut [u8];
}

impl<const N: usize> KeystreamBuffer for [u8; N] {
    const ZERO: Self = [0; N];
    #[inline]
    fn bytes(&self) -> &[u8] {
        self
    }
    #[inline]
    fn bytes_mut(&mut self) -> &mut [u8] {
        self
    }
}

impl KeystreamBuffer for Blocks4 {
    const ZERO: Self = Blocks4::ZERO;
    #[inline]
    fn bytes(&self) -> &[u8] {
        &self.0
    }
    #[inline]
    fn bytes_mut(&mut self) -> &mut [u8] {
        &mut self.0
    }
}

/// The buffer of a byte stream ([`AesCtr128`], a board's AES engine): 512 bytes on x86-64,
/// 32 elsewhere (see `BUFFER_BYTES`).
pub type ByteBuffer = [u8; BUFFER_BYTES];

/// The generator of a public stream, as a seeded ciphertext records it and its wire forms
/// carry it (`prng_type`). Both are built in, so any receiver can expand either (see
/// [`crate::expand_seeded`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PublicGenerator {
    /// AES-128-CTR (discriminant 0: an empty seeded ciphertext stays all-zero, in `.bss`) as [`AesCtr128`] defines it (`prng_type` 0xA1); a board's AES engine
    /// produces the same stream.
    AesCtr128,
    /// ChaCha20 as [`ChaCha20`] defines it (`prng_type` 0xA2).
    ChaCha20,
}

impl PublicGenerator {
    /// The `prng_type` byte of the wire forms (SEAL's own generators are 1 and 2).
    pub const fn prng_type(self) -> u8 {
        match self {
            Self::AesCtr128 => 0xA1,
            Self::ChaCha20 => 0xA2,
        }
    }

    /// The generator of a `prng_type` byte, or `None` for a byte that names none.
    pub const fn from_prng_type(byte: u8) -> Option<Self> {
        match byte {
            0xA1 => Some(Self::AesCtr128),
            0xA2 => Some(Self::ChaCha20),
            _ => None,
        }
    }

    /// The generator's name, for messages.
    pub const fn name(self) -> &'static str {
        match self {
            Self::AesCtr128 => "AES-128-CTR",
            Self::ChaCha20 => "ChaCha20",
        }
    }
}

/// A [`Keystream`] that may feed the public stream (`prng_a`): it produces the stream of a
/// built-in [`PublicGenerator`], so a receiver that reads the generator from the ciphertext
/// can re-expand it. A board's AES peripheral implements it with
/// [`PublicGenerator::AesCtr128`] (it must then produce exactly [`AesCtr128`]'s stream).
pub trait PublicKeystream: Keystream {
    /// The generator whose stream this keystream produces.
    const GENERATOR: PublicGenerator;
}

impl PublicKeystream for AesCtr128 {
    const GENERATOR: PublicGenerator = PublicGenerator::AesCtr128;
}

impl<K: ClientKernels + Default> PublicKeystream for ChaCha20<K> {
    const GENERATOR: PublicGenerator = PublicGenerator::ChaCha20;
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
/// /// Stands in for the firmware's `TableAesCtr128` (a table AES: not a `SecretKeystream`).
/// struct TableAesCtr128;
/// impl Keystream for TableAesCtr128 {
///     type Buffer = zeppelin::ByteBuffer;
///     fn from_seed(_: &[u8; 32]) -> Self { TableAesCtr128 }
///     fn fill(&mut self, out: &mut [u8]) { out.fill(0) }
/// }
/// impl zeppelin::PublicKeystream for TableAesCtr128 {
///     const GENERATOR: zeppelin::PublicGenerator = zeppelin::PublicGenerator::AesCtr128;
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
///     type Buffer = zeppelin::ByteBuffer;
///     fn from_seed(_: &[u8; 32]) -> Self { TableAesCtr128 }
///     fn fill(&mut self, out: &mut [u8]) { out.fill(0) }
/// }
/// impl zeppelin::PublicKeystream for TableAesCtr128 {
///     const GENERATOR: zeppelin::PublicGenerator = zeppelin::PublicGenerator::AesCtr128;
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
/// encryption of the all-zero message. Zeroized on drop (the `zeroize` features of `aes`/`ctr`,
/// and [`zeppelin_ring::x86::VaesCtr128`]'s own wipe).
///
/// On x86-64 with VAES, whole refills of the PRNGs' buffer ([`Keystream::fill_buffer`] at a
/// block boundary) are computed 32 blocks at a time by [`zeppelin_ring::x86::VaesCtr128`]
/// (four blocks per instruction, where `aes` runs one), and the `ctr` state is moved past
/// them; reads of any other length go through `ctr`. The stream is the same either way.
pub struct AesCtr128 {
    cipher: ctr::Ctr128BE<Aes128>,
    /// The same key's VAES schedule and the initial counter, if this CPU has VAES.
    #[cfg(target_arch = "x86_64")]
    vaes: Option<(zeppelin_ring::x86::VaesCtr128, u128)>,
}

// One VAES call is one refill.
#[cfg(target_arch = "x86_64")]
const _: () = assert!(BUFFER_BYTES == zeppelin_ring::x86::VAES_CTR_BYTES);

impl Keystream for AesCtr128 {
    type Buffer = ByteBuffer;
    fn from_seed(seed: &[u8; SEED_BYTES]) -> Self {
        let (key, iv) = seed.split_at(16);
        Self {
            cipher: ctr::Ctr128BE::<Aes128>::new(key.into(), iv.into()),
            #[cfg(target_arch = "x86_64")]
            vaes: seed
                .first_chunk::<16>()
                .zip(seed.last_chunk::<16>())
                .and_then(|(key, iv)| {
                    zeppelin_ring::x86::VaesCtr128::new(key)
                        .map(|schedule| (schedule, u128::from_be_bytes(*iv)))
                }),
        }
    }

    fn fill(&mut self, out: &mut [u8]) {
        out.fill(0);
        self.cipher.apply_keystream(out);
    }

    #[inline]
    fn fill_buffer(&mut self, buffer: &mut ByteBuffer) {
        // The branches depend on the stream position, a byte count (public).
        #[cfg(target_arch = "x86_64")]
        if let Some((vaes, iv)) = &self.vaes {
            if let Ok(pos) = self.cipher.try_current_pos::<u64>() {
                if pos % 16 == 0 && self.cipher.try_seek(pos + BUFFER_BYTES as u64).is_ok() {
                    vaes.keystream(iv.wrapping_add(u128::from(pos / 16)), buffer);
                    return;
                }
            }
        }
        self.fill(buffer)
    }
}

#[cfg(target_arch = "x86_64")]
impl Drop for AesCtr128 {
    fn drop(&mut self) {
        if let Some((_, iv)) = &mut self.vaes {
            iv.zeroize();
        }
    }
}

// ChaCha20 is ARX (no tables, no data-dependent branch or address); the refill and copy
// depend only on byte counts.
impl<K: ClientKernels + Default> SecretKeystream for ChaCha20<K> {}

/// Bytes of one [`ClientKernels::chacha20_blocks4`] call: four 64-byte ChaCha20 blocks.
const CHACHA_BUFFER_BYTES: usize = 256;

/// ChaCha20 (RFC 8439) as a keystream: key = the 32-byte seed (eight little-endian words),
/// nonce 0, block counter from 0; the keystream is the concatenation of the blocks (the
/// encryption of the all-zero message). Generated four blocks at a time by the backend `K`'s
/// [`ClientKernels::chacha20_blocks4`] (`Portable`: the RFC block function; `Mve`: Helium).
/// No allocation; state and buffer zeroized on drop.
///
/// On the secret stream (`prng_e`, `Bfv<P, A, ChaCha20<K>>`) it is the device's own choice
/// (that stream never leaves the device). On the public stream (`Bfv<P, ChaCha20<K>, E>`)
/// seeded ciphertexts record [`PublicGenerator::ChaCha20`] and the receiver expands it with
/// the same function. The 32-bit block counter wraps after 2^38 bytes (256 GiB), far beyond what
/// one seed feeds (an encryption reads about 80 KB).
pub struct ChaCha20<K: ClientKernels + Default = Portable> {
    /// RFC 8439 input state; word 12 is the counter of the first block of the current group
    /// of four.
    state: [u32; 16],
    /// Bytes of the current group already handed out (a count: public); 0 at a group
    /// boundary.
    pos: usize,
    kernels: K,
}

impl<K: ClientKernels + Default> ChaCha20<K> {
    /// Moves the stream `bytes` further inside the current group (at most to its end).
    #[inline]
    fn advance(&mut self, bytes: usize) {
        self.pos += bytes;
        if self.pos == CHACHA_BUFFER_BYTES {
            self.state[12] = self.state[12].wrapping_add(4);
            self.pos = 0;
        }
    }
}

impl<K: ClientKernels + Default> Keystream for ChaCha20<K> {
    /// Four blocks: the PRNGs' buffer is the kernel's output, so the stream keeps no copy.
    type Buffer = Blocks4;

    fn from_seed(seed: &[u8; SEED_BYTES]) -> Self {
        Self {
            state: initial_state_from_key_bytes(seed, 0, &[0; 3]),
            pos: 0,
            kernels: K::default(),
        }
    }

    /// Reads of any length: each step regenerates the current group of four blocks into a
    /// local buffer (wiped afterwards) and copies the part asked for. The PRNGs read whole
    /// groups through [`Keystream::fill_buffer`] instead, one kernel call per group.
    // Out of line: inlined into `fill_buffer`'s (never taken on the PRNGs' path) fallback, its
    // 256-byte local would sit in every sampler's stack frame.
    #[inline(never)]
    fn fill(&mut self, out: &mut [u8]) {
        let mut group = Blocks4::ZERO;
        let mut done = 0;
        while done < out.len() {
            self.kernels.chacha20_blocks4(&self.state, &mut group);
            let take = (CHACHA_BUFFER_BYTES - self.pos).min(out.len() - done);
            out[done..done + take].copy_from_slice(&group.0[self.pos..self.pos + take]);
            self.advance(take);
            done += take;
        }
        group.0.zeroize();
    }

    #[inline]
    fn fill_buffer(&mut self, buffer: &mut Blocks4) {
        if self.pos == 0 {
            self.kernels.chacha20_blocks4(&self.state, buffer);
            self.advance(CHACHA_BUFFER_BYTES);
        } else {
            self.fill(&mut buffer.0);
        }
    }
}

impl<K: ClientKernels + Default> Drop for ChaCha20<K> {
    fn drop(&mut self) {
        self.state.zeroize();
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

/// Bytes of a [`ByteBuffer`]. On x86-64, 32 AES blocks: the `aes` crate's AES-NI backend
/// keeps eight blocks in flight only when one call asks for at least eight, so a refill runs
/// four full pipelines. Elsewhere two blocks: what the bitsliced software AES computes in one
/// pass (and a small stack on the microcontrollers).
#[cfg(target_arch = "x86_64")]
const BUFFER_BYTES: usize = 512;
#[cfg(not(target_arch = "x86_64"))]
const BUFFER_BYTES: usize = 32;

/// A keystream read four bytes at a time through its [`Keystream::Buffer`].
struct Buffered<S: Keystream> {
    stream: S,
    buffer: S::Buffer,
    /// Next unread byte; depends only on how many words were read (public).
    pos: usize,
}

impl<S: Keystream> Buffered<S> {
    fn new(seed: &[u8; SEED_BYTES]) -> Self {
        Self {
            stream: S::from_seed(seed),
            buffer: S::Buffer::ZERO,
            pos: S::Buffer::ZERO.bytes().len(),
        }
    }

    /// Refills the buffer when every byte of it has been read (the position is public).
    #[inline(always)]
    fn refill_if_read(&mut self) {
        if self.pos == self.buffer.bytes().len() {
            self.stream.fill_buffer(&mut self.buffer);
            self.pos = 0;
        }
    }

    /// The next four keystream bytes as a little-endian word.
    #[inline]
    fn next_u32(&mut self) -> u32 {
        self.refill_if_read();
        let b = self.buffer.bytes();
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
            let unread = &self.buffer.bytes()[self.pos..];
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
        let unread = &self.buffer.bytes()[self.pos..];
        let words = read(unread).min(unread.len() / 4);
        self.pos += 4 * words;
    }
}

/// `prng_a`: the public stream that yields the uniform mask from a [`PublicSeed`].
pub struct PublicPrng<S: PublicKeystream = AesCtr128> {
    inner: Buffered<S>,
}

impl<S: PublicKeystream> PublicPrng<S> {
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
        self.inner.buffer.bytes_mut().zeroize();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use zeppelin_ring::chacha::initial_state;

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

    /// The stream `ctr::Ctr128BE<aes::Aes128>` gives for `seed`, `len` bytes.
    fn rustcrypto_stream(seed: &[u8; 32], len: usize) -> [u8; 4096] {
        assert!(len <= 4096);
        let mut out = [0u8; 4096];
        let (key, iv) = seed.split_at(16);
        let mut c = ctr::Ctr128BE::<Aes128>::new(key.into(), iv.into());
        c.apply_keystream(&mut out[..len]);
        out
    }

    /// Whole refills (the VAES path on a CPU with VAES), reads of other lengths between them,
    /// and refills off a block boundary give RustCrypto's stream byte for byte, also where the
    /// 128-bit counter wraps.
    #[test]
    fn aes_ctr_refills_match_rustcrypto() {
        let mut near_wrap = [0x5au8; 32];
        near_wrap[16..].fill(0xff);
        near_wrap[31] = 0xf3; // 12 blocks before the counter wraps
        let mut seeds = [[0u8; 32], [0xa7; 32], near_wrap];
        for (i, b) in seeds[0].iter_mut().enumerate() {
            *b = (i as u8).wrapping_mul(29).wrapping_add(3);
        }
        // (refill or read of n bytes) sequences.
        let plans: [&[Option<usize>]; 4] = [
            &[None, None, None, None],
            &[Some(16), None, Some(5), None, Some(11), None, None],
            &[Some(3), None, Some(13), None],
            &[None, Some(1000), None, Some(7)],
        ];
        for seed in &seeds {
            for plan in plans {
                let mut ks = AesCtr128::from_seed(seed);
                let mut got = [0u8; 4096];
                let mut at = 0;
                for step in plan {
                    match step {
                        None => {
                            let mut buffer = ByteBuffer::ZERO;
                            ks.fill_buffer(&mut buffer);
                            got[at..at + BUFFER_BYTES].copy_from_slice(&buffer);
                            at += BUFFER_BYTES;
                        }
                        Some(n) => {
                            ks.fill(&mut got[at..at + n]);
                            at += n;
                        }
                    }
                }
                let want = rustcrypto_stream(seed, at);
                assert_eq!(got[..at], want[..at], "plan {plan:?}");
            }
        }
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

    /// RFC 8439 §2.4.2's keystream (key 00..1f, nonce 00..00 4a 00..00, counter 1), the
    /// bytes XORed into "Ladies and Gentlemen of the class of '99: ...": checks the block
    /// function, the counter and the byte order through `fill` (with `initial_state` at
    /// that nonce and counter; `ChaCha20::from_seed` itself fixes nonce 0, counter 0).
    #[test]
    fn chacha20_rfc8439_keystream() {
        let mut key = [0u32; 8];
        for (i, k) in key.iter_mut().enumerate() {
            let b = 4 * i as u8;
            *k = u32::from_le_bytes([b, b + 1, b + 2, b + 3]);
        }
        let mut ks = ChaCha20::<Portable>::from_seed(&[0; 32]);
        ks.state = initial_state(&key, 1, &[0, 0x4a00_0000, 0]);
        let mut out = [0u8; 114];
        ks.fill(&mut out[..7]);
        ks.fill(&mut out[7..]);
        let plain = b"Ladies and Gentlemen of the class of '99: If I could offer you only one tip for the future, sunscreen would be it.";
        let cipher = [
            0x6e, 0x2e, 0x35, 0x9a, 0x25, 0x68, 0xf9, 0x80, 0x41, 0xba, 0x07, 0x28, 0xdd, 0x0d,
            0x69, 0x81, 0xe9, 0x7e, 0x7a, 0xec, 0x1d, 0x43, 0x60, 0xc2, 0x0a, 0x27, 0xaf, 0xcc,
            0xfd, 0x9f, 0xae, 0x0b, 0xf9, 0x1b, 0x65, 0xc5, 0x52, 0x47, 0x33, 0xab, 0x8f, 0x59,
            0x3d, 0xab, 0xcd, 0x62, 0xb3, 0x57, 0x16, 0x39, 0xd6, 0x24, 0xe6, 0x51, 0x52, 0xab,
            0x8f, 0x53, 0x0c, 0x35, 0x9f, 0x08, 0x61, 0xd8, 0x07, 0xca, 0x0d, 0xbf, 0x50, 0x0d,
            0x6a, 0x61, 0x56, 0xa3, 0x8e, 0x08, 0x8a, 0x22, 0xb6, 0x5e, 0x52, 0xbc, 0x51, 0x4d,
            0x16, 0xcc, 0xf8, 0x06, 0x81, 0x8c, 0xe9, 0x1a, 0xb7, 0x79, 0x37, 0x36, 0x5a, 0xf9,
            0x0b, 0xbf, 0x74, 0xa3, 0x5b, 0xe6, 0xb4, 0x0b, 0x8e, 0xed, 0xf2, 0x78, 0x5e, 0x42,
            0x87, 0x4d,
        ];
        for ((&o, &p), &c) in out.iter().zip(plain.iter()).zip(cipher.iter()) {
            assert_eq!(o ^ p, c);
        }
    }

    /// The RFC 8439 §2.3.2 block through the keystream (the serialized block, 64 bytes).
    #[test]
    fn chacha20_rfc8439_block_bytes() {
        let mut key = [0u32; 8];
        for (i, k) in key.iter_mut().enumerate() {
            let b = 4 * i as u8;
            *k = u32::from_le_bytes([b, b + 1, b + 2, b + 3]);
        }
        let mut ks = ChaCha20::<Portable>::from_seed(&[0; 32]);
        ks.state = initial_state(&key, 1, &[0x0900_0000, 0x4a00_0000, 0]);
        let mut out = [0u8; 64];
        ks.fill(&mut out);
        let expect = [
            0x10, 0xf1, 0xe7, 0xe4, 0xd1, 0x3b, 0x59, 0x15, 0x50, 0x0f, 0xdd, 0x1f, 0xa3, 0x20,
            0x71, 0xc4, 0xc7, 0xd1, 0xf4, 0xc7, 0x33, 0xc0, 0x68, 0x03, 0x04, 0x22, 0xaa, 0x9a,
            0xc3, 0xd4, 0x6c, 0x4e, 0xd2, 0x82, 0x64, 0x46, 0x07, 0x9f, 0xaa, 0x09, 0x14, 0xc2,
            0xd7, 0x05, 0xd9, 0x8b, 0x02, 0xa2, 0xb5, 0x12, 0x9c, 0xd1, 0xde, 0x16, 0x4e, 0xb9,
            0xcb, 0xd0, 0x83, 0xe8, 0xa2, 0x50, 0x3c, 0x4e,
        ];
        assert_eq!(out, expect);
    }

    /// Against RustCrypto `chacha20` (key = seed, nonce 0, counter 0) for 64 random seeds,
    /// over several refills and fills of odd sizes.
    #[test]
    fn chacha20_matches_rustcrypto() {
        use chacha20::cipher::{KeyIvInit, StreamCipher};
        use rand::{RngCore, SeedableRng};
        let mut rng = rand::rngs::StdRng::seed_from_u64(0xc4ac4a);
        for _ in 0..64 {
            let mut seed = [0u8; 32];
            rng.fill_bytes(&mut seed);
            let mut reference = [0u8; 1500];
            chacha20::ChaCha20::new(&seed.into(), &[0u8; 12].into())
                .apply_keystream(&mut reference);
            let mut ours = [0u8; 1500];
            let mut ks = ChaCha20::<Portable>::from_seed(&seed);
            let mut at = 0;
            for size in [32, 1, 3, 64, 100, 256, 7, 300, 4, 200] {
                ks.fill(&mut ours[at..at + size]);
                at += size;
            }
            ks.fill(&mut ours[at..]);
            assert_eq!(ours, reference);
            // Whole-buffer refills, off a group boundary and on one, continue the stream.
            let mut ks = ChaCha20::<Portable>::from_seed(&seed);
            let mut head = [0u8; 5];
            ks.fill(&mut head);
            let mut buffer = Blocks4::ZERO;
            ks.fill_buffer(&mut buffer);
            assert_eq!(buffer.0[..], reference[5..261]);
            let mut rest = [0u8; 251];
            ks.fill(&mut rest);
            assert_eq!(rest[..], reference[261..512]);
            ks.fill_buffer(&mut buffer);
            assert_eq!(buffer.0[..], reference[512..768]);
            ks.fill_buffer(&mut buffer);
            assert_eq!(buffer.0[..], reference[768..1024]);
            // The secret stream's words over it.
            let mut e = SecretPrng::<ChaCha20>::new(&SecretSeed::from_bytes(seed));
            for i in 0..reference.len() / 4 {
                assert_eq!(e.next_u32(), word_at(&reference, i));
            }
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
