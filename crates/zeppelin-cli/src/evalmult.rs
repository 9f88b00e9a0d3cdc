//! `zeppelin evalmult`: OpenFHE-exact batched EvalMult + BV relinearization
//! (`zeppelin-evalmult`) on a vector directory, or as a TCP service speaking the FPGA's
//! stream protocol.
//!
//! - `zeppelin evalmult --in DIR --out OUT [--check]`: reads DIR in the layout of
//!   `shared/vectors/README.md`, writes `OUT/ctk_relin0.bin` and `OUT/ctk_relin1.bin`; with
//!   `--check`, compares them with DIR's relin files (when present), prints the mismatches
//!   and fails if there is any.
//! - `zeppelin evalmult serve [--listen 127.0.0.1:7878] [--ring-dim 4096]`: the loopback
//!   server (frames documented in `zeppelin_evalmult::frames`).

use std::net::TcpListener;
use std::path::PathBuf;

use clap::{Args, Subcommand};
use zeppelin_evalmult::EvalMultError;

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
    /// The server stopped with an error.
    #[error("server: {source}")]
    Server {
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// `--in` or `--out` missing.
    #[error("--in DIR and --out OUT are required")]
    MissingDirectories,
    /// The engine or the vector directory failed.
    #[error(transparent)]
    Engine(#[from] EvalMultError),
    /// `--check` found differences.
    #[error("{mismatches} residues differ from {}", input.display())]
    Mismatches {
        /// Number of differing residues.
        mismatches: usize,
        /// The input directory.
        input: PathBuf,
    },
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

/// Arguments of `zeppelin evalmult serve`.
#[derive(Args, Debug)]
pub struct ServeArgs {
    /// Address to listen on (loopback by default).
    #[arg(long, default_value = "127.0.0.1:7878")]
    pub listen: String,
    /// Ring dimension of every session (fixed per server, as on the FPGA).
    #[arg(long, default_value_t = 4096)]
    pub ring_dim: usize,
    /// Stop after this many connections (default: serve forever).
    #[arg(long)]
    pub max_connections: Option<usize>,
}

/// Runs `zeppelin evalmult`.
pub fn run(args: EvalmultArgs) -> Result<(), EvalmultError> {
    if let Some(EvalmultCommand::Serve(serve)) = args.command {
        let listener =
            TcpListener::bind(&serve.listen).map_err(|source| EvalmultError::Listen {
                address: serve.listen.clone(),
                source,
            })?;
        let local = listener
            .local_addr()
            .map_err(|source| EvalmultError::Listen {
                address: serve.listen.clone(),
                source,
            })?;
        eprintln!(
            "zeppelin evalmult: serving ring dimension {} on {local}",
            serve.ring_dim
        );
        return zeppelin_evalmult::server::serve(&listener, serve.ring_dim, serve.max_connections)
            .map_err(|source| EvalmultError::Server { source });
    }
    let (Some(input), Some(out)) = (args.input, args.out) else {
        return Err(EvalmultError::MissingDirectories);
    };
    let run = zeppelin_evalmult::vectors::run_directory(&input, &out, args.check)?;
    println!(
        "evalmult: {} pairs in {:.3} ms ({:.1} ct/s), results in {}",
        run.pairs,
        run.engine_seconds * 1e3,
        run.pairs as f64 / run.engine_seconds.max(f64::MIN_POSITIVE),
        out.display()
    );
    if args.check {
        match run.check {
            None => println!(
                "check: {} has no ctk_relin*.bin; nothing compared",
                input.display()
            ),
            Some(report) => {
                for m in &report.first {
                    println!(
                        "mismatch: pair {} relin{} tower {} coefficient {}: got {}, expected {}",
                        m.pair, m.component, m.tower, m.index, m.got, m.expected
                    );
                }
                println!(
                    "check: {} residues compared, {} mismatches",
                    report.compared, report.mismatches
                );
                if report.mismatches > 0 {
                    return Err(EvalmultError::Mismatches {
                        mismatches: report.mismatches,
                        input,
                    });
                }
            }
        }
    }
    Ok(())
}
