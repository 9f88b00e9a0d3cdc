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
    encoder, Bfv, Ciphertext, EncryptionSeeds, PublicKey, PublicSeed, SecretKey, SecretSeed,
    SeededCiphertext, Workspace, N,
};

/// What the symmetric (seeded) client keeps: key, workspace, one seeded ciphertext, slots
/// and plaintext.
pub struct Symmetric<P: Params> {
    sk: SecretKey<P>,
    ws: Workspace,
    ct: SeededCiphertext<P>,
    slots: [u32; N],
    plain: [u32; N],
}

impl<P: Params> Symmetric<P> {
    /// All objects empty (all-zero bytes: a `static` of it goes to `.bss`).
    pub const fn zeroed() -> Self {
        Self {
            sk: SecretKey::zeroed(),
            ws: Workspace::zeroed(),
            ct: SeededCiphertext::zeroed(),
            slots: [0; N],
            plain: [0; N],
        }
    }
}

/// What the public-key client keeps: public key, workspace, one full ciphertext, slots and
/// plaintext (and the secret key only to check the round trip).
pub struct Public<P: Params> {
    sk: SecretKey<P>,
    pk: PublicKey<P>,
    ws: Workspace,
    ct: Ciphertext<P>,
    slots: [u32; N],
    plain: [u32; N],
}

impl<P: Params> Public<P> {
    /// All objects empty (all-zero bytes: a `static` of it goes to `.bss`).
    pub const fn zeroed() -> Self {
        Self {
            sk: SecretKey::zeroed(),
            pk: PublicKey::zeroed(),
            ws: Workspace::zeroed(),
            ct: Ciphertext::zeroed(),
            slots: [0; N],
            plain: [0; N],
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

fn fill_slots(slots: &mut [u32; N]) {
    for (i, s) in slots.iter_mut().enumerate() {
        *s = (i as u32).wrapping_mul(40_503) % zeppelin::T;
    }
}

/// Key generation, encode, seeded encryption, then decryption + decode of it.
pub fn run_symmetric<P: Params>(c: &mut Symmetric<P>, name: &str) -> ! {
    fill_slots(&mut c.slots);
    let expected = c.slots;
    let seeds = EncryptionSeeds {
        a: PublicSeed([0x5a; 32]),
        e: SecretSeed::from_bytes([0xa5; 32]),
    };
    let r = Bfv::<P>::generate_secret_key_with(&SecretSeed::from_bytes([7; 32]), &mut c.sk)
        .and_then(|_| encoder::encode(&c.slots, &mut c.plain))
        .and_then(|_| {
            Bfv::<P>::encrypt_seeded_with(&c.sk, &c.plain, &seeds, P::K, &mut c.ct, &mut c.ws)
        })
        .and_then(|_| Bfv::<P>::decrypt_seeded(&c.sk, &c.ct, &mut c.plain, &mut c.ws))
        .and_then(|_| encoder::decode(&c.plain, &mut c.slots));
    finish(r.is_ok() && c.slots == expected, name)
}

/// Key generation (secret and public), encode, public-key encryption, decryption + decode.
pub fn run_public<P: Params>(c: &mut Public<P>, name: &str) -> ! {
    fill_slots(&mut c.slots);
    let expected = c.slots;
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
        .and_then(|_| encoder::encode(&c.slots, &mut c.plain))
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
        .and_then(|_| Bfv::<P>::decrypt(&c.sk, &c.ct, &mut c.plain, &mut c.ws))
        .and_then(|_| encoder::decode(&c.plain, &mut c.slots));
    finish(r.is_ok() && c.slots == expected, name)
}

#[panic_handler]
fn panic(info: &core::panic::PanicInfo) -> ! {
    hprintln!("FAIL panic: {}", info);
    debug::exit(debug::EXIT_FAILURE);
    loop {}
}
