//! The bfv crate's known-answer tests on target: the same fixed seeds (`zeppelin::kat`) and
//! the same files the host test compares with (`crates/zeppelin/tests/kats/<preset>/`, included
//! here byte for byte), checked byte for byte. Run with the default keystreams (software
//! AES-CTR on both streams), and again with the table-AES public stream, which must give the
//! same bytes.

use crate::bfv_bench::Objects;
use crate::harness::{first_mismatch, Harness};
use crate::table_aes::TableAesCtr128;
use zeppelin::params::Params;
use zeppelin::{
    encoder, kat, AesCtr128, Bfv, EncryptionSeeds, Error, PublicKeystream, PublicSeed, SecretSeed,
};

macro_rules! kat_file {
    ($name:ident, $path:literal) => {
        #[link_section = ".bulk"]
        static $name: [u8; include_bytes!($path).len()] = *include_bytes!($path);
    };
}

kat_file!(
    SEAL_SK,
    "../../../crates/zeppelin/tests/kats/seal4096/sk.bin"
);
kat_file!(
    SEAL_SK_NTT,
    "../../../crates/zeppelin/tests/kats/seal4096/sk_ntt.bin"
);
kat_file!(
    SEAL_PK,
    "../../../crates/zeppelin/tests/kats/seal4096/pk.bin"
);
kat_file!(
    SEAL_CT_SEEDED,
    "../../../crates/zeppelin/tests/kats/seal4096/ct_seeded.bin"
);
kat_file!(
    SEAL_CT_SYMMETRIC,
    "../../../crates/zeppelin/tests/kats/seal4096/ct_symmetric.bin"
);
kat_file!(
    SEAL_CT_PUBLIC,
    "../../../crates/zeppelin/tests/kats/seal4096/ct_public.bin"
);
kat_file!(
    ZEP_SK,
    "../../../crates/zeppelin/tests/kats/zeppelin4096/sk.bin"
);
kat_file!(
    ZEP_SK_NTT,
    "../../../crates/zeppelin/tests/kats/zeppelin4096/sk_ntt.bin"
);
kat_file!(
    ZEP_PK,
    "../../../crates/zeppelin/tests/kats/zeppelin4096/pk.bin"
);
kat_file!(
    ZEP_CT_SEEDED,
    "../../../crates/zeppelin/tests/kats/zeppelin4096/ct_seeded.bin"
);
kat_file!(
    ZEP_CT_SYMMETRIC,
    "../../../crates/zeppelin/tests/kats/zeppelin4096/ct_symmetric.bin"
);
kat_file!(
    ZEP_CT_PUBLIC,
    "../../../crates/zeppelin/tests/kats/zeppelin4096/ct_public.bin"
);

/// The six KAT files of one preset.
pub struct KatFiles {
    pub sk: &'static [u8],
    pub sk_ntt: &'static [u8],
    pub pk: &'static [u8],
    pub ct_seeded: &'static [u8],
    pub ct_symmetric: &'static [u8],
    pub ct_public: &'static [u8],
}

pub static SEAL_FILES: KatFiles = KatFiles {
    sk: &SEAL_SK,
    sk_ntt: &SEAL_SK_NTT,
    pk: &SEAL_PK,
    ct_seeded: &SEAL_CT_SEEDED,
    ct_symmetric: &SEAL_CT_SYMMETRIC,
    ct_public: &SEAL_CT_PUBLIC,
};

pub static ZEPPELIN_FILES: KatFiles = KatFiles {
    sk: &ZEP_SK,
    sk_ntt: &ZEP_SK_NTT,
    pk: &ZEP_PK,
    ct_seeded: &ZEP_CT_SEEDED,
    ct_symmetric: &ZEP_CT_SYMMETRIC,
    ct_public: &ZEP_CT_PUBLIC,
};

/// Serialisation buffer (the largest object: a 4-prime full ciphertext, 128 KiB).
static mut BYTES: [u8; 2 * 4 * 4096 * 4] = [0; 2 * 4 * 4096 * 4];

fn words_equal(words: &[u32], bytes: &[u8]) -> bool {
    words.len() * 4 == bytes.len()
        && words
            .iter()
            .zip(bytes.chunks_exact(4))
            .all(|(w, c)| w.to_le_bytes() == [c[0], c[1], c[2], c[3]])
}

/// Compares `written` bytes of the buffer with the file; prints PASS/FAIL.
fn compare(
    h: &mut Harness,
    label: &str,
    name: &str,
    r: Result<usize, Error>,
    buf: &[u8],
    file: &[u8],
) {
    let ok = match r {
        Ok(len) => len == file.len() && first_mismatch(&buf[..len], file).is_none(),
        Err(_) => false,
    };
    let at = r.ok().and_then(|len| {
        buf[..len.min(buf.len())]
            .iter()
            .zip(file)
            .position(|(a, b)| a != b)
    });
    h.check(
        line3(label, " KAT ", name),
        ok,
        format_args!(
            "{r:?}, file {} bytes, first differing byte {at:?}",
            file.len()
        ),
    );
}

/// Runs every KAT of preset `P` with public keystream `A` (the secret stream is always the
/// constant-time software AES).
pub fn run<P: Params, A: PublicKeystream>(
    h: &mut Harness,
    label: &str,
    o: &mut Objects<P>,
    files: &KatFiles,
) {
    // SAFETY: single-threaded; the only reference to the buffer while this runs.
    let buf = unsafe { &mut *core::ptr::addr_of_mut!(BYTES) };
    let r = Bfv::<P, A, AesCtr128>::generate_secret_key_with(
        &SecretSeed::from_bytes(kat::SECRET_KEY_SEED),
        &mut o.sk,
    );
    let w = r.and_then(|_| o.sk.write_bytes(buf));
    compare(h, label, "sk.bin", w, buf, files.sk);
    h.check(
        line3(label, " KAT ", "sk_ntt.bin"),
        words_equal(&o.sk.ntt_residues(), files.sk_ntt),
        format_args!("NTT-form secret key differs"),
    );
    let r = Bfv::<P, A, AesCtr128>::generate_public_key_with(
        &o.sk,
        &PublicSeed(kat::PUBLIC_KEY_SEED_A),
        &SecretSeed::from_bytes(kat::PUBLIC_KEY_SEED_E),
        &mut o.pk,
        &mut o.ws,
    );
    let w = r.and_then(|_| o.pk.write_bytes(buf));
    compare(h, label, "pk.bin", w, buf, files.pk);

    kat::slots::<P>(o.slots.as_mut());
    let r = encoder::encode(o.slots.as_ref(), &mut o.plain);
    let seeds = EncryptionSeeds {
        a: PublicSeed(kat::SEEDED_SEED_A),
        e: SecretSeed::from_bytes(kat::SEEDED_SEED_E),
    };
    let r = r.and_then(|_| {
        Bfv::<P, A, AesCtr128>::encrypt_seeded_with(
            &o.sk,
            &o.plain,
            &seeds,
            P::K,
            &mut o.sct,
            &mut o.ws,
        )
    });
    let w = r.and_then(|_| o.sct.write_bytes(buf));
    compare(h, label, "ct_seeded.bin", w, buf, files.ct_seeded);

    let seeds = EncryptionSeeds {
        a: PublicSeed(kat::SYMMETRIC_SEED_A),
        e: SecretSeed::from_bytes(kat::SYMMETRIC_SEED_E),
    };
    let r = Bfv::<P, A, AesCtr128>::encrypt_symmetric_with(
        &o.sk,
        &o.plain,
        &seeds,
        P::K,
        &mut o.ct,
        &mut o.ws,
    );
    let w = r.and_then(|_| o.ct.write_bytes(buf));
    compare(h, label, "ct_symmetric.bin", w, buf, files.ct_symmetric);

    let r = Bfv::<P, A, AesCtr128>::encrypt_public_with(
        &o.pk,
        &o.plain,
        &SecretSeed::from_bytes(kat::PUBLIC_SEED_E),
        P::K,
        &mut o.ct_pub,
        &mut o.ws,
    );
    let w = r.and_then(|_| o.ct_pub.write_bytes(buf));
    compare(h, label, "ct_public.bin", w, buf, files.ct_public);

    // The pinned ciphertexts, read back from the files, decrypt on target to the KAT slots.
    let mut ok = true;
    let r = o.sct.read_bytes(P::K, files.ct_seeded).and_then(|_| {
        Bfv::<P, A, AesCtr128>::decrypt_seeded(&o.sk, &o.sct, &mut o.plain, &mut o.ws)
    });
    ok &= r
        .and_then(|_| encoder::decode(&o.plain, o.out.as_mut()))
        .is_ok()
        && o.out.as_ref() == o.slots.as_ref();
    for file in [files.ct_symmetric, files.ct_public] {
        let r =
            o.ct.read_bytes(P::K, file)
                .and_then(|_| Bfv::<P>::decrypt(&o.sk, &o.ct, &mut o.plain, &mut o.ws))
                .and_then(|_| encoder::decode(&o.plain, o.out.as_mut()));
        ok &= r.is_ok() && o.out.as_ref() == o.slots.as_ref();
    }
    h.check(
        line3(label, " KAT ", "files decrypt to the KAT slots"),
        ok,
        format_args!("a pinned ciphertext did not decrypt to (7919 i + 13) mod t"),
    );
}

fn line3(a: &str, b: &str, c: &str) -> &'static str {
    // Names are printed immediately; a static scratch keeps this allocation-free.
    static mut NAME: crate::ring_tests::Name = crate::ring_tests::heapless_name();
    // SAFETY: single-threaded; each returned name is printed before the next call.
    unsafe { (*core::ptr::addr_of_mut!(NAME)).set3(a, b, c) }
}

/// Runs the KATs of both presets, with software AES and with the table-AES public stream.
pub fn run_all(
    h: &mut Harness,
    seal: &mut Objects<zeppelin::Seal4096>,
    zep: &mut Objects<zeppelin::Zeppelin4096>,
) {
    run::<_, AesCtr128>(h, "seal4096 (software AES)", seal, &SEAL_FILES);
    run::<_, TableAesCtr128>(h, "seal4096 (table AES public stream)", seal, &SEAL_FILES);
    run::<_, AesCtr128>(h, "zeppelin4096 (software AES)", zep, &ZEPPELIN_FILES);
    run::<_, TableAesCtr128>(
        h,
        "zeppelin4096 (table AES public stream)",
        zep,
        &ZEPPELIN_FILES,
    );
}
