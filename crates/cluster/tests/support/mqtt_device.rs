//! A device that uploads over MQTT through the NATS MQTT gateway with end-to-end receipts
//! (docs/server.md, "MQTT topics and receipts"): it subscribes to
//! `zeppelin/receipt/<stream>/<key>`, publishes the ciphertext QoS 1 to
//! `zeppelin/up/<stream>/<key>` and counts the upload as acknowledged only when the receipt
//! arrives; without one in time it publishes the same bytes again under the same key. A lost
//! connection (its node killed) is replaced by one to the next node.
//!
//! Test support, included by path next to `cluster.rs`.
#![allow(dead_code, reason = "each test crate uses a part")]

use std::time::{Duration, Instant};

use rumqttc::{AsyncClient, ConnectReturnCode, Event, MqttOptions, Packet, QoS};
use tokio::sync::mpsc;

/// What the device reports on failure (test support: the message is the diagnosis).
pub type DeviceError = Box<dyn std::error::Error + Send + Sync>;

/// How long a connect or a subscription may take before the device tries again.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(5);

/// The service's answer to one upload, from its receipt.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ReceiptAnswer {
    /// Stored (`{"id": "<seq>"}`).
    Stored(String),
    /// Refused and removed from the stream (`{"error": "..."}`).
    Refused(String),
}

/// One live MQTT connection: the client and the packets its event loop received (an `Err`
/// once the connection is gone; the loop then stops).
struct Connection {
    client: AsyncClient,
    packets: mpsc::UnboundedReceiver<Result<Packet, String>>,
    poller: tokio::task::JoinHandle<()>,
}

impl Drop for Connection {
    fn drop(&mut self) {
        self.poller.abort();
    }
}

/// An MQTT device (one client id, one connection at a time).
pub struct MqttDevice {
    id: String,
    ports: Vec<u16>,
    next_port: usize,
    connection: Option<Connection>,
    /// Connections opened after the first (a node went away, a handshake timed out).
    pub reconnects: u64,
    /// Uploads published again because their receipt did not come in time.
    pub republishes: u64,
    /// MQTT user name and password (a NATS user of the MQTT gateway), if any.
    credentials: Option<(String, String)>,
}

impl MqttDevice {
    /// A device with client id `id` that connects to 127.0.0.1 on `ports` (MQTT listeners of
    /// the cluster's nodes), starting with `ports[first % len]`.
    pub fn new(id: impl Into<String>, ports: Vec<u16>, first: usize) -> Self {
        Self {
            id: id.into(),
            next_port: first % ports.len().max(1),
            ports,
            connection: None,
            reconnects: 0,
            republishes: 0,
            credentials: None,
        }
    }

    /// The same device, connecting as NATS user `user` with `password`.
    pub fn with_credentials(mut self, user: &str, password: &str) -> Self {
        self.credentials = Some((user.to_owned(), password.to_owned()));
        self
    }

    /// Opens a connection to the next node and waits for its CONNACK.
    async fn connect(&mut self) -> Result<(), DeviceError> {
        let port = *self
            .ports
            .get(self.next_port)
            .ok_or("the device has no MQTT port")?;
        self.next_port = (self.next_port + 1) % self.ports.len();
        let mut options = MqttOptions::new(self.id.clone(), "127.0.0.1", port);
        options
            .set_keep_alive(Duration::from_secs(10))
            .set_clean_session(true)
            // Seeded ciphertexts are ~100 KB; rumqttc's default limit is 10 KiB.
            .set_max_packet_size(1 << 20, 1 << 20);
        if let Some((user, password)) = &self.credentials {
            options.set_credentials(user.clone(), password.clone());
        }
        let (client, mut event_loop) = AsyncClient::new(options, 16);
        let (tx, packets) = mpsc::unbounded_channel();
        let poller = tokio::spawn(async move {
            loop {
                match event_loop.poll().await {
                    Ok(Event::Incoming(packet)) => {
                        if tx.send(Ok(packet)).is_err() {
                            return;
                        }
                    }
                    Ok(Event::Outgoing(_)) => {}
                    Err(e) => {
                        // No automatic reconnect: the device picks the next node itself.
                        let _ = tx.send(Err(e.to_string()));
                        return;
                    }
                }
            }
        });
        let mut connection = Connection {
            client,
            packets,
            poller,
        };
        let first = tokio::time::timeout(HANDSHAKE_TIMEOUT, connection.packets.recv()).await;
        match first {
            Ok(Some(Ok(Packet::ConnAck(ack)))) if ack.code == ConnectReturnCode::Success => {
                self.connection = Some(connection);
                Ok(())
            }
            Ok(Some(Ok(other))) => Err(format!("port {port}: {other:?} before CONNACK").into()),
            Ok(Some(Err(e))) => Err(format!("port {port}: {e}").into()),
            Ok(None) | Err(_) => Err(format!("port {port}: no CONNACK").into()),
        }
    }

    /// Uploads `body` under `key` and returns its receipt, publishing again after each
    /// `receipt_timeout` without one and reconnecting (to the next node) when the connection
    /// breaks, until `deadline`.
    pub async fn upload(
        &mut self,
        stream: &str,
        key: &str,
        body: bytes::Bytes,
        receipt_timeout: Duration,
        deadline: Instant,
    ) -> Result<ReceiptAnswer, DeviceError> {
        let topic = format!("zeppelin/up/{stream}/{key}");
        let receipt_topic = format!("zeppelin/receipt/{stream}/{key}");
        let mut last_error = String::from("none");
        let mut connected_before = self.connection.is_some();
        while Instant::now() < deadline {
            if self.connection.is_none() {
                if connected_before {
                    self.reconnects += 1;
                }
                connected_before = true;
                if let Err(e) = self.connect().await {
                    last_error = e.to_string();
                    tokio::time::sleep(Duration::from_millis(200)).await;
                    continue;
                }
            }
            let connection = self.connection.as_mut().ok_or("not connected")?;
            let sent = subscribe_and_publish(
                connection,
                &topic,
                &receipt_topic,
                &body,
                receipt_timeout,
                deadline,
                &mut self.republishes,
            )
            .await;
            match sent {
                Ok(answer) => return Ok(answer),
                Err(e) => {
                    // The connection is unusable: drop it, the next round opens another.
                    last_error = e.to_string();
                    self.connection = None;
                }
            }
        }
        Err(format!("{key}: no receipt before the deadline; last error: {last_error}").into())
    }
}

/// On `connection`: subscribe to the receipt, publish (again after every `receipt_timeout`,
/// counted in `republishes`), wait for the receipt. An `Err` means the connection broke.
async fn subscribe_and_publish(
    connection: &mut Connection,
    topic: &str,
    receipt_topic: &str,
    body: &bytes::Bytes,
    receipt_timeout: Duration,
    deadline: Instant,
    republishes: &mut u64,
) -> Result<ReceiptAnswer, DeviceError> {
    connection
        .client
        .subscribe(receipt_topic, QoS::AtMostOnce)
        .await?;
    // The receipt may only be awaited once the subscription is in place.
    let subscribed = tokio::time::timeout(HANDSHAKE_TIMEOUT, async {
        loop {
            match connection.packets.recv().await {
                Some(Ok(Packet::SubAck(ack))) => {
                    return if ack
                        .return_codes
                        .iter()
                        .all(|c| matches!(c, rumqttc::SubscribeReasonCode::Success(_)))
                    {
                        Ok(())
                    } else {
                        Err(format!("subscription refused: {ack:?}"))
                    };
                }
                Some(Ok(_)) => {}
                Some(Err(e)) => return Err(e),
                None => return Err("connection closed".into()),
            }
        }
    })
    .await;
    match subscribed {
        Ok(Ok(())) => {}
        Ok(Err(e)) => return Err(e.into()),
        Err(_) => return Err("no SUBACK".into()),
    }
    loop {
        connection
            .client
            .publish_bytes(topic, QoS::AtLeastOnce, false, body.clone())
            .await?;
        let wait_until = (Instant::now() + receipt_timeout).min(deadline);
        loop {
            let left = wait_until.saturating_duration_since(Instant::now());
            match tokio::time::timeout(left, connection.packets.recv()).await {
                Ok(Some(Ok(Packet::Publish(p)))) if p.topic == receipt_topic => {
                    let answer = parse_receipt(&p.payload)?;
                    // Best effort: a stale subscription only costs a message.
                    let _ = connection.client.try_unsubscribe(receipt_topic);
                    return Ok(answer);
                }
                Ok(Some(Ok(_))) => {}
                Ok(Some(Err(e))) => return Err(e.into()),
                Ok(None) => return Err("connection closed".into()),
                Err(_) => break,
            }
        }
        if Instant::now() >= deadline {
            return Err("deadline passed".into());
        }
        *republishes += 1;
    }
}

/// A receipt body: `{"id": "<seq>"}` or `{"error": "..."}`.
pub fn parse_receipt(payload: &[u8]) -> Result<ReceiptAnswer, DeviceError> {
    let v: serde_json::Value = serde_json::from_slice(payload)
        .map_err(|e| format!("receipt is not JSON ({e}): {payload:?}"))?;
    if let Some(id) = v.get("id").and_then(|i| i.as_str()) {
        return Ok(ReceiptAnswer::Stored(id.to_owned()));
    }
    if let Some(e) = v.get("error").and_then(|i| i.as_str()) {
        return Ok(ReceiptAnswer::Refused(e.to_owned()));
    }
    Err(format!("receipt has neither \"id\" nor \"error\": {v}").into())
}
