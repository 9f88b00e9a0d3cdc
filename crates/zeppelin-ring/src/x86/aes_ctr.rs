//! AES-128 counter-mode keystream blocks with VAES on 512-bit vectors: four blocks per
//! instruction, 32 blocks (512 bytes, one refill of the client's PRNG buffer) in flight.
//!
//! # Why by hand
//!
//! RustCrypto's `aes` 0.8 runs AES-NI on one 128-bit block per instruction, eight blocks in
//! flight; on a core with VAES that is a quarter of what its AES units do. Expanding a
//! seeded ciphertext's mask (about 50 KB of keystream at n = 4096) took 4.9 µs of a 24 µs
//! aggregation step and 16 % of the client operations' time in a profile. No released
//! RustCrypto `aes` has a VAES backend, so this module computes exactly the stream of
//! `ctr::Ctr128BE<aes::Aes128>` (key, then a 128-bit big-endian counter, wrapping), and the
//! tests of `zeppelin::prng` check it against that crate byte for byte.
//!
//! # Constant time
//!
//! The key schedule is `aeskeygenassist` and the rounds are `vaesenc`: hardware AES, without
//! tables. The instruction sequence depends on the number of blocks asked for, never on the
//! key, the counter or the output.

use core::arch::x86_64::*;

cpufeatures::new!(vaes_cpuid, "aes", "vaes", "avx512f");

/// Bytes of one call of [`VaesCtr128::keystream`]: 32 blocks.
pub const VAES_CTR_BYTES: usize = 512;

/// Blocks of one call.
const BLOCKS: usize = VAES_CTR_BYTES / 16;

/// An AES-128 key schedule for [`VaesCtr128::keystream`]. Exists only on a CPU that runs
/// AES-NI, VAES and AVX-512F ([`VaesCtr128::new`] is the only constructor). The round keys
/// are wiped when it is dropped.
///
/// ```
/// use zeppelin_ring::x86::VaesCtr128;
/// // FIPS-197 C.1: AES-128(000102..0f, 00112233..ff) = 69c4e0d8 6a7b0430 d8cdb780 70b4c55a.
/// let key: [u8; 16] = core::array::from_fn(|i| i as u8);
/// if let Some(aes) = VaesCtr128::new(&key) {
///     let mut out = [0u8; 512];
///     aes.keystream(0x0011_2233_4455_6677_8899_aabb_ccdd_eeff, &mut out);
///     assert_eq!(out[..4], [0x69, 0xc4, 0xe0, 0xd8]);
/// }
/// ```
pub struct VaesCtr128 {
    round_keys: [[u8; 16]; 11],
}

impl VaesCtr128 {
    /// The key schedule of `key`, if this CPU runs AES-NI, VAES and AVX-512F (`cpufeatures`:
    /// CPUID and the OS's XSAVE state, detected once per process).
    pub fn new(key: &[u8; 16]) -> Option<Self> {
        if !vaes_cpuid::get() {
            return None;
        }
        let mut round_keys = [[0u8; 16]; 11];
        // SAFETY: AES-NI is present (checked above).
        unsafe { expand_key(key, &mut round_keys) };
        Some(Self { round_keys })
    }

    /// Writes the 32 keystream blocks `AES(counter)`, `AES(counter + 1)`, … (each counter
    /// big-endian, wrapping modulo 2^128) into `out`.
    pub fn keystream(&self, counter: u128, out: &mut [u8; VAES_CTR_BYTES]) {
        for (i, block) in out.chunks_exact_mut(16).enumerate() {
            block.copy_from_slice(&counter.wrapping_add(i as u128).to_be_bytes());
        }
        // SAFETY: the constructor checked AES-NI, VAES and AVX-512F.
        unsafe { encrypt_in_place(&self.round_keys, out) };
    }
}

impl Drop for VaesCtr128 {
    fn drop(&mut self) {
        for key in self.round_keys.iter_mut() {
            for b in key.iter_mut() {
                // SAFETY: a valid, aligned pointer to a byte of `self`; volatile so that the
                // wipe is not removed as a dead store.
                unsafe { core::ptr::write_volatile(b, 0) };
            }
        }
        core::sync::atomic::compiler_fence(core::sync::atomic::Ordering::SeqCst);
    }
}

/// One step of the AES-128 key schedule: the next round key from `key` and
/// `aeskeygenassist(key, RCON)`.
#[target_feature(enable = "aes,sse2")]
fn next_round_key<const RCON: i32>(key: __m128i) -> __m128i {
    let assist = _mm_shuffle_epi32::<0xff>(_mm_aeskeygenassist_si128::<RCON>(key));
    let mut k = key;
    k = _mm_xor_si128(k, _mm_slli_si128::<4>(k));
    k = _mm_xor_si128(k, _mm_slli_si128::<4>(k));
    k = _mm_xor_si128(k, _mm_slli_si128::<4>(k));
    _mm_xor_si128(k, assist)
}

/// FIPS-197's key expansion for AES-128 into eleven round keys.
#[target_feature(enable = "aes,sse2")]
fn expand_key(key: &[u8; 16], out: &mut [[u8; 16]; 11]) {
    // SAFETY: 16-byte unaligned load and stores within the arrays.
    unsafe {
        let mut k = _mm_loadu_si128(key.as_ptr().cast());
        let mut keys = [k; 11];
        k = next_round_key::<0x01>(k);
        keys[1] = k;
        k = next_round_key::<0x02>(k);
        keys[2] = k;
        k = next_round_key::<0x04>(k);
        keys[3] = k;
        k = next_round_key::<0x08>(k);
        keys[4] = k;
        k = next_round_key::<0x10>(k);
        keys[5] = k;
        k = next_round_key::<0x20>(k);
        keys[6] = k;
        k = next_round_key::<0x40>(k);
        keys[7] = k;
        k = next_round_key::<0x80>(k);
        keys[8] = k;
        k = next_round_key::<0x1b>(k);
        keys[9] = k;
        keys[10] = next_round_key::<0x36>(k);
        for (dst, k) in out.iter_mut().zip(keys) {
            _mm_storeu_si128(dst.as_mut_ptr().cast(), k);
        }
        // The schedule also sat in these registers' stack copies: wipe them.
        for k in keys.iter_mut() {
            core::ptr::write_volatile(k, _mm_setzero_si128());
        }
    }
}

/// AES-128 encryption of the 32 blocks of `data` in place, eight 512-bit vectors in flight
/// (enough to cover `vaesenc`'s latency at two per cycle).
#[target_feature(enable = "aes,vaes,avx512f")]
fn encrypt_in_place(round_keys: &[[u8; 16]; 11], data: &mut [u8; VAES_CTR_BYTES]) {
    const VECTORS: usize = BLOCKS / 4;
    // SAFETY: 16-byte loads of the round keys; 64-byte unaligned loads and stores at
    // offsets 64·v < 512 of `data`. (Loops, not closures: a closure would not inherit this
    // function's instruction set.)
    unsafe {
        let mut rk = [_mm512_setzero_si512(); 11];
        for (r, key) in rk.iter_mut().zip(round_keys) {
            *r = _mm512_broadcast_i32x4(_mm_loadu_si128(key.as_ptr().cast()));
        }
        let ptr = data.as_mut_ptr();
        let mut v = [_mm512_setzero_si512(); VECTORS];
        for (i, x) in v.iter_mut().enumerate() {
            *x = _mm512_xor_si512(_mm512_loadu_si512(ptr.add(64 * i).cast()), rk[0]);
        }
        for key in &rk[1..10] {
            for x in v.iter_mut() {
                *x = _mm512_aesenc_epi128(*x, *key);
            }
        }
        for (i, x) in v.iter().enumerate() {
            _mm512_storeu_si512(ptr.add(64 * i).cast(), _mm512_aesenclast_epi128(*x, rk[10]));
        }
    }
}
