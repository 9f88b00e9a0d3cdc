//! SEAL `EncryptionParameters` (none / zlib / zstd), the context built from them and the
//! device contexts of every preset. A loaded object must save and load back unchanged.
#![no_main]

use libfuzzer_sys::fuzz_target;
use zeppelin::{Seal4096, Seal8192, Zeppelin4096};
use zeppelin_seal::device::DeviceContext;
use zeppelin_seal::{ComprMode, EncryptionParameters, SealContext};

fuzz_target!(|data: &[u8]| {
    let Ok(parms) = EncryptionParameters::load(data) else {
        return;
    };
    let again = parms.save(ComprMode::None).expect("a loaded object saves");
    assert_eq!(EncryptionParameters::load(&again).expect("and loads back"), parms);
    if let Ok(ctx) = SealContext::new(parms.clone()) {
        assert!(!ctx.levels().is_empty());
    }
    let _ = DeviceContext::<Seal4096>::from_parameters(parms.clone());
    let _ = DeviceContext::<Zeppelin4096>::from_parameters(parms.clone());
    let _ = DeviceContext::<Seal8192>::from_parameters(parms);
});
