//! The cluster harness itself (tests/support/cluster.rs): a three-replica stream on the
//! three-node cluster keeps every acknowledged message through a SIGKILL of one node, takes
//! writes while that node is down, and the restarted node catches up far enough to carry the
//! quorum when another node is killed after it.

#[path = "support/cluster.rs"]
mod cluster;

use std::collections::BTreeMap;
use std::time::Duration;

use async_nats::jetstream;
use cluster::{Cluster, HarnessError, NODES};

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

/// Every message of the stream, by sequence (read one by one from the stream leader).
async fn all_messages(js: &jetstream::Context) -> Result<BTreeMap<u64, String>, HarnessError> {
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

        let messages = all_messages(&js).await?;
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
