#!/usr/bin/env bash
# One-time, idempotent set-up of a fresh machine: the Debian packages for the Cortex-M
# firmware (compiler with core's source, ARM binutils, QEMU) and a repo-local virtualenv with
# Microsoft SEAL's Python bindings for the interoperability tests.
set -euo pipefail
cd "$(dirname "$0")/.."

need_apt=()
command -v qemu-system-arm >/dev/null 2>&1 || need_apt+=(qemu-system-arm)
command -v arm-none-eabi-objdump >/dev/null 2>&1 || need_apt+=(gcc-arm-none-eabi)
[ -x /usr/bin/rustc ] && [ -x /usr/bin/cargo ] || need_apt+=(rustc-web cargo-web)
[ -d /usr/lib/rustlib/src/rust/library ] || need_apt+=(rust-web-src)
[ -x /usr/bin/clippy-driver ] || need_apt+=(rust-web-clippy)
# The CLI's hostile-input tests trace open(2) flags and set resource limits on the child.
command -v strace >/dev/null 2>&1 || need_apt+=(strace)
command -v prlimit >/dev/null 2>&1 || need_apt+=(util-linux)
# The fleet demo's --plot renders its labels with DejaVu Sans (read at run time); bundled
# SQLite (rusqlite) builds with the host C compiler.
[ -f /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf ] || need_apt+=(fonts-dejavu-core)
command -v cc >/dev/null 2>&1 || need_apt+=(gcc)
# The C library's host test uses OpenSSL's AES-128-CTR as an independent board keystream.
[ -f /usr/include/openssl/evp.h ] || need_apt+=(libssl-dev)
# The cluster tests and benchmark start a three-node NATS JetStream cluster (with its MQTT
# gateway) on loopback; Debian's nats-server (2.9) is the one they are written for.
command -v nats-server >/dev/null 2>&1 || need_apt+=(nats-server)
if [ ${#need_apt[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "setup: missing Debian packages: ${need_apt[*]}; run: sudo apt-get install -y ${need_apt[*]}" >&2
    exit 1
  fi
  echo "setup: installing ${need_apt[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi

# The venv also carries the security suite's tools: Unicorn (M33 emulation for fault campaigns
# and leakage traces), pyelftools and Capstone (reading the firmware ELFs), matplotlib (plots).
py_pkgs=(seal-python==4.4.0 pytest numpy zstandard==0.25.0 'unicorn>=2.1,<2.2' pyelftools 'capstone==5.0.*' matplotlib)
if [ ! -x .venv/bin/python ] ||
  ! .venv/bin/python -c "import seal, pytest, numpy, zstandard, unicorn, elftools, capstone, matplotlib" >/dev/null 2>&1; then
  echo "setup: creating .venv with seal-python 4.4.0, pytest and the security tools"
  [ -x .venv/bin/python ] || python3 -m venv .venv
  .venv/bin/pip install -q --disable-pip-version-check "${py_pkgs[@]}"
fi
# cargo-fuzz for the fuzzing suite (security/fuzz/run.sh; libFuzzer on stable with
# RUSTC_BOOTSTRAP=1 for the AddressSanitizer build).
if ! command -v cargo-fuzz >/dev/null 2>&1; then
  echo "setup: installing cargo-fuzz 0.13.2"
  cargo install -q cargo-fuzz --version 0.13.2 --locked
fi
# cbindgen regenerates crates/ffi/include/zeppelin.h (crates/ffi/check-header.sh).
if ! command -v cbindgen >/dev/null 2>&1; then
  echo "setup: installing cbindgen 0.29.4"
  cargo install -q cbindgen --version 0.29.4 --locked
fi
echo "setup: ok"
