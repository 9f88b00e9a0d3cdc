//! The CLI's values files (`zeppelin encrypt --in values.txt`): `slots::parse_slots` on the
//! text of every preset, and, for bit 2 of the first byte, `slots::parse_values` through a
//! file (the CLI's capped reader). First byte: preset (bits 0-1). Accepted values print
//! back to text that parses to the same slots.
#![no_main]

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use zeppelin::{Params, Seal4096, Seal8192, Zeppelin4096};

// The CLI's own source files, compiled into this target: a dependency on the zeppelin-cli
// package would build its whole service stack (289 crates against 77: tokio, axum, SQLite,
// NATS, TLS) with AddressSanitizer and coverage, two thirds of the CI fuzz build. The small
// modules below stand in for the parts of the CLI these files name (`crate::...`).
#[allow(dead_code)]
#[path = "../../../crates/zeppelin-cli/src/input.rs"]
mod input;
#[allow(dead_code)]
#[path = "../../../crates/zeppelin-cli/src/slots.rs"]
mod slots;

/// `crate::console` of the CLI: standard output (unused by the parsers).
mod console {
    pub fn out(_text: &str) -> std::io::Result<()> {
        Ok(())
    }
}

/// `crate::preset` of the CLI: the slot vector.
mod preset {
    pub type Slots = Vec<u32>;
    pub fn zero_slots<P: zeppelin::Params>() -> Slots {
        vec![0; P::N]
    }
}

/// `crate::error` of the CLI: the variants the parsers return.
mod error {
    use std::path::PathBuf;

    // The parsers build these; the target only checks that parsing returns.
    #[allow(dead_code)]
    #[derive(Debug)]
    pub enum CliError {
        Input(crate::input::InputError),
        BadValue { path: PathBuf, line: usize, t: u32 },
        TooManyValues { path: PathBuf, line: usize, slots: usize },
    }

    impl From<crate::input::InputError> for CliError {
        fn from(e: crate::input::InputError) -> Self {
            Self::Input(e)
        }
    }

    impl From<std::io::Error> for CliError {
        fn from(e: std::io::Error) -> Self {
            Self::Input(crate::input::InputError::Io {
                path: PathBuf::new(),
                source: e,
            })
        }
    }

    pub type CliResult<T> = Result<T, CliError>;
}

use slots::{parse_slots, parse_values};

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
