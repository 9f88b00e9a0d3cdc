//! A private temporary directory for the demos' files (a secret key among them): owner-only,
//! removed after the work and on an interrupting signal (through [`crate::cleanup`]).

use std::path::Path;

use crate::cleanup::register;
use crate::error::{CliError, CliResult};
use crate::output::IoAction;

/// Runs `work` in a new owner-only temporary directory (prefix `zeppelin-demo-`) that is
/// removed afterwards, whatever happened, and on an interrupting signal. An error of `work`
/// comes first; then one removing the directory.
pub fn in_private_dir<T>(work: impl FnOnce(&Path) -> CliResult<T>) -> CliResult<T> {
    let private = tempfile::Builder::new()
        .prefix("zeppelin-demo-")
        .tempdir()
        .map_err(|source| CliError::Io {
            action: IoAction::Create,
            path: std::env::temp_dir(),
            source,
        })?;
    let removal = register(private.path());
    let result = work(private.path());
    let path = private.path().to_path_buf();
    let removed = private.close();
    drop(removal);
    let value = result?;
    removed.map_err(|source| CliError::Io {
        action: IoAction::Remove,
        path,
        source,
    })?;
    Ok(value)
}
