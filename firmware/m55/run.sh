#!/usr/bin/env bash
# Builds the Cortex-M55 firmware and runs it under QEMU (mps3-an547): on-target tests
# (PASS/FAIL lines, exit status = failures), then the measurement table
# (instructions retired under QEMU -icount shift=0, never cycles), then static memory per
# section and the binary audit of all eight images (audit.sh -> security/audit).
#
# It installs nothing. Missing tools are named with the apt-get line that provides them.
# Usage: firmware/m55/run.sh [--no-audit]
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$here"

source "$here/../tools.sh"
need qemu-system-arm qemu-system-arm
need arm-none-eabi-ld binutils-arm-none-eabi
need arm-none-eabi-objdump binutils-arm-none-eabi
need arm-none-eabi-size binutils-arm-none-eabi
need python3 python3
find_cargo
exit_if_missing

export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$here/../../target-m55}"
elf="$CARGO_TARGET_DIR/thumbv8m.main-none-eabihf/release/zeppelin-m55"

"${cargo_cmd[@]}" build --release -j 2

echo "== static memory per section (arm-none-eabi-size -A; .twiddles = NTT tables in DTCM, .bulk = test vectors and KAT files only, .bss = the test objects of both presets, tapes and buffers) =="
arm-none-eabi-size -A "$elf" | awk 'NR<=2 || ($1 ~ /^\.(vector_table|text|rodata|twiddles|data|bss|uninit|bulk)$/)'

status=0
echo "== on target: qemu-system-arm -M mps3-an547 -icount shift=0 =="
timeout 1800 qemu-system-arm -M mps3-an547 -nographic -icount shift=0 \
  -semihosting-config enable=on,target=native -kernel "$elf" || status=$?
echo "firmware exit status: $status"

echo "== client images: the client's own static memory (bytes; RAM = .data + .bss + .uninit, FLASH = .vector_table + .text + .rodata + .data, DTCM = .twiddles, read-only NTT tables) =="
echo "== on target: the Seal8192 image (n = 8192, seven primes: KATs, instructions, stack) =="
seal8192_status=0
timeout 1800 qemu-system-arm -M mps3-an547 -nographic -icount shift=0 \
  -semihosting-config enable=on,target=native \
  -kernel "$CARGO_TARGET_DIR/thumbv8m.main-none-eabihf/release/seal8192" || seal8192_status=$?
echo "seal8192 image exit status: $seal8192_status"
[ $seal8192_status -eq 0 ] || status=$seal8192_status

for client in client_symmetric_seal4096 client_symmetric_zeppelin4096 client_symmetric_seal8192 client_public_seal4096 client_public_zeppelin4096 client_public_seal8192; do
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
