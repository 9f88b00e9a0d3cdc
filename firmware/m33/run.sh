#!/usr/bin/env bash
# Builds the RBLWE Cortex-M33 firmware and runs it under QEMU (mps2-an505, +dsp):
# on-target kernel/gadget tests and the host's KAT files (PASS/FAIL lines), then the staged
# table of instructions retired (QEMU -icount shift=0; never cycles), then static memory from
# arm-none-eabi-size, the binary check of the masked gadget (check-gadget.py) and the binary
# constant-time audit of the test image and the branch-free, hardened and masked size probes
# (security/audit). Exit status: 0 only if the firmware, the gadget check and the audit pass.
#
# It installs nothing; missing tools are named with the apt-get line that provides them.
# Usage: firmware/m33/run.sh
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$here"

source "$here/../tools.sh"
need qemu-system-arm qemu-system-arm
need arm-none-eabi-ld binutils-arm-none-eabi
need arm-none-eabi-objdump binutils-arm-none-eabi
need arm-none-eabi-nm binutils-arm-none-eabi
need arm-none-eabi-size binutils-arm-none-eabi
need python3 python3
find_cargo
exit_if_missing
# rustup's prebuilt core: switch off .cargo/config.toml's build-std.
extra=()
[ "$via_rustup" = 0 ] || extra=(--config 'unstable.build-std=[]')

export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$here/../../target-rblwe-m33}"
elf="$CARGO_TARGET_DIR/thumbv8m.main-none-eabihf/release/rblwe-m33"

"${cargo_cmd[@]}" build --release -j 2 ${extra[@]+"${extra[@]}"}

status=0
echo "== on target: qemu-system-arm -M mps2-an505 -icount shift=0 =="
timeout 1800 qemu-system-arm -M mps2-an505 -nographic -icount shift=0 \
  -semihosting-config enable=on,target=native -kernel "$elf" || status=$?
echo "firmware exit status: $status"

echo "== static memory (arm-none-eabi-size -A; static RAM = .data + .bss, whole image) =="
arm-none-eabi-size -A "$elf" | awk 'NR<=2 || ($1 ~ /^\.(vector_table|text|rodata|data|bss|uninit)$/)'
arm-none-eabi-size -A "$elf" | awk '$1==".data"||$1==".bss"{s+=$2} END{print "static RAM (.data + .bss): " s " bytes"}'

echo "== flash per stage, Set 1 (size probe: one image per stage with only its keygen/encrypt/decrypt; flash = .vector_table + .text + .rodata + .data) =="
probe="$CARGO_TARGET_DIR/thumbv8m.main-none-eabihf/release/size-probe"
for stage in probe-branchy probe-branch-free probe-cca probe-masked; do
  "${cargo_cmd[@]}" build --release -j 2 --bin size-probe --features "$stage" ${extra[@]+"${extra[@]}"} 2>/dev/null
  cp "$probe" "$probe-$stage"  # kept per stage for the binary audit
  flash=$(arm-none-eabi-size -A "$probe" | awk '$1==".vector_table"||$1==".text"||$1==".rodata"||$1==".data"{s+=$2} END{print s}')
  probe_status=0
  timeout 120 qemu-system-arm -M mps2-an505 -nographic -icount shift=0 \
    -semihosting-config enable=on,target=native -kernel "$probe" || probe_status=$?
  if [ $probe_status -eq 0 ]; then verdict=PASS; else verdict=FAIL; status=1; fi
  echo "$verdict size-probe $stage: flash $flash bytes (runs keygen/encrypt/decrypt once, exit $probe_status)"
done

echo "== binary check of the masked gadget =="
gadget_status=0
python3 "$here/check-gadget.py" --self-test || gadget_status=$?
python3 "$here/check-gadget.py" "$elf" || gadget_status=$?
[ $status -ne 0 ] || status=$gadget_status

echo "== binary audit: the M33 images =="
audit_status=0
release="$CARGO_TARGET_DIR/thumbv8m.main-none-eabihf/release"
python3 "$here/../../security/audit/audit.py" m33-test="$elf" m33-default="$release/size-probe-probe-branch-free" \
  m33-hardened="$release/size-probe-probe-cca" m33-masked="$release/size-probe-probe-masked" || audit_status=$?
[ $status -ne 0 ] || status=$audit_status
exit $status
