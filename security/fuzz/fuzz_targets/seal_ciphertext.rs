//! SEAL `Ciphertext` (full and SEAL's seeded forms; none / zlib / zstd) under the toy
//! context, the Seal4096 context or parameters carried in the input. A loaded ciphertext
//! must save and load back unchanged.
#![no_main]

use libfuzzer_sys::fuzz_target;
use zeppelin_seal::{Ciphertext, ComprMode};

fuzz_target!(|data: &[u8]| {
    let Some((ctx, body)) = fuzz_common::split_seal_input(data) else {
        return;
    };
    let Ok(ct) = Ciphertext::load(&ctx, body) else {
        return;
    };
    // Byte equality (not `==`: a NaN `scale` would never equal itself).
    let again = ct.save(ComprMode::None).expect("a loaded ciphertext saves");
    let reloaded = Ciphertext::load(&ctx, &again).expect("and loads back");
    assert!(reloaded.save(ComprMode::None).expect("saves again") == again);
});
