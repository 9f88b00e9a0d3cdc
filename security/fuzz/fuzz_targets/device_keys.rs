//! The device's key files (`device.sk`: `SecretKey::read_bytes`, `device.pk`:
//! `PublicKey::read_bytes`) of every preset. First byte: preset (bits 0-1), key kind
//! (bit 2). An accepted key must write back to the same bytes (both forms are canonical).
#![no_main]

use libfuzzer_sys::fuzz_target;
use zeppelin::{Params, PublicKey, Seal4096, Seal8192, SecretKey, Zeppelin4096};

fn run<P: Params>(public: bool, body: &[u8]) {
    let mut out = vec![0u8; body.len()];
    if public {
        let mut pk = Box::new(PublicKey::<P>::zeroed());
        if pk.read_bytes(body).is_ok() {
            pk.write_bytes(&mut out).expect("an accepted key writes");
            assert!(out == body);
        }
    } else {
        let mut sk = Box::new(SecretKey::<P>::zeroed());
        if sk.read_bytes(body).is_ok() {
            sk.write_bytes(&mut out).expect("an accepted key writes");
            assert!(out == body);
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&select, body)) = data.split_first() else {
        return;
    };
    let public = select & 4 != 0;
    match select & 3 {
        0 => run::<Seal4096>(public, body),
        1 => run::<Zeppelin4096>(public, body),
        _ => run::<Seal8192>(public, body),
    }
});
