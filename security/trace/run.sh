#!/usr/bin/env bash
# Trace-equivalence constant-time check on the emulated M55 (Helium) and M33 (issue 11,
# item 3; issue 31: CCA2 under every configuration, the C library on both boards): builds
# the QEMU plugin (security/trace/ctrace.c), both Rust trace images and the C library's
# trace image for both boards (firmware/c: make trace), then runs
# every secret-path operation on pairs of inputs that differ only in secret data and requires
# equal instruction-address and memory-address traces; leaky controls must be caught.
# Writes reports/security/trace.md; exit status non-zero on any mismatch of a real operation
# or a control not caught. Traces are hashed in the plugin and stay out of git (temp dir).
#
# Usage: security/trace/run.sh [--short]   (full: 100 pairs per operation; short: 3)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"

source "$root/firmware/tools.sh"
need qemu-system-arm qemu-system-arm
need arm-none-eabi-nm binutils-arm-none-eabi
need arm-none-eabi-objdump binutils-arm-none-eabi
need cc gcc
need arm-none-eabi-gcc gcc-arm-none-eabi
need make make
need python3 python3
find_cargo
exit_if_missing

pairs=100
control_pairs=16
form=full
if [ "${1:-}" = "--short" ]; then
  pairs=3
  control_pairs=8
  form=short
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cc -O2 -Wall -Wextra -Werror -shared -fPIC -o "$work/ctrace.so" "$here/ctrace.c"

m55_target="${CARGO_TARGET_DIR_M55:-$root/target-m55}"
m33_target="${CARGO_TARGET_DIR_M33:-$root/target-rblwe-m33}"
extra=()
[ "$via_rustup" = 0 ] || extra=(--config 'unstable.build-std=[]')
(cd "$root/firmware/m55" && CARGO_TARGET_DIR="$m55_target" \
  "${cargo_cmd[@]}" build --release -j 2 --bin trace)
(cd "$root/firmware/m33" && CARGO_TARGET_DIR="$m33_target" \
  "${cargo_cmd[@]}" build --release -j 2 --bin trace ${extra[@]+"${extra[@]}"})
# The C library's trace image on both boards (firmware/c/src/trace.c, issue 31).
std_flags=-Zbuild-std=core
[ "$via_rustup" = 0 ] || std_flags=
for board in m55 m33; do
  make -s -C "$root/firmware/c" BOARD="$board" CARGO="${cargo_cmd[*]}" STD_FLAGS="$std_flags" trace 2>&1 |
    grep -Ev '^(warning: unknown and unstable feature|  \||  = |$|warning: `.*` \(lib\) generated|.*GNU-stack|.*NOTE: This behaviour)' || true
  [ -f "$root/firmware/c/build/$board/zeppelin-c-trace.elf" ] || { echo "trace: the C trace image for $board did not build" >&2; exit 1; }
done

mkdir -p "$root/reports/security"
python3 "$here/trace.py" --plugin "$work/ctrace.so" \
  --m55 "$m55_target/thumbv8m.main-none-eabihf/release/trace" \
  --m33 "$m33_target/thumbv8m.main-none-eabihf/release/trace" \
  --c-m55 "$root/firmware/c/build/m55/zeppelin-c-trace.elf" \
  --c-m33 "$root/firmware/c/build/m33/zeppelin-c-trace.elf" \
  --pairs "$pairs" --control-pairs "$control_pairs" --form "$form" \
  --report "$root/reports/security/trace.md"
