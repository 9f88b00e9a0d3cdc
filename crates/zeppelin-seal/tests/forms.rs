//! `read_any` recognises forms by their headers, never by a byte near the end: thousands of
//! valid zlib and zstd ciphertexts, made as `zeppelin adapt --compress` makes them (the device's
//! seeded wire form read, expanded and switched to SEAL's level, then `Ciphertext::save`), are
//! each recognised as SEAL's and decrypt to their slots. The guess this replaced (the byte
//! where the seeded form has its `prng_type`) misread about one in 256 of them.
#![allow(
    clippy::unwrap_used,
    clippy::panic,
    reason = "helpers outside #[test] functions are test code too (clippy.toml covers only #[test] functions)"
)]

use rand::{Rng, SeedableRng};
use zeppelin::wire::AES_CTR_PRNG_TYPE;
use zeppelin::{
    encoder, Bfv, EncryptionSeeds, Plaintext, PublicSeed, Seal4096, SecretKey, SecretSeed,
    SeededCiphertext, Workspace,
};
use zeppelin_seal::device::{self, AnyCiphertext, DeviceContext};
use zeppelin_seal::wire::HEADER_SIZE;
use zeppelin_seal::ComprMode;

const N: usize = 4096;
const PER_MODE: usize = 2_000;

#[test]
fn every_compressed_ciphertext_is_recognised_by_its_header_and_read_back() {
    let ctx = DeviceContext::<Seal4096>::new().unwrap();
    let mut sk = Box::new(SecretKey::<Seal4096>::zeroed());
    Bfv::<Seal4096>::generate_secret_key_with(&SecretSeed::from_bytes([5; 32]), &mut sk).unwrap();
    let mut ws = Box::new(Workspace::new());
    let mut rng = rand::rngs::StdRng::seed_from_u64(10);
    let (mut plain, mut back) = (
        Box::new(Plaintext::<Seal4096>::zeroed()),
        Box::new(Plaintext::<Seal4096>::zeroed()),
    );
    let mut slots = vec![0u32; N];
    let mut decoded = vec![0u32; N];
    let mut seeded = Box::new(SeededCiphertext::<Seal4096>::zeroed());
    // How many would the old guess have sent to the device's seeded reader.
    let mut old_guess_misreads = 0usize;
    for i in 0..2 * PER_MODE {
        let mode = if i % 2 == 0 {
            ComprMode::Zlib
        } else {
            ComprMode::Zstd
        };
        // Mostly one prime (the compressed bytes are what matters, and zlib is slow); every
        // tenth pair at two or three primes.
        let level = if (i / 2) % 10 == 0 {
            2 + (i / 20) % 2
        } else {
            1
        };
        for s in slots.iter_mut() {
            *s = rng.gen_range(0..65_537);
        }
        encoder::encode(&slots, &mut plain).unwrap();
        let seeds = EncryptionSeeds {
            a: PublicSeed(rng.gen()),
            e: SecretSeed::from_bytes(rng.gen()),
        };
        Bfv::<Seal4096>::encrypt_seeded_with(&sk, &plain, &seeds, level, &mut seeded, &mut ws)
            .unwrap();
        // What `adapt --compress` does with the device's seeded form.
        let wire = device::to_wire_seeded(&seeded).unwrap();
        let device_form = device::read_any(&ctx, &wire).unwrap();
        assert!(matches!(device_form, AnyCiphertext::DeviceSeeded(_)));
        let bytes = device_form.to_seal(&ctx).unwrap().save(mode).unwrap();
        assert_eq!(bytes[5], mode.byte());
        let guess_at = bytes.len().checked_sub(81 - HEADER_SIZE);
        old_guess_misreads += usize::from(guess_at.map(|at| bytes[at]) == Some(AES_CTR_PRNG_TYPE));

        let any = device::read_any(&ctx, &bytes)
            .unwrap_or_else(|e| panic!("ciphertext {i} ({mode:?}, level {level}): {e}"));
        assert!(matches!(any, AnyCiphertext::Seal(_)), "{i}");
        assert_eq!(any.level(), level);
        any.decrypt(&ctx, &sk, &mut back, &mut ws).unwrap();
        encoder::decode(&back, &mut decoded).unwrap();
        assert_eq!(
            decoded, slots,
            "ciphertext {i} ({mode:?}) decrypts to other slots"
        );
    }
    println!(
        "{} zlib and {} zstd ciphertexts read back; the byte-near-the-end guess would have misread {old_guess_misreads}",
        PER_MODE, PER_MODE
    );
}
