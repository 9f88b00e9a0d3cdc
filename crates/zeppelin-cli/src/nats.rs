//! The NATS side of `zeppelin serve --store nats://...` and `zeppelin worker`: the flags for
//! credentials and TLS ([`NatsArgs`], shared by both), the cluster key flag, and
//! `zeppelin cluster-key new FILE` (docs/server.md "Securing the bus").

use std::path::{Path, PathBuf};
use std::sync::Arc;

use clap::{Args, Subcommand};
use zeppelin_cluster::auth::ClusterKey;
use zeppelin_cluster::connect::NatsOptions;

use crate::error::{CliError, CliResult};

/// How to authenticate to NATS and trust its TLS certificates (credentials may also ride in
/// the URL: `nats://USER:PASS@HOST` or `nats://TOKEN@HOST`).
#[derive(Args, Clone, Debug, Default)]
pub struct NatsArgs {
    /// NATS credentials file (user JWT and nkey seed, as `nsc` writes it; mode 0600).
    #[arg(long, env = "ZEPPELIN_NATS_CREDS", value_name = "FILE")]
    pub nats_creds: Option<PathBuf>,
    /// File holding the NATS user's nkey seed (`SU...`; mode 0600).
    #[arg(
        long,
        env = "ZEPPELIN_NATS_NKEY",
        value_name = "FILE",
        conflicts_with = "nats_creds"
    )]
    pub nats_nkey: Option<PathBuf>,
    /// CA certificates (PEM) that sign the NATS servers' TLS certificates (default: the
    /// system's roots); makes TLS required.
    #[arg(long, env = "ZEPPELIN_NATS_CA", value_name = "PEM")]
    pub nats_ca: Option<PathBuf>,
    /// Client certificate (PEM) for NATS mutual TLS; needs --nats-key.
    #[arg(
        long,
        env = "ZEPPELIN_NATS_CERT",
        value_name = "PEM",
        requires = "nats_key"
    )]
    pub nats_cert: Option<PathBuf>,
    /// The private key of --nats-cert (PEM; mode 0600).
    #[arg(
        long,
        env = "ZEPPELIN_NATS_KEY",
        value_name = "PEM",
        requires = "nats_cert"
    )]
    pub nats_key: Option<PathBuf>,
}

impl NatsArgs {
    /// The connection options for `urls` with these flags.
    pub fn options(&self, urls: &str) -> NatsOptions {
        NatsOptions {
            urls: urls.to_owned(),
            creds: self.nats_creds.clone(),
            nkey: self.nats_nkey.clone(),
            ca: self.nats_ca.clone(),
            cert: self.nats_cert.clone(),
            key: self.nats_key.clone(),
        }
    }
}

/// Loads the cluster key of `--cluster-key FILE`.
pub fn load_cluster_key(path: &Path) -> CliResult<Arc<ClusterKey>> {
    Ok(Arc::new(ClusterKey::load(path)?))
}

/// Arguments of `zeppelin cluster-key`.
#[derive(Args)]
pub struct ClusterKeyArgs {
    #[command(subcommand)]
    command: ClusterKeyCommand,
}

#[derive(Subcommand)]
enum ClusterKeyCommand {
    /// Write a new cluster key (32 random bytes) to FILE, created with mode 0600; an
    /// existing FILE is never replaced. Copy it to the service and every worker.
    New {
        /// The key file to create.
        file: PathBuf,
    },
}

/// Runs `zeppelin cluster-key`.
pub fn run(a: &ClusterKeyArgs) -> CliResult<()> {
    match &a.command {
        ClusterKeyCommand::New { file } => {
            ClusterKey::create_file(file).map_err(CliError::from)?;
            crate::console::line(format_args!(
                "cluster key written to {} (0600)",
                file.display()
            ))?;
        }
    }
    Ok(())
}
