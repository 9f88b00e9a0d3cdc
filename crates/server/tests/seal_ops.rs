//! zeppelin-server's Evaluator against Microsoft SEAL's own (seal-python 4.4.0), for the
//! presets Seal4096 and Seal8192.
//!
//! SEAL generates the keys (secret, public, `RelinKeys`, `GaloisKeys`: for n = 4096 SEAL's
//! default power-of-two set, for n = 8192 a few steps, and for both a set of a few elements so
//! that other steps take SEAL's non-adjacent-form fallback), encrypts random batched
//! plaintexts, runs its own Evaluator and saves inputs, keys and outputs uncompressed
//! (`tests/seal_ops.py`). Here every operation runs on the same inputs and keys, and its
//! output must be **byte-identical** to SEAL's (the saved bytes, but for the version byte of
//! the header: seal-python writes 4.4, we write 4.1). Then SEAL decrypts our outputs, and
//! each must give the slots computed independently with numpy (wherever SEAL's own output
//! still has noise budget).
//!
//! Byte-identical, at the first level, one prime fewer and the last level: add, sub, negate,
//! add_plain, sub_plain, multiply_plain (batched, scalar above and below (t+1)/2,
//! monomials, a sparse polynomial), relinearize (of SEAL's multiply output), rotate_rows
//! (±1, ±7, NAF steps without a key), rotate_columns, mod_switch_to_next (down to the last
//! level). All of them are.
//!
//! The SEAL side runs in Python (found by zeppelin-seal's `tests/support`: `SEAL_PYTHON`, else
//! the repository's `.venv/bin/python` or `/tmp/sealvenv/bin/python`). The tests fail (they do
//! not skip) when none of them can `import seal`.
#![expect(
    clippy::unwrap_used,
    clippy::panic,
    reason = "helpers outside #[test] functions are test code too"
)]

#[path = "../../zeppelin-seal/tests/support/mod.rs"]
mod support;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use support::{differing_residues, run_python, same_bytes_but_version};
use zeppelin_seal::{
    Ciphertext, ComprMode, EncryptionParameters, GaloisKeys, Plaintext, RelinKeys, SealContext,
};
use zeppelin_server::{EvalError, Evaluator};

fn run_script(args: &[&str]) -> String {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/seal_ops.py");
    let mut all = vec![script.into_os_string()];
    all.extend(args.iter().map(Into::into));
    run_python(&all)
}

struct Fixture {
    dir: PathBuf,
    ctx: Arc<SealContext>,
}

impl Fixture {
    fn new(preset: &str) -> Self {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("seal_ops_{preset}"));
        let _ = std::fs::remove_dir_all(&dir);
        run_script(&["generate", dir.to_str().unwrap(), preset]);
        let parms =
            EncryptionParameters::load(&std::fs::read(dir.join("params.seal")).unwrap()).unwrap();
        let ctx = Arc::new(SealContext::new(parms).unwrap());
        Self { dir, ctx }
    }

    fn bytes(&self, name: &str) -> Vec<u8> {
        std::fs::read(self.dir.join(format!("{name}.seal"))).unwrap()
    }

    fn ct(&self, name: &str) -> Ciphertext {
        Ciphertext::load(&self.ctx, &self.bytes(name)).unwrap()
    }

    fn plain(&self, name: &str) -> Plaintext {
        Plaintext::load(&self.ctx, &self.bytes(name)).unwrap()
    }
}

/// Runs every case of the manifest, asserts byte identity with SEAL, writes our outputs for
/// SEAL to decrypt, and returns the number of cases.
fn check_preset(preset: &str, n: usize) {
    let fx = Fixture::new(preset);
    assert_eq!(fx.ctx.n(), n);
    let eval = Evaluator::new(fx.ctx.clone()).unwrap();
    // RelinKeys as loaded (converted per call), GaloisKeys prepared once: both paths run.
    let relin = RelinKeys::load(&fx.ctx, &fx.bytes("relin")).unwrap();
    let galois_main = GaloisKeys::load(&fx.ctx, &fx.bytes("galois_main")).unwrap();
    let galois_few = GaloisKeys::load(&fx.ctx, &fx.bytes("galois_few")).unwrap();
    let main = eval.prepare_galois_keys(&galois_main).unwrap();
    let few = eval.prepare_galois_keys(&galois_few).unwrap();

    let manifest = std::fs::read_to_string(fx.dir.join("manifest.txt")).unwrap();
    let mut failures = Vec::new();
    let mut cases = 0;
    let mut by_op = std::collections::BTreeMap::<String, usize>::new();
    for line in manifest.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        let [name, op, a, b, key, arg, _checked] = f[..] else {
            panic!("bad manifest line {line:?}")
        };
        let x = fx.ct(a);
        let ours = match op {
            "add" => eval.add(&x, &fx.ct(b)),
            "sub" => eval.sub(&x, &fx.ct(b)),
            "negate" => eval.negate(&x),
            "add_plain" => eval.add_plain(&x, &fx.plain(b)),
            "sub_plain" => eval.sub_plain(&x, &fx.plain(b)),
            "multiply_plain" => eval.multiply_plain(&x, &fx.plain(b)),
            "relinearize" => eval.relinearize(&x, &relin),
            "rotate_rows" => {
                let steps: i32 = arg.parse().unwrap();
                match key {
                    "galois_main" => eval.rotate_rows(&x, steps, &main),
                    "galois_few" => eval.rotate_rows(&x, steps, &few),
                    _ => panic!("unknown keys {key}"),
                }
            }
            "rotate_columns" => eval.rotate_columns(&x, &main),
            "mod_switch_to_next" => eval.mod_switch_to_next(&x),
            _ => panic!("unknown op {op}"),
        }
        .unwrap_or_else(|e| panic!("{name}: {e}"));
        let seal_bytes = fx.bytes(name);
        let our_bytes = ours.save(ComprMode::None).unwrap();
        if !same_bytes_but_version(&our_bytes, &seal_bytes) {
            let seal = Ciphertext::load(&fx.ctx, &seal_bytes).unwrap();
            let differing = differing_residues(&ours, &seal);
            failures.push(format!(
                "{name} ({op}): {differing} of {} residues differ (sizes {} / {})",
                seal.data.len(),
                ours.size,
                seal.size
            ));
        }
        std::fs::write(fx.dir.join(format!("{name}.ours.seal")), &our_bytes).unwrap();
        cases += 1;
        *by_op.entry(op.to_string()).or_default() += 1;
    }
    assert!(
        failures.is_empty(),
        "{preset}: outputs differing from SEAL's:\n{}",
        failures.join("\n")
    );
    println!("{preset}: {cases} outputs byte-identical with SEAL: {by_op:?}");
    let decrypted = run_script(&["decrypt", fx.dir.to_str().unwrap()]);
    println!("{preset}: {}", decrypted.trim());
    assert!(decrypted.contains("SEAL decrypted"), "{decrypted}");

    // The prepared and the as-loaded keys give the same bytes.
    let a = fx.ct("a");
    assert_eq!(
        eval.rotate_rows(&a, 1, &galois_main).unwrap(),
        eval.rotate_rows(&a, 1, &main).unwrap()
    );
    let prod = fx.ct("top_mul");
    let prepared = eval.prepare_relin_keys(&relin).unwrap();
    assert_eq!(
        eval.relinearize(&prod, &prepared).unwrap(),
        eval.relinearize(&prod, &relin).unwrap()
    );
    // A step whose NAF needs a key the few-element set lacks: SEAL refuses it too.
    assert!(matches!(
        eval.rotate_rows(&a, 2, &few),
        Err(EvalError::MissingGaloisKey { .. })
    ));
    // The batch paths give the sequential results.
    let cts: Vec<Ciphertext> = (0..40).map(|_| a.clone()).collect();
    let mut sequential = a.clone();
    for ct in &cts[1..] {
        sequential = eval.add(&sequential, ct).unwrap();
    }
    assert_eq!(eval.sum(&cts).unwrap(), sequential);
    let prods = vec![prod.clone(); 3];
    let relinearized = eval.relinearize_many(&prods, &prepared).unwrap();
    assert_eq!(relinearized.len(), 3);
    assert_eq!(relinearized[2], fx.ct("top_relin"));
}

#[test]
fn seal4096_operations_are_byte_identical_with_seal() {
    check_preset("seal4096", 4096);
}

#[test]
fn seal8192_operations_are_byte_identical_with_seal() {
    check_preset("seal8192", 8192);
}
