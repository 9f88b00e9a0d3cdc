#!/usr/bin/env bash
# Builds the Cortex-M55 firmware and runs it under QEMU (mps3-an547): on-target tests
# (PASS/FAIL lines, exit status = failures), then the measurement table
# (instructions retired under QEMU -icount shift=0, never cycles), then static memory per
# section and the binary audit of all eight images (audit.sh -> security/audit).
# Beside the tables it prints machine-readable lines (README, "Machine-readable figures"):
#   METRIC <preset> <operation> <variant> <instructions> <stack-bytes>   (from the images)
#   RAM <image> <bytes>                                                  (client images)
# keeps its output in $CARGO_TARGET_DIR/m55-run.txt and fails unless check_metrics.py finds
# every expected line there, numeric.
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
log="$CARGO_TARGET_DIR/m55-run.txt"
mkdir -p "$CARGO_TARGET_DIR"
: > "$log"

"${cargo_cmd[@]}" build --release -j 2

echo "== static memory per section (arm-none-eabi-size -A; .twiddles = NTT tables in DTCM, .bulk = test vectors and KAT files only, .bss = the test objects of both presets, tapes and buffers) =="
arm-none-eabi-size -A "$elf" | awk 'NR<=2 || ($1 ~ /^\.(vector_table|text|rodata|twiddles|data|bss|uninit|bulk)$/)'

status=0
echo "== on target: qemu-system-arm -M mps3-an547 -icount shift=0 =="
timeout 1800 qemu-system-arm -M mps3-an547 -nographic -icount shift=0 \
  -semihosting-config enable=on,target=native -kernel "$elf" | tee -a "$log" || status=$?
echo "firmware exit status: $status"

echo "== on target: the paper-tables image (Table 3: scalar vs Helium NTT end to end; Table 7: live memory per stage) =="
tables_status=0
timeout 1800 qemu-system-arm -M mps3-an547 -nographic -icount shift=0 \
  -semihosting-config enable=on,target=native \
  -kernel "$CARGO_TARGET_DIR/thumbv8m.main-none-eabihf/release/paper_tables" | tee -a "$log" || tables_status=$?
echo "paper-tables image exit status: $tables_status"
[ $tables_status -eq 0 ] || status=$tables_status

echo "== client images: the client's own static memory (bytes; RAM = .data + .bss + .uninit, FLASH = .vector_table + .text + .rodata + .data, DTCM = .twiddles, read-only NTT tables) =="
echo "== on target: the Seal8192 image (n = 8192, seven primes: KATs, instructions, stack) =="
seal8192_status=0
timeout 1800 qemu-system-arm -M mps3-an547 -nographic -icount shift=0 \
  -semihosting-config enable=on,target=native \
  -kernel "$CARGO_TARGET_DIR/thumbv8m.main-none-eabihf/release/seal8192" | tee -a "$log" || seal8192_status=$?
echo "seal8192 image exit status: $seal8192_status"
[ $seal8192_status -eq 0 ] || status=$seal8192_status

for client in client_symmetric_seal4096 client_symmetric_zeppelin4096 client_symmetric_seal8192 client_public_seal4096 client_public_zeppelin4096 client_public_seal8192; do
  bin="$CARGO_TARGET_DIR/thumbv8m.main-none-eabihf/release/$client"
  client_status=0
  timeout 600 qemu-system-arm -M mps3-an547 -nographic -icount shift=0 \
    -semihosting-config enable=on,target=native -kernel "$bin" | tee -a "$log" || client_status=$?
  [ $client_status -eq 0 ] || status=$client_status
  arm-none-eabi-size -A "$bin" | awk -v name="$client" '
    $1 == ".vector_table" || $1 == ".text" || $1 == ".rodata" { flash += $2 }
    $1 == ".data" { flash += $2; ram += $2 }
    $1 == ".bss" || $1 == ".uninit" { ram += $2 }
    $1 == ".twiddles" { dtcm += $2 }
    END { printf "MEMORY | %s | RAM %d | FLASH %d | DTCM tables %d |\n", name, ram, flash, dtcm
          printf "RAM %s %d\n", name, ram }' | tee -a "$log"
done

echo "== machine-readable lines: check_metrics.py $log =="
metrics_status=0
python3 "$here/check_metrics.py" "$log" || metrics_status=$?
[ $status -ne 0 ] || status=$metrics_status

if [ "${1:-}" != "--no-audit" ]; then
  audit_status=0
  "$here/audit.sh" "$elf" || audit_status=$?
  [ $status -ne 0 ] || status=$audit_status
fi
exit $status
