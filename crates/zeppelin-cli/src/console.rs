//! Standard output and error without panics: `println!` panics when stdout fails (a full
//! disk, a closed pipe). Here a failed write is an error the subcommand returns, and
//! [`crate::run`] ends with exit status 1 (quietly for a closed pipe: the reader stopped on
//! purpose, and there is nobody to tell).

use std::fmt;
use std::io::{self, Write};

/// A write to stdout or stderr failed.
#[derive(Debug, thiserror::Error)]
#[error("cannot write to {stream}: {source}")]
pub struct ConsoleError {
    /// "stdout" or "stderr".
    pub stream: &'static str,
    /// The operating system's error.
    #[source]
    pub source: io::Error,
}

impl ConsoleError {
    /// The reader closed the pipe.
    pub fn is_broken_pipe(&self) -> bool {
        self.source.kind() == io::ErrorKind::BrokenPipe
    }
}

/// Writes `text` to stdout and flushes it.
pub fn out(text: &str) -> Result<(), ConsoleError> {
    let mut stdout = io::stdout().lock();
    stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
        .map_err(|source| ConsoleError {
            stream: "stdout",
            source,
        })
}

/// Writes one formatted line to stdout.
pub fn line(args: fmt::Arguments<'_>) -> Result<(), ConsoleError> {
    out(&format!("{args}\n"))
}

/// Writes one formatted line to stderr.
pub fn warn(args: fmt::Arguments<'_>) -> Result<(), ConsoleError> {
    let mut stderr = io::stderr().lock();
    writeln!(stderr, "{args}")
        .and_then(|()| stderr.flush())
        .map_err(|source| ConsoleError {
            stream: "stderr",
            source,
        })
}

/// `outln!(...)`: [`line`] with `format!` arguments.
#[macro_export]
macro_rules! outln {
    ($($arg:tt)*) => {
        $crate::console::line(format_args!($($arg)*))
    };
}
