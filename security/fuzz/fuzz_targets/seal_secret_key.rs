//! SEAL `SecretKey` (none / zlib / zstd) under the toy context, the Seal4096 context or
//! parameters carried in the input; under Seal4096 also its conversion to the device's
//! secret key (ternary, consistent over every prime). A loaded key must save and load back
//! unchanged.
#![no_main]

use libfuzzer_sys::fuzz_target;
use zeppelin::{Seal4096, SecretKey as DeviceSecretKey};
use zeppelin_seal::{device, ComprMode, SecretKey};

fuzz_target!(|data: &[u8]| {
    let Some((ctx, body)) = fuzz_common::split_seal_input(data) else {
        return;
    };
    let Ok(sk) = SecretKey::load(&ctx, body) else {
        return;
    };
    // Byte equality (not `==`: a NaN `scale` would never equal itself).
    let again = sk.save(ComprMode::None).expect("a loaded key saves");
    let reloaded = SecretKey::load(&ctx, &again).expect("and loads back");
    assert!(reloaded.save(ComprMode::None).expect("saves again") == again);
    if data[0] % 3 == fuzz_common::SELECT_SEAL4096 {
        let mut out = Box::new(DeviceSecretKey::<Seal4096>::zeroed());
        if device::secret_key_from_seal(fuzz_common::seal4096(), &sk, &mut out).is_ok() {
            // A key the bridge accepts converts back to the same SEAL key.
            let back = device::secret_key(fuzz_common::seal4096(), &out).expect("converts back");
            assert!(back.ct_eq(&sk));
        }
    }
});
