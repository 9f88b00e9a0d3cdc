#!/usr/bin/env bash
# Static binary audit of every firmware image (security suite part "audit"): the eight M55
# images (test, seal8192, six clients) and the four M33 images (test, and the size probes of
# the branch-free, hardened CCA2 and masked CCA2 stages). Rules: engine.py; images, roots and
# negative controls: images.py; reasons: reviews.py; pinned counts: expected/*.json.
# Writes reports/security/audit.md; exit status 0 only if every image passes.
#
# Usage: security/audit/run.sh [--short] [--update]
#   (default)  build the firmware images that the audit reads (cargo, release), then audit
#   --short    audit the images already built (CI: after firmware/m55/run.sh and firmware/m33/run.sh)
#   --update   re-pin the finding counts (expected/*.json) after a review; commit them with the
#              reviews that justify the change
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
short=0
update=()
for arg in "$@"; do
  case "$arg" in
    --short) short=1 ;;
    --update) update=(--update) ;;
    *) echo "usage: security/audit/run.sh [--short] [--update]" >&2; exit 2 ;;
  esac
done
source "$root/firmware/tools.sh"
need arm-none-eabi-objdump binutils-arm-none-eabi
need python3 python3
[ $short = 1 ] || find_cargo
exit_if_missing

m55="${M55_TARGET_DIR:-$root/target-m55}/thumbv8m.main-none-eabihf/release"
m33="${M33_TARGET_DIR:-$root/target-rblwe-m33}/thumbv8m.main-none-eabihf/release"
if [ $short = 0 ]; then
  (cd "$root/firmware/m55" && CARGO_TARGET_DIR="$(dirname "$(dirname "$m55")")" "${cargo_cmd[@]}" build --release -j 2)
  extra=()
  [ "$via_rustup" = 0 ] || extra=(--config 'unstable.build-std=[]')
  (cd "$root/firmware/m33" && export CARGO_TARGET_DIR="$(dirname "$(dirname "$m33")")" &&
    "${cargo_cmd[@]}" build --release -j 2 ${extra[@]+"${extra[@]}"} &&
    for stage in probe-branch-free probe-cca probe-masked; do
      "${cargo_cmd[@]}" build --release -j 2 --bin size-probe --features "$stage" ${extra[@]+"${extra[@]}"} &&
        cp "$m33/size-probe" "$m33/size-probe-$stage"
    done)
fi

images=(m55-test="$m55/zeppelin-m55" m55-seal8192="$m55/seal8192")
for client in client_symmetric_seal4096 client_symmetric_zeppelin4096 client_symmetric_seal8192 \
    client_public_seal4096 client_public_zeppelin4096 client_public_seal8192; do
  images+=(m55-$client="$m55/$client")
done
images+=(m33-test="$m33/rblwe-m33" m33-default="$m33/size-probe-probe-branch-free"
  m33-hardened="$m33/size-probe-probe-cca" m33-masked="$m33/size-probe-probe-masked")
for spec in "${images[@]}"; do
  if [ ! -f "${spec#*=}" ]; then
    echo "security/audit/run.sh: ${spec#*=} not found: build the firmware first (firmware/m55/run.sh, firmware/m33/run.sh) or run without --short" >&2
    exit 2
  fi
done
mkdir -p "$root/reports/security"
status=0
python3 "$here/audit.py" ${update[@]+"${update[@]}"} --report "$root/reports/security/audit.md" "${images[@]}" || status=$?
python3 "$here/audit.py" --self-test m55-test="$m55/zeppelin-m55" || status=1
exit $status
