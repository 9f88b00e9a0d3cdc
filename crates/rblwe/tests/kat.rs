//! Known-answer files: the pinned outputs of the KAT script (see `rblwe::kat`). The same
//! files are checked on the Cortex-M33 by `firmware/m33`.
//!
//! Regenerate (only after an intended change of outputs) with
//! `cargo test -p rblwe --release --test kat -- --ignored regenerate_kat_files`.
#![expect(
    clippy::unwrap_used,
    reason = "test helpers outside #[test] fns unwrap on failure (clippy.toml exempts only #[test] fns)"
)]

use rblwe::kat::{self, KatOutcome};
use rblwe::params::ParamSet;
use rblwe::{Set1, Set2, Set3};

const SET1: &[u8] = include_bytes!("kats/set1.kat");
const SET2: &[u8] = include_bytes!("kats/set2.kat");
const SET3: &[u8] = include_bytes!("kats/set3.kat");

#[test]
fn kats_run_production_code() {
    // The simulated fault hooks (feature `fault-sim`) must not be compiled into the code the
    // known answers are checked against; only tests/fault_campaign.rs enables them.
    assert!(
        !rblwe::fault::HOOKS_COMPILED,
        "rblwe was built with fault-sim for the KATs"
    );
}

#[test]
fn pinned_kat_files_match() {
    for (name, outcome) in [
        ("set1", kat::check::<Set1>(SET1).unwrap()),
        ("set2", kat::check::<Set2>(SET2).unwrap()),
        ("set3", kat::check::<Set3>(SET3).unwrap()),
    ] {
        assert_eq!(outcome, KatOutcome::Pass { sections: 15 }, "{name}");
    }
}

#[test]
fn kat_decryptions_recover_the_message() {
    // Offsets from the section table in `rblwe::kat::generate`.
    fn run<P: ParamSet>(file: &[u8]) {
        let (n, b) = (P::N, P::N / 8);
        let message = &file[n + 2 * n + b..n + 2 * n + 2 * b];
        let cpa_dec_at = n + 2 * n + 2 * b + 2 * n;
        assert_eq!(&file[cpa_dec_at..cpa_dec_at + b], message);
        assert_eq!(
            &file[cpa_dec_at + b..cpa_dec_at + 2 * b],
            message,
            "masked.dec"
        );
        let cca_dec_at = cpa_dec_at + 2 * b + (b + 32 + 2 * n) + (2 * n + 2 * b);
        assert_eq!(&file[cca_dec_at..cca_dec_at + b], message, "cca.dec");
        assert_eq!(
            &file[cca_dec_at + b..cca_dec_at + 2 * b],
            message,
            "cca.dec-masked"
        );
        let reject = &file[cca_dec_at + 2 * b..cca_dec_at + 3 * b];
        assert_ne!(reject, message);
        assert_eq!(
            &file[cca_dec_at + 3 * b..cca_dec_at + 4 * b],
            reject,
            "masked rejection"
        );
        assert_eq!(&file[file.len() - b..], message, "masked-keygen.dec");
    }
    run::<Set1>(SET1);
    run::<Set3>(SET3);
}

fn write<P: ParamSet>() {
    let mut buffer = vec![0u8; 16 * 1024];
    let mut writer = kat::Writer::new(&mut buffer);
    kat::generate::<P, _>(&mut writer).unwrap();
    assert!(writer.fitted());
    let len = writer.len;
    let path = format!("{}/tests/kats/{}.kat", env!("CARGO_MANIFEST_DIR"), P::NAME);
    std::fs::write(&path, &buffer[..len]).unwrap();
    println!("wrote {path} ({len} bytes)");
}

#[test]
#[ignore = "rewrites the pinned files; run only after an intended change"]
fn regenerate_kat_files() {
    write::<Set1>();
    write::<Set2>();
    write::<Set3>();
}
