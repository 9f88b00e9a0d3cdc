//! Every refused input is a typed `EvalError` naming what is wrong (no panic).
#![expect(
    clippy::unwrap_used,
    reason = "helpers outside #[test] functions are test code too"
)]

use std::sync::Arc;

use rand::{Rng, SeedableRng};
use zeppelin_seal::keygen::KeyGenerator;
use zeppelin_seal::{
    Ciphertext, EncryptionParameters, KSwitchKeys, ParmsId, Plaintext, RelinKeys, SealContext,
    SealError, SecretKey,
};
use zeppelin_server::{EvalError, Evaluator, PlaintextProblem};

fn context<P: zeppelin_seal::device::SealPreset>() -> Arc<SealContext> {
    Arc::new(SealContext::new(EncryptionParameters::for_preset::<P>()).unwrap())
}

fn secret(ctx: &SealContext, seed: u64) -> SecretKey {
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let ternary: Vec<i64> = (0..ctx.n()).map(|_| rng.gen_range(-1..=1)).collect();
    let ntt = ctx.level_ntt(ctx.key_level()).unwrap();
    let mut data = ntt.from_signed(&ternary).unwrap();
    ntt.forward(&mut data).unwrap();
    SecretKey {
        parms_id: ctx.key_level().parms_id,
        data,
    }
}

fn random_ct(ctx: &SealContext, primes: usize, size: usize, seed: u64) -> Ciphertext {
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let level = ctx.data_level_with(primes).unwrap();
    let n = ctx.n();
    let mut data = Vec::with_capacity(size * primes * n);
    for _ in 0..size {
        for &q in &level.coeff_modulus {
            data.extend((0..n).map(|_| rng.gen_range(0..q)));
        }
    }
    Ciphertext::new(level, n, size, false, data).unwrap()
}

#[test]
fn ciphertext_shape_errors() {
    let ctx = context::<zeppelin::Seal4096>();
    let eval = Evaluator::new(ctx.clone()).unwrap();
    let a = random_ct(&ctx, 3, 2, 1);
    let low = random_ct(&ctx, 2, 2, 2);
    assert!(matches!(
        eval.add(&a, &low),
        Err(EvalError::LevelMismatch {
            left: 3,
            right: 2,
            ..
        })
    ));
    let mut ntt = a.clone();
    ntt.is_ntt_form = true;
    assert!(matches!(eval.negate(&ntt), Err(EvalError::NttForm { .. })));
    let mut degree = a.clone();
    degree.poly_modulus_degree = 2048;
    assert!(matches!(
        eval.mod_switch_to_next(&degree),
        Err(EvalError::Degree { found: 2048, .. })
    ));
    let mut short = a.clone();
    short.data.pop();
    assert!(matches!(
        eval.multiply_plain(&short, &Plaintext::new(vec![1, 2])),
        Err(EvalError::Seal(SealError::CountMismatch { .. }))
    ));
    // A residue at its prime (a hand-built ciphertext): refused before any kernel runs.
    let mut wide = a.clone();
    wide.data[5000] = ctx.first_level().coeff_modulus[1];
    assert!(matches!(
        eval.multiply_plain(&wide, &Plaintext::new(vec![1, 2])),
        Err(EvalError::Seal(SealError::CoefficientOutOfRange {
            index: 5000,
            ..
        }))
    ));
    // Above 2^63 too (the scan's borrow trick must not wrap), and q − 1 passes.
    for bad in [
        u64::MAX,
        1 << 63,
        (1 << 63) + 5,
        ctx.first_level().coeff_modulus[0],
    ] {
        let mut wide = a.clone();
        wide.data[7] = bad;
        assert!(
            matches!(
                eval.rotate_columns(
                    &wide,
                    &zeppelin_seal::GaloisKeys(KSwitchKeys {
                        parms_id: ctx.key_level().parms_id,
                        keys: Vec::new(),
                        seeds: Vec::new(),
                    })
                ),
                Err(EvalError::Seal(SealError::CoefficientOutOfRange {
                    index: 7,
                    ..
                }))
            ),
            "{bad}"
        );
    }
    let mut edge = a.clone();
    edge.data[7] = ctx.first_level().coeff_modulus[0] - 1;
    assert!(eval
        .multiply_plain(&edge, &Plaintext::new(vec![1, 2]))
        .is_ok());
    // Key level and unknown levels.
    let mut key_level = a.clone();
    key_level.parms_id = ctx.key_level().parms_id;
    assert!(eval
        .add_plain(&key_level, &Plaintext::new(vec![1]))
        .is_err());
    let mut unknown = a.clone();
    unknown.parms_id = ParmsId([7; 32]);
    assert!(matches!(
        eval.add(&unknown, &unknown),
        Err(EvalError::Seal(SealError::UnknownParmsId { .. }))
    ));
    // Down to the last level, and no further.
    let last = eval
        .mod_switch_to_next(&eval.mod_switch_to_next(&a).unwrap())
        .unwrap();
    assert!(matches!(
        eval.mod_switch_to_next(&last),
        Err(EvalError::Seal(SealError::LastLevel { primes: 1 }))
    ));
    assert!(matches!(eval.sum(&[]), Err(EvalError::Empty { .. })));
    assert!(matches!(
        eval.sum(&[a.clone(), a.clone(), low]),
        Err(EvalError::LevelMismatch { .. })
    ));
}

#[test]
fn plaintext_errors() {
    let ctx = context::<zeppelin::Seal4096>();
    let eval = Evaluator::new(ctx.clone()).unwrap();
    let a = random_ct(&ctx, 3, 2, 3);
    let problem = |r: Result<Ciphertext, EvalError>| match r {
        Err(EvalError::Plaintext { problem, .. }) => problem,
        other => panic!("expected a plaintext error, got {other:?}"),
    };
    assert_eq!(
        problem(eval.add_plain(&a, &Plaintext::new(vec![1; 4097]))),
        PlaintextProblem::TooLong { len: 4097, n: 4096 }
    );
    assert_eq!(
        problem(eval.sub_plain(&a, &Plaintext::new(vec![0, 65537]))),
        PlaintextProblem::NotBelowT {
            index: 1,
            value: 65537,
            t: 65537
        }
    );
    let mut ntt = Plaintext::new(vec![1]);
    ntt.parms_id = ctx.first_level().parms_id;
    assert_eq!(
        problem(eval.multiply_plain(&a, &ntt)),
        PlaintextProblem::NttForm
    );
    assert_eq!(
        problem(eval.multiply_plain(&a, &Plaintext::new(vec![0; 10]))),
        PlaintextProblem::Zero
    );
    // The empty plaintext adds nothing (SEAL's behaviour too).
    assert_eq!(eval.add_plain(&a, &Plaintext::new(Vec::new())).unwrap(), a);
}

#[test]
fn key_errors() {
    let ctx = context::<zeppelin::Seal4096>();
    let eval = Evaluator::new(ctx.clone()).unwrap();
    let sk = secret(&ctx, 4);
    let mut rng = rand::rngs::StdRng::seed_from_u64(5);
    let keygen = KeyGenerator::new(&ctx, &sk).unwrap();
    let relin = keygen.relin_keys(&mut rng).unwrap();
    let elt1 = zeppelin_seal::keygen::galois_element_for_step(4096, 1).unwrap();
    let galois = keygen.galois_keys(&[elt1], &mut rng).unwrap();
    let a = random_ct(&ctx, 3, 2, 6);
    let prod = random_ct(&ctx, 3, 3, 7);

    // Size 2 passes through relinearization unchanged (SEAL's no-op); size 3 works.
    assert_eq!(eval.relinearize(&a, &relin).unwrap(), a);
    assert_eq!(eval.relinearize(&prod, &relin).unwrap().size, 2);
    // Size 4 needs a key for s^3, which SEAL's create_relin_keys does not make.
    let size4 = random_ct(&ctx, 3, 4, 8);
    assert!(matches!(
        eval.relinearize(&size4, &relin),
        Err(EvalError::MissingRelinKey)
    ));
    let empty = RelinKeys(KSwitchKeys {
        parms_id: ctx.key_level().parms_id,
        keys: Vec::new(),
        seeds: Vec::new(),
    });
    assert!(matches!(
        eval.relinearize(&prod, &empty),
        Err(EvalError::MissingRelinKey)
    ));
    // Keys of another context.
    let other = context::<zeppelin::Seal8192>();
    let other_sk = secret(&other, 9);
    let other_relin = KeyGenerator::new(&other, &other_sk)
        .unwrap()
        .relin_keys(&mut rng)
        .unwrap();
    assert!(matches!(
        eval.relinearize(&prod, &other_relin),
        Err(EvalError::ForeignKeys { .. })
    ));
    assert!(matches!(
        eval.prepare_relin_keys(&other_relin),
        Err(EvalError::ForeignKeys { .. })
    ));
    // Malformed keys: a short decomposition, a truncated key, a residue at its prime.
    let mut short = relin.clone();
    short.0.keys[0].pop();
    assert!(matches!(
        eval.relinearize(&prod, &short),
        Err(EvalError::MalformedKey { .. })
    ));
    let mut truncated = relin.clone();
    truncated.0.keys[0][1].0.data.pop();
    assert!(matches!(
        eval.prepare_relin_keys(&truncated),
        Err(EvalError::MalformedKey { .. })
    ));
    let mut wide = relin.clone();
    wide.0.keys[0][2].0.data[3] = ctx.key_level().coeff_modulus[0];
    assert!(matches!(
        eval.relinearize(&prod, &wide),
        Err(EvalError::MalformedKey { .. })
    ));

    // Galois: a step with its key works; missing keys, bad elements and steps are refused.
    let prepared = eval.prepare_galois_keys(&galois).unwrap();
    assert_eq!(
        eval.rotate_rows(&a, 1, &galois).unwrap(),
        eval.rotate_rows(&a, 1, &prepared).unwrap()
    );
    assert_eq!(eval.rotate_rows(&a, 0, &galois).unwrap(), a);
    assert!(matches!(
        eval.rotate_rows(&a, 2, &prepared),
        Err(EvalError::MissingGaloisKey { .. })
    ));
    // 3 = 4 − 1 in NAF: neither 4 nor −1 has a key.
    assert!(matches!(
        eval.rotate_rows(&a, 3, &galois),
        Err(EvalError::MissingGaloisKey { .. })
    ));
    assert!(matches!(
        eval.rotate_columns(&a, &prepared),
        Err(EvalError::MissingGaloisKey { galois_elt: 8191 })
    ));
    assert!(matches!(
        eval.rotate_rows(&a, 2048, &galois),
        Err(EvalError::Seal(SealError::RotationStep { .. }))
    ));
    assert!(matches!(
        eval.rotate_rows(&a, -2048, &galois),
        Err(EvalError::Seal(SealError::RotationStep { .. }))
    ));
    assert!(matches!(
        eval.apply_galois(&a, 4, &galois),
        Err(EvalError::GaloisElement { galois_elt: 4, .. })
    ));
    assert!(matches!(
        eval.apply_galois(&a, 8193, &galois),
        Err(EvalError::GaloisElement { .. })
    ));
    assert!(matches!(
        eval.rotate_rows(&prod, 1, &galois),
        Err(EvalError::Size { size: 3, .. })
    ));
}

#[test]
fn parameter_errors() {
    let seal4096 = EncryptionParameters::for_preset::<zeppelin::Seal4096>();
    // An even plain modulus: the evaluator's t arithmetic needs t odd.
    let mut even = seal4096.clone();
    even.plain_modulus = 1 << 16;
    let ctx = Arc::new(SealContext::new(even).unwrap());
    assert!(matches!(
        Evaluator::new(ctx),
        Err(EvalError::Unsupported { .. })
    ));
    // t prime but not 1 mod 2n: no batching, so no rotations (SEAL: using_batching).
    let mut no_batching = seal4096;
    no_batching.plain_modulus = 65539;
    let ctx = Arc::new(SealContext::new(no_batching).unwrap());
    let eval = Evaluator::new(ctx.clone()).unwrap();
    let sk = secret(&ctx, 10);
    let galois = KeyGenerator::new(&ctx, &sk)
        .unwrap()
        .galois_keys(&[3], &mut rand::rngs::StdRng::seed_from_u64(11))
        .unwrap();
    let a = random_ct(&ctx, 3, 2, 12);
    assert!(matches!(
        eval.rotate_rows(&a, 1, &galois),
        Err(EvalError::NotSupportedByParameters { .. })
    ));
    // apply_galois itself does not need batching.
    assert!(eval.apply_galois(&a, 3, &galois).is_ok());
}
