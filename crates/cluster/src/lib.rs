//! Zeppelin on NATS JetStream: the layout of subjects, streams and buckets ([`layout`]),
//! connections with credentials and TLS ([`connect`]), the upload store behind
//! `zeppelin_service::store::UploadStore` ([`store`]), the receipt task that acknowledges MQTT
//! uploads end to end ([`receipts`]), and distributed aggregation by a worker group
//! ([`jobs`], [`worker`], [`combine`]) whose messages are authenticated under a shared
//! cluster key ([`auth`]).

pub mod auth;
pub mod combine;
pub mod connect;
mod hex;
pub mod jobs;
pub mod layout;
pub mod receipts;
pub mod store;
pub mod worker;

pub use store::NatsStore;
