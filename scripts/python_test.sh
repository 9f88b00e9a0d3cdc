#!/usr/bin/env bash
# The Python package's tests: `pip install ./python` (the documented install: maturin builds
# the extension in release mode in the workspace's target/) into a virtualenv with
# seal-python 4.4.0, then pytest python/tests against target/release/zeppelin (built here if
# missing) and the OpenFHE vectors in ../shared/vectors (ZEPPELIN_VECTORS overrides).
# The venv is the repo's .venv (scripts/setup.sh), or $ZEPPELIN_PY_VENV.
set -euo pipefail
cd "$(dirname "$0")/.."
venv="$(realpath -m "${ZEPPELIN_PY_VENV:-.venv}")"
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi
if ! "$venv/bin/python" -c "import seal, numpy, pytest" >/dev/null 2>&1; then
  "$venv/bin/pip" install -q --disable-pip-version-check seal-python==4.4.0 numpy pytest
fi
[ -x target/release/zeppelin ] || cargo build --release -q -p zeppelin-cli
"$venv/bin/pip" install -q --disable-pip-version-check --force-reinstall --no-deps ./python
# From the repo's root: run inside python/, the source directory `zeppelin/` (without the
# built extension) would shadow the installed package.
ZEPPELIN_BIN="${ZEPPELIN_BIN:-$PWD/target/release/zeppelin}" "$venv/bin/python" -m pytest -q python/tests
