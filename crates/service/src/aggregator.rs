//! Who computes an aggregation: the [`Aggregator`] trait, so that the service can hand the
//! work to a worker group (zeppelin-cluster's `JobAggregator`) instead of its own cores, and
//! [`LocalAggregator`], the in-process default.

use crate::aggregate::{AggregateOp, Aggregated, Aggregation};
use crate::error::ServiceError;
use crate::names::StreamName;
use crate::store::BoxFuture;

/// Computes `op` over the uploads `stream` holds when the call starts.
///
/// `with` carries the service's store, codec, evaluator and the relinearization keys current
/// for this request; an implementation must return exactly what [`LocalAggregator`] returns
/// for the same uploads (the same ciphertext bytes and count).
pub trait Aggregator: Send + Sync + 'static {
    /// Runs one aggregation.
    fn aggregate(
        &self,
        with: Aggregation,
        stream: StreamName,
        op: AggregateOp,
    ) -> BoxFuture<'_, Result<Aggregated, ServiceError>>;

    /// Whether it reads the uploads through `with.store` only (so that a view such as
    /// [`crate::aggregate::FirstUploads`] bounds what it covers). `false` (the default) for an
    /// aggregator that reads the uploads elsewhere; `first_n` is then refused with 501.
    fn reads_through_store(&self) -> bool {
        false
    }
}

/// Aggregation on this process's cores (rayon), reading the store in chunks.
#[derive(Clone, Copy, Debug, Default)]
pub struct LocalAggregator;

impl Aggregator for LocalAggregator {
    fn aggregate(
        &self,
        with: Aggregation,
        stream: StreamName,
        op: AggregateOp,
    ) -> BoxFuture<'_, Result<Aggregated, ServiceError>> {
        Box::pin(with.run(stream, op))
    }

    fn reads_through_store(&self) -> bool {
        true
    }
}
