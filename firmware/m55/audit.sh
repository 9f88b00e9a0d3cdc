#!/usr/bin/env bash
# Binary constant-time audit of the Cortex-M55 images: the test image, the Seal8192 image and
# the six client images, each with its own roots, reviews and pinned counts (security/audit:
# rules in engine.py, images in images.py). Exit status 0 only if every image passes.
# Usage: firmware/m55/audit.sh [FIRMWARE.elf]   (default: the release build of run.sh; the
#        other images are read from the same directory)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
for tool in arm-none-eabi-objdump python3; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "audit.sh: missing $tool; install with: sudo apt-get install -y binutils-arm-none-eabi python3" >&2
    exit 2
  fi
done
elf="${1:-${CARGO_TARGET_DIR:-$here/../../target-m55}/thumbv8m.main-none-eabihf/release/zeppelin-m55}"
dir="$(dirname "$elf")"
images=(m55-test="$elf" m55-seal8192="$dir/seal8192")
for client in client_symmetric_seal4096 client_symmetric_zeppelin4096 client_symmetric_seal8192 \
    client_public_seal4096 client_public_zeppelin4096 client_public_seal8192; do
  images+=(m55-$client="$dir/$client")
done
for spec in "${images[@]}"; do
  if [ ! -f "${spec#*=}" ]; then
    echo "audit.sh: ${spec#*=} not found; build it first (firmware/m55/run.sh)" >&2
    exit 2
  fi
done
echo "== binary audit: the M55 images in $dir =="
exec python3 "$here/../../security/audit/audit.py" "${images[@]}"
