#![expect(dead_code, reason = "each client image uses one of the two paths")]
//! A minimal client image per preset and path, so that `arm-none-eabi-size` of its ELF is the
//! client's own static memory (no test vectors, tapes or harness buffers): the figures the
//! memory goal is about. Each image runs its operations once, checks the round trip, prints
//! PASS/FAIL and exits with the status.
//!
//! Each image keeps its objects in one `static` built by a `const fn zeroed()`: every byte is
//! zero, so it goes to `.bss` and costs no flash.

use cortex_m_semihosting::{debug, hprintln};
use zeppelin::params::Params;
use zeppelin::{
    encoder, Bfv, Ciphertext, EncryptionSeeds, Plaintext, PublicKey, PublicSeed, SecretKey,
    SecretSeed, SeededCiphertext, Workspace,
};

/// What the symmetric (seeded) client keeps: key, workspace, one seeded ciphertext and the
/// plaintext. No slot array: the readings go straight into the plaintext
/// (`encoder::encode_with`) and come back out of it (`encoder::decode_with`).
pub struct Symmetric<P: Params> {
    sk: SecretKey<P>,
    ws: Workspace<P>,
    ct: SeededCiphertext<P>,
    plain: Plaintext<P>,
}

impl<P: Params> Symmetric<P> {
    /// All objects empty (all-zero bytes: a `static` of it goes to `.bss`).
    pub const fn zeroed() -> Self {
        Self {
            sk: SecretKey::zeroed(),
            ws: Workspace::with_backend(zeppelin_ring::mve::Mve),
            ct: SeededCiphertext::zeroed(),
            plain: Plaintext::zeroed(),
        }
    }
}

/// What the public-key client keeps: public key, workspace, one full ciphertext and the
/// plaintext (and the secret key only to check the round trip); no slot array, as above.
pub struct Public<P: Params> {
    sk: SecretKey<P>,
    pk: PublicKey<P>,
    ws: Workspace<P>,
    ct: Ciphertext<P>,
    plain: Plaintext<P>,
}

impl<P: Params> Public<P> {
    /// All objects empty (all-zero bytes: a `static` of it goes to `.bss`).
    pub const fn zeroed() -> Self {
        Self {
            sk: SecretKey::zeroed(),
            pk: PublicKey::zeroed(),
            ws: Workspace::with_backend(zeppelin_ring::mve::Mve),
            ct: Ciphertext::zeroed(),
            plain: Plaintext::zeroed(),
        }
    }
}

#[expect(
    clippy::empty_loop,
    reason = "reached only without a semihosting host (QEMU exits first); a plain loop keeps the measured images unchanged"
)]
fn finish(ok: bool, what: &str) -> ! {
    if ok {
        hprintln!("PASS {}", what);
        debug::exit(debug::EXIT_SUCCESS);
    } else {
        hprintln!("FAIL {}", what);
        debug::exit(debug::EXIT_FAILURE);
    }
    loop {}
}

/// The test reading of slot `i` (no copy of the slots is kept: the stack stays the client's).
fn reading<P: Params>(i: usize) -> u32 {
    (i as u32).wrapping_mul(40_503) % P::T
}

/// Decodes `plain` and checks every slot against its reading.
fn decodes_to_readings<P: Params>(plain: &mut Plaintext<P>) -> bool {
    let mut ok = true;
    let decoded = encoder::decode_with(plain, |i, v| ok &= v == reading::<P>(i));
    decoded.is_ok() && ok
}

/// Key generation, encode, seeded encryption, then decryption + decode of it.
pub fn run_symmetric<P: Params>(c: &mut Symmetric<P>, name: &str) -> ! {
    let seeds = EncryptionSeeds {
        a: PublicSeed([0x5a; 32]),
        e: SecretSeed::from_bytes([0xa5; 32]),
    };
    let r = Bfv::<P>::generate_secret_key_with(&SecretSeed::from_bytes([7; 32]), &mut c.sk)
        .and_then(|_| encoder::encode_with(&mut c.plain, reading::<P>))
        .and_then(|_| {
            Bfv::<P>::encrypt_seeded_with(&c.sk, &c.plain, &seeds, P::K, &mut c.ct, &mut c.ws)
        })
        .and_then(|_| Bfv::<P>::decrypt_seeded(&c.sk, &c.ct, &mut c.plain, &mut c.ws));
    finish(r.is_ok() && decodes_to_readings(&mut c.plain), name)
}

/// Key generation (secret and public), encode, public-key encryption, decryption + decode.
pub fn run_public<P: Params>(c: &mut Public<P>, name: &str) -> ! {
    let r = Bfv::<P>::generate_secret_key_with(&SecretSeed::from_bytes([7; 32]), &mut c.sk)
        .and_then(|_| {
            Bfv::<P>::generate_public_key_with(
                &c.sk,
                &PublicSeed([1; 32]),
                &SecretSeed::from_bytes([2; 32]),
                &mut c.pk,
                &mut c.ws,
            )
        })
        .and_then(|_| encoder::encode_with(&mut c.plain, reading::<P>))
        .and_then(|_| {
            Bfv::<P>::encrypt_public_with(
                &c.pk,
                &c.plain,
                &SecretSeed::from_bytes([3; 32]),
                P::K,
                &mut c.ct,
                &mut c.ws,
            )
        })
        .and_then(|_| Bfv::<P>::decrypt(&c.sk, &c.ct, &mut c.plain, &mut c.ws));
    finish(r.is_ok() && decodes_to_readings(&mut c.plain), name)
}

#[panic_handler]
fn panic(info: &core::panic::PanicInfo) -> ! {
    hprintln!("FAIL panic: {}", info);
    debug::exit(debug::EXIT_FAILURE);
    loop {}
}
