//! The OpenFHE 1.5.1 vectors (`shared/vectors/openfhe-bv-n4096-l4-b2`), residue for residue.
//! The directory is found beside the repository (`../../../shared/vectors` from this crate),
//! or at `$ZEPPELIN_VECTORS`; a missing directory fails the test.
#![expect(
    clippy::unwrap_used,
    reason = "test helpers outside #[test] fns unwrap on failure (clippy.toml exempts only #[test] fns)"
)]

use std::path::PathBuf;

use zeppelin_evalmult::reference;
use zeppelin_evalmult::vectors::VectorSet;

fn vector_dir() -> PathBuf {
    let root = std::env::var_os("ZEPPELIN_VECTORS")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/vectors")
        });
    let dir = root.join("openfhe-bv-n4096-l4-b2");
    assert!(
        dir.join("manifest.json").is_file(),
        "OpenFHE vectors not found at {} (set ZEPPELIN_VECTORS to the shared/vectors directory)",
        dir.display()
    );
    dir
}

fn load() -> VectorSet {
    VectorSet::load(&vector_dir()).unwrap()
}

#[test]
fn manifest_roots_are_ours() {
    let set = load();
    assert_eq!(Some(set.context.roots()), set.manifest.roots);
    assert_eq!(set.pairs.len(), 2);
}

#[test]
fn reference_reproduces_tensor2_and_relin() {
    let set = load();
    let tensor2 = set.tensor2.as_ref().expect("ctk_tensor2.bin present");
    let expected = set.expected.as_ref().expect("ctk_relin*.bin present");
    for (k, (x, y)) in set.pairs.iter().enumerate() {
        let out = reference::eval_mult(&set.context, &set.key, x, y).unwrap();
        assert_eq!(out.tensor.c2, tensor2[k], "tensor2 of pair {k}");
        assert_eq!(out.relin.c0, expected[k].c0, "relin0 of pair {k}");
        assert_eq!(out.relin.c1, expected[k].c1, "relin1 of pair {k}");
    }
}

#[test]
fn engine_reproduces_relin() {
    let set = load();
    let expected = set.expected.as_ref().expect("ctk_relin*.bin present");
    for group in [1, 2] {
        let engine = zeppelin_evalmult::Engine::with_options(
            set.context.clone(),
            &set.key,
            zeppelin_evalmult::EngineOptions { group, block: 256 },
        )
        .unwrap();
        let results = engine.eval_mult(&set.pairs).unwrap();
        assert_eq!(&results, expected);
        // The FPGA's split: digits from outside, tensor and key switch in the engine.
        let digits: Vec<_> = set
            .pairs
            .iter()
            .map(|(x, y)| {
                let r = reference::eval_mult(&set.context, &set.key, x, y).unwrap();
                zeppelin_evalmult::tower_major_digits(&set.context, &r.digits).unwrap()
            })
            .collect();
        let results = engine.relinearize_with_digits(&set.pairs, &digits).unwrap();
        assert_eq!(&results.to_ciphertexts(), expected);
    }
}

#[test]
fn engine_output_serializes_to_openfhes_relin_files() {
    let dir = vector_dir();
    let set = VectorSet::load(&dir).unwrap();
    let engine = zeppelin_evalmult::Engine::new(set.context.clone(), &set.key).unwrap();
    let results = engine.eval_mult(&set.pairs).unwrap();
    let report = zeppelin_evalmult::vectors::compare(
        set.context.ring_dim(),
        &results,
        set.expected.as_ref().unwrap(),
    );
    assert_eq!((report.compared, report.mismatches), (2 * 2 * 4 * 4096, 0));
    for (k, ct) in results.iter().enumerate() {
        for (c, poly) in [(0, &ct.c0), (1, &ct.c1)] {
            let name = format!("ct{k}_relin{c}.bin");
            assert_eq!(
                zeppelin_evalmult::vectors::poly_to_le_bytes(poly),
                std::fs::read(dir.join(&name)).unwrap(),
                "{name}"
            );
        }
    }
}
