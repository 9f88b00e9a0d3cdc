//! `zeppelin demo`: the fleet demo. A key owner makes the keys; an aggregation service runs
//! (in process on a SQLite store in a private temporary directory, or `--server URL`); `K`
//! simulated sensors (`--devices`, default 100) each turn a seeded synthetic day of
//! temperature and humidity readings into fixed point, encrypt them with the seeded path and
//! upload them over HTTP; the server returns the encrypted sum and sum of squares; the key
//! owner decrypts them and prints per-slot mean and variance next to the plaintext truth, with
//! the quantisation error bounds, a timing table per stage, the bytes on the wire and the
//! remaining noise budget. Exit status 1 if any slot is outside its bound.
//!
//! The readings are a function of `--seed` alone, and so is everything in the results
//! section of the output; the ciphertexts are not: every encryption draws fresh randomness
//! from the operating system (`OsRng`), as a device must.
//!
//! The private directory (the key owner's secret key, the store) is made by `tempfile`
//! (random name, mode 0700) and removed on every way out, as in [`crate::demo_local`].

mod fleet;
mod plot;
mod readings;
mod stats;

use std::path::PathBuf;

use clap::{Args, ValueEnum};

use crate::error::CliResult;
use crate::output::check_file_destination;
use crate::preset::{PresetFn, PresetId};
use crate::private_dir;

pub use crate::demo_error::DemoError;

/// The presets the service runs (those whose SEAL parameters are the device's own).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum FleetPreset {
    /// n = 4096, three data primes and a special prime.
    Seal4096,
    /// n = 8192, seven data primes and a special prime.
    Seal8192,
}

impl FleetPreset {
    fn id(self) -> PresetId {
        match self {
            FleetPreset::Seal4096 => PresetId::Seal4096,
            FleetPreset::Seal8192 => PresetId::Seal8192,
        }
    }
}

/// Arguments of `zeppelin demo`.
#[derive(Args, Clone)]
pub struct DemoArgs {
    /// Number of simulated devices.
    #[arg(long, default_value_t = 100)]
    pub devices: usize,
    /// Parameter preset.
    #[arg(long, value_enum, default_value = "seal4096")]
    pub preset: FleetPreset,
    /// Seed of the synthetic readings (the results are a function of it).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// A running `zeppelin serve` (base URL, e.g. http://127.0.0.1:8080) instead of the
    /// in-process service; the demo's relinearization keys are pushed to it.
    #[arg(long)]
    pub server: Option<String>,
    /// With --server: the server's credential directory (its --data or --auth-dir; the
    /// demo reads owner.token there, registers its devices for a fresh stream and revokes
    /// them at the end).
    #[arg(long, requires = "server")]
    pub auth_dir: Option<PathBuf>,
    /// Write a PNG of the decrypted against the true mean per slot.
    #[arg(long)]
    pub plot: Option<PathBuf>,
    /// Uploads in flight at once.
    #[arg(long, default_value_t = 16)]
    pub concurrency: usize,
}

/// Runs `zeppelin demo`.
pub fn run(a: &DemoArgs) -> CliResult<()> {
    fleet::check_arguments(a)?;
    if let Some(plot) = &a.plot {
        check_file_destination(plot)?;
    }
    struct Demo<'a>(&'a DemoArgs, &'a std::path::Path);
    impl PresetFn for Demo<'_> {
        type Output = CliResult<()>;
        fn call<P: zeppelin_seal::device::SealPreset>(self) -> CliResult<()> {
            fleet::run::<P>(self.0, self.1)
        }
    }
    // The secret key and the store do not outlive the demo, whatever happened.
    private_dir::in_private_dir(|private| a.preset.id().run(Demo(a, private)))
}
