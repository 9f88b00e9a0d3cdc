//! Helpers shared by the integration tests: independent ground truth (schoolbook products,
//! big-integer CRT and rounding) and heap-allocated client state.
#![expect(clippy::unwrap_used, reason = "test helpers: a failure should panic")]
#![allow(
    dead_code,
    reason = "shared by several test crates, each using a different subset"
)]

use num_bigint::BigUint;
use num_traits::{One, ToPrimitive, Zero};
use zeppelin::Params;

/// `X_i = c0_i + c1_i·s mod q_i` by the schoolbook negacyclic product with the ternary
/// secret (no NTT involved).
pub fn schoolbook_x<P: Params>(level: usize, c0: &[u32], c1: &[u32], s: &[i8]) -> Vec<u32> {
    let n = P::N;
    let mut out = vec![0u32; level * n];
    for i in 0..level {
        let q = P::DATA_PRIMES[i] as i64;
        let a = &c1[i * n..(i + 1) * n];
        let mut acc = vec![0i64; n];
        for (j, &sj) in s.iter().enumerate() {
            if sj == 0 {
                continue;
            }
            let sj = sj as i64;
            for (k, &ak) in a.iter().enumerate() {
                let idx = j + k;
                if idx < n {
                    acc[idx] += sj * ak as i64;
                } else {
                    acc[idx - n] -= sj * ak as i64;
                }
            }
        }
        for k in 0..n {
            out[i * n + k] = ((acc[k] + c0[i * n + k] as i64).rem_euclid(q)) as u32;
        }
    }
    out
}

/// `Q` of a level as a big integer.
pub fn q_big<P: Params>(level: usize) -> BigUint {
    P::DATA_PRIMES[..level]
        .iter()
        .fold(BigUint::one(), |acc, &q| acc * q)
}

/// CRT reconstruction of one coefficient from its residues.
pub fn crt<P: Params>(residues: &[u32]) -> BigUint {
    let level = residues.len();
    let q = q_big::<P>(level);
    let mut x = BigUint::zero();
    for (i, &r) in residues.iter().enumerate() {
        let qi = BigUint::from(P::DATA_PRIMES[i]);
        let hat = &q / &qi;
        let inv = (&hat % &qi).modpow(&(&qi - 2u32), &qi);
        x += BigUint::from(r) * inv * hat;
    }
    x % q
}

/// `round(t·X/Q) mod t`, exactly.
pub fn exact_round<P: Params>(x: &BigUint, level: usize) -> u32 {
    let q = q_big::<P>(level);
    let num = x * P::T * 2u32 + &q;
    let den = q * 2u32;
    ((num / den) % P::T).to_u32().unwrap()
}

/// Residues of a big integer for the first `level` primes.
pub fn residues<P: Params>(x: &BigUint, level: usize) -> Vec<u32> {
    P::DATA_PRIMES[..level]
        .iter()
        .map(|&q| (x % q).to_u32().unwrap())
        .collect()
}

/// SEAL's invariant noise budget from the exact `X` of every coefficient.
pub fn noise_budget_exact<P: Params>(x_rows: &[u32], level: usize) -> u32 {
    let q = q_big::<P>(level);
    let half = (&q + 1u32) / 2u32;
    let mut norm = BigUint::zero();
    let mut res = vec![0u32; level];
    let n = P::N;
    for j in 0..n {
        for i in 0..level {
            res[i] = x_rows[i * n + j];
        }
        let v = (crt::<P>(&res) * P::T) % &q;
        let c = if v >= half { &q - &v } else { v };
        if c > norm {
            norm = c;
        }
    }
    let diff = q.bits() as i64 - norm.bits() as i64 - 1;
    diff.max(0) as u32
}
