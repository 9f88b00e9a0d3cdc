//! evalmult `.bin` polynomials (`vectors::poly_from_le_bytes`: `towers × ring_dim`
//! little-endian `u32` residues, each below its tower's modulus) under small contexts.
//! First byte: context. An accepted polynomial encodes back to the same bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use zeppelin_evalmult::vectors::{poly_from_le_bytes, poly_to_le_bytes};
use zeppelin_evalmult::Input;

fuzz_target!(|data: &[u8]| {
    let Some((&select, body)) = data.split_first() else {
        return;
    };
    let ctx = fuzz_common::evalmult_context(select);
    if let Ok(poly) = poly_from_le_bytes(ctx, Input::C2, body) {
        assert!(poly_to_le_bytes(&poly) == body);
    }
});
