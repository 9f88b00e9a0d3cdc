//! Byte-lane kernels against schoolbook references.

mod common;
use common::TestRng;
use rblwe::arith;
use rblwe::params::decode_offset;
use rblwe::reference;

fn check_mul_binary(n: usize, q: u16, trials: usize) {
    let mut rng = TestRng::new("mul_binary");
    let mut a = vec![0u8; n];
    let mut b = vec![0u8; n / 8];
    let mut b_unpacked = vec![0u8; n];
    let mut ext = vec![0u8; 2 * n];
    let mut ct = vec![0u8; n];
    let mut branchy = vec![0u8; n];
    let mut expected = vec![0u8; n];
    for trial in 0..trials {
        rng.poly(&mut a, q);
        rng.bytes(&mut b);
        if trial == 0 {
            b.fill(0xff); // every coefficient wraps
        }
        if trial == 1 {
            b.fill(0);
            b[0] = 1; // identity
        }
        reference::unpack_bits(&mut b_unpacked, &b);
        if trial < 3 {
            reference::negacyclic_mul(&mut expected, &a, &b_unpacked, q);
        } else {
            reference::negacyclic_mul_fast(&mut expected, &a, &b_unpacked, q);
        }
        arith::extend(&mut ext, &a);
        assert_eq!(arith::mul_binary::<true>(&mut ct, &ext, &b), n);
        arith::reduce(&mut ct, (q - 1) as u8);
        assert_eq!(
            ct, expected,
            "constant-time kernel, n={n} q={q} trial {trial}"
        );
        assert_eq!(arith::mul_binary::<false>(&mut branchy, &ext, &b), n);
        arith::reduce(&mut branchy, (q - 1) as u8);
        assert_eq!(
            branchy, expected,
            "branchy kernel, n={n} q={q} trial {trial}"
        );
    }
}

#[test]
fn binary_multiplication_equals_schoolbook() {
    check_mul_binary(256, 256, 40);
    check_mul_binary(256, 128, 40);
    check_mul_binary(512, 256, 20);
}

#[test]
fn general_multiplication_equals_schoolbook() {
    let mut rng = TestRng::new("mul_general");
    for &n in &[256usize, 512] {
        let mut a = vec![0u8; n];
        let mut s = vec![0u8; n];
        let mut ext = vec![0u8; 2 * n];
        let mut got = vec![0u8; n];
        let mut expected = vec![0u8; n];
        for _ in 0..20 {
            rng.bytes(&mut a);
            rng.bytes(&mut s);
            reference::negacyclic_mul_fast(&mut expected, &a, &s, 256);
            arith::extend(&mut ext, &a);
            assert_eq!(arith::mul_general(&mut got, &ext, &s), n);
            assert_eq!(got, expected);
        }
    }
}

#[test]
fn lane_operations_equal_bytewise_arithmetic() {
    let mut rng = TestRng::new("lanes");
    let mut x = [0u8; arith::LANES];
    let mut y = [0u8; arith::LANES];
    for _ in 0..100_000 {
        rng.bytes(&mut x);
        rng.bytes(&mut y);
        let wx = arith::Word::from_le_bytes(x);
        let wy = arith::Word::from_le_bytes(y);
        let sum = arith::lane_add(wx, wy).to_le_bytes();
        let diff = arith::lane_sub(wx, wy).to_le_bytes();
        for t in 0..arith::LANES {
            assert_eq!(sum[t], x[t].wrapping_add(y[t]));
            assert_eq!(diff[t], x[t].wrapping_sub(y[t]));
        }
    }
    // Edge lanes: every carry/borrow pattern at the lane boundary.
    for a in 0..=255u8 {
        for b in [0u8, 1, 0x7f, 0x80, 0x81, 0xff] {
            let wx = arith::Word::from_le_bytes([a; arith::LANES]);
            let wy = arith::Word::from_le_bytes([b; arith::LANES]);
            assert_eq!(
                arith::lane_add(wx, wy).to_le_bytes(),
                [a.wrapping_add(b); arith::LANES]
            );
            assert_eq!(
                arith::lane_sub(wx, wy).to_le_bytes(),
                [a.wrapping_sub(b); arith::LANES]
            );
        }
    }
}

#[test]
fn offsets_match_the_published_closed_form() {
    for &(n, q) in &[(256usize, 256u16), (256, 128), (512, 256)] {
        for i in 0..n {
            let closed = (i as i64 - n as i64 / 2 + q as i64 / 4 + 2).rem_euclid(q as i64) as u8;
            assert_eq!(decode_offset(n, q, i), closed, "n={n} q={q} i={i}");
            // The kernel's incremental form L_i = L_0 + i (mod q).
            assert_eq!(
                decode_offset(n, q, i),
                (decode_offset(n, q, 0) as usize + i) as u8 & (q - 1) as u8
            );
        }
    }
    // Set 1: L_i = i - 62.
    assert_eq!(decode_offset(256, 256, 62), 0);
    assert_eq!(decode_offset(256, 256, 0), (256 - 62) as u8);
}

/// The offsets are derived from the expected noise E[nu_i] = i - n/2 + 3/2; check that
/// expectation against the empirical mean of nu = e1*r1 + e2*r2 + e3 computed with the
/// schoolbook reference (independent of the kernels). Each group of 32 coefficients must be
/// within 4 standard errors (estimated from the trials) of the model, and the same check
/// must refuse a model off by 1/2 (`+1` instead of `+3/2`).
#[test]
fn expected_noise_matches_simulation() {
    let n = 256usize;
    let trials = 12_000;
    const GROUP: usize = 32;
    let mut rng = TestRng::new("noise-mean");
    // Per group: sum over trials of the trial's group mean, and of its square.
    let mut sums = vec![0f64; n / GROUP];
    let mut sums_sq = vec![0f64; n / GROUP];
    let mut bits = vec![0u8; n / 8];
    let mut x = vec![0u8; n];
    let mut y = vec![0u8; n];
    let mut prod = vec![0i64; n];
    for _ in 0..trials {
        let mut nu = vec![0i64; n];
        for _ in 0..2 {
            rng.bytes(&mut bits);
            reference::unpack_bits(&mut x, &bits);
            rng.bytes(&mut bits);
            reference::unpack_bits(&mut y, &bits);
            // Integer (unreduced) negacyclic product.
            prod.fill(0);
            for i in 0..n {
                for j in 0..n {
                    let t = (x[i] * y[j]) as i64;
                    if i + j < n {
                        prod[i + j] += t;
                    } else {
                        prod[i + j - n] -= t;
                    }
                }
            }
            for k in 0..n {
                nu[k] += prod[k];
            }
        }
        rng.bytes(&mut bits);
        reference::unpack_bits(&mut x, &bits);
        for k in 0..n {
            nu[k] += x[k] as i64;
        }
        for g in 0..n / GROUP {
            let mean = nu[g * GROUP..(g + 1) * GROUP].iter().sum::<i64>() as f64 / GROUP as f64;
            sums[g] += mean;
            sums_sq[g] += mean * mean;
        }
    }
    let t = trials as f64;
    // Largest |empirical - model| in standard errors over the groups, for a model of 2·E[nu].
    let worst = |twice_model: &dyn Fn(usize) -> i64| {
        (0..n / GROUP)
            .map(|g| {
                let emp = sums[g] / t;
                let se = ((sums_sq[g] / t - emp * emp) * t / (t - 1.0) / t).sqrt();
                let model = (g * GROUP..(g + 1) * GROUP)
                    .map(|k| twice_model(k) as f64 / 2.0)
                    .sum::<f64>()
                    / GROUP as f64;
                (emp - model).abs() / se
            })
            .fold(0.0f64, f64::max)
    };
    let crate_model = worst(&|k| rblwe::params::twice_expected_noise(n, k) as i64);
    assert!(crate_model < 4.0, "the model is {crate_model:.2} SE off");
    let off_by_half = worst(&|k| rblwe::params::twice_expected_noise(n, k) as i64 - 1);
    assert!(
        off_by_half > 4.0,
        "a model off by 1/2 is only {off_by_half:.2} SE off: the test cannot see it"
    );
}

#[test]
fn packed_decoder_equals_scalar_decoder() {
    let mut rng = TestRng::new("decode");
    for &(n, q, logq) in &[(256usize, 256u16, 8u32), (256, 128, 7), (512, 256, 8)] {
        let mut w = vec![0u8; n];
        let mut shifted = vec![0u8; n];
        let mut got = vec![0u8; n / 8];
        let mut expected = vec![0u8; n / 8];
        for _ in 0..200 {
            rng.poly(&mut w, q);
            reference::decode(&mut expected, &w, q);
            shifted.copy_from_slice(&w);
            arith::sub_offsets(&mut shifted, decode_offset(n, q, 0));
            arith::decode_msb(&shifted, logq, &mut got);
            assert_eq!(got, expected, "n={n} q={q}");
        }
    }
}

#[test]
fn packed_encoder_adds_half_q_per_set_bit() {
    let mut rng = TestRng::new("encode");
    for &(n, q) in &[(256usize, 256u16), (256, 128), (512, 256)] {
        let mut poly = vec![0u8; n];
        let mut m = vec![0u8; n / 8];
        rng.poly(&mut poly, q);
        rng.bytes(&mut m);
        let before = poly.clone();
        arith::add_bits(&mut poly, &m, (q / 2) as u8);
        arith::reduce(&mut poly, (q - 1) as u8);
        for i in 0..n {
            let bit = (m[i / 8] >> (i % 8)) & 1;
            let expect = ((before[i] as u16 + bit as u16 * q / 2) % q) as u8;
            assert_eq!(poly[i], expect);
        }
    }
}
