#!/usr/bin/env bash
# Builds the Cortex-M55 firmware and runs it under QEMU (mps3-an547): on-target tests
# (PASS/FAIL lines, exit status = failures), then the measurement table
# (instructions retired under QEMU -icount shift=0, never cycles), then static memory per
# section and the binary audit (audit.sh).
#
# It installs nothing. Missing tools are named with the apt-get line that provides them.
# Usage: firmware/m55/run.sh [--no-audit]
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$here"

missing=()
need() { command -v "$1" >/dev/null 2>&1 || missing+=("$1 (Debian package: $2)"); }
need qemu-system-arm qemu-system-arm
need arm-none-eabi-ld binutils-arm-none-eabi
need arm-none-eabi-objdump binutils-arm-none-eabi
need arm-none-eabi-size binutils-arm-none-eabi
need python3 python3

# Two ways to a compiler that can build `core` for thumbv8m.main-none-eabihf:
# (a) rustup with the target installed; (b) Debian's rustc-web + rust-web-src with -Zbuild-std.
cargo_cmd=()
if command -v rustup >/dev/null 2>&1 && rustup target list --installed 2>/dev/null | grep -qx thumbv8m.main-none-eabihf; then
  cargo_cmd=(cargo)
  build_std=()
elif [ -x /usr/bin/rustc ] && [ -x /usr/bin/cargo ] && [ -d /usr/lib/rustlib/src/rust/library/core ]; then
  export RUSTC=/usr/bin/rustc RUSTC_BOOTSTRAP=1
  cargo_cmd=(/usr/bin/cargo)
  build_std=()
else
  missing+=("a Rust compiler for thumbv8m.main-none-eabihf: either 'rustup target add thumbv8m.main-none-eabihf', or Debian packages rustc-web cargo-web rust-web-src (Debian's /usr/bin/rustc, /usr/bin/cargo and the library source)")
fi

if [ ${#missing[@]} -gt 0 ]; then
  echo "run.sh: missing tools:" >&2
  for m in "${missing[@]}"; do echo "  - $m" >&2; done
  echo "Install on Debian/Ubuntu with:" >&2
  echo "  sudo apt-get update && sudo apt-get install -y rustc-web cargo-web rust-web-src gcc-arm-none-eabi binutils-arm-none-eabi qemu-system-arm python3" >&2
  exit 2
fi

export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$here/../../target-m55}"
elf="$CARGO_TARGET_DIR/thumbv8m.main-none-eabihf/release/zeppelin-m55"

"${cargo_cmd[@]}" build --release -j 2 "${build_std[@]}"

echo "== static memory per section (arm-none-eabi-size -A; .twiddles = NTT tables in DTCM, .bulk = test vectors and KAT files only, .uninit = the test objects of both presets) =="
arm-none-eabi-size -A "$elf" | awk 'NR<=2 || ($1 ~ /^\.(vector_table|text|rodata|twiddles|data|bss|uninit|bulk)$/)'

status=0
echo "== on target: qemu-system-arm -M mps3-an547 -icount shift=0 =="
timeout 1800 qemu-system-arm -M mps3-an547 -nographic -icount shift=0 \
  -semihosting-config enable=on,target=native -kernel "$elf" || status=$?
echo "firmware exit status: $status"

echo "== client images: the client's own static memory (bytes; RAM = .data + .bss + .uninit, FLASH = .vector_table + .text + .rodata + .data, DTCM = .twiddles, read-only NTT tables) =="
for client in client_symmetric_seal4096 client_symmetric_zeppelin4096 client_public_seal4096 client_public_zeppelin4096; do
  bin="$CARGO_TARGET_DIR/thumbv8m.main-none-eabihf/release/$client"
  client_status=0
  timeout 600 qemu-system-arm -M mps3-an547 -nographic -icount shift=0 \
    -semihosting-config enable=on,target=native -kernel "$bin" || client_status=$?
  [ $client_status -eq 0 ] || status=$client_status
  arm-none-eabi-size -A "$bin" | awk -v name="$client" '
    $1 == ".vector_table" || $1 == ".text" || $1 == ".rodata" { flash += $2 }
    $1 == ".data" { flash += $2; ram += $2 }
    $1 == ".bss" || $1 == ".uninit" { ram += $2 }
    $1 == ".twiddles" { dtcm += $2 }
    END { printf "MEMORY | %s | RAM %d | FLASH %d | DTCM tables %d |\n", name, ram, flash, dtcm }'
done

if [ "${1:-}" != "--no-audit" ]; then
  audit_status=0
  "$here/audit.sh" "$elf" || audit_status=$?
  [ $status -ne 0 ] || status=$audit_status
fi
exit $status
