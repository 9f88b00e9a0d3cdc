#!/usr/bin/env bash
# Instruction-level single-fault campaign on RBLWE CCA2 decryption in the Cortex-M33 ELF
# (issue 11 item 4): Unicorn runs the firmware's fault_entry_decrypt_set1 (Set 1, Hardened)
# once per fault: instruction skips, register bit flips, N/Z/C/V flips and zeroing at every
# instruction of the comparison, mask, selection, output, decode and check code, for valid
# and tampered ciphertexts; plus the unhardened configuration as a negative control (it must
# release forgeries). Writes reports/security/fault.md and reports/security/fault-*.png.
# Exit status: non-zero on any forgery or silent corruption, on a fault that was not
# injected, if no loop-completion counter fired, or if the control releases nothing
# (errors whose output was not erased are counted and reported).
# Needs the M33 ELF built by firmware/m33/run.sh, the venv (.venv: unicorn, pyelftools,
# capstone, matplotlib) and arm-none-eabi-addr2line/c++filt (binutils-arm-none-eabi).
# Usage: security/fault/run.sh [--short]     (--short: about 1,000 trials, for CI)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
short=()
[ "${1:-}" = "--short" ] && short=(--short)
py="$root/.venv/bin/python"
[ -x "$py" ] || py=python3
elf="${M33_ELF:-$root/target-rblwe-m33/thumbv8m.main-none-eabihf/release/rblwe-m33}"
[ -f "$elf" ] || { echo "fault: missing $elf (run firmware/m33/run.sh first)" >&2; exit 2; }
out="$root/reports/security"
mkdir -p "$out"
work="${FAULT_WORK_DIR:-}"
if [ -z "$work" ]; then work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT; fi
# Full: a random 12,000 of the planned trials (all loop-counter, accumulator and mask trials
# kept); short: 1,000.
if [ ${#short[@]} -gt 0 ]; then trials=1000; limit=150; control_trials=200; else trials=12000; limit=5400; control_trials=400; fi
limit="${FAULT_LIMIT_SECONDS:-$limit}"   # a bound on the trial loop; the report says if it cut the plan
nice -n 10 "$py" "$here/campaign.py" --elf "$elf" --max-trials "$trials" --json "$work/hardened.json" \
  --limit-seconds "$limit"
nice -n 10 "$py" "$here/campaign.py" --elf "$elf" --config unhardened \
  --regions comparison,mask,selection --max-trials "$control_trials" --json "$work/control.json" \
  --limit-seconds 120
cmd="security/fault/run.sh${short[*]:+ --short}"
"$py" "$here/report.py" --hardened "$work/hardened.json" --control "$work/control.json" \
  --out "$out" --command "$cmd" --notes "$here/findings.md"
