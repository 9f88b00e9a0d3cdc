//! [`Client`]: the service's HTTP API from the device and key-owner side (HTTP/1, no TLS).

use std::time::Duration;

use reqwest::StatusCode;

use crate::aggregate::{AggregateOp, AggregateRequest};
use crate::http::{COUNT, DELETED, IDEMPOTENCY_KEY, IDEMPOTENT_REPLAYED};

/// Why a call failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ClientError {
    /// The request did not complete (connection refused or reset, timed out, ...).
    #[error("request to {url} failed: {source}")]
    Transport {
        /// The URL.
        url: String,
        /// Why.
        #[source]
        source: reqwest::Error,
    },
    /// The server answered with an error status and its `{"error": ...}` text.
    #[error("{status} from {url}: {message}")]
    Status {
        /// The URL.
        url: String,
        /// The status.
        status: StatusCode,
        /// The server's error text.
        message: String,
    },
    /// The server's answer is not what the contract says.
    #[error("unexpected answer from {url}: {what}")]
    Protocol {
        /// The URL.
        url: String,
        /// What is wrong.
        what: String,
    },
    /// The base URL is not usable.
    #[error("bad base URL {0:?}: it must start with http://")]
    BadUrl(String),
}

impl ClientError {
    /// The HTTP status, for an error answer.
    pub fn status(&self) -> Option<StatusCode> {
        match self {
            ClientError::Status { status, .. } => Some(*status),
            _ => None,
        }
    }
}

/// A stored upload's receipt.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Receipt {
    /// The upload's id in its stream.
    pub id: String,
    /// Whether the idempotency key was already stored (nothing new was stored).
    pub replayed: bool,
}

/// A stream's state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StreamStatus {
    /// Uploads the stream holds.
    pub count: u64,
    /// The server's preset.
    pub preset: String,
}

/// An aggregation's result.
#[derive(Clone, Debug)]
pub struct Aggregate {
    /// SEAL `Ciphertext` bytes (uncompressed).
    pub ciphertext: Vec<u8>,
    /// Uploads it covers (the `Zeppelin-Count` header).
    pub count: u64,
}

/// A client of one service (cheap to clone; connections are pooled).
#[derive(Clone)]
pub struct Client {
    base: String,
    http: reqwest::Client,
    token: Option<std::sync::Arc<zeroize::Zeroizing<String>>>,
}

impl std::fmt::Debug for Client {
    // Never the token.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("base", &self.base)
            .field("token", &self.token.as_ref().map(|_| ".."))
            .finish()
    }
}

type Result<T> = std::result::Result<T, ClientError>;

impl Client {
    /// A client of the service at `base` (`http://host:port`), with a 60 s connect/read
    /// timeout per request and 600 s for aggregations.
    pub fn new(base: &str) -> Result<Self> {
        let base = base.trim_end_matches('/').to_owned();
        if !base.starts_with("http://") {
            return Err(ClientError::BadUrl(base));
        }
        let http = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(10))
            .pool_max_idle_per_host(64)
            .build()
            .map_err(|source| ClientError::Transport {
                url: base.clone(),
                source,
            })?;
        Ok(Self {
            base,
            http,
            token: None,
        })
    }

    /// This client, sending `token` (an owner or device token from `zeppelin devices`) as
    /// `Authorization: Bearer` on every request.
    pub fn with_token(mut self, token: &str) -> Self {
        self.token = Some(std::sync::Arc::new(zeroize::Zeroizing::new(
            token.trim().to_owned(),
        )));
        self
    }

    /// The base URL.
    pub fn base(&self) -> &str {
        &self.base
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    async fn send(&self, url: &str, request: reqwest::RequestBuilder) -> Result<reqwest::Response> {
        let request = match &self.token {
            Some(token) => request.bearer_auth(token.as_str()),
            None => request,
        };
        let response = request
            .send()
            .await
            .map_err(|source| ClientError::Transport {
                url: url.to_owned(),
                source,
            })?;
        if response.status().is_success() {
            return Ok(response);
        }
        let status = response.status();
        let text = response.text().await.unwrap_or_default();
        let message = serde_json::from_str::<serde_json::Value>(&text)
            .ok()
            .and_then(|v| v.get("error")?.as_str().map(str::to_owned))
            .unwrap_or(text);
        Err(ClientError::Status {
            url: url.to_owned(),
            status,
            message,
        })
    }

    async fn json(&self, url: &str, response: reqwest::Response) -> Result<serde_json::Value> {
        let bytes = response
            .bytes()
            .await
            .map_err(|source| ClientError::Transport {
                url: url.to_owned(),
                source,
            })?;
        serde_json::from_slice(&bytes).map_err(|e| ClientError::Protocol {
            url: url.to_owned(),
            what: format!("body is not JSON: {e}"),
        })
    }

    /// `POST /v1/streams/{stream}/ciphertexts`: uploads a device ciphertext (wire form),
    /// with an `Idempotency-Key` if given.
    pub async fn upload(
        &self,
        stream: &str,
        ciphertext: impl Into<reqwest::Body>,
        idempotency_key: Option<&str>,
    ) -> Result<Receipt> {
        let url = self.url(&format!("/v1/streams/{stream}/ciphertexts"));
        let mut request = self
            .http
            .post(&url)
            .timeout(Duration::from_secs(60))
            .header(reqwest::header::CONTENT_TYPE, "application/octet-stream")
            .body(ciphertext);
        if let Some(key) = idempotency_key {
            request = request.header(IDEMPOTENCY_KEY.as_str(), key);
        }
        let response = self.send(&url, request).await?;
        if response.status() != StatusCode::CREATED {
            return Err(ClientError::Protocol {
                url,
                what: format!("status {}, expected 201", response.status()),
            });
        }
        let replayed = response
            .headers()
            .get(IDEMPOTENT_REPLAYED.as_str())
            .is_some_and(|v| v == "true");
        let body = self.json(&url, response).await?;
        let id = body
            .get("id")
            .and_then(|v| v.as_str())
            .ok_or_else(|| ClientError::Protocol {
                url: url.clone(),
                what: "no \"id\" string".into(),
            })?
            .to_owned();
        Ok(Receipt { id, replayed })
    }

    /// `GET /v1/streams/{stream}`.
    pub async fn status(&self, stream: &str) -> Result<StreamStatus> {
        let url = self.url(&format!("/v1/streams/{stream}"));
        let response = self
            .send(&url, self.http.get(&url).timeout(Duration::from_secs(60)))
            .await?;
        let body = self.json(&url, response).await?;
        let count = body.get("count").and_then(|v| v.as_u64());
        let preset = body.get("preset").and_then(|v| v.as_str());
        match (count, preset) {
            (Some(count), Some(preset)) => Ok(StreamStatus {
                count,
                preset: preset.to_owned(),
            }),
            _ => Err(ClientError::Protocol {
                url,
                what: format!("expected {{\"count\", \"preset\"}}, got {body}"),
            }),
        }
    }

    /// `POST /v1/streams/{stream}/aggregate` over every upload the stream holds.
    pub async fn aggregate(&self, stream: &str, op: &AggregateOp) -> Result<Aggregate> {
        self.aggregate_request(stream, op.to_json()).await
    }

    /// `POST /v1/streams/{stream}/aggregate` with `first_n` (or without: `None`).
    pub async fn aggregate_first(
        &self,
        stream: &str,
        op: &AggregateOp,
        first_n: Option<u64>,
    ) -> Result<Aggregate> {
        let request = AggregateRequest {
            op: op.clone(),
            first_n,
        };
        self.aggregate_request(stream, request.to_json()).await
    }

    /// `DELETE /v1/streams/{stream}/ciphertexts/{id}` (owner): removes one upload.
    pub async fn delete_upload(&self, stream: &str, id: &str) -> Result<u64> {
        self.delete(&format!("/v1/streams/{stream}/ciphertexts/{id}"))
            .await
    }

    /// `DELETE /v1/streams/{stream}/devices/{device}` (owner): removes every upload the
    /// device sent to the stream; how many.
    pub async fn delete_device_uploads(&self, stream: &str, device: &str) -> Result<u64> {
        self.delete(&format!("/v1/streams/{stream}/devices/{device}"))
            .await
    }

    async fn delete(&self, path: &str) -> Result<u64> {
        let url = self.url(path);
        let request = self.http.delete(&url).timeout(Duration::from_secs(60));
        let response = self.send(&url, request).await?;
        response
            .headers()
            .get(DELETED.as_str())
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<u64>().ok())
            .ok_or_else(|| ClientError::Protocol {
                url,
                what: format!("no {} header", DELETED.as_str()),
            })
    }

    async fn aggregate_request(&self, stream: &str, body: String) -> Result<Aggregate> {
        let url = self.url(&format!("/v1/streams/{stream}/aggregate"));
        let request = self
            .http
            .post(&url)
            .timeout(Duration::from_secs(600))
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(body);
        let response = self.send(&url, request).await?;
        let count = response
            .headers()
            .get(COUNT.as_str())
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<u64>().ok())
            .ok_or_else(|| ClientError::Protocol {
                url: url.clone(),
                what: format!("no {} header", COUNT.as_str()),
            })?;
        let ciphertext = response
            .bytes()
            .await
            .map_err(|source| ClientError::Transport {
                url: url.clone(),
                source,
            })?
            .to_vec();
        Ok(Aggregate { ciphertext, count })
    }

    /// `PUT /v1/keys/relin`: replaces the server's SEAL `RelinKeys`.
    pub async fn put_relin_keys(&self, bytes: Vec<u8>) -> Result<()> {
        self.put_keys("/v1/keys/relin", bytes).await
    }

    /// `PUT /v1/keys/galois`: replaces the server's SEAL `GaloisKeys`.
    pub async fn put_galois_keys(&self, bytes: Vec<u8>) -> Result<()> {
        self.put_keys("/v1/keys/galois", bytes).await
    }

    async fn put_keys(&self, path: &str, bytes: Vec<u8>) -> Result<()> {
        let url = self.url(path);
        let request = self
            .http
            .put(&url)
            .timeout(Duration::from_secs(120))
            .header(reqwest::header::CONTENT_TYPE, "application/octet-stream")
            .body(bytes);
        self.send(&url, request).await.map(drop)
    }

    /// `GET /v1/health`: the server's preset when it is up.
    pub async fn health(&self) -> Result<String> {
        let url = self.url("/v1/health");
        let response = self
            .send(&url, self.http.get(&url).timeout(Duration::from_secs(10)))
            .await?;
        let body = self.json(&url, response).await?;
        body.get("preset")
            .and_then(|v| v.as_str())
            .map(str::to_owned)
            .ok_or_else(|| ClientError::Protocol {
                url,
                what: "no \"preset\"".into(),
            })
    }
}
