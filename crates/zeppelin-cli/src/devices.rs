//! `zeppelin devices add|revoke|list|owner --data DIR`: the service's credential registry
//! (`DIR/principals.json`, docs/server.md "Identities and roles"). `add` prints the new
//! device token once on stdout (the registry keeps only its SHA-256); `owner` issues a new
//! owner token into `DIR/owner.token` (0600); `list` never shows a token. A running `zeppelin
//! serve` sees each change at its next request.

use std::path::{Path, PathBuf};

use clap::{Args, Subcommand};
use rand_core::OsRng;
use zeppelin_service::names::StreamName;
use zeppelin_service::principals::{DeviceName, Registry, OWNER_TOKEN_FILE, REGISTRY_FILE};

use crate::error::{CliError, CliResult};
use crate::output::{write_file, Secrecy};

/// Arguments of `zeppelin devices`.
#[derive(Args)]
pub struct DevicesArgs {
    #[command(subcommand)]
    command: DevicesCommand,
}

#[derive(Subcommand)]
enum DevicesCommand {
    /// Register a device for its streams and print its token (shown once).
    Add {
        /// The service's data directory (or its --auth-dir).
        #[arg(long, env = "ZEPPELIN_DATA")]
        data: PathBuf,
        /// The device's name (A-Z a-z 0-9 _ -).
        #[arg(long)]
        device: String,
        /// A stream it may upload to (repeat for more).
        #[arg(long = "stream", required = true)]
        streams: Vec<String>,
    },
    /// Revoke a device: its token is refused from the next request on.
    Revoke {
        /// The service's data directory (or its --auth-dir).
        #[arg(long, env = "ZEPPELIN_DATA")]
        data: PathBuf,
        /// The device's name.
        #[arg(long)]
        device: String,
    },
    /// List the registered devices (name, streams, state; never tokens).
    List {
        /// The service's data directory (or its --auth-dir).
        #[arg(long, env = "ZEPPELIN_DATA")]
        data: PathBuf,
    },
    /// Issue a new owner token into DIR/owner.token (0600); the old one stops working.
    Owner {
        /// The service's data directory (or its --auth-dir).
        #[arg(long, env = "ZEPPELIN_DATA")]
        data: PathBuf,
    },
}

fn registry_path(dir: &Path) -> PathBuf {
    dir.join(REGISTRY_FILE)
}

fn load(dir: &Path) -> CliResult<Registry> {
    Ok(Registry::read(&registry_path(dir))?.unwrap_or_default())
}

fn save(dir: &Path, registry: &Registry) -> CliResult<()> {
    std::fs::create_dir_all(dir).map_err(|source| {
        CliError::Registry(zeppelin_service::principals::RegistryError::Io {
            path: dir.display().to_string(),
            source,
        })
    })?;
    // Digests only, but who holds which stream is the operator's business: 0600.
    Ok(write_file(
        &registry_path(dir),
        &registry.to_json(),
        Secrecy::Secret,
    )?)
}

/// Issues an owner token into `dir/owner.token` (0600) and its digest into the registry.
pub fn issue_owner(dir: &Path, registry: &mut Registry) -> CliResult<PathBuf> {
    let token = registry.issue_owner(&mut OsRng);
    let path = dir.join(OWNER_TOKEN_FILE);
    std::fs::create_dir_all(dir).map_err(|source| {
        CliError::Registry(zeppelin_service::principals::RegistryError::Io {
            path: dir.display().to_string(),
            source,
        })
    })?;
    let mut text = zeroize::Zeroizing::new(token.as_str().to_owned());
    text.push('\n');
    // The token first, then the registry: a crash between leaves the old owner token valid
    // and the new file unusable, never the service without an owner.
    write_file(&path, text.as_bytes(), Secrecy::Secret)?;
    save(dir, registry)?;
    Ok(path)
}

/// Makes sure the registry in `dir` has an owner; issues one (owner.token) at first start.
pub fn ensure_owner(dir: &Path) -> CliResult<Option<PathBuf>> {
    let mut registry = load(dir)?;
    if registry.has_owner() {
        return Ok(None);
    }
    issue_owner(dir, &mut registry).map(Some)
}

/// Runs `zeppelin devices`.
pub fn run(a: &DevicesArgs) -> CliResult<()> {
    match &a.command {
        DevicesCommand::Add {
            data,
            device,
            streams,
        } => {
            let name = DeviceName::new(device)?;
            let streams = streams
                .iter()
                .map(|s| StreamName::new(s))
                .collect::<Result<Vec<_>, _>>()?;
            let mut registry = load(data)?;
            let token = registry.add_device(&name, &streams, &mut OsRng)?;
            save(data, &registry)?;
            crate::console::line(format_args!("{}", token.as_str()))?;
        }
        DevicesCommand::Revoke { data, device } => {
            let name = DeviceName::new(device)?;
            let mut registry = load(data)?;
            registry.revoke(&name)?;
            save(data, &registry)?;
            crate::console::line(format_args!("revoked {name}"))?;
        }
        DevicesCommand::List { data } => {
            for d in load(data)?.devices() {
                let state = if d.revoked { "revoked" } else { "active" };
                crate::console::line(format_args!(
                    "{}\t{}\t{}",
                    d.name,
                    state,
                    d.streams.join(",")
                ))?;
            }
        }
        DevicesCommand::Owner { data } => {
            let mut registry = load(data)?;
            let path = issue_owner(data, &mut registry)?;
            crate::console::line(format_args!("owner token written to {}", path.display()))?;
        }
    }
    Ok(())
}
