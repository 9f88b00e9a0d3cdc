//! The state every handler shares: the store, the codec, the evaluator and the keys, the
//! configuration and the limits' counters; and how a request's caller is authenticated.

use std::sync::{Arc, RwLock};

use axum::http::{header, HeaderMap, HeaderValue};
use tokio::sync::Semaphore;
use zeppelin_server::{Evaluator, PreparedGaloisKeys, PreparedRelinKeys};

use crate::aggregator::Aggregator;
use crate::codec::Codec;
use crate::error::ServiceError;
use crate::limits::{AggregationGate, BodyBudget, RateLimiter};
use crate::principals::Principal;
use crate::store::UploadStore;
use crate::tls::ClientIdentity;
use crate::ServiceConfig;

/// The largest aggregation request body (weights of a full stream fit: 21 bytes each).
pub(crate) const MAX_AGGREGATE_BODY: usize = 32 << 20;

/// What the handlers share.
pub(crate) struct AppState {
    pub store: Arc<dyn UploadStore>,
    pub codec: Arc<dyn Codec>,
    pub evaluator: Arc<Evaluator>,
    pub relin: RwLock<Option<Arc<PreparedRelinKeys>>>,
    pub galois: RwLock<Option<Arc<PreparedGaloisKeys>>>,
    pub config: ServiceConfig,
    pub in_flight: Arc<Semaphore>,
    pub aggregations: AggregationGate,
    pub body_budget: BodyBudget,
    pub rate_limiter: RateLimiter,
    pub aggregator: Arc<dyn Aggregator>,
}

/// The caller, from its `Authorization` header or its connection's verified client
/// certificate (401 without a valid credential). Routes behind the limits middleware take the
/// [`Principal`] it authenticated as an extension; `/metrics`, outside it, calls this.
pub(crate) fn principal(
    state: &AppState,
    headers: &HeaderMap,
    certificate: Option<&ClientIdentity>,
) -> Result<Principal, ServiceError> {
    let value = headers
        .get(header::AUTHORIZATION)
        .map(HeaderValue::as_bytes);
    Ok(state
        .config
        .auth
        .authenticate_request(value, certificate.map(|c| c.0.as_str()))?)
}
