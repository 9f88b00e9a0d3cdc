//! RBLWE on the emulated Cortex-M33 (QEMU mps2-an505, DSP extension).
//!
//! 1. On-target tests: the `uadd8`/`usub8` kernels against the schoolbook reference, the
//!    assembly ISW gadget and the masked A2B conversion against direct computation.
//! 2. The host's known-answer files (`crates/rblwe/tests/kats/*.kat`), replayed on target.
//! 3. Instructions retired (QEMU) per operation and stage, cold and prefetched, median of
//!    11 runs, with stack high-water marks.
//!
//! Prints `PASS`/`FAIL` lines and exits with status 0 only if everything passed.
#![no_std]
#![no_main]

mod fault_entry;
mod meter;
mod trng;

use core::hint::black_box;
use cortex_m_rt::entry;
use cortex_m_semihosting::hprintln;
use rblwe::cca::{self, CcaSecretKey};
use rblwe::cpa::{self, PublicKey, SecretKey};
use rblwe::kat::{self, KatOutcome};
use rblwe::masked::{self, MaskedSecretKey};
use rblwe::params::{ByteArray, ParamSet};
use rblwe::{arith, reference};
use rblwe::{Branchy, ConstantTime, EntropyPool, Hardened, PublicParameter, Set1, Set2, Set3};
use trng::SimTrng;
use zeppelin_harness::report::{self, Harness};

static KAT_SET1: &[u8] = include_bytes!("../../../crates/rblwe/tests/kats/set1.kat");
static KAT_SET2: &[u8] = include_bytes!("../../../crates/rblwe/tests/kats/set2.kat");
static KAT_SET3: &[u8] = include_bytes!("../../../crates/rblwe/tests/kats/set3.kat");

/// Pool capacity for measurements: holds all the randomness of one masked Set 3 decryption
/// (512 + 128 * 40 bytes), so "prefetched" means no refill inside any timed operation.
const POOL: usize = 6144;
type Pool = EntropyPool<SimTrng, POOL>;

/// Deterministic test inputs (xorshift32; not for secrets).
struct Inputs(u32);
impl Inputs {
    fn next(&mut self) -> u32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 17;
        self.0 ^= self.0 << 5;
        self.0
    }
    fn fill(&mut self, out: &mut [u8], mask: u8) {
        for b in out.iter_mut() {
            *b = self.next() as u8 & mask;
        }
    }
}

fn kernel_tests<P: ParamSet>(h: &mut Harness) {
    let mut rng = Inputs(0x1234_5678 ^ P::N as u32 ^ P::Q as u32);
    let mut a = P::Poly::zeroed();
    let mut s = P::Poly::zeroed();
    let mut b = P::Bits::zeroed();
    let mut b_bytes = P::Poly::zeroed();
    let mut ext = P::Wide::zeroed();
    let mut got = P::Poly::zeroed();
    let mut expected = P::Poly::zeroed();
    let mut ok_ct = true;
    let mut ok_branchy = true;
    let mut ok_general = true;
    for _ in 0..3 {
        rng.fill(a.as_mut(), P::COEFF_MASK);
        rng.fill(b.as_mut(), 0xff);
        reference::unpack_bits(b_bytes.as_mut(), b.as_ref());
        reference::negacyclic_mul_fast(expected.as_mut(), a.as_ref(), b_bytes.as_ref(), P::Q);
        arith::extend(ext.as_mut(), a.as_ref());
        arith::mul_binary::<true>(got.as_mut(), ext.as_ref(), b.as_ref());
        arith::reduce(got.as_mut(), P::COEFF_MASK);
        ok_ct &= got == expected;
        arith::mul_binary::<false>(got.as_mut(), ext.as_ref(), b.as_ref());
        arith::reduce(got.as_mut(), P::COEFF_MASK);
        ok_branchy &= got == expected;
        rng.fill(s.as_mut(), 0xff);
        reference::negacyclic_mul_fast(expected.as_mut(), a.as_ref(), s.as_ref(), 256);
        arith::mul_general(got.as_mut(), ext.as_ref(), s.as_ref());
        ok_general &= got == expected;
    }
    h.check_detail(
        "uadd8 binary multiplication (constant-time) == schoolbook",
        P::NAME,
        ok_ct,
    );
    h.check_detail(
        "uadd8 binary multiplication (branchy) == schoolbook",
        P::NAME,
        ok_branchy,
    );
    h.check_detail(
        "general multiplication (shares) == schoolbook",
        P::NAME,
        ok_general,
    );
}

fn gadget_tests(h: &mut Harness) {
    let mut rng = Inputs(0x9e37_79b9);
    let mut ok = true;
    for _ in 0..10_000 {
        let (x0, x1, y0, y1, r) = (rng.next(), rng.next(), rng.next(), rng.next(), rng.next());
        let (z0, z1) = masked::isw_and(x0, x1, y0, y1, r);
        ok &= z0 ^ z1 == (x0 ^ x1) & (y0 ^ y1) && z0 == (x0 & y0) ^ r;
    }
    h.check_detail("asm ISW AND gadget", "10000 cases", ok);
    let mut ok_lanes = true;
    for _ in 0..10_000 {
        let (x, y) = (rng.next(), rng.next());
        let (s, d) = (arith::lane_add(x, y), arith::lane_sub(x, y));
        for t in 0..4 {
            let (xb, yb) = ((x >> (8 * t)) as u8, (y >> (8 * t)) as u8);
            ok_lanes &= (s >> (8 * t)) as u8 == xb.wrapping_add(yb);
            ok_lanes &= (d >> (8 * t)) as u8 == xb.wrapping_sub(yb);
        }
    }
    h.check_detail(
        "uadd8/usub8 lanes == byte arithmetic",
        "10000 cases",
        ok_lanes,
    );
    let mut ok_a2b = true;
    let mut random = [0u32; masked::RANDOM_WORDS_PER_GROUP];
    for log_q in [7u32, 8] {
        for _ in 0..5_000 {
            let (x0, x1) = (rng.next(), rng.next());
            for w in random.iter_mut() {
                *w = rng.next();
            }
            let (b0, b1) = masked::a2b_msb(x0, x1, &random, log_q);
            let mut expected = 0u8;
            for t in 0..4 {
                let sum = ((x0 >> (8 * t)) as u8).wrapping_add((x1 >> (8 * t)) as u8);
                expected |= ((sum >> (log_q - 1)) & 1) << t;
            }
            ok_a2b &= b0 ^ b1 == expected;
        }
    }
    h.check_detail(
        "masked A2B + MSB (asm gadget) == direct",
        "10000 cases",
        ok_a2b,
    );
}

fn kat_test<P: ParamSet>(h: &mut Harness, file: &[u8]) {
    match kat::check::<P>(file) {
        Ok(KatOutcome::Pass { sections }) => {
            h.check_detail("KAT", P::NAME, true);
            hprintln!("     {} sections, {} bytes", sections, file.len());
        }
        Ok(KatOutcome::Mismatch { section }) => {
            h.check_detail("KAT", P::NAME, false);
            hprintln!("     first mismatch in section {}", section);
        }
        Ok(KatOutcome::WrongLength { produced, expected }) => {
            h.check_detail("KAT", P::NAME, false);
            hprintln!("     produced {} bytes, file has {}", produced, expected);
        }
        Err(e) => {
            h.check_detail("KAT", P::NAME, false);
            hprintln!("     error: {}", e);
        }
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Mode {
    Cold,
    Prefetched,
}

fn fresh_pool(seed: u32, mode: Mode) -> Pool {
    let mut pool = Pool::new(SimTrng::new(seed));
    if mode == Mode::Prefetched {
        let _ = pool.prefetch();
    }
    pool
}

/// Median instructions over RUNS runs of `op` (which reports success), each with a fresh
/// pool built outside the timed window.
fn median_of<F: FnMut(&mut Pool) -> bool>(cal: (u64, u64), mode: Mode, mut op: F) -> (u64, bool) {
    let mut samples = [0u32; meter::RUNS];
    let mut all_ok = true;
    for (i, s) in samples.iter_mut().enumerate() {
        let mut pool = fresh_pool(0xC0FFEE + i as u32, mode);
        let mut ok = false;
        *s = meter::ticks(|| ok = op(&mut pool));
        all_ok &= ok;
    }
    (
        meter::to_instructions(meter::median(&mut samples), cal),
        all_ok,
    )
}

fn row<F: FnMut(&mut Pool) -> bool>(
    h: &mut Harness,
    cal: (u64, u64),
    set: &str,
    stage: &str,
    op: &str,
    needs_entropy: bool,
    mut f: F,
) {
    let (cold, ok_cold) = median_of(cal, Mode::Cold, &mut f);
    let mut ok_stack = false;
    let stack = {
        let mut pool = fresh_pool(7, Mode::Cold);
        meter::stack_bytes(|| ok_stack = f(&mut pool))
    };
    let (warm, ok_warm) = if needs_entropy {
        median_of(cal, Mode::Prefetched, &mut f)
    } else {
        (0, true)
    };
    if needs_entropy {
        hprintln!(
            "| {} | {} | {} | {} | {} | {} |",
            set,
            stage,
            op,
            cold,
            warm,
            stack
        );
    } else {
        hprintln!(
            "| {} | {} | {} | {} | - | {} |",
            set,
            stage,
            op,
            cold,
            stack
        );
    }
    if !(ok_cold && ok_warm && ok_stack) {
        h.check_detail("measured operation returned Ok", op, false);
    }
}

fn measure<P: ParamSet>(cal: (u64, u64), h: &mut Harness) {
    let a = PublicParameter::<P>::from_seed(&[0x42; 32]);
    let mut setup = fresh_pool(99, Mode::Cold);
    let message = [0x5au8; 64];
    let message = &message[..P::N / 8];
    let mut out_buffer = [0u8; 64];
    let out = &mut out_buffer[..P::N / 8];
    let set = P::NAME;

    // Stages 1 and 2: CPA, branchy and branch-free.
    macro_rules! cpa_stage {
        ($cfg:ty, $label:expr) => {{
            let (pk, sk) = match cpa::keygen::<P, $cfg, _, POOL>(&a, &mut setup) {
                Ok(k) => k,
                Err(_) => return h.check_detail("setup keygen", set, false),
            };
            let ct = match cpa::encrypt::<P, $cfg, _, POOL>(&pk, message, &mut setup) {
                Ok(c) => c,
                Err(_) => return h.check_detail("setup encrypt", set, false),
            };
            row(h, cal, set, $label, "keygen", true, |pool| {
                black_box(cpa::keygen::<P, $cfg, _, POOL>(black_box(&a), pool).is_ok())
            });
            row(h, cal, set, $label, "encrypt", true, |pool| {
                black_box(cpa::encrypt::<P, $cfg, _, POOL>(black_box(&pk), message, pool).is_ok())
            });
            row(h, cal, set, $label, "decrypt", false, |_pool| {
                black_box(cpa::decrypt::<P, $cfg>(black_box(&sk), &ct, out).is_ok())
            });
            let ok = cpa::decrypt::<P, $cfg>(&sk, &ct, out).is_ok()
                && (P::FAILURE_LOG2 < -12 && &out[..] == message || P::FAILURE_LOG2 >= -12);
            h.check_detail("measured decryption correct", $label, ok);
        }};
    }
    cpa_stage!(Branchy, "branchy CPA");
    cpa_stage!(ConstantTime, "branch-free CPA");

    // Stage 3: branch-free + CCA2 + fault hardening (plain key).
    let (cpk, mut csk) = match cca::keygen::<P, Hardened, _, POOL>(&a, &mut setup) {
        Ok(k) => k,
        Err(_) => return h.check_detail("setup cca keygen", set, false),
    };
    let cct = match cca::encrypt::<P, Hardened, _, POOL>(&cpk, message, &mut setup) {
        Ok(c) => c,
        Err(_) => return h.check_detail("setup cca encrypt", set, false),
    };
    let label = "BF + CCA2/fault";
    row(h, cal, set, label, "keygen", true, |pool| {
        black_box(cca::keygen::<P, Hardened, _, POOL>(black_box(&a), pool).is_ok())
    });
    row(h, cal, set, label, "encrypt", true, |pool| {
        black_box(cca::encrypt::<P, Hardened, _, POOL>(black_box(&cpk), message, pool).is_ok())
    });
    row(h, cal, set, label, "decrypt", false, |pool| {
        black_box(cca::decrypt::<P, Hardened, _, _, POOL>(&mut csk, &cct, pool, out).is_ok())
    });

    // Stage 4: + first-order masked decryption (shared-key keygen, masked CPA decryption).
    let (mpk, mut msk) = match cca::keygen_masked::<P, Hardened, _, POOL>(&a, &mut setup) {
        Ok(k) => k,
        Err(_) => return h.check_detail("setup masked keygen", set, false),
    };
    let mct = match cca::encrypt::<P, Hardened, _, POOL>(&mpk, message, &mut setup) {
        Ok(c) => c,
        Err(_) => return h.check_detail("setup masked encrypt", set, false),
    };
    let label = "BF + CCA2/fault + masked dec";
    row(h, cal, set, label, "keygen", true, |pool| {
        black_box(cca::keygen_masked::<P, Hardened, _, POOL>(black_box(&a), pool).is_ok())
    });
    row(h, cal, set, label, "encrypt", true, |pool| {
        black_box(cca::encrypt::<P, Hardened, _, POOL>(black_box(&mpk), message, pool).is_ok())
    });
    row(h, cal, set, label, "decrypt", true, |pool| {
        black_box(cca::decrypt::<P, Hardened, _, _, POOL>(&mut msk, &mct, pool, out).is_ok())
    });
    let ok = cca::decrypt::<P, Hardened, _, _, POOL>(&mut msk, &mct, &mut setup, out).is_ok()
        && (P::FAILURE_LOG2 >= -12 || &out[..] == message);
    h.check_detail("measured masked CCA2 decryption correct", set, ok);
    hprintln!(
        "|   {} state bytes: PublicKey {}, SecretKey {}, CcaSecretKey {}, CcaSecretKey<masked> {}, pool {} |",
        set,
        core::mem::size_of::<PublicKey<P>>(),
        core::mem::size_of::<SecretKey<P>>(),
        core::mem::size_of::<CcaSecretKey<P, SecretKey<P>>>(),
        core::mem::size_of::<CcaSecretKey<P, MaskedSecretKey<P>>>(),
        core::mem::size_of::<Pool>()
    );
}

/// Ticks of `f`, median of RUNS.
fn median_ticks<F: FnMut()>(mut f: F) -> u32 {
    meter::median_of(|| meter::ticks(&mut f))
}

/// Secret-independence of the instruction count (a stronger, exact form of the paper's
/// fixed-versus-random timing test: QEMU counts every retired instruction). The same
/// operation runs on two inputs that differ only in secret data; with branch-free code the
/// counts must agree to within one SysTick tick (the tick phase at the start may differ).
/// The branchy baseline is measured alongside to show the check can fail.
fn constant_count_checks<P: ParamSet>(h: &mut Harness, cal: (u64, u64)) {
    let a = PublicParameter::<P>::from_seed(&[0x24; 32]);
    let mut pool = fresh_pool(5, Mode::Cold);
    let message = [0x3cu8; 64];
    let message = &message[..P::N / 8];
    let mut out_buffer = [0u8; 64];
    let out = &mut out_buffer[..P::N / 8];
    // Two secret keys of very different Hamming weight (n/8 + 8 and 7n/8 - 8).
    let mut light = P::Bits::zeroed();
    let mut heavy = P::Bits::zeroed();
    for i in 0..P::N / 8 {
        light.as_mut()[i] = if i % 8 == 0 { 0x03 } else { 0x01 };
        heavy.as_mut()[i] = !light.as_ref()[i];
    }
    let (Ok(light), Ok(heavy)) = (
        SecretKey::<P>::from_bytes(light.as_ref()),
        SecretKey::<P>::from_bytes(heavy.as_ref()),
    ) else {
        return h.check_detail("constant-count setup", P::NAME, false);
    };
    let Ok((pk, _)) = cpa::keygen::<P, Hardened, _, POOL>(&a, &mut pool) else {
        return h.check_detail("constant-count setup", P::NAME, false);
    };
    let Ok(ct) = cpa::encrypt::<P, Hardened, _, POOL>(&pk, message, &mut pool) else {
        return h.check_detail("constant-count setup", P::NAME, false);
    };
    let pair = |x: u32, y: u32| {
        (
            meter::to_instructions(x, cal),
            meter::to_instructions(y, cal),
        )
    };
    let close = |x: u32, y: u32| x.abs_diff(y) <= 1;

    let b0 = median_ticks(|| {
        black_box(cpa::decrypt::<P, Branchy>(&light, &ct, out).is_ok());
    });
    let b1 = median_ticks(|| {
        black_box(cpa::decrypt::<P, Branchy>(&heavy, &ct, out).is_ok());
    });
    let t0 = median_ticks(|| {
        black_box(cpa::decrypt::<P, ConstantTime>(&light, &ct, out).is_ok());
    });
    let t1 = median_ticks(|| {
        black_box(cpa::decrypt::<P, ConstantTime>(&heavy, &ct, out).is_ok());
    });
    let (bl, bh) = pair(b0, b1);
    let (tl, th) = pair(t0, t1);
    hprintln!(
        "     {} CPA decrypt, light vs heavy key: branchy {} vs {}; branch-free {} vs {}",
        P::NAME,
        bl,
        bh,
        tl,
        th
    );
    h.check_detail(
        "instruction count independent of the secret key (branch-free CPA decrypt)",
        P::NAME,
        close(t0, t1),
    );
    h.check_detail(
        "branchy baseline does depend on the key (the check can fail)",
        P::NAME,
        !close(b0, b1),
    );

    // Encryption: the secret is e1 (from the pool); different pool seeds give different e1.
    let e0 = median_ticks(|| {
        let mut p = fresh_pool(1, Mode::Prefetched);
        black_box(cpa::encrypt::<P, ConstantTime, _, POOL>(&pk, message, &mut p).is_ok());
    });
    let e1 = median_ticks(|| {
        let mut p = fresh_pool(0xdead_beef, Mode::Prefetched);
        black_box(cpa::encrypt::<P, ConstantTime, _, POOL>(&pk, message, &mut p).is_ok());
    });
    h.check_detail("instruction count independent of e1 and message (branch-free encrypt, incl. untimed pool setup)", P::NAME, close(e0, e1));

    // CCA2 decryption of a valid and of a tampered ciphertext (implicit rejection).
    let Ok((cpk, mut csk)) = cca::keygen::<P, Hardened, _, POOL>(&a, &mut pool) else {
        return h.check_detail("constant-count setup", P::NAME, false);
    };
    let Ok(valid) = cca::encrypt::<P, Hardened, _, POOL>(&cpk, message, &mut pool) else {
        return h.check_detail("constant-count setup", P::NAME, false);
    };
    let mut bytes = [0u8; 2 * 512 + 2 * 64];
    let len = rblwe::cca::CcaCiphertext::<P>::BYTES;
    let _ = valid.write_bytes(&mut bytes[..len]);
    bytes[len - 1] ^= 0x40;
    let Ok(invalid) = rblwe::cca::CcaCiphertext::<P>::from_bytes(&bytes[..len]) else {
        return h.check_detail("constant-count setup", P::NAME, false);
    };
    let v = median_ticks(|| {
        black_box(
            cca::decrypt::<P, Hardened, _, _, POOL>(&mut csk, &valid, &mut pool, out).is_ok(),
        );
    });
    let i = median_ticks(|| {
        black_box(
            cca::decrypt::<P, Hardened, _, _, POOL>(&mut csk, &invalid, &mut pool, out).is_ok(),
        );
    });
    let (vv, ii) = pair(v, i);
    hprintln!(
        "     {} CCA2 decrypt, valid vs tampered: {} vs {}",
        P::NAME,
        vv,
        ii
    );
    h.check_detail(
        "instruction count independent of ciphertext validity (CCA2 decrypt)",
        P::NAME,
        close(v, i),
    );

    // Masked decryption with the two keys (shares are refreshed from the pool each time).
    let (Ok(mut ml), Ok(mut mh)) = (
        MaskedSecretKey::from_secret_key(&light, &mut pool),
        MaskedSecretKey::from_secret_key(&heavy, &mut pool),
    ) else {
        return h.check_detail("constant-count setup", P::NAME, false);
    };
    let m0 = median_ticks(|| {
        black_box(ml.decrypt::<Hardened, _, POOL>(&ct, &mut pool, out).is_ok());
    });
    let m1 = median_ticks(|| {
        black_box(mh.decrypt::<Hardened, _, POOL>(&ct, &mut pool, out).is_ok());
    });
    h.check_detail(
        "instruction count independent of the secret key (masked decrypt)",
        P::NAME,
        close(m0, m1),
    );
}

#[entry]
fn main() -> ! {
    // Keeps the fault-campaign entry points in the image (security/fault calls them).
    black_box(fault_entry::keep());
    let mut h = Harness::default();
    let mut cp = match cortex_m::Peripherals::take() {
        Some(cp) => cp,
        None => report::fail_and_exit(format_args!("peripherals unavailable")),
    };
    meter::start_systick(&mut cp.SYST);
    let cal = meter::calibrate();
    hprintln!(
        "rblwe on Cortex-M33 (QEMU mps2-an505, +dsp): SysTick calibration {} instructions in {} ticks ({}.{:02} instructions per tick)",
        cal.0,
        cal.1,
        cal.0 / cal.1,
        (cal.0 % cal.1) * 100 / cal.1
    );
    let empty = meter::to_instructions(meter::ticks(|| {}), cal);
    hprintln!(
        "measurement overhead (empty closure): {} instructions",
        empty
    );

    hprintln!("== on-target tests ==");
    kernel_tests::<Set1>(&mut h);
    kernel_tests::<Set2>(&mut h);
    kernel_tests::<Set3>(&mut h);
    gadget_tests(&mut h);

    hprintln!("== known-answer tests (files from crates/rblwe/tests/kats) ==");
    kat_test::<Set1>(&mut h, KAT_SET1);
    kat_test::<Set2>(&mut h, KAT_SET2);
    kat_test::<Set3>(&mut h, KAT_SET3);

    hprintln!("== secret-independent instruction counts ==");
    constant_count_checks::<Set1>(&mut h, cal);
    constant_count_checks::<Set2>(&mut h, cal);
    constant_count_checks::<Set3>(&mut h, cal);

    hprintln!("== instructions retired (QEMU), median of {} runs; cold = empty entropy pool, prefetched = full pool; stack = high-water mark in bytes ==", meter::RUNS);
    hprintln!("| set | stage | operation | cold | prefetched | stack (B) |");
    hprintln!("|---|---|---|---|---|---|");
    measure::<Set1>(cal, &mut h);
    measure::<Set2>(cal, &mut h);
    measure::<Set3>(cal, &mut h);

    hprintln!("== {} passed, {} failed ==", h.passed, h.failed);
    h.exit()
}

#[panic_handler]
fn panic(info: &core::panic::PanicInfo) -> ! {
    report::fail_and_exit(format_args!("panic: {}", info))
}
