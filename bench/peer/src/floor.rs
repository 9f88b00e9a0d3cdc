//! The arithmetic floor of an AVX-512 NTT of size n: the sixteen-lane Shoup butterflies of one
//! transform (log2 n stages × n/2 butterflies / 16 lanes: 1,536 at n = 4096, 3,328 at 8192,
//! 7,168 at 16384), in registers, with no loads, stores or stage permutations. Every Shoup NTT on 32-bit lanes, ours and tfhe-ntt's alike,
//! spends at least this much; timed beside both transforms, it bounds how far any of them can
//! get ahead of the other on this core. (`bench/probes/butterfly_floor.c` is the same probe in
//! C, with the shift and IFMA variants.)

use std::arch::x86_64::*;

/// 16-lane butterflies of one transform of size `n` (a power of two, at least 32).
pub const fn butterflies(n: usize) -> usize {
    n.trailing_zeros() as usize * (n / 2) / 16
}
/// Independent butterfly chains in flight (enough to cover the multiplier's latency).
const CHAINS: usize = 8;

/// Whether this CPU runs the probe (AVX-512 F).
pub fn available() -> bool {
    is_x86_feature_detected!("avx512f")
}

/// One size-`n` transform's worth of butterfly arithmetic on values derived from `seed`;
/// returns a checksum of the final lanes so that none of it can be dropped.
pub fn run(seed: u32, n: usize) -> u32 {
    assert!(available(), "the arithmetic floor needs AVX-512 F");
    // SAFETY: AVX-512 F is present (checked above).
    unsafe { butterfly_chains(seed, butterflies(n) / CHAINS) }
}

#[target_feature(enable = "avx512f")]
fn butterfly_chains(seed: u32, rounds: usize) -> u32 {
    const Q: u32 = 134_176_769;
    // A twiddle and its Shoup companion floor(w·2^32 / q).
    const W: u32 = 12_345_678;
    const W_SHOUP: u32 = ((W as u64) << 32).div_euclid(Q as u64) as u32;
    const HIGH_HALVES: [i32; 16] = [1, 17, 3, 19, 5, 21, 7, 23, 9, 25, 11, 27, 13, 29, 15, 31];
    let q = _mm512_set1_epi32(Q as i32);
    let two_q = _mm512_set1_epi32((2 * Q) as i32);
    let w = _mm512_set1_epi32(W as i32);
    let w_shoup = _mm512_set1_epi32(W_SHOUP as i32);
    // SAFETY: HIGH_HALVES is 16 i32s, one unaligned 512-bit load.
    let high = unsafe { _mm512_loadu_si512(HIGH_HALVES.as_ptr().cast()) };
    let mut x = [_mm512_setzero_si512(); CHAINS];
    let mut y = [_mm512_setzero_si512(); CHAINS];
    for i in 0..CHAINS {
        x[i] = _mm512_set1_epi32((seed.wrapping_add(i as u32 * 1000) % Q) as i32);
        y[i] = _mm512_set1_epi32((seed.wrapping_mul(7).wrapping_add(i as u32) % Q) as i32);
    }
    for _ in 0..rounds {
        for i in 0..CHAINS {
            // t = y·w − hi(y·w')·q in [0, 2q): the odd lanes' products from a lane shuffle.
            let odd = _mm512_shuffle_epi32::<_MM_PERM_DDBB>(y[i]);
            let quotient = _mm512_permutex2var_epi32(
                _mm512_mul_epu32(y[i], w_shoup),
                high,
                _mm512_mul_epu32(odd, w_shoup),
            );
            let t = _mm512_sub_epi32(_mm512_mullo_epi32(y[i], w), _mm512_mullo_epi32(quotient, q));
            let sum = _mm512_add_epi32(x[i], t);
            y[i] = _mm512_sub_epi32(_mm512_add_epi32(x[i], two_q), t);
            x[i] = sum;
        }
    }
    let mut check = _mm512_setzero_si512();
    for i in 0..CHAINS {
        check = _mm512_xor_si512(check, _mm512_xor_si512(x[i], y[i]));
    }
    _mm512_reduce_add_epi32(check) as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_the_butterflies_of_each_size() {
        assert_eq!(butterflies(4096), 1_536);
        assert_eq!(butterflies(8192), 3_328);
        assert_eq!(butterflies(16384), 7_168);
    }

    /// The probe computes real butterflies: its lanes match a scalar run of the same chains.
    #[test]
    fn matches_scalar_butterflies() {
        if !available() {
            return;
        }
        for n in [4096, 8192, 16384] {
            matches_scalar_at(n);
        }
    }

    fn matches_scalar_at(n: usize) {
        const Q: u32 = 134_176_769;
        const W: u32 = 12_345_678;
        let w_shoup = (u64::from(W) << 32) / u64::from(Q);
        let seed = 99u32;
        let mut check = 0u32;
        for i in 0..CHAINS as u32 {
            let mut x = seed.wrapping_add(i * 1000) % Q;
            let mut y = seed.wrapping_mul(7).wrapping_add(i) % Q;
            for _ in 0..butterflies(n) / CHAINS {
                let quotient = ((u64::from(y) * w_shoup) >> 32) as u32;
                let t = y.wrapping_mul(W).wrapping_sub(quotient.wrapping_mul(Q));
                let sum = x.wrapping_add(t);
                y = x.wrapping_add(2 * Q).wrapping_sub(t);
                x = sum;
            }
            check ^= x ^ y;
        }
        // Sixteen equal lanes: the xor of all chains, summed over the lanes.
        assert_eq!(run(seed, n), check.wrapping_mul(16), "n = {n}");
    }
}
