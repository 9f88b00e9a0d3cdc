//! The optional public keystream callback (a board's AES engine) behind zeppelin's
//! [`Keystream`] trait.
//!
//! `Keystream::from_seed` takes no context, so the callback is registered process-wide
//! ([`zeppelin_set_public_keystream`]). It feeds only the public stream `prng_a` (the masks
//! `a`, `â` and the public key's `p̂1`); the secret stream stays the constant-time software
//! AES, because nothing here can check that a callback is constant time.

use core::ffi::c_void;
use core::sync::atomic::{AtomicBool, AtomicPtr, Ordering};

use zeppelin::{Keystream, PublicGenerator, PublicKeystream};

use crate::status::{Result, ZeppelinStatus};

/// A keystream generator provided by the board: AES-128-CTR with key `seed[0..16]` and
/// initial counter block `seed[16..32]` (incremented as one 128-bit big-endian integer), the
/// keystream being the encryption of zeros — the same bytes as the built-in software AES.
///
/// `start` begins a stream for a 32-byte seed, `fill` writes its next `len` bytes; both
/// return 0 on success. The library runs at most one public stream at a time: `fill` calls
/// belong to the latest `start`.
#[repr(C)]
pub struct ZeppelinKeystream {
    /// Passed to both callbacks.
    pub ctx: *mut c_void,
    /// Starts the stream for `seed` (32 bytes).
    pub start: Option<unsafe extern "C" fn(ctx: *mut c_void, seed: *const u8) -> i32>,
    /// Writes the next `len` keystream bytes to `out`.
    pub fill: Option<unsafe extern "C" fn(ctx: *mut c_void, out: *mut u8, len: usize) -> i32>,
}

static REGISTERED: AtomicPtr<ZeppelinKeystream> = AtomicPtr::new(core::ptr::null_mut());
static FAILED: AtomicBool = AtomicBool::new(false);

/// Registers `keystream` as the public stream of every later call (NULL: back to the
/// built-in software AES). The struct must stay valid until it is replaced.
///
/// With a callback registered, calls that use the public stream must not run concurrently.
///
/// # Safety
/// `keystream` is NULL or points at a `ZeppelinKeystream` that stays valid (and whose
/// callbacks behave as documented) until another call replaces it.
#[no_mangle]
pub unsafe extern "C" fn zeppelin_set_public_keystream(
    keystream: *const ZeppelinKeystream,
) -> ZeppelinStatus {
    if !keystream.is_null() {
        if let Err(e) = crate::object::check_ptr(keystream) {
            return e;
        }
        // SAFETY: non-null and aligned; valid by the contract.
        let ks = unsafe { &*keystream };
        if ks.start.is_none() || ks.fill.is_none() {
            return ZeppelinStatus::NullPointer;
        }
    }
    REGISTERED.store(keystream.cast_mut(), Ordering::Release);
    ZeppelinStatus::Ok
}

/// Whether a board keystream is registered.
pub(crate) fn registered() -> bool {
    !REGISTERED.load(Ordering::Acquire).is_null()
}

/// Clears the failure flag before an operation on the board stream.
pub(crate) fn begin() {
    FAILED.store(false, Ordering::Release);
}

/// The operation's result, or [`ZeppelinStatus::Keystream`] if a callback failed during it.
pub(crate) fn finish<T>(r: Result<T>) -> Result<T> {
    if FAILED.swap(false, Ordering::AcqRel) {
        Err(ZeppelinStatus::Keystream)
    } else {
        r
    }
}

/// zeppelin's [`Keystream`] over the registered callbacks. A failing callback sets the
/// failure flag and yields zeros (which every sampler accepts, so the operation ends), and
/// the caller's result becomes [`ZeppelinStatus::Keystream`] with the output wiped.
pub(crate) struct CallbackKeystream {
    ks: *const ZeppelinKeystream,
}

fn fail() {
    FAILED.store(true, Ordering::Release);
}

// The registration contract: the callbacks produce the AES-128-CTR stream of the built-in
// software AES, so receivers expand what they seed with that generator.
impl PublicKeystream for CallbackKeystream {
    const GENERATOR: PublicGenerator = PublicGenerator::AesCtr128;
}

impl Keystream for CallbackKeystream {
    type Buffer = zeppelin::ByteBuffer;
    fn from_seed(seed: &[u8; 32]) -> Self {
        let ks = REGISTERED.load(Ordering::Acquire).cast_const();
        // SAFETY: a registered pointer is valid until replaced (the registration contract).
        match unsafe { ks.as_ref() }.and_then(|k| k.start.map(|s| (k.ctx, s))) {
            // SAFETY: the callback's contract; `seed` is valid for 32 bytes.
            Some((ctx, start)) if unsafe { start(ctx, seed.as_ptr()) } == 0 => {}
            _ => fail(),
        }
        Self { ks }
    }

    fn fill(&mut self, out: &mut [u8]) {
        // SAFETY: as in `from_seed`.
        let ok = match unsafe { self.ks.as_ref() }.and_then(|k| k.fill.map(|f| (k.ctx, f))) {
            // SAFETY: the callback's contract; `out` is valid for `out.len()` bytes.
            Some((ctx, fill)) => (unsafe { fill(ctx, out.as_mut_ptr(), out.len()) }) == 0,
            None => false,
        };
        if !ok {
            out.fill(0);
            fail();
        }
    }
}
