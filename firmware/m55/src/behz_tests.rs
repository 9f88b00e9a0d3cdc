//! The BEHZ decryption tail on target: the Helium kernels behind `zeppelin::behz::accumulate`
//! / `finish` equal the portable backend's (the scalar definitions) word for word over thousands of random inputs (and
//! edge inputs) for every prime and level of both presets, and the ablation (scalar twin vs
//! MVE, same image) in instructions retired.

use crate::harness::{first_mismatch, Harness, TestRng};
use crate::meter::median_instructions;
use crate::ring_tests::N;
use cortex_m_semihosting::hprintln;
use zeppelin::behz;
use zeppelin::params::level_constants;
use zeppelin::{Params, Seal4096, Zeppelin4096};
use zeppelin_ring::mve::Mve;
use zeppelin_ring::Portable;

/// Rounds of random inputs per (level, prime), after two edge rounds (all zero; all at the
/// top of their ranges).
const ROUNDS: usize = 6;

/// Fills the inputs of one round: `x`, `c0` below `q`, `acc_t` below `t`, `acc_γ` any word.
#[allow(clippy::too_many_arguments)] // the four buffers of one round and its ranges
fn fill(
    round: usize,
    q: u32,
    t: u32,
    rng: &mut TestRng,
    x: &mut [u32],
    c0: &mut [u32],
    at: &mut [u32],
    ag: &mut [u32],
) {
    for j in 0..x.len() {
        (x[j], c0[j], at[j], ag[j]) = match round {
            0 => (0, 0, 0, 0),
            1 => (q - 1, q - 1, t - 1, u32::MAX),
            _ => (rng.below(q), rng.below(q), rng.below(t), rng.next_u32()),
        };
    }
}

/// Every (level, prime) of preset `P`: `ROUNDS + 2` accumulations and as many finishes,
/// MVE against the scalar twin on copies of the same inputs. Returns (coefficient inputs
/// compared, all equal).
fn compare<P: Params>(
    rng: &mut TestRng,
    bufs: &mut [[u32; N]; 4],
    at2: &mut [u32; N],
    ag2: &mut [u32; N],
) -> (usize, bool) {
    let [x, c0, at, ag] = bufs;
    let mut ok = true;
    let mut inputs = 0;
    for level in 1..=P::K {
        let Some(lc) = level_constants::<P>(level) else {
            return (inputs, false);
        };
        for round in 0..ROUNDS + 2 {
            for (i, table) in P::ntt_tables().iter().take(level).enumerate() {
                let q = table.modulus();
                fill(round, q.value(), P::T, rng, x, c0, at, ag);
                at2.copy_from_slice(at);
                ag2.copy_from_slice(ag);
                ok &= behz::accumulate::<P, _>(&Portable, q, lc, i, x, c0, at, ag).is_ok();
                ok &= behz::accumulate::<P, _>(&Mve, q, lc, i, x, c0, at2, ag2).is_ok();
                ok &= first_mismatch(at, at2).is_none() && first_mismatch(ag, ag2).is_none();
                inputs += N;
            }
            // finish on fresh inputs in range (acc_t < t, acc_γ any word).
            fill(round, 2, P::T, rng, x, c0, at, ag);
            at2.copy_from_slice(at);
            ok &= behz::finish::<P, _>(&Portable, lc, at, ag).is_ok();
            ok &= behz::finish::<P, _>(&Mve, lc, at2, ag).is_ok();
            ok &= first_mismatch(at, at2).is_none();
            inputs += N;
        }
    }
    (inputs, ok)
}

pub fn run(h: &mut Harness, bufs: &mut [[u32; N]; 4], at2: &mut [u32; N], ag2: &mut [u32; N]) {
    let mut rng = TestRng::new(0x4245_485a);
    let (a, ok_a) = compare::<Seal4096>(&mut rng, bufs, at2, ag2);
    h.check(
        "behz mve = scalar twin, Seal4096 (every level and prime: accumulate, finish)",
        ok_a,
        format_args!("a kernel output differs from its scalar twin"),
    );
    let (b, ok_b) = compare::<Zeppelin4096>(&mut rng, bufs, at2, ag2);
    h.check(
        "behz mve = scalar twin, Zeppelin4096 (every level and prime: accumulate, finish)",
        ok_b,
        format_args!("a kernel output differs from its scalar twin"),
    );
    hprintln!(
        "INFO behz mve vs scalar twin: {} coefficient inputs ({} random/edge rounds per level and prime)",
        a + b,
        ROUNDS + 2
    );
}

/// Scalar twin vs MVE for one prime's accumulation and for the finish, n = 4096,
/// Zeppelin4096 at the full level (median of 11 runs each).
pub fn ablation(bufs: &mut [[u32; N]; 4]) {
    let mut rng = TestRng::new(0x4142_4c54);
    let [x, c0, at, ag] = bufs;
    let level = Zeppelin4096::K;
    let Some(lc) = level_constants::<Zeppelin4096>(level) else {
        return;
    };
    let q = Zeppelin4096::ntt_tables()[0].modulus();
    let t = Zeppelin4096::T;
    fill(2, q.value(), t, &mut rng, x, c0, at, ag);
    // Repeated accumulation keeps acc_t < t and acc_γ in range, so every run is valid.
    let sa = median_instructions(|| {
        let _ = behz::accumulate::<Zeppelin4096, _>(&Portable, q, lc, 0, x, c0, at, ag);
    });
    let ma = median_instructions(|| {
        let _ = behz::accumulate::<Zeppelin4096, _>(&Mve, q, lc, 0, x, c0, at, ag);
    });
    fill(2, 2, t, &mut rng, x, c0, at, ag);
    // finish leaves acc_t < t, so it can run again on its own output.
    let sf = median_instructions(|| {
        let _ = behz::finish::<Zeppelin4096, _>(&Portable, lc, at, ag);
    });
    let mf = median_instructions(|| {
        let _ = behz::finish::<Zeppelin4096, _>(&Mve, lc, at, ag);
    });
    hprintln!(
        "TABLE | behz accumulate n=4096 (one prime) | scalar {} | mve {} | {:.2}x |",
        sa,
        ma,
        sa as f32 / ma as f32
    );
    hprintln!(
        "TABLE | behz finish n=4096 | scalar {} | mve {} | {:.2}x |",
        sf,
        mf,
        sf as f32 / mf as f32
    );
}
