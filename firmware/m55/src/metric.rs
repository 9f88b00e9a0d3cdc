//! Machine-readable figures: `METRIC <preset> <operation> <variant> <instructions> <stack bytes>`
//! lines beside the tables (format and names: README, "Machine-readable figures"; checked by
//! `check_metrics.py`).

use crate::harness::TestRng;
use crate::meter::median_of_instructions_stack;
use cortex_m_semihosting::hprintln;
use zeppelin::params::Params;
use zeppelin_ring::NttBackend;

/// The operation's name in `METRIC` lines (README: "Machine-readable figures").
pub fn slug(name: &str) -> &'static str {
    match name {
        "encode" => "encode",
        "keygen (secret key)" => "keygen_secret",
        "keygen (public key)" => "keygen_public",
        "seeded encrypt" => "seeded_encrypt",
        "encode + seeded encrypt" => "encode_seeded_encrypt",
        "classic symmetric encrypt" => "symmetric_encrypt",
        "public-key encrypt" => "public_encrypt",
        "encode + public-key encrypt" => "encode_public_encrypt",
        "decrypt + decode" => "decrypt_decode",
        "decrypt seeded + decode" => "decrypt_seeded_decode",
        _ => "unnamed",
    }
}

/// The preset's name in `METRIC` lines.
pub fn preset_id(preset: &str) -> &'static str {
    match preset {
        "Seal4096" => "seal4096",
        "Zeppelin4096" => "zeppelin4096",
        "Seal8192" => "seal8192",
        _ => "unnamed",
    }
}

/// One machine-readable figure: `METRIC <preset> <operation> <variant> <instructions> <stack bytes>`.
pub fn metric(preset: &str, operation: &str, variant: &str, instructions: u32, stack: usize) {
    hprintln!(
        "METRIC {} {} {} {} {}",
        preset,
        operation,
        variant,
        instructions,
        stack
    );
}

/// The preset's forward and inverse NTTs on `backend`, on the preset's own tables (in DTCM):
/// the largest median over its data primes, and the largest stack of one transform. Prints
/// `METRIC <preset> ntt_forward|ntt_inverse <variant> ...` lines.
pub fn ntt_metrics<P: Params, B: NttBackend>(
    preset: &str,
    variant: &str,
    backend: B,
    buf: &mut [u32],
) {
    let id = preset_id(preset);
    let mut rng = TestRng::new(0x3177);
    let mut worst = [(0u32, 0usize); 2];
    for table in P::ntt_tables() {
        let v = table.view();
        let q = table.modulus().value();
        let a = &mut buf[..P::N];
        for x in a.iter_mut() {
            *x = rng.below(q);
        }
        let runs = [
            median_of_instructions_stack(|| {
                let _ = backend.forward(&v, a);
            }),
            median_of_instructions_stack(|| {
                let _ = backend.inverse(&v, a);
            }),
        ];
        for (w, r) in worst.iter_mut().zip(runs) {
            *w = (w.0.max(r.0), w.1.max(r.1));
        }
    }
    metric(id, "ntt_forward", variant, worst[0].0, worst[0].1);
    metric(id, "ntt_inverse", variant, worst[1].0, worst[1].1);
}
