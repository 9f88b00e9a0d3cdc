//! `zeppelin`: the device client, the SEAL bridge and trusted-side SEAL keys on the command
//! line, the Rust evaluator on SEAL files (`eval`), the aggregation service (`serve`) and the
//! fleet demo (`demo`). The contract (files, exit codes, output) is documented in
//! `docs/cli.md`.
//!
//! Exit status 0 on success; 1 with one line `zeppelin: error: ...` on stderr when an input is
//! bad or an operation fails (and, without the line, when a reader closed stdout); 2 for a
//! malformed command line (clap's usage error); 130 after SIGINT, SIGTERM or SIGHUP while
//! files were being written (the staged files are removed first). Never a panic on I/O.
//!
//! Files are read through [`input`] (size caps from the preset) and written through
//! [`output`] (staged, exclusive, synced, renamed; key directories swapped in whole).
//!
//! This library is the command-line model and the dispatch (`src/main.rs` only calls
//! [`run`]); each subcommand lives in its own module, over `zeppelin_seal::device` (the typed device ⇄ SEAL bridge), with the key
//! directory's layout in [`keydir`] and the preset names in [`preset`].

pub mod adapt;
pub mod bench;
pub mod cleanup;
pub mod console;
pub mod decrypt;
pub mod demo;
pub mod demo_error;
pub mod demo_local;
pub mod devices;
pub mod encrypt;
pub mod error;
pub mod eval;
pub mod evalmult;
pub mod input;
pub mod keydir;
pub mod keygen;
pub mod keys;
pub mod nats;
pub mod output;
pub mod preset;
pub mod private_dir;
pub mod rblwe;
pub mod serve;
pub mod slots;
pub mod store;
pub mod worker;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

use crate::error::CliError;

#[derive(Parser)]
#[command(
    name = "zeppelin",
    version,
    about = "Zeppelin BFV device client, SEAL 4.1 adapter and trusted-side SEAL keys"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Generate a device secret key and the SEAL objects for it in DIR.
    Keygen(keygen::KeygenArgs),
    /// Encrypt up to 4096 slot values (integers in [0, 65537), one per line) into the device wire form.
    Encrypt(encrypt::EncryptArgs),
    /// Turn a device ciphertext into a SEAL Ciphertext at SEAL's first data level.
    Adapt(adapt::AdaptArgs),
    /// Decrypt a device ciphertext or any SEAL Ciphertext and print the 4096 slots, one per line.
    Decrypt(decrypt::DecryptArgs),
    /// Generate SEAL RelinKeys and/or GaloisKeys from DIR/secret.seal (trusted side).
    Keys(keys::KeysArgs),
    /// The fleet demo: devices encrypt readings, upload them to the aggregation service, the key owner decrypts mean and variance.
    Demo(demo::DemoArgs),
    /// One device end to end: keygen, encrypt, adapt and decrypt, with sizes and timings.
    DemoLocal(demo_local::DemoLocalArgs),
    /// One SEAL Evaluator operation on SEAL ciphertext files, with D's public keys.
    Eval(eval::EvalArgs),
    /// OpenFHE-exact batched EvalMult + BV relinearization on a vector directory, or `serve`.
    Evalmult(evalmult::EvalmultArgs),
    /// Ring-binary-LWE public-key encryption (CPA or CCA2) with files: keygen, encrypt, decrypt.
    Rblwe(rblwe::RblweArgs),
    /// Median timings of the device operations on this host (set beside SEAL, fhe.rs and tfhe-ntt by scripts/peer_bench.sh).
    Bench(bench::BenchArgs),
    /// Run the aggregation service over HTTP (docs/server.md) on a durable store: SQLite in
    /// DIR (--data) or NATS JetStream (--store nats://...).
    Serve(Box<serve::ServeArgs>),
    /// The service's credentials: register, revoke and list devices, issue the owner token.
    Devices(devices::DevicesArgs),
    /// Run an aggregation worker of the NATS JetStream cluster (sums shards of jobs).
    Worker(worker::WorkerArgs),
    /// The key the service and the workers of a NATS cluster share: `cluster-key new FILE`.
    ClusterKey(nats::ClusterKeyArgs),
    /// The SQLite store's operator tools: an online backup, a full check.
    Store(store::StoreArgs),
}

/// Parses the command line, runs the subcommand and returns the process's exit status
/// (errors are printed to stderr as one line).
pub fn run() -> ExitCode {
    ignore_file_size_signal();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            // --help and --version are "errors" with exit code 0; a failed print is exit 1.
            return match e.print() {
                Ok(()) => ExitCode::from(u8::try_from(e.exit_code()).unwrap_or(2)),
                Err(source) => {
                    let failure = console::ConsoleError {
                        stream: if e.use_stderr() { "stderr" } else { "stdout" },
                        source,
                    };
                    if !failure.is_broken_pipe() {
                        let _ = console::warn(format_args!("zeppelin: error: {failure}"));
                    }
                    ExitCode::FAILURE
                }
            };
        }
    };
    let result = match cli.command {
        Command::Keygen(a) => keygen::run(&a),
        Command::Encrypt(a) => encrypt::run(&a),
        Command::Adapt(a) => adapt::run(&a),
        Command::Decrypt(a) => decrypt::run(&a),
        Command::Keys(a) => keys::run(&a),
        Command::Demo(a) => demo::run(&a),
        Command::DemoLocal(a) => demo_local::run(&a),
        Command::Eval(a) => eval::run(&a),
        Command::Evalmult(a) => evalmult::run(a).map_err(CliError::from),
        Command::Rblwe(a) => rblwe::run(a).map_err(CliError::from),
        Command::Bench(a) => bench::run(&a),
        Command::Serve(a) => serve::run(&a),
        Command::Worker(a) => worker::run(&a),
        Command::ClusterKey(a) => nats::run(&a),
        Command::Devices(a) => devices::run(&a),
        Command::Store(a) => store::run(&a),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        // The reader stopped reading: nobody to tell, and the output is incomplete.
        Err(e) if e.is_broken_pipe() => ExitCode::FAILURE,
        Err(e) => {
            // Every error's text already includes its causes: one line. If stderr fails
            // too, the exit status is all that is left.
            let _ = console::warn(format_args!(
                "zeppelin: error: {}",
                e.to_string().replace('\n', " ")
            ));
            ExitCode::FAILURE
        }
    }
}

/// Makes a write past `RLIMIT_FSIZE` fail with `EFBIG` (an error the writer handles: the
/// staged file is removed) instead of killing the process with SIGXFSZ.
fn ignore_file_size_signal() {
    #[cfg(unix)]
    // SAFETY: setting a signal's disposition to SIG_IGN installs no handler code and is done
    // before any thread of ours exists.
    unsafe {
        libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
    }
}
