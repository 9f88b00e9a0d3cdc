//! `zeppelin serve --data DIR --keys D [--listen ADDR:PORT] [--log-json]`: the aggregation
//! service (docs/server.md) on the SQLite store in `DIR`, with the public parts of key
//! directory `D`: `params.seal` (checked against `D/preset`, which must be seal4096 or
//! seal8192) and, when present, `relin.seal` and `galois.seal`. No secret file is read.
//!
//! Runs until SIGTERM or SIGINT, then finishes the requests in flight, commits and exits 0.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use clap::Args;
use zeppelin_seal::device::SealPreset;
use zeppelin_service::store::SqliteStore;
use zeppelin_service::{Preset, ServiceConfig, StartKeys};

use crate::error::{CliError, CliResult};
use crate::input::{read_seal, InputError};
use crate::keydir::{KeyDir, GALOIS, RELIN};
use crate::preset::PresetFn;

/// Arguments of `zeppelin serve`.
#[derive(Args)]
pub struct ServeArgs {
    /// Data directory of the store (created if missing; DIR/zeppelin.sqlite3).
    #[arg(long)]
    pub data: PathBuf,
    /// Key directory (reads params.seal, preset, relin.seal and galois.seal only).
    #[arg(long)]
    pub keys: PathBuf,
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:8080")]
    pub listen: String,
    /// Log one JSON object per line on stderr (default: key=value text).
    #[arg(long)]
    pub log_json: bool,
    /// Most uploads one stream may hold.
    #[arg(long, default_value_t = 1_000_000)]
    pub max_uploads_per_stream: u64,
    /// Most requests in flight at once (503 beyond).
    #[arg(long, default_value_t = 256)]
    pub max_in_flight: usize,
    /// Who aggregates (`--aggregate workers|local`, `--shard-size K`).
    #[command(flatten)]
    pub aggregate: crate::worker::AggregateArgs,
}

/// The key file `name` of `dir`, or `None` when it does not exist.
fn optional_key_file(
    dir: &KeyDir<'_>,
    name: &str,
    what: &'static str,
    cap: usize,
) -> CliResult<Option<Vec<u8>>> {
    let path = dir.path(name);
    match read_seal(&path, what, cap) {
        Ok(bytes) => Ok(Some(bytes.to_vec())),
        Err(InputError::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
            Ok(None)
        }
        Err(e) => Err(e.into()),
    }
}

/// Runs `zeppelin serve`.
pub fn run(a: &ServeArgs) -> CliResult<()> {
    let dir = KeyDir::new(&a.keys);
    let preset_id = dir.preset()?;
    let preset = Preset::from_name(preset_id.name()).ok_or(CliError::PresetNotServed {
        preset: preset_id.name(),
    })?;
    // D/params.seal must be the preset's parameters exactly (the service derives its own).
    struct CheckParams<'a>(&'a KeyDir<'a>);
    impl PresetFn for CheckParams<'_> {
        type Output = CliResult<()>;
        fn call<P: SealPreset>(self) -> CliResult<()> {
            self.0.device_context::<P>().map(drop)
        }
    }
    preset_id.run(CheckParams(&dir))?;
    let cap = preset.max_keys_bytes();
    let keys = StartKeys {
        relin: optional_key_file(&dir, RELIN, "SEAL RelinKeys", cap)?,
        galois: optional_key_file(&dir, GALOIS, "SEAL GaloisKeys", cap)?,
    };
    let mut config = ServiceConfig::new(preset);
    config.max_uploads_per_stream = a.max_uploads_per_stream;
    config.max_in_flight = a.max_in_flight;
    zeppelin_service::init_logging(a.log_json);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(CliError::Runtime)?;
    runtime.block_on(serve(&a.data, &a.listen, config, keys, &a.aggregate))
}

async fn serve(
    data: &Path,
    listen: &str,
    config: ServiceConfig,
    keys: StartKeys,
    aggregate: &crate::worker::AggregateArgs,
) -> CliResult<()> {
    let store = Arc::new(SqliteStore::open(data)?);
    // The SQLite store has no NATS connection: only local aggregation.
    let aggregator = crate::worker::aggregator(aggregate, None, 1, &config).await?;
    let listener = tokio::net::TcpListener::bind(listen)
        .await
        .map_err(|source| CliError::Listen {
            addr: listen.to_owned(),
            source,
        })?;
    let handle =
        zeppelin_service::start_with_aggregator(listener, store, config, keys, aggregator).await?;
    // The one line a script waits for (the logs go to stderr).
    crate::console::line(format_args!("listening on {}", handle.url()))?;
    handle.run_until_signal().await?;
    Ok(())
}
