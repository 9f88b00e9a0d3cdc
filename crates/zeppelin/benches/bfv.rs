//! Client operations on the host: encode + seeded encrypt, encode + public-key encrypt,
//! decrypt + decode (and key generation), for every preset. The NTT itself is benchmarked in
//! crates/ring.
//!
//! `cargo bench -p zeppelin --bench bfv`
#![expect(
    clippy::unwrap_used,
    reason = "benchmark harness: a failed setup should abort the run"
)]

use criterion::{criterion_group, criterion_main, Criterion};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use zeppelin::{
    encoder, Bfv, Ciphertext, Params, Plaintext, PublicKey, Seal4096, Seal8192, SecretKey,
    SeededCiphertext, Workspace, Zeppelin4096,
};

fn bench_preset<P: Params>(c: &mut Criterion) {
    let mut rng = StdRng::seed_from_u64(1);
    let mut sk = Box::new(SecretKey::<P>::zeroed());
    let mut pk = Box::new(PublicKey::<P>::zeroed());
    let mut ws = Box::new(Workspace::new());
    Bfv::<P>::generate_secret_key(&mut rng, &mut sk).unwrap();
    Bfv::<P>::generate_public_key(&sk, &mut rng, &mut pk, &mut ws).unwrap();
    let slots: Vec<u32> = (0..P::N).map(|_| rng.gen_range(0..P::T)).collect();
    let mut plain = Box::new(Plaintext::<P>::zeroed());
    let mut seeded = Box::new(SeededCiphertext::<P>::zeroed());
    let mut ct = Box::new(Ciphertext::<P>::zeroed());
    let mut back = vec![0u32; P::N];
    let name = P::NAME;

    c.bench_function(&format!("{name}/keygen (secret + public)"), |b| {
        b.iter(|| {
            Bfv::<P>::generate_secret_key(&mut rng, &mut sk).unwrap();
            Bfv::<P>::generate_public_key(&sk, &mut rng, &mut pk, &mut ws).unwrap();
        })
    });
    c.bench_function(&format!("{name}/encode + seeded encrypt"), |b| {
        b.iter(|| {
            encoder::encode(&slots, &mut plain).unwrap();
            Bfv::<P>::encrypt_seeded(&sk, &plain, &mut rng, &mut seeded, &mut ws).unwrap();
        })
    });
    c.bench_function(&format!("{name}/encode + symmetric encrypt"), |b| {
        b.iter(|| {
            encoder::encode(&slots, &mut plain).unwrap();
            Bfv::<P>::encrypt_symmetric(&sk, &plain, &mut rng, &mut ct, &mut ws).unwrap();
        })
    });
    c.bench_function(&format!("{name}/encode + public-key encrypt"), |b| {
        b.iter(|| {
            encoder::encode(&slots, &mut plain).unwrap();
            Bfv::<P>::encrypt_public(&pk, &plain, &mut rng, &mut ct, &mut ws).unwrap();
        })
    });
    c.bench_function(&format!("{name}/decrypt + decode"), |b| {
        b.iter(|| {
            Bfv::<P>::decrypt(&sk, &ct, &mut plain, &mut ws).unwrap();
            encoder::decode(&plain, &mut back).unwrap();
        })
    });
    c.bench_function(&format!("{name}/decrypt seeded + decode"), |b| {
        b.iter(|| {
            Bfv::<P>::decrypt_seeded(&sk, &seeded, &mut plain, &mut ws).unwrap();
            encoder::decode(&plain, &mut back).unwrap();
        })
    });
    assert_eq!(back[..], slots[..]);
}

fn benches(c: &mut Criterion) {
    bench_preset::<Seal4096>(c);
    bench_preset::<Zeppelin4096>(c);
    bench_preset::<Seal8192>(c);
}

criterion_group!(bfv, benches);
criterion_main!(bfv);
