//! `zeppelin demo-local [--dir D [--force]] [--preset NAME]`: keygen, encryption of sensor readings,
//! adapt and decryption end to end, with sizes and timings on this host.
//!
//! Without `--dir` the files (a secret key among them) live in a private directory made by
//! `tempfile` (random name, mode 0700), removed on every way out: success, an error, a
//! closed or failing stdout (the write error returns here), and SIGINT/SIGTERM/SIGHUP (the
//! handler of [`crate::cleanup`]).

use std::path::{Path, PathBuf};
use std::time::Instant;

use clap::Args;
use zeppelin::encoder::FixedPoint;
use zeppelin_seal::device::{DeviceContext, SealPreset};
use zeppelin_seal::ComprMode;

use crate::adapt::adapt_bytes;
use crate::decrypt::decrypt_bytes;
use crate::encrypt::{encrypt_bytes, Mode};
use crate::error::{CliError, CliResult, Operation};
use crate::keydir::KeyDir;
use crate::keygen::keygen;
use crate::outln;
use crate::output::{write_file, Secrecy};
use crate::preset::{zero_slots, PresetFn, PresetId, DEFAULT_PRESET};
use crate::private_dir;

/// Arguments of `zeppelin demo-local`.
#[derive(Args)]
pub struct DemoLocalArgs {
    /// Keep the files here instead of a temporary directory.
    #[arg(long)]
    pub dir: Option<PathBuf>,
    /// With --dir: replace an existing key directory there.
    #[arg(long, requires = "dir")]
    pub force: bool,
    /// Parameter preset of the device.
    #[arg(long, value_enum, default_value = DEFAULT_PRESET)]
    pub preset: PresetId,
}

/// Runs `zeppelin demo-local`.
pub fn run(a: &DemoLocalArgs) -> CliResult<()> {
    struct Demo<'a>(&'a Path, bool);
    impl PresetFn for Demo<'_> {
        type Output = CliResult<()>;
        fn call<P: SealPreset>(self) -> CliResult<()> {
            demo_in::<P>(self.0, self.1)
        }
    }
    match &a.dir {
        Some(dir) => {
            a.preset.run(Demo(dir, a.force))?;
            outln!(
                "next: `zeppelin keys --dir {} --relin --galois` for a SEAL server",
                dir.display()
            )?;
            Ok(())
        }
        None => {
            // The files (a secret key among them) do not outlive the demo, whatever happened.
            private_dir::in_private_dir(|private| {
                a.preset.run(Demo(&private.join("keys"), false))
            })?;
            outln!("(temporary directory removed; pass --dir to keep the files)")?;
            Ok(())
        }
    }
}

fn demo_in<P: SealPreset>(dir: &Path, force: bool) -> CliResult<()> {
    let n = P::N;
    outln!(
        "Zeppelin demo: preset {}, n = {n}, t = {}, data primes {:?}",
        P::NAME,
        P::T,
        P::DATA_PRIMES
    )?;
    outln!(
        "files in {}; timings are of the device code running on this host",
        dir.display()
    )?;

    let t0 = Instant::now();
    keygen::<P>(dir, force)?;
    outln!(
        "keygen (device key + SEAL params/secret/public key)  {:>9.2} ms",
        ms(t0)
    )?;
    let keys = KeyDir::new(dir);

    // Sensor readings: temperatures in degrees Celsius, quantized to 1/64 degree per slot.
    let fixed = FixedPoint::<P>::new(6).map_err(CliError::device(Operation::FixedPoint))?;
    let readings: Vec<f64> = (0..n)
        .map(|i| 21.5 + 3.0 * ((i as f64) * 0.01).sin() - 0.25 * ((i % 7) as f64))
        .collect();
    let mut slots = zero_slots::<P>();
    fixed
        .quantize_slots(&readings, &mut slots)
        .map_err(CliError::device(Operation::Quantizing))?;
    outln!(
        "{n} sensor readings, e.g. {:.3} {:.3} {:.3} C, 1/64 C per step",
        readings[0],
        readings[1],
        readings[2]
    )?;

    let t0 = Instant::now();
    let seeded = encrypt_bytes::<P>(&keys, &slots, Mode::Seeded, P::K)?;
    outln!(
        "encode + seeded encrypt (device)                    {:>9.2} ms  {:>7} bytes",
        ms(t0),
        seeded.len()
    )?;
    let full = encrypt_bytes::<P>(&keys, &slots, Mode::Symmetric, P::K)?;
    outln!(
        "  (classic symmetric ciphertext for comparison:                {:>7} bytes)",
        full.len()
    )?;
    let t0 = Instant::now();
    let public = encrypt_bytes::<P>(&keys, &slots, Mode::Public, P::K)?;
    outln!(
        "encode + public-key encrypt (device)                {:>9.2} ms  {:>7} bytes",
        ms(t0),
        public.len()
    )?;
    let reading_ct = keys.path("reading.ct");
    write_file(&reading_ct, &seeded, Secrecy::Public)?;

    let t0 = Instant::now();
    let ctx = DeviceContext::<P>::new().map_err(CliError::seal(Operation::SealParameters))?;
    let seal_bytes = adapt_bytes(&ctx, &seeded, &reading_ct, ComprMode::None)?;
    outln!(
        "adapt: expand seed -> SEAL Ciphertext (server)      {:>9.2} ms  {:>7} bytes",
        ms(t0),
        seal_bytes.len()
    )?;
    let reading_seal = keys.path("reading.seal");
    write_file(&reading_seal, &seal_bytes, Secrecy::Public)?;
    outln!(
        "seeded device form: {:.2} % of the full ciphertext over the same primes, {:.2} % of the SEAL ciphertext",
        100.0 * seeded.len() as f64 / full.len() as f64,
        100.0 * seeded.len() as f64 / seal_bytes.len() as f64
    )?;

    let t0 = Instant::now();
    let back = decrypt_bytes::<P>(&keys, &seal_bytes, &reading_seal)?;
    outln!(
        "decrypt SEAL ciphertext + decode (device)           {:>9.2} ms",
        ms(t0)
    )?;
    let mut decoded = vec![0f64; n];
    fixed.dequantize_slots(&back, &mut decoded);
    let worst = readings
        .iter()
        .zip(&decoded)
        .map(|(a, b)| (a - b).abs())
        .fold(0f64, f64::max);
    let exact = back[..] == slots[..];
    outln!(
        "slots round trip exactly: {exact}; largest reading error {worst:.5} C (bound {:.5})",
        1.0 / 128.0
    )?;
    if !exact {
        return Err(CliError::RoundTrip {
            command: "demo-local",
        });
    }
    Ok(())
}

fn ms(t0: Instant) -> f64 {
    t0.elapsed().as_secs_f64() * 1e3
}
