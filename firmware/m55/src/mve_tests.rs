//! The Helium backend on target: bit-identity with `Portable` over thousands of random
//! inputs (and edge inputs), the range auditor's certificates and refusals, and the
//! ablation (portable vs MVE, same image, same tables) in instructions retired.

use crate::harness::{first_mismatch, Harness, TestRng};
use crate::meter::{median_instructions, stack_bytes};
use crate::ring_tests::{heapless_name, N, PRIMES, TABLES};
use cortex_m_semihosting::hprintln;
use zeppelin::params::{Params, Seal4096, Zeppelin4096};
use zeppelin_ring::mve::PackedTwiddles;
use zeppelin_ring::mve::{
    certify_packed, certify_pointwise, Mve, Schedule, MAX_CERTIFIED_MODULUS, MAX_PACKED_MODULUS,
    PACKED_INSTRUCTIONS,
};
use zeppelin_ring::{ClientKernels, NttBackend, NttTable, NttView, Portable};

/// SEAL's 28-bit special prime is no device table, but the packed plan must hold for it
/// too (the largest prime the presets name): its own packed twiddles, built here.
static PACKED_28: PackedTwiddles = match PackedTwiddles::new(268_369_921) {
    Ok(t) => t,
    Err(_) => panic!("the packed plan certifies 268369921"),
};
static TABLE_28: NttTable<[u32; 4096]> = match NttTable::new_array(268_369_921) {
    Ok(t) => t.with_packed(PACKED_28.view()),
    Err(_) => panic!("NTT-friendly"),
};

macro_rules! table {
    ($q:expr, $n:expr) => {{
        const T: NttTable<[u32; $n]> = match NttTable::new_array($q) {
            Ok(t) => t,
            Err(_) => panic!("not an NTT-friendly prime for this degree"),
        };
        T
    }};
}

/// `cases` random inputs (plus all-zero and all-(q-1)): forward, inverse and pointwise
/// products (out of place, in place, multiply-accumulate) of `Mve` must equal `Portable`'s word for word. Returns the inputs compared.
fn compare(
    view: &NttView<'_>,
    cases: usize,
    rng: &mut TestRng,
    buf: &mut [[u32; N]; 4],
) -> (u32, bool) {
    let n = view.degree();
    let q = view.modulus.value();
    let [a, b, c, d] = buf;
    let (a, b, c, d) = (&mut a[..n], &mut b[..n], &mut c[..n], &mut d[..n]);
    let mut ok = true;
    let mut count = 0;
    for case in 0..cases + 3 {
        for (i, x) in a.iter_mut().enumerate() {
            *x = match case {
                0 => 0,
                1 => q - 1,
                // alternating extremes: the largest differences in the first layer
                2 if i % 2 == 0 => q - 1,
                2 => 0,
                _ => rng.below(q),
            };
            b[i] = *x;
        }
        ok &= Portable.forward(view, a).is_ok() && Mve.forward(view, b).is_ok();
        ok &= first_mismatch(a, b).is_none();
        // Inverse of fresh random evaluations.
        for (i, x) in c.iter_mut().enumerate() {
            *x = if case == 1 { q - 1 } else { rng.below(q) };
            d[i] = *x;
        }
        ok &= Portable.inverse(view, c).is_ok() && Mve.inverse(view, d).is_ok();
        ok &= first_mismatch(c, d).is_none();
        // Pointwise products of the two transforms, and multiply-accumulate.
        ok &= Portable.pointwise_mul(&view.modulus, a, c, d).is_ok();
        let (pa, pc) = (&*a, &*c);
        let mut e = [0u32; 16];
        for k in (0..n).step_by(16) {
            ok &= Mve
                .pointwise_mul(&view.modulus, &pa[k..k + 16], &pc[k..k + 16], &mut e)
                .is_ok();
            ok &= e[..] == d[k..k + 16];
        }
        // In place: b = a, then b ← b·c with Mve; must equal d = a·c (Portable, above).
        b.copy_from_slice(a);
        ok &= Mve.pointwise_mul_assign(&view.modulus, b, c).is_ok();
        ok &= first_mismatch(b, d).is_none();
        // acc = d; d += a·c, both ways.
        b.copy_from_slice(d);
        ok &= Portable.pointwise_mul_add(&view.modulus, a, c, d).is_ok();
        ok &= Mve.pointwise_mul_add(&view.modulus, a, c, b).is_ok();
        ok &= first_mismatch(b, d).is_none();
        count += 1;
    }
    (count, ok)
}

/// The CDT scan of `ClientKernels`: `Mve` equals `Portable` word for word on random words
/// against the client's table. (The BEHZ kernels of `Mve` are compared on target with the
/// scalar twins in `behz_tests`, through `zeppelin::behz`; calling them here with other
/// constants changes how LTO compiles the client's decryption, and with it the stack figures
/// this image reports.) Returns (words compared, all equal).
fn compare_cdt(rng: &mut TestRng, buf: &mut [[u32; N]; 4]) -> (usize, bool) {
    let cdt = &zeppelin::sampler::CDT;
    let base = cdt.len() as i32 - zeppelin::sampler::GAUSSIAN_BOUND;
    let mut ok = true;
    let mut words_compared = 0;
    let [d, ..] = buf;
    for block in d.chunks_exact_mut(16) {
        for w in block.iter_mut() {
            *w = rng.next_u32();
        }
        let words: &[u32; 16] = match (&*block).try_into() {
            Ok(w) => w,
            Err(_) => return (words_compared, false),
        };
        let (mut ours, mut theirs) = ([0i8; 16], [0i8; 16]);
        Mve.cdt_scan(words, cdt, base, &mut ours);
        Portable.cdt_scan(words, cdt, base, &mut theirs);
        ok &= ours == theirs;
        words_compared += 16;
    }
    (words_compared, ok)
}

pub fn run(h: &mut Harness, buf: &mut [[u32; N]; 4]) {
    let mut rng = TestRng::new(0x4d56_4531);
    let mut name = heapless_name();
    // Random comparison at several degrees and primes.
    let t16 = table!(7681, 16);
    let t64 = table!(134_176_769, 64);
    let t256 = table!(7681, 256);
    let t1024 = table!(268_369_921, 1024);
    let t2048 = table!(65537, 2048);
    let mut total = 0;
    for (label, view, cases) in [
        ("mve = portable n=16 q=7681", t16.view(), 1000usize),
        ("mve = portable n=64 q=134176769", t64.view(), 1000),
        ("mve = portable n=256 q=7681", t256.view(), 400),
        ("mve = portable n=1024 q=268369921", t1024.view(), 100),
        ("mve = portable n=2048 q=65537", t2048.view(), 50),
    ] {
        let (count, ok) = compare(&view, cases, &mut rng, buf);
        total += count;
        h.check(label, ok, format_args!("a transform or product differs"));
    }
    for (i, table) in TABLES.iter().enumerate() {
        let (count, ok) = compare(&table.view(), 40, &mut rng, buf);
        total += count;
        h.check(
            name.set_q("", "mve = portable n=4096 q=", PRIMES[i]),
            ok,
            format_args!("a transform or product differs"),
        );
    }
    // The packed radix-4 kernels: the presets' device tables carry their twiddles.
    let mut packed_total = 0;
    let packed_tables = Seal4096::ntt_tables()
        .iter()
        .chain(Zeppelin4096::ntt_tables())
        .chain([Seal4096::t_table(), &TABLE_28]);
    for table in packed_tables {
        let view = table.view();
        let attached = view.packed.is_some();
        let (count, ok) = compare(&view, 150, &mut rng, buf);
        packed_total += count;
        h.check(
            name.set_q(
                "",
                "mve packed radix-4 = portable n=4096 q=",
                view.modulus.value(),
            ),
            attached && ok,
            format_args!("packed twiddles attached: {attached}; a transform or product differs"),
        );
    }
    hprintln!(
        "INFO mve vs portable: {} random/edge input sets on the general schedule, {} on the packed kernels; each forward + inverse + products",
        total,
        packed_total
    );
    let (words, ok) = compare_cdt(&mut rng, buf);
    h.check(
        "mve = portable cdt scan (ClientKernels, the client's table)",
        ok,
        format_args!("a sample differs"),
    );
    hprintln!("INFO mve vs portable cdt scan: {} words", words);

    // The auditor: certificates for the presets' primes, refusal past the limit.
    for (i, table) in TABLES.iter().enumerate() {
        let v = table.view();
        let (f, b) = (
            Schedule::forward(PRIMES[i], v.log_n),
            Schedule::inverse(PRIMES[i], v.log_n),
        );
        match (f, b, certify_pointwise(PRIMES[i])) {
            (Ok(f), Ok(b), Ok(p)) => hprintln!(
                "INFO range certificate q={}: forward max {} ({:.2}q), inverse max {} ({:.2}q), pointwise max {}; limit 2^31",
                PRIMES[i],
                f.max_bound,
                f.max_bound as f32 / PRIMES[i] as f32,
                b.max_bound,
                b.max_bound as f32 / PRIMES[i] as f32,
                p
            ),
            other => {
                h.check("range auditor certifies the presets' primes", false, format_args!("{other:?}"));
            }
        }
    }
    for q in Seal4096::DATA_PRIMES
        .iter()
        .chain(Zeppelin4096::DATA_PRIMES)
        .chain([&Seal4096::T, &268_369_921])
    {
        match certify_packed(*q) {
            Ok(b) => hprintln!(
                "INFO packed range certificate q={}: max |intermediate| {} ({:.2}q); limit 2^31 - 1",
                q,
                b,
                b as f32 / *q as f32
            ),
            Err(e) => h.check("packed plan certifies the presets' primes", false, format_args!("{e:?}")),
        }
    }
    h.check(
        "packed plan certifies q < 2^28, refuses q=1061093377",
        certify_packed(MAX_PACKED_MODULUS).is_ok() && certify_packed(1_061_093_377).is_err(),
        format_args!("verdicts unexpected"),
    );
    let refused = Schedule::forward(1_061_093_377, 12).is_err()
        && Schedule::inverse(1_061_093_377, 12).is_err()
        && Schedule::forward(MAX_CERTIFIED_MODULUS, 17).is_ok();
    h.check(
        "range auditor refuses q=1061093377 (4q > 2^31), certifies q < 2^29",
        refused,
        format_args!("auditor verdicts unexpected"),
    );
    // The refused modulus still gets correct results (Portable fallback).
    let big = table!(1_061_093_377, 64);
    let (_, ok) = compare(&big.view(), 20, &mut rng, buf);
    h.check(
        "mve falls back to portable for q=1061093377",
        ok,
        format_args!("differs"),
    );
}

/// Ablation: the same transforms, tables and inputs, portable vs MVE.
pub fn ablation(buf: &mut [[u32; N]; 4]) {
    hprintln!(
        "TABLE ablation: NTT n=4096, instructions retired (QEMU), median of {} runs",
        crate::meter::RUNS
    );
    hprintln!(
        "TABLE | prime | portable fwd | mve fwd | speedup | portable inv | mve inv | speedup |"
    );
    let mut rng = TestRng::new(7);
    for (i, table) in TABLES.iter().enumerate() {
        let v = table.view();
        let q = PRIMES[i];
        let [a, ..] = buf;
        for x in a.iter_mut() {
            *x = rng.below(q);
        }
        let pf = median_instructions(|| {
            let _ = Portable.forward(&v, a);
        });
        let mf = median_instructions(|| {
            let _ = Mve.forward(&v, a);
        });
        let pi = median_instructions(|| {
            let _ = Portable.inverse(&v, a);
        });
        let mi = median_instructions(|| {
            let _ = Mve.inverse(&v, a);
        });
        hprintln!(
            "TABLE | {} | {} | {} | {:.2}x | {} | {} | {:.2}x |",
            q,
            pf,
            mf,
            pf as f32 / mf as f32,
            pi,
            mi,
            pi as f32 / mi as f32
        );
    }
    hprintln!(
        "TABLE packed radix-4 kernels (the presets' device tables), instructions retired; the generator's count of the emitted program: forward {}, inverse {}",
        PACKED_INSTRUCTIONS.0,
        PACKED_INSTRUCTIONS.1
    );
    hprintln!("TABLE | prime | mve packed fwd | mve packed inv | stack fwd | stack inv |");
    for table in Seal4096::ntt_tables()
        .iter()
        .chain(Zeppelin4096::ntt_tables())
        .chain([&TABLE_28])
    {
        let v = table.view();
        let q = v.modulus.value();
        let [a, ..] = buf;
        for x in a.iter_mut() {
            *x = rng.below(q);
        }
        let f = median_instructions(|| {
            let _ = Mve.forward(&v, a);
        });
        let i = median_instructions(|| {
            let _ = Mve.inverse(&v, a);
        });
        let sf = stack_bytes(|| {
            let _ = Mve.forward(&v, a);
        });
        let si = stack_bytes(|| {
            let _ = Mve.inverse(&v, a);
        });
        hprintln!("TABLE | {} | {} | {} | {} | {} |", q, f, i, sf, si);
    }
    {
        let v = TABLES[0].view();
        let [a, ..] = buf;
        let s = [
            stack_bytes(|| {
                let _ = Portable.forward(&v, a);
            }),
            stack_bytes(|| {
                let _ = Mve.forward(&v, a);
            }),
            stack_bytes(|| {
                let _ = Portable.inverse(&v, a);
            }),
            stack_bytes(|| {
                let _ = Mve.inverse(&v, a);
            }),
        ];
        hprintln!(
            "TABLE | stack bytes | portable fwd {} | mve fwd {} | portable inv {} | mve inv {} |",
            s[0],
            s[1],
            s[2],
            s[3]
        );
    }
    {
        // What the paper's four-step adds: three 64 x 64 transposes per transform. A plain
        // in-place scalar transpose, measured on the same image.
        let [a, ..] = buf;
        let t = median_instructions(|| transpose64(a));
        hprintln!(
            "TABLE | scalar 64x64 in-place transpose | {} | x3 per four-step transform = {} |",
            t,
            3 * t
        );
    }
    let q = PRIMES[0];
    let m = TABLES[0].modulus();
    let [a, b, c, _] = buf;
    for (x, y) in a.iter_mut().zip(b.iter_mut()) {
        *x = rng.below(q);
        *y = rng.below(q);
    }
    let pp = median_instructions(|| {
        let _ = Portable.pointwise_mul(m, a, b, c);
    });
    let mp = median_instructions(|| {
        let _ = Mve.pointwise_mul(m, a, b, c);
    });
    hprintln!(
        "TABLE | pointwise mul n=4096 q={} | portable {} | mve {} | {:.2}x |",
        q,
        pp,
        mp,
        pp as f32 / mp as f32
    );
}

/// In-place transpose of a 64 x 64 row-major matrix (the four-step's data movement).
#[inline(never)]
fn transpose64(a: &mut [u32; N]) {
    for r in 0..64 {
        for c in r + 1..64 {
            a.swap(64 * r + c, 64 * c + r);
        }
    }
}
