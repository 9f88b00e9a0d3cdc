//! # zeppelin-cluster
//!
//! Scale-out of the aggregation service on NATS JetStream: distributed aggregation by a
//! worker group ([`jobs`], [`worker`], [`combine`]).

pub mod combine;
pub mod jobs;
pub mod worker;
