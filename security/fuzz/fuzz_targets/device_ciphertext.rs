//! The device's ciphertext wire forms (`zeppelin::wire`: full and seeded, SEAL layout) and
//! the raw row forms (`Ciphertext::read_bytes`, `SeededCiphertext::read_bytes`) of every
//! preset. First byte: preset (bits 0-1) and, for the raw forms, the level (bits 4-7).
//! An accepted input must write back and read back to the same rows.
#![no_main]

use libfuzzer_sys::fuzz_target;
use zeppelin::{wire, Ciphertext, Params, Seal4096, Seal8192, SeededCiphertext, Zeppelin4096};

fn run<P: Params>(level: usize, body: &[u8]) {
    let mut full = Box::new(Ciphertext::<P>::zeroed());
    if wire::read_full::<P>(body, &mut full).is_ok() {
        let mut out = vec![0u8; wire::full_len::<P>(full.level())];
        let len = wire::write_full(&full, &mut out).expect("an accepted ciphertext writes");
        let mut back = Box::new(Ciphertext::<P>::zeroed());
        wire::read_full::<P>(&out[..len], &mut back).expect("and reads back");
        assert!(back.level() == full.level() && *back.c0() == *full.c0());
        assert!(*back.c1() == *full.c1());
    }
    let mut seeded = Box::new(SeededCiphertext::<P>::zeroed());
    if wire::read_seeded::<P>(body, &mut seeded).is_ok() {
        let mut out = vec![0u8; wire::seeded_len::<P>(seeded.level())];
        let len = wire::write_seeded(&seeded, &mut out).expect("an accepted ciphertext writes");
        let mut back = Box::new(SeededCiphertext::<P>::zeroed());
        wire::read_seeded::<P>(&out[..len], &mut back).expect("and reads back");
        assert!(back.level() == seeded.level() && *back.c0() == *seeded.c0());
        assert!(back.seed().0 == seeded.seed().0);
    }
    let mut raw = Box::new(Ciphertext::<P>::zeroed());
    if raw.read_bytes(level, body).is_ok() {
        let mut out = vec![0u8; body.len()];
        raw.write_bytes(&mut out).expect("an accepted ciphertext writes");
        assert!(out == body, "raw full form is canonical");
    }
    let mut raw = Box::new(SeededCiphertext::<P>::zeroed());
    if raw.read_bytes(level, body).is_ok() {
        let mut out = vec![0u8; body.len()];
        raw.write_bytes(&mut out).expect("an accepted ciphertext writes");
        assert!(out == body, "raw seeded form is canonical");
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&select, body)) = data.split_first() else {
        return;
    };
    let level = usize::from(select >> 4);
    match select & 3 {
        0 => run::<Seal4096>(level, body),
        1 => run::<Zeppelin4096>(level, body),
        _ => run::<Seal8192>(level, body),
    }
});
