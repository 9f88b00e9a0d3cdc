//! `zeppelin evalmult`: OpenFHE-exact batched EvalMult + BV relinearization
//! (`zeppelin-evalmult`) on a vector directory, or as a TCP service speaking the FPGA's
//! stream protocol.
//!
//! - `zeppelin evalmult --in DIR --out OUT [--check]`: reads DIR in the layout of
//!   `shared/vectors/README.md`, writes `OUT/ctk_relin0.bin` and `OUT/ctk_relin1.bin`; with
//!   `--check`, compares them with DIR's relin files first: any mismatch (or DIR without
//!   relin files to compare with) is an error, and then nothing is written, not even to
//!   stdout. The outputs are staged ([`crate::output`]) and committed together only once
//!   everything succeeded.
//! - `zeppelin evalmult serve [--listen 127.0.0.1:7878] [--ring-dim 4096] [limits]`: the
//!   loopback server (frames documented in `zeppelin_evalmult::frames`, limits in
//!   `zeppelin_evalmult::server`); it runs until SIGTERM or SIGINT, then finishes or cancels
//!   in-flight work within `--shutdown-grace` and exits 0.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::{Args, Subcommand};
use zeppelin_evalmult::server::{Server, ServerConfig};
use zeppelin_evalmult::vectors::{compare, poly_to_le_bytes, VectorSet};
use zeppelin_evalmult::{EvalMultError, ServerError};

use crate::console::ConsoleError;
use crate::outln;
use crate::output::{commit_all, OutputError, Secrecy, StagedFile};

/// What `zeppelin evalmult` can fail with.
#[derive(Debug, thiserror::Error)]
pub enum EvalmultError {
    /// The listening socket could not be opened.
    #[error("cannot listen on {address}: {source}")]
    Listen {
        /// The `--listen` address.
        address: String,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// The server's configuration is invalid, or it stopped with an error.
    #[error("server: {0}")]
    Server(#[source] ServerError),
    /// `--in` or `--out` missing.
    #[error("--in DIR and --out OUT are required")]
    MissingDirectories,
    /// The engine or the vector directory failed.
    #[error(transparent)]
    Engine(#[from] EvalMultError),
    /// `--check` found differences (nothing was written).
    #[error("check: {mismatches} of {compared} residues differ from {}, {first}; nothing written", input.display())]
    Mismatches {
        /// Number of differing residues.
        mismatches: usize,
        /// Number compared.
        compared: usize,
        /// Where the first difference is.
        first: String,
        /// The input directory.
        input: PathBuf,
    },
    /// `--check` on a directory without the expected outputs.
    #[error("check: {} has no ctk_relin0.bin / ctk_relin1.bin for every pair: nothing to compare with", input.display())]
    NothingToCompare {
        /// The input directory.
        input: PathBuf,
    },
    /// The output directory could not be created.
    #[error("cannot create {}: {source}", path.display())]
    CreateOut {
        /// `--out`.
        path: PathBuf,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// An output was not written.
    #[error(transparent)]
    Output(#[from] OutputError),
    /// Standard output could not be written.
    #[error(transparent)]
    Console(#[from] ConsoleError),
}

/// Arguments of `zeppelin evalmult`.
#[derive(Args, Debug)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub struct EvalmultArgs {
    /// Serve instead of processing a directory.
    #[command(subcommand)]
    pub command: Option<EvalmultCommand>,
    /// Input directory (manifest.json, evk_a_i/evk_b_i, ctk_x0/x1/y0/y1).
    #[arg(long = "in", value_name = "DIR", required = true)]
    pub input: Option<PathBuf>,
    /// Output directory for ctk_relin0.bin / ctk_relin1.bin.
    #[arg(long, value_name = "OUT", required = true)]
    pub out: Option<PathBuf>,
    /// Compare the results with DIR's ctk_relin*.bin; exit non-zero on any mismatch.
    #[arg(long)]
    pub check: bool,
}

/// Subcommands of `zeppelin evalmult`.
#[derive(Subcommand, Debug)]
pub enum EvalmultCommand {
    /// Serve the FPGA stream protocol (RLPT/RLMP, plus RLMD with in-server decomposition)
    /// over TCP.
    Serve(ServeArgs),
}

/// Arguments of `zeppelin evalmult serve` (limits: `zeppelin_evalmult::server::ServerConfig`;
/// every one is checked before the server listens).
#[derive(Args, Debug)]
pub struct ServeArgs {
    /// Address to listen on (loopback by default).
    #[arg(long, default_value = "127.0.0.1:7878")]
    pub listen: String,
    /// Ring dimension of every session (fixed per server, as on the FPGA): a power of two
    /// in [16, 131072].
    #[arg(long, default_value_t = 4096)]
    pub ring_dim: usize,
    /// Connections served at once; more are answered with one RLER frame and closed.
    #[arg(long, default_value_t = 256)]
    pub max_connections: usize,
    /// Seconds a connection may wait between frames.
    #[arg(long, value_name = "SECS", default_value = "60", value_parser = seconds)]
    pub idle_timeout: Duration,
    /// Seconds a frame has to start arriving; then it must keep up with --min-rate.
    #[arg(long, value_name = "SECS", default_value = "10", value_parser = seconds)]
    pub read_timeout: Duration,
    /// Slowest accepted frame transfer rate, bytes per second.
    #[arg(long, value_name = "BYTES", default_value_t = 1 << 20)]
    pub min_rate: u64,
    /// Seconds replies may take to be read by the client.
    #[arg(long, value_name = "SECS", default_value = "10", value_parser = seconds)]
    pub write_timeout: Duration,
    /// Seconds from a session's first pair frame to its last; then it is dropped.
    #[arg(long, value_name = "SECS", default_value = "120", value_parser = seconds)]
    pub session_timeout: Duration,
    /// Memory cap of one connection, MiB (frames, buffered frames, working set).
    #[arg(long, value_name = "MIB", default_value_t = 256)]
    pub session_memory: usize,
    /// Memory cap of all connections together, MiB.
    #[arg(long, value_name = "MIB", default_value_t = 1024)]
    pub memory: usize,
    /// Computations at once (default: one per core).
    #[arg(long)]
    pub workers: Option<usize>,
    /// Consecutive refused frames after which a connection is closed.
    #[arg(long, default_value_t = 32)]
    pub max_errors: usize,
    /// Seconds in-flight work may take to finish after SIGTERM/SIGINT.
    #[arg(long, value_name = "SECS", default_value = "10", value_parser = seconds)]
    pub shutdown_grace: Duration,
}

/// A non-negative number of seconds.
fn seconds(text: &str) -> Result<Duration, String> {
    let secs: f64 = text
        .parse()
        .map_err(|_| format!("`{text}` is not a number of seconds"))?;
    Duration::try_from_secs_f64(secs).map_err(|e| format!("`{text}`: {e}"))
}

impl ServeArgs {
    fn config(&self) -> ServerConfig {
        let mut config = ServerConfig::new(self.ring_dim);
        config.max_connections = self.max_connections;
        config.idle_timeout = self.idle_timeout;
        config.read_timeout = self.read_timeout;
        config.min_rate = self.min_rate;
        config.write_timeout = self.write_timeout;
        config.session_timeout = self.session_timeout;
        config.session_memory = self.session_memory.saturating_mul(1 << 20);
        config.total_memory = self.memory.saturating_mul(1 << 20);
        if let Some(workers) = self.workers {
            config.workers = workers;
        }
        config.max_errors = self.max_errors;
        config.shutdown_grace = self.shutdown_grace;
        config
    }
}

/// `zeppelin evalmult serve`: validate, listen, serve until SIGTERM/SIGINT, exit 0.
fn serve(serve: &ServeArgs) -> Result<(), EvalmultError> {
    let config = serve.config();
    // Checked before the socket is opened: a bad setting never listens.
    config
        .validate()
        .map_err(|e| EvalmultError::Server(e.into()))?;
    let listener = TcpListener::bind(&serve.listen).map_err(|source| EvalmultError::Listen {
        address: serve.listen.clone(),
        source,
    })?;
    let server = Server::new(listener, config).map_err(EvalmultError::Server)?;
    let local = server.local_addr().map_err(EvalmultError::Server)?;
    eprintln!(
        "zeppelin evalmult: serving ring dimension {} on {local}",
        serve.ring_dim
    );
    let stats = server.run_until_signal().map_err(EvalmultError::Server)?;
    eprintln!("zeppelin evalmult: stopped: {stats}");
    Ok(())
}

/// Runs `zeppelin evalmult`.
pub fn run(args: EvalmultArgs) -> Result<(), EvalmultError> {
    if let Some(EvalmultCommand::Serve(args)) = &args.command {
        return serve(args);
    }
    let (Some(input), Some(out)) = (args.input, args.out) else {
        return Err(EvalmultError::MissingDirectories);
    };
    run_directory(&input, &out, args.check)
}

/// `--in DIR --out OUT [--check]`: every check before the first byte is written.
fn run_directory(input: &Path, out: &Path, check: bool) -> Result<(), EvalmultError> {
    let set = VectorSet::load(input)?;
    if check && set.expected.is_none() {
        return Err(EvalmultError::NothingToCompare {
            input: input.to_path_buf(),
        });
    }
    let engine = zeppelin_evalmult::Engine::new(set.context.clone(), &set.key)?;
    let start = std::time::Instant::now();
    let results = engine.eval_mult(&set.pairs)?;
    let engine_seconds = start.elapsed().as_secs_f64();
    let report = match (&set.expected, check) {
        (Some(expected), true) => {
            let report = compare(set.context.ring_dim(), &results, expected);
            if report.mismatches > 0 {
                let first = match report.first.first() {
                    Some(m) => format!(
                        "first at pair {} relin{} tower {} coefficient {} (got {}, expected {})",
                        m.pair, m.component, m.tower, m.index, m.got, m.expected
                    ),
                    None => String::from("in their number or lengths"),
                };
                return Err(EvalmultError::Mismatches {
                    mismatches: report.mismatches,
                    compared: report.compared,
                    first,
                    input: input.to_path_buf(),
                });
            }
            Some(report)
        }
        _ => None,
    };
    let created = !out.exists();
    std::fs::create_dir_all(out).map_err(|source| EvalmultError::CreateOut {
        path: out.to_path_buf(),
        source,
    })?;
    let staged = (|| {
        let mut staged = Vec::with_capacity(2 * results.len());
        for (k, ct) in results.iter().enumerate() {
            for (component, poly) in [(0, &ct.c0), (1, &ct.c1)] {
                let path = out.join(format!("ct{k}_relin{component}.bin"));
                staged.push(StagedFile::write(
                    &path,
                    &poly_to_le_bytes(poly),
                    Secrecy::Public,
                )?);
            }
        }
        commit_all(staged)
    })();
    if let Err(e) = staged {
        if created {
            // Only an empty directory this run made; anything else stays.
            let _ = std::fs::remove_dir(out);
        }
        return Err(e.into());
    }
    outln!(
        "evalmult: {} pairs in {:.3} ms ({:.1} ct/s), results in {}",
        results.len(),
        engine_seconds * 1e3,
        results.len() as f64 / engine_seconds.max(f64::MIN_POSITIVE),
        out.display()
    )?;
    if let Some(report) = report {
        outln!("check: {} residues compared, 0 mismatches", report.compared)?;
    }
    Ok(())
}
