//! Every kind of bad input gets its typed error (the FPGA checked its preconditions only in
//! simulation).
#![expect(
    clippy::unwrap_used,
    reason = "test helpers outside #[test] fns unwrap on failure (clippy.toml exempts only #[test] fns)"
)]

use std::path::PathBuf;

use zeppelin_evalmult::vectors::VectorSet;
use zeppelin_evalmult::{
    reference, Ciphertext, CiphertextId, Component, Engine, EvalMultError, Factor, Input, KeyPart,
    ManifestError, RelinBatch, RelinKey, RnsContext,
};
use zeppelin_ring::RingError;

const N: usize = 1024;

fn ctx() -> RnsContext {
    RnsContext::new(
        N,
        &zeppelin_evalmult::openfhe_primes(30, N, 257, 3).unwrap(),
    )
    .unwrap()
}

fn poly(ctx: &RnsContext, seed: u32) -> Vec<u32> {
    (0..ctx.poly_len() as u32)
        .map(|j| {
            j.wrapping_mul(2_654_435_761).wrapping_add(seed) % ctx.moduli()[j as usize / N].value()
        })
        .collect()
}

fn key(ctx: &RnsContext) -> RelinKey {
    RelinKey {
        ring_dim: N,
        moduli: ctx.moduli_values(),
        a: (0..3).map(|i| poly(ctx, i)).collect(),
        b: (0..3).map(|i| poly(ctx, 10 + i)).collect(),
    }
}

fn ct(ctx: &RnsContext, seed: u32) -> Ciphertext {
    Ciphertext {
        c0: poly(ctx, seed),
        c1: poly(ctx, seed + 1),
    }
}

#[test]
fn moduli_are_validated() {
    // Prime, but 1_000_000_007 - 1 is not divisible by 2N.
    assert!(matches!(
        RnsContext::new(N, &[1_000_000_007]),
        Err(EvalMultError::Modulus {
            tower: 0,
            source: RingError::NotNttFriendly {
                modulus: 1_000_000_007,
                degree: N
            }
        })
    ));
    // Too large for the 32-bit Montgomery arithmetic.
    assert!(matches!(
        RnsContext::new(N, &[132_120_577, 1_073_750_017]),
        Err(EvalMultError::Modulus {
            tower: 1,
            source: RingError::ModulusOutOfRange { .. }
        })
    ));
    // 1 + 2N·4 = 8193 = 3·2731: not prime.
    assert!(matches!(
        RnsContext::new(N, &[8193]),
        Err(EvalMultError::Modulus {
            source: RingError::ModulusNotPrime { modulus: 8193 },
            ..
        })
    ));
    let q = zeppelin_evalmult::openfhe_primes(30, N, 257, 1).unwrap()[0];
    assert!(matches!(
        RnsContext::new(N, &[q, q]),
        Err(EvalMultError::DuplicateModulus {
            first: 0,
            second: 1,
            ..
        })
    ));
    assert!(matches!(
        RnsContext::new(3000, &[q]),
        Err(EvalMultError::RingDimension { ring_dim: 3000, .. })
    ));
    assert!(matches!(
        RnsContext::new(N, &[]),
        Err(EvalMultError::TowerCount { count: 0, .. })
    ));
    // The error says what is wrong.
    let message = RnsContext::new(N, &[1_000_000_007])
        .unwrap_err()
        .to_string();
    assert!(
        message.contains("1000000007") && message.contains("2*1024"),
        "{message}"
    );
}

#[test]
fn residues_and_shapes_are_validated() {
    let ctx = ctx();
    let key = key(&ctx);
    let engine = Engine::new(ctx.clone(), &key).unwrap();
    let good = (ct(&ctx, 1), ct(&ctx, 2));

    let mut bad = good.clone();
    bad.1.c1[N + 5] = ctx.moduli()[1].value();
    let err = engine.eval_mult(&[good.clone(), bad.clone()]).unwrap_err();
    assert!(
        matches!(
            &err,
            EvalMultError::ResidueOutOfRange {
                what: Input::Ciphertext {
                    ciphertext: CiphertextId::Pair {
                        pair: 1,
                        factor: Factor::Y
                    },
                    component: Component::C1
                },
                tower: 1,
                index: 5,
                ..
            }
        ),
        "{err}"
    );
    assert!(
        err.to_string()
            .starts_with("pair 1 y.c1: tower 1, coefficient 5:"),
        "{err}"
    );
    assert!(matches!(
        reference::eval_mult(&ctx, &key, &bad.0, &bad.1),
        Err(EvalMultError::ResidueOutOfRange {
            tower: 1,
            index: 5,
            ..
        })
    ));

    let mut short = good.clone();
    short.0.c0.pop();
    assert!(matches!(
        engine.eval_mult(&[short]),
        Err(EvalMultError::Shape { expected, found, .. }) if expected == 3 * N && found == 3 * N - 1
    ));

    // A failed batch leaves no partial results behind.
    let mut out = RelinBatch::new();
    engine
        .eval_mult_into(std::slice::from_ref(&good), &mut out)
        .unwrap();
    assert_eq!(out.len(), 1);
    assert!(engine
        .eval_mult_into(&[good.clone(), bad], &mut out)
        .is_err());
    assert!(out.is_empty());

    // Supplied digits: count, size and residues.
    assert!(matches!(
        engine.relinearize_with_digits(std::slice::from_ref(&good), &[]),
        Err(EvalMultError::Shape { .. })
    ));
    assert!(matches!(
        engine.relinearize_with_digits(std::slice::from_ref(&good), &[vec![0; 3 * 3 * N - 1]]),
        Err(EvalMultError::Shape { .. })
    ));
    let mut digits = vec![0u32; 3 * 3 * N];
    digits[2 * 3 * N + N + 7] = u32::MAX;
    assert!(matches!(
        engine.relinearize_with_digits(&[good], &[digits]),
        Err(EvalMultError::ResidueOutOfRange {
            what: Input::PairDigit { pair: 0, digit: 1 },
            tower: 2,
            index: 7,
            value: u32::MAX,
            ..
        })
    ));
}

#[test]
fn key_for_other_parameters_is_refused() {
    let ctx = ctx();
    let mut other = key(&ctx);
    other.moduli[2] = zeppelin_evalmult::openfhe_primes(30, N, 257, 4).unwrap()[3];
    assert!(matches!(
        Engine::new(ctx.clone(), &other),
        Err(EvalMultError::KeyMismatch { .. })
    ));
    let mut other = key(&ctx);
    other.ring_dim = 2048;
    assert!(matches!(
        Engine::new(ctx.clone(), &other),
        Err(EvalMultError::KeyMismatch { .. })
    ));
    let mut other = key(&ctx);
    other.b.pop();
    assert!(matches!(
        Engine::new(ctx.clone(), &other),
        Err(EvalMultError::Shape {
            what: Input::RelinKey { part: KeyPart::B },
            expected: 3,
            found: 2,
            ..
        })
    ));
    let mut other = key(&ctx);
    other.a[1][0] = u32::MAX;
    let err = Engine::new(ctx, &other).unwrap_err();
    assert!(
        matches!(
            err,
            EvalMultError::ResidueOutOfRange {
                what: Input::RelinKeyDigit {
                    part: KeyPart::A,
                    digit: 1
                },
                ..
            }
        ),
        "{err}"
    );
    assert!(err.to_string().starts_with("relin key a_1: "), "{err}");
}

fn shared_vectors() -> PathBuf {
    std::env::var_os("ZEPPELIN_VECTORS")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/vectors")
        })
        .join("openfhe-bv-n4096-l4-b2")
}

fn copy_vectors() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for entry in std::fs::read_dir(shared_vectors()).unwrap() {
        let entry = entry.unwrap();
        let target = dir.path().join(entry.file_name());
        std::fs::copy(entry.path(), &target).unwrap();
        let mut perms = std::fs::metadata(&target).unwrap().permissions();
        #[expect(
            clippy::permissions_set_readonly_false,
            reason = "the copies must be writable so that the tests can corrupt them"
        )]
        perms.set_readonly(false);
        std::fs::set_permissions(&target, perms).unwrap();
    }
    dir
}

#[test]
fn vector_directories_are_validated() {
    let dir = copy_vectors();
    assert!(VectorSet::load(dir.path()).is_ok());

    // Truncated file.
    let path = dir.path().join("ct1_y0.bin");
    let bytes = std::fs::read(&path).unwrap();
    std::fs::write(&path, &bytes[..bytes.len() - 4]).unwrap();
    assert!(matches!(
        VectorSet::load(dir.path()),
        Err(EvalMultError::Shape { what: Input::File(file), unit: "bytes", .. }) if file == path
    ));
    // Unreduced residue (tower 3 of the 4).
    let mut bad = bytes.clone();
    let at = 3 * 4096 * 4 + 40;
    bad[at..at + 4].copy_from_slice(&u32::MAX.to_le_bytes());
    std::fs::write(&path, &bad).unwrap();
    assert!(matches!(
        VectorSet::load(dir.path()),
        Err(EvalMultError::ResidueOutOfRange {
            tower: 3,
            index: 10,
            ..
        })
    ));
    std::fs::write(&path, &bytes).unwrap();

    // Missing key file.
    let key = dir.path().join("evk_b_2.bin");
    let key_bytes = std::fs::read(&key).unwrap();
    std::fs::remove_file(&key).unwrap();
    assert!(matches!(
        VectorSet::load(dir.path()),
        Err(EvalMultError::Io { .. })
    ));
    std::fs::write(&key, &key_bytes).unwrap();

    // Inconsistent manifests.
    let manifest = dir.path().join("manifest.json");
    let text = std::fs::read_to_string(&manifest).unwrap();
    type Check = fn(&EvalMultError) -> bool;
    let cases: [(&str, &str, Check, &str); 8] = [
        (
            "\"digits\": 4",
            "\"digits\": 3",
            |e| {
                matches!(
                    e,
                    EvalMultError::Manifest {
                        source: ManifestError::DigitsVsTowers {
                            digits: 3,
                            towers: 4
                        },
                        ..
                    }
                )
            },
            "digits = 3 but BV with digitSize 0 has one digit per tower (4)",
        ),
        (
            "\"towers\": 4",
            "\"towers\": 5",
            |e| {
                matches!(
                    e,
                    EvalMultError::Manifest {
                        source: ManifestError::TowersVsModuli {
                            towers: 5,
                            moduli: 4
                        },
                        ..
                    }
                )
            },
            "towers = 5 but 4 moduli",
        ),
        (
            "\"batch\": 2",
            "\"batch\": 0",
            |e| {
                matches!(
                    e,
                    EvalMultError::Manifest {
                        source: ManifestError::Batch { batch: 0, .. },
                        ..
                    }
                )
            },
            "batch 0 outside [1, 65536]",
        ),
        (
            "[448848,",
            "[448849,",
            |e| {
                matches!(
                    e,
                    EvalMultError::Manifest {
                        source: ManifestError::Roots { roots, expected },
                        ..
                    } if roots[0] == 448_849 && expected[0] == 448_848
                )
            },
            "are not the smallest primitive 2n-th roots",
        ),
        (
            "1061093377",
            "1061093378",
            |e| matches!(e, EvalMultError::Modulus { tower: 0, .. }),
            "tower 0",
        ),
        (
            "\"batch\": 2,",
            "",
            |e| {
                matches!(
                    e,
                    EvalMultError::Manifest {
                        source: ManifestError::MissingField { field: "batch" },
                        ..
                    }
                )
            },
            "missing field `batch`",
        ),
        (
            "\"ring_dim\": 4096",
            "\"ring_dim\": \"4096\"",
            |e| {
                matches!(
                    e,
                    EvalMultError::Manifest {
                        source: ManifestError::WrongType {
                            field: "ring_dim",
                            ..
                        },
                        ..
                    }
                )
            },
            "field `ring_dim`: invalid type",
        ),
        (
            "1061093377",
            "4294967296",
            |e| {
                matches!(
                    e,
                    EvalMultError::Manifest {
                        source: ManifestError::WrongType {
                            field: "moduli",
                            ..
                        },
                        ..
                    }
                )
            },
            "field `moduli`",
        ),
    ];
    for (from, to, check, message) in cases {
        assert!(text.contains(from), "{from}");
        std::fs::write(&manifest, text.replace(from, to)).unwrap();
        let err = VectorSet::load(dir.path()).unwrap_err();
        assert!(check(&err), "{from}: {err}");
        assert!(err.to_string().contains(message), "{from}: {err}");
    }
    // `"roots": null` means no roots given, like an absent field.
    std::fs::write(
        &manifest,
        text.replace("[448848, 92250, 173671, 45650]", "null"),
    )
    .unwrap();
    assert!(VectorSet::load(dir.path())
        .unwrap()
        .manifest
        .roots
        .is_none());
    for (text, check) in [
        (
            "{not json",
            (|e| matches!(e, ManifestError::Json(_))) as fn(&ManifestError) -> bool,
        ),
        ("[1, 2]", |e| matches!(e, ManifestError::NotAnObject)),
    ] {
        std::fs::write(&manifest, text).unwrap();
        let err = VectorSet::load(dir.path()).unwrap_err();
        assert!(
            matches!(&err, EvalMultError::Manifest { path, source } if *path == manifest && check(source)),
            "{err}"
        );
    }
}

#[test]
fn security_flags_follow_the_he_standard() {
    // The facts: N = 4096 with 12 x 30-bit towers is not 128-bit secure, N = 16384 is.
    let fpga = RnsContext::new(
        4096,
        &zeppelin_evalmult::openfhe_primes(30, 4096, 257, 12).unwrap(),
    )
    .unwrap();
    assert!(fpga.log_q() > 109.0 && !fpga.is_he_standard_128());
    let big = RnsContext::new(
        16384,
        &zeppelin_evalmult::openfhe_primes(30, 16384, 257, 12).unwrap(),
    )
    .unwrap();
    assert!(big.is_he_standard_128());
    // SEAL's CoeffModulus::MaxBitCount for 128-bit security.
    for (n, bits) in [
        (1024, 27),
        (2048, 54),
        (4096, 109),
        (8192, 218),
        (16384, 438),
        (32768, 881),
    ] {
        assert_eq!(zeppelin_evalmult::he_standard_max_log_q(n), Some(bits));
    }
}
