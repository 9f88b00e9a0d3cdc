//! `zeppelin bench`: in-process medians of the device operations on this host, so that
//! `scripts/bench_vs_seal.py` can set them beside Microsoft SEAL in the same run.
//!
//! Every run draws fresh randomness (as SEAL does inside each call) and works on boxed,
//! reused buffers; no file is read or written inside a timed region. The figures are
//! wall-clock medians for comparison on one machine, not a claim about the microcontroller.

use std::hint::black_box;
use std::time::Instant;

use clap::Args;
use rand_core::{OsRng, RngCore};

use zeppelin::{
    encoder, Bfv, Ciphertext, EncryptionSeeds, Params, PublicKey, Seal4096, SecretKey, SecretSeed,
    SeededCiphertext, Workspace, Zeppelin4096, N, T,
};

use crate::{device_wire, read_device, CliResult, Context, Preset};

#[derive(Args)]
pub struct BenchArgs {
    /// Parameter preset of the device.
    #[arg(long, value_enum, default_value = "seal4096")]
    preset: Preset,
    /// Timed runs per operation; the median is reported.
    #[arg(long, default_value_t = 101, value_parser = clap::value_parser!(u32).range(1..))]
    runs: u32,
    /// Print one JSON object (microseconds) instead of a table.
    #[arg(long)]
    json: bool,
}

/// The operations, in print order: (JSON key, table label).
pub const OPERATIONS: [(&str, &str); 6] = [
    ("encode_seeded_encrypt", "encode + seeded encrypt"),
    ("encode_symmetric_encrypt", "encode + symmetric encrypt"),
    ("encode_public_encrypt", "encode + public-key encrypt"),
    ("decrypt_decode", "decrypt + decode"),
    ("keygen_secret_public", "keygen (secret + public)"),
    (
        "expand_seed",
        "expand seed (adapt: parse seeded wire form, expand c1)",
    ),
];

pub fn run(a: &BenchArgs) -> CliResult<()> {
    let medians = match a.preset {
        Preset::Seal4096 => bench::<Seal4096>(a.runs as usize)?,
        Preset::Zeppelin4096 => bench::<Zeppelin4096>(a.runs as usize)?,
    };
    if a.json {
        let ops: Vec<String> = OPERATIONS
            .iter()
            .zip(&medians)
            .map(|((key, _), us)| format!("\"{key}\": {us:.3}"))
            .collect();
        println!(
            "{{\"preset\": \"{}\", \"runs\": {}, \"unit\": \"us\", \"operations\": {{{}}}}}",
            a.preset.name(),
            a.runs,
            ops.join(", ")
        );
    } else {
        println!(
            "zeppelin bench: preset {}, n = {N}, t = {T}, medians of {} runs on this host",
            a.preset.name(),
            a.runs
        );
        for ((_, label), us) in OPERATIONS.iter().zip(&medians) {
            println!("{label:<56} {us:>10.1} µs");
        }
    }
    Ok(())
}

/// Median wall-clock time of `runs` calls of `op`, in microseconds.
fn median_us(runs: usize, mut op: impl FnMut() -> CliResult<()>) -> CliResult<f64> {
    // One untimed call warms caches and the lazily built tables.
    op()?;
    let mut times = Vec::with_capacity(runs);
    for _ in 0..runs {
        let t0 = Instant::now();
        op()?;
        times.push(t0.elapsed().as_secs_f64() * 1e6);
    }
    times.sort_by(f64::total_cmp);
    Ok(times[runs / 2])
}

/// Medians in the order of [`OPERATIONS`].
fn bench<P: Params>(runs: usize) -> CliResult<[f64; OPERATIONS.len()]> {
    let mut slots = Box::new([0u32; N]);
    for s in slots.iter_mut() {
        *s = OsRng.next_u32() % T;
    }
    let mut sk = Box::new(SecretKey::<P>::zeroed());
    let mut pk = Box::new(PublicKey::<P>::zeroed());
    let mut ws = Box::new(Workspace::zeroed());
    Bfv::<P>::generate_secret_key(&mut OsRng, &mut sk).ctx("secret key generation")?;
    Bfv::<P>::generate_public_key(&sk, &mut OsRng, &mut pk, &mut ws)
        .ctx("public key generation")?;

    let mut plain = Box::new([0u32; N]);
    let mut seeded = Box::new(SeededCiphertext::<P>::zeroed());
    let mut full = Box::new(Ciphertext::<P>::zeroed());

    let seeded_encrypt = median_us(runs, || {
        encoder::encode(&slots, &mut plain).ctx("encoding")?;
        let seeds = EncryptionSeeds::generate(&mut OsRng);
        Bfv::<P>::encrypt_seeded_with(&sk, &plain, &seeds, P::K, &mut seeded, &mut ws)
            .ctx("seeded encryption")?;
        black_box(seeded.c0());
        Ok(())
    })?;
    let symmetric_encrypt = median_us(runs, || {
        encoder::encode(&slots, &mut plain).ctx("encoding")?;
        let seeds = EncryptionSeeds::generate(&mut OsRng);
        Bfv::<P>::encrypt_symmetric_with(&sk, &plain, &seeds, P::K, &mut full, &mut ws)
            .ctx("symmetric encryption")?;
        black_box(full.c0());
        Ok(())
    })?;
    let public_encrypt = median_us(runs, || {
        encoder::encode(&slots, &mut plain).ctx("encoding")?;
        let seed = SecretSeed::generate(&mut OsRng);
        Bfv::<P>::encrypt_public_with(&pk, &plain, &seed, P::K, &mut full, &mut ws)
            .ctx("public-key encryption")?;
        black_box(full.c0());
        Ok(())
    })?;

    // `full` now holds a public-key ciphertext of `slots`: decrypting it must give them back,
    // so a broken build cannot report a time for wrong work.
    let mut decoded = Box::new([0u32; N]);
    let decrypt_decode = median_us(runs, || {
        Bfv::<P>::decrypt(&sk, &full, &mut plain, &mut ws).ctx("decryption")?;
        encoder::decode(&plain, &mut decoded).ctx("decoding")?;
        black_box(&decoded);
        Ok(())
    })?;
    if decoded[..] != slots[..] {
        return Err("bench: decrypted slots differ from the encrypted ones".into());
    }

    let mut fresh_sk = Box::new(SecretKey::<P>::zeroed());
    let mut fresh_pk = Box::new(PublicKey::<P>::zeroed());
    let keygen = median_us(runs, || {
        Bfv::<P>::generate_secret_key(&mut OsRng, &mut fresh_sk).ctx("secret key generation")?;
        Bfv::<P>::generate_public_key(&fresh_sk, &mut OsRng, &mut fresh_pk, &mut ws)
            .ctx("public key generation")?;
        black_box(fresh_pk.p0());
        Ok(())
    })?;

    // The server side of `adapt`: the seeded wire form in, the expanded ciphertext out.
    let seeds = EncryptionSeeds::generate(&mut OsRng);
    Bfv::<P>::encrypt_seeded_with(&sk, &plain, &seeds, P::K, &mut seeded, &mut ws)
        .ctx("seeded encryption")?;
    let mut wire = vec![0u8; device_wire::seeded_len(P::K)];
    device_wire::write_seeded(&seeded, &mut wire).ctx("wire form")?;
    let expand_seed = median_us(runs, || {
        black_box(read_device::<P>(black_box(&wire))?);
        Ok(())
    })?;

    Ok([
        seeded_encrypt,
        symmetric_encrypt,
        public_encrypt,
        decrypt_decode,
        keygen,
        expand_seed,
    ])
}
