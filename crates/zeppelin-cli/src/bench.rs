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
    encoder, Bfv, Ciphertext, EncryptionSeeds, Plaintext, PublicKey, SecretKey, SecretSeed,
    SeededCiphertext, Workspace,
};
use zeppelin_seal::device::{self, DeviceContext, SealPreset};

use crate::error::{CliError, CliResult, Operation};
use crate::outln;
use crate::preset::{zero_slots, PresetFn, PresetId, DEFAULT_PRESET};

/// Arguments of `zeppelin bench`.
#[derive(Args)]
pub struct BenchArgs {
    /// Parameter preset of the device.
    #[arg(long, value_enum, default_value = DEFAULT_PRESET)]
    preset: PresetId,
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

/// Runs `zeppelin bench`.
pub fn run(a: &BenchArgs) -> CliResult<()> {
    struct Bench(usize);
    impl PresetFn for Bench {
        type Output = CliResult<([f64; OPERATIONS.len()], usize, u32)>;
        fn call<P: SealPreset>(self) -> Self::Output {
            Ok((bench::<P>(self.0)?, P::N, P::T))
        }
    }
    let (medians, n, t) = a.preset.run(Bench(a.runs as usize))?;
    if a.json {
        let ops: Vec<String> = OPERATIONS
            .iter()
            .zip(&medians)
            .map(|((key, _), us)| format!("\"{key}\": {us:.3}"))
            .collect();
        outln!(
            "{{\"preset\": \"{}\", \"runs\": {}, \"unit\": \"us\", \"operations\": {{{}}}}}",
            a.preset.name(),
            a.runs,
            ops.join(", ")
        )?;
    } else {
        outln!(
            "zeppelin bench: preset {}, n = {n}, t = {t}, medians of {} runs on this host",
            a.preset.name(),
            a.runs
        )?;
        for ((_, label), us) in OPERATIONS.iter().zip(&medians) {
            outln!("{label:<56} {us:>10.1} µs")?;
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
fn bench<P: SealPreset>(runs: usize) -> CliResult<[f64; OPERATIONS.len()]> {
    let mut slots = zero_slots::<P>();
    for s in slots.iter_mut() {
        *s = OsRng.next_u32() % P::T;
    }
    let mut sk = Box::new(SecretKey::<P>::zeroed());
    let mut pk = Box::new(PublicKey::<P>::zeroed());
    let mut ws = Box::new(Workspace::new());
    Bfv::<P>::generate_secret_key(&mut OsRng, &mut sk)
        .map_err(CliError::device(Operation::SecretKeyGeneration))?;
    Bfv::<P>::generate_public_key(&sk, &mut OsRng, &mut pk, &mut ws)
        .map_err(CliError::device(Operation::PublicKeyGeneration))?;

    let mut plain = Box::new(Plaintext::<P>::zeroed());
    let mut seeded = Box::new(SeededCiphertext::<P>::zeroed());
    let mut full = Box::new(Ciphertext::<P>::zeroed());

    let seeded_encrypt = median_us(runs, || {
        encoder::encode(&slots, &mut plain).map_err(CliError::device(Operation::Encoding))?;
        let seeds = EncryptionSeeds::generate(&mut OsRng);
        Bfv::<P>::encrypt_seeded_with(&sk, &plain, &seeds, P::K, &mut seeded, &mut ws)
            .map_err(CliError::device(Operation::SeededEncryption))?;
        black_box(seeded.c0());
        Ok(())
    })?;
    let symmetric_encrypt = median_us(runs, || {
        encoder::encode(&slots, &mut plain).map_err(CliError::device(Operation::Encoding))?;
        let seeds = EncryptionSeeds::generate(&mut OsRng);
        Bfv::<P>::encrypt_symmetric_with(&sk, &plain, &seeds, P::K, &mut full, &mut ws)
            .map_err(CliError::device(Operation::SymmetricEncryption))?;
        black_box(full.c0());
        Ok(())
    })?;
    let public_encrypt = median_us(runs, || {
        encoder::encode(&slots, &mut plain).map_err(CliError::device(Operation::Encoding))?;
        let seed = SecretSeed::generate(&mut OsRng);
        Bfv::<P>::encrypt_public_with(&pk, &plain, &seed, P::K, &mut full, &mut ws)
            .map_err(CliError::device(Operation::PublicEncryption))?;
        black_box(full.c0());
        Ok(())
    })?;

    // `full` now holds a public-key ciphertext of `slots`: decrypting it must give them back,
    // so a broken build cannot report a time for wrong work.
    let mut decoded = zero_slots::<P>();
    let decrypt_decode = median_us(runs, || {
        Bfv::<P>::decrypt(&sk, &full, &mut plain, &mut ws)
            .map_err(CliError::device(Operation::Decryption))?;
        encoder::decode(&plain, &mut decoded).map_err(CliError::device(Operation::Decoding))?;
        black_box(&decoded);
        Ok(())
    })?;
    if decoded[..] != slots[..] {
        return Err(CliError::RoundTrip { command: "bench" });
    }

    let mut fresh_sk = Box::new(SecretKey::<P>::zeroed());
    let mut fresh_pk = Box::new(PublicKey::<P>::zeroed());
    let keygen = median_us(runs, || {
        Bfv::<P>::generate_secret_key(&mut OsRng, &mut fresh_sk)
            .map_err(CliError::device(Operation::SecretKeyGeneration))?;
        Bfv::<P>::generate_public_key(&fresh_sk, &mut OsRng, &mut fresh_pk, &mut ws)
            .map_err(CliError::device(Operation::PublicKeyGeneration))?;
        black_box(fresh_pk.p0());
        Ok(())
    })?;

    // The server side of `adapt`: the seeded wire form in, the expanded ciphertext out.
    let seeds = EncryptionSeeds::generate(&mut OsRng);
    Bfv::<P>::encrypt_seeded_with(&sk, &plain, &seeds, P::K, &mut seeded, &mut ws)
        .map_err(CliError::device(Operation::SeededEncryption))?;
    let wire = device::to_wire_seeded(&seeded).map_err(CliError::seal(Operation::WireForm))?;
    let ctx = DeviceContext::<P>::new().map_err(CliError::seal(Operation::SealParameters))?;
    let expand_seed = median_us(runs, || {
        device::read_any(&ctx, black_box(&wire))
            .and_then(|ct| ct.to_device(&ctx, &mut full))
            .map_err(CliError::seal(Operation::Adapting))?;
        black_box(full.c1());
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
