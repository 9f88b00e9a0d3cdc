//! `zeppelin serve (--data DIR | --store nats://H:P[,H:P...] [--replicas N] [--cluster-key FILE] [NATS credentials and TLS: crate::nats]) --keys D
//! [--listen ADDR:PORT] [--tls-cert PEM --tls-key PEM [--client-ca PEM]] [--log-json]`: the aggregation service (docs/server.md) on the SQLite
//! store in `DIR` (the default) or on NATS JetStream (then with the receipt task of MQTT
//! uploads), with the public parts of key directory `D`: `params.seal` (checked against
//! `D/preset`, which must be seal4096 or seal8192) and, when present, `relin.seal` and
//! `galois.seal`. No secret file is read. Every flag can come from the environment
//! (`ZEPPELIN_DATA`, `ZEPPELIN_STORE`, `ZEPPELIN_KEYS`, `ZEPPELIN_LISTEN`, ...).
//!
//! Runs until SIGTERM or SIGINT, then finishes the requests in flight, commits and exits 0.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use clap::Args;
use zeppelin_cluster::{receipts, NatsStore};
use zeppelin_seal::device::SealPreset;
use zeppelin_service::principals::{Authenticator, REGISTRY_FILE};
use zeppelin_service::store::{SqliteStore, UploadStore};
use zeppelin_service::tls::{TlsFiles, TlsServer};
use zeppelin_service::{Preset, ServiceConfig, StartKeys};

use crate::error::{CliError, CliResult};
use crate::input::{read_seal, InputError};
use crate::keydir::{KeyDir, GALOIS, RELIN};
use crate::preset::PresetFn;

/// Arguments of `zeppelin serve`.
#[derive(Args)]
pub struct ServeArgs {
    /// Data directory of the SQLite store (created if missing; DIR/zeppelin.sqlite3).
    #[arg(
        long,
        env = "ZEPPELIN_DATA",
        required_unless_present = "store",
        conflicts_with = "store"
    )]
    pub data: Option<PathBuf>,
    /// Bytes of the most recent uploads the SQLite store keeps in memory: aggregations take
    /// them from there instead of reading the disk back (0: every read from disk).
    #[arg(
        long,
        env = "ZEPPELIN_RECENT_BYTES",
        value_name = "BYTES",
        default_value_t = zeppelin_service::store::DEFAULT_RECENT_BYTES
    )]
    pub recent_bytes: usize,
    /// NATS JetStream store: comma-separated `nats://HOST:PORT` (or `tls://`) URLs of the
    /// cluster; credentials as `nats://USER:PASS@HOST` or `nats://TOKEN@HOST` (prefer the
    /// environment variable to the command line, which other users can see).
    #[arg(
        long,
        env = "ZEPPELIN_STORE",
        value_name = "URLS",
        hide_env_values = true
    )]
    pub store: Option<String>,
    /// NATS credentials and TLS (with --store).
    #[command(flatten)]
    pub nats_args: crate::nats::NatsArgs,
    /// Replicas of the JetStream streams when this instance creates them (3 on a
    /// three-node cluster, 1 on a single node).
    #[arg(
        long,
        env = "ZEPPELIN_REPLICAS",
        default_value_t = 3,
        requires = "store"
    )]
    pub replicas: usize,
    /// Key directory (reads params.seal, preset, relin.seal and galois.seal only).
    #[arg(long, env = "ZEPPELIN_KEYS")]
    pub keys: PathBuf,
    /// Address to listen on.
    #[arg(long, env = "ZEPPELIN_LISTEN", default_value = "127.0.0.1:8080")]
    pub listen: String,
    /// Directory of the credential registry (principals.json, owner.token; `zeppelin
    /// devices --data` writes it). Default: the --data directory; required with --store.
    #[arg(long, env = "ZEPPELIN_AUTH_DIR")]
    pub auth_dir: Option<PathBuf>,
    /// Allow plain HTTP on an address that is not loopback (tokens then cross the network
    /// in clear: only behind a TLS-terminating proxy on a trusted link).
    #[arg(long, env = "ZEPPELIN_INSECURE_LISTEN", conflicts_with = "tls_cert")]
    pub insecure_listen: bool,
    /// Serve HTTPS with this certificate chain (PEM, leaf first); needs --tls-key.
    #[arg(
        long,
        env = "ZEPPELIN_TLS_CERT",
        requires = "tls_key",
        value_name = "PEM"
    )]
    pub tls_cert: Option<PathBuf>,
    /// The private key of --tls-cert (PEM: PKCS#8, PKCS#1 or SEC1).
    #[arg(
        long,
        env = "ZEPPELIN_TLS_KEY",
        requires = "tls_cert",
        value_name = "PEM"
    )]
    pub tls_key: Option<PathBuf>,
    /// Mutual TLS: CA certificates (PEM) whose client certificates identify devices (the
    /// subject's common name is the registered device name); optional per connection.
    #[arg(
        long,
        env = "ZEPPELIN_CLIENT_CA",
        requires = "tls_cert",
        value_name = "PEM"
    )]
    pub client_ca: Option<PathBuf>,
    /// Log one JSON object per line on stderr (default: key=value text).
    #[arg(long, env = "ZEPPELIN_LOG_JSON")]
    pub log_json: bool,
    /// Most uploads one stream may hold.
    #[arg(
        long,
        env = "ZEPPELIN_MAX_UPLOADS_PER_STREAM",
        default_value_t = 1_000_000
    )]
    pub max_uploads_per_stream: u64,
    /// Most requests in flight at once (503 beyond).
    #[arg(long, env = "ZEPPELIN_MAX_IN_FLIGHT", default_value_t = 256)]
    pub max_in_flight: usize,
    /// Most connections open at once (default: the file-descriptor limit less 64).
    #[arg(long, env = "ZEPPELIN_MAX_CONNECTIONS")]
    pub max_connections: Option<usize>,
    /// Requests per second per caller (the owner, each device; anonymous callers per IP
    /// address); health and metrics excepted; 0 (the default): no limit.
    #[arg(long, env = "ZEPPELIN_RATE_LIMIT", default_value_t = 0.0)]
    pub rate_limit: f64,
    /// Requests a caller may send in a burst above the rate.
    #[arg(long, env = "ZEPPELIN_RATE_BURST", default_value_t = 100.0)]
    pub rate_burst: f64,
    /// Bytes of request bodies buffered at once, over all requests (503 beyond).
    #[arg(long, env = "ZEPPELIN_BODY_BUDGET", default_value_t = 256 << 20)]
    pub body_budget: usize,
    /// Who aggregates (`--aggregate workers|local`, `--shard-size K`).
    #[command(flatten)]
    pub aggregate: crate::worker::AggregateArgs,
}

/// Where the uploads live.
enum StoreChoice<'a> {
    /// The embedded SQLite store in a data directory, keeping this many bytes of recent
    /// uploads in memory.
    Sqlite(&'a Path, usize),
    /// NATS JetStream at these URLs, creating streams with this many replicas.
    Nats {
        options: zeppelin_cluster::connect::NatsOptions,
        replicas: usize,
    },
}

impl ServeArgs {
    fn store_choice(&self) -> CliResult<StoreChoice<'_>> {
        match (&self.data, &self.store) {
            (Some(dir), None) => Ok(StoreChoice::Sqlite(dir, self.recent_bytes)),
            (None, Some(urls)) => Ok(StoreChoice::Nats {
                options: self.nats_args.options(urls),
                replicas: self.replicas,
            }),
            // clap refuses both and neither; this keeps the rule in one place anyway.
            _ => Err(CliError::ServeStore),
        }
    }
}

/// The opened store and, on NATS, the connection the cluster parts share (the receipt task;
/// distributed aggregation hooks in here).
struct OpenedStore {
    store: Arc<dyn UploadStore>,
    nats: Option<async_nats::Client>,
}

async fn open_store(choice: StoreChoice<'_>) -> CliResult<OpenedStore> {
    Ok(match choice {
        StoreChoice::Sqlite(dir, recent_bytes) => OpenedStore {
            store: Arc::new({
                check_data_dir(dir)?;
                SqliteStore::open_with_recent_bytes(dir, recent_bytes)?
            }),
            nats: None,
        },
        StoreChoice::Nats { options, replicas } => {
            let store = NatsStore::connect(&options, replicas).await?;
            let nats = Some(store.client().clone());
            OpenedStore {
                store: Arc::new(store),
                nats,
            }
        }
    })
}

/// Refuses a `--data` path that is not a directory (a file) or where the store cannot write
/// (a read-only mount, no permission), naming the path; creates it when missing.
fn check_data_dir(dir: &Path) -> CliResult<()> {
    let problem = |problem: String| CliError::DataDir {
        path: dir.display().to_string(),
        problem,
    };
    match std::fs::metadata(dir) {
        Ok(meta) if !meta.is_dir() => {
            return Err(problem("exists and is not a directory".into()));
        }
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => std::fs::create_dir_all(dir)
            .map_err(|e| problem(format!("cannot create the directory: {e}")))?,
        Err(e) => return Err(problem(format!("cannot read it: {e}"))),
    }
    // A probe file created exclusively, then removed: the store's files need the same.
    tempfile::Builder::new()
        .prefix(".zeppelin-write-probe")
        .tempfile_in(dir)
        .map_err(|e| problem(format!("the directory is not writable: {e}")))?;
    Ok(())
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
    // The data directory first: the registry defaults to it, and a --data that is a file
    // must be reported as such, not as an unreadable registry inside it.
    if let Some(dir) = a.data.as_deref() {
        check_data_dir(dir)?;
    }
    let auth_dir = a
        .auth_dir
        .as_deref()
        .or(a.data.as_deref())
        .ok_or(CliError::NoAuthDir)?;
    if let Some(path) = crate::devices::ensure_owner(auth_dir)? {
        crate::console::warn(format_args!(
            "zeppelin serve: first start: owner token written to {} (0600)",
            path.display()
        ))?;
    }
    let mut config = ServiceConfig::new(preset);
    config.auth = Arc::new(Authenticator::from_file(&auth_dir.join(REGISTRY_FILE))?);
    config.max_uploads_per_stream = a.max_uploads_per_stream;
    config.max_in_flight = a.max_in_flight;
    if let Some(max) = a.max_connections {
        config.max_connections = max;
    }
    config.rate_limit = (a.rate_limit > 0.0).then_some(zeppelin_service::RateLimit {
        per_second: a.rate_limit,
        burst: a.rate_burst.max(1.0),
    });
    config.body_budget = a.body_budget;
    if let (Some(cert), Some(key)) = (&a.tls_cert, &a.tls_key) {
        config.tls = Some(TlsServer::load(&TlsFiles {
            cert: cert.clone(),
            key: key.clone(),
            client_ca: a.client_ca.clone(),
        })?);
    }
    zeppelin_service::init_logging(a.log_json);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(CliError::Runtime)?;
    runtime.block_on(serve(
        a.store_choice()?,
        &a.listen,
        a.insecure_listen,
        config,
        keys,
        &a.aggregate,
    ))
}

async fn serve(
    choice: StoreChoice<'_>,
    listen: &str,
    insecure_listen: bool,
    config: ServiceConfig,
    keys: StartKeys,
    aggregate: &crate::worker::AggregateArgs,
) -> CliResult<()> {
    let replicas = match choice {
        StoreChoice::Nats { replicas, .. } => replicas,
        StoreChoice::Sqlite(..) => 1,
    };
    let OpenedStore { store, nats } = open_store(choice).await?;
    // With NATS the worker group aggregates unless --aggregate local (the job stream and the
    // partials bucket are created here, with the store's replicas).
    let aggregator = crate::worker::aggregator(aggregate, nats.as_ref(), replicas, &config).await?;
    // On NATS every instance receipts stored uploads (MQTT's end-to-end acknowledgement).
    let receipts =
        match nats {
            Some(client) => {
                let codec = config.preset.codec().map_err(|source| {
                    zeppelin_service::StartError::Preset {
                        preset: config.preset.name(),
                        source,
                    }
                })?;
                Some(receipts::spawn(client, codec, config.metrics.clone()).await?)
            }
            None => None,
        };
    let listener = tokio::net::TcpListener::bind(listen)
        .await
        .map_err(|source| CliError::Listen {
            addr: listen.to_owned(),
            source,
        })?;
    let bound = listener.local_addr().map_err(|source| CliError::Listen {
        addr: listen.to_owned(),
        source,
    })?;
    // Bearer tokens in clear must not leave the machine unless the operator says so.
    if !bound.ip().is_loopback() && !insecure_listen && config.tls.is_none() {
        return Err(CliError::InsecureListen {
            addr: bound.to_string(),
        });
    }
    let handle =
        zeppelin_service::start_with_aggregator(listener, store, config, keys, aggregator).await?;
    // The one line a script waits for (the logs go to stderr).
    crate::console::line(format_args!("listening on {}", handle.url()))?;
    handle.run_until_signal().await?;
    if let Some(task) = receipts {
        task.stop();
    }
    Ok(())
}
