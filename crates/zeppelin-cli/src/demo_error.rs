//! The errors of `zeppelin demo` (the fleet demo, [`crate::demo`]): kept apart from the
//! demo's code so that [`crate::error::CliError`] can hold them without depending on it.

use std::path::PathBuf;

use zeppelin_seal::SealError;
use zeppelin_service::client::ClientError;

use crate::output::OutputError;

/// What can go wrong in the fleet demo beyond the CLI's common errors.
#[derive(Debug, thiserror::Error)]
pub enum DemoError {
    /// The fleet does not fit the plaintext modulus.
    #[error(transparent)]
    TooManyDevices(#[from] TooManyDevices),
    /// `--concurrency 0`.
    #[error("--concurrency must be at least 1")]
    NoConcurrency,
    /// The async runtime could not start.
    #[error("cannot start the async runtime: {0}")]
    Runtime(#[source] std::io::Error),
    /// The in-process service did not start or stop.
    #[error("in-process service: {0}")]
    Service(#[from] zeppelin_service::StartError),
    /// The in-process service's store could not be opened.
    #[error("in-process store: {0}")]
    Store(#[from] zeppelin_service::store::StoreError),
    /// The demo's devices could not be registered (`--auth-dir`).
    #[error("registering the demo's devices: {0}")]
    Registry(String),
    /// `--server` without `--auth-dir`.
    #[error("--server needs --auth-dir DIR (the server's credential directory) to register the demo's devices")]
    NoAuthDir,
    /// An HTTP exchange with the service failed.
    #[error("{what}: {source}")]
    Http {
        /// The exchange.
        what: String,
        /// Why.
        #[source]
        source: ClientError,
    },
    /// The service runs another preset.
    #[error(
        "the server at {url} runs preset {found}, the demo {expected} (pass --preset {found})"
    )]
    ServerPreset {
        /// The server.
        url: String,
        /// Its preset.
        found: String,
        /// The demo's.
        expected: &'static str,
    },
    /// An aggregate covers another number of uploads than were made.
    #[error("{op} covers {found} uploads, {expected} were made")]
    Count {
        /// The aggregation.
        op: &'static str,
        /// The count the service reported.
        found: u64,
        /// The uploads made.
        expected: usize,
    },
    /// The service's result is not a ciphertext the key owner can decrypt.
    #[error("{op} result: {source}")]
    Result {
        /// The aggregation.
        op: &'static str,
        /// Why.
        #[source]
        source: SealError,
    },
    /// Slots whose decrypted statistics are outside the quantisation bound.
    #[error("{slots} of {total} slots outside the quantisation error bound")]
    OutOfBounds {
        /// How many.
        slots: usize,
        /// Of how many.
        total: usize,
    },
    /// `--plot` failed.
    #[error(transparent)]
    Plot(#[from] PlotError),
}

/// The fleet does not fit the plaintext modulus even at one unit per step.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("--devices {devices}: the sum of squares of {devices} {quantity} readings would exceed (t-1)/2 = {half} even at integer resolution; at most {max} devices")]
pub struct TooManyDevices {
    /// The number asked for.
    pub devices: usize,
    /// The quantity that does not fit.
    pub quantity: &'static str,
    /// `(t−1)/2`.
    pub half: u32,
    /// The most devices that fit.
    pub max: usize,
}

/// Why the plot was not written.
#[derive(Debug, thiserror::Error)]
pub enum PlotError {
    /// No font file.
    #[error("--plot needs a TrueType font: none at {tried} (install fonts-dejavu-core, or set ZEPPELIN_PLOT_FONT=FILE.ttf)")]
    NoFont {
        /// The paths tried.
        tried: String,
    },
    /// The font file is not a font plotters can use.
    #[error("--plot: {} is not a usable TrueType font", path.display())]
    BadFont {
        /// The file.
        path: PathBuf,
    },
    /// Drawing failed.
    #[error("--plot: drawing failed: {0}")]
    Draw(String),
    /// PNG encoding failed.
    #[error("--plot: PNG encoding failed: {0}")]
    Encode(#[from] image::ImageError),
    /// Writing failed (nothing visible changed).
    #[error(transparent)]
    Output(#[from] OutputError),
}
