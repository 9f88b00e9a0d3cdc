//! NTT forward/inverse and pointwise products, n = 4096, for each preset prime: the target's
//! chosen backend (`Ntt`) side by side with the portable reference in the same run.
#![allow(clippy::unwrap_used)]

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use zeppelin_ring::{Ntt, NttBackend, NttTable, Portable};

const N: usize = 4096;
const PRIMES: [u32; 5] = [
    134_176_769,
    134_111_233,
    134_012_929,
    133_963_777,
    268_369_921,
];

fn bench_backend<B: NttBackend>(c: &mut Criterion, table: &NttTable<[u32; N]>) {
    let view = table.view();
    let q = view.modulus.value();
    let mut a: Vec<u32> = (0..N as u32)
        .map(|i| i.wrapping_mul(2_654_435_761) % q)
        .collect();
    let b = a.clone();
    let mut out = vec![0u32; N];
    c.bench_function(&format!("ntt_forward/{}/q={q}", B::NAME), |bench| {
        bench.iter(|| B::forward(&view, black_box(&mut a)).unwrap())
    });
    c.bench_function(&format!("ntt_inverse/{}/q={q}", B::NAME), |bench| {
        bench.iter(|| B::inverse(&view, black_box(&mut a)).unwrap())
    });
    c.bench_function(&format!("pointwise_mul/{}/q={q}", B::NAME), |bench| {
        bench.iter(|| B::pointwise_mul(&view.modulus, black_box(&a), &b, &mut out).unwrap())
    });
}

fn bench_ntt(c: &mut Criterion) {
    for q in PRIMES {
        let table: Box<NttTable<[u32; N]>> = Box::new(NttTable::new_array(q).unwrap());
        bench_backend::<Ntt>(c, &table);
        bench_backend::<Portable>(c, &table);
    }
}

criterion_group!(benches, bench_ntt);
criterion_main!(benches);
