//! A three-node `nats-server` cluster with JetStream and the MQTT gateway on loopback, for
//! tests and benchmarks (included by path: `#[path = ".../support/cluster.rs"] mod cluster;`).
//!
//! [`Cluster::start`] writes one config per node into a temporary directory (server name,
//! client, cluster-route, MQTT and monitoring ports picked free on 127.0.0.1, its own
//! `jetstream { store_dir }`, routes to every node), starts the servers and returns once
//! every node's monitoring endpoint reports JetStream healthy, the meta group has a leader
//! and a three-replica stream can be created. [`Cluster::kill`] SIGKILLs one node (its store
//! stays), [`Cluster::restart`] starts it again on the same ports and store and waits until
//! it is current. Dropping the cluster kills every node, also when a test panics.
//!
//! Needs `nats-server` on `PATH` (or `NATS_SERVER`); written for Debian's 2.9.
#![allow(dead_code, reason = "each test crate uses a part")]

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// What the harness reports on failure (it is test support: the message is the diagnosis).
pub type HarnessError = Box<dyn std::error::Error + Send + Sync>;

/// How long a start or restart may take before the harness gives up.
const READY_TIMEOUT: Duration = Duration::from_secs(60);

/// The ports one node listens on (all on 127.0.0.1).
#[derive(Clone, Copy, Debug)]
pub struct Ports {
    /// NATS clients.
    pub client: u16,
    /// Cluster routes.
    pub cluster: u16,
    /// MQTT clients.
    pub mqtt: u16,
    /// HTTP monitoring (`/healthz`, `/jsz`, ...).
    pub monitor: u16,
}

/// One node: its config, its log and (while it runs) its process.
struct Node {
    name: String,
    ports: Ports,
    config: PathBuf,
    log: PathBuf,
    child: Mutex<Option<Child>>,
}

/// A running three-node cluster; dropping it stops every node.
pub struct Cluster {
    nodes: Vec<Node>,
    // Last field: removed after the nodes were killed (Drop below runs first).
    dir: tempfile::TempDir,
}

/// The stream the readiness probe creates (and deletes again).
const PROBE_STREAM: &str = "ZEPPELIN_HARNESS_PROBE";

/// Nodes in the cluster.
pub const NODES: usize = 3;

fn nats_server() -> PathBuf {
    std::env::var_os("NATS_SERVER").map_or_else(|| PathBuf::from("nats-server"), PathBuf::from)
}

/// `count` distinct free ports on 127.0.0.1 (the listeners are held until all are picked,
/// so no port is handed out twice; another process may still take one before the server
/// binds it, which [`Cluster::start`] survives by trying again with new ports).
fn free_ports(count: usize) -> std::io::Result<Vec<u16>> {
    let listeners = (0..count)
        .map(|_| TcpListener::bind("127.0.0.1:0"))
        .collect::<std::io::Result<Vec<_>>>()?;
    listeners
        .iter()
        .map(|l| Ok(l.local_addr()?.port()))
        .collect()
}

fn config_text(name: &str, ports: Ports, store: &Path, routes: &[u16]) -> String {
    let routes = routes
        .iter()
        .map(|p| format!("nats-route://127.0.0.1:{p}"))
        .collect::<Vec<_>>()
        .join(", ");
    format!(
        "server_name: {name}\n\
         listen: 127.0.0.1:{client}\n\
         http: 127.0.0.1:{monitor}\n\
         jetstream {{ store_dir: {store:?} }}\n\
         cluster {{\n  name: zeppelin-test\n  listen: 127.0.0.1:{cluster}\n  routes: [{routes}]\n}}\n\
         mqtt {{ listen: 127.0.0.1:{mqtt} }}\n",
        client = ports.client,
        monitor = ports.monitor,
        cluster = ports.cluster,
        mqtt = ports.mqtt,
    )
}

impl Node {
    fn spawn(&self) -> Result<(), HarnessError> {
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.log)?;
        let child = Command::new(nats_server())
            .arg("-c")
            .arg(&self.config)
            .stdin(Stdio::null())
            .stdout(log.try_clone()?)
            .stderr(log)
            .spawn()
            .map_err(|e| format!("cannot start {:?}: {e}", nats_server()))?;
        *self.child.lock().unwrap_or_else(|p| p.into_inner()) = Some(child);
        Ok(())
    }

    /// SIGKILLs the node and reaps it; a node not running is left alone.
    fn kill(&self) {
        if let Some(mut child) = self.child.lock().unwrap_or_else(|p| p.into_inner()).take() {
            // std's kill is SIGKILL on Unix.
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// An error if the process has exited (it could not bind a port, a bad config, ...).
    fn check_alive(&self) -> Result<(), HarnessError> {
        let mut guard = self.child.lock().unwrap_or_else(|p| p.into_inner());
        let Some(child) = guard.as_mut() else {
            return Err(format!("node {} is not running", self.name).into());
        };
        if let Some(status) = child.try_wait()? {
            guard.take();
            return Err(format!(
                "node {} exited ({status}); its log ends:\n{}",
                self.name,
                tail(&self.log, 20)
            )
            .into());
        }
        Ok(())
    }

    /// `GET path` on the monitoring port: (status code, body).
    async fn monitor(&self, path: &str) -> Result<(u16, String), HarnessError> {
        let mut tcp = tokio::net::TcpStream::connect(("127.0.0.1", self.ports.monitor)).await?;
        tcp.write_all(
            format!("GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
                .as_bytes(),
        )
        .await?;
        let mut answer = String::new();
        tcp.read_to_string(&mut answer).await?;
        let status = answer
            .split_whitespace()
            .nth(1)
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| format!("not an HTTP answer from {}: {answer:?}", self.name))?;
        let body = answer
            .split_once("\r\n\r\n")
            .map_or("", |(_, b)| b)
            .to_owned();
        Ok((status, body))
    }

    /// Whether the node is up, JetStream reports it healthy (`/healthz`: current with the
    /// meta group and every stream it hosts) and it knows a meta leader. A failure naming
    /// only an asset of NATS's own MQTT gateway (`$MQTT_...`) counts as healthy: after a
    /// SIGKILL, 2.9 can report the killed node's per-server MQTT consumer "not current" for
    /// minutes, and no Zeppelin traffic depends on it. (2.9's `/healthz` names only the first
    /// failing asset.)
    async fn is_current(&self) -> bool {
        let healthy = match self.monitor("/healthz").await {
            Ok((200, _)) => true,
            Ok((_, body)) => body.contains("$MQTT_"),
            Err(_) => false,
        };
        healthy
            && self.monitor("/jsz").await.is_ok_and(|(code, body)| {
                code == 200
                    && serde_json::from_str::<serde_json::Value>(&body).is_ok_and(|v| {
                        v["meta_cluster"]["leader"]
                            .as_str()
                            .is_some_and(|l| !l.is_empty())
                    })
            })
    }

    /// Waits until [`Node::is_current`], failing early if the process dies.
    async fn wait_current(&self, deadline: Instant) -> Result<(), HarnessError> {
        loop {
            self.check_alive()?;
            if self.is_current().await {
                return Ok(());
            }
            if Instant::now() > deadline {
                return Err(format!(
                    "node {} not current after {READY_TIMEOUT:?}; its log ends:\n{}",
                    self.name,
                    tail(&self.log, 20)
                )
                .into());
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

/// The last `lines` lines of a log file (for failure messages).
fn tail(path: &Path, lines: usize) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

impl Cluster {
    /// Starts a three-node cluster and waits until it takes R3 streams (see the module
    /// doc). Tries three times with fresh ports if a node cannot start.
    pub async fn start() -> Result<Cluster, HarnessError> {
        let mut last = None;
        for _ in 0..3 {
            match Self::start_once().await {
                Ok(cluster) => return Ok(cluster),
                Err(e) => last = Some(e),
            }
        }
        Err(last.unwrap_or_else(|| "no attempt made".into()))
    }

    async fn start_once() -> Result<Cluster, HarnessError> {
        let dir = tempfile::Builder::new()
            .prefix("zeppelin-nats-")
            .tempdir()?;
        let ports = free_ports(4 * NODES)?;
        let ports: Vec<Ports> = ports
            .chunks(4)
            .map(|p| Ports {
                client: p[0],
                cluster: p[1],
                mqtt: p[2],
                monitor: p[3],
            })
            .collect();
        let routes: Vec<u16> = ports.iter().map(|p| p.cluster).collect();
        let mut nodes = Vec::new();
        for (i, &node_ports) in ports.iter().enumerate() {
            let name = format!("n{i}");
            let config = dir.path().join(format!("{name}.conf"));
            let store = dir.path().join(format!("{name}-store"));
            std::fs::write(&config, config_text(&name, node_ports, &store, &routes))?;
            nodes.push(Node {
                log: dir.path().join(format!("{name}.log")),
                name,
                ports: node_ports,
                config,
                child: Mutex::new(None),
            });
        }
        // From here on Drop stops whatever was started.
        let cluster = Cluster { nodes, dir };
        for node in &cluster.nodes {
            node.spawn()?;
        }
        let deadline = Instant::now() + READY_TIMEOUT;
        for node in &cluster.nodes {
            node.wait_current(deadline).await?;
        }
        cluster.probe_replicated_stream(deadline).await?;
        Ok(cluster)
    }

    /// Creates (and deletes) a stream with one replica per node, retrying until the meta
    /// group places it: the cluster then takes replicated writes.
    async fn probe_replicated_stream(&self, deadline: Instant) -> Result<(), HarnessError> {
        let client = self.connect().await?;
        let js = async_nats::jetstream::new(client);
        loop {
            let created = js
                .create_stream(async_nats::jetstream::stream::Config {
                    name: PROBE_STREAM.into(),
                    subjects: vec!["zeppelin-harness.probe".into()],
                    num_replicas: NODES,
                    storage: async_nats::jetstream::stream::StorageType::Memory,
                    ..Default::default()
                })
                .await;
            match created {
                Ok(_) => {
                    js.delete_stream(PROBE_STREAM).await?;
                    return Ok(());
                }
                Err(e) if Instant::now() > deadline => {
                    return Err(format!("cannot create an R{NODES} stream: {e}").into());
                }
                Err(_) => tokio::time::sleep(Duration::from_millis(200)).await,
            }
        }
    }

    /// Every node's ports.
    pub fn ports(&self) -> Vec<Ports> {
        self.nodes.iter().map(|n| n.ports).collect()
    }

    /// `nats://127.0.0.1:P` of every node.
    pub fn client_urls(&self) -> Vec<String> {
        self.nodes
            .iter()
            .map(|n| format!("nats://127.0.0.1:{}", n.ports.client))
            .collect()
    }

    /// The `--store`/`--nats` argument naming every node: `nats://H:P,H:P,H:P`.
    pub fn nats_arg(&self) -> String {
        let hosts: Vec<String> = self
            .nodes
            .iter()
            .map(|n| format!("127.0.0.1:{}", n.ports.client))
            .collect();
        format!("nats://{}", hosts.join(","))
    }

    /// Node `i`'s MQTT port.
    pub fn mqtt_port(&self, i: usize) -> u16 {
        self.nodes[i].ports.mqtt
    }

    /// The cluster's temporary directory (configs, stores, logs).
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// The last `lines` lines of node `i`'s log (all its runs).
    pub fn log_tail(&self, i: usize, lines: usize) -> String {
        tail(&self.nodes[i].log, lines)
    }

    /// A client connected to any node (it fails over to the others).
    pub async fn connect(&self) -> Result<async_nats::Client, HarnessError> {
        let addrs = self
            .client_urls()
            .iter()
            .map(|u| u.parse())
            .collect::<Result<Vec<async_nats::ServerAddr>, _>>()?;
        Ok(async_nats::ConnectOptions::new()
            .retry_on_initial_connect()
            .connect(addrs)
            .await?)
    }

    /// SIGKILLs node `i` (no shutdown: its store is as the crash left it).
    pub fn kill(&self, i: usize) {
        self.nodes[i].kill();
    }

    /// Whether node `i`'s process is running.
    pub fn is_running(&self, i: usize) -> bool {
        self.nodes[i].check_alive().is_ok()
    }

    /// Starts node `i` again (same ports, same store) and waits until it is current with
    /// the cluster again (`/healthz`: its streams caught up).
    pub async fn restart(&self, i: usize) -> Result<(), HarnessError> {
        let node = &self.nodes[i];
        node.kill();
        node.spawn()?;
        node.wait_current(Instant::now() + READY_TIMEOUT).await
    }

    /// Node `i`'s `/jsz` answer (parsed), e.g. for the meta leader's name.
    pub async fn jsz(&self, i: usize, query: &str) -> Result<serde_json::Value, HarnessError> {
        let (code, body) = self.nodes[i].monitor(&format!("/jsz{query}")).await?;
        if code != 200 {
            return Err(format!("/jsz on {}: status {code}: {body}", self.nodes[i].name).into());
        }
        Ok(serde_json::from_str(&body)?)
    }
}

/// One stored message of a stream.
#[derive(Clone, Debug)]
pub struct Stored {
    /// Its stream sequence.
    pub sequence: u64,
    /// Its subject.
    pub subject: String,
    /// Its headers, if any.
    pub headers: Option<async_nats::HeaderMap>,
    /// Its body.
    pub payload: bytes::Bytes,
}

/// Every message `stream` holds when the call starts, in sequence order, read with an
/// ordered consumer (a single-replica ephemeral consumer the client recreates on a gap).
pub async fn all_messages(
    js: &async_nats::jetstream::Context,
    stream: &str,
) -> Result<Vec<Stored>, HarnessError> {
    use futures_util::StreamExt;
    let mut handle = js.get_stream(stream).await?;
    let state = handle.info().await?.state.clone();
    let mut out = Vec::new();
    if state.messages == 0 {
        return Ok(out);
    }
    let consumer = handle
        .create_consumer(async_nats::jetstream::consumer::pull::OrderedConfig {
            deliver_policy: async_nats::jetstream::consumer::DeliverPolicy::All,
            ..Default::default()
        })
        .await?;
    let mut messages = consumer.messages().await?;
    while let Some(message) = tokio::time::timeout(READY_TIMEOUT, messages.next())
        .await
        .map_err(|_| format!("{stream}: no message for {READY_TIMEOUT:?}"))?
    {
        let message = message?;
        let sequence = message.info()?.stream_sequence;
        if sequence > state.last_sequence {
            break;
        }
        out.push(Stored {
            sequence,
            subject: message.subject.to_string(),
            headers: message.headers.clone(),
            payload: message.payload.clone(),
        });
        // The last sequence may be a deleted message: the count ends the read too.
        if sequence == state.last_sequence || out.len() as u64 == state.messages {
            break;
        }
    }
    Ok(out)
}

impl Drop for Cluster {
    fn drop(&mut self) {
        for node in &self.nodes {
            node.kill();
        }
    }
}
