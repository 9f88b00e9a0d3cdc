//! The Seal8192 preset (n = 8192, seven data primes) on target, in an image of its own: its
//! objects (about 1.6 MB) do not fit the 2 MiB SRAM beside the main image's two 4096
//! presets, and its six KAT files (1.8 MB) fill `.bulk` alone.
//!
//! - KATs: the bfv crate's files `crates/zeppelin/tests/kats/seal8192/` reproduced word for word
//!   (secret key, its NTT form, public key, seeded, symmetric and public-key ciphertexts),
//!   and the pinned ciphertexts decrypt to the KAT slots.
//! - Measurements: instructions retired (QEMU `-icount shift=0`, median of 11 runs) and the
//!   stack high-water mark of every client operation, in two keystream variants: `software`
//!   (ChaCha20 secret stream on the Helium kernel, table-AES public stream) and
//!   `aes_software` (software AES-CTR on both streams).
//!
//! PASS/FAIL lines, then `RESULT n passed, m failed`; exit status 0 only if all passed.
#![no_std]
#![no_main]

#[path = "../harness.rs"]
#[expect(dead_code, reason = "shared with the main image, which uses all of it")]
mod harness;
#[path = "../meter.rs"]
#[expect(dead_code, reason = "shared with the main image, which uses all of it")]
mod meter;
#[path = "../metric.rs"]
#[expect(
    dead_code,
    reason = "the NTT figures are the main image's: calling the transforms from here changes this audited image's inlining"
)]
mod metric;

use cortex_m_semihosting::hprintln;
use harness::Harness;
use zeppelin::params::Params;
use zeppelin::{
    encoder, kat, AesCtr128, Bfv, ChaCha20, Ciphertext, EncryptionSeeds, Error, Plaintext,
    PublicKey, PublicKeystream, PublicSeed, Seal8192, SecretKey, SecretKeystream, SecretSeed,
    SeededCiphertext, Workspace,
};
use zeppelin_harness::report;

type P = Seal8192;
const N: usize = 8192;

macro_rules! kat_file {
    ($name:ident, $file:literal) => {
        #[link_section = ".bulk"]
        static $name: [u8; include_bytes!(concat!(
            "../../../../crates/zeppelin/tests/kats/seal8192/",
            $file
        ))
        .len()] = *include_bytes!(concat!(
            "../../../../crates/zeppelin/tests/kats/seal8192/",
            $file
        ));
    };
}

kat_file!(SK, "sk.bin");
kat_file!(SK_NTT, "sk_ntt.bin");
kat_file!(PK, "pk.bin");
kat_file!(CT_SEEDED, "ct_seeded.bin");
kat_file!(CT_SYMMETRIC, "ct_symmetric.bin");
kat_file!(CT_PUBLIC, "ct_public.bin");

/// Everything the client works on (one full ciphertext serves both full paths).
struct Objects {
    sk: SecretKey<P>,
    pk: PublicKey<P>,
    ct: Ciphertext<P>,
    sct: SeededCiphertext<P>,
    ws: Workspace<P>,
    slots: [u32; N],
    plain: Plaintext<P>,
    out: [u32; N],
}

static mut OBJECTS: Objects = Objects {
    sk: SecretKey::zeroed(),
    pk: PublicKey::zeroed(),
    ct: Ciphertext::zeroed(),
    sct: SeededCiphertext::zeroed(),
    ws: Workspace::with_backend(zeppelin_ring::mve::Mve),
    slots: [0; N],
    plain: Plaintext::zeroed(),
    out: [0; N],
};

/// `words` as little-endian bytes equal `bytes`.
fn words_equal(words: &[u32], bytes: &[u8]) -> bool {
    words.len() * 4 == bytes.len()
        && words
            .iter()
            .zip(bytes.chunks_exact(4))
            .all(|(w, c)| w.to_le_bytes() == [c[0], c[1], c[2], c[3]])
}

/// The file is `first ‖ second` (each as little-endian words).
fn pair_equal(first: &[u32], second: &[u32], file: &[u8]) -> bool {
    let (a, b) = file.split_at(file.len().min(first.len() * 4));
    words_equal(first, a) && words_equal(second, b)
}

fn kat_seeds(a: [u8; 32], e: [u8; 32]) -> EncryptionSeeds {
    EncryptionSeeds {
        a: PublicSeed(a),
        e: SecretSeed::from_bytes(e),
    }
}

fn run_kats(h: &mut Harness, o: &mut Objects) {
    let r = Bfv::<P>::generate_secret_key_with(
        &SecretSeed::from_bytes(kat::SECRET_KEY_SEED),
        &mut o.sk,
    );
    let ternary_ok =
        o.sk.ternary()
            .iter()
            .zip(SK.iter())
            .all(|(&c, &b)| c as u8 == b)
            && SK.len() == N;
    h.check(
        "seal8192 KAT sk.bin",
        r.is_ok() && ternary_ok,
        format_args!("{r:?}"),
    );
    h.check(
        "seal8192 KAT sk_ntt.bin",
        words_equal(&o.sk.ntt_residues(), &SK_NTT),
        format_args!("NTT-form secret key differs"),
    );
    let r = Bfv::<P>::generate_public_key_with(
        &o.sk,
        &PublicSeed(kat::PUBLIC_KEY_SEED_A),
        &SecretSeed::from_bytes(kat::PUBLIC_KEY_SEED_E),
        &mut o.pk,
        &mut o.ws,
    );
    h.check(
        "seal8192 KAT pk.bin",
        r.is_ok() && pair_equal(&o.pk.p0(), &o.pk.p1(), &PK),
        format_args!("{r:?}"),
    );

    kat::slots::<P>(&mut o.slots);
    let seeds = kat_seeds(kat::SEEDED_SEED_A, kat::SEEDED_SEED_E);
    let r = encoder::encode(&o.slots, &mut o.plain).and_then(|_| {
        Bfv::<P>::encrypt_seeded_with(&o.sk, &o.plain, &seeds, P::K, &mut o.sct, &mut o.ws)
    });
    // The raw seeded form: c0 ‖ prng_type ‖ 32-byte seed.
    let (c0_bytes, tail) = CT_SEEDED.split_at(CT_SEEDED.len() - 33);
    let (prng_type, seed_bytes) = tail.split_at(1);
    h.check(
        "seal8192 KAT ct_seeded.bin",
        r.is_ok()
            && words_equal(&o.sct.c0(), c0_bytes)
            && o.sct.generator().prng_type() == prng_type[0]
            && o.sct.seed().0 == seed_bytes,
        format_args!("{r:?}"),
    );
    let seeds = kat_seeds(kat::SYMMETRIC_SEED_A, kat::SYMMETRIC_SEED_E);
    let r = Bfv::<P>::encrypt_symmetric_with(&o.sk, &o.plain, &seeds, P::K, &mut o.ct, &mut o.ws);
    h.check(
        "seal8192 KAT ct_symmetric.bin",
        r.is_ok() && pair_equal(&o.ct.c0(), &o.ct.c1(), &CT_SYMMETRIC),
        format_args!("{r:?}"),
    );
    let r = Bfv::<P>::encrypt_public_with(
        &o.pk,
        &o.plain,
        &SecretSeed::from_bytes(kat::PUBLIC_SEED_E),
        P::K,
        &mut o.ct,
        &mut o.ws,
    );
    h.check(
        "seal8192 KAT ct_public.bin",
        r.is_ok() && pair_equal(&o.ct.c0(), &o.ct.c1(), &CT_PUBLIC),
        format_args!("{r:?}"),
    );

    // The pinned ciphertexts, read back from the files, decrypt on target to the KAT slots.
    let r = o
        .sct
        .read_bytes(P::K, &CT_SEEDED)
        .and_then(|_| Bfv::<P>::decrypt_seeded(&o.sk, &o.sct, &mut o.plain, &mut o.ws))
        .and_then(|_| encoder::decode(&o.plain, &mut o.out));
    let mut ok = r.is_ok() && o.out == o.slots;
    for file in [&CT_SYMMETRIC[..], &CT_PUBLIC[..]] {
        let r =
            o.ct.read_bytes(P::K, file)
                .and_then(|_| Bfv::<P>::decrypt(&o.sk, &o.ct, &mut o.plain, &mut o.ws))
                .and_then(|_| encoder::decode(&o.plain, &mut o.out));
        ok &= r.is_ok() && o.out == o.slots;
    }
    h.check(
        "seal8192 KAT files decrypt to the KAT slots",
        ok,
        format_args!("a pinned ciphertext did not decrypt to (7919 i + 13) mod t"),
    );
}

type Op = fn(&mut Objects) -> Result<(), Error>;

/// Both streams of the `software` variant: ChaCha20 on the Helium kernel (the public one
/// recorded in seeded ciphertexts as `prng_type` 0xA2).
type SoftChaCha = ChaCha20<zeppelin_ring::mve::Mve>;

fn op_encode(o: &mut Objects) -> Result<(), Error> {
    encoder::encode(&o.slots, &mut o.plain)
}

fn op_keygen<A: PublicKeystream, E: SecretKeystream>(o: &mut Objects) -> Result<(), Error> {
    Bfv::<P, A, E>::generate_secret_key_with(&SecretSeed::from_bytes([0x11; 32]), &mut o.sk)
}

fn op_pk_keygen<A: PublicKeystream, E: SecretKeystream>(o: &mut Objects) -> Result<(), Error> {
    Bfv::<P, A, E>::generate_public_key_with(
        &o.sk,
        &PublicSeed([0x22; 32]),
        &SecretSeed::from_bytes([0x33; 32]),
        &mut o.pk,
        &mut o.ws,
    )
}

fn op_encode_seeded<A: PublicKeystream, E: SecretKeystream>(o: &mut Objects) -> Result<(), Error> {
    op_encode(o)?;
    let seeds = kat_seeds([0x44; 32], [0x55; 32]);
    Bfv::<P, A, E>::encrypt_seeded_with(&o.sk, &o.plain, &seeds, P::K, &mut o.sct, &mut o.ws)
}

fn op_encode_public<A: PublicKeystream, E: SecretKeystream>(o: &mut Objects) -> Result<(), Error> {
    op_encode(o)?;
    Bfv::<P, A, E>::encrypt_public_with(
        &o.pk,
        &o.plain,
        &SecretSeed::from_bytes([0x66; 32]),
        P::K,
        &mut o.ct,
        &mut o.ws,
    )
}

fn op_decrypt_decode(o: &mut Objects) -> Result<(), Error> {
    Bfv::<P>::decrypt(&o.sk, &o.ct, &mut o.plain, &mut o.ws)?;
    encoder::decode(&o.plain, &mut o.out)
}

fn op_decrypt_seeded_decode<A: PublicKeystream, E: SecretKeystream>(
    o: &mut Objects,
) -> Result<(), Error> {
    Bfv::<P, A, E>::decrypt_seeded(&o.sk, &o.sct, &mut o.plain, &mut o.ws)?;
    encoder::decode(&o.plain, &mut o.out)
}

/// Every operation with the public stream `A` and the secret stream `E`.
fn ops<A: PublicKeystream, E: SecretKeystream>() -> [(&'static str, Op); 7] {
    [
        ("encode", op_encode),
        ("keygen (secret key)", op_keygen::<A, E>),
        ("keygen (public key)", op_pk_keygen::<A, E>),
        ("encode + seeded encrypt", op_encode_seeded::<A, E>),
        ("encode + public-key encrypt", op_encode_public::<A, E>),
        ("decrypt + decode", op_decrypt_decode),
        ("decrypt seeded + decode", op_decrypt_seeded_decode::<A, E>),
    ]
}

/// Measures every operation (instructions, stack) in both keystream variants — `software`
/// (ChaCha20 on both streams: every keystream byte on the core, the fastest constant-time
/// stream) and `aes_software` (software AES-CTR on both) — and
/// checks the round trips of each.
fn measure(h: &mut Harness, o: &mut Objects) {
    let mut rng = harness::TestRng::new(0x8192);
    for s in o.slots.iter_mut() {
        *s = rng.below(P::T);
    }
    let variants = [
        (
            "software",
            "ChaCha20 on both streams",
            ops::<SoftChaCha, SoftChaCha>(),
        ),
        (
            "aes_software",
            "software AES-CTR on both streams",
            ops::<AesCtr128, AesCtr128>(),
        ),
    ];
    let mut rows = [(0u32, 0usize); 14];
    for (v, (variant, label, ops)) in variants.into_iter().enumerate() {
        for (i, (name, op)) in ops.into_iter().enumerate() {
            let mut r = Ok(());
            let instructions = meter::median_instructions(|| r = r.and(op(o)));
            let stack = meter::stack_bytes(|| {
                let _ = op(o);
            });
            rows[7 * v + i] = (instructions, stack);
            metric::metric("seal8192", metric::slug(name), variant, instructions, stack);
            h.check(name, r.is_ok(), format_args!("{r:?}"));
        }
        // The last two rows decrypted the public-key and the seeded ciphertext of the slots.
        let r = op_decrypt_decode(o);
        h.check(
            if v == 0 {
                "seal8192 round trip: public key (ChaCha20 streams)"
            } else {
                "seal8192 round trip: public key"
            },
            r.is_ok() && o.out == o.slots,
            format_args!("{label}: {r:?}"),
        );
        // With the generator the ciphertext records (ChaCha20 in the first variant).
        let r = zeppelin::decrypt_seeded(&o.sk, &o.sct, &mut o.plain, &mut o.ws)
            .and_then(|_| encoder::decode(&o.plain, &mut o.out));
        h.check(
            if v == 0 {
                "seal8192 round trip: seeded (ChaCha20 streams)"
            } else {
                "seal8192 round trip: seeded"
            },
            r.is_ok() && o.out == o.slots,
            format_args!("{label}: {r:?}"),
        );
    }
    hprintln!(
        "TABLE BFV client, preset Seal8192 (n = {}, {} data primes): instructions retired (QEMU -icount shift=0), median of {} runs",
        P::N,
        P::K,
        meter::RUNS
    );
    hprintln!("TABLE | operation | software (ChaCha20 on both streams) | software AES-CTR (both streams) | stack bytes (software / software AES) |");
    hprintln!("TABLE |---|---:|---:|---:|");
    for (i, (name, _)) in ops::<AesCtr128, AesCtr128>().into_iter().enumerate() {
        let (c, a) = (rows[i], rows[7 + i]);
        hprintln!("TABLE | {} | {} | {} | {} / {} |", name, c.0, a.0, c.1, a.1);
    }
}

#[cortex_m_rt::entry]
fn main() -> ! {
    let mut core = match cortex_m::Peripherals::take() {
        Some(p) => p,
        None => report::fail_and_exit(format_args!("harness: core peripherals already taken")),
    };
    meter::start_systick(&mut core.SYST);
    let mut h = Harness::default();
    // SAFETY: single-threaded firmware without interrupts; the only reference to the static.
    let o = unsafe { &mut *core::ptr::addr_of_mut!(OBJECTS) };
    run_kats(&mut h, o);
    measure(&mut h, o);
    hprintln!("RESULT {} passed, {} failed", h.passed, h.failed);
    h.exit()
}

#[panic_handler]
fn panic(info: &core::panic::PanicInfo) -> ! {
    report::fail_and_exit(format_args!("panic: {}", info))
}
