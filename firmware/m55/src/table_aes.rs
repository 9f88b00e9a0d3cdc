//! A table-based AES-128-CTR keystream for the **public** stream only (`prng_a`).
//!
//! # Why a table AES is acceptable here, and only here
//!
//! `prng_a` expands the public seed into the uniform mask `a` (or `â`). That seed is sent in
//! the clear with every seeded ciphertext and public key: an observer who learns the AES key
//! of this stream, or every byte of its output, learns nothing the ciphertext did not already
//! tell them. The classic weakness of table AES, key- and data-dependent table indices that
//! leak through cache timing, therefore leaks only public data. The secret stream (`prng_e`:
//! secret key, errors, ephemeral `u`) keeps the constant-time bitsliced RustCrypto `aes`;
//! the two streams are different type parameters of `Bfv<P, A, E>`, and `E` (like
//! `SecretPrng` and the secret samplers) requires `zeppelin::SecretKeystream`, a marker that
//! only constant-time keystreams implement: this keystream implements `Keystream` only, so
//! `Bfv<P, A, TableAesCtr128>` does not compile (doc test on `SecretKeystream`). The binary
//! audit (`security/audit`) reaches this file's functions only as the public stream of the
//! test image, where its secret-indexed loads are reviewed as public-data lookups.
//!
//! It computes exactly what `zeppelin::AesCtr128` computes (key = seed[0..16], initial
//! counter = seed[16..32] as a 128-bit big-endian integer), checked on target against it
//! and against the FIPS-197 example. The S-box and the round table are derived at compile
//! time from the field arithmetic (no pasted constants).

use zeppelin::prng::SEED_BYTES;
use zeppelin::{Keystream, PublicGenerator, PublicKeystream};

/// `a·b` in GF(2^8) modulo the AES polynomial x^8 + x^4 + x^3 + x + 1.
const fn gf_mul(mut a: u8, mut b: u8) -> u8 {
    let mut p = 0u8;
    while b != 0 {
        if b & 1 != 0 {
            p ^= a;
        }
        let carry = a & 0x80;
        a <<= 1;
        if carry != 0 {
            a ^= 0x1b;
        }
        b >>= 1;
    }
    p
}

/// The AES S-box: multiplicative inverse (x^254) followed by the affine map.
const fn sbox() -> [u8; 256] {
    let mut s = [0u8; 256];
    let mut x = 0usize;
    while x < 256 {
        // x^254 = x^-1 (and 0 -> 0).
        let mut inv = 1u8;
        let mut k = 0;
        while k < 254 {
            inv = gf_mul(inv, x as u8);
            k += 1;
        }
        if x == 0 {
            inv = 0;
        }
        let b = inv;
        s[x] = b ^ b.rotate_left(1) ^ b.rotate_left(2) ^ b.rotate_left(3) ^ b.rotate_left(4) ^ 0x63;
        x += 1;
    }
    s
}

static SBOX: [u8; 256] = sbox();

/// Round table: column (2·S[x], S[x], S[x], 3·S[x]) as a big-endian word; the other three
/// positions are byte rotations of it.
static TE: [u32; 256] = {
    let s = sbox();
    let mut t = [0u32; 256];
    let mut x = 0;
    while x < 256 {
        let v = s[x];
        t[x] =
            (gf_mul(v, 2) as u32) << 24 | (v as u32) << 16 | (v as u32) << 8 | gf_mul(v, 3) as u32;
        x += 1;
    }
    t
};

/// AES-128 with an expanded key, encryption only.
struct Aes128Table {
    round_keys: [u32; 44],
}

impl Aes128Table {
    fn new(key: &[u8; 16]) -> Self {
        let mut w = [0u32; 44];
        for (i, c) in key.chunks_exact(4).enumerate() {
            w[i] = u32::from_be_bytes([c[0], c[1], c[2], c[3]]);
        }
        let mut rcon = 1u8;
        for i in 4..44 {
            let mut t = w[i - 1];
            if i % 4 == 0 {
                t = t.rotate_left(8);
                t = sub_word(t) ^ ((rcon as u32) << 24);
                rcon = gf_mul(rcon, 2);
            }
            w[i] = w[i - 4] ^ t;
        }
        Self { round_keys: w }
    }

    /// Encrypts one block given as four big-endian words (columns), returning four words.
    #[inline(always)]
    fn encrypt_words(&self, input: [u32; 4]) -> [u32; 4] {
        let rk = &self.round_keys;
        let te = |x: u32| TE[(x & 0xff) as usize];
        let mut s0 = input[0] ^ rk[0];
        let mut s1 = input[1] ^ rk[1];
        let mut s2 = input[2] ^ rk[2];
        let mut s3 = input[3] ^ rk[3];
        for round in 1..10 {
            let k = &rk[4 * round..4 * round + 4];
            let t0 = te(s0 >> 24)
                ^ te(s1 >> 16).rotate_right(8)
                ^ te(s2 >> 8).rotate_right(16)
                ^ te(s3).rotate_right(24)
                ^ k[0];
            let t1 = te(s1 >> 24)
                ^ te(s2 >> 16).rotate_right(8)
                ^ te(s3 >> 8).rotate_right(16)
                ^ te(s0).rotate_right(24)
                ^ k[1];
            let t2 = te(s2 >> 24)
                ^ te(s3 >> 16).rotate_right(8)
                ^ te(s0 >> 8).rotate_right(16)
                ^ te(s1).rotate_right(24)
                ^ k[2];
            let t3 = te(s3 >> 24)
                ^ te(s0 >> 16).rotate_right(8)
                ^ te(s1 >> 8).rotate_right(16)
                ^ te(s2).rotate_right(24)
                ^ k[3];
            (s0, s1, s2, s3) = (t0, t1, t2, t3);
        }
        let sb = |x: u32| SBOX[(x & 0xff) as usize] as u32;
        let last = |a: u32, b: u32, c: u32, d: u32| {
            sb(a >> 24) << 24 | sb(b >> 16) << 16 | sb(c >> 8) << 8 | sb(d)
        };
        [
            last(s0, s1, s2, s3) ^ rk[40],
            last(s1, s2, s3, s0) ^ rk[41],
            last(s2, s3, s0, s1) ^ rk[42],
            last(s3, s0, s1, s2) ^ rk[43],
        ]
    }

    fn encrypt(&self, block: &[u8; 16]) -> [u8; 16] {
        let mut w = [0u32; 4];
        for (j, c) in block.chunks_exact(4).enumerate() {
            w[j] = u32::from_be_bytes([c[0], c[1], c[2], c[3]]);
        }
        let o = self.encrypt_words(w);
        let mut out = [0u8; 16];
        for (j, v) in o.iter().enumerate() {
            out[4 * j..4 * j + 4].copy_from_slice(&v.to_be_bytes());
        }
        out
    }

    /// The keystream block of counter `ctr` (a 128-bit big-endian integer).
    #[inline(always)]
    fn keystream_block(&self, ctr: u128) -> [u8; 16] {
        let w = [
            (ctr >> 96) as u32,
            (ctr >> 64) as u32,
            (ctr >> 32) as u32,
            ctr as u32,
        ];
        let o = self.encrypt_words(w);
        let mut out = [0u8; 16];
        out[0..4].copy_from_slice(&o[0].to_be_bytes());
        out[4..8].copy_from_slice(&o[1].to_be_bytes());
        out[8..12].copy_from_slice(&o[2].to_be_bytes());
        out[12..16].copy_from_slice(&o[3].to_be_bytes());
        out
    }
}

fn sub_word(w: u32) -> u32 {
    let b = w.to_be_bytes();
    u32::from_be_bytes([
        SBOX[b[0] as usize],
        SBOX[b[1] as usize],
        SBOX[b[2] as usize],
        SBOX[b[3] as usize],
    ])
}

/// Table-based AES-128-CTR: the same stream as `zeppelin::AesCtr128`, for `prng_a` only.
pub struct TableAesCtr128 {
    cipher: Aes128Table,
    counter: u128,
    block: [u8; 16],
    /// Unused bytes left in `block` (from its end).
    left: usize,
}

// The same bytes as the software AES-128-CTR (host tests and the on-target KATs check it),
// so receivers expand its seeds as AES-CTR.
impl PublicKeystream for TableAesCtr128 {
    const GENERATOR: PublicGenerator = PublicGenerator::AesCtr128;
}

impl Keystream for TableAesCtr128 {
    type Buffer = zeppelin::ByteBuffer;
    fn from_seed(seed: &[u8; SEED_BYTES]) -> Self {
        let mut key = [0u8; 16];
        key.copy_from_slice(&seed[..16]);
        let mut iv = [0u8; 16];
        iv.copy_from_slice(&seed[16..]);
        Self {
            cipher: Aes128Table::new(&key),
            counter: u128::from_be_bytes(iv),
            block: [0; 16],
            left: 0,
        }
    }

    fn fill(&mut self, out: &mut [u8]) {
        let mut out = out;
        // Drain a partial block first, then whole blocks straight into `out`.
        while !out.is_empty() {
            if self.left == 0 && out.len() >= 16 {
                let (head, tail) = out.split_at_mut(16);
                head.copy_from_slice(&self.cipher.keystream_block(self.counter));
                self.counter = self.counter.wrapping_add(1);
                out = tail;
                continue;
            }
            if self.left == 0 {
                self.block = self.cipher.keystream_block(self.counter);
                self.counter = self.counter.wrapping_add(1);
                self.left = 16;
            }
            let take = self.left.min(out.len());
            let start = 16 - self.left;
            let (head, tail) = out.split_at_mut(take);
            head.copy_from_slice(&self.block[start..start + take]);
            self.left -= take;
            out = tail;
        }
    }
}

/// FIPS-197 Appendix C.1 and stream equality with the constant-time `AesCtr128`.
pub fn self_test(h: &mut crate::harness::Harness) {
    let mut key = [0u8; 16];
    let mut pt = [0u8; 16];
    for i in 0..16 {
        key[i] = i as u8;
        pt[i] = (i as u8) * 0x11;
    }
    let ct = Aes128Table::new(&key).encrypt(&pt);
    let expect = [
        0x69, 0xc4, 0xe0, 0xd8, 0x6a, 0x7b, 0x04, 0x30, 0xd8, 0xcd, 0xb7, 0x80, 0x70, 0xb4, 0xc5,
        0x5a,
    ];
    h.check(
        "table AES-128 = FIPS-197 C.1",
        ct == expect,
        format_args!("{ct:02x?}"),
    );

    let mut rng = crate::harness::TestRng::new(0xae5);
    let mut ok = true;
    for trial in 0..64 {
        let mut seed = [0u8; SEED_BYTES];
        for b in seed.iter_mut() {
            *b = rng.next_u32() as u8;
        }
        if trial == 0 {
            // Counter wrap-around across all 128 bits.
            seed[16..].fill(0xff);
        }
        let mut a = zeppelin::AesCtr128::from_seed(&seed);
        let mut b = TableAesCtr128::from_seed(&seed);
        let (mut x, mut y) = ([0u8; 300], [0u8; 300]);
        a.fill(&mut x);
        // Split differently to exercise the partial-block path.
        let cut1 = (rng.next_u32() % 40) as usize;
        let cut2 = cut1 + 1 + (rng.next_u32() % 200) as usize;
        b.fill(&mut y[..cut1]);
        b.fill(&mut y[cut1..cut2]);
        b.fill(&mut y[cut2..]);
        ok &= x == y;
    }
    h.check(
        "table AES-CTR stream = RustCrypto AesCtr128 (64 seeds, split fills)",
        ok,
        format_args!("streams differ"),
    );
}

/// Instructions per 4,096 keystream bytes (median), software AES-CTR vs table AES-CTR, filled
/// 32 bytes at a time as the bfv crate's buffer does.
pub fn keystream_cost() {
    use crate::meter::median_instructions;
    static mut OUT: [u8; 4096] = [0; 4096];
    // SAFETY: single-threaded; the only reference.
    let out = unsafe { &mut *core::ptr::addr_of_mut!(OUT) };
    let seed = [0x3c; SEED_BYTES];
    let mut sw = zeppelin::AesCtr128::from_seed(&seed);
    let software = median_instructions(|| {
        for chunk in out.chunks_exact_mut(32) {
            sw.fill(chunk);
        }
    });
    let mut tb = TableAesCtr128::from_seed(&seed);
    let table = median_instructions(|| {
        for chunk in out.chunks_exact_mut(32) {
            tb.fill(chunk);
        }
    });
    cortex_m_semihosting::hprintln!(
        "TABLE | keystream, 4096 bytes in 32-byte fills | software AES-CTR {} ({:.1}/byte) | table AES-CTR {} ({:.1}/byte) |",
        software,
        software as f32 / 4096.0,
        table,
        table as f32 / 4096.0
    );
}
