//! Writes the seed corpora of the fuzz targets: valid objects of every form each target
//! parses, under the fixed keys and contexts of `fuzz-common`, every SEAL object in all three
//! compression modes. Deterministic (fixed seeds), so a rerun writes the same files.
//!
//! `cargo run --release --manifest-path security/fuzz/Cargo.toml -p fuzz-seedgen -- DIR`
//! writes `DIR/<target>/<name>` (security/fuzz/run.sh calls it with `security/fuzz/seeds`).

use std::fs;
use std::path::{Path, PathBuf};

use fuzz_common::{
    device_secret_key, rblwe_keys, rblwe_pool, rng, seal_input, toy_context, toy_parameters,
    toy_secret_key, RblweKeys, SELECT_PARSED, SELECT_SEAL4096, SELECT_TOY, TOY_N, TOY_PRIMES,
    RBLWE_POOL,
};
use rand_core::RngCore;
use rblwe::container::{self, Header, Kind, Scheme};
use rblwe::{cca, cpa, Hardened, ParamSet, Set1, Set2, Set3, SetId};
use zeppelin::{
    encoder, Bfv, Ciphertext, EncryptionSeeds, Params, Plaintext, PublicKey, PublicSeed,
    Seal4096, Seal8192, SecretSeed, SeededCiphertext, Workspace, Zeppelin4096,
};
use zeppelin_evalmult::frames;
use zeppelin_evalmult::vectors::poly_to_le_bytes;
use zeppelin_evalmult::{reference, Ciphertext as EmCiphertext, RelinKey, RnsContext};
use zeppelin_seal::device::{self, DeviceContext, SealPreset};
use zeppelin_seal::keygen::KeyGenerator;
use zeppelin_seal::{
    Ciphertext as SealCt, ComprMode, EncryptionParameters, Plaintext as SealPt, PrngInfo,
    PrngType,
};

type Res<T> = Result<T, Box<dyn std::error::Error>>;

const MODES: [(ComprMode, &str); 3] = [
    (ComprMode::None, "none"),
    (ComprMode::Zlib, "zlib"),
    (ComprMode::Zstd, "zstd"),
];

struct Out {
    root: PathBuf,
    files: usize,
    bytes: usize,
}

impl Out {
    fn put(&mut self, target: &str, name: &str, bytes: &[u8]) -> Res<()> {
        let dir = self.root.join(target);
        fs::create_dir_all(&dir)?;
        fs::write(dir.join(name), bytes)?;
        self.files += 1;
        self.bytes += bytes.len();
        Ok(())
    }
}

/// Random residues below each prime of `primes` (`count` polynomials of `n` each).
fn residues(primes: &[u64], n: usize, count: usize, label: u8) -> Vec<u64> {
    let mut r = rng(label);
    let mut out = Vec::with_capacity(count * primes.len() * n);
    for _ in 0..count {
        for &q in primes {
            out.extend((0..n).map(|_| r.next_u64() % q));
        }
    }
    out
}

fn seal_objects(out: &mut Out) -> Res<()> {
    let toy = toy_context();
    let toy_params = toy_parameters().save(ComprMode::None)?;
    let sk = toy_secret_key();
    let keygen = KeyGenerator::new(toy, &sk)?;
    let mut r = rng(9);

    // EncryptionParameters: toy and every preset.
    for (name, parms) in [
        ("toy", toy_parameters()),
        ("seal4096", EncryptionParameters::for_preset::<Seal4096>()),
        ("zeppelin4096", EncryptionParameters::for_preset::<Zeppelin4096>()),
        ("seal8192", EncryptionParameters::for_preset::<Seal8192>()),
    ] {
        for (mode, m) in MODES {
            out.put("seal_params", &format!("{name}-{m}"), &parms.save(mode)?)?;
        }
    }

    // Ciphertexts of the toy context: every level, sizes 2 and 3, full and SEAL-seeded.
    let n = TOY_N;
    for (li, level) in toy.levels().iter().enumerate().skip(1) {
        for size in [2, 3] {
            let data = residues(&level.coeff_modulus, n, size, 10 + li as u8 + size as u8);
            let ct = SealCt::new(level, n, size, false, data)?;
            for (mode, m) in MODES {
                let bytes = ct.save(mode)?;
                out.put(
                    "seal_ciphertext",
                    &format!("toy-l{li}-s{size}-{m}"),
                    &seal_input(SELECT_TOY, None, &bytes),
                )?;
            }
        }
        for (prng_type, p) in [(PrngType::Blake2xb, "blake2xb"), (PrngType::Shake256, "shake")] {
            let info = PrngInfo {
                prng_type,
                seed: [li as u8 + 3; 64],
            };
            let mut data = residues(&level.coeff_modulus, n, 1, 20 + li as u8);
            data.extend(SealCt::expand_c1(&info, level, n));
            let ct = SealCt::new(level, n, 2, false, data)?;
            for (mode, m) in MODES {
                let bytes = ct.save_seeded(&info, mode)?;
                out.put(
                    "seal_ciphertext",
                    &format!("toy-l{li}-seeded-{p}-{m}"),
                    &seal_input(SELECT_TOY, None, &bytes),
                )?;
            }
        }
    }
    let level = &toy.levels()[1];
    let ct = SealCt::new(level, n, 2, false, residues(&level.coeff_modulus, n, 2, 30))?;
    out.put(
        "seal_ciphertext",
        "parsed-toy-none",
        &seal_input(SELECT_PARSED, Some(&toy_params), &ct.save(ComprMode::None)?),
    )?;

    // Plaintexts: coefficient form (toy and Seal4096) and NTT form at a toy level.
    let mut coeffs: Vec<u64> = (0..n as u64).map(|i| i * 37 % fuzz_common::TOY_T).collect();
    coeffs.truncate(n - 3);
    let pt = SealPt::new(coeffs);
    let ntt_pt = SealPt {
        parms_id: level.parms_id,
        data: residues(&level.coeff_modulus, n, 1, 31),
        scale: 1.0,
    };
    let big_pt = SealPt::new((0..4096u64).map(|i| i * 31 % 65537).collect());
    for (mode, m) in MODES {
        out.put("seal_plaintext", &format!("toy-{m}"), &seal_input(SELECT_TOY, None, &pt.save(mode)?))?;
        out.put("seal_plaintext", &format!("toy-ntt-{m}"), &seal_input(SELECT_TOY, None, &ntt_pt.save(mode)?))?;
        out.put("seal_plaintext", &format!("seal4096-{m}"), &seal_input(SELECT_SEAL4096, None, &big_pt.save(mode)?))?;
    }
    out.put(
        "seal_plaintext",
        "parsed-toy-none",
        &seal_input(SELECT_PARSED, Some(&toy_params), &pt.save(ComprMode::None)?),
    )?;

    // Keys of the toy context.
    let pk = keygen.public_key(&mut r)?;
    let relin = keygen.relin_keys(&mut r)?;
    let galois = keygen.galois_keys(&[3, 2 * n as u32 - 1], &mut r)?;
    for (mode, m) in MODES {
        let toy_in = |b: &[u8]| seal_input(SELECT_TOY, None, b);
        out.put("seal_public_key", &format!("toy-{m}"), &toy_in(&pk.save(mode)?))?;
        out.put("seal_secret_key", &format!("toy-{m}"), &toy_in(&sk.save(mode)?))?;
        out.put("seal_relin_keys", &format!("toy-{m}"), &toy_in(&relin.save(mode)?))?;
        out.put("seal_relin_keys", &format!("toy-seeded-{m}"), &toy_in(&relin.save_seeded(mode)?))?;
        out.put("seal_galois_keys", &format!("toy-{m}"), &toy_in(&galois.save(mode)?))?;
        out.put("seal_galois_keys", &format!("toy-seeded-{m}"), &toy_in(&galois.save_seeded(mode)?))?;
    }
    let parsed = |b: &[u8]| seal_input(SELECT_PARSED, Some(&toy_params), b);
    out.put("seal_public_key", "parsed-toy-none", &parsed(&pk.save(ComprMode::None)?))?;
    out.put("seal_secret_key", "parsed-toy-none", &parsed(&sk.save(ComprMode::None)?))?;
    out.put("seal_relin_keys", "parsed-toy-seeded-none", &parsed(&relin.save_seeded(ComprMode::None)?))?;
    out.put("seal_galois_keys", "parsed-toy-seeded-none", &parsed(&galois.save_seeded(ComprMode::None)?))?;

    // Seal4096 keys: the device key as SEAL sees it (all modes for the secret key, the
    // public key, at 262 KB, uncompressed only).
    let ctx = fuzz_common::seal4096();
    let dsk = device_secret_key::<Seal4096>();
    let seal_sk = device::secret_key(ctx, &dsk)?;
    for (mode, m) in MODES {
        out.put("seal_secret_key", &format!("seal4096-{m}"), &seal_input(SELECT_SEAL4096, None, &seal_sk.save(mode)?))?;
    }
    let seal_pk = device::seal_public_key(ctx, &dsk, &mut r)?;
    out.put("seal_public_key", "seal4096-none", &seal_input(SELECT_SEAL4096, None, &seal_pk.save(ComprMode::None)?))?;
    Ok(())
}

/// A full and a seeded device encryption of fixed slots at `level` under the fixed key.
fn encrypt<P: Params>(level: usize) -> Res<(Box<Ciphertext<P>>, Box<SeededCiphertext<P>>)> {
    let sk = device_secret_key::<P>();
    let slots: Vec<u32> = (0..P::N as u32).map(|i| i * 31 % P::T).collect();
    let mut plain = Box::new(Plaintext::<P>::zeroed());
    encoder::encode(&slots, &mut plain)?;
    let seeds = EncryptionSeeds {
        a: PublicSeed([2; 32]),
        e: SecretSeed::from_bytes([3; 32]),
    };
    let mut ws = Box::new(Workspace::new());
    let mut full = Box::new(Ciphertext::<P>::zeroed());
    Bfv::<P>::encrypt_symmetric_with(&sk, &plain, &seeds, level, &mut full, &mut ws)?;
    let mut seeded = Box::new(SeededCiphertext::<P>::zeroed());
    Bfv::<P>::encrypt_seeded_with(&sk, &plain, &seeds, level, &mut seeded, &mut ws)?;
    Ok((full, seeded))
}

fn device_preset<P: SealPreset>(out: &mut Out, name: &str, select: u8, top: bool) -> Res<()> {
    let levels: &[usize] = if top { &[1, P::K] } else { &[1] };
    for &level in levels {
        let (full, seeded) = encrypt::<P>(level)?;
        let full_wire = device::to_wire_full(&full)?;
        let seeded_wire = device::to_wire_seeded(&seeded)?;
        let with = |b: &[u8]| [&[select][..], b].concat();
        out.put("device_ciphertext", &format!("{name}-l{level}-full"), &with(&full_wire))?;
        out.put("device_ciphertext", &format!("{name}-l{level}-seeded"), &with(&seeded_wire))?;
        out.put("device_decrypt", &format!("{name}-l{level}-full"), &with(&full_wire))?;
        out.put("device_decrypt", &format!("{name}-l{level}-seeded"), &with(&seeded_wire))?;
        out.put("seal_read_any_decrypt", &format!("{name}-l{level}-device-seeded"), &with(&seeded_wire))?;
        if level == 1 {
            let raw_select = select | (level as u8) << 4;
            let mut raw = vec![0u8; Ciphertext::<P>::bytes_at(level)];
            full.write_bytes(&mut raw)?;
            out.put("device_ciphertext", &format!("{name}-l{level}-raw-full"), &[&[raw_select][..], &raw].concat())?;
            let mut raw = vec![0u8; SeededCiphertext::<P>::bytes_at(level)];
            seeded.write_bytes(&mut raw)?;
            out.put("device_ciphertext", &format!("{name}-l{level}-raw-seeded"), &[&[raw_select][..], &raw].concat())?;

            // SEAL forms for read_any: the device ciphertext converted, compressed, and
            // SEAL's own seeded form.
            let ctx = DeviceContext::<P>::new()?;
            let seal_ct = device::to_seal(&ctx, &full)?;
            out.put("seal_read_any_decrypt", &format!("{name}-l{level}-device-full"), &with(&full_wire))?;
            for (mode, m) in &MODES[1..] {
                out.put("seal_read_any_decrypt", &format!("{name}-l{level}-seal-{m}"), &with(&seal_ct.save(*mode)?))?;
            }
            if select == 0 {
                out.put("seal_ciphertext", &format!("{name}-l{level}-none"), &seal_input(SELECT_SEAL4096, None, &seal_ct.save(ComprMode::None)?))?;
                for (mode, m) in &MODES[1..] {
                    out.put("seal_ciphertext", &format!("{name}-l{level}-{m}"), &seal_input(SELECT_SEAL4096, None, &seal_ct.save(*mode)?))?;
                }
                let info = PrngInfo {
                    prng_type: PrngType::Blake2xb,
                    seed: [5; 64],
                };
                let seal_sk = device::secret_key(&ctx, &device_secret_key::<P>())?;
                let c0 = zeppelin_seal::convert::reseed(ctx.seal(), &seal_ct, &seal_sk, &info)?;
                if let Ok(bytes) = c0.save_seeded(&info, ComprMode::None) {
                    out.put("seal_read_any_decrypt", &format!("{name}-l{level}-seal-seeded"), &with(&bytes))?;
                }
            }
        }
    }
    // Key files.
    let sk = device_secret_key::<P>();
    let mut bytes = vec![0u8; P::N];
    sk.write_bytes(&mut bytes)?;
    out.put("device_keys", &format!("{name}-sk"), &[&[select][..], &bytes].concat())?;
    if P::K * P::N <= 4 * 4096 {
        let mut pk = Box::new(PublicKey::<P>::zeroed());
        let mut ws = Box::new(Workspace::<P>::new());
        Bfv::<P>::generate_public_key_with(&sk, &PublicSeed([4; 32]), &SecretSeed::from_bytes([5; 32]), &mut pk, &mut ws)?;
        let mut bytes = vec![0u8; PublicKey::<P>::BYTES];
        pk.write_bytes(&mut bytes)?;
        out.put("device_keys", &format!("{name}-pk"), &[&[select | 4][..], &bytes].concat())?;
    }
    Ok(())
}

fn evalmult(out: &mut Out) -> Res<()> {
    let mut r = rng(40);
    let mut poly = |ctx: &RnsContext| -> Vec<u32> {
        let n = ctx.ring_dim();
        (0..ctx.poly_len())
            .map(|j| (r.next_u64() % u64::from(ctx.moduli_values()[j / n])) as u32)
            .collect()
    };
    for select in 0..3u8 {
        let ctx = fuzz_common::evalmult_context(select);
        let p = poly(ctx);
        out.put("evalmult_bin", &format!("ctx{select}"), &[&[select][..], &poly_to_le_bytes(&p)].concat())?;
    }

    // Sessions: a profile, then RLMP pair frames (digits supplied), then an RLMD session.
    for (select, ctx_select) in [(0u8, 0u8), (0, 1), (1, 2)] {
        let ctx = fuzz_common::evalmult_context(ctx_select);
        let towers = ctx.towers();
        let key = RelinKey {
            ring_dim: ctx.ring_dim(),
            moduli: ctx.moduli_values(),
            a: (0..towers).map(|_| poly(ctx)).collect(),
            b: (0..towers).map(|_| poly(ctx)).collect(),
        };
        let ct = |p: &mut dyn FnMut(&RnsContext) -> Vec<u32>| EmCiphertext { c0: p(ctx), c1: p(ctx) };
        let pairs: Vec<(EmCiphertext, EmCiphertext)> =
            (0..2).map(|_| (ct(&mut poly), ct(&mut poly))).collect();
        let digits: Vec<Vec<u32>> = pairs
            .iter()
            .map(|(x, y)| {
                let t = reference::tensor(ctx, x, y)?;
                zeppelin_evalmult::tower_major_digits(ctx, &reference::decompose(ctx, &t.c2)?)
            })
            .collect::<Result<_, _>>()?;
        let mut stream = Vec::new();
        frames::write_frame(&mut stream, &frames::encode_profile(&ctx.moduli_values())?)?;
        for p in 0..frames::pair_count(towers) {
            frames::write_frame(&mut stream, &frames::encode_pair_frame(ctx, &key, &pairs, Some(&digits), p)?)?;
        }
        for p in 0..frames::pair_count(towers) {
            frames::write_frame(&mut stream, &frames::encode_pair_frame(ctx, &key, &pairs, None, p)?)?;
        }
        out.put("evalmult_session", &format!("ring{}-towers{towers}-rlmp-rlmd", ctx.ring_dim()), &[&[select][..], &stream].concat())?;
    }

    // A vector directory: manifest, NUL, then the .bin files in load order.
    let ctx = fuzz_common::evalmult_context(0);
    let towers = ctx.towers();
    let key_a: Vec<Vec<u32>> = (0..towers).map(|_| poly(ctx)).collect();
    let key_b: Vec<Vec<u32>> = (0..towers).map(|_| poly(ctx)).collect();
    let (x, y) = (
        EmCiphertext { c0: poly(ctx), c1: poly(ctx) },
        EmCiphertext { c0: poly(ctx), c1: poly(ctx) },
    );
    let key = RelinKey {
        ring_dim: ctx.ring_dim(),
        moduli: ctx.moduli_values(),
        a: key_a.clone(),
        b: key_b.clone(),
    };
    let expected = reference::eval_mult(ctx, &key, &x, &y)?;
    let moduli = ctx.moduli_values();
    for (name, roots) in [("plain", String::new()), ("roots", format!(", \"roots\": {:?}", ctx.roots()))] {
        let manifest = format!(
            "{{\"ring_dim\": {}, \"towers\": {towers}, \"digits\": {towers}, \"batch\": 1, \"moduli\": {moduli:?}{roots}}}",
            ctx.ring_dim()
        );
        let mut file = manifest.into_bytes();
        file.push(0);
        for i in 0..towers {
            file.extend(poly_to_le_bytes(&key_a[i]));
            file.extend(poly_to_le_bytes(&key_b[i]));
        }
        for p in [&x.c0, &x.c1, &y.c0, &y.c1, &expected.tensor.c2, &expected.relin.c0, &expected.relin.c1] {
            file.extend(poly_to_le_bytes(p));
        }
        out.put("evalmult_manifest", &format!("ring16-{name}"), &file)?;
    }
    Ok(())
}

fn rblwe_set<P: ParamSet>(out: &mut Out, set: SetId, name: &str) -> Res<()> {
    let keys: RblweKeys<P> = rblwe_keys();
    let mut pool = rblwe_pool(b"fuzz seeds");
    let message: Vec<u8> = (0..P::N / 8).map(|i| i as u8).collect();
    let file = |kind: Kind, scheme: Scheme, payload: &[u8]| -> Res<Vec<u8>> {
        let header = Header::new(set, kind, scheme);
        let mut buf = vec![0u8; header.file_len()];
        container::write(header, payload, &mut buf)?;
        Ok(buf)
    };
    let cpa_ct = cpa::encrypt::<P, Hardened, _, RBLWE_POOL>(&keys.cpa_pk, &message, &mut pool)?;
    let cca_ct = cca::encrypt::<P, Hardened, _, RBLWE_POOL>(&keys.cca_pk, &message, &mut pool)?;
    let mut cpa_sk = vec![0u8; rblwe::SecretKey::<P>::BYTES];
    keys.cpa_sk.write_bytes(&mut cpa_sk)?;
    let mut cca_sk = vec![0u8; cca::CcaSecretKey::<P>::BYTES];
    keys.cca_sk.write_bytes(&mut cca_sk)?;
    let mut cca_ct_bytes = vec![0u8; cca::CcaCiphertext::<P>::BYTES];
    cca_ct.write_bytes(&mut cca_ct_bytes)?;
    let files = [
        (Kind::PublicKey, Scheme::Cpa, keys.cpa_pk.to_bytes().as_ref().to_vec(), "cpa-pk"),
        (Kind::PublicKey, Scheme::Cca2, keys.cca_pk.to_bytes().as_ref().to_vec(), "cca-pk"),
        (Kind::SecretKey, Scheme::Cpa, cpa_sk, "cpa-sk"),
        (Kind::SecretKey, Scheme::Cca2, cca_sk, "cca-sk"),
        (Kind::Ciphertext, Scheme::Cpa, cpa_ct.to_bytes().as_ref().to_vec(), "cpa-ct"),
        (Kind::Ciphertext, Scheme::Cca2, cca_ct_bytes, "cca-ct"),
    ];
    for (kind, scheme, payload, what) in files {
        let bytes = file(kind, scheme, &payload)?;
        let select = Kind::ALL.iter().position(|&k| k == kind).unwrap_or(0) as u8;
        out.put("rblwe_container", &format!("{name}-{what}"), &[&[select][..], &bytes].concat())?;
        if kind == Kind::Ciphertext {
            out.put("rblwe_decrypt", &format!("{name}-{what}"), &bytes)?;
        }
    }
    Ok(())
}

fn main() -> Res<()> {
    let root = std::env::args_os()
        .nth(1)
        .map(PathBuf::from)
        .ok_or("usage: fuzz-seedgen DIR")?;
    if Path::new(&root).exists() {
        fs::remove_dir_all(&root)?;
    }
    let mut out = Out { root, files: 0, bytes: 0 };
    seal_objects(&mut out)?;
    device_preset::<Seal4096>(&mut out, "seal4096", 0, false)?;
    device_preset::<Zeppelin4096>(&mut out, "zeppelin4096", 1, false)?;
    device_preset::<Seal8192>(&mut out, "seal8192", 2, false)?;
    evalmult(&mut out)?;
    rblwe_set::<Set1>(&mut out, SetId::Set1, "set1")?;
    rblwe_set::<Set2>(&mut out, SetId::Set2, "set2")?;
    rblwe_set::<Set3>(&mut out, SetId::Set3, "set3")?;
    for (select, name) in [(0u8, "seal4096"), (1, "zeppelin4096"), (6, "seal8192-file")] {
        let text: String = (0..40u32).map(|i| format!("{}\n", i * 1637 % 65537)).collect();
        out.put("cli_values", &format!("{name}"), &[&[select][..], text.as_bytes()].concat())?;
    }
    out.put("cli_values", "blank-and-max", b"\x00\n  65536\r\n\n0\n 12 \n")?;
    let _ = TOY_PRIMES;
    println!("{} seed files, {} bytes", out.files, out.bytes);
    Ok(())
}
