//! The admission middleware around every request (docs/server.md, "Limits"):
//!
//! - `/v1/health` and `/metrics` are outside every other limit (they answer under load);
//! - the caller is authenticated from its headers (401 before any body is read) and passed
//!   to the handler as a [`Principal`](crate::principals::Principal) extension;
//! - its principal's token bucket is charged (429 + Retry-After beyond it);
//! - a request body is read here, before the handler: `Content-Length` is required (411),
//!   checked against the route's limit (413), reserved from the global memory budget for
//!   buffered bodies (503 + Retry-After when exhausted), and read at a minimum rate (408);
//! - then the in-flight limit (503) and the time limit, which covers the processing only;
//! - every error response is JSON (a rejection of the router or an extractor is rewritten).

use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::error::ServiceError;
use crate::limits::{read_body_at_rate, PrincipalKey};
use crate::state::{principal, AppState, MAX_AGGREGATE_BODY};

/// The body limit of a route that takes one (`None`: the route reads no body, or does not
/// exist; the router answers it).
fn body_limit(state: &AppState, method: &Method, path: &str) -> Option<usize> {
    let under_streams = path.starts_with("/v1/streams/");
    match *method {
        Method::POST if under_streams && path.ends_with("/ciphertexts") => {
            Some(state.codec.max_upload_bytes())
        }
        Method::POST if under_streams && path.ends_with("/aggregate") => Some(MAX_AGGREGATE_BODY),
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

/// Whether the limits below skip `path` (probes must answer under any load).
fn is_probe(path: &str) -> bool {
    path == "/v1/health" || path == "/metrics"
}

/// The admission middleware (see the module doc).
pub(crate) async fn admission(
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
    let caller = principal(
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
