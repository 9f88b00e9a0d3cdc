#!/usr/bin/env bash
# Builds the host staticlib, compiles the C test (and the README's C snippet) with gcc
# -fsanitize=address,undefined against it, and runs them. Exit status: 0 only if all pass.
# Needs gcc and OpenSSL's headers (Debian: libssl-dev) for the independent AES-CTR keystream.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../../../.." && pwd)"
cd "$root"
cargo build --release -q -p zeppelin-ffi
lib="${CARGO_TARGET_DIR:-$root/target}/release/libzeppelin_ffi.a"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
cflags=(-std=c11 -O1 -g -Wall -Wextra -Werror -fsanitize=address,undefined -fno-sanitize-recover=all
        -I crates/ffi/include -I firmware/c/src)
gcc "${cflags[@]}" crates/ffi/tests/c/host_test.c firmware/c/src/kats.c "$lib" -lcrypto -lpthread -ldl -lm -o "$out/host_test"
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 "$out/host_test" "$root"
# The README's C snippet, extracted between its markers, compiled and run the same way.
awk '/<!-- c-snippet:start -->/{f=1;next} /<!-- c-snippet:end -->/{f=0} f && !/^```/' README.md > "$out/snippet.c"
[ -s "$out/snippet.c" ] || { echo "FAIL README C snippet not found" >&2; exit 1; }
gcc "${cflags[@]}" "$out/snippet.c" "$lib" -lpthread -ldl -lm -o "$out/snippet"
"$out/snippet" && echo "PASS README C snippet compiles and runs"
