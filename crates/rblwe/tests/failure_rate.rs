//! Decryption failure rates: an exact computation from the noise distribution, compared with
//! the published per-bit figures, and a Monte Carlo count with the implementation, compared
//! with the exact figure.
//!
//! Coefficient `i` of the noise is `nu_i = (e1*r1)_i + (e2*r2)_i + e3_i`. Within one
//! coefficient every product term `e_j r_{i-j}` uses distinct, independent variables, so
//! `nu_i = A - B + E` exactly, with `A ~ Bin(2(i+1), 1/4)` (unwrapped terms of both
//! products), `B ~ Bin(2(n-i-1), 1/4)` (wrapped, subtracted terms) and `E ~ Bern(1/2)`.
//! Bit `i` decodes wrongly iff `(nu_i - ceil(E[nu_i])) mod q` is not in `[-q/4, q/4)`.
#![expect(
    clippy::unwrap_used,
    reason = "test helpers outside #[test] fns unwrap on failure (clippy.toml exempts only #[test] fns)"
)]

mod common;
use common::TestRng;
use rblwe::cpa;
use rblwe::params::ParamSet;
use rblwe::{EntropyPool, Hardened, KatEntropy, PublicParameter, Set1, Set2, Set3};

fn binomial(trials: usize, p: f64) -> Vec<f64> {
    // Iterative convolution: exact up to rounding for the sizes here.
    let mut dist = vec![1.0f64];
    for _ in 0..trials {
        let mut next = vec![0.0f64; dist.len() + 1];
        for (k, &v) in dist.iter().enumerate() {
            next[k] += v * (1.0 - p);
            next[k + 1] += v * p;
        }
        dist = next;
    }
    dist
}

/// Exact mean per-bit failure probability for (n, q) with the crate's decoding offsets.
fn exact_failure_rate(n: usize, q: i64) -> f64 {
    let quarter = q / 4;
    let mut total = 0.0;
    for i in 0..n {
        let a = binomial(2 * (i + 1), 0.25);
        let b = binomial(2 * (n - i - 1), 0.25);
        let mu_hat = (rblwe::params::decode_offset(n, q as u16, i) as i64 - quarter).rem_euclid(q);
        let mut fail = 0.0;
        for (ka, &pa) in a.iter().enumerate() {
            if pa < 1e-30 {
                continue;
            }
            for (kb, &pb) in b.iter().enumerate() {
                if pb < 1e-30 {
                    continue;
                }
                for e in 0..2i64 {
                    let d = (ka as i64 - kb as i64 + e - mu_hat).rem_euclid(q);
                    let centred = if d >= q / 2 { d - q } else { d };
                    if !(-quarter..quarter).contains(&centred) {
                        fail += pa * pb * 0.5;
                    }
                }
            }
        }
        total += fail;
    }
    total / n as f64
}

#[test]
fn exact_failure_rates_match_the_published_figures() {
    for (n, q, published) in [
        (256usize, 256i64, -32.0f64),
        (256, 128, -10.0),
        (512, 256, -18.0),
    ] {
        let rate = exact_failure_rate(n, q);
        let log2 = rate.log2();
        println!("n={n} q={q}: exact per-bit failure 2^{log2:.2} (published 2^{published})");
        assert!(
            (log2 - published).abs() <= 1.5,
            "n={n} q={q}: 2^{log2:.2} vs published 2^{published}"
        );
    }
}

/// Counts wrong bits over `encryptions` random messages, a fresh key for each, with the
/// implementation. Returns (wrong bits, bits, standard deviation of the total estimated
/// from the per-encryption counts: bits within one encryption are correlated through the
/// weights of the key and of e1, so the binomial formula would understate the spread).
fn count_failures<P: ParamSet>(encryptions: usize) -> (usize, usize, f64) {
    let a = PublicParameter::<P>::from_seed(&[1u8; 32]);
    let mut pool: EntropyPool<_, 1024> = EntropyPool::new(KatEntropy::new(b"failure rate"));
    let mut rng = TestRng::new("failure-rate messages");
    let mut m = vec![0u8; P::N / 8];
    let mut out = vec![0u8; P::N / 8];
    let (mut sum, mut sum_sq) = (0usize, 0usize);
    for _ in 0..encryptions {
        let keys = cpa::keygen::<P, Hardened, _, 1024>(&a, &mut pool).unwrap();
        rng.bytes(&mut m);
        let ct = cpa::encrypt::<P, Hardened, _, 1024>(&keys.0, &m, &mut pool).unwrap();
        cpa::decrypt::<P, Hardened>(&keys.1, &ct, &mut out).unwrap();
        let wrong: usize = m
            .iter()
            .zip(&out)
            .map(|(x, y)| (x ^ y).count_ones() as usize)
            .sum();
        sum += wrong;
        sum_sq += wrong * wrong;
    }
    let k = encryptions as f64;
    let mean = sum as f64 / k;
    let var = (sum_sq as f64 / k - mean * mean) * k / (k - 1.0);
    (sum, encryptions * P::N, (var * k).sqrt())
}

#[test]
fn measured_failure_rates_agree_with_the_exact_figures() {
    // Set 2: ~1M bits at ~2^-9.8 give ~1,150 failures. The count must be within 5 standard
    // deviations (estimated from the data) of the exact expectation, and its log2 within
    // 0.75 of the published 2^-10.
    let (wrong, bits, sd) = count_failures::<Set2>(4000);
    let p = exact_failure_rate(Set2::N, Set2::Q as i64);
    let expected = p * bits as f64;
    let observed = wrong as f64 / bits as f64;
    println!(
        "set2: {wrong} wrong of {bits} bits = 2^{:.2} (exact 2^{:.2}, expected {expected:.1}, sd {sd:.1})",
        observed.log2(),
        p.log2()
    );
    assert!((wrong as f64 - expected).abs() <= 5.0 * sd);
    assert!((observed.log2() - Set2::FAILURE_LOG2 as f64).abs() <= 0.75);

    // Sets 1 and 3: failures are too rare to observe in a fast test; the count must stay
    // below a generous bound (Poisson mean + 5 sd + 8, allowing for clustering).
    for (name, wrong, bits, p) in [
        {
            let (w, b, _) = count_failures::<Set1>(2000);
            ("set1", w, b, exact_failure_rate(256, 256))
        },
        {
            let (w, b, _) = count_failures::<Set3>(1000);
            ("set3", w, b, exact_failure_rate(512, 256))
        },
    ] {
        let lambda = p * bits as f64;
        let bound = (lambda + 5.0 * lambda.sqrt() + 8.0).ceil() as usize;
        println!("{name}: {wrong} wrong of {bits} bits (expected {lambda:.3}, bound {bound})");
        assert!(wrong <= bound);
    }
}
