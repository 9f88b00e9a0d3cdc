//! The CLI's one error type. Each variant keeps its cause as `source()`, and its `Display` is
//! one line that includes the cause's text, so `main` prints `zeppelin: error: {error}` as it
//! is (exit status 1).

use std::fmt;
use std::path::PathBuf;

use zeppelin_seal::SealError;

use crate::console::ConsoleError;
use crate::evalmult::EvalmultError;
use crate::input::InputError;
use crate::output::{IoAction, OutputError};
use crate::rblwe::RblweError;

/// Result of a subcommand.
pub type CliResult<T> = Result<T, CliError>;

/// An operation of the device client or of the SEAL side that is not about one file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operation {
    /// The device's secret key.
    SecretKeyGeneration,
    /// The device's public key.
    PublicKeyGeneration,
    /// Batch encoding of the slots.
    Encoding,
    /// Batch decoding of the plaintext.
    Decoding,
    /// Seeded symmetric encryption.
    SeededEncryption,
    /// Classic symmetric encryption.
    SymmetricEncryption,
    /// Public-key encryption.
    PublicEncryption,
    /// Decryption.
    Decryption,
    /// The fixed-point scale of the demo.
    FixedPoint,
    /// Quantizing the demo's readings.
    Quantizing,
    /// The SEAL context of the preset.
    SealParameters,
    /// The SEAL secret key.
    SealSecretKey,
    /// The SEAL public key.
    SealPublicKey,
    /// Device ciphertext to SEAL ciphertext.
    Adapting,
    /// SEAL's own seeded form (reseeding, writing).
    SealSeededForm,
    /// Writing a SEAL ciphertext.
    SealCiphertext,
    /// Writing the device's wire form.
    WireForm,
    /// Preparing key-switching key generation.
    KeyGeneration,
    /// Relinearization keys.
    RelinKeys,
    /// Galois keys.
    GaloisKeys,
    /// Galois elements for `--steps`.
    Steps,
    /// Building an NTT table (`bench`).
    NttTable,
    /// An NTT transform (`bench`).
    Ntt,
}

impl fmt::Display for Operation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Operation::SecretKeyGeneration => "secret key generation",
            Operation::PublicKeyGeneration => "public key generation",
            Operation::Encoding => "encoding",
            Operation::Decoding => "decoding",
            Operation::SeededEncryption => "seeded encryption",
            Operation::SymmetricEncryption => "symmetric encryption",
            Operation::PublicEncryption => "public-key encryption",
            Operation::Decryption => "decryption",
            Operation::FixedPoint => "fixed point",
            Operation::Quantizing => "quantizing",
            Operation::SealParameters => "SEAL parameters",
            Operation::SealSecretKey => "SEAL secret key",
            Operation::SealPublicKey => "SEAL public key",
            Operation::Adapting => "adapter",
            Operation::SealSeededForm => "SEAL seeded form",
            Operation::SealCiphertext => "SEAL ciphertext",
            Operation::WireForm => "wire form",
            Operation::KeyGeneration => "key generation",
            Operation::RelinKeys => "relinearization keys",
            Operation::GaloisKeys => "Galois keys",
            Operation::Steps => "--steps",
            Operation::NttTable => "NTT table",
            Operation::Ntt => "NTT",
        })
    }
}

/// Everything a `zeppelin` subcommand can fail with.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// A file or directory could not be read, written, created or removed.
    #[error("cannot {action} {}: {source}", path.display())]
    Io {
        /// What was being done.
        action: IoAction,
        /// The file or directory.
        path: PathBuf,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// The key directory has no preset file.
    #[error("cannot read {} (run `zeppelin keygen --dir {}` first): {source}", path.display(), dir.display())]
    NoKeyDirectory {
        /// The preset file.
        path: PathBuf,
        /// The key directory.
        dir: PathBuf,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// A key-switching key file is missing.
    #[error("cannot read {} (run `zeppelin keys --dir {} {flag}` first): {source}", path.display(), dir.display())]
    NoSwitchingKeys {
        /// The file.
        path: PathBuf,
        /// The key directory.
        dir: PathBuf,
        /// The flag of `zeppelin keys` that writes it.
        flag: &'static str,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// The preset file names no known preset.
    #[error("{}: unknown preset {found:?}", path.display())]
    UnknownPreset {
        /// The preset file.
        path: PathBuf,
        /// Its content.
        found: String,
    },
    /// A SEAL object in a file, or its conversion for the device, was refused.
    #[error("{}: {source}", path.display())]
    SealFile {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        #[source]
        source: SealError,
    },
    /// A SEAL-side operation failed.
    #[error("{operation}: {source}")]
    Seal {
        /// The operation.
        operation: Operation,
        /// What is wrong.
        #[source]
        source: SealError,
    },
    /// A device key file was refused.
    #[error("{}: {source}", path.display())]
    DeviceFile {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        #[source]
        source: zeppelin::Error,
    },
    /// A device operation failed.
    #[error("{operation}: {source}")]
    Device {
        /// The operation.
        operation: Operation,
        /// What is wrong.
        #[source]
        source: zeppelin::Error,
    },
    /// A line of a values file that is not a slot value.
    #[error("{} line {line}: not an integer in [0, {t})", path.display())]
    BadValue {
        /// The values file.
        path: PathBuf,
        /// Line number (from 1).
        line: usize,
        /// The plaintext modulus.
        t: u32,
    },
    /// A values file with more values than slots.
    #[error("{} line {line}: more than {slots} values", path.display())]
    TooManyValues {
        /// The values file.
        path: PathBuf,
        /// Line number (from 1) of the first value too many.
        line: usize,
        /// The number of slots.
        slots: usize,
    },
    /// `--level` outside the preset's levels.
    #[error("--level {level} is not in 1..={max} for this preset")]
    Level {
        /// The level given.
        level: usize,
        /// The preset's number of data primes.
        max: usize,
    },
    /// `adapt` was given a SEAL ciphertext.
    #[error("{}: a SEAL ciphertext, not a device wire form (adapt reads the device's seeded or full form)", path.display())]
    NotDeviceForm {
        /// The input file.
        path: PathBuf,
    },
    /// `keys` without `--relin` or `--galois`.
    #[error("nothing to do: pass --relin and/or --galois")]
    NothingToDo,
    /// `--steps` without `--galois`.
    #[error("--steps needs --galois")]
    StepsWithoutGalois,
    /// A self-check of `demo` or `bench` decrypted to other slots.
    #[error("{command}: decrypted slots differ from the encrypted ones")]
    RoundTrip {
        /// The subcommand.
        command: &'static str,
    },
    /// Standard output or error could not be written.
    #[error(transparent)]
    Console(#[from] ConsoleError),
    /// An output was not written (nothing visible changed).
    #[error(transparent)]
    Output(#[from] OutputError),
    /// An input file was refused before it was parsed.
    #[error(transparent)]
    Input(#[from] InputError),
    /// `D/params.seal` holds other parameters than the preset `D/preset` names.
    #[error("{}: EncryptionParameters does not fit the device preset {preset} (named in D/preset): {difference}", path.display())]
    NotPresetParameters {
        /// The parameters file.
        path: PathBuf,
        /// The preset's name.
        preset: &'static str,
        /// The first difference.
        difference: String,
    },
    /// `D/secret.seal` and `D/device.sk` hold different keys.
    #[error("{} and {} hold different secret keys", seal.display(), device.display())]
    SecretKeysDiffer {
        /// SEAL's secret key file.
        seal: PathBuf,
        /// The device's secret key file.
        device: PathBuf,
    },
    /// `eval --op add|sub|mul` without `--in2`.
    #[error("--op {op} takes two ciphertexts: pass --in2")]
    MissingSecondInput {
        /// The operation.
        op: &'static str,
    },
    /// `eval` with `--in2` for an operation on one ciphertext.
    #[error("--op {op} takes one ciphertext: drop --in2")]
    UnexpectedSecondInput {
        /// The operation.
        op: &'static str,
    },
    /// `eval --op rotate-rows` without `--steps`.
    #[error("--op rotate-rows needs --steps")]
    MissingSteps,
    /// `eval` with `--steps` for an operation other than `rotate-rows`.
    #[error("--steps is for --op rotate-rows, not --op {op}")]
    UnexpectedSteps {
        /// The operation.
        op: &'static str,
    },
    /// `eval`: the evaluator refused the operands (other levels, a size the operation does
    /// not take, the last level for mod-switch, a missing Galois key...).
    #[error("eval --op {op}: {source}")]
    Eval {
        /// The operation.
        op: &'static str,
        /// What is wrong.
        #[source]
        source: zeppelin_server::EvalError,
    },
    /// `zeppelin demo` failed.
    #[error(transparent)]
    Demo(Box<crate::demo_error::DemoError>),
    /// `zeppelin evalmult` failed.
    #[error(transparent)]
    Evalmult(#[from] EvalmultError),
    /// `zeppelin rblwe` failed.
    #[error(transparent)]
    Rblwe(#[from] RblweError),
    /// `zeppelin serve` with a preset the service does not run.
    #[error("zeppelin serve runs presets seal4096 and seal8192; the key directory's is {preset}")]
    PresetNotServed {
        /// The key directory's preset.
        preset: &'static str,
    },
    /// The service's store could not be opened or closed.
    #[error(transparent)]
    Store(#[from] zeppelin_service::store::StoreError),
    /// The credential registry could not be read, written or changed.
    #[error(transparent)]
    Registry(#[from] zeppelin_service::principals::RegistryError),
    /// A device or stream name breaks the naming rules.
    #[error(transparent)]
    Name(#[from] zeppelin_service::names::NameError),
    /// Plain HTTP on an address other than loopback without `--insecure-listen`.
    #[error("refusing plain HTTP on {addr}, which is not a loopback address: tokens would cross the network in clear; give --tls-cert and --tls-key, listen on 127.0.0.1 (behind a TLS proxy), or pass --insecure-listen")]
    InsecureListen {
        /// The address.
        addr: String,
    },
    /// `zeppelin serve --tls-cert/--tls-key/--client-ca` files that do not load.
    #[error("TLS: {0}")]
    Tls(#[from] zeppelin_service::tls::TlsError),
    /// `zeppelin serve --store` without a directory for the credential registry.
    #[error("zeppelin serve --store nats://... needs --auth-dir DIR for the credential registry")]
    NoAuthDir,
    /// The service did not start or stop cleanly.
    #[error(transparent)]
    Service(#[from] zeppelin_service::StartError),
    /// `zeppelin serve` needs exactly one store.
    #[error("zeppelin serve needs exactly one of --data DIR and --store nats://...")]
    ServeStore,
    /// The receipt task of the NATS store did not start.
    #[error(transparent)]
    Receipts(#[from] zeppelin_cluster::receipts::ReceiptError),
    /// `--data` is not a writable directory.
    #[error("--data {path}: {problem}")]
    DataDir {
        /// The path given.
        path: String,
        /// What is wrong with it.
        problem: String,
    },
    /// The listening address could not be bound.
    #[error("cannot listen on {addr}: {source}")]
    Listen {
        /// The address.
        addr: String,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// The async runtime could not be started.
    #[error("cannot start the async runtime: {0}")]
    Runtime(#[source] std::io::Error),
    /// A worker of the aggregation group failed.
    #[error(transparent)]
    Worker(#[from] zeppelin_cluster::worker::WorkerError),
    /// The job topology on NATS could not be set up.
    #[error(transparent)]
    Jobs(#[from] zeppelin_cluster::jobs::NatsError),
    /// `--aggregate workers` without a NATS store to reach the workers through.
    #[error("--aggregate workers needs --store nats://...; use --aggregate local with --data")]
    WorkersNeedNats,
    /// `--aggregate workers` without the cluster key the workers share.
    #[error(
        "aggregation by the worker group needs --cluster-key FILE (env ZEPPELIN_CLUSTER_KEY), \
         the key the workers were given (create one with `zeppelin cluster-key new FILE`); \
         or pass --aggregate local"
    )]
    NoClusterKey,
    /// The cluster key file could not be read or written.
    #[error("cluster key: {0}")]
    ClusterKey(#[from] zeppelin_cluster::auth::SecretFileError),
}

impl From<crate::demo_error::DemoError> for CliError {
    fn from(e: crate::demo_error::DemoError) -> Self {
        CliError::Demo(Box::new(e))
    }
}

impl CliError {
    /// A write to stdout or stderr found the pipe closed (the run ends quietly, exit 1).
    pub fn is_broken_pipe(&self) -> bool {
        match self {
            CliError::Console(c)
            | CliError::Rblwe(RblweError::Console(c))
            | CliError::Evalmult(EvalmultError::Console(c)) => c.is_broken_pipe(),
            _ => false,
        }
    }

    /// `map_err` adapter for a SEAL-side operation.
    pub fn seal(operation: Operation) -> impl FnOnce(SealError) -> CliError {
        move |source| CliError::Seal { operation, source }
    }

    /// `map_err` adapter for a SEAL object in a file.
    pub fn seal_file(path: &std::path::Path) -> impl FnOnce(SealError) -> CliError + '_ {
        move |source| CliError::SealFile {
            path: path.to_path_buf(),
            source,
        }
    }

    /// `map_err` adapter for a device operation.
    pub fn device(operation: Operation) -> impl FnOnce(zeppelin::Error) -> CliError {
        move |source| CliError::Device { operation, source }
    }
}
