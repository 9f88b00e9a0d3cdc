//! Entropy: the board's TRNG as a callback, buffered in an [`rblwe::EntropyPool`] (the pool
//! every randomised call of both schemes draws from), and the deterministic KAT stream for
//! known-answer tests and emulators without a TRNG.

use core::ffi::c_void;

use rand_core::{CryptoRng, RngCore};
use rblwe::{EntropyPool, KatEntropy};

use crate::object::{self, assert_fits, Kind};
use crate::status::{run, status, Result, ZeppelinStatus};

/// The board's TRNG: writes `len` random bytes to `out`, returns 0 on success (anything
/// else is a failure: the call that needed the bytes returns `ZEPPELIN_STATUS_ENTROPY`).
pub type ZeppelinEntropyFn =
    Option<unsafe extern "C" fn(ctx: *mut c_void, out: *mut u8, len: usize) -> i32>;

/// Bytes of the entropy pool (the RBLWE KAT pool size; refills are 32 bytes).
pub const ZEPPELIN_RNG_POOL_BYTES: usize = 1024;

/// Storage bytes of a `ZeppelinRng`.
pub const ZEPPELIN_RNG_SIZE: usize = 1072;
/// Storage bytes of a `ZeppelinKatEntropy`.
pub const ZEPPELIN_KAT_ENTROPY_SIZE: usize = 256;

/// Opaque: a buffered entropy source over the board's TRNG callback.
pub struct ZeppelinRng {
    _opaque: [u8; 0],
}

/// Opaque: the deterministic KAT stream (`SHA-256` blocks of a label); NOT entropy.
pub struct ZeppelinKatEntropy {
    _opaque: [u8; 0],
}

/// The C callback as a `rand_core` RNG.
pub(crate) struct CallbackRng {
    fill: unsafe extern "C" fn(ctx: *mut c_void, out: *mut u8, len: usize) -> i32,
    ctx: *mut c_void,
}

impl RngCore for CallbackRng {
    fn next_u32(&mut self) -> u32 {
        let mut b = [0u8; 4];
        self.fill_bytes(&mut b);
        u32::from_le_bytes(b)
    }

    fn next_u64(&mut self) -> u64 {
        let mut b = [0u8; 8];
        self.fill_bytes(&mut b);
        u64::from_le_bytes(b)
    }

    fn fill_bytes(&mut self, dest: &mut [u8]) {
        // The pool calls only `try_fill_bytes`; a failure here leaves zeros.
        if self.try_fill_bytes(dest).is_err() {
            dest.fill(0);
        }
    }

    fn try_fill_bytes(&mut self, dest: &mut [u8]) -> core::result::Result<(), rand_core::Error> {
        // SAFETY: the callback's contract; `dest` is valid for `dest.len()` bytes.
        match unsafe { (self.fill)(self.ctx, dest.as_mut_ptr(), dest.len()) } {
            0 => Ok(()),
            _ => Err(rand_core::Error::from(
                core::num::NonZeroU32::new(rand_core::Error::CUSTOM_START)
                    .unwrap_or(core::num::NonZeroU32::MIN),
            )),
        }
    }
}

// The TRNG is the board's: the caller promises cryptographic quality by registering it.
impl CryptoRng for CallbackRng {}

/// The pool behind a `ZeppelinRng`.
pub(crate) type Pool = EntropyPool<CallbackRng, ZEPPELIN_RNG_POOL_BYTES>;

assert_fits!(Pool, ZEPPELIN_RNG_SIZE);
assert_fits!(KatEntropy, ZEPPELIN_KAT_ENTROPY_SIZE);

/// The pool of a checked `ZeppelinRng` handle.
///
/// # Safety
/// `rng` is NULL or a handle made by `zeppelin_rng_init`, not used elsewhere during the call.
pub(crate) unsafe fn pool<'a>(rng: *mut ZeppelinRng) -> Result<&'a mut Pool> {
    // SAFETY: forwarded contract; the tag check precedes the cast.
    unsafe {
        object::preset_of(rng, Kind::Rng)?;
        Ok(object::get_mut::<Pool, _>(rng))
    }
}

/// Makes an entropy source over `fill` (called with `ctx`) in `storage`
/// (`ZEPPELIN_RNG_SIZE` bytes, aligned to `ZEPPELIN_OBJECT_ALIGN`); `*out` receives the handle.
/// The pool starts empty and refills 32 bytes at a time as calls need them.
///
/// # Safety
/// `storage` is valid for writes of `storage_len` bytes; `out` valid for a write; `fill`
/// callable with `ctx` for as long as the object is used.
#[no_mangle]
pub unsafe extern "C" fn zeppelin_rng_init(
    storage: *mut c_void,
    storage_len: usize,
    fill: ZeppelinEntropyFn,
    ctx: *mut c_void,
    out: *mut *mut ZeppelinRng,
) -> ZeppelinStatus {
    let Some(fill) = fill else {
        return ZeppelinStatus::NullPointer;
    };
    // SAFETY: forwarded contract.
    status(unsafe {
        object::init(storage, storage_len, out, Kind::Rng, 0, || {
            Pool::new(CallbackRng { fill, ctx })
        })
    })
}

/// Fills the pool to capacity now (for example while the device is idle).
///
/// # Safety
/// `rng` is a handle made by `zeppelin_rng_init`.
#[no_mangle]
pub unsafe extern "C" fn zeppelin_rng_prefetch(rng: *mut ZeppelinRng) -> ZeppelinStatus {
    // SAFETY: forwarded contract.
    status(unsafe { pool(rng) }.and_then(|p| p.prefetch().map_err(Into::into)))
}

/// Writes `len` random bytes from the pool to `out`.
///
/// # Safety
/// `rng` is a handle made by `zeppelin_rng_init`; `out` valid for writes of `len` bytes.
#[no_mangle]
pub unsafe extern "C" fn zeppelin_rng_fill(
    rng: *mut ZeppelinRng,
    out: *mut u8,
    len: usize,
) -> ZeppelinStatus {
    // SAFETY: forwarded contract.
    run(|| unsafe {
        let p = pool(rng)?;
        let out = object::output(out, len)?;
        p.fill(out).map_err(Into::into)
    })
}

/// Makes the deterministic KAT stream for `label` in `storage` (`ZEPPELIN_KAT_ENTROPY_SIZE`
/// bytes). Pass `zeppelin_kat_entropy_fill` and the handle to `zeppelin_rng_init` to replay
/// the RBLWE known-answer tests. It is NOT a source of entropy: never use it for real keys.
///
/// # Safety
/// `storage` valid for writes of `storage_len` bytes; `label` valid for `label_len` bytes;
/// `out` valid for a write.
#[no_mangle]
pub unsafe extern "C" fn zeppelin_kat_entropy_init(
    storage: *mut c_void,
    storage_len: usize,
    label: *const u8,
    label_len: usize,
    out: *mut *mut ZeppelinKatEntropy,
) -> ZeppelinStatus {
    // SAFETY: forwarded contract.
    run(|| unsafe {
        let label = object::input(label, label_len)?;
        object::init(storage, storage_len, out, Kind::KatEntropy, 0, || {
            KatEntropy::new(label)
        })
    })
}

/// A `ZeppelinEntropyFn` over a `ZeppelinKatEntropy` passed as `ctx`: returns 0, or a
/// nonzero status code if `ctx` is no such object or `out` is NULL.
///
/// # Safety
/// `ctx` is a handle made by `zeppelin_kat_entropy_init`; `out` valid for `len` bytes.
#[no_mangle]
pub unsafe extern "C" fn zeppelin_kat_entropy_fill(
    ctx: *mut c_void,
    out: *mut u8,
    len: usize,
) -> i32 {
    // SAFETY: forwarded contract; the tag check precedes the cast.
    run(|| unsafe {
        object::preset_of(ctx, Kind::KatEntropy)?;
        let out = object::output(out, len)?;
        object::get_mut::<KatEntropy, _>(ctx).fill_bytes(out);
        Ok(())
    }) as i32
}
