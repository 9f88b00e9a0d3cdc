//! RBLWE files (`rblwe::container`, `ZRBL` header) and the payload readers of every
//! parameter set, kind and scheme (`from_bytes`). First byte: the kind the caller expects.
//! An accepted public key or ciphertext writes back to the same payload.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rblwe::cca::{CcaCiphertext, CcaPublicKey, CcaSecretKey};
use rblwe::container::{self, Header, Kind, Scheme};
use rblwe::{Ciphertext, ParamSet, PublicKey, SecretKey, Set1, Set2, Set3, SetId};

fn payload<P: ParamSet>(header: Header, payload: &[u8]) {
    match (header.kind, header.scheme) {
        (Kind::PublicKey, Scheme::Cpa) => {
            if let Ok(pk) = PublicKey::<P>::from_bytes(payload) {
                assert!(pk.to_bytes().as_ref() == payload);
                let _ = pk.parameter();
            }
        }
        (Kind::PublicKey, Scheme::Cca2) => {
            if let Ok(pk) = CcaPublicKey::<P>::from_bytes(payload) {
                assert!(pk.to_bytes().as_ref() == payload);
            }
        }
        (Kind::SecretKey, Scheme::Cpa) => {
            if let Ok(sk) = SecretKey::<P>::from_bytes(payload) {
                let mut out = vec![0u8; payload.len()];
                sk.write_bytes(&mut out).expect("an accepted key writes");
                assert!(out == payload);
            }
        }
        (Kind::SecretKey, Scheme::Cca2) => {
            if let Ok(sk) = CcaSecretKey::<P>::from_bytes(payload) {
                let mut out = vec![0u8; payload.len()];
                sk.write_bytes(&mut out).expect("an accepted key writes");
                assert!(out == payload);
                let _ = sk.public_key();
            }
        }
        (Kind::Ciphertext, Scheme::Cpa) => {
            if let Ok(ct) = Ciphertext::<P>::from_bytes(payload) {
                assert!(ct.to_bytes().as_ref() == payload);
            }
        }
        (Kind::Ciphertext, Scheme::Cca2) => {
            if let Ok(ct) = CcaCiphertext::<P>::from_bytes(payload) {
                let mut out = vec![0u8; payload.len()];
                ct.write_bytes(&mut out).expect("an accepted ciphertext writes");
                assert!(out == payload);
            }
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&select, file)) = data.split_first() else {
        return;
    };
    let expected = Kind::ALL[usize::from(select) % Kind::ALL.len()];
    let Ok((header, body)) = container::open(file, expected) else {
        return;
    };
    let mut out = vec![0u8; header.file_len()];
    container::write(header, body, &mut out).expect("an opened container writes back");
    assert!(out == file);
    match header.set {
        SetId::Set1 => payload::<Set1>(header, body),
        SetId::Set2 => payload::<Set2>(header, body),
        SetId::Set3 => payload::<Set3>(header, body),
    }
});
