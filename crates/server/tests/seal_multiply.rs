//! `Evaluator::multiply` and `square` against Microsoft SEAL 4.1's (seal-python 4.4.0): the
//! same inputs give the same bytes, at every level of Seal4096 and Seal8192, for encrypted
//! random, all-zero and all-(t−1) slots, for sizes 3×2 and 3×3, and for crafted ciphertexts
//! with extreme coefficients (the tensor near its bound); SEAL then decrypts our products to
//! the slot products.
//!
//! The SEAL side is `tests/seal_multiply.py`, run by zeppelin-seal's `tests/support` (`SEAL_PYTHON`,
//! else the repository's `.venv/bin/python` or `/tmp/sealvenv/bin/python`); the test fails (it
//! does not skip) without seal-python.
#![expect(
    clippy::unwrap_used,
    reason = "helpers outside #[test] functions are test code too"
)]

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::path::Path;
use std::sync::Arc;

use num_bigint::BigUint;
use zeppelin_seal::{Ciphertext, ComprMode, EncryptionParameters, SealContext};
use zeppelin_server::Evaluator;

#[path = "../../zeppelin-seal/tests/support/mod.rs"]
mod support;
use support::{differing_residues, run_python, same_bytes_but_version};

fn seal_side(mode: &str, dir: &Path) -> String {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/seal_multiply.py");
    run_python(&[script.as_os_str(), OsStr::new(mode), dir.as_os_str()])
}

/// Ciphertexts whose every coefficient is `h = (q−1)/2` or `−h` (the largest centred
/// magnitude), so that the tensor's coefficients reach `s·n·h²`, the bound the auxiliary base
/// is sized for (up to its margin).
fn extreme(ctx: &SealContext, primes: usize, size: usize, negative: &[bool]) -> Ciphertext {
    let level = ctx.data_level_with(primes).unwrap();
    let q: BigUint = level
        .coeff_modulus
        .iter()
        .map(|&p| BigUint::from(p))
        .product();
    let h = (&q - 1u32) / 2u32;
    let n = ctx.n();
    let mut data = Vec::with_capacity(size * primes * n);
    for &neg in negative.iter().cycle().take(size) {
        let v = if neg { &q - &h } else { h.clone() };
        for &p in &level.coeff_modulus {
            let r = (&v % p).to_u64_digits().first().copied().unwrap_or(0);
            data.extend(std::iter::repeat_n(r, n));
        }
    }
    Ciphertext::new(level, n, size, false, data).unwrap()
}

fn check_preset(name: &str, parms: EncryptionParameters) {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("seal_multiply_{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("params.seal"),
        parms.save(ComprMode::None).unwrap(),
    )
    .unwrap();
    let ctx = Arc::new(SealContext::new(parms).unwrap());
    let first = ctx.first_level().coeff_modulus.len();

    let mut adversarial = Vec::new();
    for primes in [first, 1] {
        for (label, sa, sb, na, nb) in [
            ("pos", 2, 2, &[false][..], &[false][..]),
            ("neg", 2, 2, &[true][..], &[false][..]),
            ("mixed3", 3, 3, &[false, true][..], &[true, false][..]),
        ] {
            let case = format!("extreme_{label}_l{primes}");
            let a = extreme(&ctx, primes, sa, na);
            let b = extreme(&ctx, primes, sb, nb);
            std::fs::write(
                dir.join(format!("{case}.a.seal")),
                a.save(ComprMode::None).unwrap(),
            )
            .unwrap();
            std::fs::write(
                dir.join(format!("{case}.b.seal")),
                b.save(ComprMode::None).unwrap(),
            )
            .unwrap();
            adversarial.push(case);
        }
    }
    std::fs::write(dir.join("adversarial.txt"), adversarial.join("\n")).unwrap();
    print!("{name}: {}", seal_side("make", &dir));

    let eval = Evaluator::new(ctx.clone()).unwrap();
    let cases = std::fs::read_to_string(dir.join("cases.txt")).unwrap();
    // Per level (primes): byte-identical products and squares, and the cases.
    let mut per_level: BTreeMap<usize, (usize, usize)> = BTreeMap::new();
    let mut mismatches = Vec::new();
    for line in cases.lines() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let (case, primes) = (fields[0], fields[1].parse::<usize>().unwrap());
        let load = |file: String| {
            let bytes = std::fs::read(dir.join(&file)).unwrap();
            (Ciphertext::load(&ctx, &bytes).unwrap(), bytes)
        };
        let (a, _) = load(format!("{case}.a.seal"));
        let (b, _) = load(format!("{case}.b.seal"));
        for (op, ours) in [
            ("mul", eval.multiply(&a, &b).unwrap()),
            ("sq", eval.square(&a).unwrap()),
        ] {
            let (seal, seal_bytes) = load(format!("{case}.seal_{op}.seal"));
            let ours_bytes = ours.save(ComprMode::None).unwrap();
            std::fs::write(dir.join(format!("{case}.ours_{op}.seal")), &ours_bytes).unwrap();
            let entry = per_level.entry(primes).or_default();
            entry.1 += 1;
            if same_bytes_but_version(&ours_bytes, &seal_bytes) && ours == seal {
                entry.0 += 1;
            } else {
                let differing = differing_residues(&ours, &seal);
                mismatches.push(format!(
                    "{case} {op}: sizes {} / {}, {differing} of {} residues differ",
                    ours.size,
                    seal.size,
                    seal.data.len()
                ));
            }
        }
    }
    for (primes, (same, total)) in &per_level {
        println!("{name}, level of {primes} primes: {same} of {total} results byte-identical");
    }
    assert!(
        mismatches.is_empty(),
        "not byte-identical:\n{}",
        mismatches.join("\n")
    );
    assert_eq!(per_level.len(), first, "every data level covered");
    print!("{name}: {}", seal_side("check", &dir));
}

#[test]
fn multiply_and_square_are_byte_identical_with_seal_seal4096() {
    check_preset(
        "seal4096",
        EncryptionParameters::for_preset::<zeppelin::Seal4096>(),
    );
}

#[test]
fn multiply_and_square_are_byte_identical_with_seal_seal8192() {
    check_preset(
        "seal8192",
        EncryptionParameters::for_preset::<zeppelin::Seal8192>(),
    );
}
