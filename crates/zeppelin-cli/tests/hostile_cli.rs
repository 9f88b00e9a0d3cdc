//! The CLI run as a hostile user would (issue 10), through the built binary: writes that fail
//! part-way (`RLIMIT_FSIZE` through `prlimit`), destinations that are symbolic links, FIFOs,
//! directories or devices, existing key directories, stdout on `/dev/full` or a closed pipe,
//! SIGINT during `demo`, degenerate or mismatched keys, foreign parameters and oversized
//! files (under `RLIMIT_AS`). Each test states what must stay unchanged, and checks it byte
//! for byte against a snapshot taken before the run.
//!
//! `ZEPPELIN_TEST_BIN` runs the same tests against another build of `zeppelin` (to show that
//! they fail on an older one).
#![expect(
    clippy::unwrap_used,
    clippy::panic,
    reason = "test helpers outside #[test] fns: a failure should panic"
)]

use std::collections::BTreeMap;
use std::fs;
use std::io::{BufRead, BufReader, Read};
use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::time::{Duration, Instant};

use zeppelin_seal::{ComprMode, EncryptionParameters};

/// Long enough for the slowest command here; a run past it counts as a hang.
const TIMEOUT: Duration = Duration::from_secs(60);

fn bin() -> PathBuf {
    std::env::var_os("ZEPPELIN_TEST_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_zeppelin")))
}

fn vectors() -> PathBuf {
    let root = std::env::var_os("ZEPPELIN_VECTORS")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/vectors")
        });
    let dir = root.join("openfhe-bv-n4096-l4-b2");
    assert!(
        dir.join("manifest.json").is_file(),
        "OpenFHE vectors not found at {} (set ZEPPELIN_VECTORS)",
        dir.display()
    );
    dir
}

/// Waits for `child` at most [`TIMEOUT`], killing it after that (a hang fails the test).
fn wait(mut child: Child, what: &str) -> Output {
    let start = Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            return child.wait_with_output().unwrap();
        }
        if start.elapsed() > TIMEOUT {
            let _ = child.kill();
            let out = child.wait_with_output().unwrap();
            panic!("{what}: hung (killed after {TIMEOUT:?}); {out:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn args_text(args: &[&str]) -> String {
    args.join(" ")
}

/// `zeppelin args` with `limits` (prlimit options, e.g. `--fsize=1000`), stdin closed.
fn run_with(limits: &[&str], args: &[&str], stdout: Stdio) -> Output {
    let mut cmd = if limits.is_empty() {
        Command::new(bin())
    } else {
        let mut c = Command::new("prlimit");
        c.args(limits).arg("--").arg(bin());
        c
    };
    let child = cmd
        .args(args)
        .stdin(Stdio::null())
        .stdout(stdout)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait(child, &args_text(args))
}

fn run(args: &[&str]) -> Output {
    run_with(&[], args, Stdio::piped())
}

fn ok(args: &[&str]) -> Output {
    let out = run(args);
    assert!(
        out.status.success(),
        "{}: {:?} {}",
        args_text(args),
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Exit status 1, exactly one line `zeppelin: error: ...` on stderr that mentions `mention`.
fn assert_error(out: &Output, what: &str, mention: &str) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{what}: {:?} {err}", out.status);
    assert!(!err.contains("panicked"), "{what}: {err}");
    assert!(
        err.starts_with("zeppelin: error: ") && err.ends_with('\n') && err.lines().count() == 1,
        "{what}: not one error line: {err:?}"
    );
    assert!(
        err.contains(mention),
        "{what}: {err:?} does not mention {mention:?}"
    );
}

fn fails(args: &[&str], mention: &str) -> Output {
    let out = run(args);
    assert_error(&out, &args_text(args), mention);
    out
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Everything in `dir` (not following links): name → (kind, mode, contents of a regular
/// file, link target).
type Snapshot = BTreeMap<String, (String, u32, Vec<u8>)>;

fn snapshot(dir: &Path) -> Snapshot {
    let mut map = BTreeMap::new();
    for entry in fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        let path = entry.path();
        let meta = fs::symlink_metadata(&path).unwrap();
        let t = meta.file_type();
        let (kind, body) = if t.is_symlink() {
            (
                "link",
                fs::read_link(&path)
                    .unwrap()
                    .into_os_string()
                    .into_encoded_bytes(),
            )
        } else if t.is_file() {
            ("file", fs::read(&path).unwrap())
        } else if t.is_dir() {
            ("dir", format!("{:?}", snapshot(&path)).into_bytes())
        } else if t.is_fifo() {
            ("fifo", Vec::new())
        } else {
            ("other", Vec::new())
        };
        map.insert(
            entry.file_name().into_string().unwrap(),
            (kind.to_string(), meta.permissions().mode() & 0o7777, body),
        );
    }
    map
}

fn names(dir: &Path) -> Vec<String> {
    snapshot(dir).into_keys().collect()
}

fn scratch() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("zeppelin-hostile-")
        .tempdir()
        .unwrap()
}

/// A key directory `root/name` of `preset`, a values file and a device ciphertext of it.
struct Keys {
    dir: PathBuf,
    values: PathBuf,
    ct: PathBuf,
}

fn keys(root: &Path, name: &str, preset: &str) -> Keys {
    let dir = root.join(name);
    ok(&["keygen", "--dir", s(&dir), "--preset", preset]);
    let values = root.join(format!("{name}.values"));
    fs::write(&values, "1\n2\n3\n65536\n").unwrap();
    let ct = root.join(format!("{name}.ct"));
    ok(&[
        "encrypt",
        "--dir",
        s(&dir),
        "--mode",
        "seeded",
        "--in",
        s(&values),
        "--out",
        s(&ct),
    ]);
    Keys { dir, values, ct }
}

fn mkfifo(path: &Path) {
    let st = Command::new("mkfifo").arg(path).status().unwrap();
    assert!(st.success());
}

// ----- key directories ----------------------------------------------------------------------

#[test]
fn keygen_replaces_a_key_directory_only_with_force_and_whole() {
    let root = scratch();
    let d = root.path().join("keys");
    ok(&["keygen", "--dir", s(&d)]);
    let before = snapshot(&d);
    assert_eq!(
        fs::metadata(&d).unwrap().permissions().mode() & 0o777,
        0o700
    );
    assert_eq!(before["device.sk"].1, 0o600);
    assert_eq!(before["secret.seal"].1, 0o600);

    // Without --force: refused, nothing changed.
    fails(&["keygen", "--dir", s(&d)], "exists (pass --force");
    assert_eq!(snapshot(&d), before);

    // A --force run that fails part-way (public.seal is 262 KB, the limit 200 KB): the old
    // directory is intact, nothing staged is left beside it.
    let out = run_with(
        &["--fsize=200000"],
        &["keygen", "--dir", s(&d), "--force"],
        Stdio::piped(),
    );
    assert_error(&out, "keygen --force under RLIMIT_FSIZE", "File too large");
    assert_eq!(
        snapshot(&d),
        before,
        "a failed keygen --force changed the keys"
    );
    assert_eq!(names(root.path()), ["keys"]);

    // With --force: a new key pair, whole, and the old ciphertexts no longer decrypt to
    // their values with the new key... because it is a new key.
    ok(&["keygen", "--dir", s(&d), "--force"]);
    let after = snapshot(&d);
    assert_ne!(after["device.sk"], before["device.sk"]);
    assert_eq!(
        after.keys().collect::<Vec<_>>(),
        before.keys().collect::<Vec<_>>()
    );
    assert_eq!(names(root.path()), ["keys"]);

    // An existing empty directory (mktemp -d) is fine without --force; a file is not.
    let empty = root.path().join("empty");
    fs::create_dir(&empty).unwrap();
    ok(&["keygen", "--dir", s(&empty)]);
    let file = root.path().join("file");
    fs::write(&file, "x").unwrap();
    fails(&["keygen", "--dir", s(&file), "--force"], "not a directory");
    assert_eq!(fs::read(&file).unwrap(), b"x");
}

#[test]
fn secret_files_are_created_owner_only_exclusively_in_the_open_call() {
    let root = scratch();
    let d = root.path().join("keys");
    let log = root.path().join("strace.log");
    let st = Command::new("strace")
        .args([
            "-f",
            "-qq",
            "-e",
            "trace=openat,open,creat,chmod,fchmod,fchmodat",
            "-o",
        ])
        .arg(&log)
        .arg(bin())
        .args(["keygen", "--dir", s(&d)])
        .stdout(Stdio::null())
        .status()
        .unwrap();
    assert!(st.success());
    let log = fs::read_to_string(&log).unwrap();
    assert!(!log.contains("chmod("), "a chmod after creation:\n{log}");
    for secret in ["device.sk", "secret.seal"] {
        let opens: Vec<&str> = log
            .lines()
            .filter(|l| l.contains(secret) && l.contains("O_CREAT"))
            .collect();
        assert_eq!(opens.len(), 1, "{secret}: {opens:?}");
        for want in ["O_EXCL", "O_NOFOLLOW", ", 0600)"] {
            assert!(
                opens[0].contains(want),
                "{secret}: {} lacks {want}",
                opens[0]
            );
        }
        assert!(!opens[0].contains("O_TRUNC"), "{}", opens[0]);
    }
}

#[test]
fn keys_checks_everything_before_writing_and_needs_force() {
    let root = scratch();
    let k = keys(root.path(), "k", "seal4096");
    let before = snapshot(&k.dir);
    // A bad step is found before relin.seal is written.
    fails(
        &[
            "keys",
            "--dir",
            s(&k.dir),
            "--relin",
            "--galois",
            "--steps",
            "1,99999",
        ],
        "--steps",
    );
    assert_eq!(snapshot(&k.dir), before);

    ok(&["keys", "--dir", s(&k.dir), "--relin"]);
    let with_relin = snapshot(&k.dir);
    for (name, entry) in &before {
        assert_eq!(&with_relin[name], entry, "{name} changed by keys");
    }
    fails(
        &["keys", "--dir", s(&k.dir), "--relin"],
        "relin.seal exists (pass --force",
    );
    assert_eq!(snapshot(&k.dir), with_relin);
    ok(&["keys", "--dir", s(&k.dir), "--relin", "--force"]);
    let again = snapshot(&k.dir);
    assert_ne!(again["relin.seal"], with_relin["relin.seal"]);
    assert_eq!(again["secret.seal"], before["secret.seal"]);
    assert_eq!(names(root.path()), ["k", "k.ct", "k.values"]);
}

// ----- outputs ------------------------------------------------------------------------------

#[test]
fn outputs_refuse_destinations_that_are_not_regular_files() {
    let root = scratch();
    let k = keys(root.path(), "k", "seal4096");
    ok(&["rblwe", "keygen", "--out-dir", s(&root.path().join("r"))]);
    let msg = root.path().join("msg");
    fs::write(&msg, [7u8; 32]).unwrap();
    let rct = root.path().join("r.ct");
    ok(&[
        "rblwe",
        "encrypt",
        "--pk",
        s(&root.path().join("r/rblwe.pk")),
        "--in",
        s(&msg),
        "--out",
        s(&rct),
    ]);

    let victim = root.path().join("victim");
    fs::write(&victim, "victim").unwrap();
    let dests = root.path().join("dests");
    fs::create_dir(&dests).unwrap();
    let link = dests.join("link");
    std::os::unix::fs::symlink(&victim, &link).unwrap();
    let fifo = dests.join("fifo");
    mkfifo(&fifo);
    let dir = dests.join("dir");
    fs::create_dir(&dir).unwrap();
    let before = snapshot(&dests);

    let (d, v, ct) = (s(&k.dir), s(&k.values), s(&k.ct));
    let (rsk, rpk) = (
        root.path().join("r/rblwe.sk"),
        root.path().join("r/rblwe.pk"),
    );
    for dest in [&link, &fifo, &dir, Path::new("/dev/null")] {
        let o = s(dest);
        let commands: [Vec<&str>; 4] = [
            vec![
                "encrypt", "--dir", d, "--mode", "public", "--in", v, "--out", o,
            ],
            vec!["adapt", "--dir", d, "--in", ct, "--out", o],
            vec![
                "rblwe",
                "encrypt",
                "--pk",
                s(&rpk),
                "--in",
                s(&msg),
                "--out",
                o,
            ],
            vec![
                "rblwe",
                "decrypt",
                "--sk",
                s(&rsk),
                "--in",
                s(&rct),
                "--out",
                o,
            ],
        ];
        for args in &commands {
            fails(args, "not a regular file");
        }
    }
    assert_eq!(snapshot(&dests), before);
    assert_eq!(fs::read(&victim).unwrap(), b"victim");
}

#[test]
fn a_failed_write_leaves_the_previous_output_and_no_temporary_file() {
    let root = scratch();
    let k = keys(root.path(), "k", "seal4096");
    let out_dir = root.path().join("out");
    fs::create_dir(&out_dir).unwrap();
    let out = out_dir.join("ct");
    fs::write(&out, "previous").unwrap();
    let before = snapshot(&out_dir);
    let (d, v, ct) = (s(&k.dir), s(&k.values), s(&k.ct));
    for args in [
        vec![
            "encrypt",
            "--dir",
            d,
            "--mode",
            "symmetric",
            "--in",
            v,
            "--out",
            s(&out),
        ],
        vec![
            "adapt",
            "--dir",
            d,
            "--in",
            ct,
            "--out",
            s(&out),
            "--compress",
            "none",
        ],
    ] {
        let o = run_with(&["--fsize=50000"], &args, Stdio::piped());
        assert_error(&o, &args_text(&args), "File too large");
        assert_eq!(snapshot(&out_dir), before, "{}", args_text(&args));
    }
}

// ----- evalmult -----------------------------------------------------------------------------

fn copy_dir(from: &Path, to: &Path) {
    fs::create_dir(to).unwrap();
    for e in fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        fs::copy(e.path(), to.join(e.file_name())).unwrap();
    }
}

#[test]
fn evalmult_out_never_follows_a_planted_link_and_commits_all_or_nothing() {
    let root = scratch();
    let v = vectors();
    let out = root.path().join("out");
    fs::create_dir(&out).unwrap();
    let victim = root.path().join("victim");
    fs::write(&victim, "victim").unwrap();
    // Yesterday's fixed temporary name, planted.
    std::os::unix::fs::symlink(&victim, out.join(".ct0_relin0.bin.tmp")).unwrap();
    ok(&["evalmult", "--in", s(&v), "--out", s(&out)]);
    assert_eq!(fs::read(&victim).unwrap(), b"victim");
    for k in 0..2 {
        for c in 0..2 {
            let name = format!("ct{k}_relin{c}.bin");
            let same = fs::read(out.join(&name)).unwrap() == fs::read(v.join(&name)).unwrap();
            assert!(same, "{name} differs from OpenFHE's");
        }
    }

    // One destination that cannot be replaced: no result is written at all.
    let out2 = root.path().join("out2");
    fs::create_dir(&out2).unwrap();
    fs::create_dir(out2.join("ct1_relin1.bin")).unwrap();
    let before = snapshot(&out2);
    fails(
        &["evalmult", "--in", s(&v), "--out", s(&out2)],
        "ct1_relin1.bin",
    );
    assert_eq!(snapshot(&out2), before);
}

#[test]
fn evalmult_check_fails_closed_and_silent_on_stdout() {
    let root = scratch();
    let v = vectors();
    // A mismatch: exit 1, nothing on stdout, no output directory made.
    let bad = root.path().join("bad");
    copy_dir(&v, &bad);
    let mut relin = fs::read(bad.join("ct1_relin0.bin")).unwrap();
    relin[40] ^= 1;
    fs::write(bad.join("ct1_relin0.bin"), relin).unwrap();
    let out = root.path().join("out");
    let o = fails(
        &["evalmult", "--in", s(&bad), "--out", s(&out), "--check"],
        "1 of 65536 residues differ",
    );
    assert!(
        o.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    assert!(!out.exists());

    // Nothing to compare with: an error, not a silent success.
    let bare = root.path().join("bare");
    copy_dir(&v, &bare);
    for k in 0..2 {
        for c in 0..2 {
            fs::remove_file(bare.join(format!("ct{k}_relin{c}.bin"))).unwrap();
        }
    }
    let o = fails(
        &["evalmult", "--in", s(&bare), "--out", s(&out), "--check"],
        "nothing to compare",
    );
    assert!(o.stdout.is_empty());
    assert!(!out.exists());

    // The honest run still passes, and says what it compared.
    let o = ok(&["evalmult", "--in", s(&v), "--out", s(&out), "--check"]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("check: 65536 residues compared, 0 mismatches"),
        "{text}"
    );
}

// ----- stdout and signals -------------------------------------------------------------------

/// A pipe whose read end is already closed.
fn closed_pipe() -> Stdio {
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    Stdio::from(writer)
}

fn dev_full() -> Stdio {
    Stdio::from(
        fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap(),
    )
}

#[test]
fn a_failing_stdout_is_exit_1_never_a_panic() {
    let root = scratch();
    let k = keys(root.path(), "k", "seal4096");
    let v = vectors();
    ok(&["rblwe", "keygen", "--out-dir", s(&root.path().join("r"))]);
    let msg = root.path().join("msg");
    fs::write(&msg, [7u8; 32]).unwrap();
    let rct = root.path().join("r.ct");
    ok(&[
        "rblwe",
        "encrypt",
        "--pk",
        s(&root.path().join("r/rblwe.pk")),
        "--in",
        s(&msg),
        "--out",
        s(&rct),
    ]);
    let out = root.path().join("o");
    let fresh = root.path().join("fresh");
    let rsk = root.path().join("r/rblwe.sk");
    let commands: Vec<Vec<&str>> = vec![
        vec!["demo-local"],
        vec!["demo", "--devices", "2"],
        vec!["bench", "--runs", "1"],
        vec!["evalmult", "--in", s(&v), "--out", s(&out)],
        vec!["rblwe", "keygen", "--out-dir", s(&fresh)],
        vec!["decrypt", "--dir", s(&k.dir), "--in", s(&k.ct)],
        vec!["rblwe", "decrypt", "--sk", s(&rsk), "--in", s(&rct)],
        vec!["--help"],
    ];
    for args in &commands {
        let o = run_with(&[], args, dev_full());
        assert_error(&o, &format!("{} > /dev/full", args_text(args)), "stdout");
        let o = run_with(&[], args, closed_pipe());
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(
            o.status.code(),
            Some(1),
            "{} | closed: {:?} {err}",
            args_text(args),
            o.status
        );
        assert!(err.is_empty(), "{} | closed: {err}", args_text(args));
    }
    // rblwe keygen reports before it commits: a failed stdout leaves no key behind.
    assert!(!fresh.join("rblwe.sk").exists());
}

#[test]
fn rblwe_keygen_force_that_fails_keeps_the_old_key() {
    let root = scratch();
    let r = root.path().join("r");
    ok(&["rblwe", "keygen", "--out-dir", s(&r), "--cca"]);
    let before = snapshot(&r);
    let o = run_with(
        &[],
        &["rblwe", "keygen", "--out-dir", s(&r), "--cca", "--force"],
        dev_full(),
    );
    assert_error(&o, "rblwe keygen --force > /dev/full", "stdout");
    assert_eq!(snapshot(&r), before);
    let o = run_with(
        &["--fsize=100"],
        &["rblwe", "keygen", "--out-dir", s(&r), "--cca", "--force"],
        Stdio::piped(),
    );
    assert_error(
        &o,
        "rblwe keygen --force under RLIMIT_FSIZE",
        "File too large",
    );
    assert_eq!(snapshot(&r), before);
}

fn demo_child(tmpdir: &Path, args: &[&str]) -> Child {
    Command::new(bin())
        .arg("demo-local")
        .args(args)
        .env("TMPDIR", tmpdir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Reads lines of the demo until the one naming its directory.
fn demo_dir(child: &mut Child) -> (BufReader<std::process::ChildStdout>, String) {
    let mut reader = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    loop {
        line.clear();
        assert!(reader.read_line(&mut line).unwrap() > 0, "demo ended early");
        if let Some(rest) = line.strip_prefix("files in ") {
            return (reader, rest.split(';').next().unwrap().to_string());
        }
    }
}

#[test]
fn demo_local_removes_its_private_directory_on_every_exit() {
    let tmp = scratch();
    // Normal exit.
    let o = wait(demo_child(tmp.path(), &[]), "demo");
    assert!(o.status.success());
    assert!(names(tmp.path()).is_empty(), "{:?}", names(tmp.path()));

    // `demo | head -2`: the reader goes away after two lines.
    let mut child = demo_child(tmp.path(), &[]);
    let (reader, dir) = demo_dir(&mut child);
    assert!(dir.starts_with(s(tmp.path())), "{dir}");
    drop(reader);
    let o = wait(child, "demo | head");
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    assert!(!String::from_utf8_lossy(&o.stderr).contains("panicked"));
    assert!(names(tmp.path()).is_empty(), "{:?}", names(tmp.path()));

    // SIGINT while the keys are being made (seal8192 takes a few hundred ms).
    let mut child = demo_child(tmp.path(), &["--preset", "seal8192"]);
    let (mut reader, _) = demo_dir(&mut child);
    let st = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(st.success());
    let mut rest = String::new();
    reader.read_to_string(&mut rest).unwrap();
    let o = wait(child, "demo, SIGINT");
    let status: ExitStatus = o.status;
    assert_eq!(status.code(), Some(130), "{status:?} {rest}");
    assert!(names(tmp.path()).is_empty(), "{:?}", names(tmp.path()));
}

// ----- keys and inputs that must be refused ---------------------------------------------------

/// Overwrites `path` from byte `from` to its end with `byte`.
fn fill_tail(path: &Path, from: usize, byte: u8) {
    let mut b = fs::read(path).unwrap();
    b[from..].fill(byte);
    fs::write(path, b).unwrap();
}

#[test]
fn degenerate_and_mismatched_keys_are_refused_in_one_line() {
    let root = scratch();
    let k = keys(root.path(), "k", "seal4096");
    let other = keys(root.path(), "other", "seal4096");
    let ct_out = root.path().join("ct.out");
    let (d, v) = (s(&k.dir), s(&k.values));
    let public = [
        "encrypt",
        "--dir",
        d,
        "--mode",
        "public",
        "--in",
        v,
        "--out",
        s(&ct_out),
    ];

    // All-zero public.seal body (its 2·n·4·8 residue bytes at the end).
    let pk = k.dir.join("public.seal");
    let saved = fs::read(&pk).unwrap();
    fill_tail(&pk, saved.len() - 2 * 4096 * 4 * 8, 0);
    fails(&public, "public.seal");
    fs::write(&pk, &saved).unwrap();
    ok(&public);

    // A genuine public key of another secret key, beside this directory's device.sk.
    fs::copy(other.dir.join("public.seal"), &pk).unwrap();
    fails(&public, "public.seal");
    fs::write(&pk, &saved).unwrap();
    ok(&public);

    // All-zero device.pk, where the device encrypts with it (zeppelin4096).
    let z = keys(root.path(), "z", "zeppelin4096");
    let z_other = keys(root.path(), "z_other", "zeppelin4096");
    let z_pk = z.dir.join("device.pk");
    let z_saved = fs::read(&z_pk).unwrap();
    let z_public = [
        "encrypt",
        "--dir",
        s(&z.dir),
        "--mode",
        "public",
        "--in",
        v,
        "--out",
        s(&ct_out),
    ];
    fs::copy(z_other.dir.join("device.pk"), &z_pk).unwrap();
    fails(&z_public, "device.pk");
    fs::write(&z_pk, &z_saved).unwrap();
    ok(&z_public);
    fill_tail(&z.dir.join("device.pk"), 0, 0);
    fails(
        &[
            "encrypt",
            "--dir",
            s(&z.dir),
            "--mode",
            "public",
            "--in",
            v,
            "--out",
            s(&ct_out),
        ],
        "device.pk",
    );

    // Secret keys: zero, weight 1, all ones.
    let sk = k.dir.join("device.sk");
    let saved = fs::read(&sk).unwrap();
    let decrypt = ["decrypt", "--dir", d, "--in", s(&k.ct)];
    for bad in [
        vec![0u8; 4096],
        [vec![1u8], vec![0u8; 4095]].concat(),
        vec![1u8; 4096],
    ] {
        fs::write(&sk, &bad).unwrap();
        fails(&decrypt, "device.sk");
    }
    fs::write(&sk, &saved).unwrap();
    ok(&decrypt);

    // secret.seal of another key.
    let seal_sk = k.dir.join("secret.seal");
    let saved = fs::read(&seal_sk).unwrap();
    fs::copy(other.dir.join("secret.seal"), &seal_sk).unwrap();
    fails(&decrypt, "hold different secret keys");
    fails(
        &["keys", "--dir", d, "--relin"],
        "hold different secret keys",
    );
    fails(
        &[
            "encrypt",
            "--dir",
            d,
            "--mode",
            "seal-blake2xb",
            "--in",
            v,
            "--out",
            s(&ct_out),
        ],
        "hold different secret keys",
    );
    fs::write(&seal_sk, &saved).unwrap();
    ok(&decrypt);
}

#[test]
fn parameters_other_than_the_preset_and_huge_files_are_refused_cheaply() {
    let root = scratch();
    let k = keys(root.path(), "k", "seal4096");
    let d = s(&k.dir);
    let params = k.dir.join("params.seal");
    let saved = fs::read(&params).unwrap();
    let adapt_out = root.path().join("a.seal");
    let adapt = [
        "adapt",
        "--dir",
        d,
        "--in",
        s(&k.ct),
        "--out",
        s(&adapt_out),
    ];

    // Another plain modulus.
    let mut other = EncryptionParameters::for_preset::<zeppelin::Seal4096>();
    other.plain_modulus = 40961;
    fs::write(&params, other.save(ComprMode::None).unwrap()).unwrap();
    fails(
        &adapt,
        "params.seal: EncryptionParameters does not fit the device preset seal4096 (named in D/preset): plain modulus 40961, the preset has 65537",
    );
    assert!(!adapt_out.exists());

    // n = 2^17 with 256 primes (6 KB): refused without building SEAL's tables, under a 1 GiB
    // address-space limit.
    let primes = EncryptionParameters::for_preset::<zeppelin::Seal4096>().coeff_modulus;
    let huge = EncryptionParameters::bfv(
        1 << 17,
        primes.iter().copied().cycle().take(256).collect(),
        65537,
    );
    fs::write(&params, huge.save(ComprMode::None).unwrap()).unwrap();
    let decrypt = ["decrypt", "--dir", d, "--in", s(&k.ct)];
    let o = run_with(&["--as=1073741824"], &decrypt, Stdio::piped());
    assert_error(&o, "decrypt with huge params", "params.seal");
    fs::write(&params, &saved).unwrap();
    ok(&decrypt);

    // A 3 GB ciphertext (sparse) that starts like a SEAL object: refused before it is read.
    let big = root.path().join("big.ct");
    let mut head = fs::read(&k.ct).unwrap();
    head.truncate(16);
    fs::write(&big, &head).unwrap();
    fs::OpenOptions::new()
        .write(true)
        .open(&big)
        .unwrap()
        .set_len(3 << 30)
        .unwrap();
    let o = run_with(
        &["--as=1073741824"],
        &["decrypt", "--dir", d, "--in", s(&big)],
        Stdio::piped(),
    );
    assert_error(&o, "decrypt of a 3 GB file", "big.ct");
    let o = run_with(
        &["--as=1073741824"],
        &["adapt", "--dir", d, "--in", s(&big), "--out", s(&adapt_out)],
        Stdio::piped(),
    );
    assert_error(&o, "adapt of a 3 GB file", "big.ct");
    // A values file of 3 GB.
    let o = run_with(
        &["--as=1073741824"],
        &[
            "encrypt",
            "--dir",
            d,
            "--mode",
            "seeded",
            "--in",
            s(&big),
            "--out",
            s(&adapt_out),
        ],
        Stdio::piped(),
    );
    assert_error(&o, "encrypt of a 3 GB values file", "big.ct");
    assert!(!adapt_out.exists());
}
