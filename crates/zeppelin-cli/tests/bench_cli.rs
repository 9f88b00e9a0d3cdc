//! `zeppelin bench --json` through the built binary: the output is one JSON object naming
//! every device operation and the NTT of the preset's first prime with a positive median, the
//! shape `scripts/peer_bench.py` reads; the table names the same rows. Speed itself is never
//! asserted (house rule: speed lives in benchmarks).
// Helpers in integration tests are test code too (clippy.toml only covers #[test] fns).
#![expect(
    clippy::unwrap_used,
    clippy::panic,
    reason = "test helpers outside #[test] fns: a failure should panic"
)]

use std::process::Command;

use zeppelin::{Params, Seal4096, Zeppelin4096};

const BIN: &str = env!("CARGO_BIN_EXE_zeppelin");

const OPERATIONS: [&str; 8] = [
    "encode_seeded_encrypt",
    "encode_symmetric_encrypt",
    "encode_public_encrypt",
    "decrypt_decode",
    "keygen_secret_public",
    "expand_seed",
    "ntt_forward",
    "ntt_inverse",
];

/// The presets, with the NTT prime and degree `bench` must report for each.
const PRESETS: [(&str, u32, usize); 2] = [
    ("seal4096", Seal4096::DATA_PRIMES[0], Seal4096::N),
    (
        "zeppelin4096",
        Zeppelin4096::DATA_PRIMES[0],
        Zeppelin4096::N,
    ),
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

fn bench_output(args: &[&str]) -> String {
    let out = Command::new(BIN).args(args).output().unwrap();
    assert!(
        out.status.success(),
        "zeppelin bench failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.stderr.is_empty());
    String::from_utf8(out.stdout).unwrap()
}

fn bench_json(preset: &str) -> String {
    let text = bench_output(&["bench", "--preset", preset, "--runs", "3", "--json"]);
    let json = text.trim();
    assert_eq!(json.lines().count(), 1, "one JSON line: {json}");
    assert!(json.starts_with('{') && json.ends_with("}}"), "{json}");
    json.to_string()
}

#[test]
fn json_names_every_operation_with_a_positive_median() {
    for (preset, prime, degree) in PRESETS {
        let json = bench_json(preset);
        assert_eq!(field(&json, "preset"), format!("\"{preset}\""));
        assert_eq!(field(&json, "runs"), "3");
        assert_eq!(field(&json, "unit"), "\"us\"");
        assert_eq!(field(&json, "ntt_prime"), prime.to_string());
        assert_eq!(field(&json, "ntt_degree"), degree.to_string());
        let backend = field(&json, "backend");
        assert!(
            ["\"portable\"", "\"avx2\"", "\"avx512\""].contains(&backend),
            "{backend}"
        );
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
fn table_has_one_row_per_operation_and_names_the_ntt_prime() {
    let text = bench_output(&["bench", "--preset", "seal4096", "--runs", "1"]);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2 + OPERATIONS.len(), "{text}");
    assert!(lines[0].starts_with("zeppelin bench: preset seal4096, n = 4096, t = 65537"));
    let ntt = format!(
        "NTT rows: q = {} (first data prime), n = 4096",
        Seal4096::DATA_PRIMES[0]
    );
    assert!(lines[1].starts_with(&ntt), "{text}");
    for (row, label) in lines[2..].iter().zip([
        "encode + seeded encrypt",
        "encode + symmetric encrypt",
        "encode + public-key encrypt",
        "decrypt + decode",
        "keygen (secret + public)",
        "expand seed (adapt",
        "NTT forward, one prime",
        "NTT inverse with n^-1 scaling, one prime",
    ]) {
        assert!(row.starts_with(label), "{row}");
        let us: f64 = row
            .trim_end_matches(" µs")
            .rsplit(' ')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        assert!(us.is_finite() && us > 0.0, "{row}");
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
