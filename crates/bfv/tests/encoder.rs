//! The batch encoder against independent ground truth: Microsoft SEAL's own `BatchEncoder`
//! output (tests/kats/seal_batch_encoder.txt, made by gen_seal_encoder.py with seal-python
//! 4.4.0), direct evaluation of the plaintext polynomial at the stated roots of unity mod t,
//! and the Galois automorphisms SEAL's row/column rotations apply.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::needless_range_loop
)]

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use zeppelin::encoder::{decode, decode_in_place, encode, encode_in_place, FixedPoint};
use zeppelin::{Error, N, T};

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
fn smallest_psi() -> u64 {
    let t = T as u64;
    (2..t).find(|&x| pow_mod(x, N as u64, t) == t - 1).unwrap()
}

fn eval(poly: &[u32], x: u64) -> u64 {
    let t = T as u64;
    poly.iter()
        .rev()
        .fold(0, |acc, &c| (acc * x + c as u64) % t)
}

/// Slot values by definition: row 0 column i at ψ^(3^i), row 1 column i at ψ^(−3^i).
fn slots_by_evaluation(plain: &[u32]) -> Vec<u32> {
    let t = T as u64;
    let psi = smallest_psi();
    let two_n = 2 * N as u64;
    let mut out = vec![0u32; N];
    let mut e = 1u64;
    for i in 0..N / 2 {
        out[i] = eval(plain, pow_mod(psi, e, t)) as u32;
        out[N / 2 + i] = eval(plain, pow_mod(psi, two_n - e, t)) as u32;
        e = e * 3 % two_n;
    }
    out
}

fn parse_line(line: &str) -> Vec<u32> {
    line.split_whitespace()
        .map(|v| v.parse().unwrap())
        .collect()
}

#[test]
fn encode_equals_seal_batch_encoder() {
    let text = include_str!("kats/seal_batch_encoder.txt");
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 8);
    for pair in lines.chunks(2) {
        let slots: [u32; N] = parse_line(pair[0]).try_into().unwrap();
        let coeffs: [u32; N] = parse_line(pair[1]).try_into().unwrap();
        let mut plain = [0u32; N];
        encode(&slots, &mut plain).unwrap();
        assert_eq!(plain, coeffs, "encoding differs from SEAL's");
        let mut back = [0u32; N];
        decode(&coeffs, &mut back).unwrap();
        assert_eq!(back, slots, "decoding SEAL's plaintext differs");
        let mut in_place = slots;
        encode_in_place(&mut in_place).unwrap();
        assert_eq!(in_place, coeffs, "in-place encoding differs from SEAL's");
        decode_in_place(&mut in_place).unwrap();
        assert_eq!(in_place, slots, "in-place decoding differs");
    }
}

#[test]
fn decode_equals_direct_evaluation_at_roots() {
    let mut rng = StdRng::seed_from_u64(0xe4c0_0001);
    for _ in 0..2 {
        let plain: [u32; N] = core::array::from_fn(|_| rng.gen_range(0..T));
        let mut slots = [0u32; N];
        decode(&plain, &mut slots).unwrap();
        assert_eq!(slots.to_vec(), slots_by_evaluation(&plain));
        // And encoding those slots gives the polynomial back (the map is a bijection).
        let mut again = [0u32; N];
        encode(&slots, &mut again).unwrap();
        assert_eq!(again, plain);
    }
}

/// `m(x) ↦ m(x^g) mod (x^n + 1, t)`, computed directly.
fn automorphism(plain: &[u32], g: usize) -> Vec<u32> {
    let mut out = vec![0u32; N];
    for (i, &c) in plain.iter().enumerate() {
        let e = i * g % (2 * N);
        if e < N {
            out[e] = (out[e] + c) % T;
        } else {
            out[e - N] = (out[e - N] + T - c) % T;
        }
    }
    out
}

#[test]
fn galois_automorphisms_rotate_like_seal() {
    let mut rng = StdRng::seed_from_u64(0xe4c0_0002);
    let slots: [u32; N] = core::array::from_fn(|_| rng.gen_range(0..T));
    let mut plain = [0u32; N];
    encode(&slots, &mut plain).unwrap();
    let row = N / 2;
    // x -> x^3: SEAL's rotate_rows(1), both rows rotate left by one column.
    let rotated: [u32; N] = automorphism(&plain, 3).try_into().unwrap();
    let mut got = [0u32; N];
    decode(&rotated, &mut got).unwrap();
    for r in 0..2 {
        for c in 0..row {
            assert_eq!(got[r * row + c], slots[r * row + (c + 1) % row]);
        }
    }
    // x -> x^(2n-1): SEAL's rotate_columns, the rows swap.
    let swapped: [u32; N] = automorphism(&plain, 2 * N - 1).try_into().unwrap();
    decode(&swapped, &mut got).unwrap();
    assert_eq!(&got[..row], &slots[row..]);
    assert_eq!(&got[row..], &slots[..row]);
}

#[test]
fn out_of_range_values_are_refused_without_writing() {
    let mut slots = [0u32; N];
    slots[77] = T;
    let mut plain = [5u32; N];
    assert_eq!(
        encode(&slots, &mut plain),
        Err(Error::PlaintextOutOfRange {
            index: 77,
            value: T
        })
    );
    assert!(plain.iter().all(|&v| v == 5));
    assert!(decode(&slots, &mut plain).is_err());
}

#[test]
fn fixed_point_error_bound_holds_through_encoding() {
    let mut rng = StdRng::seed_from_u64(0xe4c0_0003);
    for frac_bits in [0u32, 4, 8, 12] {
        let fp = FixedPoint::new(frac_bits).unwrap();
        let bound = 0.5 / f64::from(1u32 << frac_bits);
        let values: Vec<f64> = (0..N)
            .map(|_| rng.gen_range(-fp.max_abs()..fp.max_abs()))
            .collect();
        let mut slots = [0u32; N];
        fp.quantize_slots(&values, &mut slots).unwrap();
        let mut plain = [0u32; N];
        encode(&slots, &mut plain).unwrap();
        let mut back = [0u32; N];
        decode(&plain, &mut back).unwrap();
        let mut real = vec![0f64; N];
        fp.dequantize_slots(&back, &mut real);
        for (x, y) in values.iter().zip(&real) {
            assert!((x - y).abs() <= bound, "{x} vs {y} at {frac_bits} bits");
        }
    }
    let fp = FixedPoint::new(8).unwrap();
    let mut slots = [0u32; N];
    let too_big = [0.0, 1.0, 200.0];
    assert_eq!(
        fp.quantize_slots(&too_big, &mut slots),
        Err(Error::FixedPointOutOfRange { index: 2 })
    );
}
