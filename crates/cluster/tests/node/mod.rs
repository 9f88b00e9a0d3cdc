//! A single `nats-server -js` node for tests (the one harness of the cluster crate's and the
//! CLI's single-node tests): its own config and store directory in a temp dir, client and
//! MQTT listeners on free 127.0.0.1 ports, killed (and waited for) on drop. [`Node::start_with`]
//! adds configuration (authorization, TLS) to it.

#![allow(dead_code)]

use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub type TestResult<T = ()> = Result<T, Box<dyn std::error::Error + Send + Sync>>;

/// A running node.
pub struct Node {
    child: Child,
    _dir: tempfile::TempDir,
    /// `nats://127.0.0.1:PORT`.
    pub url: String,
    /// The client port.
    pub port: u16,
    /// The MQTT listener's port.
    pub mqtt_port: u16,
}

fn free_port() -> TestResult<u16> {
    Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

impl Node {
    /// Starts a node with JetStream and an MQTT listener and waits until it takes clients.
    pub fn start() -> TestResult<Self> {
        Self::start_with("")
    }

    /// [`Node::start`] with `extra` appended to the configuration (e.g. an `authorization`
    /// or `tls` block; an `mqtt` block needs no-auth or MQTT users, see docs/server.md).
    pub fn start_with(extra: &str) -> TestResult<Self> {
        let dir = tempfile::tempdir()?;
        let (port, mqtt_port) = (free_port()?, free_port()?);
        let store = dir.path().join("js");
        let config = dir.path().join("nats.conf");
        std::fs::write(
            &config,
            format!(
                "server_name: zeppelin_test\nlisten: 127.0.0.1:{port}\n\
                 jetstream {{ store_dir: {store:?} }}\nmqtt {{ listen: 127.0.0.1:{mqtt_port} }}\n{extra}\n"
            ),
        )?;
        let child = Command::new("nats-server")
            .arg("-c")
            .arg(&config)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(dir.path().join("nats.log"))?)
            .spawn()?;
        let node = Self {
            child,
            _dir: dir,
            url: format!("nats://127.0.0.1:{port}"),
            port,
            mqtt_port,
        };
        let deadline = Instant::now() + Duration::from_secs(20);
        for p in [port, mqtt_port] {
            while std::net::TcpStream::connect(("127.0.0.1", p)).is_err() {
                if Instant::now() > deadline {
                    return Err(format!("nats-server did not listen on {p}: {}", node.log()).into());
                }
                std::thread::sleep(Duration::from_millis(50));
            }
        }
        Ok(node)
    }

    /// [`Node::start`], then waits until JetStream answers API requests (the client port
    /// opens a moment before JetStream is ready).
    pub async fn start_with_jetstream() -> TestResult<Self> {
        let node = Self::start()?;
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let last_error = match async_nats::connect(&node.url).await {
                Ok(client) => {
                    // A missing stream is a JetStream answer too.
                    let js = async_nats::jetstream::new(client);
                    match js.get_stream("ZEPPELIN_PROBE").await {
                        Ok(_) => return Ok(node),
                        Err(e) if e.to_string().contains("not found") => return Ok(node),
                        Err(e) => e.to_string(),
                    }
                }
                Err(e) => e.to_string(),
            };
            if Instant::now() > deadline {
                return Err(format!(
                    "JetStream did not answer within 20 s: {last_error}; log:\n{}",
                    node.log()
                )
                .into());
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// A client of the node.
    pub async fn client(&self) -> TestResult<async_nats::Client> {
        Ok(async_nats::connect(&self.url).await?)
    }

    /// The node's temporary directory (its config, store and log).
    pub fn dir(&self) -> &std::path::Path {
        self._dir.path()
    }

    /// The server's log so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self._dir.path().join("nats.log")).unwrap_or_default()
    }
}

impl Drop for Node {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
