#!/usr/bin/env bash
# The main job: set up a fresh machine, build, and run everything end to end with figures.
#  1. The fleet (`zeppelin demo`): 100 simulated sensor devices encrypt a day of readings with
#     the seeded path and upload them over HTTP to the Rust aggregation service (in process,
#     SQLite store in a private temp directory); the service sums and sums the squares; the key
#     owner decrypts per-slot mean and variance, checked against the plaintext truth.
#  2. BFV with Microsoft SEAL as the server: device encrypts -> SEAL computes (square,
#     relinearize, rotate, mod switch) -> device decrypts, every slot checked (scripts/demo.py).
#  3. The OpenFHE-exact EvalMult + BV relinearization engine on the shared OpenFHE vectors.
# The peer benchmark (the NTT, the client and the server against tfhe-ntt, fhe.rs and SEAL in
# one run) is a command of its own: bash scripts/peer_bench.sh (its build of the peers takes
# minutes). Set-up here installs only what these three need (scripts/setup.sh --demo).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --demo
cargo build --release -q -p zeppelin-cli
export ZEPPELIN_BIN="$PWD/target/release/zeppelin"

out="$(mktemp -d)"

echo "== 1. A fleet of devices -> the Rust aggregation service -> the key owner =="
"$ZEPPELIN_BIN" demo --plot "$out/fleet.png"
echo "plot: $out/fleet.png"

echo
echo "== 2. BFV device <-> Microsoft SEAL server =="
.venv/bin/python scripts/demo.py

echo
echo "== 3. OpenFHE BV relinearization engine on OpenFHE 1.5.1 vectors =="
vectors="${ZEPPELIN_VECTORS:-../shared/vectors}/openfhe-bv-n4096-l4-b2"
"$ZEPPELIN_BIN" evalmult --in "$vectors" --out "$out" --check

echo
echo "The peer benchmark: bash scripts/peer_bench.sh"
