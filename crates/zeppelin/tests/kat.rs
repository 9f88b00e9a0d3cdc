//! Known-answer tests: for the fixed seeds of `zeppelin::kat`, the exact bytes of the secret
//! key, the public key and one ciphertext of each encryption path, for each preset, compared
//! byte for byte with the pinned files under `tests/kats/<preset>/` (and with their SHA-256
//! in `tests/kats/<preset>/SHA256SUMS`).
//!
//! Regenerate (only after an intended change of the byte format or the algorithms; review
//! the diff):
//!
//! ```text
//! ZEPPELIN_REGENERATE_KATS=1 cargo test -p zeppelin --release --test kat
//! ```
#![expect(
    clippy::unwrap_used,
    clippy::panic,
    reason = "test helpers outside #[test] fns: a failure should panic"
)]

use std::fmt::Write as _;
use std::path::PathBuf;

use sha2::{Digest, Sha256};
use zeppelin::{
    encoder, kat, Bfv, Ciphertext, EncryptionSeeds, Params, Plaintext, PublicKey, PublicSeed,
    Seal4096, Seal8192, SecretKey, SecretSeed, SeededCiphertext, Workspace, Zeppelin4096,
};
use zeppelin_ring::ClientKernels;

fn words(ws: &[u32]) -> Vec<u8> {
    ws.iter().flat_map(|w| w.to_le_bytes()).collect()
}

/// Computes every KAT object of a preset on `backend`: (file name, bytes).
fn kat_objects<P: Params, B: ClientKernels>(backend: B) -> Vec<(&'static str, Vec<u8>)> {
    let mut sk = Box::new(SecretKey::<P>::zeroed());
    let mut pk = Box::new(PublicKey::<P>::zeroed());
    let mut ws = Box::new(Workspace::<P, B>::with_backend(backend));
    Bfv::<P>::generate_secret_key_with(&SecretSeed::from_bytes(kat::SECRET_KEY_SEED), &mut sk)
        .unwrap();
    Bfv::<P>::generate_public_key_with(
        &sk,
        &PublicSeed(kat::PUBLIC_KEY_SEED_A),
        &SecretSeed::from_bytes(kat::PUBLIC_KEY_SEED_E),
        &mut pk,
        &mut ws,
    )
    .unwrap();
    let mut slots = vec![0u32; P::N];
    kat::slots::<P>(&mut slots);
    let mut plain = Box::new(Plaintext::<P>::zeroed());
    encoder::encode(&slots, &mut plain).unwrap();

    let mut seeded = Box::new(SeededCiphertext::<P>::zeroed());
    let seeds = EncryptionSeeds {
        a: PublicSeed(kat::SEEDED_SEED_A),
        e: SecretSeed::from_bytes(kat::SEEDED_SEED_E),
    };
    Bfv::<P>::encrypt_seeded_with(&sk, &plain, &seeds, P::K, &mut seeded, &mut ws).unwrap();
    let mut symmetric = Box::new(Ciphertext::<P>::zeroed());
    let seeds = EncryptionSeeds {
        a: PublicSeed(kat::SYMMETRIC_SEED_A),
        e: SecretSeed::from_bytes(kat::SYMMETRIC_SEED_E),
    };
    Bfv::<P>::encrypt_symmetric_with(&sk, &plain, &seeds, P::K, &mut symmetric, &mut ws).unwrap();
    let mut public = Box::new(Ciphertext::<P>::zeroed());
    Bfv::<P>::encrypt_public_with(
        &pk,
        &plain,
        &SecretSeed::from_bytes(kat::PUBLIC_SEED_E),
        P::K,
        &mut public,
        &mut ws,
    )
    .unwrap();

    // Every object decrypts to the KAT slots (so the pinned bytes are a working ciphertext).
    let mut out = Box::new(Plaintext::<P>::zeroed());
    let mut back = vec![0u32; P::N];
    Bfv::<P>::decrypt_seeded(&sk, &seeded, &mut out, &mut ws).unwrap();
    encoder::decode(&out, &mut back).unwrap();
    assert_eq!(back[..], slots[..]);
    for ct in [&symmetric, &public] {
        Bfv::<P>::decrypt(&sk, ct, &mut out, &mut ws).unwrap();
        encoder::decode(&out, &mut back).unwrap();
        assert_eq!(back[..], slots[..]);
    }

    let mut sk_bytes = vec![0u8; SecretKey::<P>::BYTES];
    sk.write_bytes(&mut sk_bytes).unwrap();
    let mut pk_bytes = vec![0u8; PublicKey::<P>::BYTES];
    pk.write_bytes(&mut pk_bytes).unwrap();
    let mut seeded_bytes = vec![0u8; SeededCiphertext::<P>::bytes_at(P::K)];
    seeded.write_bytes(&mut seeded_bytes).unwrap();
    let mut sym_bytes = vec![0u8; Ciphertext::<P>::bytes_at(P::K)];
    symmetric.write_bytes(&mut sym_bytes).unwrap();
    let mut pub_bytes = vec![0u8; Ciphertext::<P>::bytes_at(P::K)];
    public.write_bytes(&mut pub_bytes).unwrap();
    vec![
        ("sk.bin", sk_bytes),
        ("sk_ntt.bin", words(&sk.ntt_residues())),
        ("pk.bin", pk_bytes),
        ("ct_seeded.bin", seeded_bytes),
        ("ct_symmetric.bin", sym_bytes),
        ("ct_public.bin", pub_bytes),
    ]
}

fn check_or_regenerate<P: Params>() {
    check_or_regenerate_on::<P, _>(zeppelin_ring::default_backend());
}

fn check_or_regenerate_on<P: Params, B: ClientKernels>(backend: B) {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/kats")
        .join(P::NAME);
    let objects = kat_objects::<P, B>(backend);
    let mut sums = String::new();
    for (name, bytes) in &objects {
        writeln!(sums, "{:x}  {name}", Sha256::digest(bytes)).unwrap();
    }
    if std::env::var_os("ZEPPELIN_REGENERATE_KATS").is_some() {
        std::fs::create_dir_all(&dir).unwrap();
        for (name, bytes) in &objects {
            std::fs::write(dir.join(name), bytes).unwrap();
        }
        std::fs::write(dir.join("SHA256SUMS"), &sums).unwrap();
        eprintln!("regenerated {}", dir.display());
        return;
    }
    for (name, bytes) in &objects {
        let pinned = std::fs::read(dir.join(name))
            .unwrap_or_else(|e| panic!("{}/{name}: {e} (see the regeneration note)", P::NAME));
        assert_eq!(pinned.len(), bytes.len(), "{}/{name}: length", P::NAME);
        if let Some(at) = pinned.iter().zip(bytes).position(|(a, b)| a != b) {
            panic!("{}/{name}: first differing byte at offset {at}", P::NAME);
        }
    }
    let pinned_sums = std::fs::read_to_string(dir.join("SHA256SUMS")).unwrap();
    assert_eq!(pinned_sums, sums, "{}: SHA256SUMS", P::NAME);
}

#[test]
fn kat_seal4096() {
    check_or_regenerate::<Seal4096>();
}

#[test]
fn kat_zeppelin4096() {
    check_or_regenerate::<Zeppelin4096>();
}

#[test]
fn kat_seal8192() {
    check_or_regenerate::<Seal8192>();
}

/// The client is generic over its backend: every backend this CPU has reproduces the pinned
/// bytes end to end (key generation, the three encryptions, decryption), and so does the
/// portable reference.
#[test]
fn every_backend_reproduces_the_kats() {
    fn all<P: Params>() {
        check_or_regenerate_on::<P, _>(zeppelin_ring::Portable);
        #[cfg(target_arch = "x86_64")]
        {
            use zeppelin_ring::x86::{Avx2, Avx512};
            match Avx2::detect() {
                Some(b) => check_or_regenerate_on::<P, _>(b),
                None => eprintln!("{}: this CPU has no AVX2", P::NAME),
            }
            match Avx512::detect() {
                Some(b) => check_or_regenerate_on::<P, _>(b),
                None => eprintln!("{}: this CPU has no AVX-512", P::NAME),
            }
        }
    }
    if std::env::var_os("ZEPPELIN_REGENERATE_KATS").is_some() {
        return; // the files are written by the default backend only
    }
    all::<Seal4096>();
    all::<Zeppelin4096>();
    all::<Seal8192>();
}
