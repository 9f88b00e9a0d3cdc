//! Trace image for the trace-equivalence check (`security/trace/run.sh`) on the M33: runs
//! one RBLWE decryption on every pair of the input that the script loaded at `INPUT` (see
//! `zeppelin_harness::trace`), each side of a pair inside its own trace window. Per pair, the ciphertext (public) is the same for both sides; the sides differ in
//! the secret key and the masking randomness, and so in the outcome: pair `k` is encrypted to
//! side `k % 3` (side 2: to neither, a key from the public block), so CCA2 pairs compare a
//! valid against an invalid ciphertext, or two rejections. Keys and ciphertexts are made
//! outside the windows. Prints how many pairs gave differing outputs and exits 0 only if
//! every operation returned Ok.
//!
//! CCA2 decryption is traced under every configuration a user can name (`ConstantTime`,
//! `Hardened`, each with a plain and a masked key), and through the test image's fault
//! entry points (`fault_entry.rs`, compiled into this image too), whose inlined copies of
//! `cca::decrypt` are the ones the binary check (security/cca-branch) looks at.
//!
//! Not part of `firmware/m33/run.sh`: without a loaded input it prints FAIL and exits 1.
#![no_std]
#![no_main]

#[path = "../trng.rs"]
mod trng;
// The test image's C-callable entry points (the fault campaign's), traced as they are.
#[path = "../fault_entry.rs"]
#[allow(dead_code)]
mod fault_entry;

use cortex_m_rt::entry;
use cortex_m_semihosting::{debug, hprintln};
use rblwe::cca::{self, CcaCiphertext};
use rblwe::cpa::{self, Ciphertext};
use rblwe::params::ParamSet;
use rblwe::{Branchy, ConstantTime, EntropyPool, Error, Hardened, PublicParameter};
use rblwe::{Set1, Set2, Set3};
use trng::SimTrng;
use zeppelin_harness::trace::{self, ctrace_close, ctrace_open, digest, Expand, Input, Pair};

// 3 MiB into the AN505's 4 MiB SSRAM1 (the code region): the image's segments end far below
// (QEMU would refuse an overlapping load), and nothing writes there.
zeppelin_harness::input_at!(INPUT, 0x1030_0000);

/// Holds all the randomness of one masked Set 3 decryption (as the test image's pool).
const POOL: usize = 6144;
type Pool = EntropyPool<SimTrng, POOL>;

/// Operation kinds; the header's operation number is `16 * set + kind` (set 1, 2, 3), or a
/// control number.
const CPA_CONSTANT_TIME: u32 = 1;
const CPA_HARDENED: u32 = 2;
const CCA_DECRYPT: u32 = 3;
const CCA_MASKED_DECRYPT: u32 = 4;
const CCA_DECRYPT_CONSTANT_TIME: u32 = 5;
const CCA_MASKED_DECRYPT_CONSTANT_TIME: u32 = 6;
/// Set 1 only: `fault_entry_decrypt_set1_unhardened` (ConstantTime) and
/// `fault_entry_decrypt_set1` (Hardened), key and ciphertext as bytes.
const FAULT_ENTRY_DECRYPT_CONSTANT_TIME: u32 = 7;
const FAULT_ENTRY_DECRYPT_HARDENED: u32 = 8;
/// One key for both windows, the valid ciphertext against the same one with one bit
/// flipped (part `k % 4` of c1, c2, c3, c4; bit from the secret block): the validity bit
/// itself is the only secret difference (plain / masked key, ConstantTime / Hardened).
const CCA_TAMPER_CONSTANT_TIME: u32 = 9;
const CCA_TAMPER_HARDENED: u32 = 10;
const CCA_MASKED_TAMPER_CONSTANT_TIME: u32 = 11;
const CCA_MASKED_TAMPER_HARDENED: u32 = 12;
/// Set 1 only: the fault entry points on one key, valid against tampered ciphertext bytes.
const FAULT_ENTRY_TAMPER_CONSTANT_TIME: u32 = 13;
const FAULT_ENTRY_TAMPER_HARDENED: u32 = 14;
/// Controls: the deliberately branchy stage-1 CPA decryption of the crate (Set 1), a branch
/// on a secret bit, a secret-indexed load.
const CONTROL_BRANCHY_CPA: u32 = 199;
const CONTROL_LEAKY_BRANCH: u32 = 200;
const CONTROL_LEAKY_LOAD: u32 = 201;

fn pool_from(seed: &[u8; 32]) -> Pool {
    let mut pool = Pool::new(SimTrng::new(Expand::new(seed).next_u32()));
    let _ = pool.prefetch();
    pool
}

/// Which side pair `k`'s ciphertext is encrypted to (2: neither).
fn owner(k: usize) -> usize {
    k % 3
}

fn message<P: ParamSet>(public: &[u8; 32], out: &mut [u8]) {
    let mut g = Expand::new(public);
    for b in out.iter_mut().take(P::N / 8) {
        *b = g.next_u32() as u8;
    }
}

/// The key seed of side 0 or 1, or (2) of a third key from the public block: pair `k`'s
/// ciphertext (public, the same for both windows) is encrypted to the key of `owner(k)`.
fn key_seed(pair: &Pair, side: usize) -> [u8; 32] {
    if side < 2 {
        pair.seed(side, 0)
    } else {
        pair.public
    }
}

/// One CPA window: the side's key (regenerated from its seed, before the window), then the
/// decryption alone inside the window. Out of line and called from one loop, so that both
/// sides run on the same stack addresses.
#[inline(never)]
fn cpa_side<P: ParamSet, C: rblwe::Countermeasures>(
    a: &PublicParameter<P>,
    seed: &[u8; 32],
    ct: &Ciphertext<P>,
) -> Result<u32, Error> {
    let (_, sk) = cpa::keygen::<P, C, _, POOL>(a, &mut pool_from(seed))?;
    let mut out = [0u8; 64];
    ctrace_open();
    let r = cpa::decrypt::<P, C>(&sk, ct, &mut out[..P::N / 8]);
    ctrace_close();
    r.map(|_| digest(out))
}

/// CPA decryption (`C` = ConstantTime, Hardened or the Branchy control) of one pair.
fn cpa_pair<P: ParamSet, C: rblwe::Countermeasures>(
    k: usize,
    pair: &Pair,
    a: &PublicParameter<P>,
    digests: &mut [u32; 2],
) -> Result<(), Error> {
    let (pk, _) = cpa::keygen::<P, C, _, POOL>(a, &mut pool_from(&key_seed(pair, owner(k))))?;
    let mut m = [0u8; 64];
    message::<P>(&pair.public, &mut m);
    let ct = cpa::encrypt::<P, C, _, POOL>(&pk, &m[..P::N / 8], &mut pool_from(&pair.public))?;
    for (side, d) in digests.iter_mut().enumerate() {
        *d = cpa_side::<P, C>(a, &key_seed(pair, side), &ct)?;
    }
    Ok(())
}

/// One CCA2 window (plain or masked key, configuration `C`): the side's key (regenerated
/// from its seed) and its pool of masking randomness (from its noise seed) before the
/// window, the decryption alone inside. Out of line and called from one loop, as
/// [`cpa_side`].
#[inline(never)]
fn cca_side<P: ParamSet, C: rblwe::Countermeasures, const MASKED: bool>(
    a: &PublicParameter<P>,
    seed: &[u8; 32],
    noise: &[u8; 32],
    ct: &CcaCiphertext<P>,
) -> Result<u32, Error> {
    let mut out = [0u8; 64];
    let r = if MASKED {
        let (_, mut sk) = cca::keygen_masked::<P, C, _, POOL>(a, &mut pool_from(seed))?;
        let mut pool = pool_from(noise);
        ctrace_open();
        let r = cca::decrypt::<P, C, _, _, POOL>(&mut sk, ct, &mut pool, &mut out[..P::N / 8]);
        ctrace_close();
        r
    } else {
        let (_, mut sk) = cca::keygen::<P, C, _, POOL>(a, &mut pool_from(seed))?;
        let mut pool = pool_from(noise);
        ctrace_open();
        let r = cca::decrypt::<P, C, _, _, POOL>(&mut sk, ct, &mut pool, &mut out[..P::N / 8]);
        ctrace_close();
        r
    };
    r.map(|_| digest(out))
}

/// CCA2 decryption (plain or masked key, configuration `C`) of one pair.
fn cca_pair<P: ParamSet, C: rblwe::Countermeasures, const MASKED: bool>(
    k: usize,
    pair: &Pair,
    a: &PublicParameter<P>,
    digests: &mut [u32; 2],
) -> Result<(), Error> {
    let mut pool = pool_from(&key_seed(pair, owner(k)));
    let pk = if MASKED {
        cca::keygen_masked::<P, C, _, POOL>(a, &mut pool)?.0
    } else {
        cca::keygen::<P, C, _, POOL>(a, &mut pool)?.0
    };
    let mut m = [0u8; 64];
    message::<P>(&pair.public, &mut m);
    let ct = cca::encrypt::<P, C, _, POOL>(&pk, &m[..P::N / 8], &mut pool_from(&pair.public))?;
    for (side, d) in digests.iter_mut().enumerate() {
        *d = cca_side::<P, C, MASKED>(a, &key_seed(pair, side), &pair.seed(side, 1), &ct)?;
    }
    Ok(())
}

/// The largest CCA2 ciphertext in bytes (Set 3).
const MAX_CCA_CIPHERTEXT: usize = 2 * 512 + 512 / 4;

/// `ct` with one bit flipped: in part `k % 4` (c1, c2, c3, c4), at a byte and bit taken from
/// `secret`. Coefficient bytes (c1, c2) get a bit below 7, so that the value stays below
/// every set's q (128 for Set 2) and the ciphertext still parses.
fn tampered<P: ParamSet>(
    ct: &CcaCiphertext<P>,
    k: usize,
    secret: &[u8; 32],
) -> Result<CcaCiphertext<P>, Error> {
    let mut bytes = [0u8; MAX_CCA_CIPHERTEXT];
    let bytes = &mut bytes[..CcaCiphertext::<P>::BYTES];
    ct.write_bytes(bytes)?;
    let mut g = Expand::new(secret);
    let (start, len, bits) = match k % 4 {
        0 => (0, P::N, 7),
        1 => (P::N, P::N, 7),
        2 => (2 * P::N, P::N / 8, 8),
        _ => (2 * P::N + P::N / 8, P::N / 8, 8),
    };
    let at = start + g.next_u32() as usize % len;
    bytes[at] ^= 1 << (g.next_u32() % bits);
    CcaCiphertext::from_bytes(bytes)
}

/// CCA2 decryption (plain or masked key, configuration `C`) of one pair whose windows share
/// the key (from side 0's key seed) and differ only in the ciphertext's validity: side 0
/// decrypts the valid ciphertext, side 1 the same with one bit flipped ([`tampered`]).
fn cca_tamper_pair<P: ParamSet, C: rblwe::Countermeasures, const MASKED: bool>(
    k: usize,
    pair: &Pair,
    a: &PublicParameter<P>,
    digests: &mut [u32; 2],
) -> Result<(), Error> {
    let seed = pair.seed(0, 0);
    let pk = if MASKED {
        cca::keygen_masked::<P, C, _, POOL>(a, &mut pool_from(&seed))?.0
    } else {
        cca::keygen::<P, C, _, POOL>(a, &mut pool_from(&seed))?.0
    };
    let mut m = [0u8; 64];
    message::<P>(&pair.public, &mut m);
    let valid = cca::encrypt::<P, C, _, POOL>(&pk, &m[..P::N / 8], &mut pool_from(&pair.public))?;
    let invalid = tampered(&valid, k, &pair.seed(1, 2))?;
    // One slot for both windows' ciphertext, so that its address is the same.
    let mut ct = valid.clone();
    for (side, d) in digests.iter_mut().enumerate() {
        if side == 1 {
            ct = invalid.clone();
            core::hint::black_box(&mut ct); // the copy stays in this slot (see below)
        }
        // The same key and masking randomness on both sides: only the validity differs.
        *d = cca_side::<P, C, MASKED>(a, &seed, &pair.seed(0, 1), &ct)?;
    }
    Ok(())
}

/// One window of a fault entry point (Set 1): the side's key as bytes, made before the
/// window; the entry point (parsing, decryption, status) alone inside. Out of line, as
/// [`cpa_side`].
#[inline(never)]
fn fault_entry_side(hardened: bool, seed: &[u8; 32], ct: &[u8]) -> Result<u32, Error> {
    let mut sk = [0u8; fault_entry::SECRET_KEY_BYTES];
    // SAFETY: `sk` holds SECRET_KEY_BYTES.
    let status = unsafe {
        fault_entry::fault_entry_keygen_set1(Expand::new(seed).next_u32(), sk.as_mut_ptr())
    };
    if status != 0 || ct.len() != fault_entry::CIPHERTEXT_BYTES {
        return Err(Error::Entropy);
    }
    let mut out = [0u8; fault_entry::MESSAGE_BYTES];
    let mut check_name = [0u8; fault_entry::CHECK_NAME_BYTES];
    ctrace_open();
    // SAFETY: every buffer has the size the entry point documents.
    let status = unsafe {
        if hardened {
            fault_entry::fault_entry_decrypt_set1(
                sk.as_ptr(),
                ct.as_ptr(),
                out.as_mut_ptr(),
                check_name.as_mut_ptr(),
            )
        } else {
            fault_entry::fault_entry_decrypt_set1_unhardened(
                sk.as_ptr(),
                ct.as_ptr(),
                out.as_mut_ptr(),
                check_name.as_mut_ptr(),
            )
        }
    };
    ctrace_close();
    sk.fill(0);
    if status != 0 {
        return Err(Error::Entropy);
    }
    Ok(digest(out))
}

/// A fault entry point's decryption (Set 1) of one pair. Without `tamper`, the ciphertext,
/// made by `fault_entry_encrypt_set1` to the key of `owner(k)` (side 2: a third key), is the
/// same for both windows and the keys differ; with `tamper`, both windows use side 0's key
/// and side 1 gets the ciphertext with one bit flipped ([`tampered`]).
fn fault_entry_pair(
    hardened: bool,
    tamper: bool,
    k: usize,
    pair: &Pair,
    digests: &mut [u32; 2],
) -> Result<(), Error> {
    let mut owner_sk = [0u8; fault_entry::SECRET_KEY_BYTES];
    let mut m = [0u8; 64];
    message::<Set1>(&pair.public, &mut m);
    let mut ct = [0u8; fault_entry::CIPHERTEXT_BYTES];
    let owner_seed = if tamper {
        pair.seed(0, 0)
    } else {
        key_seed(pair, owner(k))
    };
    // SAFETY: every buffer has the size the entry points document.
    let status = unsafe {
        let s = fault_entry::fault_entry_keygen_set1(
            Expand::new(&owner_seed).next_u32(),
            owner_sk.as_mut_ptr(),
        );
        if s != 0 {
            s
        } else {
            fault_entry::fault_entry_encrypt_set1(
                owner_sk.as_ptr(),
                m.as_ptr(),
                Expand::new(&pair.public).next_u32(),
                ct.as_mut_ptr(),
            )
        }
    };
    owner_sk.fill(0);
    if status != 0 {
        return Err(Error::Entropy);
    }
    let mut bad = [0u8; fault_entry::CIPHERTEXT_BYTES];
    tampered(
        &CcaCiphertext::<Set1>::from_bytes(&ct)?,
        k,
        &pair.seed(1, 2),
    )?
    .write_bytes(&mut bad)?;
    for (side, d) in digests.iter_mut().enumerate() {
        *d = if tamper {
            if side == 1 {
                // Into the same buffer (address) as side 0's valid ciphertext; the barrier
                // keeps the compiler from passing `bad` itself instead of the copy.
                ct = bad;
                core::hint::black_box(&mut ct);
            }
            fault_entry_side(hardened, &owner_seed, &ct)?
        } else {
            fault_entry_side(hardened, &key_seed(pair, side), &ct)?
        };
    }
    Ok(())
}

fn run_set<P: ParamSet>(
    kind: u32,
    k: usize,
    pair: &Pair,
    digests: &mut [u32; 2],
) -> Result<(), Error> {
    let a = PublicParameter::<P>::from_seed(&pair.public);
    match kind {
        CPA_CONSTANT_TIME => cpa_pair::<P, ConstantTime>(k, pair, &a, digests),
        CPA_HARDENED => cpa_pair::<P, Hardened>(k, pair, &a, digests),
        CCA_DECRYPT => cca_pair::<P, Hardened, false>(k, pair, &a, digests),
        CCA_MASKED_DECRYPT => cca_pair::<P, Hardened, true>(k, pair, &a, digests),
        CCA_DECRYPT_CONSTANT_TIME => cca_pair::<P, ConstantTime, false>(k, pair, &a, digests),
        CCA_MASKED_DECRYPT_CONSTANT_TIME => cca_pair::<P, ConstantTime, true>(k, pair, &a, digests),
        CCA_TAMPER_CONSTANT_TIME => cca_tamper_pair::<P, ConstantTime, false>(k, pair, &a, digests),
        CCA_TAMPER_HARDENED => cca_tamper_pair::<P, Hardened, false>(k, pair, &a, digests),
        CCA_MASKED_TAMPER_CONSTANT_TIME => {
            cca_tamper_pair::<P, ConstantTime, true>(k, pair, &a, digests)
        }
        CCA_MASKED_TAMPER_HARDENED => cca_tamper_pair::<P, Hardened, true>(k, pair, &a, digests),
        _ => Err(Error::Entropy),
    }
}

/// One control window, out of line as [`cpa_side`].
#[inline(never)]
fn control_side(op: u32, table: &[u32; 64], secret: &[u8; 4]) -> u32 {
    let word = u32::from_le_bytes(*secret);
    ctrace_open();
    let x = if op == CONTROL_LEAKY_BRANCH {
        trace::leaky_branch(word)
    } else {
        trace::leaky_load(table, word)
    };
    ctrace_close();
    digest(x.to_le_bytes())
}

fn run_control(op: u32, pair: &Pair, digests: &mut [u32; 2]) -> Result<(), Error> {
    let mut table = [0u32; 64];
    let mut g = Expand::new(&pair.public);
    for t in table.iter_mut() {
        *t = g.next_u32();
    }
    for (side, d) in digests.iter_mut().enumerate() {
        let mut word = [0u8; 4];
        word.copy_from_slice(&pair.secret[side][..4]);
        *d = control_side(op, &table, &word);
    }
    Ok(())
}

fn run(op: u32, k: usize, pair: &Pair, digests: &mut [u32; 2]) -> Result<(), Error> {
    match op {
        CONTROL_BRANCHY_CPA => {
            let a = PublicParameter::<Set1>::from_seed(&pair.public);
            cpa_pair::<Set1, Branchy>(k, pair, &a, digests)
        }
        CONTROL_LEAKY_BRANCH | CONTROL_LEAKY_LOAD => run_control(op, pair, digests),
        op if op == 16 + FAULT_ENTRY_DECRYPT_CONSTANT_TIME => {
            fault_entry_pair(false, false, k, pair, digests)
        }
        op if op == 16 + FAULT_ENTRY_DECRYPT_HARDENED => {
            fault_entry_pair(true, false, k, pair, digests)
        }
        op if op == 16 + FAULT_ENTRY_TAMPER_CONSTANT_TIME => {
            fault_entry_pair(false, true, k, pair, digests)
        }
        op if op == 16 + FAULT_ENTRY_TAMPER_HARDENED => {
            fault_entry_pair(true, true, k, pair, digests)
        }
        _ => match op / 16 {
            1 => run_set::<Set1>(op % 16, k, pair, digests),
            2 => run_set::<Set2>(op % 16, k, pair, digests),
            3 => run_set::<Set3>(op % 16, k, pair, digests),
            _ => Err(Error::Entropy),
        },
    }
}

#[entry]
fn main() -> ! {
    // SAFETY: SSRAM1 above every segment of the image (see `INPUT`).
    let input = unsafe { Input::at(INPUT) };
    let Some(request) = input.request() else {
        hprintln!("FAIL trace: no input loaded at CTRACE_INPUT_ADDR (see security/trace/run.sh)");
        exit(false)
    };
    let mut failures = 0usize;
    let mut differing = 0usize;
    for k in 0..request.pairs {
        let pair = input.pair(k);
        let mut digests = [0u32; 2];
        match run(request.op, k, &pair, &mut digests) {
            Ok(()) => differing += (digests[0] != digests[1]) as usize,
            Err(_) => failures += 1,
        }
    }
    hprintln!(
        "TRACE op {} pairs {} differing-outputs {} failures {}",
        request.op,
        request.pairs,
        differing,
        failures
    );
    exit(failures == 0)
}

#[expect(
    clippy::empty_loop,
    reason = "reached only without a semihosting host (QEMU exits first)"
)]
fn exit(ok: bool) -> ! {
    debug::exit(if ok {
        debug::EXIT_SUCCESS
    } else {
        debug::EXIT_FAILURE
    });
    loop {}
}

#[panic_handler]
fn panic(info: &core::panic::PanicInfo) -> ! {
    hprintln!("FAIL panic: {}", info);
    exit(false)
}
