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
use crate::linear::LinearSum;
use crate::names::StreamName;
use crate::store::{
    AppendRequest, Appended, BoxFuture, DeleteTarget, StoreError, StoreResult, StoredUpload,
    StreamInfo, UploadStore,
};

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

/// An aggregation request: the op and, with `first_n`, how many of the stream's first
/// uploads (in id order) it covers (`dot`'s weights then apply to those `n`): a count fixed
/// by the caller, so that the request means the same while uploads keep arriving.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AggregateRequest {
    /// What to compute.
    pub op: AggregateOp,
    /// Only the first `n` uploads by id (`None`: every upload the stream holds when the
    /// aggregation starts).
    pub first_n: Option<u64>,
}

impl AggregateRequest {
    /// The request body (`{"op": ..., "weights": [...], "first_n": n}`).
    pub fn to_json(&self) -> String {
        let mut value = match &self.op {
            AggregateOp::Dot(w) => serde_json::json!({ "op": "dot", "weights": w }),
            other => serde_json::json!({ "op": other.name() }),
        };
        if let (Some(n), Some(map)) = (self.first_n, value.as_object_mut()) {
            map.insert("first_n".into(), serde_json::Value::from(n));
        }
        value.to_string()
    }

    /// Parses a request body (`first_n`, when present, is at least 1).
    pub fn from_json(body: &[u8]) -> Result<Self, ServiceError> {
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Request {
            op: String,
            weights: Option<Vec<i64>>,
            first_n: Option<u64>,
        }
        let req: Request = serde_json::from_slice(body)
            .map_err(|e| ServiceError::BadRequest(format!("body is not the expected JSON: {e}")))?;
        if req.first_n == Some(0) {
            return Err(ServiceError::BadRequest(
                "first_n must be at least 1".into(),
            ));
        }
        let op = match (req.op.as_str(), req.weights) {
            ("sum", None) => AggregateOp::Sum,
            ("sum_of_squares", None) => AggregateOp::SumOfSquares,
            ("dot", Some(w)) => AggregateOp::Dot(w),
            ("dot", None) => return Err(ServiceError::BadRequest("dot needs \"weights\"".into())),
            ("sum" | "sum_of_squares", Some(_)) => {
                return Err(ServiceError::BadRequest(format!(
                    "{} takes no \"weights\"",
                    req.op
                )))
            }
            (other, _) => {
                return Err(ServiceError::BadRequest(format!(
                    "unknown op {:?}; expected sum, sum_of_squares or dot",
                    other.chars().take(32).collect::<String>()
                )))
            }
        };
        Ok(Self {
            op,
            first_n: req.first_n,
        })
    }
}

/// The first uploads of one stream, up to `last_id`, as a read-only store: what an
/// aggregation with `first_n` reads (its `stream_info` answers `count` = n and the n-th
/// upload's id, so [`Aggregation::run`] reads exactly those). Writes are refused and
/// `close` leaves the store underneath open.
pub struct FirstUploads {
    inner: Arc<dyn UploadStore>,
    stream: StreamName,
    count: u64,
    last_id: u64,
}

impl FirstUploads {
    /// The first `n` uploads of `stream` in `inner`; [`ServiceError::NoStream`] when it holds
    /// none, [`ServiceError::BadRequest`] when fewer than `n`.
    pub async fn new(
        inner: Arc<dyn UploadStore>,
        stream: StreamName,
        n: u64,
    ) -> Result<Self, ServiceError> {
        let info = inner
            .stream_info(&stream)
            .await?
            .ok_or_else(|| ServiceError::NoStream(stream.to_string()))?;
        let too_many = || {
            ServiceError::BadRequest(format!(
                "first_n {n} is more than the {} uploads stream {stream} holds",
                info.count
            ))
        };
        if n > info.count {
            return Err(too_many());
        }
        let last_id = inner.nth_id(&stream, n).await?.ok_or_else(too_many)?;
        Ok(Self {
            inner,
            stream,
            count: n,
            last_id,
        })
    }
}

impl UploadStore for FirstUploads {
    fn append(&self, _request: AppendRequest) -> BoxFuture<'_, StoreResult<Appended>> {
        Box::pin(async {
            Err(StoreError::Unsupported(
                "a view of first uploads is read-only".into(),
            ))
        })
    }

    fn stream_info<'a>(
        &'a self,
        stream: &'a StreamName,
    ) -> BoxFuture<'a, StoreResult<Option<StreamInfo>>> {
        if *stream != self.stream {
            return self.inner.stream_info(stream);
        }
        let info = StreamInfo {
            name: self.stream.clone(),
            count: self.count,
            last_id: self.last_id,
        };
        Box::pin(async move { Ok(Some(info)) })
    }

    fn list_streams(&self) -> BoxFuture<'_, StoreResult<Vec<StreamInfo>>> {
        self.inner.list_streams()
    }

    fn read_chunk<'a>(
        &'a self,
        stream: &'a StreamName,
        after: u64,
        through: u64,
        max: usize,
    ) -> BoxFuture<'a, StoreResult<Vec<StoredUpload>>> {
        let through = if *stream == self.stream {
            through.min(self.last_id)
        } else {
            through
        };
        self.inner.read_chunk(stream, after, through, max)
    }

    fn delete<'a>(
        &'a self,
        _stream: &'a StreamName,
        _target: DeleteTarget,
    ) -> BoxFuture<'a, StoreResult<u64>> {
        Box::pin(async {
            Err(StoreError::Unsupported(
                "a view of first uploads is read-only".into(),
            ))
        })
    }

    fn close(&self) -> BoxFuture<'_, StoreResult<()>> {
        Box::pin(async { Ok(()) })
    }
}

/// What aggregation needs from the service (one request's view of it: the relinearization
/// keys are the ones current when the request arrived).
#[derive(Clone)]
pub struct Aggregation {
    /// The store holding the uploads.
    pub store: Arc<dyn UploadStore>,
    /// The preset's codec (upload bytes to SEAL ciphertexts).
    pub codec: Arc<dyn Codec>,
    /// The evaluator of the preset.
    pub evaluator: Arc<Evaluator>,
    /// The relinearization keys, if the service has them.
    pub relin: Option<Arc<PreparedRelinKeys>>,
    /// Uploads per chunk.
    pub chunk: usize,
}

/// The result and the number of uploads it covers.
pub struct Aggregated {
    /// The aggregate (size 2).
    pub ciphertext: Ciphertext,
    /// Uploads it covers.
    pub count: u64,
}

/// What to do with an upload whose bytes do not decode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BadUpload {
    /// Fail the aggregation ([`ServiceError::StoredUpload`]): the service's own store only
    /// holds validated uploads, so such a body means damage.
    Fail,
    /// Leave it out and count it (a stream that devices write into directly, such as MQTT
    /// ingest, may briefly hold a body nobody validated yet).
    Skip,
}

/// The sum of one slice of uploads' terms.
pub struct PartialSum {
    /// `Σ term(upload)`; `None` when no upload added anything (none, all skipped, or every
    /// weight 0 mod t).
    pub ciphertext: Option<Ciphertext>,
    /// Uploads that decoded and are covered by the sum.
    pub count: u64,
    /// Uploads left out because they did not decode ([`BadUpload::Skip`]).
    pub rejected: u64,
}

/// Checks `op` against a stream of `count` uploads before any work: `dot` needs one weight
/// per upload and at least one nonzero mod `t`; `sum_of_squares` needs relinearization keys.
pub fn check_op(op: &AggregateOp, count: u64, t: u64, has_relin: bool) -> Result<(), ServiceError> {
    if let AggregateOp::Dot(w) = op {
        if w.len() as u64 != count {
            return Err(ServiceError::WeightCount {
                weights: w.len(),
                count,
            });
        }
        if w.iter().all(|&w| reduce_weight(w, t) == 0) {
            return Err(ServiceError::ZeroWeights);
        }
    }
    if *op == AggregateOp::SumOfSquares && !has_relin {
        return Err(ServiceError::NoRelinKeys);
    }
    Ok(())
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
        let t = self.codec.seal().plain_modulus();
        check_op(&op, count, t, self.relin.is_some())?;
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
                let chunk = sum_uploads(
                    &*codec,
                    &eval,
                    &name,
                    &op,
                    first_position,
                    &uploads,
                    BadUpload::Fail,
                )?;
                add_optional(&eval, total, chunk.ciphertext)
            })
            .await
            .map_err(|e| ServiceError::Internal(format!("aggregation task: {e}")))??;
        }
        reader
            .await
            .map_err(|e| ServiceError::Internal(format!("reader task: {e}")))?;
        if covered != count {
            // Uploads deleted while this aggregation read the stream (or rows missing).
            return Err(ServiceError::Changed(format!(
                "stream {stream}: read {covered} of {count} uploads (uploads were deleted \
                 meanwhile?); retry"
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

/// `Σ term(upload)` over a slice of uploads, the terms computed and summed in parallel on
/// the current rayon pool. `first_position` is the position (0-based, in the order of the
/// stream) of `uploads[0]`: `dot` takes upload `i`'s weight at `first_position + i` of the
/// op's weights. A body that does not decode fails the sum or is skipped, as `bad` says.
///
/// `sum` and `dot` are accumulated in the uploads' own form ([`crate::linear`]: a seeded
/// upload's `c1` stays the NTT-form expansion of its seed, one inverse transform per call);
/// `sum_of_squares` converts each upload ([`sum_uploads_seal_form`]). Both give the same
/// residues, bit for bit.
pub fn sum_uploads(
    codec: &dyn Codec,
    eval: &Evaluator,
    stream: &StreamName,
    op: &AggregateOp,
    first_position: u64,
    uploads: &[StoredUpload],
    bad: BadUpload,
) -> Result<PartialSum, ServiceError> {
    match (op, codec.linear_sum()) {
        (AggregateOp::Sum | AggregateOp::Dot(_), Some(empty)) => {
            sum_linear(codec, eval, stream, op, first_position, uploads, bad, empty)
        }
        _ => sum_uploads_seal_form(codec, eval, stream, op, first_position, uploads, bad),
    }
}

/// What one upload adds to a partial sum: decoded (and counted), or skipped.
fn decode_failure(
    stream: &StreamName,
    upload: &StoredUpload,
    bad: BadUpload,
    source: crate::codec::UploadError,
) -> Result<u64, ServiceError> {
    match bad {
        BadUpload::Skip => Ok(1),
        BadUpload::Fail => Err(ServiceError::StoredUpload {
            stream: stream.to_string(),
            id: upload.id,
            source,
        }),
    }
}

#[expect(
    clippy::too_many_arguments,
    reason = "sum_uploads' arguments and the empty sum it picked"
)]
fn sum_linear(
    codec: &dyn Codec,
    eval: &Evaluator,
    stream: &StreamName,
    op: &AggregateOp,
    first_position: u64,
    uploads: &[StoredUpload],
    bad: BadUpload,
    empty: LinearSum,
) -> Result<PartialSum, ServiceError> {
    let parms_id = codec
        .seal()
        .data_level_with(empty.level())
        .ok_or_else(|| ServiceError::Internal("no SEAL level for the linear sum".into()))?
        .parms_id;
    let t = eval.context().plain_modulus();
    let internal = |e: crate::codec::UploadError| ServiceError::Internal(e.to_string());
    // (sum, uploads decoded, uploads skipped)
    let (sum, count, rejected) = uploads
        .par_iter()
        .enumerate()
        .try_fold(
            || (empty.clone(), 0u64, 0u64),
            |(mut sum, count, rejected), (i, upload)| {
                let scale = match op {
                    AggregateOp::Dot(weights) => {
                        let w = reduce_weight(weight_at(weights, first_position + i as u64)?, t);
                        if w == 0 {
                            // Adds nothing, but must still be an upload that decodes.
                            return match codec.validate(&upload.body) {
                                Ok(()) => Ok((sum, count + 1, rejected)),
                                Err(e) => decode_failure(stream, upload, bad, e)
                                    .map(|skipped| (sum, count, rejected + skipped)),
                            };
                        }
                        Some(eval.scalar_residues(&parms_id, w)?)
                    }
                    _ => None,
                };
                match codec.add_to_linear_sum(&mut sum, &upload.body, scale.as_deref()) {
                    Ok(()) => Ok((sum, count + 1, rejected)),
                    Err(e) => decode_failure(stream, upload, bad, e)
                        .map(|skipped| (sum, count, rejected + skipped)),
                }
            },
        )
        .try_reduce(
            || (empty.clone(), 0, 0),
            |(mut a, count_a, bad_a), (b, count_b, bad_b)| {
                a.merge(b);
                Ok((a, count_a + count_b, bad_a + bad_b))
            },
        )?;
    Ok(PartialSum {
        ciphertext: codec.finish_linear_sum(sum).map_err(internal)?,
        count,
        rejected,
    })
}

/// [`sum_uploads`] by converting every upload to a SEAL ciphertext and adding with the
/// evaluator (what `sum_of_squares` needs; for `sum` and `dot`, the reference that the
/// linear path is tested and benchmarked against).
pub fn sum_uploads_seal_form(
    codec: &dyn Codec,
    eval: &Evaluator,
    stream: &StreamName,
    op: &AggregateOp,
    first_position: u64,
    uploads: &[StoredUpload],
    bad: BadUpload,
) -> Result<PartialSum, ServiceError> {
    let partial = uploads
        .par_iter()
        .enumerate()
        .map(|(i, upload)| {
            let ct = match codec.to_seal(&upload.body) {
                Ok(ct) => ct,
                Err(e) => return decode_failure(stream, upload, bad, e).map(|s| (None, 0, s)),
            };
            let position = first_position + i as u64;
            Ok((term(eval, op, position, ct)?, 1u64, 0u64))
        })
        .try_reduce(
            || (None, 0, 0),
            |(a, count_a, bad_a), (b, count_b, bad_b)| {
                Ok((add_optional(eval, a, b)?, count_a + count_b, bad_a + bad_b))
            },
        )?;
    let (ciphertext, count, rejected) = partial;
    Ok(PartialSum {
        ciphertext,
        count,
        rejected,
    })
}

/// `a + b` where either may be absent.
pub fn add_optional(
    eval: &Evaluator,
    a: Option<Ciphertext>,
    b: Option<Ciphertext>,
) -> Result<Option<Ciphertext>, ServiceError> {
    match (a, b) {
        (Some(mut a), Some(b)) => {
            eval.add_assign(&mut a, &b)?;
            Ok(Some(a))
        }
        (a, None) => Ok(a),
        (None, b) => Ok(b),
    }
}

/// A weight reduced into `[0, t)`.
pub fn reduce_weight(w: i64, t: u64) -> u64 {
    // t < 2^63 for every preset, so the conversion is exact.
    i128::from(w).rem_euclid(i128::from(t)) as u64
}

/// The weight of the upload at `position` (0-based, stream order).
fn weight_at(weights: &[i64], position: u64) -> Result<i64, ServiceError> {
    usize::try_from(position)
        .ok()
        .and_then(|index| weights.get(index))
        .copied()
        .ok_or_else(|| {
            ServiceError::Internal(format!("no weight for upload at position {position}"))
        })
}

/// One upload's term of the aggregate (`None`: a weight of 0 mod t, which adds nothing);
/// `position` indexes the op's weights (`dot`).
pub fn term(
    eval: &Evaluator,
    op: &AggregateOp,
    position: u64,
    ct: Ciphertext,
) -> Result<Option<Ciphertext>, ServiceError> {
    match op {
        AggregateOp::Sum => Ok(Some(ct)),
        AggregateOp::SumOfSquares => Ok(Some(eval.square(&ct)?)),
        AggregateOp::Dot(weights) => {
            let w = reduce_weight(
                weight_at(weights, position)?,
                eval.context().plain_modulus(),
            );
            if w == 0 {
                return Ok(None);
            }
            // A one-coefficient plaintext: SEAL's scalar fast path of multiply_plain.
            Ok(Some(eval.multiply_plain(&ct, &Plaintext::new(vec![w]))?))
        }
    }
}

/// The last step after every term is summed: one relinearization for the sum of squares.
pub fn finish(
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
