//! Samplers: uniform mod `q` (public stream only), ternary and discrete Gaussian (secret
//! stream only, constant time, fixed keystream consumption).

use crate::prng::{PublicKeystream, PublicPrng, SecretKeystream, SecretPrng};
use zeppelin_ring::{ct, ClientKernels, Modulus};
use zeroize::Zeroize;

/// Standard deviation of the error distribution.
pub const SIGMA: f64 = 3.2;
/// Largest error magnitude the CDT can produce (`21 ≈ 6.56σ`).
pub const GAUSSIAN_BOUND: i32 = 21;
/// Fixed-point precision of the CDT: probabilities are multiples of `2^-31`.
pub const CDT_BITS: u32 = 31;

/// Cumulative distribution table of the discrete Gaussian `D_σ`, `σ = 3.2`, truncated to
/// `[-21, 21]`: `CDT[j] = round(2^31 · P(X ≤ j − 21))` for `j = 0..42`, where
/// `P(X = x) ∝ exp(−x²/(2σ²))` normalised over `[-21, 21]`. A sample is
/// `−21 + #{j : r ≥ CDT[j]}` for `r` uniform in `[0, 2^31)`, so `P(X = x)` equals the ideal
/// probability up to `2^-31`. The test `cdt_matches_ideal_gaussian` recomputes the table.
pub const CDT: [u32; 42] = [
    0, 1, 7, 43, 242, 1240, 5773, 24452, 94261, 330884, 1058312, 3086515, 8215381, 19978424,
    44446875, 90608564, 169593691, 292167417, 464686796, 684911894, 939879008, 1207604640,
    1462571754, 1682796852, 1855316231, 1977889957, 2056875084, 2103036773, 2127505224, 2139268267,
    2144397133, 2146425336, 2147152764, 2147389387, 2147459196, 2147477875, 2147482408, 2147483406,
    2147483605, 2147483641, 2147483647, 2147483648,
];

// The table is symmetric (`CDT[41 − k] = 2^31 − CDT[k]`, the lower half below 2^30), which
// `ClientKernels::cdt_scan_symmetric` requires.
const _: () = {
    let mut k = 0;
    while k < CDT.len() / 2 {
        assert!(CDT[CDT.len() - 1 - k] == (1 << 31) - CDT[k] && CDT[k] < 1 << 30);
        k += 1;
    }
};

/// Threshold below which a ternary word gives −1: `floor(2^32 / 3)`.
const TERNARY_LOW: u32 = 0x5555_5555;
/// Threshold below which a ternary word gives 0 (and at or above which it gives +1).
const TERNARY_HIGH: u32 = 0xAAAA_AAAA;

/// Fills `out` with residues uniform in `[0, q)` by rejection: each candidate is a keystream
/// word masked to the bit length of `q`, rejected when `>= q`, read in order up to the word
/// that fills `out` (the backend's [`ClientKernels::uniform_accept`] on the buffered words:
/// vector compares and compression on x86-64). The number of words drawn depends only on
/// the (public) keystream, so only the public stream is accepted.
pub fn sample_uniform<S: PublicKeystream, B: ClientKernels>(
    prng: &mut PublicPrng<S>,
    q: &Modulus,
    out: &mut [u32],
    backend: &B,
) {
    let q = q.value();
    let mask = u32::MAX >> q.leading_zeros();
    let mut filled = 0;
    while filled < out.len() {
        prng.read_words(|words| {
            let (read, written) = backend.uniform_accept(words, mask, q, &mut out[filled..]);
            filled += written;
            read
        });
    }
}

/// One ternary value from one keystream word, by two branch-free threshold comparisons:
/// `−1` for `w < 0x55555555`, `0` below `0xAAAAAAAA`, else `+1`.
#[inline(always)]
pub fn ternary_from_word(w: u32) -> i8 {
    let below_low = ct::mask_lt(w, TERNARY_LOW) as i32; // −1 or 0
    let below_high = ct::mask_lt(w, TERNARY_HIGH) as i32;
    (1 + below_low + below_high) as i8
}

/// Fills `out` with ternary coefficients in `{−1, 0, 1}`, consuming exactly `4·n` keystream
/// bytes, with no branch on their values.
// Kept out of line: one copy per keystream type, so the firmware's binary audit
// (security/audit) checks the code the client runs, under this symbol.
#[inline(never)]
pub fn sample_ternary<S: SecretKeystream>(prng: &mut SecretPrng<S>, out: &mut [i8]) {
    let mut words = [0u32; GAUSSIAN_BLOCK];
    for block in out.chunks_mut(GAUSSIAN_BLOCK) {
        let words = &mut words[..block.len()];
        prng.fill_words(words);
        for (x, &w) in block.iter_mut().zip(words.iter()) {
            *x = ternary_from_word(w);
        }
    }
    words.zeroize();
}

/// One Gaussian sample from one keystream word: its low 31 bits scanned against every CDT
/// entry (constant time: all 42 comparisons, masks only, public table indices).
#[inline(always)]
pub fn gaussian_from_word(w: u32) -> i8 {
    let r = w & ((1 << CDT_BITS) - 1);
    let mut count = 0i32;
    for &c in CDT.iter() {
        // r >= c adds one: 1 + (−1 if r < c else 0).
        count += 1 + ct::mask_lt(r, c) as i32;
    }
    (count - GAUSSIAN_BOUND) as i8
}

/// Words per call of [`gaussian_from_words`] (a small stack buffer; a multiple of 8).
pub const GAUSSIAN_BLOCK: usize = 16;

/// [`gaussian_from_word`] on `GAUSSIAN_BLOCK` words, by the backend's constant-time CDT scan
/// of the symmetric table (Helium assembly on the M55, half-table vectors on x86-64; equal word for word to the scalar definition, tested on
/// target and in `zeppelin-ring`).
#[inline(always)]
pub fn gaussian_from_words<B: ClientKernels>(
    backend: &B,
    words: &[u32; GAUSSIAN_BLOCK],
    out: &mut [i8; GAUSSIAN_BLOCK],
) {
    backend.cdt_scan_symmetric(words, &CDT, CDT.len() as i32 - GAUSSIAN_BOUND, out);
}

/// Fills `out` with discrete Gaussian errors (`σ = 3.2`, `|e| <= 21`), consuming exactly
/// `4·n` keystream bytes (one word per coefficient, in order), `GAUSSIAN_BLOCK` words at a
/// time through [`gaussian_from_words`] on `backend`.
// Kept out of line: one copy per keystream type, so the firmware's binary audit
// (security/audit) checks the code the client runs, under this symbol.
#[inline(never)]
pub fn sample_gaussian<S: SecretKeystream, B: ClientKernels>(
    prng: &mut SecretPrng<S>,
    out: &mut [i8],
    backend: &B,
) {
    let mut words = [0u32; GAUSSIAN_BLOCK];
    let (blocks, rest) = out.as_chunks_mut::<GAUSSIAN_BLOCK>();
    for block in blocks {
        prng.fill_words(&mut words);
        gaussian_from_words(backend, &words, block);
    }
    // Every preset's n is a multiple of the block; a shorter tail keeps the same order.
    for x in rest {
        *x = gaussian_from_word(prng.next_u32());
    }
    words.zeroize();
}

/// `out[i] = small[i] mod q` for small signed coefficients, branch-free.
// Kept out of line: one copy per keystream type, so the firmware's binary audit
// (security/audit) checks the code the client runs, under this symbol.
#[inline(never)]
pub fn lift_small(q: &Modulus, small: &[i8], out: &mut [u32]) {
    let qv = q.value();
    for (o, &s) in out.iter_mut().zip(small) {
        let v = s as i32 as u32;
        *o = v.wrapping_add(qv & ct::mask_from_msb(v));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ternary_thresholds() {
        assert_eq!(ternary_from_word(0), -1);
        assert_eq!(ternary_from_word(TERNARY_LOW - 1), -1);
        assert_eq!(ternary_from_word(TERNARY_LOW), 0);
        assert_eq!(ternary_from_word(TERNARY_HIGH - 1), 0);
        assert_eq!(ternary_from_word(TERNARY_HIGH), 1);
        assert_eq!(ternary_from_word(u32::MAX), 1);
    }

    #[test]
    fn gaussian_scan_matches_table_search() {
        // Each CDT boundary maps to the value whose interval it opens.
        for (j, &c) in CDT.iter().enumerate() {
            if c < (1 << 31) {
                assert_eq!(gaussian_from_word(c) as i32, j as i32 + 1 - 21);
            }
            if c > 0 {
                let expected = CDT.iter().filter(|&&x| x < c).count() as i32 - 21;
                assert_eq!(gaussian_from_word(c - 1) as i32, expected);
            }
        }
        // The top bit is ignored.
        assert_eq!(gaussian_from_word(0x8000_0000), gaussian_from_word(0));
    }

    #[test]
    fn lift_small_is_mod_q() {
        let q = Modulus::new(134_176_769).unwrap();
        let small = [-21i8, -1, 0, 1, 21];
        let mut out = [0u32; 5];
        lift_small(&q, &small, &mut out);
        assert_eq!(out, [134_176_769 - 21, 134_176_768, 0, 1, 21]);
    }
}
