#!/usr/bin/env bash
# Emulated TVLA on the Cortex-M33 (Unicorn): builds the `tvla` firmware image
# (firmware/m33/src/bin/tvla.rs) and the native trace recorder (tracer.c), then runs the
# fixed-versus-random Welch t-tests of tvla.py on register-write and store traces. Writes
# reports/security/tvla.md and reports/security/tvla-*.png. Exit status 0 only if every
# leaky control is flagged and no masked target is (see tvla.py for the targets).
#
# Usage: security/tvla/run.sh [--short]
#   full form:  10,000 traces per target (2 x 5,000, each half balanced and shuffled);
#               100,000 for the gadget targets (isw-and, leaky-and, a2b)
#   --short:    CI form, 200 traces per decryption target, 600 per share target,
#               5,000 per gadget target (the leaky controls are flagged at |t| > 20 already)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cd "$root"

source "$root/firmware/tools.sh"
need arm-none-eabi-ld binutils-arm-none-eabi
need arm-none-eabi-addr2line binutils-arm-none-eabi
need cc gcc
find_cargo
exit_if_missing
extra=()
[ "$via_rustup" = 0 ] || extra=(--config 'unstable.build-std=[]')

python="${PYTHON:-$root/.venv/bin/python}"
[ -x "$python" ] || python=python3
if ! "$python" -c 'import unicorn, capstone, elftools, numpy, matplotlib' 2>/dev/null; then
  echo "run.sh: $python lacks unicorn/capstone/pyelftools/numpy/matplotlib (scripts/setup.sh installs them into .venv)" >&2
  exit 2
fi

export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$root/target-rblwe-m33}"
(cd firmware/m33 && "${cargo_cmd[@]}" build --release -j 2 --bin tvla ${extra[@]+"${extra[@]}"})
elf="$CARGO_TARGET_DIR/thumbv8m.main-none-eabihf/release/tvla"

mkdir -p reports/security
export TVLA_BUILD="$CARGO_TARGET_DIR/tvla-tracer"
if [ "${1:-}" = "--short" ]; then
  exec "$python" "$here/tvla.py" "$elf" --label short --traces 200 --share-traces 600 \
    --gadget-traces 5000
else
  exec "$python" "$here/tvla.py" "$elf" --label full --traces 10000 --gadget-traces 100000
fi
