//! SEAL's `parms_id`, computed at compile time.
//!
//! SEAL names one level of a parameter set by the unkeyed BLAKE2b-256 of the little-endian
//! `u64` words `[scheme, n, q_0, …, q_{L-1}, t]` (scheme 1 = BFV). The presets compute the id
//! of every level in a `const` context from their own primes, so no id is written by hand;
//! `zeppelin-seal`'s tests check them against its run-time BLAKE2b and against SEAL.
//!
//! A `const fn` BLAKE2b is written here because no BLAKE2 crate offers one (the `blake2`
//! crates hash at run time only), and the device needs the ids without a hash at run time.

/// SEAL's `scheme_type` byte for BFV.
pub const SCHEME_BFV: u64 = 1;

/// Most `u64` words one id is computed over (`scheme, n, t` and up to 29 primes).
const MAX_WORDS: usize = 32;

const IV: [u64; 8] = [
    0x6a09_e667_f3bc_c908,
    0xbb67_ae85_84ca_a73b,
    0x3c6e_f372_fe94_f82b,
    0xa54f_f53a_5f1d_36f1,
    0x510e_527f_ade6_82d1,
    0x9b05_688c_2b3e_6c1f,
    0x1f83_d9ab_fb41_bd6b,
    0x5be0_cd19_137e_2179,
];

const SIGMA: [[usize; 16]; 12] = [
    [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15],
    [14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3],
    [11, 8, 12, 0, 5, 2, 15, 13, 10, 14, 3, 6, 7, 1, 9, 4],
    [7, 9, 3, 1, 13, 12, 11, 14, 2, 6, 5, 10, 4, 0, 15, 8],
    [9, 0, 5, 7, 2, 4, 10, 15, 14, 1, 11, 12, 6, 8, 3, 13],
    [2, 12, 6, 10, 0, 11, 8, 3, 4, 13, 7, 5, 15, 14, 1, 9],
    [12, 5, 1, 15, 14, 13, 4, 10, 0, 7, 6, 3, 9, 2, 8, 11],
    [13, 11, 7, 14, 12, 1, 3, 9, 5, 0, 15, 4, 8, 6, 2, 10],
    [6, 15, 14, 9, 11, 3, 0, 8, 12, 2, 13, 7, 1, 4, 10, 5],
    [10, 2, 8, 4, 7, 6, 1, 5, 15, 11, 9, 14, 3, 12, 13, 0],
    [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15],
    [14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3],
];

#[expect(
    clippy::many_single_char_names,
    reason = "BLAKE2b G function: names follow the specification"
)]
const fn mix(v: &mut [u64; 16], a: usize, b: usize, c: usize, d: usize, x: u64, y: u64) {
    v[a] = v[a].wrapping_add(v[b]).wrapping_add(x);
    v[d] = (v[d] ^ v[a]).rotate_right(32);
    v[c] = v[c].wrapping_add(v[d]);
    v[b] = (v[b] ^ v[c]).rotate_right(24);
    v[a] = v[a].wrapping_add(v[b]).wrapping_add(y);
    v[d] = (v[d] ^ v[a]).rotate_right(16);
    v[c] = v[c].wrapping_add(v[d]);
    v[b] = (v[b] ^ v[c]).rotate_right(63);
}

/// One BLAKE2b compression of the 16-word block `m`; `bytes` is the message length so far
/// (at most `2^64`, which covers every input here).
const fn compress(h: &mut [u64; 8], m: &[u64; 16], bytes: u64, last: bool) {
    let mut v = [0u64; 16];
    let mut i = 0;
    while i < 8 {
        v[i] = h[i];
        v[i + 8] = IV[i];
        i += 1;
    }
    v[12] ^= bytes;
    if last {
        v[14] = !v[14];
    }
    let mut r = 0;
    while r < 12 {
        let s = &SIGMA[r];
        mix(&mut v, 0, 4, 8, 12, m[s[0]], m[s[1]]);
        mix(&mut v, 1, 5, 9, 13, m[s[2]], m[s[3]]);
        mix(&mut v, 2, 6, 10, 14, m[s[4]], m[s[5]]);
        mix(&mut v, 3, 7, 11, 15, m[s[6]], m[s[7]]);
        mix(&mut v, 0, 5, 10, 15, m[s[8]], m[s[9]]);
        mix(&mut v, 1, 6, 11, 12, m[s[10]], m[s[11]]);
        mix(&mut v, 2, 7, 8, 13, m[s[12]], m[s[13]]);
        mix(&mut v, 3, 4, 9, 14, m[s[14]], m[s[15]]);
        r += 1;
    }
    let mut i = 0;
    while i < 8 {
        h[i] ^= v[i] ^ v[i + 8];
        i += 1;
    }
}

/// Unkeyed BLAKE2b-256 of the little-endian bytes of `words` (`words.len() <= 32`; a
/// `u64` word is 8 message bytes, so the blocks are whole words).
#[expect(
    clippy::panic,
    reason = "const evaluation only: a panic here is a build error"
)]
pub const fn blake2b_256_words(words: &[u64]) -> [u8; 32] {
    if words.len() > MAX_WORDS {
        panic!("too many words for a parms_id");
    }
    let mut h = IV;
    h[0] ^= 0x0101_0000 ^ 32; // digest length 32, no key, fanout 1, depth 1
    let total = words.len();
    let mut offset = 0;
    // Every block but the last is full; an empty message is one empty last block.
    loop {
        let remaining = total - offset;
        let last = remaining <= 16;
        let take = if last { remaining } else { 16 };
        let mut block = [0u64; 16];
        let mut i = 0;
        while i < take {
            block[i] = words[offset + i];
            i += 1;
        }
        offset += take;
        compress(&mut h, &block, (offset * 8) as u64, last);
        if last {
            break;
        }
    }
    let mut out = [0u8; 32];
    let mut i = 0;
    while i < 4 {
        let b = h[i].to_le_bytes();
        let mut j = 0;
        while j < 8 {
            out[8 * i + j] = b[j];
            j += 1;
        }
        i += 1;
    }
    out
}

/// SEAL's `parms_id` of the BFV level over `primes` (in order) with degree `n` and plain
/// modulus `t`.
#[expect(clippy::panic, reason = "const evaluation only")]
pub const fn parms_id(n: usize, primes: &[u32], t: u32) -> [u8; 32] {
    if primes.len() + 3 > MAX_WORDS {
        panic!("too many primes for a parms_id");
    }
    let mut words = [0u64; MAX_WORDS];
    words[0] = SCHEME_BFV;
    words[1] = n as u64;
    let mut i = 0;
    while i < primes.len() {
        words[2 + i] = primes[i] as u64;
        i += 1;
    }
    words[2 + primes.len()] = t as u64;
    let (used, _) = words.split_at(primes.len() + 3);
    blake2b_256_words(used)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reference(words: &[u64]) -> [u8; 32] {
        let mut state = blake2b_simd::Params::new().hash_length(32).to_state();
        for w in words {
            state.update(&w.to_le_bytes());
        }
        let mut out = [0u8; 32];
        out.copy_from_slice(state.finalize().as_bytes());
        out
    }

    #[test]
    fn blake2b_256_matches_an_independent_implementation() {
        // Every length from the empty message to three blocks, across the block boundaries.
        let words: [u64; 32] =
            core::array::from_fn(|i| (i as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15));
        for len in 0..=32 {
            assert_eq!(
                blake2b_256_words(&words[..len]),
                reference(&words[..len]),
                "{len} words"
            );
        }
    }

    #[test]
    fn parms_id_of_seal_levels() {
        // The ids SEAL 4.1 prints for n = 4096, t = 65537 and the first data prime(s).
        assert_eq!(
            parms_id(4096, &[134_176_769], 65537)[..8],
            [0xb5, 0x25, 0xc2, 0x64, 0x72, 0x3a, 0x32, 0x49]
        );
        assert_eq!(
            parms_id(
                4096,
                &[134_176_769, 134_111_233, 134_012_929, 133_963_777],
                65537
            )[..8],
            [0x15, 0xc5, 0xf2, 0x85, 0xfd, 0x5e, 0xff, 0x9c]
        );
    }
}
