#!/usr/bin/env bash
# Binary check of the CCA2 selection (issue 11 item 1, review F1): no conditional branch
# between the final ciphertext comparison and the output stores, in every
# rblwe::cca::decrypt instance of the release M33 ELF and of the host release binary.
# The pinned listings of the code before the fix (controls/) must fail the same check.
# Writes reports/security/cca-branch.md; exits non-zero if a control passes or a binary fails.
# Needs the M33 ELF (firmware/m33/run.sh builds it) and target/release/zeppelin
# (cargo build --release -p zeppelin-cli); --short is the same check (it takes seconds).
# Usage: security/cca-branch/run.sh [--short]
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
elf="${M33_ELF:-${CARGO_TARGET_DIR_M33:-$root/target-rblwe-m33}/thumbv8m.main-none-eabihf/release/rblwe-m33}"
host="${HOST_BIN:-${CARGO_TARGET_DIR:-$root/target}/release/zeppelin}"
report="$root/reports/security/cca-branch.md"
mkdir -p "$(dirname "$report")"
for f in "$elf" "$host"; do
  [ -f "$f" ] || { echo "cca-branch: missing $f (build the firmware with firmware/m33/run.sh and the CLI with cargo build --release -p zeppelin-cli)" >&2; exit 2; }
done
log="$(mktemp)"; trap 'rm -f "$log"' EXIT
status=0
{
  echo "== negative controls (code before the fix; must FAIL) =="
  for c in m33:m33-before-fix.txt x86:host-before-fix.txt; do
    arch="${c%%:*}"; file="$here/controls/${c#*:}"
    if python3 "$here/check.py" --listing "$file" --arch "$arch"; then
      echo "CONTROL NOT CAUGHT: ${c#*:} passed"; status=1
    else
      echo "control caught: ${c#*:}"
    fi
  done
  echo "== release binaries (must PASS) =="
  python3 "$here/check.py" --m33 "$elf" --host "$host" || status=1
} 2>&1 | tee "$log" || true
# tee masks the status inside the braces; recompute from the log.
grep -q '^CONTROL NOT CAUGHT' "$log" && status=1
grep -q '^FAIL \(M33\|host\) ' "$log" && status=1
[ "$(grep -c '^control caught' "$log")" = 2 ] || status=1
m33_pass="$(grep -c '^PASS M33 ' "$log" || true)"; host_pass="$(grep -c '^PASS host ' "$log" || true)"
{
  echo "## CCA2 selection: no branch on ciphertext validity (binary check)"
  echo
  echo "\`security/cca-branch/check.py\` disassembles every \`rblwe::cca::decrypt\` instance and"
  echo "rejects any conditional branch (Thumb b<cond>/cbz/cbnz/tbb/tbh and IT-predicated PC"
  echo "writes; x86 jcc) between the last ciphertext-comparison call and the output cross-check"
  echo "call (mask computation, selection, both output stores). Counted-loop back-edges (flags"
  echo "from an induction register with a constant step) are listed as notes."
  echo
  echo "| binary | instances passing |"
  echo "|---|---|"
  echo "| M33 release ELF (\`$(basename "$elf")\`) | $m33_pass of $(grep -c '^\(PASS\|FAIL\) M33 ' "$log" || true) |"
  echo "| host release CLI (\`$(basename "$host")\`) | $host_pass of $(grep -c '^\(PASS\|FAIL\) host ' "$log" || true) |"
  echo "| negative controls (pinned listings before the fix) | $(grep -c '^control caught' "$log") of 2 caught |"
  echo
  echo "Result: $([ $status = 0 ] && echo PASS || echo FAIL)"
  echo
  echo '```'
  grep -E '^(FAIL|PASS|control|CONTROL|M33:|host:|security/)' "$log" | cut -c1-220
  echo '```'
} > "$report.tmp" && mv "$report.tmp" "$report"
echo "cca-branch: $([ $status = 0 ] && echo PASS || echo FAIL) (report: reports/security/cca-branch.md)"
exit $status
