//! Child processes of the cluster tests and benchmark (included by path): a command run to
//! success, and a long-running child that is killed and reaped when dropped, started once
//! it has printed its ready line.

#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};

pub type ProcResult<T = ()> = Result<T, Box<dyn std::error::Error + Send + Sync>>;

/// Runs `cmd` to completion; its stderr is the error if it fails.
pub fn run(cmd: &mut Command) -> ProcResult {
    let out = cmd.output()?;
    if !out.status.success() {
        return Err(format!("{cmd:?}: {}", String::from_utf8_lossy(&out.stderr)).into());
    }
    Ok(())
}

/// A child process killed (SIGKILL) and reaped when dropped, also when the caller fails.
pub struct Proc(pub Child);

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Spawns `cmd` (stderr appended to `log`) and waits for a stdout line starting with
/// `ready`; returns the child and that line. The rest of stdout is drained in a thread.
pub fn spawn_ready(cmd: &mut Command, log: &Path, ready: &str) -> ProcResult<(Proc, String)> {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(log)?,
        )
        .spawn()?;
    let stdout = child.stdout.take().ok_or("no stdout")?;
    let child = Proc(child);
    let mut lines = BufReader::new(stdout);
    let mut line = String::new();
    loop {
        line.clear();
        if lines.read_line(&mut line)? == 0 {
            let log = std::fs::read_to_string(log).unwrap_or_default();
            return Err(format!("{cmd:?} exited before {ready:?}; its log:\n{log}").into());
        }
        if line.starts_with(ready) {
            break;
        }
    }
    std::thread::spawn(move || std::io::copy(&mut lines, &mut std::io::sink()));
    Ok((child, line.trim().to_owned()))
}
