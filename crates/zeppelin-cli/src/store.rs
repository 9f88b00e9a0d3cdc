//! `zeppelin store backup|check --data DIR`: the SQLite store's operator tools
//! (docs/server.md "Store"). `backup` copies a store that `serve` may be writing into one
//! checked database file (SQLite `VACUUM INTO`, written atomically, 0600); `check` runs the
//! checks of the start plus every upload's digest. Neither writes to the store.

use std::path::PathBuf;

use clap::{Args, Subcommand};
use zeppelin_service::store::{backup, check_store, StoreSummary};

use crate::error::CliResult;

/// Arguments of `zeppelin store`.
#[derive(Args)]
pub struct StoreArgs {
    #[command(subcommand)]
    command: StoreCommand,
}

#[derive(Subcommand)]
enum StoreCommand {
    /// Copy the store (while `serve` runs, if it does) into FILE: one consistent snapshot,
    /// checked, written atomically. To restore: an empty data directory with FILE as
    /// zeppelin.sqlite3.
    Backup {
        /// The service's data directory.
        #[arg(long, env = "ZEPPELIN_DATA")]
        data: PathBuf,
        /// The backup file to write (replaced atomically if it exists).
        #[arg(long)]
        out: PathBuf,
    },
    /// Check the store: the checks `serve` runs at start, then every upload's digest.
    Check {
        /// The service's data directory.
        #[arg(long, env = "ZEPPELIN_DATA")]
        data: PathBuf,
    },
}

fn summary(s: StoreSummary) -> String {
    format!("{} streams, {} uploads", s.streams, s.uploads)
}

/// Runs `zeppelin store`.
pub fn run(a: &StoreArgs) -> CliResult<()> {
    match &a.command {
        StoreCommand::Backup { data, out } => {
            let done = backup(data, out)?;
            crate::console::line(format_args!(
                "backed up {} to {}",
                summary(done),
                out.display()
            ))?;
        }
        StoreCommand::Check { data } => {
            let done = check_store(data)?;
            crate::console::line(format_args!("store ok: {}", summary(done)))?;
        }
    }
    Ok(())
}
