//! Entry points for the emulated fault campaign (security/fault, Unicorn): key generation,
//! encryption and CCA2 decryption for Set 1 with the hardened configuration, callable with
//! plain buffers. The firmware never calls them; `main` only takes their addresses so the
//! linker keeps them. Decryption goes through exactly the instance the on-target tests and
//! measurements run (`cca::decrypt::<Set1, Hardened, SecretKey<Set1>, SimTrng, POOL>`), so
//! the campaign faults the code that is tested.

use core::slice;

use rblwe::cca::{self, CcaCiphertext, CcaPublicKey, CcaSecretKey};
use rblwe::cpa::SecretKey;
use rblwe::{ConstantTime, EntropyPool, Error, Hardened, PublicParameter, Set1};

use crate::trng::SimTrng;
use crate::POOL;

/// Serialized CCA2 secret key bytes (`r2 || z || a || p`).
pub const SECRET_KEY_BYTES: usize = CcaSecretKey::<Set1, SecretKey<Set1>>::BYTES;
/// Serialized CCA2 ciphertext bytes.
pub const CIPHERTEXT_BYTES: usize = CcaCiphertext::<Set1>::BYTES;
/// Message bytes.
pub const MESSAGE_BYTES: usize = 32;
/// Bytes of the status buffer: the name of the fault check that fired, NUL-padded.
pub const CHECK_NAME_BYTES: usize = 64;

/// Status codes returned to the emulator.
const OK: u32 = 0;
const FAULT_DETECTED: u32 = 1;
const INVALID_KEY: u32 = 2;
const OTHER_ERROR: u32 = 3;
const BAD_KEY_BYTES: u32 = 16;
const BAD_CIPHERTEXT_BYTES: u32 = 17;

/// The status code of `result`; on any error `out` is erased here too. `cca::decrypt`
/// erases on every error it sees, but the store of its result is its last instruction, past
/// its own checks: a fault there (a skipped store, a flipped register holding the result's
/// address, both seen in the emulated campaign) hands this caller a wrong status while `out`
/// still holds the decryption's output. A caller treating errors as errors erases.
fn status(result: Result<(), Error>, out: &mut [u8], check_name: &mut [u8]) -> u32 {
    if result.is_err() {
        out.fill(0); // the caller's buffer outlives this call: the stores are kept
    }
    match result {
        Ok(()) => OK,
        Err(Error::FaultDetected { check }) => {
            let n = check.len().min(check_name.len());
            check_name[..n].copy_from_slice(&check.as_bytes()[..n]);
            FAULT_DETECTED
        }
        Err(Error::InvalidKey { .. }) => INVALID_KEY,
        Err(_) => OTHER_ERROR,
    }
}

/// Key generation from `seed` (SimTrng: measurement randomness only) into `sk_out`
/// ([`SECRET_KEY_BYTES`]).
///
/// # Safety
/// `sk_out` must be valid for writes of [`SECRET_KEY_BYTES`] bytes.
#[no_mangle]
pub unsafe extern "C" fn fault_entry_keygen_set1(seed: u32, sk_out: *mut u8) -> u32 {
    // SAFETY: the caller guarantees the buffer size.
    let sk_out = unsafe { slice::from_raw_parts_mut(sk_out, SECRET_KEY_BYTES) };
    let mut pool = EntropyPool::<SimTrng, POOL>::new(SimTrng::new(seed));
    let a = PublicParameter::<Set1>::from_seed(&[0x42; 32]);
    match cca::keygen::<Set1, Hardened, _, POOL>(&a, &mut pool) {
        Ok((_, sk)) => match sk.write_bytes(sk_out) {
            Ok(()) => OK,
            Err(_) => OTHER_ERROR,
        },
        Err(_) => OTHER_ERROR,
    }
}

/// Encryption of `message` ([`MESSAGE_BYTES`]) under the public half of `sk` into `ct_out`.
///
/// # Safety
/// `sk` must be readable for [`SECRET_KEY_BYTES`], `message` for [`MESSAGE_BYTES`] and
/// `ct_out` writable for [`CIPHERTEXT_BYTES`] bytes.
#[no_mangle]
pub unsafe extern "C" fn fault_entry_encrypt_set1(
    sk: *const u8,
    message: *const u8,
    seed: u32,
    ct_out: *mut u8,
) -> u32 {
    // SAFETY: the caller guarantees the buffer sizes.
    let (sk, message, ct_out) = unsafe {
        (
            slice::from_raw_parts(sk, SECRET_KEY_BYTES),
            slice::from_raw_parts(message, MESSAGE_BYTES),
            slice::from_raw_parts_mut(ct_out, CIPHERTEXT_BYTES),
        )
    };
    let Ok(sk) = CcaSecretKey::<Set1, SecretKey<Set1>>::from_bytes(sk) else {
        return BAD_KEY_BYTES;
    };
    let pk: CcaPublicKey<Set1> = sk.public_key();
    let mut pool = EntropyPool::<SimTrng, POOL>::new(SimTrng::new(seed));
    match cca::encrypt::<Set1, Hardened, _, POOL>(&pk, message, &mut pool) {
        Ok(ct) => match ct.write_bytes(ct_out) {
            Ok(()) => OK,
            Err(_) => OTHER_ERROR,
        },
        Err(_) => OTHER_ERROR,
    }
}

/// CCA2 decryption of `ct` under `sk` into `out` ([`MESSAGE_BYTES`]); on a detected fault
/// the name of the check is written to `check_name` ([`CHECK_NAME_BYTES`]). Returns 0 (Ok),
/// 1 (fault detected), 2 (invalid key), 3 (other error), 16/17 (unreadable key/ciphertext).
///
/// # Safety
/// `sk`, `ct` readable for [`SECRET_KEY_BYTES`] / [`CIPHERTEXT_BYTES`]; `out` and
/// `check_name` writable for [`MESSAGE_BYTES`] / [`CHECK_NAME_BYTES`] bytes.
#[no_mangle]
pub unsafe extern "C" fn fault_entry_decrypt_set1(
    sk: *const u8,
    ct: *const u8,
    out: *mut u8,
    check_name: *mut u8,
) -> u32 {
    // SAFETY: the caller guarantees the buffer sizes.
    let (sk, ct, out, check_name) = unsafe {
        (
            slice::from_raw_parts(sk, SECRET_KEY_BYTES),
            slice::from_raw_parts(ct, CIPHERTEXT_BYTES),
            slice::from_raw_parts_mut(out, MESSAGE_BYTES),
            slice::from_raw_parts_mut(check_name, CHECK_NAME_BYTES),
        )
    };
    let Ok(mut sk) = CcaSecretKey::<Set1, SecretKey<Set1>>::from_bytes(sk) else {
        return BAD_KEY_BYTES;
    };
    let Ok(ct) = CcaCiphertext::<Set1>::from_bytes(ct) else {
        return BAD_CIPHERTEXT_BYTES;
    };
    let mut pool = EntropyPool::<SimTrng, POOL>::new(SimTrng::new(1));
    let result = cca::decrypt::<Set1, Hardened, _, _, POOL>(&mut sk, &ct, &mut pool, out);
    status(result, out, check_name)
}

/// As [`fault_entry_decrypt_set1`] without fault hardening (`ConstantTime`): the
/// campaign's negative control, where single faults are expected to release forgeries.
///
/// # Safety
/// As [`fault_entry_decrypt_set1`].
#[no_mangle]
pub unsafe extern "C" fn fault_entry_decrypt_set1_unhardened(
    sk: *const u8,
    ct: *const u8,
    out: *mut u8,
    check_name: *mut u8,
) -> u32 {
    // SAFETY: the caller guarantees the buffer sizes.
    let (sk, ct, out, check_name) = unsafe {
        (
            slice::from_raw_parts(sk, SECRET_KEY_BYTES),
            slice::from_raw_parts(ct, CIPHERTEXT_BYTES),
            slice::from_raw_parts_mut(out, MESSAGE_BYTES),
            slice::from_raw_parts_mut(check_name, CHECK_NAME_BYTES),
        )
    };
    let Ok(mut sk) = CcaSecretKey::<Set1, SecretKey<Set1>>::from_bytes(sk) else {
        return BAD_KEY_BYTES;
    };
    let Ok(ct) = CcaCiphertext::<Set1>::from_bytes(ct) else {
        return BAD_CIPHERTEXT_BYTES;
    };
    let mut pool = EntropyPool::<SimTrng, POOL>::new(SimTrng::new(1));
    let result = cca::decrypt::<Set1, ConstantTime, _, _, POOL>(&mut sk, &ct, &mut pool, out);
    status(result, out, check_name)
}

/// The entry points' addresses, so that the linker keeps them (nothing calls them).
pub fn keep() -> [usize; 4] {
    [
        fault_entry_keygen_set1 as *const () as usize,
        fault_entry_encrypt_set1 as *const () as usize,
        fault_entry_decrypt_set1 as *const () as usize,
        fault_entry_decrypt_set1_unhardened as *const () as usize,
    ]
}
