//! Samplers against the ideal distributions and against the raw AES-CTR keystream:
//! chi-square of the CDT Gaussian against the ideal discrete Gaussian (σ = 3.2), ternary
//! balance, uniform bias-freeness, fixed keystream consumption, and the evaluation-domain
//! mask `â` against direct evaluation of the expanded `c1` at the stated roots.
#![expect(
    clippy::unwrap_used,
    reason = "test helpers outside #[test] fns: a failure should panic"
)]

use zeppelin::prng::{AesCtr128, Keystream, PublicPrng, PublicSeed, SecretPrng, SecretSeed};
use zeppelin::sampler::{sample_gaussian, sample_ternary, sample_uniform, CDT, SIGMA};
use zeppelin::{Bfv, Params, Seal4096, Seal8192, Zeppelin4096};

/// The ring degree the distribution tests sample at.
const N: usize = 4096;
use zeppelin_ring::Modulus;

/// Upper 0.1% point of chi-square with `df` degrees of freedom (Wilson–Hilferty).
fn chi2_critical(df: usize) -> f64 {
    let df = df as f64;
    let z = 3.09;
    df * (1.0 - 2.0 / (9.0 * df) + z * (2.0 / (9.0 * df)).sqrt()).powi(3)
}

fn chi2(observed: &[u64], expected: &[f64]) -> f64 {
    observed
        .iter()
        .zip(expected)
        .map(|(&o, &e)| (o as f64 - e).powi(2) / e)
        .sum()
}

fn keystream_words(seed: &[u8; 32], count: usize) -> Vec<u32> {
    let mut ks = AesCtr128::from_seed(seed);
    let mut bytes = vec![0u8; count * 4];
    ks.fill(&mut bytes);
    bytes
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

#[test]
fn cdt_matches_ideal_gaussian() {
    let rho: Vec<f64> = (-21i32..=21)
        .map(|v| (-(v * v) as f64 / (2.0 * SIGMA * SIGMA)).exp())
        .collect();
    let total: f64 = rho.iter().sum();
    let mut cumulative = 0.0;
    for (j, &c) in CDT.iter().enumerate() {
        cumulative += rho[j];
        let ideal = cumulative / total * 2f64.powi(31);
        assert!(
            (c as f64 - ideal).abs() <= 0.5 + 1e-6,
            "CDT[{j}] = {c}, ideal {ideal}"
        );
    }
}

#[test]
fn gaussian_chi_square_against_ideal() {
    const POLYS: usize = 256; // 2^20 samples
    let mut counts = [0u64; 43];
    let mut poly = [0i8; N];
    for p in 0..POLYS {
        let mut seed = [0u8; 32];
        seed[..8].copy_from_slice(&(p as u64).to_le_bytes());
        let mut prng = SecretPrng::<AesCtr128>::new(&SecretSeed::from_bytes(seed));
        sample_gaussian(&mut prng, &mut poly, &zeppelin_ring::default_backend());
        for &e in poly.iter() {
            assert!((-21..=21).contains(&e));
            counts[(e + 21) as usize] += 1;
        }
    }
    let samples = (POLYS * N) as f64;
    // The ideal discrete Gaussian over all of Z (normalised with a wide sum).
    let norm: f64 = (-200i32..=200)
        .map(|v| (-(v * v) as f64 / (2.0 * SIGMA * SIGMA)).exp())
        .sum();
    let p = |v: i32| (-(v * v) as f64 / (2.0 * SIGMA * SIGMA)).exp() / norm;
    // Bins: the central values with expected count >= 5, tails merged.
    let (mut obs, mut exp) = (vec![], vec![]);
    let mut tail_o = [0u64; 2];
    let mut tail_e = [0f64; 2];
    for v in -21i32..=21 {
        let e = p(v) * samples;
        let o = counts[(v + 21) as usize];
        if e >= 5.0 {
            obs.push(o);
            exp.push(e);
        } else {
            let side = usize::from(v > 0);
            tail_o[side] += o;
            tail_e[side] += e;
        }
    }
    // Mass beyond ±21 of the ideal distribution belongs to the tails too.
    let beyond: f64 = (22..=200).map(p).sum::<f64>() * samples;
    for side in 0..2 {
        obs.push(tail_o[side]);
        exp.push(tail_e[side] + beyond);
    }
    let stat = chi2(&obs, &exp);
    let crit = chi2_critical(obs.len() - 1);
    assert!(stat < crit, "chi-square {stat} >= {crit}");
    let mean: f64 = counts
        .iter()
        .enumerate()
        .map(|(i, &c)| (i as f64 - 21.0) * c as f64)
        .sum::<f64>()
        / samples;
    let var: f64 = counts
        .iter()
        .enumerate()
        .map(|(i, &c)| (i as f64 - 21.0).powi(2) * c as f64)
        .sum::<f64>()
        / samples
        - mean * mean;
    assert!(mean.abs() < 0.02, "mean {mean}");
    assert!((var.sqrt() - SIGMA).abs() < 0.02, "sigma {}", var.sqrt());
}

#[test]
fn ternary_balanced_and_equal_to_thresholded_keystream() {
    const POLYS: usize = 256;
    let mut counts = [0u64; 3];
    let mut poly = [0i8; N];
    for p in 0..POLYS {
        let seed = [p as u8; 32];
        let mut prng = SecretPrng::<AesCtr128>::new(&SecretSeed::from_bytes(seed));
        sample_ternary(&mut prng, &mut poly);
        // Exactly 4n bytes consumed: the next word is keystream word n.
        let words = keystream_words(&seed, N + 1);
        assert_eq!(prng.next_u32(), words[N]);
        for (&s, &w) in poly.iter().zip(&words) {
            // The documented thresholds: floor(2^32/3) and 2·floor(2^32/3).
            let expected = if w < 0x5555_5555 {
                -1
            } else if w < 0xAAAA_AAAA {
                0
            } else {
                1
            };
            assert_eq!(s, expected, "word {w:#x}");
            counts[(s + 1) as usize] += 1;
        }
    }
    let samples = (POLYS * N) as f64;
    let stat = chi2(&counts, &[samples / 3.0; 3]);
    assert!(stat < chi2_critical(2), "ternary chi-square {stat}");
}

#[test]
fn gaussian_consumes_exactly_4n_bytes() {
    let seed = [0x42u8; 32];
    let mut prng = SecretPrng::<AesCtr128>::new(&SecretSeed::from_bytes(seed));
    let mut poly = [0i8; N];
    sample_gaussian(&mut prng, &mut poly, &zeppelin_ring::Portable);
    assert_eq!(prng.next_u32(), keystream_words(&seed, N + 1)[N]);
}

#[test]
fn uniform_is_bias_free_and_is_masked_rejection() {
    let q = Modulus::new(134_176_769).unwrap();
    let qv = q.value() as u64;
    let seed = [0x17u8; 32];
    const SAMPLES: usize = 1 << 20;
    let mut prng = PublicPrng::<AesCtr128>::new(&PublicSeed(seed));
    let mut xs = vec![0u32; SAMPLES];
    sample_uniform(&mut prng, &q, &mut xs);
    // Reference: keystream words masked to 27 bits, those >= q dropped.
    let words = keystream_words(&seed, SAMPLES + SAMPLES / 64);
    let reference: Vec<u32> = words
        .iter()
        .map(|w| w & ((1 << 27) - 1))
        .filter(|&w| (w as u64) < qv)
        .take(SAMPLES)
        .collect();
    assert_eq!(xs, reference);
    // 256 buckets of the value range, with their exact sizes.
    const BUCKETS: u64 = 256;
    let mut counts = vec![0u64; BUCKETS as usize];
    for &x in &xs {
        counts[(x as u64 * BUCKETS / qv) as usize] += 1;
    }
    let expected: Vec<f64> = (0..BUCKETS)
        .map(|b| {
            let lo = (b * qv).div_ceil(BUCKETS);
            let hi = ((b + 1) * qv).div_ceil(BUCKETS);
            (hi - lo) as f64 / qv as f64 * SAMPLES as f64
        })
        .collect();
    let stat = chi2(&counts, &expected);
    assert!(stat < chi2_critical(255), "uniform chi-square {stat}");
    // The top values (the ones a modular reduction would bias) appear at the plain rate.
    let top = xs.iter().filter(|&&x| x as u64 >= qv - qv / 16).count() as f64;
    assert!((top / SAMPLES as f64 - 1.0 / 16.0).abs() < 0.002);
}

fn pow_mod(mut b: u64, mut e: u64, m: u64) -> u64 {
    let mut r = 1;
    b %= m;
    while e > 0 {
        if e & 1 == 1 {
            r = r * b % m;
        }
        b = b * b % m;
        e >>= 1;
    }
    r
}

/// `â` sampled in the evaluation domain and `c1 = INTT(â)` from `expand_c1_rows`: evaluating
/// `c1` directly at `ψ^(2·br(j)+1)` (ψ the smallest primitive 2n-th root, found by search)
/// gives back `â[j]` — so the seeded path's `c1` is the polynomial whose NTT is the sampled
/// mask, as the SEAL adapter must rebuild it.
fn eval_domain_mask_is_ntt_of_expanded_c1<P: Params>() {
    let n = P::N;
    let seed = PublicSeed([0x33; 32]);
    let mut c1 = vec![0u32; P::K * n];
    Bfv::<P>::expand_c1_rows(&seed, P::K, &mut c1).unwrap();
    let mut prng = PublicPrng::<AesCtr128>::new(&seed);
    for (i, &qi) in P::DATA_PRIMES.iter().enumerate() {
        let q = Modulus::new(qi).unwrap();
        let mut a_hat = vec![0u32; n];
        sample_uniform(&mut prng, &q, &mut a_hat);
        let m = qi as u64;
        let psi = (2..m).find(|&x| pow_mod(x, n as u64, m) == m - 1).unwrap();
        // The smallest of all primitive roots: the odd powers of this one.
        let psi = (0..n as u64)
            .map(|k| pow_mod(psi, 2 * k + 1, m))
            .min()
            .unwrap();
        let row = &c1[i * n..(i + 1) * n];
        for j in [0usize, 1, 2, 3, 1000, n / 2 - 1, n / 2, n - 1] {
            let br = j.reverse_bits() >> (usize::BITS - P::LOG_N);
            let x = pow_mod(psi, 2 * br as u64 + 1, m);
            let v = row
                .iter()
                .rev()
                .fold(0u64, |acc, &c| (acc * x + c as u64) % m);
            assert_eq!(v as u32, a_hat[j], "prime {qi} slot {j}");
        }
    }
}

#[test]
fn eval_domain_mask_seal4096() {
    eval_domain_mask_is_ntt_of_expanded_c1::<Seal4096>();
}

#[test]
fn eval_domain_mask_zeppelin4096() {
    eval_domain_mask_is_ntt_of_expanded_c1::<Zeppelin4096>();
}

#[test]
fn eval_domain_mask_seal8192() {
    eval_domain_mask_is_ntt_of_expanded_c1::<Seal8192>();
}
