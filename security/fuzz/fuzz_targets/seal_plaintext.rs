//! SEAL `Plaintext` (none / zlib / zstd) under the toy context, the Seal4096 context or
//! parameters carried in the input. A loaded plaintext must save and load back unchanged.
#![no_main]

use libfuzzer_sys::fuzz_target;
use zeppelin_seal::{ComprMode, Plaintext};

fuzz_target!(|data: &[u8]| {
    let Some((ctx, body)) = fuzz_common::split_seal_input(data) else {
        return;
    };
    let Ok(pt) = Plaintext::load(&ctx, body) else {
        return;
    };
    // Byte equality (not `==`: a NaN `scale` would never equal itself).
    let again = pt.save(ComprMode::None).expect("a loaded plaintext saves");
    let reloaded = Plaintext::load(&ctx, &again).expect("and loads back");
    assert!(reloaded.save(ComprMode::None).expect("saves again") == again);
});
