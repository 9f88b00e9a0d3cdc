//! The batch encoder against independent ground truth: Microsoft SEAL's own `BatchEncoder`
//! output (tests/kats/seal_batch_encoder*.txt, made by gen_seal_encoder.py with seal-python
//! 4.4.0, for n = 4096 and 8192), direct evaluation of the plaintext polynomial at the stated
//! roots of unity mod t, and the Galois automorphisms SEAL's row/column rotations apply.
#![expect(
    clippy::unwrap_used,
    reason = "test helpers outside #[test] fns: a failure should panic"
)]

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use zeppelin::encoder::{decode, encode, FixedPoint};
use zeppelin::{Error, Params, Plaintext, Seal4096, Seal8192, Zeppelin4096};

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

/// The smallest primitive 2n-th root of unity mod t, by exhaustive search.
fn smallest_psi<P: Params>() -> u64 {
    let t = P::T as u64;
    (2..t)
        .find(|&x| pow_mod(x, P::N as u64, t) == t - 1)
        .unwrap()
}

fn eval<P: Params>(poly: &[u32], x: u64) -> u64 {
    let t = P::T as u64;
    poly.iter()
        .rev()
        .fold(0, |acc, &c| (acc * x + c as u64) % t)
}

/// Slot values by definition: row 0 column i at ψ^(3^i), row 1 column i at ψ^(−3^i).
fn slots_by_evaluation<P: Params>(plain: &[u32]) -> Vec<u32> {
    let (n, t) = (P::N, P::T as u64);
    let psi = smallest_psi::<P>();
    let two_n = 2 * n as u64;
    let mut out = vec![0u32; n];
    let mut e = 1u64;
    for i in 0..n / 2 {
        out[i] = eval::<P>(plain, pow_mod(psi, e, t)) as u32;
        out[n / 2 + i] = eval::<P>(plain, pow_mod(psi, two_n - e, t)) as u32;
        e = e * 3 % two_n;
    }
    out
}

fn parse_line(line: &str) -> Vec<u32> {
    line.split_whitespace()
        .map(|v| v.parse().unwrap())
        .collect()
}

fn plaintext<P: Params>(coeffs: &[u32]) -> Box<Plaintext<P>> {
    let mut plain = Box::new(Plaintext::<P>::zeroed());
    plain.set_coeffs(coeffs).unwrap();
    plain
}

fn equals_seal_batch_encoder<P: Params>(text: &str) {
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 8);
    for pair in lines.chunks(2) {
        let slots = parse_line(pair[0]);
        let coeffs = parse_line(pair[1]);
        assert_eq!((slots.len(), coeffs.len()), (P::N, P::N));
        let mut plain = Box::new(Plaintext::<P>::zeroed());
        encode(&slots, &mut plain).unwrap();
        assert_eq!(plain.coeffs(), &coeffs[..], "encoding differs from SEAL's");
        let mut back = vec![0u32; P::N];
        decode(&plaintext::<P>(&coeffs), &mut back).unwrap();
        assert_eq!(back, slots, "decoding SEAL's plaintext differs");
    }
}

#[test]
fn encode_equals_seal_batch_encoder() {
    equals_seal_batch_encoder::<Seal4096>(include_str!("kats/seal_batch_encoder.txt"));
    equals_seal_batch_encoder::<Zeppelin4096>(include_str!("kats/seal_batch_encoder.txt"));
    equals_seal_batch_encoder::<Seal8192>(include_str!("kats/seal_batch_encoder_8192.txt"));
}

fn decode_equals_direct_evaluation_at_roots<P: Params>(seed: u64) {
    let mut rng = StdRng::seed_from_u64(seed);
    for _ in 0..2 {
        let coeffs: Vec<u32> = (0..P::N).map(|_| rng.gen_range(0..P::T)).collect();
        let mut slots = vec![0u32; P::N];
        decode(&plaintext::<P>(&coeffs), &mut slots).unwrap();
        assert_eq!(slots, slots_by_evaluation::<P>(&coeffs));
        // And encoding those slots gives the polynomial back (the map is a bijection).
        let mut again = Box::new(Plaintext::<P>::zeroed());
        encode(&slots, &mut again).unwrap();
        assert_eq!(again.coeffs(), &coeffs[..]);
    }
}

#[test]
fn decode_equals_direct_evaluation() {
    decode_equals_direct_evaluation_at_roots::<Seal4096>(0xe4c0_0001);
    decode_equals_direct_evaluation_at_roots::<Seal8192>(0xe4c0_0011);
}

/// `m(x) ↦ m(x^g) mod (x^n + 1, t)`, computed directly.
fn automorphism<P: Params>(plain: &[u32], g: usize) -> Vec<u32> {
    let (n, t) = (P::N, P::T);
    let mut out = vec![0u32; n];
    for (i, &c) in plain.iter().enumerate() {
        let e = i * g % (2 * n);
        if e < n {
            out[e] = (out[e] + c) % t;
        } else {
            out[e - n] = (out[e - n] + t - c) % t;
        }
    }
    out
}

fn galois_automorphisms_rotate_like_seal<P: Params>(seed: u64) {
    let n = P::N;
    let mut rng = StdRng::seed_from_u64(seed);
    let slots: Vec<u32> = (0..n).map(|_| rng.gen_range(0..P::T)).collect();
    let mut plain = Box::new(Plaintext::<P>::zeroed());
    encode(&slots, &mut plain).unwrap();
    let row = n / 2;
    // x -> x^3: SEAL's rotate_rows(1), both rows rotate left by one column.
    let rotated = automorphism::<P>(plain.coeffs(), 3);
    let mut got = vec![0u32; n];
    decode(&plaintext::<P>(&rotated), &mut got).unwrap();
    for r in 0..2 {
        for c in 0..row {
            assert_eq!(got[r * row + c], slots[r * row + (c + 1) % row]);
        }
    }
    // x -> x^(2n-1): SEAL's rotate_columns, the rows swap.
    let swapped = automorphism::<P>(plain.coeffs(), 2 * n - 1);
    decode(&plaintext::<P>(&swapped), &mut got).unwrap();
    assert_eq!(&got[..row], &slots[row..]);
    assert_eq!(&got[row..], &slots[..row]);
}

#[test]
fn galois_automorphisms_rotate_like_seal_rotations() {
    galois_automorphisms_rotate_like_seal::<Seal4096>(0xe4c0_0002);
    galois_automorphisms_rotate_like_seal::<Seal8192>(0xe4c0_0012);
}

#[test]
fn out_of_range_values_are_refused_without_writing() {
    let n = Seal4096::N;
    let mut slots = vec![0u32; n];
    slots[77] = Seal4096::T;
    let fives = vec![5u32; n];
    let mut plain = plaintext::<Seal4096>(&fives);
    assert_eq!(
        encode(&slots, &mut plain),
        Err(Error::PlaintextOutOfRange {
            index: 77,
            t: 65537
        })
    );
    assert!(plain.coeffs().iter().all(|&v| v == 5));
    // Too many slots, or a slot buffer of the wrong size.
    assert!(encode(&vec![0u32; n + 1], &mut plain).is_err());
    assert!(decode(&plain, &mut vec![0u32; n - 1]).is_err());
    // Fewer slots than n: the rest are 0.
    encode(&[3, 4], &mut plain).unwrap();
    let mut back = vec![0u32; n];
    decode(&plain, &mut back).unwrap();
    assert_eq!(&back[..3], &[3, 4, 0]);
    assert!(back[2..].iter().all(|&v| v == 0));
}

#[test]
fn fixed_point_error_bound_holds_through_encoding() {
    type P = Seal4096;
    let n = P::N;
    let mut rng = StdRng::seed_from_u64(0xe4c0_0003);
    for frac_bits in [0u32, 4, 8, 12] {
        let fp = FixedPoint::<P>::new(frac_bits).unwrap();
        let bound = 0.5 / f64::from(1u32 << frac_bits);
        let values: Vec<f64> = (0..n)
            .map(|_| rng.gen_range(-fp.max_abs()..fp.max_abs()))
            .collect();
        let mut slots = vec![0u32; n];
        fp.quantize_slots(&values, &mut slots).unwrap();
        let mut plain = Box::new(Plaintext::<P>::zeroed());
        encode(&slots, &mut plain).unwrap();
        let mut back = vec![0u32; n];
        decode(&plain, &mut back).unwrap();
        let mut real = vec![0f64; n];
        fp.dequantize_slots(&back, &mut real);
        for (x, y) in values.iter().zip(&real) {
            assert!((x - y).abs() <= bound, "{x} vs {y} at {frac_bits} bits");
        }
    }
    let fp = FixedPoint::<P>::new(8).unwrap();
    let mut slots = vec![0u32; n];
    let too_big = [0.0, 1.0, 200.0];
    assert_eq!(
        fp.quantize_slots(&too_big, &mut slots),
        Err(Error::FixedPointOutOfRange { index: 2 })
    );
}
