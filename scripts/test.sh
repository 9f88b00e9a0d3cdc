#!/usr/bin/env bash
# The test command: set up a fresh machine, then run every test the project has.
#  - lint: rustfmt, clippy on the host workspace and on the firmware (their compiler and flags)
#  - cargo tests of all host crates (release: the big-integer and statistical tests are heavy),
#    built once; the `zeppelin` binary they build is the one every later section uses
#  - interoperability tests against Microsoft SEAL (seal-python 4.4.0), the Rust evaluator byte
#    for byte against SEAL's (cargo tests of zeppelin-server, and `zeppelin eval` in
#    tests/interop), the service's crash test (kill -9 during an ingest of 10,000 uploads), the
#    cluster fault test (a NATS node and a worker killed during 10,000 HTTP and MQTT uploads),
#    the Python package, the load test's, the cluster figures' and the peer benchmark's short forms
#  - in a second lane beside the host tests (its own log, printed when it ends): Cortex-M55
#    firmware under QEMU (KATs on target, MVE vs portable, measurements) + binary audit,
#    Cortex-M33 RBLWE firmware under QEMU, the C library (header drift, sanitizer test, C
#    firmware under QEMU); QEMU counts instructions (-icount), so the load does not change them
#  - the security suite's short forms (security/run.sh --short: binary audit, CCA2 branch
#    check, trace equivalence, fault campaign, TVLA, dudect, fuzzing) -> reports/security.md,
#    alone on the machine (dudect and TVLA measure)
# Every section prints its wall time; the run ends with a table of them.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/sections.sh

section setup
bash scripts/setup.sh

section "lint: rustfmt"
cargo fmt --all -- --check
for crate in firmware/harness firmware/m55 firmware/m33; do
  cargo fmt --manifest-path "$crate/Cargo.toml" -- --check
done

section "lint: host clippy"
cargo clippy --workspace --all-targets --release -q -- -D warnings
# The host fault simulation is its own test target (the hooks never reach the KAT builds).
cargo clippy -p rblwe --release -q --features fault-sim --test fault_campaign -- -D warnings

section "host tests: build"
# One build serves the tests and every later section: `cargo test` builds the CLI binary for
# the CLI's integration tests into target/release/zeppelin (a separate `cargo build -p
# zeppelin-cli` would compile 33 crates again with the smaller feature set of that one package).
cargo test --workspace --release --no-run -q
cargo test --release -q -p rblwe --features fault-sim --test fault_campaign --no-run
export ZEPPELIN_BIN="$PWD/target/release/zeppelin"
[ -x "$ZEPPELIN_BIN" ] || { echo "test.sh: the test build left no $ZEPPELIN_BIN" >&2; exit 1; }

# The firmware lane: single-threaded QEMU runs and the Debian compiler's builds, beside the host
# tests (which wait on sockets, subprocesses and NATS much of the time).
firmware_log="$(mktemp)"
firmware_rows="$(mktemp)"
(
  set -euo pipefail
  section_rows_file="$firmware_rows"
  source scripts/lib/sections.sh
  section "lint: firmware clippy"
  # With the compiler and flags of their run.sh (firmware/tools.sh picks rustup's or Debian's
  # cargo; each .cargo/config.toml applies from its own directory; the harness library has
  # none, so it gets the target explicitly). m33 twice: the default build and with every
  # size-probe stage (one target directory for both).
  (
    source firmware/tools.sh
    find_cargo
    find_clippy
    exit_if_missing
    std=(--config 'unstable.build-std=["core"]')
    [ "$via_rustup" = 0 ] || std=(--config 'unstable.build-std=[]')
    for spec in "harness --target thumbv8m.main-none-eabihf" m55 m33 "m33 --all-features"; do
      set -- $spec
      (cd "firmware/$1" && CARGO_TARGET_DIR="$PWD/../../target-clippy-$1" \
        "${cargo_cmd[@]}" clippy --manifest-path Cargo.toml --release -q "${@:2}" "${std[@]}" -- -D warnings)
    done
  )
  section "Cortex-M55 firmware (QEMU mps3-an547)"
  # The packed NTT kernels are generated: the committed file must be what the generator
  # writes, and the generator first runs the emitted program in its interpreter against a
  # reference NTT.
  python3 crates/zeppelin-ring/src/mve/gen_ntt.py --check
  bash firmware/m55/run.sh
  section "Cortex-M33 RBLWE firmware (QEMU mps2-an505)"
  bash firmware/m33/run.sh
  section "C library: header drift, host sanitizer test"
  bash crates/ffi/check-header.sh
  bash crates/ffi/tests/c/run.sh
  section "C firmware under QEMU (AN547, AN505)"
  bash firmware/c/run.sh
  end_section
) > "$firmware_log" 2>&1 &
firmware_pid=$!
# If the host lane fails, the firmware lane is stopped with it (and its log shown).
kill_tree() { # a process and all its descendants
  local child
  for child in $(pgrep -P "$1" 2>/dev/null); do kill_tree "$child"; done
  kill "$1" 2>/dev/null || true
}
trap 'kill_tree $firmware_pid; tail -n 40 "$firmware_log" 2>/dev/null | sed "s/^/firmware lane: /"; section_table' EXIT

section "host tests: run"
cargo test --workspace --release
cargo test --release -p rblwe --features fault-sim --test fault_campaign

section "SEAL interoperability"
# The x86-64 kernels must inline every vector intrinsic: a closure inside a
# #[target_feature] kernel does not inherit its instruction set, and its intrinsics then
# compile to calls (the NTT ran 4x slower that way). Checked on the binary, for our code
# (third-party code doing it is listed, not failed: see the script).
python3 scripts/check_intrinsic_calls.py "$ZEPPELIN_BIN"
.venv/bin/python -m pytest -q tests/interop

section "Python package"
bash scripts/python_test.sh  # pip install ./python, pytest beside seal-python

section "aggregation service load test, short form"
# Full form: cargo run --release -p zeppelin-service --example service_load.
# 1,000 uploads from 100 concurrent clients over loopback, then sum, sum_of_squares and dot,
# each decrypted and checked against the plaintext result (exits non-zero on a mismatch).
# The test build compiled every example (target/release/examples/); `cargo run -p` would build
# the package again with its own, smaller feature set.
load_out="$(mktemp -d)"
target/release/examples/service_load --short --out "$load_out"
[ -s "$load_out/load-short.md" ] || { echo "test.sh: the load test wrote no report" >&2; exit 1; }

section "scale-out figures, short form"
# Full form: cargo run --release -p zeppelin-cli --example cluster_bench.
# A three-node nats-server cluster on loopback, the real serve --store nats:// and worker
# processes: 1,000 uploads over HTTP and over MQTT (receipted), then sum with 1, 2 and 4
# workers, each decrypted and checked. (The fault test, cluster_faults, ran with the
# zeppelin-cli tests above.)
target/release/examples/cluster_bench --short --out "$load_out"
rm -rf "$load_out"

section "peer benchmark, short form"
# Full form: bash scripts/peer_bench.sh. The report checks, then the pipeline itself:
# bench/peer (tfhe-ntt, fhe.rs; its own workspace) is built and every row timed once beside
# SEAL; no speed goal is asserted here.
.venv/bin/python -m pytest -q tests/bench
cargo test --release -q --manifest-path bench/peer/Cargo.toml --target-dir target
bash scripts/peer_bench.sh --short

section "firmware lane (waiting for it)"
firmware_status=0
wait "$firmware_pid" || firmware_status=$?
trap section_table EXIT
echo "---- firmware lane log ----"
cat "$firmware_log"
echo "---- end of firmware lane log (exit $firmware_status) ----"
end_section
section_import "$firmware_rows"
rm -f "$firmware_log" "$firmware_rows"
[ "$firmware_status" = 0 ] || { echo "test.sh: the firmware lane failed (exit $firmware_status)" >&2; exit 1; }

section "security suite, short forms"
# Full forms: bash security/run.sh.
bash security/run.sh --short
