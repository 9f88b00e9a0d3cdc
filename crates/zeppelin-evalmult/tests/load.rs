//! The load test, short form (the full form: `cargo run --release -p zeppelin-evalmult
//! --example load -- --connections 5000`): a server child process (this test binary again,
//! running only `server_child`) on 127.0.0.1, 1,000 connections mixing idle, slow-loris,
//! oversized-frame, junk, unfinished-session, non-reading and honest clients. The server must
//! stay up, keep its peak resident memory (VmHWM) under the stated bound, give every honest
//! client OpenFHE's results and exit 0 on SIGTERM.

use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

#[path = "../examples/load/driver.rs"]
mod driver;

#[test]
fn thousand_hostile_and_honest_connections() {
    let work = Arc::new(driver::Workload::new(driver::vectors().unwrap()).unwrap());
    let mut child = Command::new(std::env::current_exe().unwrap());
    child.args([
        "--exact",
        "server_child",
        "--ignored",
        "--nocapture",
        "--test-threads=1",
    ]);
    match driver::check(child, work, 1000, 300, Duration::from_secs(90)) {
        Ok(text) => println!("{text}"),
        Err(e) => panic!("{e}"),
    }
}

/// Not a test: the entry point of the server child process that
/// `thousand_hostile_and_honest_connections` starts (it runs only with the child's
/// environment variable set, and never returns then).
#[test]
#[ignore = "the server child of the load test; started by it"]
fn server_child() {
    if std::env::var_os(driver::CHILD_ENV).is_some() {
        driver::run_child();
    }
}
