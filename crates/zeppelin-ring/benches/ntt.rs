//! NTT forward/inverse and the pointwise products, n = 4096, for each preset prime: every
//! backend this CPU has (x86-64: AVX-512, AVX2 and portable; each from its detection token)
//! side by side in the same run. Short runs:
//! `cargo bench -p zeppelin-ring --bench ntt -- --warm-up-time 1 --measurement-time 2 'q=134176769$'`.
#![expect(clippy::unwrap_used, reason = "a benchmark: a failed set-up ends it")]

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use zeppelin_ring::{default_backend_named, NttBackend, NttTable};

const N: usize = 4096;
const PRIMES: [u32; 5] = [
    134_176_769,
    134_111_233,
    134_012_929,
    133_963_777,
    268_369_921,
];

fn bench_backend<B: NttBackend>(c: &mut Criterion, b: B, table: &NttTable<[u32; N]>) {
    let view = table.view();
    let q = view.modulus.value();
    let name = b.name();
    let mut a: Vec<u32> = (0..N as u32)
        .map(|i| i.wrapping_mul(2_654_435_761) % q)
        .collect();
    let other = a.clone();
    let mut out = vec![0u32; N];
    c.bench_function(&format!("ntt_forward/{name}/q={q}"), |bench| {
        bench.iter(|| b.forward(&view, black_box(&mut a)).unwrap())
    });
    c.bench_function(&format!("ntt_inverse/{name}/q={q}"), |bench| {
        bench.iter(|| b.inverse(&view, black_box(&mut a)).unwrap())
    });
    c.bench_function(&format!("pointwise_mul/{name}/q={q}"), |bench| {
        bench.iter(|| {
            b.pointwise_mul(&view.modulus, black_box(&a), &other, &mut out)
                .unwrap()
        })
    });
    c.bench_function(&format!("pointwise_mul_assign/{name}/q={q}"), |bench| {
        bench.iter(|| {
            b.pointwise_mul_assign(&view.modulus, black_box(&mut a), &other)
                .unwrap()
        })
    });
}

fn bench_ntt(c: &mut Criterion) {
    for q in PRIMES {
        let table: Box<NttTable<[u32; N]>> = Box::new(NttTable::new_array(q).unwrap());
        for name in ["avx512", "avx2", "mve", "portable"] {
            if let Ok(b) = default_backend_named(name) {
                bench_backend(c, b, &table);
            }
        }
    }
}

criterion_group!(benches, bench_ntt);
criterion_main!(benches);
