//! `zeppelin bench --json` through the built binary: the output is one JSON object naming
//! every device operation with a positive median, the shape `scripts/bench_vs_seal.py`
//! reads. Speed itself is never asserted (house rule: speed lives in benchmarks).
// Helpers in integration tests are test code too (clippy.toml only covers #[test] fns).
#![expect(
    clippy::unwrap_used,
    clippy::panic,
    reason = "test helpers outside #[test] fns: a failure should panic"
)]

use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_zeppelin");

const OPERATIONS: [&str; 6] = [
    "encode_seeded_encrypt",
    "encode_symmetric_encrypt",
    "encode_public_encrypt",
    "decrypt_decode",
    "keygen_secret_public",
    "expand_seed",
];

/// The text right after `"key":` up to the next `,` or `}`, trimmed.
fn field<'a>(json: &'a str, key: &str) -> &'a str {
    let tag = format!("\"{key}\":");
    let at = json
        .find(&tag)
        .unwrap_or_else(|| panic!("{key} missing in {json}"));
    let rest = &json[at + tag.len()..];
    let end = rest.find([',', '}']).unwrap_or(rest.len());
    rest[..end].trim()
}

fn bench_json(preset: &str) -> String {
    let out = Command::new(BIN)
        .args(["bench", "--preset", preset, "--runs", "3", "--json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "zeppelin bench failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.stderr.is_empty());
    let text = String::from_utf8(out.stdout).unwrap();
    let json = text.trim();
    assert_eq!(json.lines().count(), 1, "one JSON line: {json}");
    assert!(json.starts_with('{') && json.ends_with("}}"), "{json}");
    json.to_string()
}

#[test]
fn json_names_every_operation_with_a_positive_median() {
    for preset in ["seal4096", "zeppelin4096"] {
        let json = bench_json(preset);
        assert_eq!(field(&json, "preset"), format!("\"{preset}\""));
        assert_eq!(field(&json, "runs"), "3");
        assert_eq!(field(&json, "unit"), "\"us\"");
        let ops_at = json.find("\"operations\": {").unwrap();
        let ops = &json[ops_at..];
        assert_eq!(ops.matches(':').count(), 1 + OPERATIONS.len(), "{ops}");
        for op in OPERATIONS {
            let us: f64 = field(ops, op)
                .parse()
                .unwrap_or_else(|e| panic!("{op} in {json}: {e}"));
            assert!(us.is_finite() && us > 0.0, "{op} = {us} in {json}");
        }
    }
}

#[test]
fn zero_runs_is_a_usage_error() {
    let out = Command::new(BIN)
        .args(["bench", "--runs", "0", "--json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
}
