//! Zeppelin on NATS JetStream: the layout of subjects, streams and buckets ([`layout`]), the
//! upload store behind `zeppelin_service::store::UploadStore` ([`store`]) and the receipt
//! task that acknowledges MQTT uploads end to end ([`receipts`]).

pub mod layout;
pub mod receipts;
pub mod store;

pub use store::NatsStore;
