//! The HTTP layer: routes, handlers and the limits around them (docs/server.md is the
//! contract).

use std::sync::{Arc, RwLock};
use std::time::Duration;

use axum::body::Body;
use axum::extract::{Extension, Path, Request, State};
use axum::http::{header, HeaderMap, HeaderName, HeaderValue, Method, StatusCode, Uri};
use axum::middleware;
use axum::response::{IntoResponse, Response};
use axum::routing::{delete, get, post, put};
use axum::Router;
use bytes::Bytes;
use http_body_util::{BodyExt, LengthLimitError, Limited};
use tower_http::trace::{DefaultOnResponse, TraceLayer};
use zeppelin_server::{Evaluator, PreparedGaloisKeys, PreparedRelinKeys};

use crate::aggregate::{AggregateRequest, Aggregation, FirstUploads};
use crate::codec::Codec;
use crate::error::{KeysProblem, ServiceError};
use crate::names::{IdempotencyKey, StreamName};
use crate::principals::{DeviceName, Principal};
use crate::state::{principal, AppState, MAX_AGGREGATE_BODY};
use crate::store::{AppendRequest, DeleteTarget, UploadStore};
use crate::tls::ClientIdentity;

/// The request header that makes a retried upload count once.
pub const IDEMPOTENCY_KEY: HeaderName = HeaderName::from_static("idempotency-key");
/// The response header of an upload: `true` when the key was already stored (nothing new).
pub const IDEMPOTENT_REPLAYED: HeaderName = HeaderName::from_static("idempotent-replayed");
/// The response header of an aggregation: the number of uploads it covers.
pub const COUNT: HeaderName = HeaderName::from_static("zeppelin-count");
/// The response header of a delete: how many uploads it removed.
pub const DELETED: HeaderName = HeaderName::from_static("zeppelin-deleted");
/// The response header of an aggregation: the server's preset.
pub const PRESET: HeaderName = HeaderName::from_static("zeppelin-preset");

/// The longest text of one weight in a `dot` request (`-9223372036854775808,` plus a space).
const MAX_WEIGHT_TEXT: usize = 22;
/// Room for the rest of an aggregation request (the op, keys, whitespace).
const AGGREGATE_JSON_OVERHEAD: usize = 256;

type Shared = Arc<AppState>;

pub(crate) fn router(state: Shared) -> Router {
    Router::new()
        .route("/v1/health", get(health))
        .route("/metrics", get(metrics))
        .route("/v1/streams", get(list_streams))
        .route("/v1/streams/{stream}", get(stream_status))
        .route("/v1/streams/{stream}/ciphertexts", post(upload))
        .route("/v1/streams/{stream}/aggregate", post(aggregate))
        .route(
            "/v1/streams/{stream}/ciphertexts/{id}",
            delete(delete_upload),
        )
        .route(
            "/v1/streams/{stream}/devices/{device}",
            delete(delete_device_uploads),
        )
        .route("/v1/keys/relin", put(put_relin))
        .route("/v1/keys/galois", put(put_galois))
        .fallback(no_route)
        .method_not_allowed_fallback(wrong_method)
        .layer(middleware::from_fn_with_state(
            state.clone(),
            crate::admission::admission,
        ))
        .layer(
            TraceLayer::new_for_http()
                // The path only, truncated: a query or a long path never fills the log.
                .make_span_with(|request: &Request| {
                    let path: String = request.uri().path().chars().take(128).collect();
                    tracing::info_span!("request", method = %request.method(), path)
                })
                .on_response(DefaultOnResponse::new().level(tracing::Level::INFO)),
        )
        .with_state(state)
}

async fn metrics(
    State(state): State<Shared>,
    certificate: Option<Extension<ClientIdentity>>,
    headers: HeaderMap,
) -> Result<Response, ServiceError> {
    principal(&state, &headers, certificate.as_deref())?.require_owner("read the metrics")?;
    Ok((
        StatusCode::OK,
        [(header::CONTENT_TYPE, "text/plain; version=0.0.4")],
        state.config.metrics.render(),
    )
        .into_response())
}

async fn no_route(method: Method, uri: Uri) -> ServiceError {
    ServiceError::NoRoute {
        method: method.to_string(),
        path: uri.path().chars().take(200).collect(),
    }
}

async fn wrong_method(method: Method, uri: Uri) -> Response {
    json(
        StatusCode::METHOD_NOT_ALLOWED,
        serde_json::json!({ "error": format!(
            "method {} not allowed on {}",
            method.as_str().chars().take(16).collect::<String>(),
            uri.path().chars().take(128).collect::<String>()
        ) }),
    )
}

/// The body, at most `limit` bytes (413 beyond, from the announced length or while reading).
async fn read_body(headers: &HeaderMap, body: Body, limit: usize) -> Result<Bytes, ServiceError> {
    let announced = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if announced.is_some_and(|n| n > limit as u64) {
        return Err(ServiceError::TooLarge { limit });
    }
    match Limited::new(body, limit).collect().await {
        Ok(collected) => Ok(collected.to_bytes()),
        Err(e) if e.downcast_ref::<LengthLimitError>().is_some() => {
            Err(ServiceError::TooLarge { limit })
        }
        Err(e) => Err(ServiceError::Body(e.to_string())),
    }
}

fn json(status: StatusCode, value: serde_json::Value) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        value.to_string(),
    )
        .into_response()
}

async fn health(State(state): State<Shared>) -> Response {
    json(
        StatusCode::OK,
        serde_json::json!({ "status": "ok", "preset": state.codec.preset_name() }),
    )
}

async fn list_streams(
    State(state): State<Shared>,
    Extension(caller): Extension<Principal>,
) -> Result<Response, ServiceError> {
    caller.require_owner("list the streams")?;
    let streams = state.store.list_streams().await?;
    let list: Vec<_> = streams
        .iter()
        .map(|s| serde_json::json!({ "name": s.name.as_str(), "count": s.count }))
        .collect();
    Ok(json(
        StatusCode::OK,
        serde_json::json!({ "streams": list, "preset": state.codec.preset_name() }),
    ))
}

async fn stream_status(
    State(state): State<Shared>,
    Path(stream): Path<String>,
    Extension(caller): Extension<Principal>,
) -> Result<Response, ServiceError> {
    caller.require_owner("read a stream's state")?;
    let name = StreamName::new(&stream)?;
    let info = state
        .store
        .stream_info(&name)
        .await?
        .ok_or_else(|| ServiceError::NoStream(name.to_string()))?;
    Ok(json(
        StatusCode::OK,
        serde_json::json!({ "count": info.count, "preset": state.codec.preset_name() }),
    ))
}

async fn upload(
    State(state): State<Shared>,
    Path(stream): Path<String>,
    Extension(caller): Extension<Principal>,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, ServiceError> {
    let name = StreamName::new(&stream)?;
    if headers.get_all(IDEMPOTENCY_KEY).iter().nth(1).is_some() {
        return Err(ServiceError::DuplicateHeader {
            name: "Idempotency-Key",
        });
    }
    let device = caller.require_upload(&name)?.clone();
    // Keys are scoped to the device: another device cannot squat this one's keys.
    let key = match headers.get(IDEMPOTENCY_KEY) {
        Some(v) => {
            let text = v.to_str().map_err(|_| ServiceError::BadHeader {
                name: "Idempotency-Key",
            })?;
            Some(IdempotencyKey::scoped(&device, &IdempotencyKey::new(text)?))
        }
        None => None,
    };
    let bytes = read_body(&headers, body, state.codec.max_upload_bytes()).await?;
    state.codec.validate(&bytes)?;
    let size = bytes.len();
    let appended = state
        .store
        .append(AppendRequest {
            stream: name.clone(),
            key,
            device: Some(device.clone()),
            body: bytes,
            max_uploads: state.config.max_uploads_per_stream,
        })
        .await?;
    state.config.metrics.upload_stored(size, appended.duplicate);
    tracing::debug!(stream = %name, %device, id = appended.id, duplicate = appended.duplicate, "upload stored");
    let mut response = json(
        StatusCode::CREATED,
        serde_json::json!({ "id": appended.id.to_string() }),
    );
    response.headers_mut().insert(
        IDEMPOTENT_REPLAYED,
        HeaderValue::from_static(if appended.duplicate { "true" } else { "false" }),
    );
    Ok(response)
}

/// 204 with the number removed in [`DELETED`].
fn deleted(removed: u64) -> Response {
    let mut response = StatusCode::NO_CONTENT.into_response();
    response
        .headers_mut()
        .insert(DELETED, HeaderValue::from(removed));
    response
}

async fn delete_upload(
    State(state): State<Shared>,
    Path((stream, id)): Path<(String, String)>,
    Extension(caller): Extension<Principal>,
) -> Result<Response, ServiceError> {
    caller.require_owner("delete uploads")?;
    let name = StreamName::new(&stream)?;
    // Digits only: no sign, no whitespace, at most u64's 20 digits.
    if id.is_empty() || id.len() > 20 || !id.bytes().all(|b| b.is_ascii_digit()) {
        return Err(ServiceError::BadUploadId);
    }
    let id: u64 = id.parse().map_err(|_| ServiceError::BadUploadId)?;
    let removed = state.store.delete(&name, DeleteTarget::Upload(id)).await?;
    if removed == 0 {
        return Err(ServiceError::NoUpload {
            stream: name.to_string(),
            id,
        });
    }
    tracing::info!(stream = %name, id, "upload deleted");
    Ok(deleted(removed))
}

async fn delete_device_uploads(
    State(state): State<Shared>,
    Path((stream, device)): Path<(String, String)>,
    Extension(caller): Extension<Principal>,
) -> Result<Response, ServiceError> {
    caller.require_owner("delete uploads")?;
    let name = StreamName::new(&stream)?;
    let device = DeviceName::new(&device)?;
    let removed = state
        .store
        .delete(&name, DeleteTarget::Device(device.clone()))
        .await?;
    tracing::info!(stream = %name, %device, removed, "a device's uploads deleted");
    Ok(deleted(removed))
}

async fn aggregate(
    State(state): State<Shared>,
    Path(stream): Path<String>,
    Extension(caller): Extension<Principal>,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, ServiceError> {
    caller.require_owner("aggregate")?;
    let name = StreamName::new(&stream)?;
    let bytes = read_body(&headers, body, MAX_AGGREGATE_BODY).await?;
    // The weight count is bounded by the stream's count before the weights are parsed: a
    // body longer than one of `count` weights can hold is refused unread.
    let count = state
        .store
        .stream_info(&name)
        .await?
        .map_or(0, |info| info.count);
    let fits = usize::try_from(count)
        .ok()
        .and_then(|c| c.checked_mul(MAX_WEIGHT_TEXT))
        .and_then(|w| w.checked_add(AGGREGATE_JSON_OVERHEAD))
        .unwrap_or(usize::MAX);
    if bytes.len() > fits {
        return Err(ServiceError::BadRequest(format!(
            "the body ({} bytes) is longer than a request for a stream of {count} uploads can be",
            bytes.len()
        )));
    }
    let AggregateRequest { op, first_n } = AggregateRequest::from_json(&bytes)?;
    let store: Arc<dyn UploadStore> = match first_n {
        None => state.store.clone(),
        Some(_) if !state.aggregator.reads_through_store() => {
            return Err(ServiceError::NotImplemented(
                "first_n with the worker cluster's aggregation".into(),
            ))
        }
        Some(n) => Arc::new(FirstUploads::new(state.store.clone(), name.clone(), n).await?),
    };
    // CPU-bound: a few at a time; the others wait (within their time limit).
    let _permit = state.aggregations.enter().await?;
    let relin = state
        .relin
        .read()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .clone();
    let started = std::time::Instant::now();
    let op_name = op.name();
    let with = Aggregation {
        store,
        codec: state.codec.clone(),
        evaluator: state.evaluator.clone(),
        relin,
        chunk: state.config.aggregate_chunk,
    };
    let result = state.aggregator.aggregate(with, name.clone(), op).await;
    state
        .config
        .metrics
        .aggregation(op_name, result.as_ref().map(|r| r.count).map_err(drop));
    let result = result?;
    let bytes = tokio::task::spawn_blocking(move || {
        result
            .ciphertext
            .save(zeppelin_seal::ComprMode::None)
            .map(|b| (b, result.count))
    })
    .await
    .map_err(|e| ServiceError::Internal(format!("serialising: {e}")))?
    .map_err(|e| ServiceError::Internal(format!("serialising the result: {e}")))?;
    let (bytes, count) = bytes;
    tracing::info!(stream = %name, op = op_name, count, ms = started.elapsed().as_millis() as u64, "aggregated");
    let mut response = (StatusCode::OK, bytes).into_response();
    let h = response.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/octet-stream"),
    );
    h.insert(COUNT, HeaderValue::from(count));
    h.insert(PRESET, HeaderValue::from_static(state.codec.preset_name()));
    Ok(response)
}

async fn put_relin(
    State(state): State<Shared>,
    Extension(caller): Extension<Principal>,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, ServiceError> {
    caller.require_owner("replace the keys")?;
    let keys = load_keys(&state, &headers, body, "RelinKeys", relin_keys).await?;
    replace(&state.relin, keys);
    tracing::info!("relinearization keys replaced");
    Ok(StatusCode::NO_CONTENT.into_response())
}

async fn put_galois(
    State(state): State<Shared>,
    Extension(caller): Extension<Principal>,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, ServiceError> {
    caller.require_owner("replace the keys")?;
    let keys = load_keys(&state, &headers, body, "GaloisKeys", galois_keys).await?;
    replace(&state.galois, keys);
    tracing::info!("Galois keys replaced");
    Ok(StatusCode::NO_CONTENT.into_response())
}

/// Reads a key upload (bounded by the preset's key size) and loads it with `load` off the
/// async threads; `what` names the SEAL object in the error.
async fn load_keys<K: Send + 'static>(
    state: &Shared,
    headers: &HeaderMap,
    body: Body,
    what: &'static str,
    load: fn(&dyn Codec, &Evaluator, &[u8]) -> Result<K, KeysProblem>,
) -> Result<K, ServiceError> {
    let bytes = read_body(headers, body, state.codec.max_keys_bytes()).await?;
    let (codec, eval) = (state.codec.clone(), state.evaluator.clone());
    tokio::task::spawn_blocking(move || load(&*codec, &eval, &bytes))
        .await
        .map_err(|e| ServiceError::Internal(format!("loading keys: {e}")))?
        .map_err(|source| ServiceError::Keys { what, source })
}

/// Swaps in new keys; a poisoned lock is taken over (the old value is replaced whole).
fn replace<K>(slot: &RwLock<Option<Arc<K>>>, keys: K) {
    *slot
        .write()
        .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(Arc::new(keys));
}

/// SEAL `RelinKeys` bytes, loaded under the preset and prepared (checked) for the evaluator.
pub(crate) fn relin_keys(
    codec: &dyn Codec,
    eval: &Evaluator,
    bytes: &[u8],
) -> Result<PreparedRelinKeys, KeysProblem> {
    Ok(eval.prepare_relin_keys(&codec.relin_keys(bytes)?)?)
}

/// SEAL `GaloisKeys` bytes, loaded under the preset and prepared (checked) for the evaluator.
pub(crate) fn galois_keys(
    codec: &dyn Codec,
    eval: &Evaluator,
    bytes: &[u8],
) -> Result<PreparedGaloisKeys, KeysProblem> {
    Ok(eval.prepare_galois_keys(&codec.galois_keys(bytes)?)?)
}

/// How long the server waits for in-flight requests at shutdown before it stops anyway.
pub(crate) const SHUTDOWN_GRACE: Duration = Duration::from_secs(30);
