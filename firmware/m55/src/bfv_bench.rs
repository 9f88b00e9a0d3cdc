//! The BFV client on target: round trips, keystream variants that must give identical bytes,
//! and the measurement table (instructions retired under QEMU, median of `RUNS`; stack
//! high-water mark per operation).
//!
//! Keystream variants: `software` = every keystream byte on the core with the fastest
//! constant-time stream, ChaCha20 (Helium kernel), on both streams (seeded ciphertexts
//! record `prng_type` 0xA2); `aes_software` = the constant-time software AES-128-CTR on both
//! streams; `table_public` = table AES public, software AES secret; `excluded` = the
//! recorded bytes replayed. All but `software` write the recording run's bytes (the
//! recording's streams are AES); the ChaCha20 streams draw other masks, secrets and errors,
//! so its outputs are checked by round trips instead.

use crate::harness::Harness;
use crate::meter::{median_instructions, stack_bytes, RUNS};
use crate::metric::{metric, preset_id, slug};
use crate::table_aes::TableAesCtr128;
use crate::tape::{self, Record, Replay};
use cortex_m_semihosting::hprintln;
use zeppelin::params::{Params, RnsStorage};
use zeppelin::{
    encoder, AesCtr128, Bfv, ChaCha20, Ciphertext, EncryptionSeeds, Error, Plaintext, PublicKey,
    PublicKeystream, PublicSeed, SecretKey, SecretKeystream, SecretSeed, SeededCiphertext,
    Workspace,
};
use zeppelin_ring::mve::Mve;

/// Everything one preset's client works on, in one `static`.
pub struct Objects<P: Params> {
    pub sk: SecretKey<P>,
    pub pk: PublicKey<P>,
    pub ct: Ciphertext<P>,
    pub ct_pub: Ciphertext<P>,
    pub sct: SeededCiphertext<P>,
    pub ws: Workspace<P>,
    pub slots: P::Poly,
    pub plain: Plaintext<P>,
    pub out: P::Poly,
}

impl<P: Params> Objects<P> {
    /// All objects empty. Every byte is zero, so a `static` of it goes to `.bss`.
    pub const fn zeroed() -> Self {
        Self {
            sk: SecretKey::zeroed(),
            pk: PublicKey::zeroed(),
            ct: Ciphertext::zeroed(),
            ct_pub: Ciphertext::zeroed(),
            sct: SeededCiphertext::zeroed(),
            ws: Workspace::with_backend(zeppelin_ring::mve::Mve),
            slots: P::Poly::ZERO,
            plain: Plaintext::zeroed(),
            out: P::Poly::ZERO,
        }
    }
}

pub const SK_SEED: [u8; 32] = [0x11; 32];
pub const PK_SEED_A: [u8; 32] = [0x22; 32];
pub const PK_SEED_E: [u8; 32] = [0x33; 32];
pub const ENC_SEED_A: [u8; 32] = [0x44; 32];
pub const ENC_SEED_E: [u8; 32] = [0x55; 32];

pub(crate) fn seeds() -> EncryptionSeeds {
    EncryptionSeeds {
        a: PublicSeed(ENC_SEED_A),
        e: SecretSeed::from_bytes(ENC_SEED_E),
    }
}

// ----- the operations, generic over the two keystreams ---------------------------------

#[expect(
    clippy::extra_unused_type_parameters,
    reason = "every operation has the signature that variants! instantiates per keystream pair"
)]
fn op_encode<P: Params, A: PublicKeystream, E: SecretKeystream>(
    o: &mut Objects<P>,
) -> Result<(), Error> {
    encoder::encode(o.slots.as_ref(), &mut o.plain)
}

fn op_keygen<P: Params, A: PublicKeystream, E: SecretKeystream>(
    o: &mut Objects<P>,
) -> Result<(), Error> {
    Bfv::<P, A, E>::generate_secret_key_with(&SecretSeed::from_bytes(SK_SEED), &mut o.sk)
}

fn op_pk_keygen<P: Params, A: PublicKeystream, E: SecretKeystream>(
    o: &mut Objects<P>,
) -> Result<(), Error> {
    Bfv::<P, A, E>::generate_public_key_with(
        &o.sk,
        &PublicSeed(PK_SEED_A),
        &SecretSeed::from_bytes(PK_SEED_E),
        &mut o.pk,
        &mut o.ws,
    )
}

fn op_seeded<P: Params, A: PublicKeystream, E: SecretKeystream>(
    o: &mut Objects<P>,
) -> Result<(), Error> {
    Bfv::<P, A, E>::encrypt_seeded_with(&o.sk, &o.plain, &seeds(), P::K, &mut o.sct, &mut o.ws)
}

fn op_encode_seeded<P: Params, A: PublicKeystream, E: SecretKeystream>(
    o: &mut Objects<P>,
) -> Result<(), Error> {
    op_encode::<P, A, E>(o)?;
    op_seeded::<P, A, E>(o)
}

fn op_symmetric<P: Params, A: PublicKeystream, E: SecretKeystream>(
    o: &mut Objects<P>,
) -> Result<(), Error> {
    Bfv::<P, A, E>::encrypt_symmetric_with(&o.sk, &o.plain, &seeds(), P::K, &mut o.ct, &mut o.ws)
}

fn op_public<P: Params, A: PublicKeystream, E: SecretKeystream>(
    o: &mut Objects<P>,
) -> Result<(), Error> {
    Bfv::<P, A, E>::encrypt_public_with(
        &o.pk,
        &o.plain,
        &SecretSeed::from_bytes(ENC_SEED_E),
        P::K,
        &mut o.ct_pub,
        &mut o.ws,
    )
}

fn op_decrypt_decode<P: Params, A: PublicKeystream, E: SecretKeystream>(
    o: &mut Objects<P>,
) -> Result<(), Error> {
    Bfv::<P, A, E>::decrypt(&o.sk, &o.ct, &mut o.plain, &mut o.ws)?;
    encoder::decode(&o.plain, o.out.as_mut())
}

fn op_decrypt_seeded_decode<P: Params, A: PublicKeystream, E: SecretKeystream>(
    o: &mut Objects<P>,
) -> Result<(), Error> {
    Bfv::<P, A, E>::decrypt_seeded(&o.sk, &o.sct, &mut o.plain, &mut o.ws)?;
    encoder::decode(&o.plain, o.out.as_mut())
}

// ----- digests: equal outputs across keystream variants --------------------------------

fn fnv(mut h: u64, words: &[u32]) -> u64 {
    for &w in words {
        for b in w.to_le_bytes() {
            h ^= b as u64;
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    h
}

/// FNV-1a over everything the operations write.
pub(crate) fn digest<P: Params>(o: &Objects<P>) -> u64 {
    let mut h = 0xcbf2_9ce4_8422_2325;
    h = fnv(h, &o.sk.ntt_residues());
    h = fnv(h, &o.pk.p0());
    h = fnv(h, &o.pk.p1());
    h = fnv(h, &o.ct.c0());
    h = fnv(h, &o.ct.c1());
    h = fnv(h, &o.ct_pub.c0());
    h = fnv(h, &o.ct_pub.c1());
    h = fnv(h, &o.sct.c0());
    h = fnv(h, o.plain.coeffs());
    fnv(h, o.out.as_ref())
}

/// Both streams of the `software` variant: ChaCha20 on the Helium kernel.
pub type SoftChaCha = ChaCha20<Mve>;

/// One row of the table.
pub struct Row {
    pub name: &'static str,
    /// ChaCha20 (Helium) on both streams.
    pub software: u32,
    pub software_aes: u32,
    pub table_aes_public: u32,
    pub keystream_excluded: u32,
    pub public_bytes: usize,
    pub secret_bytes: usize,
    /// Stack high-water mark: software (ChaCha20), software AES, table AES (public),
    /// replayed keystream.
    pub stack: [usize; 4],
}

type Op<P> = fn(&mut Objects<P>) -> Result<(), Error>;

/// Measures one operation in its four keystream variants and checks that the three with the
/// AES streams write the same bytes (the ChaCha20 one must succeed, its bytes differ).
/// `ops` = the same operation instantiated for (ChaCha20, ChaCha20), (AES, AES), (table
/// AES, AES), (replay, replay) and (record, record). `inputs`, when given, runs (unmeasured)
/// before and after the ChaCha20 variant: the decryption of a seeded ciphertext needs one made
/// with its public generator, and the other variants the AES one back.
fn measure<P: Params>(
    h: &mut Harness,
    o: &mut Objects<P>,
    name: &'static str,
    ops: [Op<P>; 5],
    inputs: Option<[Op<P>; 2]>,
) -> Row {
    let [chacha, sw, table, replay, record] = ops;
    tape::reset();
    let mut ok = record(o).is_ok();
    let reference = digest(o);
    let public_bytes = tape::recorded(0);
    let secret_bytes = tape::recorded(1);
    let _ = tape::take_fault();
    let measure_one = |f: Op<P>, o: &mut Objects<P>| -> (u32, bool) {
        let mut r = Ok(());
        let n = median_instructions(|| r = r.and(f(o)));
        (n, r.is_ok() && digest(o) == reference)
    };
    let mut r = Ok(());
    if let Some([chacha_input, _]) = inputs {
        r = chacha_input(o);
    }
    let software = median_instructions(|| r = r.and(chacha(o)));
    let chacha_stack = stack_bytes(|| {
        let _ = chacha(o);
    });
    if let Some([_, aes_input]) = inputs {
        r = r.and(aes_input(o));
    }
    let ok_chacha = r.is_ok();
    let (software_aes, ok_sw) = measure_one(sw, o);
    let (table_aes_public, ok_table) = measure_one(table, o);
    let (keystream_excluded, ok_replay) = measure_one(replay, o);
    let fault = tape::take_fault();
    ok &= ok_chacha && ok_sw && ok_table && ok_replay && !fault;
    let [sw_stack, table_stack, replay_stack] = [sw, table, replay].map(|f| {
        stack_bytes(|| {
            let _ = f(o);
        })
    });
    let stack = [chacha_stack, sw_stack, table_stack, replay_stack];
    h.check(
        name,
        ok,
        format_args!(
            "keystream variants disagree or fail (chacha ok {ok_chacha}, software AES {ok_sw}, table {ok_table}, replay {ok_replay}, tape fault {fault})"
        ),
    );
    Row {
        name,
        software,
        software_aes,
        table_aes_public,
        keystream_excluded,
        public_bytes,
        secret_bytes,
        stack,
    }
}

macro_rules! variants {
    ($f:ident, $p:ty) => {
        [
            $f::<$p, SoftChaCha, SoftChaCha> as Op<$p>,
            $f::<$p, AesCtr128, AesCtr128> as Op<$p>,
            $f::<$p, TableAesCtr128, AesCtr128> as Op<$p>,
            $f::<$p, Replay<0>, Replay<1>> as Op<$p>,
            $f::<$p, Record<0>, Record<1>> as Op<$p>,
        ]
    };
}

/// Runs the whole client for preset `P` with checks, and returns the measurement rows.
pub fn run<P: Params>(h: &mut Harness, o: &mut Objects<P>) -> [Row; 9] {
    let mut rng = crate::harness::TestRng::new(0x5107);
    for s in o.slots.as_mut().iter_mut() {
        *s = rng.below(P::T);
    }
    let expected = o.slots.clone();
    let rows = [
        measure(h, o, "encode", variants!(op_encode, P), None),
        measure(h, o, "keygen (secret key)", variants!(op_keygen, P), None),
        measure(
            h,
            o,
            "keygen (public key)",
            variants!(op_pk_keygen, P),
            None,
        ),
        measure(h, o, "seeded encrypt", variants!(op_seeded, P), None),
        measure(
            h,
            o,
            "encode + seeded encrypt",
            variants!(op_encode_seeded, P),
            None,
        ),
        measure(
            h,
            o,
            "classic symmetric encrypt",
            variants!(op_symmetric, P),
            None,
        ),
        measure(h, o, "public-key encrypt", variants!(op_public, P), None),
        measure(
            h,
            o,
            "decrypt + decode",
            variants!(op_decrypt_decode, P),
            None,
        ),
        measure(
            h,
            o,
            "decrypt seeded + decode",
            variants!(op_decrypt_seeded_decode, P),
            Some([
                op_seeded::<P, SoftChaCha, SoftChaCha>,
                op_seeded::<P, AesCtr128, AesCtr128>,
            ]),
        ),
    ];
    // Round trips (not a proof of the transform: the KATs and NTT vectors are).
    let r = op_decrypt_decode::<P, AesCtr128, AesCtr128>(o);
    h.check(
        "round trip: classic symmetric",
        r.is_ok() && o.out.as_ref() == expected.as_ref(),
        format_args!("{r:?}"),
    );
    let r = op_decrypt_seeded_decode::<P, AesCtr128, AesCtr128>(o);
    h.check(
        "round trip: seeded",
        r.is_ok() && o.out.as_ref() == expected.as_ref(),
        format_args!("{r:?}"),
    );
    let r = Bfv::<P>::decrypt(&o.sk, &o.ct_pub, &mut o.plain, &mut o.ws)
        .and_then(|_| encoder::decode(&o.plain, o.out.as_mut()));
    h.check(
        "round trip: public key",
        r.is_ok() && o.out.as_ref() == expected.as_ref(),
        format_args!("{r:?}"),
    );
    // Round trips with ChaCha20 on both streams from key generation on (the `software`
    // variant): its masks, secret key, errors and `u` differ from the AES run's, so these are its
    // correctness check. The objects are left as the AES run wrote them.
    fn chacha_round_trips<P: Params>(o: &mut Objects<P>, expected: &P::Poly) -> [bool; 3] {
        let mut ok = [false; 3];
        let keys = op_keygen::<P, SoftChaCha, SoftChaCha>(o)
            .and_then(|_| op_pk_keygen::<P, SoftChaCha, SoftChaCha>(o));
        if keys.is_err() {
            return ok;
        }
        let seeded = op_encode_seeded::<P, SoftChaCha, SoftChaCha>(o)
            .and_then(|_| op_decrypt_seeded_decode::<P, SoftChaCha, SoftChaCha>(o));
        ok[0] = seeded.is_ok() && o.out.as_ref() == expected.as_ref();
        let symmetric = op_encode::<P, SoftChaCha, SoftChaCha>(o)
            .and_then(|_| op_symmetric::<P, SoftChaCha, SoftChaCha>(o))
            .and_then(|_| op_decrypt_decode::<P, SoftChaCha, SoftChaCha>(o));
        ok[1] = symmetric.is_ok() && o.out.as_ref() == expected.as_ref();
        let public = op_encode::<P, SoftChaCha, SoftChaCha>(o)
            .and_then(|_| op_public::<P, SoftChaCha, SoftChaCha>(o))
            .and_then(|_| Bfv::<P>::decrypt(&o.sk, &o.ct_pub, &mut o.plain, &mut o.ws))
            .and_then(|_| encoder::decode(&o.plain, o.out.as_mut()));
        ok[2] = public.is_ok() && o.out.as_ref() == expected.as_ref();
        ok
    }
    let ok = chacha_round_trips(o, &expected);
    h.check(
        "round trips with ChaCha20 on both streams (seeded, classic symmetric, public key)",
        ok == [true; 3],
        format_args!("{ok:?}"),
    );
    // Back to the AES run's objects (the digests of later rows are the AES run's).
    for f in [
        op_keygen::<P, AesCtr128, AesCtr128> as Op<P>,
        op_pk_keygen::<P, AesCtr128, AesCtr128>,
        op_encode_seeded::<P, AesCtr128, AesCtr128>,
        op_symmetric::<P, AesCtr128, AesCtr128>,
        op_public::<P, AesCtr128, AesCtr128>,
    ] {
        let _ = f(o);
    }
    rows
}

pub fn print_table<P: Params>(preset: &str, rows: &[Row]) {
    hprintln!(
        "TABLE BFV client, preset {} (n = {}, {} data primes): instructions retired (QEMU -icount shift=0), median of {} runs",
        preset,
        P::N,
        P::K,
        RUNS
    );
    hprintln!("TABLE | operation | software (ChaCha20 on both streams) | software AES-CTR (both streams) | table AES public stream | keystream excluded | public / secret keystream bytes | stack bytes (software / software AES / table AES / excluded) |");
    hprintln!("TABLE |---|---:|---:|---:|---:|---:|---:|");
    for r in rows {
        hprintln!(
            "TABLE | {} | {} | {} | {} | {} | {} / {} | {} / {} / {} / {} |",
            r.name,
            r.software,
            r.software_aes,
            r.table_aes_public,
            r.keystream_excluded,
            r.public_bytes,
            r.secret_bytes,
            r.stack[0],
            r.stack[1],
            r.stack[2],
            r.stack[3]
        );
    }
    let id = preset_id(preset);
    for r in rows {
        let op = slug(r.name);
        metric(id, op, "software", r.software, r.stack[0]);
        metric(id, op, "aes_software", r.software_aes, r.stack[1]);
        metric(id, op, "table_public", r.table_aes_public, r.stack[2]);
        metric(id, op, "excluded", r.keystream_excluded, r.stack[3]);
    }
}
