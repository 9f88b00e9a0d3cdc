#!/usr/bin/env bash
# The peer benchmark (issue 12, item 5): Zeppelin's NTT and BFV client against tfhe-ntt 0.7,
# fhe.rs 0.1.1 and Microsoft SEAL 4.1 (seal-python 4.4.0) in one run with interleaved rounds.
#
#   bash scripts/peer_bench.sh [--rounds R] [--short] [other scripts/peer_bench.py options]
#
# Builds (release) the `zeppelin` CLI and the round server bench/peer (a workspace of its own,
# so the peers never become dependencies of the libraries), then runs scripts/peer_bench.py
# with the project's venv (.venv, made by scripts/setup.sh). The full form writes
# reports/bench/peer.{json,md,png}; --short (CI: 3 rounds, checks that the pipeline works and
# every row is present, asserts no speed goal) writes reports/bench/short/ (not committed).
set -euo pipefail
cd "$(dirname "$0")/.."

python=.venv/bin/python
if [ ! -x "$python" ]; then
    echo "peer_bench: $python missing: run bash scripts/setup.sh first" >&2
    exit 1
fi

# A caller that built the CLI already (scripts/test.sh: its test build) names it in ZEPPELIN_BIN.
if [ -z "${ZEPPELIN_BIN:-}" ]; then
    cargo build --release -q -p zeppelin-cli
    ZEPPELIN_BIN="$PWD/target/release/zeppelin"
fi
# The root target directory: the crates both builds share (same versions, features and release
# profile) are compiled once. Not --locked: when a library gains a dependency, cargo adds it to
# bench/peer/Cargo.lock and keeps every other version.
cargo build --release -q --manifest-path bench/peer/Cargo.toml --target-dir target

ZEPPELIN_BIN="$ZEPPELIN_BIN" \
PEER_BIN="$PWD/target/release/zeppelin-peer-bench" \
    exec "$python" scripts/peer_bench.py "$@"
