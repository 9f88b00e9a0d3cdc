//! The aggregation rows (issue 30, items 2 and 6): the service's compute step over one chunk
//! of seeded uploads (what `zeppelin serve` sums per chunk), on the linear path
//! (`sum_uploads`: each `c1` stays the NTT-form expansion of its seed, one inverse transform
//! per sum) and on the path before it (`sum_uploads_seal_form`: every upload converted to a
//! SEAL ciphertext and added with the evaluator), on one core and on all; `dot` (one weight
//! per upload) on one core. Before timing, both paths must give byte-identical ciphertexts,
//! and the sum must decrypt to the sum of the uploads' slots.

use std::sync::Arc;

use bytes::Bytes;
use zeppelin::{Params, Seal4096};
use zeppelin_seal::ComprMode;
use zeppelin_server::Evaluator;
use zeppelin_service::aggregate::{sum_uploads, sum_uploads_seal_form, BadUpload, PartialSum};
use zeppelin_service::names::StreamName;
use zeppelin_service::store::StoredUpload;
use zeppelin_service::{AggregateOp, Codec, Preset};

use crate::Result;

// The service's own test device (its key and seeded uploads, decryption of its results), as
// its aggregation bench uses it.
#[path = "../../../crates/service/tests/common/mod.rs"]
mod common;
use common::Device;

/// Uploads per sum: one chunk of `zeppelin serve`'s aggregation.
pub const UPLOADS: usize = 256;

/// An aggregation timed on both paths.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum AggregateRow {
    /// `sum` of [`UPLOADS`] uploads on one core.
    SumOneCore,
    /// `sum` on every core (rayon's global pool).
    SumAllCores,
    /// `dot` with one weight per upload, on one core.
    DotOneCore,
}

impl AggregateRow {
    pub const ALL: [AggregateRow; 3] = [
        AggregateRow::SumOneCore,
        AggregateRow::SumAllCores,
        AggregateRow::DotOneCore,
    ];

    /// The row key (the driver's SEAL timing of `sum` on one core uses the first).
    pub fn key(self) -> &'static str {
        match self {
            AggregateRow::SumOneCore => "aggregate_sum_256_one_core",
            AggregateRow::SumAllCores => "aggregate_sum_256_all_cores",
            AggregateRow::DotOneCore => "aggregate_dot_256_one_core",
        }
    }
}

/// Which path sums the uploads.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum AggregatePath {
    /// `sum_uploads`, the path `zeppelin serve` takes for `sum` and `dot`.
    Linear,
    /// `sum_uploads_seal_form` (the path before the linear sums).
    SealForm,
}

/// The uploads, the codec and evaluator of the Seal4096 preset, and a one-thread pool.
pub struct AggregateBench {
    codec: Arc<dyn Codec>,
    eval: Evaluator,
    stream: StreamName,
    uploads: Vec<StoredUpload>,
    sum: AggregateOp,
    dot: AggregateOp,
    one_core: rayon::ThreadPool,
    device: Device,
    /// The slots' sum and weighted sum mod t, for the check.
    expected_sum: Vec<u32>,
    expected_dot: Vec<u32>,
}

type P = Seal4096;

/// The slots of upload `k`.
fn slots(k: usize) -> Vec<u32> {
    (0..P::N)
        .map(|i| ((i * 31 + k * 977) % P::T as usize) as u32)
        .collect()
}

/// The weight of upload `k` for `dot`.
fn weight(k: usize) -> i64 {
    k as i64 * 37 - 1000
}

impl AggregateBench {
    pub fn new() -> Result<Self> {
        let err = |what: &str, e: &dyn std::fmt::Display| format!("aggregate set-up, {what}: {e}");
        let device = Device::new(7).map_err(|e| err("device", &*e))?;
        let uploads = (0..UPLOADS)
            .map(|k| {
                let body = device
                    .encrypt_seeded(&slots(k))
                    .map_err(|e| err("encrypt", &*e))?;
                Ok(StoredUpload {
                    id: k as u64 + 1,
                    body: Bytes::from(body),
                })
            })
            .collect::<Result<Vec<_>>>()?;
        let t = u64::from(P::T);
        let mut expected_sum = vec![0u64; P::N];
        let mut expected_dot = vec![0u64; P::N];
        for k in 0..UPLOADS {
            let w = zeppelin_service::aggregate::reduce_weight(weight(k), t);
            for (i, v) in slots(k).into_iter().enumerate() {
                expected_sum[i] = (expected_sum[i] + u64::from(v)) % t;
                expected_dot[i] = (expected_dot[i] + w * u64::from(v)) % t;
            }
        }
        let narrow = |v: Vec<u64>| v.into_iter().map(|x| x as u32).collect();
        let codec = Preset::Seal4096.codec().map_err(|e| err("codec", &e))?;
        let eval = Evaluator::new(codec.seal().clone()).map_err(|e| err("evaluator", &e))?;
        Ok(Self {
            codec,
            eval,
            stream: StreamName::new("peer-bench").map_err(|e| err("stream", &e))?,
            uploads,
            sum: AggregateOp::Sum,
            dot: AggregateOp::Dot((0..UPLOADS).map(weight).collect()),
            one_core: rayon::ThreadPoolBuilder::new()
                .num_threads(1)
                .build()
                .map_err(|e| err("pool", &e))?,
            device,
            expected_sum: narrow(expected_sum),
            expected_dot: narrow(expected_dot),
        })
    }

    fn partial(&self, row: AggregateRow, path: AggregatePath) -> Result<PartialSum> {
        let op = match row {
            AggregateRow::DotOneCore => &self.dot,
            _ => &self.sum,
        };
        let f = match path {
            AggregatePath::Linear => sum_uploads,
            AggregatePath::SealForm => sum_uploads_seal_form,
        };
        let run = || {
            f(
                &*self.codec,
                &self.eval,
                &self.stream,
                op,
                0,
                &self.uploads,
                BadUpload::Fail,
            )
        };
        match row {
            AggregateRow::SumAllCores => run(),
            _ => self.one_core.install(run),
        }
        .map_err(|e| format!("{}: {e}", row.key()))
    }

    /// One timed call.
    pub fn run(&self, row: AggregateRow, path: AggregatePath) -> Result<()> {
        std::hint::black_box(self.partial(row, path)?);
        Ok(())
    }

    /// Both paths give the same bytes for every row, covering every upload, and the sums
    /// decrypt to the slots' sum and weighted sum.
    pub fn check(&self) -> Result<()> {
        for row in AggregateRow::ALL {
            let mut bytes = Vec::new();
            for path in [AggregatePath::Linear, AggregatePath::SealForm] {
                let partial = self.partial(row, path)?;
                if partial.count != UPLOADS as u64 || partial.rejected != 0 {
                    return Err(format!(
                        "{}: {path:?} covered {} of {UPLOADS} uploads",
                        row.key(),
                        partial.count
                    ));
                }
                let ct = partial
                    .ciphertext
                    .ok_or_else(|| format!("{}: {path:?} gave no ciphertext", row.key()))?;
                bytes.push(
                    ct.save(ComprMode::None)
                        .map_err(|e| format!("{}: save: {e}", row.key()))?,
                );
                let want = match row {
                    AggregateRow::DotOneCore => &self.expected_dot,
                    _ => &self.expected_sum,
                };
                let bytes_of_sum = bytes.last().ok_or("no bytes")?;
                let slots = self
                    .device
                    .decrypt(bytes_of_sum)
                    .map_err(|e| format!("aggregate check, decrypt: {e}"))?;
                if &slots != want {
                    return Err(format!(
                        "{}: {path:?} does not decrypt to the slots' sum",
                        row.key()
                    ));
                }
            }
            if bytes[0] != bytes[1] {
                return Err(format!(
                    "{}: the linear and SEAL-form sums differ",
                    row.key()
                ));
            }
        }
        Ok(())
    }
}
