//! The receipt task: the end-to-end acknowledgement of uploads that arrive over MQTT.
//!
//! The NATS MQTT gateway sends PUBACK when it hands a message to NATS, before JetStream has
//! stored it on a quorum, so PUBACK does not prove an upload durable. Every `zeppelin serve
//! --store nats://...` instance runs this task on the shared durable pull consumer
//! [`layout::RECEIPTS_CONSUMER`] (explicit acks, every message): for each stored upload it
//! checks the body with the preset's codec (the check HTTP uploads get), then
//!
//! - valid: publishes `{"id":"<sequence>"}` on `zeppelin.receipt.<stream>.<token>`
//!   (MQTT topic `zeppelin/receipt/<stream>/<key>`);
//! - invalid: deletes the message from the stream and publishes `{"error":"..."}` there;
//!
//! and acks. A message whose ack is lost is delivered again and receipted again (a device
//! may see two receipts for one upload; both carry the same id).

use std::sync::Arc;
use std::time::Duration;

use async_nats::jetstream::consumer::{pull, AckPolicy, Consumer, DeliverPolicy};
use futures_util::StreamExt;
use zeppelin_service::{Codec, Metrics};

use crate::layout;

/// How long a delivered message may wait for its ack before JetStream redelivers it.
const ACK_WAIT: Duration = Duration::from_secs(30);
/// Messages a receipt task holds at once.
const BATCH: usize = 64;
/// Pause before retrying after a failure of the consumer (a node restarting).
const RETRY: Duration = Duration::from_secs(1);

/// Why the receipt task could not start.
#[derive(Debug, thiserror::Error)]
#[error("receipt consumer {consumer} on {stream}: {reason}")]
pub struct ReceiptError {
    /// The consumer.
    pub consumer: &'static str,
    /// The stream.
    pub stream: &'static str,
    /// What failed.
    pub reason: String,
}

/// The receipt JSON of a stored upload, or of a refused one.
pub fn receipt_body(result: &Result<u64, String>) -> String {
    match result {
        Ok(id) => serde_json::json!({ "id": id.to_string() }),
        Err(e) => serde_json::json!({ "error": e }),
    }
    .to_string()
}

/// The running receipt task.
pub struct ReceiptTask {
    task: tokio::task::JoinHandle<()>,
}

impl ReceiptTask {
    /// Stops the task (a message it held unacked is redelivered to another instance).
    pub fn stop(self) {
        self.task.abort();
    }
}

impl Drop for ReceiptTask {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Creates (or opens) the durable consumer and starts the task on the tokio runtime; it runs
/// until stopped, resuming by itself after NATS failures. `metrics` counts the receipts.
pub async fn spawn(
    client: async_nats::Client,
    codec: Arc<dyn Codec>,
    metrics: Arc<Metrics>,
) -> Result<ReceiptTask, ReceiptError> {
    let fail = |reason: String| ReceiptError {
        consumer: layout::RECEIPTS_CONSUMER,
        stream: layout::UPLOADS_STREAM,
        reason,
    };
    let js = async_nats::jetstream::new(client.clone());
    let uploads = js
        .get_stream(layout::UPLOADS_STREAM)
        .await
        .map_err(|e| fail(e.to_string()))?;
    let consumer: Consumer<pull::Config> = uploads
        .get_or_create_consumer(
            layout::RECEIPTS_CONSUMER,
            pull::Config {
                durable_name: Some(layout::RECEIPTS_CONSUMER.to_owned()),
                deliver_policy: DeliverPolicy::All,
                ack_policy: AckPolicy::Explicit,
                ack_wait: ACK_WAIT,
                filter_subject: layout::UPLOAD_SUBJECTS.to_owned(),
                ..Default::default()
            },
        )
        .await
        .map_err(|e| fail(e.to_string()))?;
    let task = tokio::spawn(async move {
        loop {
            if let Err(e) = run(&client, &uploads, &consumer, &*codec, &metrics).await {
                tracing::warn!(error = %e, "receipt task: consumer failed; retrying");
            }
            tokio::time::sleep(RETRY).await;
        }
    });
    tracing::info!(consumer = layout::RECEIPTS_CONSUMER, "receipt task started");
    Ok(ReceiptTask { task })
}

async fn run(
    client: &async_nats::Client,
    uploads: &async_nats::jetstream::stream::Stream,
    consumer: &Consumer<pull::Config>,
    codec: &dyn Codec,
    metrics: &Metrics,
) -> Result<(), async_nats::Error> {
    let mut messages = consumer
        .stream()
        .max_messages_per_batch(BATCH)
        .messages()
        .await?;
    while let Some(message) = messages.next().await {
        let message = message?;
        let seq = message.info()?.stream_sequence;
        let Some((stream, token)) = layout::parse_upload_subject(&message.subject) else {
            message.ack().await?;
            continue;
        };
        let result = match codec.validate(&message.payload) {
            Ok(()) => Ok(seq),
            Err(e) => Err(format!("bad ciphertext: {e}")),
        };
        if let Err(reason) = &result {
            // Deleted before the receipt goes out, so a device that saw the error knows the
            // stream does not hold it. JetStream refusing means it is already gone (replaced
            // by a re-publish); no answer at all leaves it unacked, to be delivered again.
            use async_nats::jetstream::stream::DeleteMessageErrorKind as K;
            match uploads.delete_message(seq).await {
                Ok(_) => {}
                Err(e) if matches!(e.kind(), K::JetStream(_)) => {
                    tracing::debug!(seq, error = %e, "receipt task: invalid upload already gone");
                }
                Err(e) => return Err(e.into()),
            }
            tracing::info!(stream, token, seq, reason, "invalid upload deleted");
        }
        metrics.receipt(result.is_ok());
        client
            .publish(
                layout::receipt_subject(stream, token),
                receipt_body(&result).into(),
            )
            .await?;
        client.flush().await?;
        message.ack().await?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn receipt_bodies() {
        let ok: serde_json::Value = serde_json::from_str(&receipt_body(&Ok(42))).unwrap();
        assert_eq!(ok, serde_json::json!({ "id": "42" }));
        let err: serde_json::Value =
            serde_json::from_str(&receipt_body(&Err("bad \"x\"".into()))).unwrap();
        assert_eq!(err["error"], "bad \"x\"");
    }
}
