#!/usr/bin/env bash
# One-time, idempotent set-up of a fresh machine.
#   bash scripts/setup.sh          everything the tests need (scripts/test.sh)
#   bash scripts/setup.sh --demo   only what the main job needs (scripts/demo.sh): the host
#                                  compiler, the plot's font and the venv with seal-python
# The test set adds the Debian packages for the Cortex-M firmware (compiler with core's
# source, ARM binutils, QEMU), nats-server, the C library's test headers, the security
# suite's Python tools, cargo-fuzz and cbindgen.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=test
case "${1:-}" in
  --demo) mode=demo ;;
  "") ;;
  *) echo "usage: scripts/setup.sh [--demo]" >&2; exit 2 ;;
esac

need_apt=()
# The fleet demo's --plot renders its labels with DejaVu Sans (read at run time); bundled
# SQLite (rusqlite) builds with the host C compiler.
[ -f /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf ] || need_apt+=(fonts-dejavu-core)
command -v cc >/dev/null 2>&1 || need_apt+=(gcc)
if [ $mode = test ]; then
  command -v qemu-system-arm >/dev/null 2>&1 || need_apt+=(qemu-system-arm)
  command -v arm-none-eabi-objdump >/dev/null 2>&1 || need_apt+=(gcc-arm-none-eabi)
  [ -x /usr/bin/rustc ] && [ -x /usr/bin/cargo ] || need_apt+=(rustc-web cargo-web)
  [ -d /usr/lib/rustlib/src/rust/library ] || need_apt+=(rust-web-src)
  [ -x /usr/bin/clippy-driver ] || need_apt+=(rust-web-clippy)
  # The CLI's hostile-input tests trace open(2) flags and set resource limits on the child.
  command -v strace >/dev/null 2>&1 || need_apt+=(strace)
  command -v prlimit >/dev/null 2>&1 || need_apt+=(util-linux)
  # The CCA2 branch check finds every inlined copy of cca::decrypt in the DWARF info.
  command -v llvm-dwarfdump >/dev/null 2>&1 || need_apt+=(llvm)
  # The C library's host test uses OpenSSL's AES-128-CTR as an independent board keystream.
  [ -f /usr/include/openssl/evp.h ] || need_apt+=(libssl-dev)
  # The service's TLS test makes its certificates with openssl and its requests with curl
  # (independent of the rustls stack under test).
  command -v openssl >/dev/null 2>&1 || need_apt+=(openssl)
  command -v curl >/dev/null 2>&1 || need_apt+=(curl)
  # The cluster tests and benchmark start a three-node NATS JetStream cluster (with its MQTT
  # gateway) on loopback; Debian's nats-server (2.9) is the one they are written for.
  command -v nats-server >/dev/null 2>&1 || need_apt+=(nats-server)
fi
if [ ${#need_apt[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "setup: missing Debian packages: ${need_apt[*]}; run: sudo apt-get install -y ${need_apt[*]}" >&2
    exit 1
  fi
  echo "setup: installing ${need_apt[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi

# The demo's venv: SEAL's Python bindings and NumPy. The tests add pytest, zstandard and the
# security suite's tools: Unicorn (M33 emulation for fault campaigns and leakage traces),
# pyelftools and Capstone (reading the firmware ELFs), matplotlib (plots).
py_pkgs=(seal-python==4.4.0 numpy)
py_mods="import seal, numpy"
if [ $mode = test ]; then
  py_pkgs+=(pytest zstandard==0.25.0 'unicorn>=2.1,<2.2' pyelftools 'capstone==5.0.*' matplotlib)
  py_mods+=", pytest, zstandard, unicorn, elftools, capstone, matplotlib"
fi
if [ ! -x .venv/bin/python ] || ! .venv/bin/python -c "$py_mods" >/dev/null 2>&1; then
  echo "setup: installing into .venv: ${py_pkgs[*]}"
  [ -x .venv/bin/python ] || python3 -m venv .venv
  .venv/bin/pip install -q --disable-pip-version-check "${py_pkgs[@]}"
fi

if [ $mode = test ]; then
  # cargo-fuzz for the fuzzing suite (security/fuzz/run.sh; libFuzzer on stable with
  # RUSTC_BOOTSTRAP=1 for the AddressSanitizer build) and cbindgen, which regenerates
  # crates/ffi/include/zeppelin.h (crates/ffi/check-header.sh): built from source, both at
  # once (two cores).
  pids=()
  if ! command -v cargo-fuzz >/dev/null 2>&1; then
    echo "setup: installing cargo-fuzz 0.13.2"
    cargo install -q cargo-fuzz --version 0.13.2 --locked & pids+=($!)
  fi
  if ! command -v cbindgen >/dev/null 2>&1; then
    echo "setup: installing cbindgen 0.29.4"
    cargo install -q cbindgen --version 0.29.4 --locked & pids+=($!)
  fi
  for pid in ${pids[@]+"${pids[@]}"}; do wait "$pid"; done
fi
echo "setup: ok ($mode)"
