//! `zeppelin`: the binary. Everything lives in the `zeppelin_cli` library (so the value-file
//! parser and the other readers can be fuzzed and tested in-process); this only calls it.

use std::process::ExitCode;

fn main() -> ExitCode {
    zeppelin_cli::run()
}
