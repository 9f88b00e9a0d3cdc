//! `zeppelin demo` (the fleet demo) through the built binary: it runs with a small fleet and
//! checks its own results against the plaintext truth, its results are a function of
//! `--seed`, it removes its private directory, `--plot` writes a PNG, `--server` works against
//! a running `zeppelin serve`, and bad arguments are refused with one error line before any
//! work.
#![expect(
    clippy::unwrap_used,
    reason = "test helpers outside #[test] fns: a failure should panic"
)]

use std::fs;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

fn bin() -> PathBuf {
    std::env::var_os("ZEPPELIN_TEST_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_zeppelin")))
}

/// Runs `zeppelin ARGS` with `TMPDIR` set to `tmp` (so the private directory lands there).
fn zeppelin(tmp: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(bin());
    cmd.args(args).env("TMPDIR", tmp).stdin(Stdio::null());
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().unwrap()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn ok(tmp: &Path, args: &[&str]) -> String {
    let o = zeppelin(tmp, args, &[]);
    assert!(
        o.status.success(),
        "{args:?}: {}\n{}",
        stderr(&o),
        stdout(&o)
    );
    stdout(&o)
}

/// The results section of the output (from its heading up to the timing table): what
/// `--seed` determines.
fn results(out: &str) -> String {
    let start = out.find("results:").unwrap();
    let end = out.find("stage ").unwrap();
    out[start..end].to_string()
}

/// A refused command: exit 1, one `zeppelin: error:` line naming `says`, nothing made in
/// `tmp`.
fn refused(tmp: &Path, args: &[&str], env: &[(&str, &str)], says: &str) {
    let o = zeppelin(tmp, args, env);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{args:?}: {err}");
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 1, "{args:?}: {err}");
    assert!(lines[0].starts_with("zeppelin: error: "), "{err}");
    assert!(err.contains(says), "{args:?}: {err}");
    assert_eq!(names(tmp), Vec::<String>::new(), "{args:?}");
}

fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

fn scratch() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

#[test]
fn a_small_fleet_runs_within_its_bounds_and_cleans_up() {
    let tmp = scratch();
    let out = ok(tmp.path(), &["demo", "--devices", "5", "--seed", "7"]);
    assert!(out.contains("5 devices, preset seal4096"), "{out}");
    assert!(
        out.contains("all 4096 slots within the quantisation bound: yes"),
        "{out}"
    );
    assert!(out.contains("0 slots outside"), "{out}");
    for stage in [
        "keygen",
        "start the service",
        "device encrypt",
        "upload (HTTP POST",
        "aggregate sum (server)",
        "aggregate sum_of_squares (server)",
        "decrypt + decode",
    ] {
        assert!(out.contains(stage), "{stage}: {out}");
    }
    // Five seeded uploads of 98,498 bytes each (tests/interop's EXPECTED for seal4096).
    assert!(out.contains("uploads 5 × 98498 = 492490 B"), "{out}");
    assert!(out.contains("noise budget left"), "{out}");
    // The key owner's secret key and the store are gone.
    assert_eq!(names(tmp.path()), Vec::<String>::new());
}

#[test]
fn results_are_a_function_of_the_seed() {
    let tmp = scratch();
    let args = |seed: &'static str| ["demo", "--devices", "4", "--seed", seed];
    let a = results(&ok(tmp.path(), &args("11")));
    let b = results(&ok(tmp.path(), &args("11")));
    let c = results(&ok(tmp.path(), &args("12")));
    assert_eq!(a, b, "same seed, other results");
    assert_ne!(a, c, "other seed, same results");
    // The section has the sample rows and the summary (not an empty match).
    assert_eq!(a.lines().filter(|l| l.contains(":00  ")).count(), 8, "{a}");
}

#[test]
fn bad_arguments_are_refused_before_any_work() {
    let tmp = scratch();
    let t = tmp.path();
    refused(t, &["demo", "--devices", "0"], &[], "--devices 0");
    // Humidity's range ±4 %RH at integer steps: 32768 / 16 = 2048 devices at most.
    refused(
        t,
        &["demo", "--devices", "2049"],
        &[],
        "at most 2048 devices",
    );
    refused(t, &["demo", "--concurrency", "0"], &[], "--concurrency");
    refused(t, &["demo", "--server", "ftp://x"], &[], "ftp://x");
    let png = t.join("p.png");
    refused(
        t,
        &["demo", "--plot", png.to_str().unwrap()],
        &[("ZEPPELIN_PLOT_FONT", "/nonexistent/font.ttf")],
        "fonts-dejavu-core",
    );
    // The preset without a special prime is not one the service runs: clap's usage error.
    let o = zeppelin(t, &["demo", "--preset", "zeppelin4096"], &[]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert_eq!(names(t), Vec::<String>::new());
}

#[test]
fn an_unreachable_server_is_an_error_and_nothing_is_left() {
    let tmp = scratch();
    // Port 1 on loopback: nothing listens there.
    refused(
        tmp.path(),
        &["demo", "--devices", "2", "--server", "http://127.0.0.1:1"],
        &[],
        "127.0.0.1:1",
    );
}

#[test]
fn plot_writes_a_png() {
    let tmp = scratch();
    let out_dir = scratch();
    let png = out_dir.path().join("means.png");
    let out = ok(
        tmp.path(),
        &["demo", "--devices", "3", "--plot", png.to_str().unwrap()],
    );
    assert!(out.contains("plot: "), "{out}");
    let bytes = fs::read(&png).unwrap();
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
    // IHDR: width and height, big-endian.
    assert_eq!(&bytes[16..24], &[0, 0, 6, 64, 0, 0, 3, 32]);
    assert!(
        bytes.len() > 20_000,
        "{} bytes: an empty canvas?",
        bytes.len()
    );
    assert_eq!(names(tmp.path()), Vec::<String>::new());
}

/// `zeppelin serve` on a fresh key directory of `preset`, on a free port; returns the child
/// and its URL.
#[expect(
    clippy::zombie_processes,
    reason = "the caller stops and waits for it (stop); a test that fails first ends the process"
)]
fn serve(tmp: &Path, preset: &str) -> (Child, String) {
    let keys = tmp.join(format!("serve-keys-{preset}"));
    let k = keys.to_str().unwrap();
    ok(tmp, &["keygen", "--dir", k, "--preset", preset]);
    ok(tmp, &["keys", "--dir", k, "--relin"]);
    let data = tmp.join(format!("serve-data-{preset}"));
    let mut child = Command::new(bin())
        .args(["serve", "--keys", k, "--data", data.to_str().unwrap()])
        .args(["--listen", "127.0.0.1:0"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut reader = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    loop {
        line.clear();
        assert!(
            reader.read_line(&mut line).unwrap() > 0,
            "serve ended early"
        );
        if let Some(url) = line.trim().strip_prefix("listening on ") {
            return (child, url.to_string());
        }
    }
}

fn stop(mut child: Child) {
    let st = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(st.success());
    child.wait().unwrap();
}

#[test]
fn server_flag_uploads_to_a_running_zeppelin_serve() {
    let tmp = scratch();
    let (child, url) = serve(tmp.path(), "seal4096");
    // The server's credential directory: the demo reads owner.token there and registers
    // its devices.
    let auth_dir = tmp.path().join("serve-data-seal4096");
    let auth = auth_dir.to_str().unwrap();
    let run_dir = scratch();
    let out = ok(
        run_dir.path(),
        &[
            "demo",
            "--devices",
            "3",
            "--server",
            &url,
            "--seed",
            "5",
            "--auth-dir",
            auth,
        ],
    );
    assert!(
        out.contains("all 4096 slots within the quantisation bound: yes"),
        "{out}"
    );
    assert!(out.contains("relin keys pushed 786835 B"), "{out}");
    assert!(!out.contains("start the service"), "{out}");
    // A second run on the same server uses a stream of its own: the counts still match.
    let again = ok(
        run_dir.path(),
        &[
            "demo",
            "--devices",
            "3",
            "--server",
            &url,
            "--seed",
            "5",
            "--auth-dir",
            auth,
        ],
    );
    assert_eq!(results(&out), results(&again));
    // A server of another preset is refused by name.
    let o = zeppelin(
        run_dir.path(),
        &[
            "demo",
            "--devices",
            "2",
            "--server",
            &url,
            "--preset",
            "seal8192",
        ],
        &[],
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("runs preset seal4096"),
        "{}",
        stderr(&o)
    );
    stop(child);
    assert_eq!(names(run_dir.path()), Vec::<String>::new());
}

#[test]
fn sigint_while_uploading_removes_the_private_directory() {
    let tmp = scratch();
    let mut child = Command::new(bin())
        .args(["demo", "--devices", "2048"])
        .env("TMPDIR", tmp.path())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until the in-process store exists (keys made, service started), at most 60 s.
    let started = std::time::Instant::now();
    let store_exists = || {
        names(tmp.path())
            .iter()
            .any(|d| tmp.path().join(d).join("data").exists())
    };
    while !store_exists() {
        assert!(child.try_wait().unwrap().is_none(), "demo ended early");
        assert!(started.elapsed().as_secs() < 60, "no store after 60 s");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let st = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(st.success());
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    assert_eq!(names(tmp.path()), Vec::<String>::new());
}
