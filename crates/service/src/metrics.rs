//! [`Metrics`]: the service's counters, shown by `GET /metrics` in the Prometheus text format
//! (version 0.0.4). Plain atomics: counting never blocks a request.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};

use axum::http::StatusCode;

/// The aggregation ops, in the order of [`Metrics`]' per-op counters.
const OPS: [&str; 3] = ["sum", "sum_of_squares", "dot"];
/// The error kinds of `zeppelin_errors_total`, by HTTP status.
const ERROR_KINDS: [&str; 6] = [
    "bad_request",
    "not_found",
    "conflict",
    "too_large",
    "unavailable",
    "internal",
];

/// Counters of uploads, aggregations, receipts and errors since the process started.
#[derive(Debug, Default)]
pub struct Metrics {
    uploads_stored: AtomicU64,
    uploads_duplicate: AtomicU64,
    uploads_rejected: AtomicU64,
    upload_bytes: AtomicU64,
    /// `[op][ok, error]`.
    aggregations: [[AtomicU64; 2]; 3],
    aggregated_ciphertexts: AtomicU64,
    errors: [AtomicU64; 6],
    receipts_stored: AtomicU64,
    receipts_invalid: AtomicU64,
    partials_refused: AtomicU64,
}

fn add(counter: &AtomicU64, n: u64) {
    counter.fetch_add(n, Ordering::Relaxed);
}

fn get(counter: &AtomicU64) -> u64 {
    counter.load(Ordering::Relaxed)
}

impl Metrics {
    /// An upload of `bytes` bytes was stored (`duplicate`: its key was already there).
    pub fn upload_stored(&self, bytes: usize, duplicate: bool) {
        if duplicate {
            add(&self.uploads_duplicate, 1);
        } else {
            add(&self.uploads_stored, 1);
            add(&self.upload_bytes, bytes as u64);
        }
    }

    /// An upload was refused (bad name, bad ciphertext, full stream, store failure, ...).
    pub fn upload_rejected(&self) {
        add(&self.uploads_rejected, 1);
    }

    /// An aggregation `op` (`sum`, `sum_of_squares` or `dot`) finished, covering `count`
    /// uploads when it succeeded.
    pub fn aggregation(&self, op: &str, result: Result<u64, ()>) {
        let Some(i) = OPS.iter().position(|&o| o == op) else {
            return;
        };
        match result {
            Ok(count) => {
                add(&self.aggregations[i][0], 1);
                add(&self.aggregated_ciphertexts, count);
            }
            Err(()) => add(&self.aggregations[i][1], 1),
        }
    }

    /// A request was answered with `status`; counts it when it is an error.
    pub fn response(&self, status: StatusCode) {
        let kind = match status {
            StatusCode::BAD_REQUEST => 0,
            StatusCode::NOT_FOUND => 1,
            StatusCode::CONFLICT => 2,
            StatusCode::PAYLOAD_TOO_LARGE => 3,
            StatusCode::SERVICE_UNAVAILABLE => 4,
            s if s.is_server_error() => 5,
            s if s.is_client_error() => 0,
            _ => return,
        };
        add(&self.errors[kind], 1);
    }

    /// The receipt task answered a stored upload: `valid` with a receipt, else with an error
    /// receipt (and deleted it).
    pub fn receipt(&self, valid: bool) {
        add(
            if valid {
                &self.receipts_stored
            } else {
                &self.receipts_invalid
            },
            1,
        );
    }

    /// The cluster coordinator refused a partial result read from the bus (no valid tag
    /// under the cluster key): never combined.
    pub fn partial_refused(&self) {
        add(&self.partials_refused, 1);
    }

    /// Partial results refused so far.
    pub fn partials_refused(&self) -> u64 {
        get(&self.partials_refused)
    }

    /// Uploads stored so far (not counting duplicates).
    pub fn uploads_stored(&self) -> u64 {
        get(&self.uploads_stored)
    }

    /// The counters in the Prometheus text format 0.0.4.
    pub fn render(&self) -> String {
        let mut out = String::new();
        let mut family = |name: &str, help: &str, samples: &[(String, u64)]| {
            let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} counter");
            for (labels, value) in samples {
                let _ = writeln!(out, "{name}{labels} {value}");
            }
        };
        family(
            "zeppelin_uploads_total",
            "Uploads received over HTTP, by result.",
            &[
                (r#"{result="stored"}"#.into(), get(&self.uploads_stored)),
                (
                    r#"{result="duplicate"}"#.into(),
                    get(&self.uploads_duplicate),
                ),
                (r#"{result="rejected"}"#.into(), get(&self.uploads_rejected)),
            ],
        );
        family(
            "zeppelin_upload_bytes_total",
            "Bytes of stored uploads (duplicates not counted).",
            &[(String::new(), get(&self.upload_bytes))],
        );
        let aggregations: Vec<(String, u64)> = OPS
            .iter()
            .zip(&self.aggregations)
            .flat_map(|(op, [ok, error])| {
                [
                    (format!(r#"{{op="{op}",result="ok"}}"#), get(ok)),
                    (format!(r#"{{op="{op}",result="error"}}"#), get(error)),
                ]
            })
            .collect();
        family(
            "zeppelin_aggregations_total",
            "Aggregations, by op and result.",
            &aggregations,
        );
        family(
            "zeppelin_aggregated_ciphertexts_total",
            "Ciphertexts covered by successful aggregations.",
            &[(String::new(), get(&self.aggregated_ciphertexts))],
        );
        let errors: Vec<(String, u64)> = ERROR_KINDS
            .iter()
            .zip(&self.errors)
            .map(|(kind, c)| (format!(r#"{{kind="{kind}"}}"#), get(c)))
            .collect();
        family(
            "zeppelin_errors_total",
            "Requests answered with an error, by kind.",
            &errors,
        );
        family(
            "zeppelin_receipts_total",
            "Stored uploads answered by the receipt task (NATS store), by result.",
            &[
                (r#"{result="stored"}"#.into(), get(&self.receipts_stored)),
                (r#"{result="invalid"}"#.into(), get(&self.receipts_invalid)),
            ],
        );
        family(
            "zeppelin_partials_refused_total",
            "Partial results from the worker group refused: no valid tag under the cluster key.",
            &[(String::new(), get(&self.partials_refused))],
        );
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_render_in_the_text_format() {
        let m = Metrics::default();
        m.upload_stored(100, false);
        m.upload_stored(100, true);
        m.upload_rejected();
        m.aggregation("dot", Ok(7));
        m.aggregation("sum", Err(()));
        m.response(StatusCode::CONFLICT);
        m.response(StatusCode::OK);
        m.response(StatusCode::INTERNAL_SERVER_ERROR);
        m.receipt(false);
        m.partial_refused();
        let text = m.render();
        for line in [
            "# TYPE zeppelin_uploads_total counter",
            r#"zeppelin_uploads_total{result="stored"} 1"#,
            r#"zeppelin_uploads_total{result="duplicate"} 1"#,
            r#"zeppelin_uploads_total{result="rejected"} 1"#,
            "zeppelin_upload_bytes_total 100",
            r#"zeppelin_aggregations_total{op="dot",result="ok"} 1"#,
            r#"zeppelin_aggregations_total{op="sum",result="error"} 1"#,
            r#"zeppelin_aggregations_total{op="sum",result="ok"} 0"#,
            "zeppelin_aggregated_ciphertexts_total 7",
            r#"zeppelin_errors_total{kind="conflict"} 1"#,
            r#"zeppelin_errors_total{kind="internal"} 1"#,
            r#"zeppelin_errors_total{kind="bad_request"} 0"#,
            r#"zeppelin_receipts_total{result="invalid"} 1"#,
            r#"zeppelin_receipts_total{result="stored"} 0"#,
            "zeppelin_partials_refused_total 1",
        ] {
            assert!(
                text.lines().any(|l| l == line),
                "missing {line:?} in\n{text}"
            );
        }
    }
}
