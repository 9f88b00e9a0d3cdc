//! The limit types of the service (docs/server.md, "Limits"): a token bucket per principal
//! (429 + Retry-After beyond it), the bounded aggregation queue (503 + Retry-After beyond
//! it), the global memory budget for buffered bodies, and a body reader with a minimum rate
//! (408 when fewer than [`BodyRate::bytes`] arrive in a [`BodyRate::window`], so a slow link
//! that keeps sending is never cut off by a total limit). [`crate::admission`] applies them
//! to every request.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::extract::Request;
use bytes::{Bytes, BytesMut};
use http_body_util::BodyExt;
use tokio::sync::{OwnedSemaphorePermit, Semaphore, SemaphorePermit};

use crate::conn::PeerAddr;
use crate::error::ServiceError;
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
    pub(crate) fn take(&self, key: PrincipalKey) -> Result<(), u64> {
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

    pub(crate) fn reserve(&self, len: usize) -> Result<OwnedSemaphorePermit, ServiceError> {
        let units = u32::try_from(len.div_ceil(BUDGET_UNIT).max(1))
            .map_err(|_| ServiceError::MemoryBudget { budget: self.bytes })?;
        self.permits
            .clone()
            .try_acquire_many_owned(units)
            .map_err(|_| ServiceError::MemoryBudget { budget: self.bytes })
    }
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
