//! The CLI's values files (`zeppelin encrypt --in values.txt`): `slots::parse_slots` on the
//! text of every preset, and, for bit 2 of the first byte, `slots::parse_values` through a
//! file (the CLI's capped reader). First byte: preset (bits 0-1). Accepted values print
//! back to text that parses to the same slots.
#![no_main]

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use zeppelin::{Params, Seal4096, Seal8192, Zeppelin4096};
use zeppelin_cli::slots::{parse_slots, parse_values};

fn scratch() -> &'static PathBuf {
    static FILE: OnceLock<PathBuf> = OnceLock::new();
    FILE.get_or_init(|| std::env::temp_dir().join(format!("zeppelin-fuzz-values-{}", std::process::id())))
}

fn run<P: Params>(through_file: bool, body: &[u8]) {
    let path = Path::new("values.txt");
    let slots = if through_file {
        std::fs::write(scratch(), body).expect("write scratch file");
        parse_values::<P>(scratch())
    } else {
        let Ok(text) = std::str::from_utf8(body) else {
            return;
        };
        parse_slots::<P>(text, path)
    };
    let Ok(slots) = slots else {
        return;
    };
    assert!(slots.iter().all(|&v| v < P::T));
    let text: String = slots.iter().map(|v| format!("{v}\n")).collect();
    let again = parse_slots::<P>(&text, path).expect("printed slots parse");
    assert!(again[..] == slots[..]);
}

fuzz_target!(|data: &[u8]| {
    let Some((&select, body)) = data.split_first() else {
        return;
    };
    let through_file = select & 4 != 0;
    match select & 3 {
        0 => run::<Seal4096>(through_file, body),
        1 => run::<Zeppelin4096>(through_file, body),
        _ => run::<Seal8192>(through_file, body),
    }
});
