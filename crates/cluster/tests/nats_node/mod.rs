//! One `nats-server -js` node for tests: free ports on 127.0.0.1, a temporary store
//! directory, killed (and waited for) in Drop, even when the test fails.

#![allow(dead_code)]

use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub type TestResult<T = ()> = Result<T, Box<dyn std::error::Error + Send + Sync>>;

/// A running single node.
pub struct NatsNode {
    child: Child,
    pub url: String,
    _dir: tempfile::TempDir,
}

fn free_port() -> TestResult<u16> {
    Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

impl NatsNode {
    /// Starts `nats-server -js` and waits until it accepts a client.
    pub async fn start() -> TestResult<Self> {
        let dir = tempfile::tempdir()?;
        let port = free_port()?;
        let child = Command::new("nats-server")
            .args(["-js", "-a", "127.0.0.1", "-p", &port.to_string(), "-sd"])
            .arg(dir.path())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()?;
        let node = Self {
            child,
            url: format!("nats://127.0.0.1:{port}"),
            _dir: dir,
        };
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let last_error = match async_nats::connect(&node.url).await {
                Ok(client) => {
                    // JetStream answers (a missing stream is a JetStream answer too).
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
                return Err(
                    format!("nats-server did not come up within 20 s: {last_error}").into(),
                );
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    pub async fn client(&self) -> TestResult<async_nats::Client> {
        Ok(async_nats::connect(&self.url).await?)
    }
}

impl Drop for NatsNode {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
