//! The linear aggregation path (`sum` and `dot` accumulated with each seeded upload's `c1`
//! left in NTT form, one inverse transform per sum) against the reference path (every upload
//! converted to a SEAL ciphertext and added with the evaluator): the same bytes, for seeded
//! and full uploads mixed, weights of every kind (0, negative, above t/2, beyond t), bodies
//! that do not decode (skipped or failing alike), and the result decrypting to the plaintext.

mod common;

use bytes::Bytes;
use common::{slots, Device, TestResult, P};
use rayon::prelude::*;
use zeppelin::Params;
use zeppelin_seal::ComprMode;
use zeppelin_server::Evaluator;
use zeppelin_service::aggregate::{sum_uploads, sum_uploads_seal_form, BadUpload, PartialSum};
use zeppelin_service::names::StreamName;
use zeppelin_service::store::StoredUpload;
use zeppelin_service::{AggregateOp, Preset};

fn uploads(device: &Device, count: usize) -> TestResult<(Vec<StoredUpload>, Vec<Vec<u32>>)> {
    let made: Vec<(Vec<u8>, Vec<u32>)> = (0..count)
        .into_par_iter()
        .map(|k| -> TestResult<(Vec<u8>, Vec<u32>)> {
            let values = slots(|i| ((i * 7 + k * 131) % 1000) as u32);
            // Every third upload in the full form: its c1 is added in coefficient form.
            let body = if k % 3 == 2 {
                device.encrypt_full(&values)?
            } else {
                device.encrypt_seeded(&values)?
            };
            Ok((body, values))
        })
        .collect::<TestResult<_>>()?;
    Ok(made
        .into_iter()
        .enumerate()
        .map(|(k, (body, values))| {
            (
                StoredUpload {
                    id: k as u64 + 1,
                    body: Bytes::from(body),
                },
                values,
            )
        })
        .unzip())
}

fn bytes_of(partial: &PartialSum) -> TestResult<Option<Vec<u8>>> {
    Ok(match &partial.ciphertext {
        Some(ct) => Some(ct.save(ComprMode::None)?),
        None => None,
    })
}

#[test]
fn linear_sums_are_the_bytes_of_the_converted_sums() -> TestResult {
    let device = Device::new(41)?;
    let codec = Preset::Seal4096.codec()?;
    let eval = Evaluator::new(codec.seal().clone())?;
    let stream = StreamName::new("linear")?;
    let (uploads, values) = uploads(&device, 24)?;
    let t = u64::from(P::T);
    let weights: Vec<i64> = (0..uploads.len() as i64)
        .map(|k| match k % 6 {
            0 => 0,
            1 => -3 - k,
            2 => t as i64 / 2 + k,
            3 => t as i64 + 5,
            4 => i64::MIN + k,
            _ => k * 1_000_003,
        })
        .collect();
    for op in [AggregateOp::Sum, AggregateOp::Dot(weights.clone())] {
        for bad in [BadUpload::Fail, BadUpload::Skip] {
            // From position 0 and from the middle of a stream (dot's weights offset).
            for (first, slice) in [(0u64, &uploads[..]), (5, &uploads[5..17])] {
                let fast = sum_uploads(&*codec, &eval, &stream, &op, first, slice, bad)?;
                let reference =
                    sum_uploads_seal_form(&*codec, &eval, &stream, &op, first, slice, bad)?;
                assert_eq!(fast.count, reference.count, "{op:?}");
                assert_eq!(fast.rejected, 0);
                assert!(fast.ciphertext.is_some());
                assert_eq!(
                    bytes_of(&fast)?,
                    bytes_of(&reference)?,
                    "{} from {first}",
                    op.name()
                );
            }
        }
    }

    // The sum decrypts to the plaintext sum.
    let sum = sum_uploads(
        &*codec,
        &eval,
        &stream,
        &AggregateOp::Sum,
        0,
        &uploads,
        BadUpload::Fail,
    )?;
    let ct = sum.ciphertext.ok_or("no sum")?;
    let got = device.decrypt(&ct.save(ComprMode::None)?)?;
    let want: Vec<u32> = (0..P::N)
        .map(|i| (values.iter().map(|v| u64::from(v[i])).sum::<u64>() % t) as u32)
        .collect();
    assert_eq!(got, want);
    Ok(())
}

#[test]
fn bodies_that_do_not_decode_are_skipped_or_fail_alike() -> TestResult {
    let device = Device::new(42)?;
    let codec = Preset::Seal4096.codec()?;
    let eval = Evaluator::new(codec.seal().clone())?;
    let stream = StreamName::new("linear")?;
    let (mut uploads, _) = uploads(&device, 6)?;
    uploads[1].body = Bytes::from_static(b"not a ciphertext");
    let mut flipped = uploads[4].body.to_vec();
    // A residue beyond its prime.
    flipped[200..208].copy_from_slice(&u64::MAX.to_le_bytes());
    uploads[4].body = Bytes::from(flipped);
    let weights = vec![1, 0, 2, 3, 0, 5];
    for op in [AggregateOp::Sum, AggregateOp::Dot(weights)] {
        let fast = sum_uploads(&*codec, &eval, &stream, &op, 0, &uploads, BadUpload::Skip)?;
        let reference =
            sum_uploads_seal_form(&*codec, &eval, &stream, &op, 0, &uploads, BadUpload::Skip)?;
        assert_eq!((fast.count, fast.rejected), (4, 2), "{}", op.name());
        assert_eq!((reference.count, reference.rejected), (4, 2));
        assert_eq!(bytes_of(&fast)?, bytes_of(&reference)?);
        for path in [sum_uploads, sum_uploads_seal_form] {
            match path(&*codec, &eval, &stream, &op, 0, &uploads, BadUpload::Fail) {
                Err(zeppelin_service::error::ServiceError::StoredUpload { id, .. }) => {
                    assert!(id == 2 || id == 5, "id {id}")
                }
                other => panic!("{}: {:?}", op.name(), other.map(|p| p.count)),
            }
        }
    }
    Ok(())
}
