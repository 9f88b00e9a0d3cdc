//! Aggregation over a stream: read the uploads in bounded chunks (the next chunk is read
//! while the current one is computed), turn each into a SEAL ciphertext and combine them on
//! every core (rayon, on a blocking thread), then add the chunk's partial result to the total.

use std::sync::Arc;

use rayon::prelude::*;
use serde::Deserialize;
use tokio::sync::mpsc;
use zeppelin_seal::{Ciphertext, Plaintext};
use zeppelin_server::{Evaluator, PreparedRelinKeys};

use crate::codec::Codec;
use crate::error::ServiceError;
use crate::names::StreamName;
use crate::store::{StoredUpload, UploadStore};

/// What to compute over a stream's uploads `ct_1 .. ct_N`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AggregateOp {
    /// `Σ ct_i`.
    Sum,
    /// `Σ ct_i²`, relinearized once at the end.
    SumOfSquares,
    /// `Σ w_i · ct_i` with one integer weight per upload, in id order (reduced mod `t`):
    /// weight `i` (from 0) goes to the stream's `i`-th upload, whatever its id.
    Dot(Vec<i64>),
}

impl AggregateOp {
    /// The op's name in requests.
    pub fn name(&self) -> &'static str {
        match self {
            AggregateOp::Sum => "sum",
            AggregateOp::SumOfSquares => "sum_of_squares",
            AggregateOp::Dot(_) => "dot",
        }
    }

    /// The request body for this op (`{"op": ..., "weights": [...]}`).
    pub fn to_json(&self) -> String {
        match self {
            AggregateOp::Dot(w) => serde_json::json!({ "op": "dot", "weights": w }),
            other => serde_json::json!({ "op": other.name() }),
        }
        .to_string()
    }

    /// Parses a request body.
    pub fn from_json(body: &[u8]) -> Result<Self, ServiceError> {
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Request {
            op: String,
            weights: Option<Vec<i64>>,
        }
        let req: Request = serde_json::from_slice(body)
            .map_err(|e| ServiceError::BadRequest(format!("body is not the expected JSON: {e}")))?;
        match (req.op.as_str(), req.weights) {
            ("sum", None) => Ok(AggregateOp::Sum),
            ("sum_of_squares", None) => Ok(AggregateOp::SumOfSquares),
            ("dot", Some(w)) => Ok(AggregateOp::Dot(w)),
            ("dot", None) => Err(ServiceError::BadRequest("dot needs \"weights\"".into())),
            ("sum" | "sum_of_squares", Some(_)) => Err(ServiceError::BadRequest(format!(
                "{} takes no \"weights\"",
                req.op
            ))),
            (other, _) => Err(ServiceError::BadRequest(format!(
                "unknown op {:?}; expected sum, sum_of_squares or dot",
                other.chars().take(32).collect::<String>()
            ))),
        }
    }
}

/// What aggregation needs from the service.
pub(crate) struct Aggregation {
    pub store: Arc<dyn UploadStore>,
    pub codec: Arc<dyn Codec>,
    pub evaluator: Arc<Evaluator>,
    pub relin: Option<Arc<PreparedRelinKeys>>,
    /// Uploads per chunk.
    pub chunk: usize,
}

/// The result and the number of uploads it covers.
pub(crate) struct Aggregated {
    pub ciphertext: Ciphertext,
    pub count: u64,
}

impl Aggregation {
    /// Runs `op` over the uploads the stream holds now (uploads arriving meanwhile are not
    /// included: the count and last id are read first, and only the first `count` uploads
    /// with ids up to the last id are read).
    pub async fn run(
        self,
        stream: StreamName,
        op: AggregateOp,
    ) -> Result<Aggregated, ServiceError> {
        let info = self
            .store
            .stream_info(&stream)
            .await?
            .ok_or_else(|| ServiceError::NoStream(stream.to_string()))?;
        let (count, through) = (info.count, info.last_id);
        if let AggregateOp::Dot(w) = &op {
            if w.len() as u64 != count {
                return Err(ServiceError::WeightCount {
                    weights: w.len(),
                    count,
                });
            }
        }
        let t = self.codec.seal().plain_modulus();
        if let AggregateOp::Dot(w) = &op {
            if w.iter().all(|&w| reduce_weight(w, t) == 0) {
                return Err(ServiceError::ZeroWeights);
            }
        }
        if op == AggregateOp::SumOfSquares && self.relin.is_none() {
            return Err(ServiceError::NoRelinKeys);
        }
        let op = Arc::new(op);

        // The reader runs one chunk ahead of the computation (a channel of one chunk).
        let (tx, mut rx) = mpsc::channel::<Result<Vec<StoredUpload>, ServiceError>>(1);
        let store = self.store.clone();
        let reader_stream = stream.clone();
        let chunk = self.chunk.max(1);
        let reader = tokio::spawn(async move {
            let (mut after, mut left) = (0u64, count);
            while left > 0 && after < through {
                let max = usize::try_from(left).map_or(chunk, |left| left.min(chunk));
                let read = store
                    .read_chunk(&reader_stream, after, through, max)
                    .await
                    .map_err(ServiceError::from);
                // The last id and size of the chunk; none: nothing more up to `through` (the
                // count check below reports a shortfall).
                let next = match &read {
                    Ok(uploads) => uploads.last().map(|u| (u.id, uploads.len() as u64)),
                    Err(_) => None,
                };
                if tx.send(read).await.is_err() {
                    return;
                }
                match next {
                    Some((id, read)) => {
                        after = id;
                        left = left.saturating_sub(read);
                    }
                    None => return,
                }
            }
        });

        let mut total: Option<Ciphertext> = None;
        let mut covered = 0u64;
        while let Some(uploads) = rx.recv().await {
            let uploads = uploads?;
            let first_position = covered;
            covered += uploads.len() as u64;
            let (codec, eval, op) = (self.codec.clone(), self.evaluator.clone(), op.clone());
            let name = stream.clone();
            total = tokio::task::spawn_blocking(move || {
                combine_chunk(&*codec, &eval, &name, &op, first_position, &uploads, total)
            })
            .await
            .map_err(|e| ServiceError::Internal(format!("aggregation task: {e}")))??;
        }
        reader
            .await
            .map_err(|e| ServiceError::Internal(format!("reader task: {e}")))?;
        if covered != count {
            return Err(ServiceError::Internal(format!(
                "stream {stream}: read {covered} of {count} uploads"
            )));
        }
        let total = total.ok_or(ServiceError::ZeroWeights)?;
        let (eval, relin) = (self.evaluator.clone(), self.relin.clone());
        let ciphertext =
            tokio::task::spawn_blocking(move || finish(&eval, &op, total, relin.as_deref()))
                .await
                .map_err(|e| ServiceError::Internal(format!("aggregation task: {e}")))??;
        Ok(Aggregated { ciphertext, count })
    }
}

/// `total + Σ term(upload)` over one chunk whose first upload is the stream's
/// `first_position`-th (from 0), the terms computed and summed in parallel.
fn combine_chunk(
    codec: &dyn Codec,
    eval: &Evaluator,
    stream: &StreamName,
    op: &AggregateOp,
    first_position: u64,
    uploads: &[StoredUpload],
    total: Option<Ciphertext>,
) -> Result<Option<Ciphertext>, ServiceError> {
    let partial = uploads
        .par_iter()
        .enumerate()
        .map(|(offset, upload)| {
            let ct = codec
                .to_seal(&upload.body)
                .map_err(|source| ServiceError::StoredUpload {
                    stream: stream.to_string(),
                    id: upload.id,
                    source,
                })?;
            term(eval, op, first_position + offset as u64, ct)
        })
        .filter_map(Result::transpose)
        .try_reduce_with(|mut a, b| {
            eval.add_assign(&mut a, &b)?;
            Ok(a)
        });
    let partial = match partial {
        Some(p) => p?,
        None => return Ok(total),
    };
    match total {
        Some(mut t) => {
            eval.add_assign(&mut t, &partial)?;
            Ok(Some(t))
        }
        None => Ok(Some(partial)),
    }
}

/// A weight reduced into `[0, t)`.
fn reduce_weight(w: i64, t: u64) -> u64 {
    // t < 2^63 for every preset, so the conversion is exact.
    i128::from(w).rem_euclid(i128::from(t)) as u64
}

/// The term of the stream's `position`-th upload (from 0) in the aggregate (`None`: a weight
/// of 0 mod t, which adds nothing).
fn term(
    eval: &Evaluator,
    op: &AggregateOp,
    position: u64,
    ct: Ciphertext,
) -> Result<Option<Ciphertext>, ServiceError> {
    match op {
        AggregateOp::Sum => Ok(Some(ct)),
        AggregateOp::SumOfSquares => Ok(Some(eval.square(&ct)?)),
        AggregateOp::Dot(weights) => {
            let w = usize::try_from(position)
                .ok()
                .and_then(|index| weights.get(index))
                .copied()
                .ok_or_else(|| {
                    ServiceError::Internal(format!("no weight for upload at position {position}"))
                })?;
            let w = reduce_weight(w, eval.context().plain_modulus());
            if w == 0 {
                return Ok(None);
            }
            // A one-coefficient plaintext: SEAL's scalar fast path of multiply_plain.
            Ok(Some(eval.multiply_plain(&ct, &Plaintext::new(vec![w]))?))
        }
    }
}

/// The last step after every term is summed: one relinearization for the sum of squares.
fn finish(
    eval: &Evaluator,
    op: &AggregateOp,
    total: Ciphertext,
    relin: Option<&PreparedRelinKeys>,
) -> Result<Ciphertext, ServiceError> {
    match (op, relin) {
        (AggregateOp::SumOfSquares, Some(keys)) => Ok(eval.relinearize(&total, keys)?),
        (AggregateOp::SumOfSquares, None) => Err(ServiceError::NoRelinKeys),
        _ => Ok(total),
    }
}
