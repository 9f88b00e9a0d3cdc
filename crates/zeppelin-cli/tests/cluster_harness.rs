//! The test support itself:
//!
//! - the cluster harness (crates/cluster/tests/support/cluster.rs): a three-replica stream on the
//!   three-node cluster keeps every acknowledged message through a SIGKILL of one node,
//!   takes writes while that node is down, and the restarted node catches up far enough to
//!   carry the quorum when another node is killed after it;
//! - the MQTT device (crates/cluster/tests/support/mqtt_device.rs) against what NATS 2.9's MQTT gateway
//!   does that the receipt design relies on: a QoS 1 publish to `zeppelin/up/<s>/<k>` is
//!   stored on subject `zeppelin.up.<s>.<k>` of a JetStream stream, a re-publish under the
//!   same key replaces the stored message (one message per subject), and a core NATS publish
//!   on `zeppelin.receipt.<s>.<k>` reaches the MQTT subscriber of `zeppelin/receipt/<s>/<k>`.
//!   The receipts here come from a stand-in of the service's receipt task (its own tests
//!   and the fault test use the real one).

#[path = "../../cluster/tests/support/cluster.rs"]
mod cluster;
#[path = "../../cluster/tests/support/mqtt_device.rs"]
mod mqtt_device;

use std::collections::{BTreeMap, HashSet};
use std::time::{Duration, Instant};

use async_nats::jetstream;
use cluster::{all_messages, Cluster, HarnessError, NODES};
use futures_util::StreamExt;
use mqtt_device::{MqttDevice, ReceiptAnswer};

const STREAM: &str = "HARNESS_TEST";
const PER_PHASE: u64 = 200;

/// Publishes `PER_PHASE` messages `phase.i` and awaits every JetStream acknowledgement,
/// retrying for up to 30 s (a new stream leader is being elected, the client reconnects):
/// the message id makes a retry of a publish that did land a duplicate the stream drops.
async fn publish_phase(js: &jetstream::Context, phase: u64) -> Result<(), HarnessError> {
    for i in 0..PER_PHASE {
        let id = format!("{phase}.{i}");
        let mut tries = 0;
        loop {
            let mut headers = async_nats::HeaderMap::new();
            headers.insert("Nats-Msg-Id", id.as_str());
            let sent = async {
                js.publish_with_headers(
                    format!("harness.{phase}"),
                    headers,
                    id.clone().into_bytes().into(),
                )
                .await?
                .await
            };
            match tokio::time::timeout(Duration::from_secs(5), sent).await {
                Ok(Ok(_ack)) => break,
                _ if tries < 120 => {
                    tries += 1;
                    tokio::time::sleep(Duration::from_millis(250)).await;
                }
                Ok(Err(e)) => return Err(format!("publish {id}: {e}").into()),
                Err(_) => return Err(format!("publish {id}: no acknowledgement").into()),
            }
        }
    }
    Ok(())
}

/// Every message of the stream, by sequence, read one by one from the stream leader.
async fn messages_one_by_one(
    js: &jetstream::Context,
) -> Result<BTreeMap<u64, String>, HarnessError> {
    let mut stream = js.get_stream(STREAM).await?;
    let state = stream.info().await?.state.clone();
    let mut out = BTreeMap::new();
    for seq in state.first_sequence..=state.last_sequence {
        let msg = stream.get_raw_message(seq).await?;
        out.insert(msg.sequence, String::from_utf8(msg.payload.to_vec())?);
    }
    Ok(out)
}

#[test]
fn replicated_stream_survives_a_node_kill_and_the_restarted_node_catches_up(
) -> Result<(), HarnessError> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let cluster = Cluster::start().await?;
        let js = jetstream::new(cluster.connect().await?);
        js.create_stream(jetstream::stream::Config {
            name: STREAM.into(),
            subjects: vec!["harness.>".into()],
            num_replicas: NODES,
            ..Default::default()
        })
        .await?;
        publish_phase(&js, 0).await?;

        // Kill the stream's leader: the others elect a new one and go on taking writes.
        let leader = js
            .get_stream(STREAM)
            .await?
            .info()
            .await?
            .cluster
            .as_ref()
            .and_then(|c| c.leader.clone())
            .ok_or("the stream has no leader")?;
        let victim: usize = leader
            .strip_prefix('n')
            .and_then(|n| n.parse().ok())
            .ok_or_else(|| format!("unexpected leader name {leader}"))?;
        cluster.kill(victim);
        assert!(!cluster.is_running(victim));
        publish_phase(&js, 1).await?;

        // Restart it, wait until it is current, then kill another node: the restarted one
        // is now needed for the quorum, so it must hold the stream.
        cluster.restart(victim).await?;
        let second = (victim + 1) % NODES;
        cluster.kill(second);
        publish_phase(&js, 2).await?;
        cluster.restart(second).await?;

        let messages = messages_one_by_one(&js).await?;
        let expected: Vec<String> = (0..3)
            .flat_map(|phase| (0..PER_PHASE).map(move |i| format!("{phase}.{i}")))
            .collect();
        let got: Vec<String> = messages.values().cloned().collect();
        assert_eq!(
            got.len(),
            expected.len(),
            "the stream holds {} messages, {} were acknowledged",
            got.len(),
            expected.len()
        );
        assert_eq!(got, expected, "messages lost, duplicated or out of order");
        // The ordered-consumer reader of the support module sees the same.
        let ordered: Vec<(u64, String)> = all_messages(&js, STREAM)
            .await?
            .into_iter()
            .map(|m| Ok((m.sequence, String::from_utf8(m.payload.to_vec())?)))
            .collect::<Result<_, HarnessError>>()?;
        assert_eq!(ordered, messages.clone().into_iter().collect::<Vec<_>>());
        let info = js.get_stream(STREAM).await?.info().await?.clone();
        let replicas = info.cluster.as_ref().map_or(0, |c| c.replicas.len());
        assert_eq!(replicas, NODES - 1, "followers of the stream leader");
        eprintln!(
            "harness: {} messages through kills of n{victim} (leader) and n{second}; \
             leader now {:?}",
            got.len(),
            info.cluster.and_then(|c| c.leader)
        );
        Ok(())
    })
}

const MQTT_STREAM: &str = "MQTT_TEST";
const DEVICES: usize = 6;
const UPLOADS_PER_DEVICE: usize = 5;

#[test]
fn mqtt_uploads_land_in_the_stream_once_and_receipts_reach_the_device() -> Result<(), HarnessError>
{
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let cluster = Cluster::start().await?;
        let client = cluster.connect().await?;
        let js = jetstream::new(client.clone());
        js.create_stream(jetstream::stream::Config {
            name: MQTT_STREAM.into(),
            subjects: vec!["zeppelin.up.>".into()],
            num_replicas: NODES,
            max_messages_per_subject: 1,
            ..Default::default()
        })
        .await?;

        // Stand-in receipt task: answers every stored message on its receipt subject with
        // its sequence, except the first copy of each `*-0` key (so those devices must
        // publish again).
        let consumer = js
            .get_stream(MQTT_STREAM)
            .await?
            .create_consumer(jetstream::consumer::pull::Config {
                durable_name: Some("receipts".into()),
                ack_policy: jetstream::consumer::AckPolicy::Explicit,
                ..Default::default()
            })
            .await?;
        let responder = tokio::spawn(async move {
            let mut withheld = HashSet::new();
            let mut messages = consumer.messages().await?;
            while let Some(message) = messages.next().await {
                let message = message?;
                let sequence = message.info()?.stream_sequence;
                let subject = message.subject.to_string();
                let token = subject.rsplit('.').next().unwrap_or_default().to_owned();
                let receipt = subject.replacen("zeppelin.up.", "zeppelin.receipt.", 1);
                if !(token.ends_with("-0") && withheld.insert(token)) {
                    client
                        .publish(receipt, format!("{{\"id\":\"{sequence}\"}}").into())
                        .await?;
                }
                message.ack().await?;
            }
            Ok::<_, HarnessError>(())
        });

        let ports: Vec<u16> = (0..NODES).map(|i| cluster.mqtt_port(i)).collect();
        let deadline = Instant::now() + Duration::from_secs(60);
        let mut devices = Vec::new();
        for d in 0..DEVICES {
            let ports = ports.clone();
            devices.push(tokio::spawn(async move {
                let mut device = MqttDevice::new(format!("dev{d}"), ports, d);
                let mut answers = Vec::new();
                for u in 0..UPLOADS_PER_DEVICE {
                    let key = format!("d{d}-{u}");
                    let body = bytes::Bytes::from(format!("reading {d}/{u}").repeat(1000));
                    let answer = device
                        .upload(
                            "meters",
                            &key,
                            body.clone(),
                            Duration::from_secs(2),
                            deadline,
                        )
                        .await?;
                    answers.push((key, body, answer));
                }
                Ok::<_, HarnessError>((answers, device.republishes))
            }));
        }
        let mut sent = BTreeMap::new();
        let mut republishes = 0;
        for device in devices {
            let (answers, r) = device.await??;
            republishes += r;
            for (key, body, answer) in answers {
                let ReceiptAnswer::Stored(id) = answer else {
                    return Err(format!("{key}: {answer:?}").into());
                };
                sent.insert(format!("zeppelin.up.meters.{key}"), (body, id));
            }
        }
        responder.abort();
        assert!(
            republishes >= DEVICES as u64,
            "every withheld receipt makes a re-publish: {republishes}"
        );

        let stored = all_messages(&js, MQTT_STREAM).await?;
        assert_eq!(
            stored.len(),
            DEVICES * UPLOADS_PER_DEVICE,
            "one message per key (a re-publish replaces the first copy)"
        );
        for m in &stored {
            let (body, id) = sent
                .get(&m.subject)
                .ok_or_else(|| format!("unexpected subject {}", m.subject))?;
            assert_eq!(&m.payload, body, "{}: body", m.subject);
            // The receipt names the stored copy (the replaced first copy of `*-0` keys was
            // never receipted).
            assert_eq!(id, &m.sequence.to_string(), "{}: receipt id", m.subject);
        }
        eprintln!(
            "mqtt: {} uploads from {DEVICES} devices, {republishes} re-publishes, each stored once",
            stored.len()
        );
        Ok(())
    })
}
