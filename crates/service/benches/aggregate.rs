//! Aggregation throughput of the service's compute step, the two paths side by side in one
//! run: `sum` and `dot` over 256 seeded uploads (one chunk of `zeppelin serve`) converting
//! every upload to a SEAL ciphertext (`sum_uploads_seal_form`, the path before the linear
//! sums) and accumulated with `c1` in NTT form (`sum_uploads`), on one core and on all.
//! Then the whole aggregation from a SQLite store of 2,048 such uploads (`Aggregation::run`:
//! the rows read in chunks of 256 beside the computation), and the store reads alone, each
//! from disk (digests checked) and from the recent uploads the store keeps in memory.
//! Throughput is reported as uploads per second.
//!
//! ```text
//! cargo bench -p zeppelin-service --bench aggregate
//! ```

#![expect(
    clippy::expect_used,
    reason = "benchmark set-up outside #[test] fns fails loudly"
)]

#[path = "../tests/common/mod.rs"]
mod common;

use bytes::Bytes;
use common::{slots, Device};
use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use rayon::prelude::*;
use std::sync::Arc;
use zeppelin_server::Evaluator;
use zeppelin_service::aggregate::Aggregation;
use zeppelin_service::aggregate::{sum_uploads, sum_uploads_seal_form, BadUpload};
use zeppelin_service::names::StreamName;
use zeppelin_service::store::{AppendRequest, SqliteStore, StoredUpload, UploadStore};
use zeppelin_service::{AggregateOp, Preset};

const UPLOADS: usize = 256;

fn bench(c: &mut Criterion) {
    // As `zeppelin serve` runs (`start` sets it).
    zeppelin_service::heap::retain_freed_memory();
    let device = Device::new(7).expect("device key");
    let uploads: Vec<StoredUpload> = (0..UPLOADS)
        .into_par_iter()
        .map(|k| StoredUpload {
            id: k as u64 + 1,
            body: Bytes::from(
                device
                    .encrypt_seeded(&slots(|i| ((i + k) % 100) as u32))
                    .expect("encrypt"),
            ),
        })
        .collect();
    let codec = Preset::Seal4096.codec().expect("codec");
    let eval = Arc::new(Evaluator::new(codec.seal().clone()).expect("evaluator"));
    let stream = StreamName::new("bench").expect("name");
    let weights: Vec<i64> = (0..UPLOADS as i64).map(|k| k * 37 - 1000).collect();
    let one_core = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .expect("pool");
    let cores = rayon::current_num_threads();

    let mut group = c.benchmark_group("aggregate seal4096 seeded");
    group.throughput(Throughput::Elements(UPLOADS as u64));
    group.sample_size(20);
    for op in [AggregateOp::Sum, AggregateOp::Dot(weights)] {
        type Path = fn(
            &dyn zeppelin_service::Codec,
            &Evaluator,
            &StreamName,
            &AggregateOp,
            u64,
            &[StoredUpload],
            BadUpload,
        ) -> Result<
            zeppelin_service::aggregate::PartialSum,
            zeppelin_service::error::ServiceError,
        >;
        let paths: [(&str, Path); 2] = [
            ("via SEAL ciphertexts", sum_uploads_seal_form),
            ("linear, c1 in NTT form", sum_uploads),
        ];
        for (pool, label) in [
            (Some(&one_core), "1 core".to_string()),
            (None, format!("{cores} cores")),
        ] {
            for (name, path) in paths {
                let id = format!("{} {name}, {label}", op.name());
                let run = || path(&*codec, &eval, &stream, &op, 0, &uploads, BadUpload::Fail);
                group.bench_function(id, |b| {
                    b.iter_batched(
                        || (),
                        |()| {
                            match pool {
                                Some(pool) => pool.install(run),
                                None => run(),
                            }
                            .expect("sum")
                        },
                        BatchSize::PerIteration,
                    )
                });
            }
        }
    }
    group.finish();

    // From the store.
    const STORED: usize = 2_048;
    let dir = tempfile::tempdir().expect("temp dir");
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let store: Arc<dyn UploadStore> = Arc::new(SqliteStore::open(dir.path()).expect("store"));
    runtime.block_on(async {
        for k in 0..STORED {
            store
                .append(AppendRequest {
                    stream: stream.clone(),
                    key: None,
                    device: None,
                    body: uploads[k % UPLOADS].body.clone(),
                    max_uploads: u64::MAX,
                })
                .await
                .expect("append");
        }
    });
    let mut group = c.benchmark_group("aggregate seal4096 seeded, SQLite store");
    group.throughput(Throughput::Elements(STORED as u64));
    group.sample_size(10);
    group.bench_function(
        format!("BLAKE3 of {STORED} uploads (the store's digest), 1 core"),
        |b| {
            b.iter(|| {
                for k in 0..STORED {
                    std::hint::black_box(zeppelin_service::store::body_digest(
                        &uploads[k % UPLOADS].body,
                    ));
                }
            })
        },
    );
    // The same rows from disk (a store keeping no recent uploads, as after a restart) and
    // from the recent uploads the appending store still holds in memory.
    let disk: Arc<dyn UploadStore> =
        Arc::new(SqliteStore::open_with_recent_bytes(dir.path(), 0).expect("store"));
    for (from, store) in [("from disk", &disk), ("recent, from memory", &store)] {
        group.bench_function(
            format!("read {STORED} uploads in chunks of 256, {from}"),
            |b| {
                b.iter(|| {
                    runtime.block_on(async {
                        let (mut after, mut read) = (0, 0);
                        loop {
                            let chunk = store
                                .read_chunk(&stream, after, i64::MAX as u64, 256)
                                .await
                                .expect("read");
                            let Some(last) = chunk.last() else { break };
                            after = last.id;
                            read += chunk.len();
                        }
                        assert_eq!(read, STORED);
                    })
                })
            },
        );
        group.bench_function(
            format!("sum of {STORED} uploads (Aggregation::run), {from}"),
            |b| {
                b.iter(|| {
                    let aggregation = Aggregation {
                        store: store.clone(),
                        codec: codec.clone(),
                        evaluator: eval.clone(),
                        relin: None,
                        chunk: 256,
                    };
                    let sum = runtime
                        .block_on(aggregation.run(stream.clone(), AggregateOp::Sum))
                        .expect("sum");
                    assert_eq!(sum.count, STORED as u64);
                })
            },
        );
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
