//! Credentials for tests of the real `zeppelin serve` (docs/server.md, "Identities and
//! roles"): the owner token and one device registered for the test's streams, made with
//! `zeppelin devices` in the registry directory the server reads (`--data` or `--auth-dir`).

use std::path::Path;
use std::process::Command;

/// The owner token and a device token.
pub struct Credentials {
    /// The key owner's token (reads, keys, aggregation).
    pub owner: String,
    /// The device's token (uploads to the streams it was registered for).
    pub device: String,
}

fn zeppelin_stdout(args: &[&str], dir: &Path) -> Result<String, String> {
    let out = Command::new(env!("CARGO_BIN_EXE_zeppelin"))
        .args(args)
        .arg("--data")
        .arg(dir)
        .output()
        .map_err(|e| format!("zeppelin {args:?}: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "zeppelin {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    String::from_utf8(out.stdout).map_err(|e| e.to_string())
}

/// Issues the owner token in `dir` and registers `device` for `streams`.
pub fn issue(dir: &Path, device: &str, streams: &[&str]) -> Result<Credentials, String> {
    zeppelin_stdout(&["devices", "owner"], dir)?;
    let owner = std::fs::read_to_string(dir.join("owner.token"))
        .map_err(|e| format!("owner.token: {e}"))?
        .trim()
        .to_owned();
    let mut args = vec!["devices", "add", "--device", device];
    for s in streams {
        args.extend(["--stream", s]);
    }
    let device = zeppelin_stdout(&args, dir)?.trim().to_owned();
    Ok(Credentials { owner, device })
}
