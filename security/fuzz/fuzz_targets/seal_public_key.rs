//! SEAL `PublicKey` (none / zlib / zstd) under the toy context, the Seal4096 context or
//! parameters carried in the input; under Seal4096 also its conversion to the device's
//! public key. A loaded key must save and load back unchanged.
#![no_main]

use libfuzzer_sys::fuzz_target;
use zeppelin::{PublicKey as DevicePublicKey, Seal4096};
use zeppelin_seal::{device, ComprMode, PublicKey};

fuzz_target!(|data: &[u8]| {
    let Some((ctx, body)) = fuzz_common::split_seal_input(data) else {
        return;
    };
    let Ok(pk) = PublicKey::load(&ctx, body) else {
        return;
    };
    // Byte equality (not `==`: a NaN `scale` would never equal itself).
    let again = pk.save(ComprMode::None).expect("a loaded key saves");
    let reloaded = PublicKey::load(&ctx, &again).expect("and loads back");
    assert!(reloaded.save(ComprMode::None).expect("saves again") == again);
    if data[0] % 3 == fuzz_common::SELECT_SEAL4096 {
        let mut out = Box::new(DevicePublicKey::<Seal4096>::zeroed());
        let _ = device::public_key_from_seal(fuzz_common::seal4096(), &pk, &mut out);
    }
});
