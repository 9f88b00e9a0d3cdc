//! [`ServiceError`]: every way a request fails, each with its HTTP status and a JSON body
//! `{"error": "<what is wrong>"}` (docs/server.md lists them).

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};

use crate::codec::UploadError;
use crate::names::NameError;
use crate::principals::AuthError;
use crate::store::StoreError;

/// Why key bytes were refused.
#[derive(Debug, thiserror::Error)]
pub enum KeysProblem {
    /// Not a SEAL key object under the server's parameters.
    #[error(transparent)]
    Load(#[from] zeppelin_seal::SealError),
    /// Loaded, but not usable by the evaluator (level, shape, residues).
    #[error(transparent)]
    Prepare(#[from] zeppelin_server::EvalError),
}

/// Why a request failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServiceError {
    /// A stream name or idempotency key that breaks the naming rules.
    #[error(transparent)]
    Name(#[from] NameError),
    /// The upload is not a device ciphertext of the server's preset.
    #[error("bad ciphertext: {0}")]
    Upload(#[from] UploadError),
    /// Keys that do not load under the server's parameters.
    #[error("bad {what}: {source}")]
    Keys {
        /// `RelinKeys` or `GaloisKeys`.
        what: &'static str,
        /// Why.
        #[source]
        source: KeysProblem,
    },
    /// A header that is not valid text.
    #[error("header {name} is not visible ASCII")]
    BadHeader {
        /// The header.
        name: &'static str,
    },
    /// An aggregation request that is not valid.
    #[error("bad aggregation request: {0}")]
    BadRequest(String),
    /// `dot` with a number of weights other than the stream's count.
    #[error("dot: {weights} weights for a stream of {count} uploads")]
    WeightCount {
        /// Weights given.
        weights: usize,
        /// Uploads in the stream.
        count: u64,
    },
    /// A body over the limit.
    #[error("body over the limit of {limit} bytes")]
    TooLarge {
        /// The limit.
        limit: usize,
    },
    /// The body could not be read.
    #[error("could not read the request body: {0}")]
    Body(String),
    /// No such stream (a stream exists from its first upload on).
    #[error("no stream {0}")]
    NoStream(String),
    /// No such endpoint.
    #[error("no endpoint {method} {path}")]
    NoRoute {
        /// The method.
        method: String,
        /// The path.
        path: String,
    },
    /// `sum_of_squares` without relinearization keys.
    #[error("sum_of_squares needs relinearization keys: none were read at start or sent with PUT /v1/keys/relin")]
    NoRelinKeys,
    /// Too many requests in flight.
    #[error("overloaded: {limit} requests are in flight; retry later")]
    Overloaded {
        /// The limit.
        limit: usize,
    },
    /// The request took longer than its limit.
    #[error("request timed out after {seconds} s")]
    Timeout {
        /// The limit.
        seconds: u64,
    },
    /// The store refused or failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The evaluator failed on stored ciphertexts.
    #[error("aggregation failed: {0}")]
    Eval(#[from] zeppelin_server::EvalError),
    /// A stored upload no longer decodes (the store was damaged or edited).
    #[error("stored upload {id} of stream {stream} does not decode: {source}")]
    StoredUpload {
        /// The stream.
        stream: String,
        /// The upload.
        id: u64,
        /// Why.
        #[source]
        source: UploadError,
    },
    /// `dot` whose every weight is 0 mod t (the result would be a transparent ciphertext).
    #[error("dot: every weight is 0 mod t; the result would carry no encryption")]
    ZeroWeights,
    /// The aggregation's workers did not finish in time, or the cluster is unreachable
    /// (retry later).
    #[error("aggregation unavailable: {0}")]
    Unavailable(String),
    /// A header given more than once where one is expected.
    #[error("header {name} given more than once")]
    DuplicateHeader {
        /// The header.
        name: &'static str,
    },
    /// A request body without `Content-Length` (the memory budget is reserved from it).
    #[error("a request body needs a Content-Length header")]
    LengthRequired,
    /// A body that arrived more slowly than the minimum rate.
    #[error("request body slower than {bytes} bytes per {seconds} s")]
    SlowBody {
        /// Bytes per window.
        bytes: usize,
        /// The window.
        seconds: u64,
    },
    /// The memory budget of buffered request bodies is taken (retry later).
    #[error(
        "overloaded: the {budget}-byte budget of request bodies being read is taken; retry later"
    )]
    MemoryBudget {
        /// The budget.
        budget: usize,
    },
    /// Too many aggregations waiting (retry later).
    #[error("overloaded: {limit} aggregations are already waiting; retry later")]
    QueueFull {
        /// Most waiting.
        limit: usize,
    },
    /// The caller's rate limit is used up.
    #[error("rate limit exceeded; retry in {retry_after} s")]
    RateLimited {
        /// Seconds until a request is allowed again.
        retry_after: u64,
    },
    /// No valid credential (401), or not allowed for this principal (403), or the credential
    /// registry is unreadable (503, fail closed).
    #[error(transparent)]
    Auth(#[from] crate::principals::AuthError),
    /// No upload with this id in the stream (a delete).
    #[error("stream {stream} holds no upload {id}")]
    NoUpload {
        /// The stream.
        stream: String,
        /// The id asked for.
        id: u64,
    },
    /// An upload id in a path that is not a decimal number.
    #[error("upload id is not a decimal number")]
    BadUploadId,
    /// The stream changed under the request (uploads deleted while an aggregation read it):
    /// retry.
    #[error("the stream changed during the request: {0}")]
    Changed(String),
    /// Not offered by this server's configuration (the text says what and why).
    #[error("not implemented: {0}")]
    NotImplemented(String),
    /// A task of the server failed (a bug: logged).
    #[error("internal error: {0}")]
    Internal(String),
}

impl ServiceError {
    /// The HTTP status of this error.
    pub fn status(&self) -> StatusCode {
        use ServiceError as E;
        match self {
            E::Name(_)
            | E::Upload(_)
            | E::Keys { .. }
            | E::BadHeader { .. }
            | E::BadRequest(_)
            | E::WeightCount { .. }
            | E::ZeroWeights
            | E::DuplicateHeader { .. }
            | E::BadUploadId
            | E::Body(_) => StatusCode::BAD_REQUEST,
            E::NoUpload { .. } => StatusCode::NOT_FOUND,
            E::Changed(_) => StatusCode::CONFLICT,
            E::NotImplemented(_) | E::Store(StoreError::NotImplemented(_)) => {
                StatusCode::NOT_IMPLEMENTED
            }
            E::LengthRequired => StatusCode::LENGTH_REQUIRED,
            E::SlowBody { .. } => StatusCode::REQUEST_TIMEOUT,
            E::RateLimited { .. } => StatusCode::TOO_MANY_REQUESTS,
            E::TooLarge { .. } => StatusCode::PAYLOAD_TOO_LARGE,
            E::NoStream(_) | E::NoRoute { .. } => StatusCode::NOT_FOUND,
            E::NoRelinKeys => StatusCode::CONFLICT,
            E::Store(StoreError::StreamFull { .. } | StoreError::KeyReused { .. }) => {
                StatusCode::CONFLICT
            }
            E::Store(StoreError::Unsupported(_)) => StatusCode::BAD_REQUEST,
            // NATS failures are mostly transient (a node down, no quorum yet): retry later.
            E::Overloaded { .. }
            | E::MemoryBudget { .. }
            | E::QueueFull { .. }
            | E::Timeout { .. }
            | E::Unavailable(_)
            | E::Store(StoreError::Closed | StoreError::Nats(_)) => StatusCode::SERVICE_UNAVAILABLE,
            E::Auth(AuthError::Unauthenticated(_)) => StatusCode::UNAUTHORIZED,
            E::Auth(AuthError::Forbidden(_)) => StatusCode::FORBIDDEN,
            E::Auth(_) => StatusCode::SERVICE_UNAVAILABLE,
            E::Store(_) | E::Eval(_) | E::StoredUpload { .. } | E::Internal(_) => {
                StatusCode::INTERNAL_SERVER_ERROR
            }
        }
    }
}

/// The longest error message a response carries (the reason, never the input).
pub const MAX_ERROR_MESSAGE: usize = 512;

impl IntoResponse for ServiceError {
    fn into_response(self) -> Response {
        let status = self.status();
        let text = self.to_string();
        let text = if status.is_server_error()
            && status != StatusCode::SERVICE_UNAVAILABLE
            && status != StatusCode::NOT_IMPLEMENTED
        {
            // Details (paths, SQLite internals, the damaged upload's id) go to the log only.
            tracing::error!(error = %text, "request failed");
            "internal error (details are in the server log)".to_owned()
        } else {
            tracing::debug!(status = status.as_u16(), error = %text, "request refused");
            truncate(text, MAX_ERROR_MESSAGE)
        };
        let body = serde_json::json!({ "error": text }).to_string();
        let mut response = (status, body).into_response();
        let headers = response.headers_mut();
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        if status == StatusCode::UNAUTHORIZED {
            headers.insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        }
        if let ServiceError::RateLimited { retry_after } = self {
            headers.insert(header::RETRY_AFTER, HeaderValue::from(retry_after));
        } else if status == StatusCode::SERVICE_UNAVAILABLE {
            headers.insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
        }
        response
    }
}

/// `text` cut to at most `max` characters (marked with an ellipsis when cut).
fn truncate(text: String, max: usize) -> String {
    if text.chars().count() <= max {
        return text;
    }
    let mut cut: String = text.chars().take(max.saturating_sub(1)).collect();
    cut.push('…');
    cut
}
