//! What every test driving Microsoft SEAL through seal-python shares (zeppelin-seal's and
//! zeppelin-server's; the server's tests include this file by path).
//!
//! `SEAL_PYTHON` names the interpreter; otherwise the repository's `.venv/bin/python` or
//! `/tmp/sealvenv/bin/python` is used. Tests fail (they do not skip) when none can
//! `import seal`.
#![allow(dead_code, reason = "each test crate uses a part")]

use std::path::{Path, PathBuf};
use std::process::Command;

/// The first interpreter that can `import seal`.
#[expect(clippy::panic, reason = "test support: no SEAL is a test failure")]
pub fn python() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut candidates = Vec::new();
    if let Some(p) = std::env::var_os("SEAL_PYTHON") {
        candidates.push(PathBuf::from(p));
    }
    candidates.push(root.join(".venv/bin/python"));
    candidates.push(PathBuf::from("/tmp/sealvenv/bin/python"));
    for c in &candidates {
        let ok = Command::new(c)
            .args(["-c", "import seal"])
            .output()
            .map(|o| o.status.success())
            .unwrap_or(false);
        if ok {
            return c.clone();
        }
    }
    panic!("no Python with seal-python found (tried {candidates:?}); set SEAL_PYTHON");
}

/// Our writer's bytes equal SEAL's, but for the minor version byte of each header (4.1 here,
/// 4.4 in seal-python). Different lengths are never the same.
pub fn same_bytes_but_version(ours: &[u8], seal: &[u8]) -> bool {
    if ours.len() != seal.len() {
        return false;
    }
    let mut normalized = ours.to_vec();
    let mut i = 0;
    while i + 5 <= normalized.len() {
        if normalized[i..i + 5] == [0x5E, 0xA1, 0x10, 4, 1] {
            normalized[i + 4] = seal[i + 4];
        }
        i += 1;
    }
    normalized == seal
}

/// How many residues of two ciphertexts differ (what a byte mismatch report names).
pub fn differing_residues(
    ours: &zeppelin_seal::Ciphertext,
    seal: &zeppelin_seal::Ciphertext,
) -> usize {
    ours.data
        .iter()
        .zip(&seal.data)
        .filter(|(x, y)| x != y)
        .count()
}

/// Runs [`python()`] with `args`, asserts that it succeeded (showing its output if not) and
/// returns its standard output.
#[expect(
    clippy::unwrap_used,
    reason = "test support: a failed spawn is a test failure"
)]
pub fn run_python<S: AsRef<std::ffi::OsStr>>(args: &[S]) -> String {
    let out = Command::new(python()).args(args).output().unwrap();
    assert!(
        out.status.success(),
        "python {:?} failed:\n{}\n{}",
        args.first().map(|a| a.as_ref().to_owned()),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}
