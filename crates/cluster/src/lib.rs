//! Zeppelin on NATS JetStream: the layout of subjects, streams and buckets ([`layout`]), the
//! upload store behind `zeppelin_service::store::UploadStore` ([`store`]), the receipt
//! task that acknowledges MQTT uploads end to end ([`receipts`]), and distributed
//! aggregation by a worker group ([`jobs`], [`worker`], [`combine`]).

pub mod combine;
pub mod jobs;
pub mod layout;
pub mod receipts;
pub mod store;
pub mod worker;

pub use store::NatsStore;
