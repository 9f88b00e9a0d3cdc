//! The ChaCha20 secret keystream on target: the Helium four-block kernel
//! (`ClientKernels::chacha20_blocks4` of `Mve`, `zeppelin-ring/src/mve/chacha_kernel.rs`)
//! against RFC 8439 §2.3.2 and §2.4.2 and against the portable block function over random keys,
//! counters and nonces; `zeppelin::ChaCha20<Mve>` = `ChaCha20<Portable>` as byte streams;
//! then its cost (instructions retired under QEMU, median of 11 runs).

use crate::harness::{first_mismatch, Harness, TestRng};
use crate::meter::{median_instructions, stack_bytes};
use cortex_m_semihosting::hprintln;
use zeppelin::{ChaCha20, Keystream, SecretPrng, SecretSeed};
use zeppelin_ring::chacha::{initial_state, Blocks4};
use zeppelin_ring::mve::Mve;
use zeppelin_ring::{ClientKernels, Portable};

/// The RFC 8439 test key 00 01 .. 1f as little-endian words.
fn rfc_key() -> [u32; 8] {
    let mut key = [0u32; 8];
    for (i, k) in key.iter_mut().enumerate() {
        let b = 4 * i as u8;
        *k = u32::from_le_bytes([b, b + 1, b + 2, b + 3]);
    }
    key
}

/// RFC 8439 §2.3.2: key 00 01 .. 1f, nonce 00 00 00 09 00 00 00 4a 00 00 00 00, counter 1.
fn rfc_state() -> [u32; 16] {
    initial_state(&rfc_key(), 1, &[0x0900_0000, 0x4a00_0000, 0])
}

/// RFC 8439 §2.4.2's plaintext and ciphertext.
const PLAIN_2_4_2: &[u8; 114] = b"Ladies and Gentlemen of the class of '99: If I could offer you only one tip for the future, sunscreen would be it.";
const CIPHER_2_4_2: [u8; 114] = [
    0x6e, 0x2e, 0x35, 0x9a, 0x25, 0x68, 0xf9, 0x80, 0x41, 0xba, 0x07, 0x28, 0xdd, 0x0d, 0x69, 0x81,
    0xe9, 0x7e, 0x7a, 0xec, 0x1d, 0x43, 0x60, 0xc2, 0x0a, 0x27, 0xaf, 0xcc, 0xfd, 0x9f, 0xae, 0x0b,
    0xf9, 0x1b, 0x65, 0xc5, 0x52, 0x47, 0x33, 0xab, 0x8f, 0x59, 0x3d, 0xab, 0xcd, 0x62, 0xb3, 0x57,
    0x16, 0x39, 0xd6, 0x24, 0xe6, 0x51, 0x52, 0xab, 0x8f, 0x53, 0x0c, 0x35, 0x9f, 0x08, 0x61, 0xd8,
    0x07, 0xca, 0x0d, 0xbf, 0x50, 0x0d, 0x6a, 0x61, 0x56, 0xa3, 0x8e, 0x08, 0x8a, 0x22, 0xb6, 0x5e,
    0x52, 0xbc, 0x51, 0x4d, 0x16, 0xcc, 0xf8, 0x06, 0x81, 0x8c, 0xe9, 0x1a, 0xb7, 0x79, 0x37, 0x36,
    0x5a, 0xf9, 0x0b, 0xbf, 0x74, 0xa3, 0x5b, 0xe6, 0xb4, 0x0b, 0x8e, 0xed, 0xf2, 0x78, 0x5e, 0x42,
    0x87, 0x4d,
];

const RFC_BLOCK: [u32; 16] = [
    0xe4e7f110, 0x15593bd1, 0x1fdd0f50, 0xc47120a3, 0xc7f4d1c7, 0x0368c033, 0x9aaa2204, 0x4e6cd4c3,
    0x466482d2, 0x09aa9f07, 0x05d7c214, 0xa2028bd9, 0xd19c12b5, 0xb94e16de, 0xe883d0cb, 0x4e3c50a2,
];

/// Random trials of Helium = portable.
const TRIALS: usize = 2000;

pub fn run(h: &mut Harness) {
    for (name, helium) in [
        (
            "chacha20 portable: RFC 8439 2.3.2 block (and the next three counters)",
            false,
        ),
        (
            "chacha20 mve: RFC 8439 2.3.2 block (and the next three counters)",
            true,
        ),
    ] {
        let mut out = Blocks4::ZERO;
        let s = rfc_state();
        if helium {
            Mve.chacha20_blocks4(&s, &mut out);
        } else {
            Portable.chacha20_blocks4(&s, &mut out);
        }
        let mut ok = (0..16).all(|k| out.word(0, k) == RFC_BLOCK[k]);
        // Blocks 1..3 are the blocks of counters 2, 3, 4 (checked one at a time).
        for i in 1..4 {
            let mut t = s;
            t[12] += i as u32;
            let mut one = [0u32; 16];
            zeppelin_ring::chacha::block(&t, &mut one);
            ok &= (0..16).all(|k| out.word(i, k) == one[k]);
        }
        h.check(name, ok, format_args!("{:02x?}", &out.0[..64]));
    }

    // RFC 8439 §2.4.2: the keystream that encrypts "Ladies and Gentlemen of the class of
    // '99: ..." (key 00..1f, nonce 00 00 00 00 00 00 00 4a 00 00 00 00, counter 1), 114 bytes
    // of the first two blocks of one Helium call.
    let mut out = Blocks4::ZERO;
    Mve.chacha20_blocks4(
        &initial_state(&rfc_key(), 1, &[0, 0x4a00_0000, 0]),
        &mut out,
    );
    let ok = PLAIN_2_4_2
        .iter()
        .zip(&CIPHER_2_4_2)
        .zip(&out.0)
        .all(|((&p, &c), &k)| p ^ k == c);
    h.check(
        "chacha20 mve: RFC 8439 2.4.2 keystream (114 bytes across two blocks)",
        ok,
        format_args!("{:02x?}", &out.0[..114]),
    );

    let mut rng = TestRng::new(0xc4ac4a20);
    let mut bad = None;
    for trial in 0..TRIALS {
        let mut s = [0u32; 16];
        for w in s.iter_mut() {
            *w = rng.next_u32();
        }
        match trial {
            // Counter wrap inside the call, all-zero and all-one states.
            0 => s[12] = u32::MAX - 2,
            1 => s = [0; 16],
            2 => s = [u32::MAX; 16],
            3 => s = initial_state(&[0; 8], 0, &[0; 3]),
            _ => {}
        }
        let (mut a, mut b) = (Blocks4::ZERO, Blocks4([0xa5; 256]));
        Portable.chacha20_blocks4(&s, &mut a);
        Mve.chacha20_blocks4(&s, &mut b);
        if bad.is_none() {
            bad = first_mismatch(&a.0, &b.0).map(|m| (trial, m));
        }
    }
    h.check(
        "chacha20 blocks4: mve = portable word for word (2000 random states: keys, counters incl. wrap, nonces)",
        bad.is_none(),
        format_args!("first mismatch (trial, (word, portable, mve)): {bad:?}"),
    );

    // The keystream type over both kernels: 64 random seeds, odd fill sizes across refills.
    let mut ok = true;
    for _ in 0..64 {
        let mut seed = [0u8; 32];
        for b in seed.iter_mut() {
            *b = rng.next_u32() as u8;
        }
        let mut x = ChaCha20::<Portable>::from_seed(&seed);
        let mut y = ChaCha20::<Mve>::from_seed(&seed);
        let (mut p, mut q) = ([0u8; 1100], [0u8; 1100]);
        x.fill(&mut p);
        let cut1 = 1 + (rng.next_u32() % 300) as usize;
        let cut2 = cut1 + (rng.next_u32() % 600) as usize;
        y.fill(&mut q[..cut1]);
        y.fill(&mut q[cut1..cut2]);
        y.fill(&mut q[cut2..]);
        ok &= p == q;
    }
    h.check(
        "ChaCha20<Mve> stream = ChaCha20<Portable> (64 seeds, split fills)",
        ok,
        format_args!("streams differ"),
    );
}

/// Instructions of one four-block call (256 bytes) on both kernels (the Helium one must meet
/// the goal of 8 per byte), and of 4,096 keystream bytes through `ChaCha20<Mve>` in 32-byte
/// fills (as the bfv buffer asks for them).
pub fn cost(h: &mut Harness) {
    let s = rfc_state();
    let mut out = Blocks4::ZERO;
    let portable = median_instructions(|| Portable.chacha20_blocks4(&s, &mut out));
    let mve = median_instructions(|| Mve.chacha20_blocks4(&s, &mut out));
    let stack = stack_bytes(|| Mve.chacha20_blocks4(&s, &mut out));
    // The stream as the samplers read it: 1,024 words through the secret PRNG, which
    // refills its buffer with one kernel call per 256 bytes.
    static mut WORDS: [u32; 1024] = [0; 1024];
    // SAFETY: single-threaded; the only reference.
    let words = unsafe { &mut *core::ptr::addr_of_mut!(WORDS) };
    let mut prng = SecretPrng::<ChaCha20<Mve>>::new(&SecretSeed::from_bytes([0x3c; 32]));
    let stream = median_instructions(|| prng.fill_words(words));
    hprintln!(
        "TABLE | chacha20 blocks4 (256 bytes) | portable {} ({:.2}/byte) | mve {} ({:.2}/byte) | {:.2}x | mve stack {} bytes |",
        portable,
        portable as f32 / 256.0,
        mve,
        mve as f32 / 256.0,
        portable as f32 / mve as f32,
        stack
    );
    h.check(
        "chacha20 mve: at most 8 instructions per byte (2,048 per 256-byte call, issue 14 goal)",
        mve <= 2048,
        format_args!("{mve} instructions per call"),
    );
    hprintln!(
        "TABLE | keystream, 4096 bytes through SecretPrng::fill_words | ChaCha20<Mve> {} ({:.2}/byte) |",
        stream,
        stream as f32 / 4096.0
    );
}
