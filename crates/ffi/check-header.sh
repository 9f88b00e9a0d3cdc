#!/usr/bin/env bash
# Regenerates include/zeppelin.h with cbindgen and fails if it differs from the committed
# header (the C ABI drifted from the Rust source). `--write` updates the header instead.
# Needs cbindgen: cargo install cbindgen --locked
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$here"
command -v cbindgen >/dev/null 2>&1 || { echo "check-header.sh: cbindgen missing (cargo install cbindgen --locked)" >&2; exit 2; }
fresh="$(mktemp)"
trap 'rm -f "$fresh"' EXIT
cbindgen --quiet --config cbindgen.toml --crate zeppelin-ffi --output "$fresh"
if [ "${1:-}" = "--write" ]; then
  cp "$fresh" include/zeppelin.h
  echo "include/zeppelin.h regenerated"
elif diff -u include/zeppelin.h "$fresh"; then
  echo "PASS include/zeppelin.h matches cbindgen's output"
else
  echo "FAIL include/zeppelin.h drifted from crates/ffi: run crates/ffi/check-header.sh --write" >&2
  exit 1
fi
