//! Puts `memory.x` on the linker's search path for cortex-m-rt's `link.x`.
use std::path::PathBuf;

fn main() {
    let dir = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default());
    println!("cargo:rustc-link-search={}", dir.display());
    println!("cargo:rerun-if-changed=memory.x");
    println!("cargo:rerun-if-changed=build.rs");
    // The KAT files are compiled in with include_bytes!.
    for set in ["set1", "set2", "set3"] {
        println!("cargo:rerun-if-changed=../../crates/rblwe/tests/kats/{set}.kat");
    }
}
