//! Entry points for the emulated TVLA (`security/tvla`): a separate image, so the measured
//! `rblwe-m33` image is unchanged. Unicorn loads this ELF, writes the inputs into RAM and
//! calls one `tvla_*` function per trace; the secret computation is bracketed by
//! [`tvla_trigger_on`] / [`tvla_trigger_off`] (the paper's GPIO trigger), whose addresses the
//! tracer looks up to start and stop recording. Set 1, `Hardened`, the firmware's pool size.
//!
//! The randomness (masks, refresh, gadget randomness) comes from a host-supplied buffer
//! ([`HostRandom`]), fresh per trace. Run under QEMU the image only exits with status 0.
#![no_std]
#![no_main]

use core::hint::black_box;
use core::sync::atomic::{AtomicU32, Ordering};
use cortex_m_rt::entry;
use cortex_m_semihosting::debug;
use rand_core::{CryptoRng, RngCore};
use rblwe::cpa::{self, Ciphertext, SecretKey};
use rblwe::masked::{self, MaskedSecretKey};
use rblwe::params::{ByteArray, ParamSet};
use rblwe::{arith, EntropyPool, Hardened, Set1};

/// Pool capacity, as in the `rblwe-m33` image.
const POOL: usize = 6144;

/// The trigger "GPIO": written by the two trigger functions (through `black_box`, so the
/// stores and the calls stay), which makes them differ.
static TRIGGER: AtomicU32 = AtomicU32::new(0);

/// Start of the traced window (the tracer starts recording at this address).
#[no_mangle]
#[inline(never)]
pub extern "C" fn tvla_trigger_on() {
    black_box(&TRIGGER).store(1, Ordering::SeqCst);
}

/// End of the traced window (the tracer stops recording at this address).
#[no_mangle]
#[inline(never)]
pub extern "C" fn tvla_trigger_off() {
    black_box(&TRIGGER).store(2, Ordering::SeqCst);
}

/// A TRNG stand-in that hands out the host's random bytes in order; fails when they run out.
struct HostRandom<'a> {
    bytes: &'a [u8],
}

impl RngCore for HostRandom<'_> {
    fn next_u32(&mut self) -> u32 {
        let mut word = [0u8; 4];
        self.fill_bytes(&mut word);
        u32::from_le_bytes(word)
    }
    fn next_u64(&mut self) -> u64 {
        let mut word = [0u8; 8];
        self.fill_bytes(&mut word);
        u64::from_le_bytes(word)
    }
    fn fill_bytes(&mut self, dst: &mut [u8]) {
        let _ = self.try_fill_bytes(dst);
    }
    fn try_fill_bytes(&mut self, dst: &mut [u8]) -> Result<(), rand_core::Error> {
        if dst.len() > self.bytes.len() {
            dst.fill(0);
            return Err(rand_core::Error::from(core::num::NonZeroU32::MIN));
        }
        let (head, tail) = self.bytes.split_at(dst.len());
        dst.copy_from_slice(head);
        self.bytes = tail;
        Ok(())
    }
}

impl CryptoRng for HostRandom<'_> {}

type Pool<'a> = EntropyPool<HostRandom<'a>, POOL>;

const KEY_BYTES: usize = <Set1 as ParamSet>::BITS_BYTES;
const CT_BYTES: usize = 2 * <Set1 as ParamSet>::N;

/// # Safety
/// `ptr` must point to `len` readable bytes for the duration of the call.
unsafe fn input<'a>(ptr: *const u8, len: usize) -> &'a [u8] {
    // SAFETY: guaranteed by the caller.
    unsafe { core::slice::from_raw_parts(ptr, len) }
}

/// # Safety
/// `ptr` must point to `len` writable bytes, not aliased, for the duration of the call.
unsafe fn output<'a>(ptr: *mut u8, len: usize) -> &'a mut [u8] {
    // SAFETY: guaranteed by the caller.
    unsafe { core::slice::from_raw_parts_mut(ptr, len) }
}

/// (a) Unmasked CPA decryption (`cpa::decrypt::<Set1, Hardened>`, as inside CCA2 decryption).
/// The window covers the whole call. Returns 0 on success.
///
/// # Safety
/// `key` holds 32 bytes, `ct` 512 bytes, `out` 32 writable bytes.
#[no_mangle]
pub unsafe extern "C" fn tvla_cpa_decrypt(key: *const u8, ct: *const u8, out: *mut u8) -> u32 {
    // SAFETY: the caller's contract.
    let (key, ct, out) = unsafe {
        (
            input(key, KEY_BYTES),
            input(ct, CT_BYTES),
            output(out, KEY_BYTES),
        )
    };
    let (Ok(sk), Ok(ct)) = (
        SecretKey::<Set1>::from_bytes(key),
        Ciphertext::<Set1>::from_bytes(ct),
    ) else {
        return 1;
    };
    tvla_trigger_on();
    let result = cpa::decrypt::<Set1, Hardened>(&sk, &ct, out);
    tvla_trigger_off();
    u32::from(result.is_err())
}

/// (b) Masked CPA decryption: the plain key is shared with fresh randomness outside the
/// window, then `MaskedSecretKey::decrypt::<Hardened>` runs inside it (the refresh, both
/// share products, the masked decoder; the tracer stops at `unmask_message`, where the
/// message shares are deliberately combined). Returns 0 on success.
///
/// # Safety
/// `key` holds 32 bytes, `ct` 512 bytes, `random` `random_len` bytes, `out` 32 writable bytes.
#[no_mangle]
pub unsafe extern "C" fn tvla_masked_decrypt(
    key: *const u8,
    ct: *const u8,
    random: *const u8,
    random_len: usize,
    out: *mut u8,
) -> u32 {
    // SAFETY: the caller's contract.
    let (key, ct, random, out) = unsafe {
        (
            input(key, KEY_BYTES),
            input(ct, CT_BYTES),
            input(random, random_len),
            output(out, KEY_BYTES),
        )
    };
    let (Ok(sk), Ok(ct)) = (
        SecretKey::<Set1>::from_bytes(key),
        Ciphertext::<Set1>::from_bytes(ct),
    ) else {
        return 1;
    };
    let mut pool = Pool::new(HostRandom { bytes: random });
    let Ok(mut msk) = MaskedSecretKey::from_secret_key(&sk, &mut pool) else {
        return 2;
    };
    drop(sk);
    if pool.prefetch().is_err() {
        return 3;
    }
    tvla_trigger_on();
    let result = msk.decrypt::<Hardened, _, POOL>(&ct, &mut pool, out);
    tvla_trigger_off();
    u32::from(result.is_err())
}

/// (d) Share creation from a plain key (`MaskedSecretKey::from_secret_key`): the window
/// covers the call. Returns 0 on success; `s0`, `s1` receive nothing (the shares stay in
/// the key, which is dropped and zeroized).
///
/// # Safety
/// `key` holds 32 bytes, `random` `random_len` bytes.
#[no_mangle]
pub unsafe extern "C" fn tvla_share(key: *const u8, random: *const u8, random_len: usize) -> u32 {
    // SAFETY: the caller's contract.
    let (key, random) = unsafe { (input(key, KEY_BYTES), input(random, random_len)) };
    let Ok(sk) = SecretKey::<Set1>::from_bytes(key) else {
        return 1;
    };
    let mut pool = Pool::new(HostRandom { bytes: random });
    if pool.prefetch().is_err() {
        return 3;
    }
    tvla_trigger_on();
    let result = MaskedSecretKey::from_secret_key(&sk, &mut pool);
    tvla_trigger_off();
    let failed = result.is_err();
    drop(black_box(result));
    u32::from(failed)
}

/// Leaky control for (d): share creation as it was before issue 11 (`s1 = r2` written in
/// clear, then `s1 -= s0`), built from the same public kernels. Never used for keys.
///
/// # Safety
/// `key` holds 32 bytes, `random` `random_len` bytes.
#[no_mangle]
pub unsafe extern "C" fn tvla_share_clear_control(
    key: *const u8,
    random: *const u8,
    random_len: usize,
) -> u32 {
    // SAFETY: the caller's contract.
    let (key, random) = unsafe { (input(key, KEY_BYTES), input(random, random_len)) };
    let mut pool = Pool::new(HostRandom { bytes: random });
    if pool.prefetch().is_err() {
        return 3;
    }
    let mut s0 = <Set1 as ParamSet>::Poly::zeroed();
    let mut s1 = <Set1 as ParamSet>::Poly::zeroed();
    tvla_trigger_on();
    let filled = pool.fill(s0.as_mut());
    arith::add_bits(s1.as_mut(), key, 1);
    arith::sub_assign(s1.as_mut(), s0.as_ref());
    tvla_trigger_off();
    black_box(&mut s0).fill(0);
    black_box(&mut s1).fill(0);
    u32::from(filled.is_err())
}

/// (c) The masked AND gadget through the library's `masked::isw_and` (the assembly
/// `rblwe_isw_and`). The tracer may also call `rblwe_isw_and` directly.
#[no_mangle]
pub extern "C" fn tvla_isw_and(x0: u32, x1: u32, y0: u32, y1: u32, r: u32) -> u64 {
    let (z0, z1) = masked::isw_and(x0, x1, y0, y1, r);
    u64::from(z0) | (u64::from(z1) << 32)
}

/// (c') The masked decoder's A2B conversion `masked::a2b_msb` (the assembly
/// `rblwe_a2b_msb`) on one word of four coefficients; the tracer starts at `a2b_msb` and
/// stops at [`tvla_trigger_off`], before the two output shares are written side by side.
///
/// # Safety
/// `random` holds `RANDOM_WORDS_PER_GROUP` words, `out` 2 writable bytes.
#[no_mangle]
pub unsafe extern "C" fn tvla_a2b(x0: u32, x1: u32, random: *const u32, log_q: u32, out: *mut u8) {
    // SAFETY: the caller's contract.
    let random = unsafe { &*(random as *const [u32; masked::RANDOM_WORDS_PER_GROUP]) };
    let (b0, b1) = masked::a2b_msb(x0, x1, random, log_q);
    tvla_trigger_off();
    // SAFETY: the caller's contract.
    let out = unsafe { output(out, 2) };
    out[0] = b0;
    out[1] = b1;
}

// Leaky control for (c): an AND gadget that recombines the shares of x (the flaw the paper
// found in GCC output: `x0 ^ x1` in one register). Same interface as `rblwe_isw_and`.
core::arch::global_asm!(
    ".section .text.tvla_leaky_and,\"ax\",%progbits",
    ".global tvla_leaky_and",
    ".type tvla_leaky_and,%function",
    ".thumb_func",
    "tvla_leaky_and:",
    "    ldr   r12, [sp]",
    "    push  {{r4, r5}}",
    "    eor   r4, r0, r1",  // x = x0 ^ x1: the unmasked value
    "    and   r5, r4, r2",  // x & y0
    "    eor   r0, r5, r12", // z0 = (x & y0) ^ r
    "    and   r5, r4, r3",  // x & y1
    "    eor   r1, r5, r12", // z1 = (x & y1) ^ r
    "    pop   {{r4, r5}}",
    "    bx    lr",
    ".size tvla_leaky_and, .-tvla_leaky_and",
);

extern "C" {
    fn tvla_leaky_and(x0: u32, x1: u32, y0: u32, y1: u32, r: u32) -> u64;
}

#[entry]
fn main() -> ! {
    // Keep every entry point in the image (the host calls them; nothing here does).
    black_box(tvla_cpa_decrypt as *const () as usize);
    black_box(tvla_masked_decrypt as *const () as usize);
    black_box(tvla_share as *const () as usize);
    black_box(tvla_share_clear_control as *const () as usize);
    black_box(tvla_isw_and as *const () as usize);
    black_box(tvla_leaky_and as *const () as usize);
    black_box(tvla_a2b as *const () as usize);
    debug::exit(debug::EXIT_SUCCESS);
    #[allow(clippy::empty_loop, reason = "reached only without a semihosting host")]
    loop {}
}

#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    debug::exit(debug::EXIT_FAILURE);
    #[allow(clippy::empty_loop, reason = "reached only without a semihosting host")]
    loop {}
}
