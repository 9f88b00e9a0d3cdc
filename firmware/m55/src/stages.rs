//! Table 7 on target: live memory per stage of encryption and decryption, measured. Each
//! stage is one client call run on its own, in the order a device runs them (software
//! AES-CTR on both streams, Helium backend); per stage:
//!
//! - the stack high-water mark of the call (stack painting, `meter::stack_bytes`);
//! - the static objects live in the stage, at their exact sizes (`size_of` of the types the
//!   client keeps: what the stage reads or writes, and the key it keeps for the next stage);
//! - the read-only tables it reads (NTT tables of the data primes, the encoder's table of
//!   `t` and its slot permutations), reported apart: a board keeps them in flash or DTCM.
//!
//! Live = stack + static objects. The stages' outputs are checked (round trips) so the
//! figures are those of calls that did their work.

use crate::bfv_bench::{seeds, Objects, ENC_SEED_E, PK_SEED_A, PK_SEED_E, SK_SEED};
use crate::harness::Harness;
use crate::meter::stack_bytes;
use core::mem::{size_of, size_of_val};
use cortex_m_semihosting::hprintln;
use zeppelin::params::Params;
use zeppelin::{
    encoder, Bfv, Ciphertext, Error, Plaintext, PublicKey, PublicSeed, SecretKey, SecretSeed,
    SeededCiphertext, Workspace,
};

/// The objects a stage can have live.
#[derive(Clone, Copy)]
enum Obj {
    Sk,
    Pk,
    Ws,
    Slots,
    Plain,
    SeededCt,
    FullCt,
}

impl Obj {
    fn name(self) -> &'static str {
        match self {
            Obj::Sk => "secret key",
            Obj::Pk => "public key",
            Obj::Ws => "workspace",
            Obj::Slots => "slots",
            Obj::Plain => "plaintext",
            Obj::SeededCt => "seeded ciphertext",
            Obj::FullCt => "ciphertext",
        }
    }

    fn bytes<P: Params>(self) -> usize {
        match self {
            Obj::Sk => size_of::<SecretKey<P>>(),
            Obj::Pk => size_of::<PublicKey<P>>(),
            Obj::Ws => size_of::<Workspace<P>>(),
            Obj::Slots => size_of::<P::Poly>(),
            Obj::Plain => size_of::<Plaintext<P>>(),
            Obj::SeededCt => size_of::<SeededCiphertext<P>>(),
            Obj::FullCt => size_of::<Ciphertext<P>>(),
        }
    }
}

/// Which read-only tables a stage reads.
#[derive(Clone, Copy)]
enum Tables {
    /// The encoder's: the NTT table of `t` and the slot permutations.
    Encoder,
    /// The data primes' NTT tables.
    Ntt,
}

fn table_bytes<P: Params>(t: Tables) -> usize {
    match t {
        Tables::Encoder => {
            size_of_val(P::t_table())
                + size_of_val(P::slot_to_ntt())
                + size_of_val(P::ntt_to_slot())
        }
        Tables::Ntt => size_of_val(P::ntt_tables()),
    }
}

struct Stage<P: Params> {
    path: &'static str,
    name: &'static str,
    live: &'static [Obj],
    tables: Tables,
    op: fn(&mut Objects<P>) -> Result<(), Error>,
}

fn keygen<P: Params>(o: &mut Objects<P>) -> Result<(), Error> {
    Bfv::<P>::generate_secret_key_with(&SecretSeed::from_bytes(SK_SEED), &mut o.sk)
}

fn pk_keygen<P: Params>(o: &mut Objects<P>) -> Result<(), Error> {
    Bfv::<P>::generate_public_key_with(
        &o.sk,
        &PublicSeed(PK_SEED_A),
        &SecretSeed::from_bytes(PK_SEED_E),
        &mut o.pk,
        &mut o.ws,
    )
}

fn encode<P: Params>(o: &mut Objects<P>) -> Result<(), Error> {
    encoder::encode(o.slots.as_ref(), &mut o.plain)
}

fn seeded<P: Params>(o: &mut Objects<P>) -> Result<(), Error> {
    Bfv::<P>::encrypt_seeded_with(&o.sk, &o.plain, &seeds(), P::K, &mut o.sct, &mut o.ws)
}

fn public<P: Params>(o: &mut Objects<P>) -> Result<(), Error> {
    Bfv::<P>::encrypt_public_with(
        &o.pk,
        &o.plain,
        &SecretSeed::from_bytes(ENC_SEED_E),
        P::K,
        &mut o.ct_pub,
        &mut o.ws,
    )
}

fn decrypt_seeded<P: Params>(o: &mut Objects<P>) -> Result<(), Error> {
    Bfv::<P>::decrypt_seeded(&o.sk, &o.sct, &mut o.plain, &mut o.ws)
}

fn decrypt_public<P: Params>(o: &mut Objects<P>) -> Result<(), Error> {
    Bfv::<P>::decrypt(&o.sk, &o.ct_pub, &mut o.plain, &mut o.ws)
}

fn decode<P: Params>(o: &mut Objects<P>) -> Result<(), Error> {
    encoder::decode(&o.plain, o.out.as_mut())
}

use Obj::*;

/// The objects of a stage with their sizes: `name bytes; name bytes; ...`.
struct Live<P: Params>(&'static [Obj], core::marker::PhantomData<P>);

impl<P: Params> core::fmt::Display for Live<P> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        for (i, b) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str("; ")?;
            }
            write!(f, "{} {}", b.name(), b.bytes::<P>())?;
        }
        Ok(())
    }
}

/// Runs every stage once for its stack, in device order, and prints `TABLE7` lines:
/// `TABLE7 | preset | path | stage | stack | static | tables | objects (name bytes; ...) |`.
pub fn run<P: Params>(h: &mut Harness, o: &mut Objects<P>, preset: &str) {
    let stages: [Stage<P>; 10] = [
        Stage {
            path: "symmetric encryption",
            name: "secret-key generation",
            live: &[Sk],
            tables: Tables::Ntt,
            op: keygen::<P>,
        },
        Stage {
            path: "symmetric encryption",
            name: "encode",
            live: &[Sk, Slots, Plain],
            tables: Tables::Encoder,
            op: encode::<P>,
        },
        Stage {
            path: "symmetric encryption",
            name: "seeded encrypt",
            live: &[Sk, Plain, Ws, SeededCt],
            tables: Tables::Ntt,
            op: seeded::<P>,
        },
        Stage {
            path: "symmetric decryption",
            name: "decrypt seeded (BEHZ)",
            live: &[Sk, SeededCt, Ws, Plain],
            tables: Tables::Ntt,
            op: decrypt_seeded::<P>,
        },
        Stage {
            path: "symmetric decryption",
            name: "decode",
            live: &[Sk, Plain, Slots],
            tables: Tables::Encoder,
            op: decode::<P>,
        },
        Stage {
            path: "public-key encryption",
            name: "public-key generation",
            live: &[Sk, Pk, Ws],
            tables: Tables::Ntt,
            op: pk_keygen::<P>,
        },
        Stage {
            path: "public-key encryption",
            name: "encode",
            live: &[Pk, Slots, Plain],
            tables: Tables::Encoder,
            op: encode::<P>,
        },
        Stage {
            path: "public-key encryption",
            name: "public-key encrypt",
            live: &[Pk, Plain, Ws, FullCt],
            tables: Tables::Ntt,
            op: public::<P>,
        },
        Stage {
            path: "public-key decryption",
            name: "decrypt (BEHZ)",
            live: &[Sk, FullCt, Ws, Plain],
            tables: Tables::Ntt,
            op: decrypt_public::<P>,
        },
        Stage {
            path: "public-key decryption",
            name: "decode",
            live: &[Sk, Plain, Slots],
            tables: Tables::Encoder,
            op: decode::<P>,
        },
    ];
    hprintln!(
        "TABLE7 live memory per stage, preset {} (n = {}, {} data primes): stack high-water mark (painted) + static objects live in the stage (size_of), bytes; software AES-CTR, Helium backend",
        preset,
        P::N,
        P::K
    );
    let expected = o.slots.clone();
    let mut ok = true;
    let mut round_trips = 0;
    for s in &stages {
        let mut r = Ok(());
        let stack = stack_bytes(|| r = (s.op)(o));
        ok &= r.is_ok();
        if s.name == "decode" {
            ok &= o.out.as_ref() == expected.as_ref();
            round_trips += 1;
        }
        let statics: usize = s.live.iter().map(|b| b.bytes::<P>()).sum();
        hprintln!(
            "TABLE7 | {} | {} | {} | {} | {} | {} | {} |",
            preset,
            s.path,
            s.name,
            stack,
            statics,
            table_bytes::<P>(s.tables),
            Live::<P>(s.live, core::marker::PhantomData)
        );
    }
    h.check(
        "stages: every stage returned Ok and both paths' decode gave the slots back",
        ok && round_trips == 2,
        format_args!("a stage failed or a round trip differs"),
    );
}
