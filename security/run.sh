#!/usr/bin/env bash
# The security suite, one command: every part under security/<part>/run.sh, then
# reports/security.md assembled from their sections (reports/security/<part>.md) and plots.
#   bash security/run.sh           full forms (campaigns of the sizes the issue asks for)
#   bash security/run.sh --short   short forms (what CI runs)
#   bash security/run.sh [--short] --only PART...   run those parts only, then assemble the
#                                  report from every part's last recorded run
#   bash security/run.sh [--short] --assemble       run nothing, only assemble the report
# Run after the firmware images are built (firmware/m55/run.sh, firmware/m33/run.sh).
# Exits non-zero when any part fails its goal; every part runs regardless. Each part's
# outcome is kept in reports/security/<part>.status (form, exit status, seconds, commit), so
# that the full campaigns can run one at a time and still give one report.
set -uo pipefail
cd "$(dirname "$0")/.."
form=full
only=()
assemble=0
while [ $# -gt 0 ]; do
  case "$1" in
    --short) form=short ;;
    --only) shift; only=("$@"); break ;;
    --assemble) assemble=1 ;;
    *) echo "usage: security/run.sh [--short] [--only PART... | --assemble]" >&2; exit 2 ;;
  esac
  shift
done
# Static checks first, then emulated traces and faults, leakage, timing, fuzzing.
order=(audit cca-branch trace fault tvla dudect fuzz)
parts=()
for p in "${order[@]}"; do [ -f "security/$p/run.sh" ] && parts+=("$p"); done
for d in security/*/; do
  p=$(basename "$d")
  [ -f "security/$p/run.sh" ] && [[ ! " ${parts[*]} " =~ " $p " ]] && parts+=("$p")
done
mkdir -p reports/security
run=("${parts[@]}")
if [ ${#only[@]} -gt 0 ]; then
  for p in "${only[@]}"; do
    [ -f "security/$p/run.sh" ] || { echo "security/run.sh: no part '$p'" >&2; exit 2; }
  done
  run=("${only[@]}")
fi
[ $assemble = 1 ] && run=()
commit=$(git rev-parse --short HEAD)$(git diff --quiet || echo '+uncommitted')
for p in "${run[@]}"; do
  echo "== security: $p ($form) =="
  start=$(date +%s)
  if [ "$form" = short ]; then bash "security/$p/run.sh" --short; else bash "security/$p/run.sh"; fi
  rc=$?
  printf 'form=%s status=%s seconds=%s commit=%s date=%s\n' "$form" "$rc" \
    "$(( $(date +%s) - start ))" "$commit" "$(date -u +%Y-%m-%dT%H:%MZ)" > "reports/security/$p.status"
done
field() { sed -n "s/.*\\b$2=\\([^ ]*\\).*/\\1/p" "reports/security/$1.status" 2>/dev/null; }
failed=0
{
  echo "# Security evidence"
  echo
  echo "Assembled by \`bash security/run.sh\` on $(date -u +%Y-%m-%d) at commit $commit from each part's last recorded run (its form, commit and date below)."
  echo "Each section below is written by its part's own \`security/<part>/run.sh\`; the plots are in \`reports/security/\`."
  echo
  echo "| part | form | result | seconds | commit | date |"
  echo "|---|---|---|---:|---|---|"
  for p in "${parts[@]}"; do
    rc=$(field "$p" status)
    r=pass
    if [ -z "$rc" ]; then r="not run"; failed=1
    elif [ "$rc" != 0 ]; then r="FAIL (exit $rc)"; failed=1; fi
    [ "$(field "$p" form)" = "$form" ] || failed=1
    echo "| [$p](#$p) | $(field "$p" form) | $r | $(field "$p" seconds) | $(field "$p" commit) | $(field "$p" date) |"
  done
  for p in "${parts[@]}"; do
    echo
    echo "<a id=\"$p\"></a>"
    echo
    if [ -f "reports/security/$p.md" ]; then
      # Plots are referenced relative to reports/security/; this file is one level up.
      sed -E 's#\]\((\./)?([A-Za-z0-9_.-]+\.png)\)#](security/\2)#g' "reports/security/$p.md"
    else
      echo "## $p"
      echo
      echo "No report was written (the part failed before writing it)."
    fi
  done
} > reports/security.md
echo "security: wrote reports/security.md"
exit $failed
