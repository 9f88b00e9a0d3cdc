//! The device ⇄ SEAL bridge (`zeppelin_seal::device`) without Python: the device's wire forms
//! against this crate's SEAL writer and parms_id (which `seal_python.rs` checks byte for byte
//! against SEAL), the form recognition of `read_any`, and the refusals of every conversion.
#![expect(
    clippy::unwrap_used,
    reason = "helpers outside #[test] functions are test code too (clippy.toml covers only #[test] functions)"
)]

use zeppelin::wire::{
    full_len, parms_id, read_full, read_seeded, seeded_len, write_full, write_seeded, WireError,
    AES_CTR_PRNG_TYPE, CHACHA20_PRNG_TYPE,
};
use zeppelin::{
    encoder, Bfv, ChaCha20, Ciphertext, CoeffRows, EncryptionSeeds, Params, Plaintext,
    PublicGenerator, PublicSeed, Seal4096, Seal8192, SecretKey, SecretSeed, SeededCiphertext,
    Workspace, Zeppelin4096,
};
use zeppelin_seal::convert::reseed;
use zeppelin_seal::device::{self, AnyCiphertext, DeviceContext, SealPreset};
use zeppelin_seal::{
    Ciphertext as SealCt, ComprMode, EncryptionParameters, Mismatch, ParmsId, PrngInfo, PrngType,
    SealContext, SealError,
};

const N: usize = 4096;

fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().unwrap())
}

fn secret_key<P: Params>() -> Box<SecretKey<P>> {
    let mut sk = Box::new(SecretKey::<P>::zeroed());
    Bfv::<P>::generate_secret_key_with(&SecretSeed::from_bytes([1; 32]), &mut sk).unwrap();
    sk
}

fn slots() -> Box<[u32; N]> {
    let mut slots = Box::new([0u32; N]);
    for (i, s) in slots.iter_mut().enumerate() {
        *s = (i as u32 * 31) % 65537;
    }
    slots
}

/// [`slots`] encoded as a plaintext.
fn plaintext<P: Params>() -> Box<Plaintext<P>> {
    let mut plain = Box::new(Plaintext::<P>::zeroed());
    encoder::encode(&slots()[..], &mut plain).unwrap();
    plain
}

/// The fixed encryption seeds every test encrypts under.
fn fixed_seeds() -> EncryptionSeeds {
    EncryptionSeeds {
        a: PublicSeed([2; 32]),
        e: SecretSeed::from_bytes([3; 32]),
    }
}

/// A full and a seeded encryption of [`slots`] at `level`, from fixed seeds.
fn encrypt<P: Params>(level: usize) -> (Box<Ciphertext<P>>, Box<SeededCiphertext<P>>) {
    let sk = secret_key::<P>();
    let plain = plaintext::<P>();
    let seeds = fixed_seeds();
    let mut ws = Box::new(Workspace::new());
    let mut full = Box::new(Ciphertext::<P>::zeroed());
    Bfv::<P>::encrypt_symmetric_with(&sk, &plain, &seeds, level, &mut full, &mut ws).unwrap();
    let mut seeded = Box::new(SeededCiphertext::<P>::zeroed());
    Bfv::<P>::encrypt_seeded_with(&sk, &plain, &seeds, level, &mut seeded, &mut ws).unwrap();
    (full, seeded)
}

/// Decrypts and decodes whatever `read_any` made of `bytes`.
fn decrypt_any<P: SealPreset>(ctx: &DeviceContext<P>, any: &AnyCiphertext<P>) -> Box<[u32; N]> {
    let sk = secret_key::<P>();
    let mut plain = Box::new(Plaintext::<P>::zeroed());
    let mut ws = Box::new(Workspace::new());
    any.decrypt(ctx, &sk, &mut plain, &mut ws).unwrap();
    let mut out = Box::new([0u32; N]);
    encoder::decode(&plain, &mut out[..]).unwrap();
    out
}

// ----- the device wire forms agree with zeppelin-seal ------------------------------------

#[test]
fn level_id_table_is_seals_parms_id() {
    fn check<P: SealPreset>() {
        let ctx = DeviceContext::<P>::new().unwrap();
        for l in 1..=P::K {
            let primes: Vec<u64> = P::DATA_PRIMES[..l].iter().map(|&q| u64::from(q)).collect();
            let id = ParmsId::compute(1, P::N as u64, &primes, u64::from(P::T));
            assert_eq!(parms_id::<P>(l), Some(&id.0), "{} level {l}", P::NAME);
            assert_eq!(ctx.device_parms_id(l), Some(&id));
            assert_eq!(ctx.device_level(&id), Some(l));
        }
        assert_eq!(ctx.device_parms_id(0), None);
        assert_eq!(ctx.device_parms_id(P::K + 1), None);
    }
    check::<Zeppelin4096>();
    check::<Seal4096>();
    check::<Seal8192>();
    assert_eq!(parms_id::<Seal4096>(4), None);
    assert_eq!(parms_id::<Seal4096>(0), None);
}

#[test]
fn full_form_is_byte_for_byte_the_seal_ciphertext() {
    let ctx = DeviceContext::<Seal4096>::new().unwrap();
    for level in 1..=3 {
        let (full, _) = encrypt::<Seal4096>(level);
        let mut out = vec![0u8; full_len::<Seal4096>(level)];
        assert_eq!(write_full(&full, &mut out).unwrap(), out.len());
        assert_eq!(device::to_wire_full(&full).unwrap(), out);
        let mut data: Vec<u64> = full.c0().iter().map(|&v| u64::from(v)).collect();
        data.extend(full.c1().iter().map(|&v| u64::from(v)));
        let seal_level = ctx.seal().data_level_with(level).unwrap();
        let seal = SealCt::new(seal_level, N, 2, false, data).unwrap();
        assert_eq!(out, seal.save(ComprMode::None).unwrap());
        assert_eq!(device::to_seal(&ctx, &full).unwrap(), seal);
        let mut back = Box::new(Ciphertext::<Seal4096>::zeroed());
        read_full(&out, &mut back).unwrap();
        assert_eq!(back.c0(), full.c0());
        assert_eq!(back.c1(), full.c1());
    }
}

#[test]
fn seeded_form_is_seals_seeded_layout_with_the_aes_type() {
    let (_, seeded) = encrypt::<Zeppelin4096>(4);
    let mut out = vec![0u8; seeded_len::<Zeppelin4096>(4)];
    write_seeded(&seeded, &mut out).unwrap();
    assert_eq!(out.len(), 131_266);
    assert_eq!(device::to_wire_seeded(&seeded).unwrap(), out);
    assert!(matches!(
        device::read_any(&DeviceContext::<Zeppelin4096>::new().unwrap(), &out).unwrap(),
        device::AnyCiphertext::DeviceSeeded(_)
    ));
    let info = &out[out.len() - 81..];
    assert_eq!(&info[..6], &[0x5E, 0xA1, 0x10, 4, 1, 0]);
    assert_eq!(u64_at(info, 8), 81);
    assert_eq!(info[16], AES_CTR_PRNG_TYPE);
    assert_eq!(&info[17..49], &seeded.seed().0);
    let mut back = Box::new(SeededCiphertext::<Zeppelin4096>::zeroed());
    read_seeded(&out, &mut back).unwrap();
    assert_eq!(back.c0(), seeded.c0());
    assert_eq!(back.seed().0, seeded.seed().0);
    // Too small a buffer is an error, not a panic.
    let mut small = vec![0u8; 100];
    assert!(matches!(
        write_seeded(&seeded, &mut small),
        Err(WireError::BufferTooSmall { .. })
    ));
}

/// A device with the ChaCha20 public stream: its seeded wire form names ChaCha20
/// (`prng_type` 0xA2), and `read_any`, `to_device`/`to_seal` and `decrypt` follow it; the
/// AES-CTR client refuses the ciphertext instead of expanding another mask.
#[test]
fn chacha20_public_stream_is_recognised_expanded_and_decrypted() {
    fn check<P: SealPreset>() {
        let ctx = DeviceContext::<P>::new().unwrap();
        let sk = secret_key::<P>();
        let mut plain = plaintext::<P>();
        let seeds = fixed_seeds();
        let mut ws = Box::new(Workspace::new());
        let mut seeded = Box::new(SeededCiphertext::<P>::zeroed());
        Bfv::<P, ChaCha20, ChaCha20>::encrypt_seeded_with(
            &sk,
            &plain,
            &seeds,
            P::K,
            &mut seeded,
            &mut ws,
        )
        .unwrap();
        assert_eq!(seeded.generator(), PublicGenerator::ChaCha20);
        let wire = device::to_wire_seeded(&seeded).unwrap();
        assert_eq!(wire[wire.len() - 81 + 16], CHACHA20_PRNG_TYPE);
        let any = device::read_any(&ctx, &wire).unwrap();
        let AnyCiphertext::DeviceSeeded(back) = &any else {
            panic!("{}: not recognised as the device's seeded form", P::NAME)
        };
        assert_eq!(back.generator(), PublicGenerator::ChaCha20);
        assert_eq!(*decrypt_any(&ctx, &any), *slots(), "{}", P::NAME);
        // Expanded with ChaCha20: equal to the device's own expansion, and not to AES's.
        let mut full = Box::new(Ciphertext::<P>::zeroed());
        any.to_device(&ctx, &mut full).unwrap();
        let mut own = Box::new(Ciphertext::<P>::zeroed());
        Bfv::<P, ChaCha20>::expand_ct1(&seeded, &mut own).unwrap();
        assert_eq!(full.c1(), own.c1());
        let mut aes = Box::new(SeededCiphertext::<P>::zeroed());
        Bfv::<P>::encrypt_seeded_with(&sk, &plain, &seeds, P::K, &mut aes, &mut ws).unwrap();
        let mut aes_full = Box::new(Ciphertext::<P>::zeroed());
        Bfv::<P>::expand_ct1(&aes, &mut aes_full).unwrap();
        assert_ne!(aes_full.c1(), own.c1());
        // The AES-CTR client refuses it, with both generators named.
        assert_eq!(
            Bfv::<P>::decrypt_seeded(&sk, &seeded, &mut plain, &mut ws).unwrap_err(),
            zeppelin::Error::GeneratorMismatch {
                ciphertext: PublicGenerator::ChaCha20,
                expander: PublicGenerator::AesCtr128,
            }
        );
        assert!(Bfv::<P>::expand_ct1(&seeded, &mut full).is_err());
        // The raw form keeps the generator; an unknown prng_type is refused there and on the
        // wire (where read_any leaves it to SEAL's reader).
        let mut raw = vec![0u8; SeededCiphertext::<P>::bytes_at(P::K)];
        seeded.write_bytes(&mut raw).unwrap();
        let mut again = Box::new(SeededCiphertext::<P>::zeroed());
        again.read_bytes(P::K, &raw).unwrap();
        assert_eq!(again.generator(), PublicGenerator::ChaCha20);
        let at = raw.len() - 33;
        raw[at] = 0x77;
        assert_eq!(
            again.read_bytes(P::K, &raw).unwrap_err(),
            zeppelin::Error::UnknownGenerator { prng_type: 0x77 }
        );
        let mut bad = wire.clone();
        let at = bad.len() - 81 + 16;
        bad[at] = 0x77;
        assert!(matches!(
            read_seeded(&bad, &mut again),
            Err(WireError::BadField {
                field: "prng_type",
                value: 0x77
            })
        ));
    }
    // n = 4096 (the helpers decode 4096 slots); seal8192 goes through the interop suite.
    check::<Seal4096>();
    check::<Zeppelin4096>();
}

#[test]
fn truncations_and_bit_flips_never_panic() {
    let ctx = DeviceContext::<Seal4096>::new().unwrap();
    let (full, seeded) = encrypt::<Seal4096>(3);
    let f = device::to_wire_full(&full).unwrap();
    let s = device::to_wire_seeded(&seeded).unwrap();
    let mut ct = Box::new(Ciphertext::<Seal4096>::zeroed());
    let mut sct = Box::new(SeededCiphertext::<Seal4096>::zeroed());
    let mut state = 0x1234_5678_9abc_def0u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for cut in (0..300).chain((0..300).map(|_| (next() % f.len() as u64) as usize)) {
        assert!(read_full(&f[..cut], &mut ct).is_err());
        assert!(read_seeded(&s[..cut.min(s.len() - 1)], &mut sct).is_err());
        assert!(device::read_any(&ctx, &f[..cut]).is_err());
        assert!(device::read_any(&ctx, &s[..cut.min(s.len() - 1)]).is_err());
    }
    let mut rejected = 0;
    for _ in 0..1000 {
        let mut b = f.clone();
        let pos = (next() % 200) as usize;
        b[pos] ^= 1 << (next() % 8);
        rejected += usize::from(read_full(&b, &mut ct).is_err());
        let _ = device::read_any(&ctx, &b);
        let mut b = s.clone();
        let pos = s.len() - 1 - (next() % 81) as usize;
        b[pos] ^= 1 << (next() % 8);
        let _ = read_seeded(&b, &mut sct);
        let _ = device::read_any(&ctx, &b);
    }
    // Flips in the first 200 bytes hit the structure (113 bytes) or residues, whose high
    // bytes cannot change without leaving [0, q).
    assert!(rejected > 600, "{rejected}");
}

// ----- the defect the bridge closes -------------------------------------------------------

/// SEAL parameters that differ from Seal4096's in the third data prime only (same degree,
/// same plain modulus, same number of primes): 133963777 is NTT-friendly for n = 4096.
fn other_primes_context() -> SealContext {
    let mut parms = EncryptionParameters::for_preset::<Seal4096>();
    parms.coeff_modulus[2] = 133_963_777;
    SealContext::new(parms).unwrap()
}

#[test]
fn a_seal_ciphertext_over_other_primes_is_refused_not_decrypted_to_garbage() {
    let other = other_primes_context();
    let level = other.first_level();
    assert_eq!(level.coeff_modulus.len(), 3);
    // A well-formed SEAL ciphertext at the three-prime level of the other parameters.
    let data: Vec<u64> = (0..2 * 3 * N)
        .map(|i| (i as u64 * 7919) % level.coeff_modulus[(i / N) % 3])
        .collect();
    let ct = SealCt::new(level, N, 2, false, data).unwrap();

    // The device client alone cannot tell: its rows are below the preset's primes, so
    // decryption of the raw rows "succeeds" (this is what the old row-based adapter led to).
    let sk = secret_key::<Seal4096>();
    let mut plain = Box::new(Plaintext::<Seal4096>::zeroed());
    let mut ws = Box::new(Workspace::new());
    let rows = |p: &[u64]| p.iter().map(|&v| v as u32).collect::<Vec<u32>>();
    let (c0, c1) = (rows(ct.poly(0)), rows(ct.poly(1)));
    let (c0, c1) = (CoeffRows::new(&c0), CoeffRows::new(&c1));
    assert!(Bfv::<Seal4096>::decrypt_rows(&sk, 3, c0, c1, &mut plain, &mut ws).is_ok());

    // The bridge refuses it with the typed error, whatever the caller's context.
    let ctx = DeviceContext::<Seal4096>::new().unwrap();
    let mut out = Box::new(Ciphertext::<Seal4096>::zeroed());
    match device::from_seal(&ctx, &ct, &mut out) {
        Err(SealError::DeviceMismatch {
            what: "Ciphertext",
            preset: "seal4096",
            mismatch: Mismatch::ParmsId { found },
        }) => assert_eq!(found, level.parms_id),
        other => panic!("expected a parms_id mismatch, got {other:?}"),
    }
    assert_eq!(out.level(), 0, "out is unchanged on error");
    let sneaky = AnyCiphertext::<Seal4096>::Seal(ct.clone());
    assert!(matches!(
        sneaky.decrypt(&ctx, &sk, &mut plain, &mut ws),
        Err(SealError::DeviceMismatch { .. })
    ));
    // Its bytes are no level of the preset's SEAL parameters either.
    let bytes = ct.save(ComprMode::None).unwrap();
    assert!(matches!(
        device::read_any(&ctx, &bytes),
        Err(SealError::UnknownParmsId { .. })
    ));
    // And a context cannot be built from the other parameters for this preset.
    match DeviceContext::<Seal4096>::from_parameters(other.parms().clone()) {
        Err(SealError::DeviceMismatch {
            mismatch:
                Mismatch::Prime {
                    index: 2,
                    expected: 134_012_929,
                    found: 133_963_777,
                },
            ..
        }) => {}
        other => panic!("expected a prime mismatch, got {other:?}"),
    }
}

#[test]
fn from_seal_checks_every_field_against_the_preset() {
    let ctx = DeviceContext::<Seal4096>::new().unwrap();
    let (full, _) = encrypt::<Seal4096>(3);
    let good = device::to_seal(&ctx, &full).unwrap();
    let mut out = Box::new(Ciphertext::<Seal4096>::zeroed());
    let refused =
        |ct: &SealCt, out: &mut Ciphertext<Seal4096>| match device::from_seal(&ctx, ct, out) {
            Err(SealError::DeviceMismatch { mismatch, .. }) => Some(mismatch),
            Err(SealError::CoefficientOutOfRange { .. }) => None,
            other => panic!("expected a refusal, got {other:?}"),
        };
    let key = SealCt {
        parms_id: ctx.seal().key_level().parms_id,
        ..good.clone()
    };
    assert!(matches!(
        refused(&key, &mut out),
        Some(Mismatch::ParmsId { .. })
    ));
    let ntt = SealCt {
        is_ntt_form: true,
        ..good.clone()
    };
    assert_eq!(refused(&ntt, &mut out), Some(Mismatch::NttForm));
    let mut three = good.clone();
    three.size = 3;
    three.data.extend_from_slice(&good.data[..3 * N]);
    assert_eq!(refused(&three, &mut out), Some(Mismatch::Size { found: 3 }));
    let k = SealCt {
        coeff_modulus_size: 2,
        ..good.clone()
    };
    assert_eq!(
        refused(&k, &mut out),
        Some(Mismatch::CoeffModulusSize {
            expected: 3,
            found: 2
        })
    );
    let mut short = good.clone();
    short.data.pop();
    assert!(matches!(
        refused(&short, &mut out),
        Some(Mismatch::DataLength { .. })
    ));
    let mut big = good.clone();
    big.data[2 * N + 1] = 134_012_929;
    assert_eq!(refused(&big, &mut out), None);
    assert_eq!(out.level(), 0, "out is unchanged on every refusal");
    device::from_seal(&ctx, &good, &mut out).unwrap();
    assert_eq!((out.c0(), out.c1()), (full.c0(), full.c1()));
    // An empty device ciphertext has no SEAL form.
    let empty = Box::new(Ciphertext::<Seal4096>::zeroed());
    assert!(matches!(
        device::to_seal(&ctx, &empty),
        Err(SealError::DeviceMismatch {
            mismatch: Mismatch::Level { found: 0, max: 3 },
            ..
        })
    ));
}

#[test]
fn contexts_are_the_presets_own_parameters() {
    let seal = EncryptionParameters::for_preset::<Seal4096>();
    let mut primes: Vec<u64> = Seal4096::DATA_PRIMES.iter().map(|&q| q.into()).collect();
    primes.extend(Seal4096::SPECIAL_PRIME.map(u64::from));
    assert_eq!(seal.coeff_modulus, primes);
    // The paper's preset exchanges ciphertexts under the same SEAL parameters.
    assert_eq!(EncryptionParameters::for_preset::<Zeppelin4096>(), seal);
    assert!(DeviceContext::<Seal4096>::new()
        .unwrap()
        .seal_keys_cover_device());
    let changed = |f: &dyn Fn(&mut EncryptionParameters)| {
        let mut p = seal.clone();
        f(&mut p);
        match DeviceContext::<Zeppelin4096>::from_parameters(p) {
            Err(SealError::DeviceMismatch {
                what: "EncryptionParameters",
                preset: "zeppelin4096",
                mismatch,
            }) => mismatch,
            other => panic!("expected a mismatch, got {other:?}"),
        }
    };
    assert!(matches!(
        changed(&|p| p.poly_modulus_degree = 8192),
        Mismatch::Degree { .. }
    ));
    assert!(matches!(
        changed(&|p| p.plain_modulus = 786_433),
        Mismatch::PlainModulus { .. }
    ));
    assert!(matches!(
        changed(&|p| {
            p.coeff_modulus.pop();
        }),
        Mismatch::PrimeCount {
            expected: 4,
            found: 3
        }
    ));
    assert!(matches!(
        changed(&|p| p.coeff_modulus.swap(0, 1)),
        Mismatch::Prime { index: 0, .. }
    ));
    assert!(matches!(
        changed(&|p| p.scheme = 2),
        Mismatch::Scheme { found: 2 }
    ));
}

// ----- one reader for every form ------------------------------------------------------------

#[test]
fn read_any_recognises_every_form_by_its_header() {
    fn check<P: SealPreset>() {
        let ctx = DeviceContext::<P>::new().unwrap();
        let want = slots();
        let (full, seeded) = encrypt::<P>(P::K);
        let kind = |any: &AnyCiphertext<P>| match any {
            AnyCiphertext::DeviceSeeded(_) => "device seeded",
            AnyCiphertext::DeviceFull(_) => "device full",
            AnyCiphertext::Seal(_) => "SEAL",
        };

        let any = device::read_any(&ctx, &device::to_wire_seeded(&seeded).unwrap()).unwrap();
        assert_eq!(kind(&any), "device seeded", "{}", P::NAME);
        assert_eq!(any.level(), P::K);
        assert_eq!(decrypt_any(&ctx, &any), want);
        let mut expanded = Box::new(Ciphertext::<P>::zeroed());
        any.to_device(&ctx, &mut expanded).unwrap();
        assert_eq!(expanded.c0(), seeded.c0());
        assert_eq!(
            decrypt_any(&ctx, &AnyCiphertext::DeviceFull(expanded)),
            want
        );

        let any = device::read_any(&ctx, &device::to_wire_full(&full).unwrap()).unwrap();
        assert_eq!(kind(&any), "device full", "{}", P::NAME);
        assert_eq!(decrypt_any(&ctx, &any), want);
        let seal_ct = any.to_seal(&ctx).unwrap();
        assert_eq!(seal_ct.coeff_modulus_size, 3);

        for mode in [ComprMode::None, ComprMode::Zlib, ComprMode::Zstd] {
            let bytes = seal_ct.save(mode).unwrap();
            let any = device::read_any(&ctx, &bytes).unwrap();
            // Uncompressed at a level the device shares, SEAL's bytes are the device's full form.
            let expected = if mode == ComprMode::None {
                "device full"
            } else {
                "SEAL"
            };
            assert_eq!(kind(&any), expected, "{} {mode:?}", P::NAME);
            assert_eq!(decrypt_any(&ctx, &any), want, "{} {mode:?}", P::NAME);
        }

        // SEAL's own seeded forms (c0 plus SEAL's generator): SEAL's reader expands them.
        let seal_sk = device::secret_key(&ctx, &secret_key::<P>()).unwrap();
        for prng_type in [PrngType::Blake2xb, PrngType::Shake256] {
            let info = PrngInfo {
                prng_type,
                seed: [9; 64],
            };
            let reseeded = reseed(ctx.seal(), &seal_ct, &seal_sk, &info).unwrap();
            let bytes = reseeded.save_seeded(&info, ComprMode::None).unwrap();
            assert_eq!(bytes.len(), seeded_len::<P>(3));
            let any = device::read_any(&ctx, &bytes).unwrap();
            assert_eq!(kind(&any), "SEAL", "{} {prng_type:?}", P::NAME);
            assert_eq!(decrypt_any(&ctx, &any), want);
        }
    }
    check::<Seal4096>();
    check::<Zeppelin4096>();
}

#[test]
fn read_any_refuses_bad_input_with_typed_errors() {
    let ctx = DeviceContext::<Seal4096>::new().unwrap();
    let (full, seeded) = encrypt::<Seal4096>(3);
    let f = device::to_wire_full(&full).unwrap();
    let s = device::to_wire_seeded(&seeded).unwrap();
    let err = |b: &[u8]| device::read_any(&ctx, b).unwrap_err();

    assert!(matches!(err(b""), SealError::Truncated { .. }));
    assert!(matches!(err(b"hello world"), SealError::Truncated { .. }));
    assert!(matches!(
        err(b"hello world, this is no SEAL object"),
        SealError::BadMagic { .. }
    ));
    let mut b = f.clone();
    b[5] = 3;
    assert!(matches!(err(&b), SealError::UnsupportedCompression { .. }));
    let mut b = f.clone();
    b[20] ^= 1;
    assert!(matches!(err(&b), SealError::UnknownParmsId { .. }));
    // The header's size no longer matches the bytes.
    assert!(matches!(
        err(&s[..s.len() - 10]),
        SealError::DeviceWire(WireError::SizeMismatch { .. })
    ));
    assert!(matches!(
        err(&f[..f.len() / 2]),
        SealError::DeviceWire(WireError::SizeMismatch { .. })
    ));
    let mut b = f.clone();
    b[113..121].copy_from_slice(&(1u64 << 40).to_le_bytes());
    assert!(matches!(
        err(&b),
        SealError::DeviceWire(WireError::CoefficientOutOfRange { .. })
    ));
    // A seeded layout whose prng_type is neither SEAL's nor the device's.
    let mut b = s.clone();
    let at = b.len() - 81 + 16;
    b[at] = 7;
    assert!(matches!(err(&b), SealError::UnknownPrngType(7)));
    // A key-level object (SEAL's public key layout) is no ciphertext.
    let pk =
        device::seal_public_key(&ctx, &secret_key::<Seal4096>(), &mut rand_core::OsRng).unwrap();
    assert!(matches!(
        err(&pk.save(ComprMode::None).unwrap()),
        SealError::WrongLevel { .. }
    ));
    // The paper's four-prime full form is a device form only: SEAL has no such level.
    let (z_full, _) = encrypt::<Zeppelin4096>(4);
    let z = device::to_wire_full(&z_full).unwrap();
    assert!(matches!(
        device::read_any(&ctx, &z),
        Err(SealError::UnknownParmsId { .. })
    ));
    let zctx = DeviceContext::<Zeppelin4096>::new().unwrap();
    assert!(device::read_any(&zctx, &z).unwrap().is_device_form());
}

#[test]
fn public_keys_and_secret_keys_convert_both_ways() {
    let ctx = DeviceContext::<Seal4096>::new().unwrap();
    let sk = secret_key::<Seal4096>();
    let seal_sk = device::secret_key(&ctx, &sk).unwrap();
    assert_eq!(seal_sk.parms_id, ctx.seal().key_level().parms_id);
    assert_eq!(seal_sk.data.len(), 4 * N);
    // The data-prime rows are the device's own NTT rows.
    assert!(seal_sk.data[..3 * N]
        .iter()
        .zip(sk.ntt_residues().iter())
        .all(|(&a, &b)| a == u64::from(b)));
    let mut back = Box::new(SecretKey::<Seal4096>::zeroed());
    device::secret_key_from_seal(&ctx, &seal_sk, &mut back).unwrap();
    assert_eq!(back.ternary(), sk.ternary());
    let mut not_ternary = seal_sk.clone();
    not_ternary.data[..N].fill(5);
    assert!(matches!(
        device::secret_key_from_seal(&ctx, &not_ternary, &mut back),
        Err(SealError::SecretKeyNotTernary { .. })
    ));

    // A SEAL public key made for the device's secret encrypts for the device.
    let seal_pk = device::seal_public_key(&ctx, &sk, &mut rand_core::OsRng).unwrap();
    let mut pk = Box::new(zeppelin::PublicKey::<Seal4096>::zeroed());
    device::public_key_from_seal(&ctx, &seal_pk, &mut pk).unwrap();
    let mut plain = Box::new(Plaintext::<Seal4096>::zeroed());
    encoder::encode(&slots()[..], &mut plain).unwrap();
    let mut ws = Box::new(Workspace::new());
    let mut ct = Box::new(Ciphertext::<Seal4096>::zeroed());
    Bfv::<Seal4096>::encrypt_public(&pk, &plain, &mut rand_core::OsRng, &mut ct, &mut ws).unwrap();
    let any = AnyCiphertext::<Seal4096>::Seal(device::to_seal(&ctx, &ct).unwrap());
    assert_eq!(decrypt_any(&ctx, &any), slots());
    // A public key must be at the key level, in NTT form.
    let mut wrong = seal_pk.clone();
    wrong.0.is_ntt_form = false;
    assert!(matches!(
        device::public_key_from_seal(&ctx, &wrong, &mut pk),
        Err(SealError::NotAKey { .. })
    ));
    wrong.0.parms_id = ctx.seal().first_level().parms_id;
    assert!(matches!(
        device::public_key_from_seal(&ctx, &wrong, &mut pk),
        Err(SealError::WrongLevel { .. })
    ));
}
