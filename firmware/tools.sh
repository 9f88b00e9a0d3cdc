# Tool checks shared by firmware/*/run.sh (sourced, not run). It installs nothing: missing
# tools are collected and named with the apt-get line that provides them.
#
#   need COMMAND DEBIAN_PACKAGE   record COMMAND as missing unless it is on PATH
#   find_cargo                    set cargo_cmd to a cargo that can build `core` for
#                                 thumbv8m.main-none-eabihf, and via_rustup=1 if that is rustup's
#   find_clippy                   after find_cargo: make `cargo clippy` the clippy of that
#                                 compiler (Debian's rust-web-clippy goes with Debian's rustc)
#   exit_if_missing               print what is missing and exit 2, if anything is

missing=()
cargo_cmd=()
via_rustup=0

need() { command -v "$1" >/dev/null 2>&1 || missing+=("$1 (Debian package: $2)"); }

# Two ways to a compiler that can build `core` for thumbv8m.main-none-eabihf:
# (a) rustup with the target installed; (b) Debian's rustc-web + rust-web-src with
# -Zbuild-std (see each firmware's .cargo/config.toml).
find_cargo() {
  if command -v rustup >/dev/null 2>&1 && rustup target list --installed 2>/dev/null | grep -qx thumbv8m.main-none-eabihf; then
    cargo_cmd=(cargo)
    via_rustup=1
  elif [ -x /usr/bin/rustc ] && [ -x /usr/bin/cargo ] && [ -d /usr/lib/rustlib/src/rust/library/core ]; then
    export RUSTC=/usr/bin/rustc RUSTC_BOOTSTRAP=1
    cargo_cmd=(/usr/bin/cargo)
  else
    missing+=("a Rust compiler for thumbv8m.main-none-eabihf: either 'rustup target add thumbv8m.main-none-eabihf', or Debian packages rustc-web cargo-web rust-web-src (Debian's /usr/bin/rustc, /usr/bin/cargo and the library source)")
  fi
}

find_clippy() {
  if [ "$via_rustup" = 0 ] && [ ${#cargo_cmd[@]} -gt 0 ]; then
    if [ -x /usr/bin/cargo-clippy ] && [ -x /usr/bin/clippy-driver ]; then
      # cargo runs the first cargo-clippy on PATH: Debian's, not rustup's (another rustc).
      export PATH="/usr/bin:$PATH"
    else
      missing+=("clippy for Debian's /usr/bin/rustc (Debian package: rust-web-clippy)")
    fi
  fi
}

exit_if_missing() {
  if [ ${#missing[@]} -gt 0 ]; then
    echo "run.sh: missing tools:" >&2
    for m in "${missing[@]}"; do echo "  - $m" >&2; done
    echo "Install on Debian/Ubuntu with:" >&2
    echo "  sudo apt-get update && sudo apt-get install -y rustc-web cargo-web rust-web-src gcc-arm-none-eabi binutils-arm-none-eabi qemu-system-arm python3" >&2
    exit 2
  fi
}
