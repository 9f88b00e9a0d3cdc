//! RBLWE (crate `rblwe`) behind the C ABI: CPA and CCA2 key generation, encryption and
//! decryption, with plain or first-order masked secret keys. Keys and ciphertexts travel as
//! bytes in caller buffers (sizes from `zeppelin_rblwe_sizes` or the `ZEPPELIN_RBLWE_MAX_*`
//! constants); masked keys are objects, since re-randomised shares are their point. Every
//! operation uses the hardened configuration (constant time and fault checks) and draws from
//! a `ZeppelinRng`.

use core::ffi::c_void;

use rblwe::cca::{self, CcaCiphertext, CcaPublicKey, CcaSecretKey};
use rblwe::cpa::{self, Ciphertext, PublicKey, PublicParameter, SecretKey};
use rblwe::masked::MaskedSecretKey;
use rblwe::{Hardened, ParamSet, Set1, Set2, Set3};

use crate::object::{self, assert_fits, get_mut, preset_of, Kind};
use crate::rng::{pool, Pool, ZeppelinRng, ZEPPELIN_RNG_POOL_BYTES};
use crate::status::{run, Result, ZeppelinStatus};

/// Parameter set 1: n = 256, q = 256 (84-bit classical security, per-bit failure 2^-32).
pub const ZEPPELIN_RBLWE_SET1: u32 = 1;
/// Parameter set 2: n = 256, q = 128 (per-bit failure 2^-10; not for deployment).
pub const ZEPPELIN_RBLWE_SET2: u32 = 2;
/// Parameter set 3: n = 512, q = 256 (190-bit classical security, per-bit failure 2^-18).
pub const ZEPPELIN_RBLWE_SET3: u32 = 3;

/// Largest message (= packed secret key) over the sets: `n/8`.
pub const ZEPPELIN_RBLWE_MAX_MESSAGE_BYTES: usize = 512 / 8;
/// Largest public key (`a ‖ p`, also the CCA public key) over the sets: `2n`.
pub const ZEPPELIN_RBLWE_MAX_PUBLIC_KEY_BYTES: usize = 2 * 512;
/// Largest CPA ciphertext (`c1 ‖ c2`) over the sets: `2n`.
pub const ZEPPELIN_RBLWE_MAX_CIPHERTEXT_BYTES: usize = 2 * 512;
/// Largest CCA secret key (`r2 ‖ z ‖ a ‖ p`) over the sets: `n/8 + 32 + 2n`.
pub const ZEPPELIN_RBLWE_MAX_CCA_SECRET_KEY_BYTES: usize = 512 / 8 + 32 + 2 * 512;
/// Largest CCA ciphertext over the sets: `2n + n/4`.
pub const ZEPPELIN_RBLWE_MAX_CCA_CIPHERTEXT_BYTES: usize = 2 * 512 + 512 / 4;
/// Storage bytes of a `ZeppelinRblweMaskedKey` (any set).
pub const ZEPPELIN_RBLWE_MASKED_KEY_SIZE: usize = 8 + 2 * 512;
/// Storage bytes of a `ZeppelinRblweCcaKey` (any set).
pub const ZEPPELIN_RBLWE_CCA_KEY_SIZE: usize = 8 + 512 / 8 + 2 * 512 + 96;
/// Storage bytes of a `ZeppelinRblweCcaMaskedKey` (any set).
pub const ZEPPELIN_RBLWE_CCA_MASKED_KEY_SIZE: usize = 8 + 4 * 512 + 96;

const _: () = assert!(Set3::N == 512 && Set1::N <= Set3::N && Set2::N <= Set3::N);
const _: () = assert!(ZEPPELIN_RNG_POOL_BYTES == rblwe::kat::KAT_POOL);
assert_fits!(MaskedSecretKey<Set3>, ZEPPELIN_RBLWE_MASKED_KEY_SIZE);
assert_fits!(MaskedSecretKey<Set1>, ZEPPELIN_RBLWE_MASKED_KEY_SIZE);
assert_fits!(MaskedSecretKey<Set2>, ZEPPELIN_RBLWE_MASKED_KEY_SIZE);
assert_fits!(CcaSecretKey<Set3, MaskedSecretKey<Set3>>, ZEPPELIN_RBLWE_CCA_MASKED_KEY_SIZE);
assert_fits!(CcaSecretKey<Set1, MaskedSecretKey<Set1>>, ZEPPELIN_RBLWE_CCA_MASKED_KEY_SIZE);
assert_fits!(CcaSecretKey<Set2, MaskedSecretKey<Set2>>, ZEPPELIN_RBLWE_CCA_MASKED_KEY_SIZE);
assert_fits!(CcaSecretKey<Set1>, ZEPPELIN_RBLWE_CCA_KEY_SIZE);
assert_fits!(CcaSecretKey<Set2>, ZEPPELIN_RBLWE_CCA_KEY_SIZE);
assert_fits!(CcaSecretKey<Set3>, ZEPPELIN_RBLWE_CCA_KEY_SIZE);
const _: () = assert!(CcaSecretKey::<Set3>::BYTES == ZEPPELIN_RBLWE_MAX_CCA_SECRET_KEY_BYTES);
const _: () = assert!(CcaCiphertext::<Set3>::BYTES == ZEPPELIN_RBLWE_MAX_CCA_CIPHERTEXT_BYTES);

/// Opaque: a masked CPA secret key (two arithmetic shares; zeroized by
/// `zeppelin_object_destroy`).
pub struct ZeppelinRblweMaskedKey {
    _opaque: [u8; 0],
}
/// Opaque: a CCA2 secret key, parsed and checked once (zeroized by
/// `zeppelin_object_destroy`).
pub struct ZeppelinRblweCcaKey {
    _opaque: [u8; 0],
}
/// Opaque: a CCA2 secret key with a masked CPA key inside.
pub struct ZeppelinRblweCcaMaskedKey {
    _opaque: [u8; 0],
}

/// The byte sizes of a parameter set.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct ZeppelinRblweSizes {
    /// Ring degree.
    pub n: u32,
    /// Modulus.
    pub q: u32,
    /// Message bytes (`n/8`).
    pub message: usize,
    /// Public parameter `a` (`n`).
    pub public_parameter: usize,
    /// Public key `a ‖ p` (`2n`; CPA and CCA).
    pub public_key: usize,
    /// Packed CPA secret key (`n/8`).
    pub secret_key: usize,
    /// CPA ciphertext (`2n`).
    pub ciphertext: usize,
    /// CCA secret key (`n/8 + 32 + 2n`).
    pub cca_secret_key: usize,
    /// CCA ciphertext (`2n + n/4`).
    pub cca_ciphertext: usize,
}

type H = Hardened;
const CAP: usize = ZEPPELIN_RNG_POOL_BYTES;

/// Runs `$body` with `$P` the parameter set numbered `$set` (a `u8` or `u32`).
macro_rules! with_set {
    ($set:expr, $P:ident => $body:expr) => {
        match u32::from($set) {
            ZEPPELIN_RBLWE_SET1 => {
                type $P = Set1;
                $body
            }
            ZEPPELIN_RBLWE_SET2 => {
                type $P = Set2;
                $body
            }
            ZEPPELIN_RBLWE_SET3 => {
                type $P = Set3;
                $body
            }
            _ => Err(ZeppelinStatus::UnknownPreset),
        }
    };
}

/// Copies `src` to the front of `out` (at least `src.len()` bytes).
fn put_bytes(out: &mut [u8], src: &[u8]) -> Result<()> {
    out.get_mut(..src.len())
        .ok_or(ZeppelinStatus::BufferTooSmall)?
        .copy_from_slice(src);
    Ok(())
}

/// The first `len` bytes of `out`, or `BufferTooSmall`.
fn front(out: &mut [u8], len: usize) -> Result<&mut [u8]> {
    out.get_mut(..len).ok_or(ZeppelinStatus::BufferTooSmall)
}

/// Drops an RBLWE object in place.
///
/// # Safety
/// As [`object::destroy`].
pub(crate) unsafe fn destroy(kind: Kind, set: u8, obj: *mut c_void) -> Result<()> {
    // SAFETY: forwarded contract.
    unsafe {
        with_set!(set, P => {
            match kind {
                Kind::RblweMaskedKey => object::destroy::<MaskedSecretKey<P>>(obj),
                Kind::RblweCcaMaskedKey => object::destroy::<CcaSecretKey<P, MaskedSecretKey<P>>>(obj),
                Kind::RblweCcaKey => object::destroy::<CcaSecretKey<P>>(obj),
                _ => return Err(ZeppelinStatus::BadObject),
            }
            Ok(())
        })
    }
}

/// The byte sizes of parameter set `set` into `*sizes`.
///
/// # Safety
/// `sizes` valid for a write.
#[no_mangle]
pub unsafe extern "C" fn zeppelin_rblwe_sizes(
    set: u32,
    sizes: *mut ZeppelinRblweSizes,
) -> ZeppelinStatus {
    run(|| unsafe {
        object::check_ptr(sizes)?;
        let s = with_set!(set, P => Ok(ZeppelinRblweSizes {
            n: P::N as u32,
            q: u32::from(P::Q),
            message: P::BITS_BYTES,
            public_parameter: P::N,
            public_key: PublicKey::<P>::BYTES,
            secret_key: SecretKey::<P>::BYTES,
            ciphertext: Ciphertext::<P>::BYTES,
            cca_secret_key: CcaSecretKey::<P>::BYTES,
            cca_ciphertext: CcaCiphertext::<P>::BYTES,
        }))?;
        object::put(sizes, s)
    })
}

/// The public parameter `a` expanded from `seed` (32 bytes) into `out` (`n` bytes).
///
/// # Safety
/// `seed` valid for 32 bytes; `out` for `out_len` bytes.
#[no_mangle]
pub unsafe extern "C" fn zeppelin_rblwe_public_parameter(
    set: u32,
    seed: *const u8,
    out: *mut u8,
    out_len: usize,
) -> ZeppelinStatus {
    run(|| unsafe {
        let seed = object::bytes32(seed)?;
        let out = object::output(out, out_len)?;
        with_set!(set, P => put_bytes(out, PublicParameter::<P>::from_seed(&seed).as_bytes()))
    })
}

/// CPA key generation under `a = PublicParameter(seed_a)`: the public key `a ‖ p` to
/// `pk_out` (`2n` bytes), the packed secret `r2` to `sk_out` (`n/8` bytes; wipe after use).
///
/// # Safety
/// `seed_a` valid for 32 bytes; outputs for their lengths; `rng` from `zeppelin_rng_init`.
#[no_mangle]
pub unsafe extern "C" fn zeppelin_rblwe_cpa_keygen(
    set: u32,
    seed_a: *const u8,
    rng: *mut ZeppelinRng,
    pk_out: *mut u8,
    pk_len: usize,
    sk_out: *mut u8,
    sk_len: usize,
) -> ZeppelinStatus {
    run(|| unsafe {
        let seed = object::bytes32(seed_a)?;
        let pool = pool(rng)?;
        let pk_out = object::output(pk_out, pk_len)?;
        let sk_out = object::output(sk_out, sk_len)?;
        with_set!(set, P => {
            let pk_out = front(pk_out, PublicKey::<P>::BYTES)?;
            let sk_out = front(sk_out, SecretKey::<P>::BYTES)?;
            let a = PublicParameter::<P>::from_seed(&seed);
            let (pk, sk) = cpa::keygen::<P, H, _, CAP>(&a, pool)?;
            sk.write_bytes(sk_out)?;
            put_bytes(pk_out, pk.to_bytes().as_ref())
        })
    })
}

/// CPA encryption of `message` (`n/8` bytes) under `pk` (`2n` bytes) into `ct_out` (`2n`).
///
/// # Safety
/// Buffers valid for their lengths; `rng` from `zeppelin_rng_init`.
#[no_mangle]
pub unsafe extern "C" fn zeppelin_rblwe_cpa_encrypt(
    set: u32,
    pk: *const u8,
    pk_len: usize,
    message: *const u8,
    message_len: usize,
    rng: *mut ZeppelinRng,
    ct_out: *mut u8,
    ct_len: usize,
) -> ZeppelinStatus {
    run(|| unsafe {
        let pk = object::input(pk, pk_len)?;
        let message = object::input(message, message_len)?;
        let pool = pool(rng)?;
        let ct_out = object::output(ct_out, ct_len)?;
        with_set!(set, P => {
            let ct_out = front(ct_out, Ciphertext::<P>::BYTES)?;
            let pk = PublicKey::<P>::from_bytes(pk)?;
            let ct = cpa::encrypt::<P, H, _, CAP>(&pk, message, pool)?;
            put_bytes(ct_out, ct.to_bytes().as_ref())
        })
    })
}

/// CPA decryption of `ct` (`2n` bytes) with the packed secret `sk` (`n/8`) into `message_out`
/// (`n/8`).
///
/// # Safety
/// Buffers valid for their lengths.
#[no_mangle]
pub unsafe extern "C" fn zeppelin_rblwe_cpa_decrypt(
    set: u32,
    sk: *const u8,
    sk_len: usize,
    ct: *const u8,
    ct_len: usize,
    message_out: *mut u8,
    message_len: usize,
) -> ZeppelinStatus {
    run(|| unsafe {
        let sk = object::input(sk, sk_len)?;
        let ct = object::input(ct, ct_len)?;
        let out = object::output(message_out, message_len)?;
        with_set!(set, P => {
            let out = front(out, P::BITS_BYTES)?;
            let sk = SecretKey::<P>::from_bytes(sk)?;
            let ct = Ciphertext::<P>::from_bytes(ct)?;
            cpa::decrypt::<P, H>(&sk, &ct, out).map_err(Into::into)
        })
    })
}

/// Makes a masked key in `storage` (`ZEPPELIN_RBLWE_MASKED_KEY_SIZE`) by splitting the packed
/// secret `sk` (`n/8` bytes) into fresh shares from `rng`.
///
/// # Safety
/// `storage` valid for `storage_len` bytes and used for nothing else while the object lives;
/// `sk` for `sk_len`; `rng` from `zeppelin_rng_init`; `out` valid for a write.
#[no_mangle]
pub unsafe extern "C" fn zeppelin_rblwe_masked_key_init(
    set: u32,
    storage: *mut c_void,
    storage_len: usize,
    sk: *const u8,
    sk_len: usize,
    rng: *mut ZeppelinRng,
    out: *mut *mut ZeppelinRblweMaskedKey,
) -> ZeppelinStatus {
    run(|| unsafe {
        let sk = object::input(sk, sk_len)?;
        let pool = pool(rng)?;
        with_set!(set, P => {
            let sk = SecretKey::<P>::from_bytes(sk)?;
            let key = MaskedSecretKey::from_secret_key(&sk, pool)?;
            object::init(storage, storage_len, out, Kind::RblweMaskedKey, set as u8, || key)
        })
    })
}

/// Masked key generation: the key never exists unshared. The public key `a ‖ p` goes to
/// `pk_out` (`2n` bytes), the masked key into `storage`.
///
/// # Safety
/// As `zeppelin_rblwe_masked_key_init`; `seed_a` valid for 32 bytes.
#[no_mangle]
pub unsafe extern "C" fn zeppelin_rblwe_masked_keygen(
    set: u32,
    seed_a: *const u8,
    rng: *mut ZeppelinRng,
    pk_out: *mut u8,
    pk_len: usize,
    storage: *mut c_void,
    storage_len: usize,
    out: *mut *mut ZeppelinRblweMaskedKey,
) -> ZeppelinStatus {
    run(|| unsafe {
        let seed = object::bytes32(seed_a)?;
        let pool = pool(rng)?;
        let pk_out = object::output(pk_out, pk_len)?;
        with_set!(set, P => {
            let pk_out = front(pk_out, PublicKey::<P>::BYTES)?;
            object::check_ptr(out)?;
            if storage_len < core::mem::size_of::<MaskedSecretKey<P>>() {
                return Err(ZeppelinStatus::StorageTooSmall);
            }
            let a = PublicParameter::<P>::from_seed(&seed);
            let (pk, key) = MaskedSecretKey::<P>::keygen::<H, _, CAP>(&a, pool)?;
            object::init(storage, storage_len, out, Kind::RblweMaskedKey, set as u8, || key)?;
            put_bytes(pk_out, pk.to_bytes().as_ref())
        })
    })
}

/// Masked CPA decryption of `ct` (`2n` bytes) into `message_out` (`n/8`); the shares are
/// refreshed from `rng`.
///
/// # Safety
/// `key` from `zeppelin_rblwe_masked_key_init`/`_keygen`; buffers valid for their lengths.
#[no_mangle]
pub unsafe extern "C" fn zeppelin_rblwe_masked_decrypt(
    key: *mut ZeppelinRblweMaskedKey,
    ct: *const u8,
    ct_len: usize,
    rng: *mut ZeppelinRng,
    message_out: *mut u8,
    message_len: usize,
) -> ZeppelinStatus {
    run(|| unsafe {
        let set = preset_of(key, Kind::RblweMaskedKey)?;
        let ct = object::input(ct, ct_len)?;
        let pool = pool(rng)?;
        let out = object::output(message_out, message_len)?;
        with_set!(set, P => {
            let out = front(out, P::BITS_BYTES)?;
            let ct = Ciphertext::<P>::from_bytes(ct)?;
            get_mut::<MaskedSecretKey<P>, _>(key).decrypt::<H, _, CAP>(&ct, pool, out).map_err(Into::into)
        })
    })
}

/// CCA2 key generation: the public key (`2n` bytes) to `pk_out`, the secret key
/// (`n/8 + 32 + 2n` bytes; wipe after use) to `sk_out`.
///
/// # Safety
/// As `zeppelin_rblwe_cpa_keygen`.
#[no_mangle]
pub unsafe extern "C" fn zeppelin_rblwe_cca_keygen(
    set: u32,
    seed_a: *const u8,
    rng: *mut ZeppelinRng,
    pk_out: *mut u8,
    pk_len: usize,
    sk_out: *mut u8,
    sk_len: usize,
) -> ZeppelinStatus {
    run(|| unsafe {
        let seed = object::bytes32(seed_a)?;
        let pool = pool(rng)?;
        let pk_out = object::output(pk_out, pk_len)?;
        let sk_out = object::output(sk_out, sk_len)?;
        with_set!(set, P => {
            let pk_out = front(pk_out, CcaPublicKey::<P>::BYTES)?;
            let sk_out = front(sk_out, CcaSecretKey::<P>::BYTES)?;
            let a = PublicParameter::<P>::from_seed(&seed);
            let (pk, sk) = cca::keygen::<P, H, _, CAP>(&a, pool)?;
            sk.write_bytes(sk_out)?;
            put_bytes(pk_out, pk.to_bytes().as_ref())
        })
    })
}

/// CCA2 encryption of `message` (`n/8` bytes) under `pk` (`2n`) into `ct_out` (`2n + n/4`).
///
/// # Safety
/// As `zeppelin_rblwe_cpa_encrypt`.
#[no_mangle]
pub unsafe extern "C" fn zeppelin_rblwe_cca_encrypt(
    set: u32,
    pk: *const u8,
    pk_len: usize,
    message: *const u8,
    message_len: usize,
    rng: *mut ZeppelinRng,
    ct_out: *mut u8,
    ct_len: usize,
) -> ZeppelinStatus {
    run(|| unsafe {
        let pk = object::input(pk, pk_len)?;
        let message = object::input(message, message_len)?;
        let pool = pool(rng)?;
        let ct_out = object::output(ct_out, ct_len)?;
        with_set!(set, P => {
            let ct_out = front(ct_out, CcaCiphertext::<P>::BYTES)?;
            let pk = CcaPublicKey::<P>::from_bytes(pk)?;
            let ct = cca::encrypt::<P, H, _, CAP>(&pk, message, pool)?;
            ct.write_bytes(ct_out).map_err(Into::into)
        })
    })
}

/// CCA2 decryption of `ct` (`2n + n/4` bytes) with the secret key `sk` into `message_out`
/// (`n/8`). A tampered ciphertext decrypts to a pseudo-random message (implicit rejection),
/// not an error.
///
/// # Safety
/// Buffers valid for their lengths; `rng` from `zeppelin_rng_init`.
#[no_mangle]
pub unsafe extern "C" fn zeppelin_rblwe_cca_decrypt(
    set: u32,
    sk: *const u8,
    sk_len: usize,
    ct: *const u8,
    ct_len: usize,
    rng: *mut ZeppelinRng,
    message_out: *mut u8,
    message_len: usize,
) -> ZeppelinStatus {
    run(|| unsafe {
        let sk = object::input(sk, sk_len)?;
        let ct = object::input(ct, ct_len)?;
        let pool = pool(rng)?;
        let out = object::output(message_out, message_len)?;
        with_set!(set, P => {
            let out = front(out, P::BITS_BYTES)?;
            let mut sk = CcaSecretKey::<P>::from_bytes(sk)?;
            let ct = CcaCiphertext::<P>::from_bytes(ct)?;
            cca::decrypt::<P, H, _, _, CAP>(&mut sk, &ct, pool, out).map_err(Into::into)
        })
    })
}

/// Makes a CCA2 secret key object in `storage` (`ZEPPELIN_RBLWE_CCA_KEY_SIZE`) from the secret
/// key bytes `sk`, parsed and checked once, so that `zeppelin_rblwe_cca_key_decrypt` does not
/// parse them on every call as `zeppelin_rblwe_cca_decrypt` does.
///
/// # Safety
/// `storage` valid for `storage_len` bytes and used for nothing else while the object lives;
/// `sk` for `sk_len`; `out` valid for a write.
#[no_mangle]
pub unsafe extern "C" fn zeppelin_rblwe_cca_key_init(
    set: u32,
    storage: *mut c_void,
    storage_len: usize,
    sk: *const u8,
    sk_len: usize,
    out: *mut *mut ZeppelinRblweCcaKey,
) -> ZeppelinStatus {
    run(|| unsafe {
        let sk = object::input(sk, sk_len)?;
        with_set!(set, P => {
            let key = CcaSecretKey::<P>::from_bytes(sk)?;
            object::init(storage, storage_len, out, Kind::RblweCcaKey, set as u8, || key)
        })
    })
}

/// CCA2 decryption with a key object of `zeppelin_rblwe_cca_key_init` (implicit rejection as
/// `zeppelin_rblwe_cca_decrypt`).
///
/// # Safety
/// `key` from `zeppelin_rblwe_cca_key_init`; buffers valid for their lengths; `rng` from
/// `zeppelin_rng_init`.
#[no_mangle]
pub unsafe extern "C" fn zeppelin_rblwe_cca_key_decrypt(
    key: *mut ZeppelinRblweCcaKey,
    ct: *const u8,
    ct_len: usize,
    rng: *mut ZeppelinRng,
    message_out: *mut u8,
    message_len: usize,
) -> ZeppelinStatus {
    run(|| unsafe {
        let set = preset_of(key, Kind::RblweCcaKey)?;
        let ct = object::input(ct, ct_len)?;
        let pool = pool(rng)?;
        let out = object::output(message_out, message_len)?;
        with_set!(set, P => {
            let out = front(out, P::BITS_BYTES)?;
            let ct = CcaCiphertext::<P>::from_bytes(ct)?;
            let key = get_mut::<CcaSecretKey<P>, _>(key);
            cca::decrypt::<P, H, _, _, CAP>(key, &ct, pool, out).map_err(Into::into)
        })
    })
}

/// Makes a masked CCA2 secret key in `storage` (`ZEPPELIN_RBLWE_CCA_MASKED_KEY_SIZE`) from the
/// secret key bytes `sk`, the CPA secret split into fresh shares from `rng`.
///
/// # Safety
/// As `zeppelin_rblwe_masked_key_init`.
#[no_mangle]
pub unsafe extern "C" fn zeppelin_rblwe_cca_masked_key_init(
    set: u32,
    storage: *mut c_void,
    storage_len: usize,
    sk: *const u8,
    sk_len: usize,
    rng: *mut ZeppelinRng,
    out: *mut *mut ZeppelinRblweCcaMaskedKey,
) -> ZeppelinStatus {
    run(|| unsafe {
        let sk = object::input(sk, sk_len)?;
        let pool = pool(rng)?;
        with_set!(set, P => {
            object::check_ptr(out)?;
            if storage_len < core::mem::size_of::<CcaSecretKey<P, MaskedSecretKey<P>>>() {
                return Err(ZeppelinStatus::StorageTooSmall);
            }
            let sk = CcaSecretKey::<P>::from_bytes(sk)?;
            let key = sk.to_masked(pool)?;
            object::init(storage, storage_len, out, Kind::RblweCcaMaskedKey, set as u8, || key)
        })
    })
}

/// Masked CCA2 key generation (the CPA secret never exists unshared): the public key to
/// `pk_out` (`2n` bytes), the masked key into `storage`.
///
/// # Safety
/// As `zeppelin_rblwe_masked_keygen`.
#[no_mangle]
pub unsafe extern "C" fn zeppelin_rblwe_cca_masked_keygen(
    set: u32,
    seed_a: *const u8,
    rng: *mut ZeppelinRng,
    pk_out: *mut u8,
    pk_len: usize,
    storage: *mut c_void,
    storage_len: usize,
    out: *mut *mut ZeppelinRblweCcaMaskedKey,
) -> ZeppelinStatus {
    run(|| unsafe {
        let seed = object::bytes32(seed_a)?;
        let pool = pool(rng)?;
        let pk_out = object::output(pk_out, pk_len)?;
        with_set!(set, P => {
            let pk_out = front(pk_out, CcaPublicKey::<P>::BYTES)?;
            object::check_ptr(out)?;
            if storage_len < core::mem::size_of::<CcaSecretKey<P, MaskedSecretKey<P>>>() {
                return Err(ZeppelinStatus::StorageTooSmall);
            }
            let a = PublicParameter::<P>::from_seed(&seed);
            let (pk, key) = cca::keygen_masked::<P, H, _, CAP>(&a, pool)?;
            object::init(storage, storage_len, out, Kind::RblweCcaMaskedKey, set as u8, || key)?;
            put_bytes(pk_out, pk.to_bytes().as_ref())
        })
    })
}

/// CCA2 decryption with a masked key (shares refreshed from `rng`).
///
/// # Safety
/// `key` from `zeppelin_rblwe_cca_masked_key_init`/`_keygen`; buffers valid for their
/// lengths.
#[no_mangle]
pub unsafe extern "C" fn zeppelin_rblwe_cca_masked_decrypt(
    key: *mut ZeppelinRblweCcaMaskedKey,
    ct: *const u8,
    ct_len: usize,
    rng: *mut ZeppelinRng,
    message_out: *mut u8,
    message_len: usize,
) -> ZeppelinStatus {
    run(|| unsafe {
        let set = preset_of(key, Kind::RblweCcaMaskedKey)?;
        let ct = object::input(ct, ct_len)?;
        let pool: &mut Pool = pool(rng)?;
        let out = object::output(message_out, message_len)?;
        with_set!(set, P => {
            let out = front(out, P::BITS_BYTES)?;
            let ct = CcaCiphertext::<P>::from_bytes(ct)?;
            let key = get_mut::<CcaSecretKey<P, MaskedSecretKey<P>>, _>(key);
            cca::decrypt::<P, H, _, _, CAP>(key, &ct, pool, out).map_err(Into::into)
        })
    })
}
