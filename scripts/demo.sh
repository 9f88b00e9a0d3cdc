#!/usr/bin/env bash
# The main job: set up a fresh machine, build, and run everything end to end with figures.
#  1. BFV: device encrypts -> SEAL server computes (square, relinearize, rotate, mod switch)
#     -> device decrypts, every slot checked (scripts/demo.py).
#  2. The OpenFHE-exact EvalMult + BV relinearization engine on the shared OpenFHE vectors.
#  3. The peer benchmark: the NTT and the client against tfhe-ntt, fhe.rs and SEAL in one run
#     (scripts/peer_bench.sh; its report goes to a temporary directory, not reports/bench).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cargo build --release -q -p zeppelin-cli
export ZEPPELIN_BIN="$PWD/target/release/zeppelin"

echo "== 1. BFV device <-> Microsoft SEAL server =="
.venv/bin/python scripts/demo.py

echo
echo "== 2. OpenFHE BV relinearization engine on OpenFHE 1.5.1 vectors =="
vectors="${ZEPPELIN_VECTORS:-../shared/vectors}/openfhe-bv-n4096-l4-b2"
out="$(mktemp -d)"
"$ZEPPELIN_BIN" evalmult --in "$vectors" --out "$out" --check

echo
echo "== 3. Zeppelin vs tfhe-ntt, fhe.rs and SEAL on this host =="
bash scripts/peer_bench.sh --out "$out/peer-bench"
