#!/usr/bin/env bash
# The test command: set up a fresh machine, then run every test the project has.
#  - cargo tests of all host crates (release: the big-integer and statistical tests are heavy)
#  - interoperability tests (a)-(e) against Microsoft SEAL (seal-python 4.4.0)
#  - Cortex-M55 firmware under QEMU (KATs on target, MVE vs portable, measurements) + binary audit
#  - Cortex-M33 RBLWE firmware under QEMU (KATs on target, staged measurements, gadget check)
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh

echo "== lint =="
cargo fmt --all -- --check
for crate in firmware/harness firmware/m55 firmware/m33; do
  cargo fmt --manifest-path "$crate/Cargo.toml" -- --check
done
cargo clippy --workspace --all-targets --release -q -- -D warnings

echo "== host tests =="
cargo test --workspace --release

echo "== SEAL interoperability =="
cargo build --release -q -p zeppelin-cli
ZEPPELIN_BIN="$PWD/target/release/zeppelin" .venv/bin/python -m pytest -q tests/interop

echo "== Cortex-M55 firmware (QEMU mps3-an547) =="
bash firmware/m55/run.sh

echo "== Cortex-M33 RBLWE firmware (QEMU mps2-an505) =="
bash firmware/m33/run.sh
