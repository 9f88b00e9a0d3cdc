#!/usr/bin/env bash
# Binary constant-time audit of the Cortex-M55 firmware ELF: disassembles it with
# arm-none-eabi-objdump and checks every function on the secret path (the list and the exact
# rules are in audit.py, next to this script). Exit status 0 only if all pass.
# Usage: firmware/m55/audit.sh [FIRMWARE.elf]   (default: the release build of run.sh)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
for tool in arm-none-eabi-objdump python3; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "audit.sh: missing $tool; install with: sudo apt-get install -y binutils-arm-none-eabi python3" >&2
    exit 2
  fi
done
elf="${1:-${CARGO_TARGET_DIR:-$here/../../target-m55}/thumbv8m.main-none-eabihf/release/zeppelin-m55}"
if [ ! -f "$elf" ]; then
  echo "audit.sh: $elf not found; build it first (firmware/m55/run.sh)" >&2
  exit 2
fi
echo "== binary audit: $elf =="
exec python3 "$here/audit.py" "$elf"
