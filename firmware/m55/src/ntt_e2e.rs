//! Table 3 on target: the client's end-to-end operations with the scalar NTT against the
//! Helium NTT, in the same image, on the same objects, keystream excluded (the exact bytes
//! recorded from software AES, replayed).
//!
//! The two workspaces differ in the forward and inverse transforms only (`ScalarNtt`: the
//! `Portable` transforms, every other kernel Helium); both runs must write the bytes the
//! recording run wrote.

use crate::bfv_bench::{digest, seeds, Objects, ENC_SEED_E};
use crate::harness::Harness;
use crate::meter::{median_instructions, stack_bytes, RUNS};
use crate::metric::{metric, preset_id};
use crate::scalar_ntt::ScalarNtt;
use crate::tape::{self, Record, Replay};
use cortex_m_semihosting::hprintln;
use zeppelin::params::Params;
use zeppelin::{encoder, Bfv, Error, PublicKeystream, SecretKeystream, SecretSeed, Workspace};

/// Runs `$body` with `$ws` bound to the Helium workspace (`SCALAR = false`) or the
/// scalar-NTT one.
macro_rules! with_ws {
    ($o:ident, $scalar_ws:ident, $scalar:ident, |$ws:ident| $body:expr) => {
        if $scalar {
            let $ws = $scalar_ws;
            $body
        } else {
            let $ws = &mut $o.ws;
            $body
        }
    };
}

fn encode_seeded<P: Params, A: PublicKeystream, E: SecretKeystream, const SCALAR: bool>(
    o: &mut Objects<P>,
    scalar_ws: &mut Workspace<P, ScalarNtt>,
) -> Result<(), Error> {
    encoder::encode(o.slots.as_ref(), &mut o.plain)?;
    with_ws!(o, scalar_ws, SCALAR, |ws| {
        Bfv::<P, A, E>::encrypt_seeded_with(&o.sk, &o.plain, &seeds(), P::K, &mut o.sct, ws)
    })
}

fn encode_symmetric<P: Params, A: PublicKeystream, E: SecretKeystream, const SCALAR: bool>(
    o: &mut Objects<P>,
    scalar_ws: &mut Workspace<P, ScalarNtt>,
) -> Result<(), Error> {
    encoder::encode(o.slots.as_ref(), &mut o.plain)?;
    with_ws!(o, scalar_ws, SCALAR, |ws| {
        Bfv::<P, A, E>::encrypt_symmetric_with(&o.sk, &o.plain, &seeds(), P::K, &mut o.ct, ws)
    })
}

fn encode_public<P: Params, A: PublicKeystream, E: SecretKeystream, const SCALAR: bool>(
    o: &mut Objects<P>,
    scalar_ws: &mut Workspace<P, ScalarNtt>,
) -> Result<(), Error> {
    encoder::encode(o.slots.as_ref(), &mut o.plain)?;
    with_ws!(o, scalar_ws, SCALAR, |ws| {
        Bfv::<P, A, E>::encrypt_public_with(
            &o.pk,
            &o.plain,
            &SecretSeed::from_bytes(ENC_SEED_E),
            P::K,
            &mut o.ct_pub,
            ws,
        )
    })
}

fn decrypt_decode<P: Params, A: PublicKeystream, E: SecretKeystream, const SCALAR: bool>(
    o: &mut Objects<P>,
    scalar_ws: &mut Workspace<P, ScalarNtt>,
) -> Result<(), Error> {
    with_ws!(o, scalar_ws, SCALAR, |ws| Bfv::<P, A, E>::decrypt(
        &o.sk,
        &o.ct,
        &mut o.plain,
        ws
    ))?;
    encoder::decode(&o.plain, o.out.as_mut())
}

fn decrypt_seeded_decode<P: Params, A: PublicKeystream, E: SecretKeystream, const SCALAR: bool>(
    o: &mut Objects<P>,
    scalar_ws: &mut Workspace<P, ScalarNtt>,
) -> Result<(), Error> {
    with_ws!(o, scalar_ws, SCALAR, |ws| Bfv::<P, A, E>::decrypt_seeded(
        &o.sk,
        &o.sct,
        &mut o.plain,
        ws
    ))?;
    encoder::decode(&o.plain, o.out.as_mut())
}

type Op<P> = fn(&mut Objects<P>, &mut Workspace<P, ScalarNtt>) -> Result<(), Error>;

/// One row of Table 3: instructions and stack with the Helium NTT and with the scalar NTT.
pub struct Row {
    pub slug: &'static str,
    pub helium: u32,
    pub scalar: u32,
    pub stack: [usize; 2],
}

/// `[record, helium replay, scalar replay]` of one operation.
macro_rules! variants {
    ($f:ident, $p:ty) => {
        [
            $f::<$p, Record<0>, Record<1>, false> as Op<$p>,
            $f::<$p, Replay<0>, Replay<1>, false> as Op<$p>,
            $f::<$p, Replay<0>, Replay<1>, true> as Op<$p>,
        ]
    };
}

fn measure<P: Params>(
    h: &mut Harness,
    o: &mut Objects<P>,
    scalar_ws: &mut Workspace<P, ScalarNtt>,
    name: &'static str,
    slug: &'static str,
    ops: [Op<P>; 3],
) -> Row {
    let [record, helium, scalar] = ops;
    tape::reset();
    let mut ok = record(o, scalar_ws).is_ok();
    let reference = digest(o);
    let _ = tape::take_fault();
    let run = |f: Op<P>, o: &mut Objects<P>, ws: &mut Workspace<P, ScalarNtt>| -> (u32, bool) {
        let mut r = Ok(());
        let n = median_instructions(|| r = r.and(f(o, ws)));
        (n, r.is_ok() && digest(o) == reference)
    };
    let (helium_n, ok_helium) = run(helium, o, scalar_ws);
    let (scalar_n, ok_scalar) = run(scalar, o, scalar_ws);
    let stack = [helium, scalar].map(|f| {
        stack_bytes(|| {
            let _ = f(o, scalar_ws);
        })
    });
    let fault = tape::take_fault();
    ok &= ok_helium && ok_scalar && !fault;
    h.check(
        name,
        ok,
        format_args!("scalar-NTT and Helium-NTT runs disagree (helium {ok_helium}, scalar {ok_scalar}, tape fault {fault})"),
    );
    Row {
        slug,
        helium: helium_n,
        scalar: scalar_n,
        stack,
    }
}

/// Table 3 for preset `P`, with `o`'s keys set (the public key too) and its slots filled.
pub fn run<P: Params>(
    h: &mut Harness,
    o: &mut Objects<P>,
    scalar_ws: &mut Workspace<P, ScalarNtt>,
    preset: &str,
) {
    let rows = [
        measure(
            h,
            o,
            scalar_ws,
            "scalar vs Helium NTT: encode + seeded encrypt",
            "encode_seeded_encrypt",
            variants!(encode_seeded, P),
        ),
        measure(
            h,
            o,
            scalar_ws,
            "scalar vs Helium NTT: encode + classic symmetric encrypt",
            "encode_symmetric_encrypt",
            variants!(encode_symmetric, P),
        ),
        measure(
            h,
            o,
            scalar_ws,
            "scalar vs Helium NTT: encode + public-key encrypt",
            "encode_public_encrypt",
            variants!(encode_public, P),
        ),
        measure(
            h,
            o,
            scalar_ws,
            "scalar vs Helium NTT: decrypt + decode",
            "decrypt_decode",
            variants!(decrypt_decode, P),
        ),
        measure(
            h,
            o,
            scalar_ws,
            "scalar vs Helium NTT: decrypt seeded + decode",
            "decrypt_seeded_decode",
            variants!(decrypt_seeded_decode, P),
        ),
    ];
    hprintln!(
        "TABLE3 end-to-end, scalar NTT vs Helium NTT, preset {} (n = {}, {} data primes): instructions retired (QEMU -icount shift=0), median of {} runs, keystream excluded",
        preset,
        P::N,
        P::K,
        RUNS
    );
    hprintln!(
        "TABLE3 | operation | scalar NTT | Helium NTT | ratio | stack bytes (scalar / Helium) |"
    );
    let id = preset_id(preset);
    for r in &rows {
        hprintln!(
            "TABLE3 | {} | {} | {} | {} | {:.2}x | {} / {} |",
            preset,
            r.slug,
            r.scalar,
            r.helium,
            r.scalar as f32 / r.helium as f32,
            r.stack[1],
            r.stack[0]
        );
        metric(id, r.slug, "excluded_scalar_ntt", r.scalar, r.stack[1]);
        metric(id, r.slug, "excluded_helium_ntt", r.helium, r.stack[0]);
    }
}
