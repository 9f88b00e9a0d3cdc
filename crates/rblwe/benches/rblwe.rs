//! Host benchmarks: the byte-lane kernels and each stage's operations, Set 1 and Set 3.
//! `cargo bench -p rblwe` (on-target instruction counts come from firmware/m33/run.sh).
#![expect(
    clippy::unwrap_used,
    reason = "test helpers outside #[test] fns unwrap on failure (clippy.toml exempts only #[test] fns)"
)]

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use rblwe::params::{ByteArray, ParamSet};
use rblwe::{arith, cca, cpa, masked::MaskedSecretKey};
use rblwe::{
    Branchy, ConstantTime, EntropyPool, Hardened, KatEntropy, PublicParameter, Set1, Set3,
};

const POOL: usize = 8192;

fn stages<P: ParamSet>(c: &mut Criterion) {
    let name = P::NAME;
    let a = PublicParameter::<P>::from_seed(&[1; 32]);
    let mut pool: EntropyPool<_, POOL> = EntropyPool::new(KatEntropy::new(b"bench"));
    let message = vec![0x5au8; P::N / 8];
    let mut out = vec![0u8; P::N / 8];

    let mut ext = P::Wide::zeroed();
    let mut product = P::Poly::zeroed();
    let bits = P::Bits::zeroed();
    arith::extend(ext.as_mut(), a.as_bytes());
    c.bench_function(&format!("{name}/kernel/mul_binary constant-time"), |b| {
        b.iter(|| {
            arith::mul_binary::<true>(product.as_mut(), black_box(ext.as_ref()), bits.as_ref())
        })
    });
    let share = P::Poly::zeroed();
    c.bench_function(&format!("{name}/kernel/mul_general"), |b| {
        b.iter(|| arith::mul_general(product.as_mut(), black_box(ext.as_ref()), share.as_ref()))
    });

    let (pk, sk) = cpa::keygen::<P, Branchy, _, POOL>(&a, &mut pool).unwrap();
    let ct = cpa::encrypt::<P, Branchy, _, POOL>(&pk, &message, &mut pool).unwrap();
    c.bench_function(&format!("{name}/branchy CPA/keygen"), |b| {
        b.iter(|| cpa::keygen::<P, Branchy, _, POOL>(&a, &mut pool).unwrap())
    });
    c.bench_function(&format!("{name}/branchy CPA/encrypt"), |b| {
        b.iter(|| cpa::encrypt::<P, Branchy, _, POOL>(&pk, &message, &mut pool).unwrap())
    });
    c.bench_function(&format!("{name}/branchy CPA/decrypt"), |b| {
        b.iter(|| cpa::decrypt::<P, Branchy>(&sk, &ct, &mut out).unwrap())
    });
    c.bench_function(&format!("{name}/branch-free CPA/encrypt"), |b| {
        b.iter(|| cpa::encrypt::<P, ConstantTime, _, POOL>(&pk, &message, &mut pool).unwrap())
    });
    c.bench_function(&format!("{name}/branch-free CPA/decrypt"), |b| {
        b.iter(|| cpa::decrypt::<P, ConstantTime>(&sk, &ct, &mut out).unwrap())
    });

    let (cpk, mut csk) = cca::keygen::<P, Hardened, _, POOL>(&a, &mut pool).unwrap();
    let cct = cca::encrypt::<P, Hardened, _, POOL>(&cpk, &message, &mut pool).unwrap();
    c.bench_function(&format!("{name}/BF + CCA2/fault/encrypt"), |b| {
        b.iter(|| cca::encrypt::<P, Hardened, _, POOL>(&cpk, &message, &mut pool).unwrap())
    });
    c.bench_function(&format!("{name}/BF + CCA2/fault/decrypt"), |b| {
        b.iter(|| {
            cca::decrypt::<P, Hardened, _, _, POOL>(&mut csk, &cct, &mut pool, &mut out).unwrap()
        })
    });
    let mut msk = csk.to_masked(&mut pool).unwrap();
    c.bench_function(&format!("{name}/+ masked/keygen"), |b| {
        b.iter(|| MaskedSecretKey::<P>::keygen::<Hardened, _, POOL>(&a, &mut pool).unwrap())
    });
    c.bench_function(&format!("{name}/+ masked/decrypt"), |b| {
        b.iter(|| {
            cca::decrypt::<P, Hardened, _, _, POOL>(&mut msk, &cct, &mut pool, &mut out).unwrap()
        })
    });
}

fn all(c: &mut Criterion) {
    stages::<Set1>(c);
    stages::<Set3>(c);
}

criterion_group!(benches, all);
criterion_main!(benches);
