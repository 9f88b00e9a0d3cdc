//! Trace image for the trace-equivalence check (`security/trace/run.sh`), preset Seal4096 on
//! the Helium backend: runs one operation on every pair of the input that the script loaded
//! at `INPUT` (see `zeppelin_harness::trace`), each side of a pair inside its own
//! trace window, with the pair's public inputs prepared identically for both sides and only
//! the secret block differing. Setup (keys, public ciphertexts, encodings) runs outside the
//! windows. Prints how many pairs gave differing outputs (the secrets reached the operation)
//! and exits 0 only if every operation returned Ok.
//!
//! Not part of `firmware/m55/run.sh`: without a loaded input it prints FAIL and exits 1.
#![no_std]
#![no_main]

use core::hint::black_box;
use cortex_m_semihosting::{debug, hprintln};
use zeppelin::params::{Params, RnsStorage};
use zeppelin::sampler::{sample_gaussian, sample_ternary};
use zeppelin::{
    encoder, AesCtr128, Bfv, Ciphertext, EncryptionSeeds, Error, Plaintext, PublicKey, PublicSeed,
    Seal4096, SecretKey, SecretPrng, SecretSeed, SeededCiphertext, Workspace,
};
use zeppelin_harness::trace::{
    self, ctrace_close, ctrace_open, digest, Expand, Input, Pair, SECRET_BYTES,
};
use zeppelin_ring::mve::Mve;

type P = Seal4096;

// The upper half of the AN547's 4 MiB SRAM: memory.x gives the image only the lower 2 MiB.
zeppelin_harness::input_at!(INPUT, 0x2130_0000);
const N: usize = <P as Params>::N;

/// The operations, by the number the script writes into the header.
#[derive(Clone, Copy)]
enum Op {
    Encode = 1,
    Decode = 2,
    SecretKeygen = 3,
    PublicKeygen = 4,
    EncryptSymmetric = 5,
    EncryptSeeded = 6,
    EncryptPublic = 7,
    Decrypt = 8,
    DecryptSeeded = 9,
    Gaussian = 10,
    Ternary = 11,
    LeakyBranch = 200,
    LeakyLoad = 201,
    LeakyGather = 202,
}

impl Op {
    fn from_number(n: u32) -> Option<Self> {
        [
            Op::Encode,
            Op::Decode,
            Op::SecretKeygen,
            Op::PublicKeygen,
            Op::EncryptSymmetric,
            Op::EncryptSeeded,
            Op::EncryptPublic,
            Op::Decrypt,
            Op::DecryptSeeded,
            Op::Gaussian,
            Op::Ternary,
            Op::LeakyBranch,
            Op::LeakyLoad,
            Op::LeakyGather,
        ]
        .into_iter()
        .find(|&op| op as u32 == n)
    }
}

/// Everything the operations keep, in `.bss`.
struct State {
    sk: SecretKey<P>,
    public_sk: SecretKey<P>,
    pk: PublicKey<P>,
    ws: Workspace<P, Mve>,
    ct: Ciphertext<P>,
    seeded: SeededCiphertext<P>,
    plain: Plaintext<P>,
    slots: <P as Params>::Poly,
    small: [i8; N],
    table: [u32; 64],
    /// The current side's secret block, at one address for both sides.
    secret: [u8; SECRET_BYTES],
}

static mut STATE: State = State {
    sk: SecretKey::zeroed(),
    public_sk: SecretKey::zeroed(),
    pk: PublicKey::zeroed(),
    ws: Workspace::with_backend(Mve),
    ct: Ciphertext::zeroed(),
    seeded: SeededCiphertext::zeroed(),
    plain: Plaintext::zeroed(),
    slots: <P as Params>::Poly::ZERO,
    small: [0; N],
    table: [0; 64],
    secret: [0; SECRET_BYTES],
};

fn fill_slots(slots: &mut [u32], seed: &[u8; 32]) {
    let mut g = Expand::new(seed);
    for s in slots.iter_mut() {
        *s = g.next_u32() % <P as Params>::T;
    }
}

/// The pair's public inputs, equal for both sides: a public key and a ciphertext under a
/// key derived from the public block (public data: it only has to be fixed per pair).
fn public_setup(s: &mut State, op: Op, public: &[u8; 32]) -> Result<(), Error> {
    match op {
        Op::EncryptPublic | Op::Decrypt | Op::DecryptSeeded => {
            Bfv::<P>::generate_secret_key_with(&SecretSeed::from_bytes(*public), &mut s.public_sk)?;
            fill_slots(s.slots.as_mut(), public);
            encoder::encode(s.slots.as_ref(), &mut s.plain)?;
            let seeds = EncryptionSeeds {
                a: PublicSeed(*public),
                e: SecretSeed::from_bytes(*public),
            };
            match op {
                Op::EncryptPublic => Bfv::<P>::generate_public_key_with(
                    &s.public_sk,
                    &PublicSeed(*public),
                    &SecretSeed::from_bytes(*public),
                    &mut s.pk,
                    &mut s.ws,
                ),
                Op::Decrypt => Bfv::<P>::encrypt_symmetric_with(
                    &s.public_sk,
                    &s.plain,
                    &seeds,
                    <P as Params>::K,
                    &mut s.ct,
                    &mut s.ws,
                ),
                _ => Bfv::<P>::encrypt_seeded_with(
                    &s.public_sk,
                    &s.plain,
                    &seeds,
                    <P as Params>::K,
                    &mut s.seeded,
                    &mut s.ws,
                ),
            }
        }
        _ => Ok(()),
    }
}

/// The side's secret inputs, outside the window: key, encoded message.
fn secret_setup(s: &mut State, op: Op, pair: &Pair, side: usize) -> Result<(), Error> {
    let key = SecretSeed::from_bytes(pair.seed(side, 0));
    match op {
        Op::PublicKeygen
        | Op::EncryptSymmetric
        | Op::EncryptSeeded
        | Op::Decrypt
        | Op::DecryptSeeded => Bfv::<P>::generate_secret_key_with(&key, &mut s.sk)?,
        _ => {}
    }
    fill_slots(s.slots.as_mut(), &pair.seed(side, 2));
    match op {
        Op::Decode | Op::EncryptSymmetric | Op::EncryptSeeded | Op::EncryptPublic => {
            encoder::encode(s.slots.as_ref(), &mut s.plain)?
        }
        _ => {}
    }
    let mut g = Expand::new(&pair.public);
    for t in s.table.iter_mut() {
        *t = g.next_u32();
    }
    Ok(())
}

/// The operation on the current side of `pair` (its secret block in `s.secret`), inside one
/// trace window; the digest of its output. Out of line, and every secret value built before
/// the window opens, so that both sides run with the same stack addresses.
#[inline(never)]
fn traced(s: &mut State, op: Op, pair: &Pair) -> Result<u32, Error> {
    let secret = s.secret;
    let seed = |j: usize| {
        let mut x = [0u8; 32];
        x.copy_from_slice(&secret[32 * j..32 * (j + 1)]);
        x
    };
    let public = PublicSeed(pair.public);
    let key = black_box(SecretSeed::from_bytes(seed(0)));
    let noise = black_box(SecretSeed::from_bytes(seed(1)));
    let word = black_box(u32::from_le_bytes([
        secret[0], secret[1], secret[2], secret[3],
    ]));
    let mut leak = 0u32;
    ctrace_open();
    let r = match op {
        Op::Encode => encoder::encode(s.slots.as_ref(), &mut s.plain),
        Op::Decode => encoder::decode(&s.plain, s.slots.as_mut()),
        Op::SecretKeygen => Bfv::<P>::generate_secret_key_with(&key, &mut s.sk),
        Op::PublicKeygen => {
            Bfv::<P>::generate_public_key_with(&s.sk, &public, &noise, &mut s.pk, &mut s.ws)
        }
        Op::EncryptSymmetric => Bfv::<P>::encrypt_symmetric_with(
            &s.sk,
            &s.plain,
            &EncryptionSeeds {
                a: public,
                e: noise,
            },
            <P as Params>::K,
            &mut s.ct,
            &mut s.ws,
        ),
        Op::EncryptSeeded => Bfv::<P>::encrypt_seeded_with(
            &s.sk,
            &s.plain,
            &EncryptionSeeds {
                a: public,
                e: noise,
            },
            <P as Params>::K,
            &mut s.seeded,
            &mut s.ws,
        ),
        Op::EncryptPublic => Bfv::<P>::encrypt_public_with(
            &s.pk,
            &s.plain,
            &noise,
            <P as Params>::K,
            &mut s.ct,
            &mut s.ws,
        ),
        Op::Decrypt => Bfv::<P>::decrypt(&s.sk, &s.ct, &mut s.plain, &mut s.ws),
        Op::DecryptSeeded => Bfv::<P>::decrypt_seeded(&s.sk, &s.seeded, &mut s.plain, &mut s.ws),
        Op::Gaussian => {
            sample_gaussian(
                &mut SecretPrng::<AesCtr128>::new(&noise),
                &mut s.small,
                &Mve,
            );
            Ok(())
        }
        Op::Ternary => {
            sample_ternary(&mut SecretPrng::<AesCtr128>::new(&noise), &mut s.small);
            Ok(())
        }
        Op::LeakyBranch => {
            leak = trace::leaky_branch(word);
            Ok(())
        }
        Op::LeakyLoad => {
            leak = trace::leaky_load(&s.table, word);
            Ok(())
        }
        Op::LeakyGather => {
            leak = leaky_gather(&s.table, word);
            Ok(())
        }
    };
    ctrace_close();
    r?;
    Ok(match op {
        Op::Encode | Op::Decrypt | Op::DecryptSeeded => {
            digest(s.plain.coeffs().iter().flat_map(|c| c.to_le_bytes()))
        }
        Op::Decode => digest(s.slots.as_ref().iter().flat_map(|c| c.to_le_bytes())),
        Op::SecretKeygen => digest(s.sk.ternary().iter().map(|&c| c as u8)),
        Op::PublicKeygen => digest(s.pk.p0().iter().flat_map(|c| c.to_le_bytes())),
        Op::EncryptSymmetric | Op::EncryptPublic => {
            digest(s.ct.c0().iter().flat_map(|c| c.to_le_bytes()))
        }
        Op::EncryptSeeded => digest(s.seeded.c0().iter().flat_map(|c| c.to_le_bytes())),
        Op::Gaussian | Op::Ternary => digest(s.small.iter().map(|&c| c as u8)),
        Op::LeakyBranch | Op::LeakyLoad | Op::LeakyGather => digest(leak.to_le_bytes()),
    })
}

/// Leaky Helium control: a gather load (`vldrw.u32` with a vector of offsets) whose four
/// lane offsets are all the secret index `secret % 64` (words).
#[inline(never)]
fn leaky_gather(table: &[u32; 64], secret: u32) -> u32 {
    let out: u32;
    // SAFETY: every lane offset is (secret & 63) words, inside `table`.
    unsafe {
        core::arch::asm!(
            "and {i}, {i}, #63",
            "vdup.32 q1, {i}",
            "vldrw.u32 q0, [{t}, q1, uxtw #2]",
            "vaddv.u32 r0, q0",
            i = inout(reg) secret => _,
            t = in(reg) table.as_ptr(),
            // vaddv needs an even-numbered destination.
            out("r0") out,
            out("s0") _, out("s1") _, out("s2") _, out("s3") _,
            out("s4") _, out("s5") _, out("s6") _, out("s7") _,
            options(readonly, nostack, preserves_flags),
        );
    }
    out
}

#[cortex_m_rt::entry]
fn main() -> ! {
    // SAFETY: the only reference to the static, taken once.
    let s = unsafe { &mut *core::ptr::addr_of_mut!(STATE) };
    // SAFETY: SRAM that no section of the image occupies (see `INPUT`).
    let input = unsafe { Input::at(INPUT) };
    let Some((request, op)) = input
        .request()
        .and_then(|r| Op::from_number(r.op).map(|op| (r, op)))
    else {
        hprintln!("FAIL trace: no input loaded at CTRACE_INPUT_ADDR (see security/trace/run.sh)");
        exit(false)
    };
    let mut failures = 0usize;
    let mut differing = 0usize;
    for k in 0..request.pairs {
        let pair = input.pair(k);
        let mut digests = [0u32; 2];
        let ok = public_setup(s, op, &pair.public).is_ok();
        for (side, d) in digests.iter_mut().enumerate() {
            s.secret = pair.secret[side];
            match secret_setup(s, op, &pair, side).and_then(|_| traced(s, op, &pair)) {
                Ok(x) if ok => *d = x,
                _ => failures += 1,
            }
        }
        differing += (digests[0] != digests[1]) as usize;
    }
    hprintln!(
        "TRACE op {} pairs {} differing-outputs {} failures {}",
        request.op,
        request.pairs,
        differing,
        failures
    );
    exit(failures == 0)
}

#[expect(
    clippy::empty_loop,
    reason = "reached only without a semihosting host (QEMU exits first)"
)]
fn exit(ok: bool) -> ! {
    debug::exit(if ok {
        debug::EXIT_SUCCESS
    } else {
        debug::EXIT_FAILURE
    });
    loop {}
}

#[panic_handler]
fn panic(info: &core::panic::PanicInfo) -> ! {
    hprintln!("FAIL panic: {}", info);
    exit(false)
}
