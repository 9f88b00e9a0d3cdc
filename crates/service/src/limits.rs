//! The limits around every request (docs/server.md, "Limits"):
//!
//! - `/v1/health` and `/metrics` are outside every other limit (they answer under load);
//! - the caller is authenticated from its headers (401 before any body is read) and passed
//!   to the handler as a [`Principal`] extension;
//! - a token bucket per principal (429 + Retry-After beyond it);
//! - a request body is read here, before the handler: `Content-Length` is required (411),
//!   checked against the route's limit (413), reserved from a global memory budget for
//!   buffered bodies (503 + Retry-After when exhausted), and read at a minimum rate (408 when
//!   fewer than [`BodyRate::bytes`] arrived in a [`BodyRate::window`]), so a slow link that
//!   keeps sending is never cut off by a total limit;
//! - then the in-flight limit (503) and the time limit, which covers the processing only;
//! - every error response is JSON (a rejection of the router or an extractor is rewritten).

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use bytes::{Bytes, BytesMut};
use http_body_util::BodyExt;
use tokio::sync::{OwnedSemaphorePermit, Semaphore, SemaphorePermit};

use crate::conn::PeerAddr;
use crate::error::ServiceError;
use crate::http::AppState;
use crate::principals::Principal;

/// The least a body must deliver per window.
#[derive(Clone, Copy, Debug)]
pub struct BodyRate {
    /// Bytes per window.
    pub bytes: usize,
    /// The window.
    pub window: Duration,
}

/// A per-principal token bucket's parameters.
#[derive(Clone, Copy, Debug)]
pub struct RateLimit {
    /// Requests added per second.
    pub per_second: f64,
    /// The bucket's size (a burst).
    pub burst: f64,
}

/// Who a request counts against for rate limiting: an opaque key.
///
/// The authenticated principal (the owner, or a device by name); a request that presents no
/// valid credential counts against its peer's IP address, so guessing tokens is limited too.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct PrincipalKey(String);

impl PrincipalKey {
    /// The key of an authenticated caller.
    pub fn of(principal: &Principal) -> Self {
        match principal {
            Principal::Owner => Self("owner".into()),
            Principal::Device { name, .. } => Self(format!("device:{name}")),
        }
    }

    /// The key of an unauthenticated request: its peer's IP address.
    pub fn peer(request: &Request) -> Self {
        match request.extensions().get::<PeerAddr>() {
            Some(PeerAddr(addr)) => Self(format!("ip:{}", addr.ip())),
            None => Self("unknown".into()),
        }
    }
}

/// Most principals whose buckets are kept (full, stale ones are dropped beyond it).
const MAX_BUCKETS: usize = 65_536;

/// Token buckets per principal.
pub(crate) struct RateLimiter {
    limit: Option<RateLimit>,
    buckets: Mutex<HashMap<PrincipalKey, (f64, Instant)>>,
}

impl RateLimiter {
    pub(crate) fn new(limit: Option<RateLimit>) -> Self {
        Self {
            limit,
            buckets: Mutex::new(HashMap::new()),
        }
    }

    /// Takes one token of `key`'s bucket, or says in how many seconds one will be there.
    fn take(&self, key: PrincipalKey) -> Result<(), u64> {
        let Some(limit) = self.limit else {
            return Ok(());
        };
        let now = Instant::now();
        let mut buckets = self
            .buckets
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if buckets.len() >= MAX_BUCKETS {
            let refill = limit.burst / limit.per_second.max(f64::MIN_POSITIVE);
            buckets.retain(|_, (_, at)| now.duration_since(*at).as_secs_f64() < refill);
        }
        let (tokens, at) = buckets.entry(key).or_insert((limit.burst, now));
        *tokens =
            (*tokens + now.duration_since(*at).as_secs_f64() * limit.per_second).min(limit.burst);
        *at = now;
        if *tokens >= 1.0 {
            *tokens -= 1.0;
            Ok(())
        } else {
            let wait = (1.0 - *tokens) / limit.per_second.max(f64::MIN_POSITIVE);
            Err(wait.ceil().clamp(1.0, 3600.0) as u64)
        }
    }
}

/// The aggregation gate: a few computed at once, a bounded number waiting (503 beyond).
pub(crate) struct AggregationGate {
    running: Semaphore,
    waiting: AtomicUsize,
    max_waiting: usize,
}

impl AggregationGate {
    pub(crate) fn new(concurrent: usize, max_waiting: usize) -> Self {
        Self {
            running: Semaphore::new(concurrent.max(1)),
            waiting: AtomicUsize::new(0),
            max_waiting,
        }
    }

    /// A turn to aggregate, waiting behind at most `max_waiting` others.
    pub(crate) async fn enter(&self) -> Result<SemaphorePermit<'_>, ServiceError> {
        if let Ok(permit) = self.running.try_acquire() {
            return Ok(permit);
        }
        if self.waiting.fetch_add(1, Ordering::AcqRel) >= self.max_waiting {
            self.waiting.fetch_sub(1, Ordering::AcqRel);
            return Err(ServiceError::QueueFull {
                limit: self.max_waiting,
            });
        }
        let permit = self.running.acquire().await;
        self.waiting.fetch_sub(1, Ordering::AcqRel);
        permit.map_err(|_| ServiceError::Internal("aggregation gate closed".into()))
    }
}

/// Bytes per memory-budget permit (the budget is counted in KiB, so it fits a semaphore).
const BUDGET_UNIT: usize = 1024;

/// The global budget of buffered request bodies.
pub(crate) struct BodyBudget {
    permits: Arc<Semaphore>,
    bytes: usize,
}

impl BodyBudget {
    pub(crate) fn new(bytes: usize) -> Self {
        let units = bytes.div_ceil(BUDGET_UNIT).clamp(1, Semaphore::MAX_PERMITS);
        Self {
            permits: Arc::new(Semaphore::new(units)),
            bytes,
        }
    }

    fn reserve(&self, len: usize) -> Result<OwnedSemaphorePermit, ServiceError> {
        let units = u32::try_from(len.div_ceil(BUDGET_UNIT).max(1))
            .map_err(|_| ServiceError::MemoryBudget { budget: self.bytes })?;
        self.permits
            .clone()
            .try_acquire_many_owned(units)
            .map_err(|_| ServiceError::MemoryBudget { budget: self.bytes })
    }
}

/// The body limit of a route that takes one (`None`: the route reads no body, or does not
/// exist; the router answers it).
fn body_limit(state: &AppState, method: &Method, path: &str) -> Option<usize> {
    let under_streams = path.starts_with("/v1/streams/");
    match *method {
        Method::POST if under_streams && path.ends_with("/ciphertexts") => {
            Some(state.codec.max_upload_bytes())
        }
        Method::POST if under_streams && path.ends_with("/aggregate") => {
            Some(crate::http::MAX_AGGREGATE_BODY)
        }
        Method::PUT if path == "/v1/keys/relin" || path == "/v1/keys/galois" => {
            Some(state.codec.max_keys_bytes())
        }
        _ => None,
    }
}

/// The announced body length: none, or one valid decimal `Content-Length`.
fn content_length(headers: &HeaderMap) -> Result<Option<usize>, ServiceError> {
    let mut values = headers.get_all(header::CONTENT_LENGTH).iter();
    let Some(first) = values.next() else {
        return Ok(None);
    };
    if values.next().is_some() {
        return Err(ServiceError::DuplicateHeader {
            name: "Content-Length",
        });
    }
    first
        .to_str()
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
        .map(Some)
        .ok_or(ServiceError::BadHeader {
            name: "Content-Length",
        })
}

/// Reads exactly `len` bytes of `body`, failing when fewer than `rate.bytes` arrive in a
/// window (408) or the body runs past `len` or ends short (400).
pub(crate) async fn read_body_at_rate(
    body: Body,
    len: usize,
    rate: BodyRate,
) -> Result<Bytes, ServiceError> {
    let mut body = body;
    // Grown as bytes arrive: the announced length is only a bound.
    let mut buffer = BytesMut::new();
    let mut window_start = tokio::time::Instant::now();
    let mut in_window = 0usize;
    loop {
        let frame = tokio::time::timeout_at(window_start + rate.window, body.frame()).await;
        let frame = match frame {
            Err(_) => {
                return Err(ServiceError::SlowBody {
                    bytes: rate.bytes,
                    seconds: rate.window.as_secs(),
                })
            }
            Ok(None) => break,
            Ok(Some(Err(e))) => {
                return Err(ServiceError::Body(
                    e.to_string().chars().take(200).collect(),
                ))
            }
            Ok(Some(Ok(frame))) => frame,
        };
        let Ok(data) = frame.into_data() else {
            continue;
        };
        if buffer.len() + data.len() > len {
            return Err(ServiceError::Body(format!(
                "the body runs past its Content-Length of {len} bytes"
            )));
        }
        buffer.extend_from_slice(&data);
        in_window += data.len();
        if in_window >= rate.bytes {
            window_start = tokio::time::Instant::now();
            in_window = 0;
        }
    }
    if buffer.len() != len {
        return Err(ServiceError::Body(format!(
            "the body ended after {} of its {len} bytes",
            buffer.len()
        )));
    }
    Ok(buffer.freeze())
}

/// Whether the limits below skip `path` (probes must answer under any load).
fn is_probe(path: &str) -> bool {
    path == "/v1/health" || path == "/metrics"
}

/// The limits middleware (see the module doc).
pub(crate) async fn limits(
    State(state): State<Arc<AppState>>,
    request: Request,
    next: Next,
) -> Response {
    let path = request.uri().path().to_owned();
    if is_probe(&path) {
        return json_errors(next.run(request).await);
    }
    let is_upload = request.method() == Method::POST && path.ends_with("/ciphertexts");
    let response = match limited(&state, request, next, &path).await {
        Ok(response) => response,
        Err(e) => e.into_response(),
    };
    let metrics = &state.config.metrics;
    metrics.response(response.status());
    if is_upload && !response.status().is_success() {
        metrics.upload_rejected();
    }
    json_errors(response)
}

async fn limited(
    state: &AppState,
    request: Request,
    next: Next,
    path: &str,
) -> Result<Response, ServiceError> {
    // Authenticated before the body is read: an anonymous or forbidden body is never
    // buffered.
    let caller = crate::http::principal(
        state,
        request.headers(),
        request.extensions().get::<crate::tls::ClientIdentity>(),
    );
    let key = match &caller {
        Ok(principal) => PrincipalKey::of(principal),
        Err(_) => PrincipalKey::peer(&request),
    };
    state
        .rate_limiter
        .take(key)
        .map_err(|retry_after| ServiceError::RateLimited { retry_after })?;
    let mut request = request;
    request.extensions_mut().insert(caller?);
    let (mut parts, body) = request.into_parts();
    // Held until the response: the handler works on the buffered body.
    let mut _reserved = None;
    let body = match body_limit(state, &parts.method, path) {
        None => body,
        Some(limit) => {
            let len = content_length(&parts.headers)?.ok_or(ServiceError::LengthRequired)?;
            if len > limit {
                return Err(ServiceError::TooLarge { limit });
            }
            _reserved = Some(state.body_budget.reserve(len)?);
            let bytes = read_body_at_rate(body, len, state.config.body_min_rate).await?;
            parts.headers.remove(header::TRANSFER_ENCODING);
            Body::from(bytes)
        }
    };
    let request = Request::from_parts(parts, body);
    let Ok(_permit) = state.in_flight.clone().try_acquire_owned() else {
        return Err(ServiceError::Overloaded {
            limit: state.config.max_in_flight,
        });
    };
    let limit = if path.ends_with("/aggregate") {
        state.config.aggregate_timeout
    } else {
        state.config.request_timeout
    };
    tokio::time::timeout(limit, next.run(request))
        .await
        .map_err(|_| ServiceError::Timeout {
            seconds: limit.as_secs(),
        })
}

/// An error response that is not JSON (a rejection of the router or of an extractor, such as
/// 405 or a bad percent-encoding) as `{"error": ...}` with the status's reason.
fn json_errors(response: Response) -> Response {
    let status = response.status();
    let is_json = response
        .headers()
        .get(header::CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes().starts_with(b"application/json"));
    if !(status.is_client_error() || status.is_server_error()) || is_json {
        return response;
    }
    let (mut parts, _) = response.into_parts();
    let reason = match status {
        StatusCode::METHOD_NOT_ALLOWED => "method not allowed on this endpoint".to_owned(),
        StatusCode::BAD_REQUEST => "bad request: the path or a header is malformed".to_owned(),
        other => other
            .canonical_reason()
            .unwrap_or("request failed")
            .to_lowercase(),
    };
    let body = serde_json::json!({ "error": reason }).to_string();
    parts.headers.insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("application/json"),
    );
    parts.headers.remove(header::CONTENT_LENGTH);
    Response::from_parts(parts, Body::from(body))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bucket_allows_its_burst_then_says_when_to_retry() {
        let limiter = RateLimiter::new(Some(RateLimit {
            per_second: 1.0,
            burst: 3.0,
        }));
        let key = PrincipalKey("ip:127.0.0.1".into());
        for _ in 0..3 {
            assert_eq!(limiter.take(key.clone()), Ok(()));
        }
        assert_eq!(limiter.take(key.clone()), Err(1));
        // Another principal has its own bucket.
        assert_eq!(limiter.take(PrincipalKey("ip:127.0.0.2".into())), Ok(()));
    }

    #[tokio::test]
    async fn a_body_below_the_rate_is_408_and_one_at_the_rate_is_read() {
        let rate = BodyRate {
            bytes: 4,
            window: Duration::from_millis(200),
        };
        let (mut tx, body) = body_channel();
        let slow = tokio::spawn(read_body_at_rate(body, 8, rate));
        tx.send(Bytes::from_static(b"ab")).await;
        let result = slow.await.ok();
        assert!(matches!(result, Some(Err(ServiceError::SlowBody { .. }))));

        let (mut tx, body) = body_channel();
        let steady = tokio::spawn(read_body_at_rate(body, 8, rate));
        for chunk in [b"abcd", b"efgh"] {
            tokio::time::sleep(Duration::from_millis(120)).await;
            tx.send(Bytes::from_static(chunk)).await;
        }
        drop(tx);
        let read = steady.await.ok().and_then(Result::ok);
        assert_eq!(read.as_deref(), Some(&b"abcdefgh"[..]));
    }

    /// A body fed by a channel (the sender's drop ends it).
    struct BodySender(tokio::sync::mpsc::Sender<Bytes>);

    impl BodySender {
        async fn send(&mut self, bytes: Bytes) {
            let _ = self.0.send(bytes).await;
        }
    }

    fn body_channel() -> (BodySender, Body) {
        let (tx, rx) = tokio::sync::mpsc::channel::<Bytes>(4);
        let stream = futures_util::stream::unfold(rx, |mut rx| async move {
            rx.recv()
                .await
                .map(|bytes| (Ok::<_, std::io::Error>(bytes), rx))
        });
        (BodySender(tx), Body::from_stream(stream))
    }
}
