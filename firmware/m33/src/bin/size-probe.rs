//! Flash (code + read-only data) per stage, Set 1, like the paper's ROM column: one image per
//! cargo feature, each calling only that stage's keygen, encrypt and decrypt.
//! `run.sh` builds it once per feature and reports `arm-none-eabi-size`; running it under
//! QEMU executes each operation once and exits 0 if decryption recovered the message.
#![no_std]
#![no_main]

#[path = "../trng.rs"]
mod trng;

use core::hint::black_box;
use cortex_m_rt::entry;
use cortex_m_semihosting::debug;
#[cfg(any(feature = "probe-branchy", feature = "probe-branch-free"))]
use rblwe::cpa;
#[cfg(feature = "probe-branchy")]
use rblwe::Branchy;
#[cfg(feature = "probe-branch-free")]
use rblwe::ConstantTime;
#[cfg(any(feature = "probe-cca", feature = "probe-masked"))]
use rblwe::{cca, Hardened};
use rblwe::{EntropyPool, PublicParameter, Set1};
use trng::SimTrng;

#[entry]
#[allow(
    clippy::empty_loop,
    reason = "reached only without a semihosting host (QEMU exits first); a plain loop keeps \
              the measured images unchanged (allow, not expect: clippy flags it only when a \
              stage is compiled in)"
)]
fn main() -> ! {
    let mut pool: EntropyPool<SimTrng, 1536> = EntropyPool::new(SimTrng::new(black_box(3)));
    let a = PublicParameter::<Set1>::from_seed(&black_box([1u8; 32]));
    let message = black_box([0x5au8; 32]);
    // The default build (`cargo build`, no probe feature) selects no stage: nothing decrypts.
    #[cfg_attr(
        not(any(
            feature = "probe-branchy",
            feature = "probe-branch-free",
            feature = "probe-cca",
            feature = "probe-masked"
        )),
        expect(unused_mut, reason = "no stage selected: nothing writes the message")
    )]
    let mut out = [0u8; 32];
    #[cfg_attr(
        not(any(
            feature = "probe-branchy",
            feature = "probe-branch-free",
            feature = "probe-cca",
            feature = "probe-masked"
        )),
        expect(unused_mut, reason = "no stage selected: nothing decrypts")
    )]
    let mut ok = false;

    #[cfg(feature = "probe-branchy")]
    if let Ok((pk, sk)) = cpa::keygen::<Set1, Branchy, _, 1536>(&a, &mut pool) {
        if let Ok(ct) = cpa::encrypt::<Set1, Branchy, _, 1536>(&pk, &message, &mut pool) {
            ok = cpa::decrypt::<Set1, Branchy>(&sk, &ct, &mut out).is_ok();
        }
    }
    #[cfg(feature = "probe-branch-free")]
    if let Ok((pk, sk)) = cpa::keygen::<Set1, ConstantTime, _, 1536>(&a, &mut pool) {
        if let Ok(ct) = cpa::encrypt::<Set1, ConstantTime, _, 1536>(&pk, &message, &mut pool) {
            ok = cpa::decrypt::<Set1, ConstantTime>(&sk, &ct, &mut out).is_ok();
        }
    }
    #[cfg(feature = "probe-cca")]
    if let Ok((pk, mut sk)) = cca::keygen::<Set1, Hardened, _, 1536>(&a, &mut pool) {
        if let Ok(ct) = cca::encrypt::<Set1, Hardened, _, 1536>(&pk, &message, &mut pool) {
            ok = cca::decrypt::<Set1, Hardened, _, _, 1536>(&mut sk, &ct, &mut pool, &mut out)
                .is_ok();
        }
    }
    #[cfg(feature = "probe-masked")]
    if let Ok((pk, mut sk)) = cca::keygen_masked::<Set1, Hardened, _, 1536>(&a, &mut pool) {
        if let Ok(ct) = cca::encrypt::<Set1, Hardened, _, 1536>(&pk, &message, &mut pool) {
            ok = cca::decrypt::<Set1, Hardened, _, _, 1536>(&mut sk, &ct, &mut pool, &mut out)
                .is_ok();
        }
    }
    let _ = black_box(&a);
    let _ = black_box(&mut pool);
    let pass = ok && out == message;
    debug::exit(if pass {
        debug::EXIT_SUCCESS
    } else {
        debug::EXIT_FAILURE
    });
    loop {}
}

#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    debug::exit(debug::EXIT_FAILURE);
    loop {}
}
