#!/usr/bin/env bash
# Builds the C example firmware for both boards (firmware/c/Makefile: C only, linked against
# libzeppelin.a built from crates/ffi for thumbv8m.main-none-eabihf, with Helium for the M55
# and without for the M33) and runs each under QEMU (mps3-an547, mps2-an505, -icount
# shift=0): PASS/FAIL lines, then "INSTR | preset | operation | instructions | stack" rows
# (instructions retired under QEMU, never cycles), then static memory per section.
# Exit status: 0 only if both images pass. It installs nothing; missing tools are named.
# Usage: firmware/c/run.sh [m55|m33]
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$here"

source "$here/../tools.sh"
need qemu-system-arm qemu-system-arm
need arm-none-eabi-gcc gcc-arm-none-eabi
need arm-none-eabi-size binutils-arm-none-eabi
need make make
need python3 python3
find_cargo
exit_if_missing
# rustup's prebuilt core: no -Zbuild-std.
std_flags=-Zbuild-std=core
[ "$via_rustup" = 0 ] || std_flags=

status=0
for board in ${1:-m55 m33}; do
  case "$board" in
    m55) machine=mps3-an547 ;;
    m33) machine=mps2-an505 ;;
    *) echo "run.sh: unknown board $board (m55 or m33)" >&2; exit 2 ;;
  esac
  echo "== C example firmware, $board: build (make BOARD=$board) =="
  make -s BOARD="$board" CARGO="${cargo_cmd[*]}" STD_FLAGS="$std_flags" 2>&1 |
    grep -Ev '^(warning: unknown and unstable feature|  \||  = |$|warning: `.*` \(lib\) generated)' || true
  elf="$here/build/$board/zeppelin-c.elf"
  [ -f "$elf" ] || { echo "FAIL build of $board"; status=1; continue; }
  echo "== static memory (arm-none-eabi-size -A; .bss = the KAT objects of both presets and buffers, .bulk = KAT files only, .twiddles = NTT tables in DTCM) =="
  arm-none-eabi-size -A "$elf" | awk 'NR<=2 || ($1 ~ /^\.(vector_table|text|rodata|twiddles|data|bss|stack|bulk)$/)'
  # The measured stack is painted below the caller's frame: a function whose frame alone
  # exceeds the 64 KiB stack would jump over the paint into .bss. Check every frame.
  largest=$(arm-none-eabi-objdump -d --no-show-raw-insn "$elf" | python3 -c '
import re, sys
fn, best = "", (0, "")
for line in sys.stdin:
    m = re.match(r"^[0-9a-f]+ <(.*)>:$", line)
    if m:
        fn = m.group(1)
    m = re.search(r"\bsub(?:\.w)?\s+sp, (?:sp, )?#(0x[0-9a-f]+|\d+)", line)
    if m:
        best = max(best, (int(m.group(1), 0), fn))
print(best[0], best[1])')
  echo "largest stack frame: $largest bytes"
  if [ "${largest%% *}" -gt 16384 ]; then echo "FAIL a stack frame above 16 KiB: $largest"; status=1; fi
  echo "== on target: qemu-system-arm -M $machine -icount shift=0 =="
  board_status=0
  timeout 1800 qemu-system-arm -M "$machine" -nographic -icount shift=0 \
    -semihosting-config enable=on,target=native -kernel "$elf" || board_status=$?
  echo "$board firmware exit status: $board_status"
  [ $board_status -eq 0 ] || status=$board_status
done
exit $status
