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
//!
//! Wiring (in main.rs): a `Command::Evalmult(evalmult::EvalmultArgs)` variant, dispatched as
//! `Command::Evalmult(a) => evalmult::run(a)`; Cargo.toml needs
//! `zeppelin-evalmult = { path = "../evalmult" }`.

use std::net::TcpListener;
use std::path::PathBuf;

use clap::{Args, Subcommand};

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

/// Runs `zeppelin evalmult`; an `Err` is the one-line message for stderr (exit status 1).
pub fn run(args: EvalmultArgs) -> Result<(), String> {
    if let Some(EvalmultCommand::Serve(serve)) = args.command {
        let listener = TcpListener::bind(&serve.listen)
            .map_err(|e| format!("cannot listen on {}: {e}", serve.listen))?;
        let local = listener.local_addr().map_err(|e| e.to_string())?;
        eprintln!(
            "zeppelin evalmult: serving ring dimension {} on {local}",
            serve.ring_dim
        );
        return zeppelin_evalmult::server::serve(&listener, serve.ring_dim, serve.max_connections)
            .map_err(|e| format!("server: {e}"));
    }
    let (Some(input), Some(out)) = (args.input, args.out) else {
        return Err("--in DIR and --out OUT are required".into());
    };
    let run = zeppelin_evalmult::vectors::run_directory(&input, &out, args.check)
        .map_err(|e| e.to_string())?;
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
                    return Err(format!(
                        "{} residues differ from {}",
                        report.mismatches,
                        input.display()
                    ));
                }
            }
        }
    }
    Ok(())
}
