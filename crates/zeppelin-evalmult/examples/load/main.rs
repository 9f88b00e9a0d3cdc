//! The load test, full form: a server child process (this program again, with
//! `ZEPPELIN_LOAD_SERVER_CHILD=1`) on 127.0.0.1, then `--connections N` (default 5000)
//! connections mixing idle, slow-loris, oversized-frame, junk, unfinished-session,
//! non-reading and honest clients, at most `--concurrency C` (default 400) at once, all within
//! `--time-limit SECS` (default 300). Fails (exit 1) unless the server stays up, its peak
//! resident memory stays under the stated bound, every honest client's results equal
//! OpenFHE's, and it exits 0 on SIGTERM.
//!
//! `cargo run --release -p zeppelin-evalmult --example load -- --connections 5000`
//! (the short form runs in `cargo test --release -p zeppelin-evalmult --test load`).

use std::process::{Command, ExitCode};
use std::sync::Arc;
use std::time::Duration;

#[path = "driver.rs"]
mod driver;

fn arg(args: &[String], name: &str, default: u64) -> Result<u64, String> {
    match args.iter().position(|a| a == name) {
        None => Ok(default),
        Some(i) => args
            .get(i + 1)
            .ok_or(format!("{name} needs a value"))?
            .parse()
            .map_err(|e| format!("{name}: {e}")),
    }
}

fn main() -> ExitCode {
    if std::env::var_os(driver::CHILD_ENV).is_some() {
        driver::run_child();
    }
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("load: FAIL: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let connections = arg(&args, "--connections", 5000)? as usize;
    let concurrency = arg(&args, "--concurrency", 400)? as usize;
    let limit = Duration::from_secs(arg(&args, "--time-limit", 300)?);
    let work = Arc::new(driver::Workload::new(driver::vectors()?)?);
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let outcome = driver::check(Command::new(exe), work, connections, concurrency, limit)?;
    println!("{outcome}");
    Ok(())
}
