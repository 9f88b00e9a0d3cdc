//! Decryption of arbitrary device wire ciphertexts with a fixed key: parse (full or seeded
//! form) then decrypt, decode the slots and measure the noise budget, for every preset.
//! First byte: preset (bits 0-1). A seeded ciphertext must decrypt as its expansion does.
#![no_main]

use libfuzzer_sys::fuzz_target;
use zeppelin::{
    encoder, wire, Bfv, Ciphertext, Params, Plaintext, Seal4096, Seal8192, SecretKey,
    SeededCiphertext, Workspace, Zeppelin4096,
};

fn run<P: Params>(sk: &SecretKey<P>, body: &[u8]) {
    let mut plain = Box::new(Plaintext::<P>::zeroed());
    let mut ws = Box::new(Workspace::<P>::new());
    let mut slots = vec![0u32; P::N];
    let mut full = Box::new(Ciphertext::<P>::zeroed());
    if wire::read_full::<P>(body, &mut full).is_ok() {
        Bfv::<P>::decrypt(sk, &full, &mut plain, &mut ws).expect("a parsed ciphertext decrypts");
        encoder::decode(&plain, &mut slots).expect("a decrypted plaintext decodes");
        let mut x_rows = vec![0u32; full.level() * P::N];
        Bfv::<P>::noise_budget(sk, &full, &mut x_rows, &mut ws).expect("a parsed ciphertext has a budget");
        return;
    }
    let mut seeded = Box::new(SeededCiphertext::<P>::zeroed());
    if wire::read_seeded::<P>(body, &mut seeded).is_ok() {
        Bfv::<P>::decrypt_seeded(sk, &seeded, &mut plain, &mut ws)
            .expect("a parsed ciphertext decrypts");
        Bfv::<P>::expand_ct1(&seeded, &mut full).expect("a parsed seed expands");
        let mut again = Box::new(Plaintext::<P>::zeroed());
        Bfv::<P>::decrypt(sk, &full, &mut again, &mut ws).expect("its expansion decrypts");
        assert!(
            plain.coeffs() == again.coeffs(),
            "seeded decryption equals decryption of the expansion"
        );
        encoder::decode(&plain, &mut slots).expect("a decrypted plaintext decodes");
    }
}

fuzz_target!(|data: &[u8]| {
    use std::sync::OnceLock;
    static SEAL4096: OnceLock<Box<SecretKey<Seal4096>>> = OnceLock::new();
    static ZEPPELIN4096: OnceLock<Box<SecretKey<Zeppelin4096>>> = OnceLock::new();
    static SEAL8192: OnceLock<Box<SecretKey<Seal8192>>> = OnceLock::new();
    let Some((&select, body)) = data.split_first() else {
        return;
    };
    match select & 3 {
        0 => run(SEAL4096.get_or_init(fuzz_common::device_secret_key), body),
        1 => run(ZEPPELIN4096.get_or_init(fuzz_common::device_secret_key), body),
        _ => run(SEAL8192.get_or_init(fuzz_common::device_secret_key), body),
    }
});
