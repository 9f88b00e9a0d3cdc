//! evalmult vector directories: `manifest.json` (`vectors::read_manifest`, through a file,
//! as the CLI reads it) and, for a manifest that validates and names at most 16 files, the
//! whole directory (`VectorSet::load`) with the `.bin` files cut from the rest of the input.
//! Input: manifest text, a NUL byte, then the `.bin` contents back to back (in load order:
//! `evk_a_i`, `evk_b_i`, then per pair `x0 x1 y0 y1`, then optional `tensor2`, `relin0`,
//! `relin1`; a file the bytes run out for is absent). A directory that loads is evaluated
//! and compared with the reference implementation.
#![no_main]

use std::path::PathBuf;
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use zeppelin_evalmult::vectors::{read_manifest, VectorSet};
use zeppelin_evalmult::Engine;

fn scratch() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("zeppelin-fuzz-manifest-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("scratch directory");
        dir
    })
}

fuzz_target!(|data: &[u8]| {
    let dir = scratch();
    for entry in std::fs::read_dir(dir).expect("scratch directory").flatten() {
        let _ = std::fs::remove_file(entry.path());
    }
    let split = data.iter().position(|&b| b == 0).unwrap_or(data.len());
    let (text, rest) = (&data[..split], data.get(split + 1..).unwrap_or_default());
    std::fs::write(dir.join("manifest.json"), text).expect("write manifest");
    let Ok((manifest, ctx)) = read_manifest(dir) else {
        return;
    };
    if 2 * manifest.digits + 4 * manifest.batch > 16 {
        return;
    }
    let mut names: Vec<String> = Vec::new();
    for i in 0..manifest.digits {
        names.push(format!("evk_a_{i}.bin"));
        names.push(format!("evk_b_{i}.bin"));
    }
    for k in 0..manifest.batch {
        for suffix in ["x0", "x1", "y0", "y1"] {
            names.push(format!("ct{k}_{suffix}.bin"));
        }
    }
    for k in 0..manifest.batch {
        names.push(format!("ct{k}_tensor2.bin"));
    }
    for k in 0..manifest.batch {
        names.push(format!("ct{k}_relin0.bin"));
        names.push(format!("ct{k}_relin1.bin"));
    }
    let size = ctx.poly_len() * 4;
    for (name, chunk) in names.iter().zip(rest.chunks(size.max(1))) {
        std::fs::write(dir.join(name), chunk).expect("write .bin");
    }
    let Ok(set) = VectorSet::load(dir) else {
        return;
    };
    let engine = Engine::new(set.context.clone(), &set.key).expect("a loaded key builds an engine");
    let results = engine.eval_mult(&set.pairs).expect("loaded pairs evaluate");
    for ((x, y), got) in set.pairs.iter().zip(&results) {
        let want = zeppelin_evalmult::reference::eval_mult(&set.context, &set.key, x, y)
            .expect("the reference evaluates");
        assert!(want.relin == *got, "engine equals the reference");
    }
});
