//! The NTT against independent ground truth: schoolbook negacyclic products and direct
#![expect(
    clippy::unwrap_used,
    reason = "tests: a failed unwrap is a failed test"
)]
//! evaluation of the polynomial at the stated powers of ψ.

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use zeppelin_ring::ntt::bit_reverse;
use zeppelin_ring::{
    default_backend_named, DefaultBackend, Modulus, NttBackend, NttTable, RingError,
};

/// Every backend this build and CPU can run (as this build's default backend type): the
/// products below are checked on each.
fn backends() -> Vec<DefaultBackend> {
    ["portable", "avx2", "avx512", "mve"]
        .into_iter()
        .filter_map(|name| default_backend_named(name).ok())
        .collect()
}

/// Every prime the presets and the OpenFHE vectors use.
const PRIMES: [u32; 9] = [
    134_176_769,
    134_111_233,
    134_012_929,
    133_963_777,
    268_369_921,
    1_061_093_377,
    1_042_145_281,
    1_010_565_121,
    972_668_929,
];

fn schoolbook_negacyclic(m: &Modulus, a: &[u32], b: &[u32]) -> Vec<u32> {
    let n = a.len();
    let q = m.value() as u128;
    // Accumulate positive and negative wraps separately, exactly, then reduce once.
    let mut acc = vec![0u128; n];
    for i in 0..n {
        for j in 0..n {
            let p = a[i] as u128 * b[j] as u128;
            if i + j < n {
                acc[i + j] += p;
            } else {
                acc[i + j - n] += q * q - p % (q * q);
            }
        }
    }
    acc.iter().map(|&v| (v % q) as u32).collect()
}

fn random_poly(rng: &mut StdRng, n: usize, q: u32) -> Vec<u32> {
    (0..n).map(|_| rng.gen_range(0..q)).collect()
}

/// `a·b` by NTT on every backend; all must agree (the first result is returned).
fn ntt_product(table: &NttTable<Vec<u32>>, a: &[u32], b: &[u32]) -> Vec<u32> {
    let view = table.view();
    let mut first: Option<Vec<u32>> = None;
    for ntt in backends() {
        let (mut fa, mut fb) = (a.to_vec(), b.to_vec());
        ntt.forward(&view, &mut fa).unwrap();
        ntt.forward(&view, &mut fb).unwrap();
        assert!(fa.iter().chain(&fb).all(|&x| x < view.modulus.value()));
        let mut prod = vec![0; a.len()];
        ntt.pointwise_mul(&view.modulus, &fa, &fb, &mut prod)
            .unwrap();
        ntt.inverse(&view, &mut prod).unwrap();
        // The in-place product gives the same.
        ntt.pointwise_mul_assign(&view.modulus, &mut fa, &fb)
            .unwrap();
        ntt.inverse(&view, &mut fa).unwrap();
        assert_eq!(fa, prod, "{}: in-place product", ntt.name());
        match &first {
            Some(p) => assert_eq!(&prod, p, "{} differs", ntt.name()),
            None => first = Some(prod),
        }
    }
    first.unwrap()
}

#[test]
fn products_equal_schoolbook_n4096_every_prime() {
    let n = 4096;
    let mut rng = StdRng::seed_from_u64(0x5eed_0001);
    for q in PRIMES {
        let table = NttTable::new_vec(q, n).unwrap();
        let a = random_poly(&mut rng, n, q);
        let b = random_poly(&mut rng, n, q);
        let expected = schoolbook_negacyclic(table.modulus(), &a, &b);
        assert_eq!(ntt_product(&table, &a, &b), expected, "q = {q}");
    }
}

#[test]
fn products_equal_schoolbook_small_degrees_and_extreme_values() {
    let mut rng = StdRng::seed_from_u64(7);
    for log_n in 1..=10 {
        let n = 1usize << log_n;
        for q in [12_289u32, 7_340_033, 134_176_769, 1_061_093_377] {
            let Ok(table) = NttTable::new_vec(q, n) else {
                continue;
            };
            // All q-1: the largest values every butterfly can see.
            let top = vec![q - 1; n];
            assert_eq!(
                ntt_product(&table, &top, &top),
                schoolbook_negacyclic(table.modulus(), &top, &top)
            );
            let a = random_poly(&mut rng, n, q);
            let b = random_poly(&mut rng, n, q);
            assert_eq!(
                ntt_product(&table, &a, &b),
                schoolbook_negacyclic(table.modulus(), &a, &b),
                "n={n} q={q}"
            );
        }
    }
}

#[test]
fn evaluation_map_is_psi_to_the_odd_bit_reversed_power() {
    // Slot j holds a(ψ^(2·br(j)+1)), ψ the smallest primitive 2n-th root (SEAL/OpenFHE).
    let mut rng = StdRng::seed_from_u64(11);
    for (q, n) in [
        (134_176_769u32, 4096usize),
        (1_061_093_377, 4096),
        (12_289, 512),
        (65_537, 4096),
    ] {
        let table = NttTable::new_vec(q, n).unwrap();
        let m = *table.modulus();
        let psi = table.psi();
        // ψ is primitive and the smallest one: brute force over all of Z_q for small q,
        // otherwise over the odd powers.
        assert_eq!(m.pow(psi, n as u64), q - 1);
        let smallest = (1..n as u64)
            .step_by(2)
            .map(|k| m.pow(psi, k))
            .min()
            .unwrap();
        assert_eq!(psi, smallest.min(psi));
        let a = random_poly(&mut rng, n, q);
        let mut fa = a.clone();
        zeppelin_ring::default_backend()
            .forward(&table.view(), &mut fa)
            .unwrap();
        let log_n = n.trailing_zeros();
        for j in (0..n).step_by(n / 64).chain([n - 1]) {
            let x = m.pow(psi, 2 * bit_reverse(j, log_n) as u64 + 1);
            let mut value = 0u32; // Horner
            for &c in a.iter().rev() {
                value = m.add(m.mul(value, x), c);
            }
            assert_eq!(fa[j], value, "q={q} n={n} j={j}");
        }
    }
}

#[test]
fn openfhe_manifest_roots_are_ours() {
    // ../shared/vectors/openfhe-bv-n4096-l4-b2/manifest.json
    for (q, root) in [
        (1_061_093_377u32, 448_848u32),
        (1_042_145_281, 92_250),
        (1_010_565_121, 173_671),
        (972_668_929, 45_650),
    ] {
        assert_eq!(NttTable::new_vec(q, 4096).unwrap().psi(), root);
    }
}

#[test]
fn inverse_undoes_forward_and_rejects_bad_lengths() {
    let table = NttTable::new_vec(134_176_769, 4096).unwrap();
    let mut rng = StdRng::seed_from_u64(3);
    let a = random_poly(&mut rng, 4096, 134_176_769);
    for ntt in backends() {
        let mut b = a.clone();
        ntt.forward(&table.view(), &mut b).unwrap();
        ntt.inverse(&table.view(), &mut b).unwrap();
        assert_eq!(a, b);
        let mut short = vec![0u32; 4095];
        assert_eq!(
            ntt.forward(&table.view(), &mut short),
            Err(RingError::LengthMismatch {
                expected: 4096,
                found: 4095
            })
        );
    }
    assert_eq!(
        NttTable::new_vec(65_537, 65_536).unwrap_err(),
        RingError::NotNttFriendly {
            modulus: 65_537,
            degree: 65_536
        }
    );
    assert!(matches!(
        NttTable::new_vec(134_176_769, 3000),
        Err(RingError::DegreeNotSupported { degree: 3000 })
    ));
}

#[test]
fn const_array_table_equals_vec_table() {
    let arr: Box<NttTable<[u32; 4096]>> = Box::new(NttTable::new_array(134_012_929).unwrap());
    let vec = NttTable::new_vec(134_012_929, 4096).unwrap();
    assert_eq!(arr.view().forward, vec.view().forward);
    assert_eq!(arr.view().inverse, vec.view().inverse);
    assert_eq!(arr.psi(), vec.psi());
}
