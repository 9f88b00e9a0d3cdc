//! `zeppelin_seal::device::read_any` on arbitrary bytes (device wire forms, SEAL ciphertexts
//! with none / zlib / zstd, SEAL's seeded forms), then `to_device` (`from_seal` for SEAL
//! forms), `to_seal` and decryption with a fixed key, for every preset. First byte: preset
//! (bits 0-1). Decrypting the parsed form and its device conversion must agree.
#![no_main]

use libfuzzer_sys::fuzz_target;
use zeppelin::{
    Bfv, Ciphertext, Plaintext, Seal4096, Seal8192, SecretKey, Workspace, Zeppelin4096,
};
use zeppelin_seal::device::{self, DeviceContext, SealPreset};

fn run<P: SealPreset>(ctx: &DeviceContext<P>, sk: &SecretKey<P>, body: &[u8]) {
    let Ok(any) = device::read_any(ctx, body) else {
        return;
    };
    let _ = any.level();
    let mut full = Box::new(Ciphertext::<P>::zeroed());
    let converted = any.to_device(ctx, &mut full).is_ok();
    let mut plain = Box::new(Plaintext::<P>::zeroed());
    let mut ws = Box::new(Workspace::<P>::new());
    let decrypted = any.decrypt(ctx, sk, &mut plain, &mut ws).is_ok();
    if any.is_device_form() {
        assert!(converted && decrypted, "a parsed device form converts and decrypts");
    }
    if converted {
        let mut again = Box::new(Plaintext::<P>::zeroed());
        Bfv::<P>::decrypt(sk, &full, &mut again, &mut ws).expect("a converted form decrypts");
        assert!(decrypted && plain.coeffs() == again.coeffs());
        let _ = any.to_seal(ctx).expect("a converted ciphertext goes back to SEAL");
    }
}

fuzz_target!(|data: &[u8]| {
    use std::sync::OnceLock;
    static SEAL4096: OnceLock<(DeviceContext<Seal4096>, Box<SecretKey<Seal4096>>)> =
        OnceLock::new();
    static ZEPPELIN4096: OnceLock<(DeviceContext<Zeppelin4096>, Box<SecretKey<Zeppelin4096>>)> =
        OnceLock::new();
    static SEAL8192: OnceLock<(DeviceContext<Seal8192>, Box<SecretKey<Seal8192>>)> =
        OnceLock::new();
    fn init<P: SealPreset>() -> (DeviceContext<P>, Box<SecretKey<P>>) {
        (fuzz_common::device_context(), fuzz_common::device_secret_key())
    }
    let Some((&select, body)) = data.split_first() else {
        return;
    };
    match select & 3 {
        0 => {
            let (ctx, sk) = SEAL4096.get_or_init(init);
            run(ctx, sk, body)
        }
        1 => {
            let (ctx, sk) = ZEPPELIN4096.get_or_init(init);
            run(ctx, sk, body)
        }
        _ => {
            let (ctx, sk) = SEAL8192.get_or_init(init);
            run(ctx, sk, body)
        }
    }
});
