//! Slot values in text form: the `--in values.txt` of `encrypt`, the output of `decrypt`.

use std::path::Path;

use zeppelin::Params;

use crate::console;
use crate::error::{CliError, CliResult};
use crate::input::read_text;
use crate::preset::{zero_slots, Slots};

/// Cap of a values file of preset `P`: `n` lines of up to 32 bytes each.
pub fn values_cap<P: Params>() -> usize {
    P::N * 32
}

/// The values file at `path` (at most [`values_cap`] bytes): up to `n` integers below `t`,
/// one per line (blank lines ignored); missing slots are 0.
pub fn parse_values<P: Params>(path: &Path) -> CliResult<Slots> {
    let text = read_text(path, "values file", values_cap::<P>())?;
    parse_slots::<P>(&text, path)
}

/// The slots in `text`, the contents of the values file `path` (named in errors): see
/// [`parse_values`].
pub fn parse_slots<P: Params>(text: &str, path: &Path) -> CliResult<Slots> {
    let (n, t) = (P::N, P::T);
    let mut slots = zero_slots::<P>();
    let mut filled = slots.iter_mut();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let Some(slot) = filled.next() else {
            return Err(CliError::TooManyValues {
                path: path.to_path_buf(),
                line: i + 1,
                slots: n,
            });
        };
        *slot = line
            .parse()
            .ok()
            .filter(|&v| v < t)
            .ok_or_else(|| CliError::BadValue {
                path: path.to_path_buf(),
                line: i + 1,
                // A value is plaintext: the error names its line, not its text.
                t,
            })?;
    }
    Ok(slots)
}

/// Prints the slots, one per line.
pub fn print_slots(slots: &[u32]) -> CliResult<()> {
    let mut out = String::with_capacity(slots.len() * 6);
    for v in slots {
        out.push_str(&v.to_string());
        out.push('\n');
    }
    console::out(&out)?;
    Ok(())
}
