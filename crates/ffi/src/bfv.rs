//! The BFV device client (crate `zeppelin`) behind the C ABI: objects, key generation,
//! encryption, decryption, encoding, fixed point, raw and wire forms, noise budget.
//!
//! Every function checks its handles (kind and preset), pointers and lengths before it calls
//! the Rust API, which checks the data; errors come back as [`ZeppelinStatus`].

use core::ffi::c_void;

use zeppelin::encoder::{self, FixedPoint};
use zeppelin::params::Params;
use zeppelin::{
    wire, Ciphertext, EncryptionSeeds, Plaintext, PublicGenerator, PublicKey, PublicSeed,
    SecretKey, SecretSeed, SeededCiphertext, Workspace,
};
use zeroize::Zeroize;

use crate::keystream;
use crate::object::{self, assert_fits, get, get_mut, preset_of, same_preset, Kind};
use crate::rng::{pool, ZeppelinRng};
use crate::status::{run, Result, ZeppelinStatus};

/// Preset `Seal4096`: n = 4096, t = 65537, three data primes (SEAL-compatible; the default).
pub const ZEPPELIN_PRESET_SEAL4096: u32 = 1;
/// Preset `Zeppelin4096`: n = 4096, t = 65537, the paper's four primes.
pub const ZEPPELIN_PRESET_ZEPPELIN4096: u32 = 2;

/// Storage bytes of a `ZeppelinSecretKey`, preset Seal4096.
pub const ZEPPELIN_SEAL4096_SECRET_KEY_SIZE: usize = 16 + 4096 + 4 * 3 * 4096;
/// Storage bytes of a `ZeppelinPublicKey`, preset Seal4096.
pub const ZEPPELIN_SEAL4096_PUBLIC_KEY_SIZE: usize = 48 + 8 * 3 * 4096;
/// Storage bytes of a `ZeppelinCiphertext`, preset Seal4096.
pub const ZEPPELIN_SEAL4096_CIPHERTEXT_SIZE: usize = 16 + 8 * 3 * 4096;
/// Storage bytes of a `ZeppelinSeededCiphertext`, preset Seal4096.
pub const ZEPPELIN_SEAL4096_SEEDED_CIPHERTEXT_SIZE: usize = 56 + 4 * 3 * 4096;
/// Storage bytes of a `ZeppelinSecretKey`, preset Zeppelin4096.
pub const ZEPPELIN_ZEPPELIN4096_SECRET_KEY_SIZE: usize = 16 + 4096 + 4 * 4 * 4096;
/// Storage bytes of a `ZeppelinPublicKey`, preset Zeppelin4096.
pub const ZEPPELIN_ZEPPELIN4096_PUBLIC_KEY_SIZE: usize = 48 + 8 * 4 * 4096;
/// Storage bytes of a `ZeppelinCiphertext`, preset Zeppelin4096.
pub const ZEPPELIN_ZEPPELIN4096_CIPHERTEXT_SIZE: usize = 16 + 8 * 4 * 4096;
/// Storage bytes of a `ZeppelinSeededCiphertext`, preset Zeppelin4096.
pub const ZEPPELIN_ZEPPELIN4096_SEEDED_CIPHERTEXT_SIZE: usize = 56 + 4 * 4 * 4096;
/// Storage bytes of a `ZeppelinPlaintext` (both presets: n = 4096).
pub const ZEPPELIN_PLAINTEXT_SIZE: usize = 8 + 4 * 4096;
/// Storage bytes of a `ZeppelinWorkspace` (both presets: n = 4096).
pub const ZEPPELIN_WORKSPACE_SIZE: usize = 16 + 11 * 4096;
/// Slots (and plaintext coefficients) of both presets.
pub const ZEPPELIN_SLOTS: usize = 4096;
/// Bytes of a seed.
pub const ZEPPELIN_SEED_BYTES: usize = 32;

use zeppelin::{Seal4096 as S, Zeppelin4096 as Z};
assert_fits!(SecretKey<S>, ZEPPELIN_SEAL4096_SECRET_KEY_SIZE);
assert_fits!(PublicKey<S>, ZEPPELIN_SEAL4096_PUBLIC_KEY_SIZE);
assert_fits!(Ciphertext<S>, ZEPPELIN_SEAL4096_CIPHERTEXT_SIZE);
assert_fits!(
    SeededCiphertext<S>,
    ZEPPELIN_SEAL4096_SEEDED_CIPHERTEXT_SIZE
);
assert_fits!(SecretKey<Z>, ZEPPELIN_ZEPPELIN4096_SECRET_KEY_SIZE);
assert_fits!(PublicKey<Z>, ZEPPELIN_ZEPPELIN4096_PUBLIC_KEY_SIZE);
assert_fits!(Ciphertext<Z>, ZEPPELIN_ZEPPELIN4096_CIPHERTEXT_SIZE);
assert_fits!(
    SeededCiphertext<Z>,
    ZEPPELIN_ZEPPELIN4096_SEEDED_CIPHERTEXT_SIZE
);
assert_fits!(Plaintext<S>, ZEPPELIN_PLAINTEXT_SIZE);
assert_fits!(Plaintext<Z>, ZEPPELIN_PLAINTEXT_SIZE);
assert_fits!(Workspace<S>, ZEPPELIN_WORKSPACE_SIZE);
assert_fits!(Workspace<Z>, ZEPPELIN_WORKSPACE_SIZE);
const _: () = assert!(S::N == ZEPPELIN_SLOTS && Z::N == ZEPPELIN_SLOTS);
const _: () = assert!(S::K == 3 && Z::K == 4);
// `object::wipe_in_place` zeroes keys, ciphertexts and plaintexts byte for byte, which is their
// `zeroed()` value: their fields are integers, arrays of integers, `bool`s and an
// `Option<PublicSeed>` (the public key's), whose all-zero pattern this checks to be `None`.
const _: () = assert!(
    // SAFETY: a 33-byte pattern into a 33-byte type (a size mismatch fails to compile); the
    // compile-time evaluator rejects it if the pattern is not a valid `Option<PublicSeed>`.
    unsafe { core::mem::transmute::<[u8; 33], Option<PublicSeed>>([0; 33]) }.is_none()
);

/// Opaque: a BFV secret key (zeroized by `zeppelin_object_destroy`).
pub struct ZeppelinSecretKey {
    _opaque: [u8; 0],
}
/// Opaque: a BFV public key.
pub struct ZeppelinPublicKey {
    _opaque: [u8; 0],
}
/// Opaque: a full ciphertext `(c0, c1)`.
pub struct ZeppelinCiphertext {
    _opaque: [u8; 0],
}
/// Opaque: a seeded ciphertext `(c0, seed)`.
pub struct ZeppelinSeededCiphertext {
    _opaque: [u8; 0],
}
/// Opaque: a plaintext (n coefficients below t; zeroized by `zeppelin_object_destroy`).
pub struct ZeppelinPlaintext {
    _opaque: [u8; 0],
}
/// Opaque: the working memory of every operation (zeroized by `zeppelin_object_destroy`).
pub struct ZeppelinWorkspace {
    _opaque: [u8; 0],
}

/// Facts about a preset.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct ZeppelinPresetInfo {
    /// Ring degree (and slot count).
    pub n: u32,
    /// Number of data primes (the full level).
    pub k: u32,
    /// Plaintext modulus.
    pub t: u32,
}

/// Runs `$body` with `$P` the preset type of the preset number `$preset` (a `u8` or `u32`).
macro_rules! with_preset {
    ($preset:expr, $P:ident => $body:expr) => {
        match u32::from($preset) {
            ZEPPELIN_PRESET_SEAL4096 => {
                type $P = zeppelin::Seal4096;
                $body
            }
            ZEPPELIN_PRESET_ZEPPELIN4096 => {
                type $P = zeppelin::Zeppelin4096;
                $body
            }
            _ => Err(ZeppelinStatus::UnknownPreset),
        }
    };
}

/// Runs `$call` with `$B` the client type of preset `$P`: the registered board keystream as
/// the public stream if there is one, else the software AES; a failing callback turns the
/// result into `ZEPPELIN_STATUS_KEYSTREAM` after `$wipe` has cleared the output.
macro_rules! with_public_stream {
    ($P:ty, $B:ident => $call:expr, wipe $wipe:expr) => {{
        if keystream::registered() {
            keystream::begin();
            type $B = zeppelin::Bfv<$P, keystream::CallbackKeystream, zeppelin::AesCtr128>;
            let r = keystream::finish($call.map_err(ZeppelinStatus::from));
            if r.is_err() {
                $wipe;
            }
            r
        } else {
            type $B = zeppelin::Bfv<$P>;
            $call.map_err(ZeppelinStatus::from)
        }
    }};
}

/// Converts a preset number to the tag byte, checking it is known.
fn preset_byte(preset: u32) -> Result<u8> {
    match preset {
        ZEPPELIN_PRESET_SEAL4096 | ZEPPELIN_PRESET_ZEPPELIN4096 => Ok(preset as u8),
        _ => Err(ZeppelinStatus::UnknownPreset),
    }
}

/// A level argument as the client's `usize`.
fn level(level: u32) -> usize {
    level as usize
}

/// A secret seed from the caller, the caller's copy on the stack wiped.
///
/// # Safety
/// `p` is NULL or valid for 32 bytes.
unsafe fn secret_seed(p: *const u8) -> Result<SecretSeed> {
    // SAFETY: forwarded contract.
    let mut bytes = unsafe { object::bytes32(p) }?;
    let seed = SecretSeed::from_bytes(bytes);
    bytes.zeroize();
    Ok(seed)
}

/// A fresh secret seed from the pool.
fn random_secret_seed(pool: &mut crate::rng::Pool) -> Result<SecretSeed> {
    let mut bytes = [0u8; 32];
    let r = pool.fill(&mut bytes);
    let seed = SecretSeed::from_bytes(bytes);
    bytes.zeroize();
    r?;
    Ok(seed)
}

/// A fresh public seed from the pool.
fn random_public_seed(pool: &mut crate::rng::Pool) -> Result<PublicSeed> {
    let mut bytes = [0u8; 32];
    pool.fill(&mut bytes)?;
    Ok(PublicSeed(bytes))
}

// ----- objects -----------------------------------------------------------------------------

/// Facts about preset `preset` (`ZEPPELIN_PRESET_*`) into `*info`.
///
/// # Safety
/// `info` is NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn zeppelin_preset_info(
    preset: u32,
    info: *mut ZeppelinPresetInfo,
) -> ZeppelinStatus {
    run(|| unsafe {
        object::check_ptr(info)?;
        let value = with_preset!(preset, P => Ok(ZeppelinPresetInfo {
            n: P::N as u32,
            k: P::K as u32,
            t: P::T,
        }))?;
        object::put(info, value)
    })
}

/// Makes an empty secret key of `preset` in `storage` (`ZEPPELIN_<PRESET>_SECRET_KEY_SIZE`
/// bytes, aligned to `ZEPPELIN_OBJECT_ALIGN`); `*out` receives the handle. Every operation
/// refuses it until key generation or `zeppelin_secret_key_read` fills it.
///
/// # Safety
/// `storage` valid for writes of `storage_len` bytes and used for nothing else while the
/// object lives; `out` valid for a write.
#[no_mangle]
pub unsafe extern "C" fn zeppelin_secret_key_init(
    preset: u32,
    storage: *mut c_void,
    storage_len: usize,
    out: *mut *mut ZeppelinSecretKey,
) -> ZeppelinStatus {
    run(|| unsafe {
        let tag = preset_byte(preset)?;
        with_preset!(preset, P => object::init(storage, storage_len, out, Kind::SecretKey, tag, SecretKey::<P>::zeroed))
    })
}

/// Makes an empty public key of `preset` in `storage` (`ZEPPELIN_<PRESET>_PUBLIC_KEY_SIZE`).
///
/// # Safety
/// As `zeppelin_secret_key_init`.
#[no_mangle]
pub unsafe extern "C" fn zeppelin_public_key_init(
    preset: u32,
    storage: *mut c_void,
    storage_len: usize,
    out: *mut *mut ZeppelinPublicKey,
) -> ZeppelinStatus {
    run(|| unsafe {
        let tag = preset_byte(preset)?;
        with_preset!(preset, P => object::init(storage, storage_len, out, Kind::PublicKey, tag, PublicKey::<P>::zeroed))
    })
}

/// Makes an empty full ciphertext of `preset` in `storage` (`ZEPPELIN_<PRESET>_CIPHERTEXT_SIZE`).
///
/// # Safety
/// As `zeppelin_secret_key_init`.
#[no_mangle]
pub unsafe extern "C" fn zeppelin_ciphertext_init(
    preset: u32,
    storage: *mut c_void,
    storage_len: usize,
    out: *mut *mut ZeppelinCiphertext,
) -> ZeppelinStatus {
    run(|| unsafe {
        let tag = preset_byte(preset)?;
        with_preset!(preset, P => object::init(storage, storage_len, out, Kind::Ciphertext, tag, Ciphertext::<P>::zeroed))
    })
}

/// Makes an empty seeded ciphertext of `preset` in `storage`
/// (`ZEPPELIN_<PRESET>_SEEDED_CIPHERTEXT_SIZE`).
///
/// # Safety
/// As `zeppelin_secret_key_init`.
#[no_mangle]
pub unsafe extern "C" fn zeppelin_seeded_ciphertext_init(
    preset: u32,
    storage: *mut c_void,
    storage_len: usize,
    out: *mut *mut ZeppelinSeededCiphertext,
) -> ZeppelinStatus {
    run(|| unsafe {
        let tag = preset_byte(preset)?;
        with_preset!(preset, P => object::init(storage, storage_len, out, Kind::SeededCiphertext, tag, SeededCiphertext::<P>::zeroed))
    })
}

/// Makes a zero plaintext of `preset` in `storage` (`ZEPPELIN_PLAINTEXT_SIZE`).
///
/// # Safety
/// As `zeppelin_secret_key_init`.
#[no_mangle]
pub unsafe extern "C" fn zeppelin_plaintext_init(
    preset: u32,
    storage: *mut c_void,
    storage_len: usize,
    out: *mut *mut ZeppelinPlaintext,
) -> ZeppelinStatus {
    run(|| unsafe {
        let tag = preset_byte(preset)?;
        with_preset!(preset, P => object::init(storage, storage_len, out, Kind::Plaintext, tag, Plaintext::<P>::zeroed))
    })
}

/// Makes a workspace of `preset` in `storage` (`ZEPPELIN_WORKSPACE_SIZE`) on the build's
/// arithmetic backend (Helium on an MVE build, AVX2/AVX-512 when the host has them).
///
/// # Safety
/// As `zeppelin_secret_key_init`.
#[no_mangle]
pub unsafe extern "C" fn zeppelin_workspace_init(
    preset: u32,
    storage: *mut c_void,
    storage_len: usize,
    out: *mut *mut ZeppelinWorkspace,
) -> ZeppelinStatus {
    run(|| unsafe {
        let tag = preset_byte(preset)?;
        with_preset!(preset, P => object::init(storage, storage_len, out, Kind::Workspace, tag, Workspace::<P>::new))
    })
}

/// Drops a BFV object of kind `kind` and preset `preset` in place.
///
/// # Safety
/// As [`object::destroy`].
pub(crate) unsafe fn destroy(kind: Kind, preset: u8, obj: *mut c_void) -> Result<()> {
    // SAFETY: forwarded contract.
    unsafe {
        with_preset!(preset, P => {
            match kind {
                Kind::SecretKey => object::destroy::<SecretKey<P>>(obj),
                Kind::PublicKey => object::destroy::<PublicKey<P>>(obj),
                Kind::Ciphertext => object::destroy::<Ciphertext<P>>(obj),
                Kind::SeededCiphertext => object::destroy::<SeededCiphertext<P>>(obj),
                Kind::Plaintext => object::destroy::<Plaintext<P>>(obj),
                Kind::Workspace => object::destroy::<Workspace<P>>(obj),
                _ => return Err(ZeppelinStatus::BadObject),
            }
            Ok(())
        })
    }
}

// ----- key generation ------------------------------------------------------------------------

/// Generates the secret key from the secret seed `seed` (32 bytes; deterministic).
///
/// # Safety
/// `sk` is a handle from `zeppelin_secret_key_init`; `seed` valid for 32 bytes.
#[no_mangle]
pub unsafe extern "C" fn zeppelin_keygen_secret(
    sk: *mut ZeppelinSecretKey,
    seed: *const u8,
) -> ZeppelinStatus {
    run(|| unsafe {
        let p = preset_of(sk, Kind::SecretKey)?;
        let seed = secret_seed(seed)?;
        with_preset!(p, P => zeppelin::Bfv::<P>::generate_secret_key_with(&seed, get_mut(sk)).map_err(Into::into))
    })
}

/// Generates the secret key with a fresh seed from `rng`.
///
/// # Safety
/// `sk` from `zeppelin_secret_key_init`; `rng` from `zeppelin_rng_init`.
#[no_mangle]
pub unsafe extern "C" fn zeppelin_keygen_secret_random(
    sk: *mut ZeppelinSecretKey,
    rng: *mut ZeppelinRng,
) -> ZeppelinStatus {
    run(|| unsafe {
        let p = preset_of(sk, Kind::SecretKey)?;
        let seed = random_secret_seed(pool(rng)?)?;
        with_preset!(p, P => zeppelin::Bfv::<P>::generate_secret_key_with(&seed, get_mut(sk)).map_err(Into::into))
    })
}

/// Generates the public key of `sk` from explicit seeds (deterministic): `seed_a` (public,
/// 32 bytes) expands `p̂1 = â`, `seed_e` (secret, 32 bytes) the error.
///
/// # Safety
/// Handles from their init functions; seeds valid for 32 bytes each.
#[no_mangle]
pub unsafe extern "C" fn zeppelin_keygen_public(
    sk: *const ZeppelinSecretKey,
    pk: *mut ZeppelinPublicKey,
    ws: *mut ZeppelinWorkspace,
    seed_a: *const u8,
    seed_e: *const u8,
) -> ZeppelinStatus {
    run(|| unsafe {
        let p = same_preset(&[
            preset_of(sk, Kind::SecretKey),
            preset_of(pk, Kind::PublicKey),
            preset_of(ws, Kind::Workspace),
        ])?;
        let a = PublicSeed(object::bytes32(seed_a)?);
        let e = secret_seed(seed_e)?;
        keygen_public(p, sk, pk, ws, &a, &e)
    })
}

/// Generates the public key of `sk` with fresh seeds from `rng` (public seed first).
///
/// # Safety
/// Handles from their init functions.
#[no_mangle]
pub unsafe extern "C" fn zeppelin_keygen_public_random(
    sk: *const ZeppelinSecretKey,
    pk: *mut ZeppelinPublicKey,
    ws: *mut ZeppelinWorkspace,
    rng: *mut ZeppelinRng,
) -> ZeppelinStatus {
    run(|| unsafe {
        let p = same_preset(&[
            preset_of(sk, Kind::SecretKey),
            preset_of(pk, Kind::PublicKey),
            preset_of(ws, Kind::Workspace),
        ])?;
        let pool = pool(rng)?;
        let a = random_public_seed(pool)?;
        let e = random_secret_seed(pool)?;
        keygen_public(p, sk, pk, ws, &a, &e)
    })
}

/// # Safety
/// Handles checked for preset `p`.
unsafe fn keygen_public(
    p: u8,
    sk: *const ZeppelinSecretKey,
    pk: *mut ZeppelinPublicKey,
    ws: *mut ZeppelinWorkspace,
    a: &PublicSeed,
    e: &SecretSeed,
) -> Result<()> {
    // SAFETY: the handles were checked for preset `p` by the caller.
    unsafe {
        with_preset!(p, P => {
            let pk = get_mut::<PublicKey<P>, _>(pk);
            with_public_stream!(P, B => B::generate_public_key_with(get(sk), a, e, pk, get_mut::<Workspace<P>, _>(ws)),
                wipe object::wipe_in_place(pk))
        })
    }
}

// ----- encryption ----------------------------------------------------------------------------

/// Seeded symmetric encryption of `plain` at `level` (1..=K) from explicit seeds
/// (deterministic: `seed_a` public, `seed_e` secret, 32 bytes each) into `out`.
///
/// # Safety
/// Handles from their init functions; seeds valid for 32 bytes each.
#[no_mangle]
pub unsafe extern "C" fn zeppelin_encrypt_seeded(
    sk: *const ZeppelinSecretKey,
    plain: *const ZeppelinPlaintext,
    level: u32,
    seed_a: *const u8,
    seed_e: *const u8,
    out: *mut ZeppelinSeededCiphertext,
    ws: *mut ZeppelinWorkspace,
) -> ZeppelinStatus {
    run(|| unsafe {
        let p = symmetric_preset(sk, plain, out.cast(), Kind::SeededCiphertext, ws)?;
        let seeds = EncryptionSeeds {
            a: PublicSeed(object::bytes32(seed_a)?),
            e: secret_seed(seed_e)?,
        };
        encrypt_seeded(p, sk, plain, level, &seeds, out, ws)
    })
}

/// Seeded symmetric encryption with fresh seeds from `rng` (public seed first).
///
/// # Safety
/// Handles from their init functions.
#[no_mangle]
pub unsafe extern "C" fn zeppelin_encrypt_seeded_random(
    sk: *const ZeppelinSecretKey,
    plain: *const ZeppelinPlaintext,
    level: u32,
    rng: *mut ZeppelinRng,
    out: *mut ZeppelinSeededCiphertext,
    ws: *mut ZeppelinWorkspace,
) -> ZeppelinStatus {
    run(|| unsafe {
        let p = symmetric_preset(sk, plain, out.cast(), Kind::SeededCiphertext, ws)?;
        let pool = pool(rng)?;
        let seeds = EncryptionSeeds {
            a: random_public_seed(pool)?,
            e: random_secret_seed(pool)?,
        };
        encrypt_seeded(p, sk, plain, level, &seeds, out, ws)
    })
}

/// # Safety
/// As the callers: `tag_of` contract for every handle.
unsafe fn symmetric_preset(
    sk: *const ZeppelinSecretKey,
    plain: *const ZeppelinPlaintext,
    out: *const c_void,
    out_kind: Kind,
    ws: *const ZeppelinWorkspace,
) -> Result<u8> {
    // SAFETY: forwarded contract.
    unsafe {
        same_preset(&[
            preset_of(sk, Kind::SecretKey),
            preset_of(plain, Kind::Plaintext),
            preset_of(out, out_kind),
            preset_of(ws, Kind::Workspace),
        ])
    }
}

/// # Safety
/// Handles checked for preset `p`.
unsafe fn encrypt_seeded(
    p: u8,
    sk: *const ZeppelinSecretKey,
    plain: *const ZeppelinPlaintext,
    lvl: u32,
    seeds: &EncryptionSeeds,
    out: *mut ZeppelinSeededCiphertext,
    ws: *mut ZeppelinWorkspace,
) -> Result<()> {
    // SAFETY: the handles were checked for preset `p` by the caller.
    unsafe {
        with_preset!(p, P => {
            let out = get_mut::<SeededCiphertext<P>, _>(out);
            with_public_stream!(P, B => B::encrypt_seeded_with(get(sk), get(plain), seeds, level(lvl), out, get_mut::<Workspace<P>, _>(ws)),
                wipe object::wipe_in_place(out))
        })
    }
}

/// Classic symmetric encryption (`c1 = a` sent in full) at `level` from explicit seeds.
///
/// # Safety
/// Handles from their init functions; seeds valid for 32 bytes each.
#[no_mangle]
pub unsafe extern "C" fn zeppelin_encrypt_symmetric(
    sk: *const ZeppelinSecretKey,
    plain: *const ZeppelinPlaintext,
    level: u32,
    seed_a: *const u8,
    seed_e: *const u8,
    out: *mut ZeppelinCiphertext,
    ws: *mut ZeppelinWorkspace,
) -> ZeppelinStatus {
    run(|| unsafe {
        let p = symmetric_preset(sk, plain, out.cast(), Kind::Ciphertext, ws)?;
        let seeds = EncryptionSeeds {
            a: PublicSeed(object::bytes32(seed_a)?),
            e: secret_seed(seed_e)?,
        };
        encrypt_symmetric(p, sk, plain, level, &seeds, out, ws)
    })
}

/// Classic symmetric encryption with fresh seeds from `rng`.
///
/// # Safety
/// Handles from their init functions.
#[no_mangle]
pub unsafe extern "C" fn zeppelin_encrypt_symmetric_random(
    sk: *const ZeppelinSecretKey,
    plain: *const ZeppelinPlaintext,
    level: u32,
    rng: *mut ZeppelinRng,
    out: *mut ZeppelinCiphertext,
    ws: *mut ZeppelinWorkspace,
) -> ZeppelinStatus {
    run(|| unsafe {
        let p = symmetric_preset(sk, plain, out.cast(), Kind::Ciphertext, ws)?;
        let pool = pool(rng)?;
        let seeds = EncryptionSeeds {
            a: random_public_seed(pool)?,
            e: random_secret_seed(pool)?,
        };
        encrypt_symmetric(p, sk, plain, level, &seeds, out, ws)
    })
}

/// # Safety
/// Handles checked for preset `p`.
unsafe fn encrypt_symmetric(
    p: u8,
    sk: *const ZeppelinSecretKey,
    plain: *const ZeppelinPlaintext,
    lvl: u32,
    seeds: &EncryptionSeeds,
    out: *mut ZeppelinCiphertext,
    ws: *mut ZeppelinWorkspace,
) -> Result<()> {
    // SAFETY: the handles were checked for preset `p` by the caller.
    unsafe {
        with_preset!(p, P => {
            let out = get_mut::<Ciphertext<P>, _>(out);
            with_public_stream!(P, B => B::encrypt_symmetric_with(get(sk), get(plain), seeds, level(lvl), out, get_mut::<Workspace<P>, _>(ws)),
                wipe object::wipe_in_place(out))
        })
    }
}

/// Public-key encryption of `plain` at `level` with the secret seed `seed_e` (32 bytes).
///
/// # Safety
/// Handles from their init functions; `seed_e` valid for 32 bytes.
#[no_mangle]
pub unsafe extern "C" fn zeppelin_encrypt_public(
    pk: *const ZeppelinPublicKey,
    plain: *const ZeppelinPlaintext,
    level: u32,
    seed_e: *const u8,
    out: *mut ZeppelinCiphertext,
    ws: *mut ZeppelinWorkspace,
) -> ZeppelinStatus {
    run(|| unsafe {
        let p = public_preset(pk, plain, out, ws)?;
        let e = secret_seed(seed_e)?;
        encrypt_public(p, pk, plain, level, &e, out, ws)
    })
}

/// Public-key encryption with a fresh secret seed from `rng`.
///
/// # Safety
/// Handles from their init functions.
#[no_mangle]
pub unsafe extern "C" fn zeppelin_encrypt_public_random(
    pk: *const ZeppelinPublicKey,
    plain: *const ZeppelinPlaintext,
    level: u32,
    rng: *mut ZeppelinRng,
    out: *mut ZeppelinCiphertext,
    ws: *mut ZeppelinWorkspace,
) -> ZeppelinStatus {
    run(|| unsafe {
        let p = public_preset(pk, plain, out, ws)?;
        let e = random_secret_seed(pool(rng)?)?;
        encrypt_public(p, pk, plain, level, &e, out, ws)
    })
}

/// # Safety
/// `tag_of` contract for every handle.
unsafe fn public_preset(
    pk: *const ZeppelinPublicKey,
    plain: *const ZeppelinPlaintext,
    out: *const ZeppelinCiphertext,
    ws: *const ZeppelinWorkspace,
) -> Result<u8> {
    // SAFETY: forwarded contract.
    unsafe {
        same_preset(&[
            preset_of(pk, Kind::PublicKey),
            preset_of(plain, Kind::Plaintext),
            preset_of(out, Kind::Ciphertext),
            preset_of(ws, Kind::Workspace),
        ])
    }
}

/// # Safety
/// Handles checked for preset `p`.
unsafe fn encrypt_public(
    p: u8,
    pk: *const ZeppelinPublicKey,
    plain: *const ZeppelinPlaintext,
    lvl: u32,
    e: &SecretSeed,
    out: *mut ZeppelinCiphertext,
    ws: *mut ZeppelinWorkspace,
) -> Result<()> {
    // SAFETY: the handles were checked for preset `p` by the caller.
    unsafe {
        with_preset!(p, P => zeppelin::Bfv::<P>::encrypt_public_with(get(pk), get(plain), e, level(lvl), get_mut(out), get_mut::<Workspace<P>, _>(ws)).map_err(Into::into))
    }
}

// ----- decryption, expansion, noise ----------------------------------------------------------

/// Decrypts a full ciphertext into `plain`.
///
/// # Safety
/// Handles from their init functions.
#[no_mangle]
pub unsafe extern "C" fn zeppelin_decrypt(
    sk: *const ZeppelinSecretKey,
    ct: *const ZeppelinCiphertext,
    plain: *mut ZeppelinPlaintext,
    ws: *mut ZeppelinWorkspace,
) -> ZeppelinStatus {
    run(|| unsafe {
        let p = symmetric_preset(sk, plain, ct.cast(), Kind::Ciphertext, ws)?;
        with_preset!(p, P => zeppelin::Bfv::<P>::decrypt(get(sk), get(ct), get_mut(plain), get_mut::<Workspace<P>, _>(ws)).map_err(Into::into))
    })
}

/// Decrypts a seeded ciphertext into `plain` (its `â` re-sampled from the seed with the
/// generator the ciphertext records: AES-128-CTR through the registered board stream or the
/// software AES, ChaCha20 in software).
///
/// # Safety
/// Handles from their init functions.
#[no_mangle]
pub unsafe extern "C" fn zeppelin_decrypt_seeded(
    sk: *const ZeppelinSecretKey,
    ct: *const ZeppelinSeededCiphertext,
    plain: *mut ZeppelinPlaintext,
    ws: *mut ZeppelinWorkspace,
) -> ZeppelinStatus {
    run(|| unsafe {
        let p = symmetric_preset(sk, plain, ct.cast(), Kind::SeededCiphertext, ws)?;
        with_preset!(p, P => {
            let plain = get_mut::<Plaintext<P>, _>(plain);
            let ct = get::<SeededCiphertext<P>, _>(ct);
            if ct.generator() == PublicGenerator::AesCtr128 {
                // The registered board stream (AES-128-CTR), or the software AES.
                with_public_stream!(P, B => B::decrypt_seeded(get(sk), ct, plain, get_mut::<Workspace<P>, _>(ws)),
                    wipe object::wipe_in_place(plain))
            } else {
                zeppelin::decrypt_seeded(get(sk), ct, plain, get_mut::<Workspace<P>, _>(ws))
                    .map_err(ZeppelinStatus::from)
            }
        })
    })
}

/// Expands a seeded ciphertext into the full ciphertext `(c0, INTT(â))` (`expand_ct1`, with
/// the generator the ciphertext records, as `zeppelin_decrypt_seeded`).
///
/// # Safety
/// Handles from their init functions.
#[no_mangle]
pub unsafe extern "C" fn zeppelin_expand_seeded(
    ct: *const ZeppelinSeededCiphertext,
    out: *mut ZeppelinCiphertext,
) -> ZeppelinStatus {
    run(|| unsafe {
        let p = same_preset(&[
            preset_of(ct, Kind::SeededCiphertext),
            preset_of(out, Kind::Ciphertext),
        ])?;
        with_preset!(p, P => {
            let out = get_mut::<Ciphertext<P>, _>(out);
            let ct = get::<SeededCiphertext<P>, _>(ct);
            if ct.generator() == PublicGenerator::AesCtr128 {
                with_public_stream!(P, B => B::expand_ct1(ct, out), wipe object::wipe_in_place(out))
            } else {
                zeppelin::expand_seeded(ct, out).map_err(ZeppelinStatus::from)
            }
        })
    })
}

/// SEAL's invariant noise budget in bits of a full ciphertext into `*bits`. `scratch` holds
/// `level·n` words and receives `X = c0 + c1·s` (wipe it after use: it depends on the key).
/// A diagnostic; not constant time.
///
/// # Safety
/// Handles from their init functions; `scratch` valid for `scratch_len` words; `bits` for a
/// write.
#[no_mangle]
pub unsafe extern "C" fn zeppelin_noise_budget(
    sk: *const ZeppelinSecretKey,
    ct: *const ZeppelinCiphertext,
    ws: *mut ZeppelinWorkspace,
    scratch: *mut u32,
    scratch_len: usize,
    bits: *mut u32,
) -> ZeppelinStatus {
    run(|| unsafe {
        let p = same_preset(&[
            preset_of(sk, Kind::SecretKey),
            preset_of(ct, Kind::Ciphertext),
            preset_of(ws, Kind::Workspace),
        ])?;
        object::check_ptr(bits)?;
        let scratch = object::output(scratch, scratch_len)?;
        let b = with_preset!(p, P => zeppelin::Bfv::<P>::noise_budget(get(sk), get(ct), scratch, get_mut::<Workspace<P>, _>(ws)).map_err(ZeppelinStatus::from))?;
        object::put(bits, b)
    })
}

// ----- encoding and fixed point ---------------------------------------------------------------

/// Batch-encodes `len` slots (each below t; `len <= n`, the rest 0) into `plain`.
///
/// # Safety
/// `slots` valid for `len` words; `plain` from `zeppelin_plaintext_init`.
#[no_mangle]
pub unsafe extern "C" fn zeppelin_encode(
    slots: *const u32,
    len: usize,
    plain: *mut ZeppelinPlaintext,
) -> ZeppelinStatus {
    run(|| unsafe {
        let p = preset_of(plain, Kind::Plaintext)?;
        let slots = object::input(slots, len)?;
        with_preset!(p, P => encoder::encode(slots, get_mut::<Plaintext<P>, _>(plain)).map_err(Into::into))
    })
}

/// Decodes `plain` into its `n` slots (`len` must be n).
///
/// # Safety
/// `plain` from `zeppelin_plaintext_init`; `slots` valid for `len` words.
#[no_mangle]
pub unsafe extern "C" fn zeppelin_decode(
    plain: *const ZeppelinPlaintext,
    slots: *mut u32,
    len: usize,
) -> ZeppelinStatus {
    run(|| unsafe {
        let p = preset_of(plain, Kind::Plaintext)?;
        let slots = object::output(slots, len)?;
        with_preset!(p, P => encoder::decode(get::<Plaintext<P>, _>(plain), slots).map_err(Into::into))
    })
}

/// Fixed point: `values[i]` becomes `round(values[i]·2^frac_bits) mod t` in `slots[i]`;
/// slots `len..slots_len` are set to 0. Nothing is written if a value is out of range
/// (`|x| <= ((t-1)/2)/2^frac_bits`) or NaN.
///
/// # Safety
/// `values` valid for `len` doubles, `slots` for `slots_len` words.
#[no_mangle]
pub unsafe extern "C" fn zeppelin_quantize(
    preset: u32,
    frac_bits: u32,
    values: *const f64,
    len: usize,
    slots: *mut u32,
    slots_len: usize,
) -> ZeppelinStatus {
    run(|| unsafe {
        let values = object::input(values, len)?;
        let slots = object::output(slots, slots_len)?;
        with_preset!(preset, P => FixedPoint::<P>::new(frac_bits).and_then(|f| f.quantize_slots(values, slots)).map_err(Into::into))
    })
}

/// Fixed point back: `values[i]` = the centred lift of `slots[i]` over `2^frac_bits`, for
/// `len` slots (each below t).
///
/// # Safety
/// `slots` valid for `len` words, `values` for `len` doubles.
#[no_mangle]
pub unsafe extern "C" fn zeppelin_dequantize(
    preset: u32,
    frac_bits: u32,
    slots: *const u32,
    len: usize,
    values: *mut f64,
) -> ZeppelinStatus {
    run(|| unsafe {
        let slots = object::input(slots, len)?;
        let values = object::output(values, len)?;
        with_preset!(preset, P => {
            let f = FixedPoint::<P>::new(frac_bits)?;
            if slots.iter().any(|&s| s >= P::T) {
                return Err(ZeppelinStatus::PlaintextRange);
            }
            f.dequantize_slots(slots, values);
            Ok(())
        })
    })
}

// ----- raw forms (the KAT files) -------------------------------------------------------------

/// Writes the secret key's `n` ternary coefficients (one signed byte each) to `out`;
/// `*written` (may be NULL) receives the length. Secret: wipe `out` after use.
///
/// # Safety
/// `sk` from its init function; `out` valid for `out_len` bytes; `written` NULL or valid.
#[no_mangle]
pub unsafe extern "C" fn zeppelin_secret_key_write(
    sk: *const ZeppelinSecretKey,
    out: *mut u8,
    out_len: usize,
    written: *mut usize,
) -> ZeppelinStatus {
    run(|| unsafe {
        let p = preset_of(sk, Kind::SecretKey)?;
        let out = object::output(out, out_len)?;
        let n = with_preset!(p, P => get::<SecretKey<P>, _>(sk).write_bytes(out).map_err(ZeppelinStatus::from))?;
        object::put(written, n)
    })
}

/// Writes the secret key's NTT-form residues (`K·n` little-endian `u32`s) to `out`.
/// Secret: wipe `out` after use.
///
/// # Safety
/// As `zeppelin_secret_key_write`.
#[no_mangle]
pub unsafe extern "C" fn zeppelin_secret_key_write_ntt(
    sk: *const ZeppelinSecretKey,
    out: *mut u8,
    out_len: usize,
    written: *mut usize,
) -> ZeppelinStatus {
    run(|| unsafe {
        let p = preset_of(sk, Kind::SecretKey)?;
        let out = object::output(out, out_len)?;
        let n = with_preset!(p, P => {
            let sk = get::<SecretKey<P>, _>(sk);
            if !sk.is_set() {
                return Err(ZeppelinStatus::KeyNotSet);
            }
            let words = sk.ntt_residues();
            let needed = 4 * words.len();
            let found = out.len();
            let dst = out.get_mut(..needed).ok_or(zeppelin::Error::BufferTooSmall { needed, found })?;
            for (d, w) in dst.chunks_exact_mut(4).zip(words.iter()) {
                d.copy_from_slice(&w.to_le_bytes());
            }
            Ok(needed)
        })?;
        object::put(written, n)
    })
}

/// Reads a secret key written by `zeppelin_secret_key_write` (`n` bytes), checking that it
/// is ternary with a plausible weight.
///
/// # Safety
/// `sk` from its init function; `bytes` valid for `len` bytes.
#[no_mangle]
pub unsafe extern "C" fn zeppelin_secret_key_read(
    sk: *mut ZeppelinSecretKey,
    bytes: *const u8,
    len: usize,
) -> ZeppelinStatus {
    run(|| unsafe {
        let p = preset_of(sk, Kind::SecretKey)?;
        let bytes = object::input(bytes, len)?;
        with_preset!(p, P => get_mut::<SecretKey<P>, _>(sk).read_bytes(bytes).map_err(Into::into))
    })
}

/// Writes the public key `p̂0 ‖ p̂1` (`2·K·n` little-endian `u32`s) to `out`.
///
/// # Safety
/// As `zeppelin_secret_key_write`.
#[no_mangle]
pub unsafe extern "C" fn zeppelin_public_key_write(
    pk: *const ZeppelinPublicKey,
    out: *mut u8,
    out_len: usize,
    written: *mut usize,
) -> ZeppelinStatus {
    run(|| unsafe {
        let p = preset_of(pk, Kind::PublicKey)?;
        let out = object::output(out, out_len)?;
        let n = with_preset!(p, P => get::<PublicKey<P>, _>(pk).write_bytes(out).map_err(ZeppelinStatus::from))?;
        object::put(written, n)
    })
}

/// Copies the 32-byte public seed that `p̂1 = â` of a generated public key was expanded
/// from into `out`: with it, the seeded public key is `p̂0` and this seed (the receiver
/// re-expands `â` as for a seeded ciphertext's `c1`). A key read from bytes has no seed
/// (`ZEPPELIN_STATUS_NO_PUBLIC_SEED`).
///
/// # Safety
/// `pk` from its init function; `out` points at 32 writable bytes.
#[no_mangle]
pub unsafe extern "C" fn zeppelin_public_key_seed(
    pk: *const ZeppelinPublicKey,
    out: *mut u8,
) -> ZeppelinStatus {
    run(|| unsafe {
        let p = preset_of(pk, Kind::PublicKey)?;
        let out = object::output(out, 32)?;
        let seed = with_preset!(p, P => {
            let key = get::<PublicKey<P>, _>(pk);
            if !key.is_set() {
                return Err(ZeppelinStatus::KeyNotSet);
            }
            key.seed().map(|s| s.0).ok_or(ZeppelinStatus::NoPublicSeed)
        })?;
        out.copy_from_slice(&seed);
        Ok(())
    })
}

/// Reads a public key written by `zeppelin_public_key_write`, refusing residues not below
/// their prime and degenerate keys.
///
/// # Safety
/// As `zeppelin_secret_key_read`.
#[no_mangle]
pub unsafe extern "C" fn zeppelin_public_key_read(
    pk: *mut ZeppelinPublicKey,
    bytes: *const u8,
    len: usize,
) -> ZeppelinStatus {
    run(|| unsafe {
        let p = preset_of(pk, Kind::PublicKey)?;
        let bytes = object::input(bytes, len)?;
        with_preset!(p, P => get_mut::<PublicKey<P>, _>(pk).read_bytes(bytes).map_err(Into::into))
    })
}

/// Writes a full ciphertext's raw form `c0 ‖ c1` (`2·L·n` little-endian `u32`s).
///
/// # Safety
/// As `zeppelin_secret_key_write`.
#[no_mangle]
pub unsafe extern "C" fn zeppelin_ciphertext_write(
    ct: *const ZeppelinCiphertext,
    out: *mut u8,
    out_len: usize,
    written: *mut usize,
) -> ZeppelinStatus {
    run(|| unsafe {
        let p = preset_of(ct, Kind::Ciphertext)?;
        let out = object::output(out, out_len)?;
        let n = with_preset!(p, P => get::<Ciphertext<P>, _>(ct).write_bytes(out).map_err(ZeppelinStatus::from))?;
        object::put(written, n)
    })
}

/// Reads a full ciphertext's raw form at `level`, checking every residue.
///
/// # Safety
/// As `zeppelin_secret_key_read`.
#[no_mangle]
pub unsafe extern "C" fn zeppelin_ciphertext_read(
    ct: *mut ZeppelinCiphertext,
    level: u32,
    bytes: *const u8,
    len: usize,
) -> ZeppelinStatus {
    run(|| unsafe {
        let p = preset_of(ct, Kind::Ciphertext)?;
        let bytes = object::input(bytes, len)?;
        with_preset!(p, P => get_mut::<Ciphertext<P>, _>(ct).read_bytes(self::level(level), bytes).map_err(Into::into))
    })
}

/// Writes a seeded ciphertext's raw form (`c0` as `L·n` little-endian `u32`s, the public
/// generator's `prng_type` byte (0xA1 AES-128-CTR, 0xA2 ChaCha20), then the 32-byte seed).
///
/// # Safety
/// As `zeppelin_secret_key_write`.
#[no_mangle]
pub unsafe extern "C" fn zeppelin_seeded_ciphertext_write(
    ct: *const ZeppelinSeededCiphertext,
    out: *mut u8,
    out_len: usize,
    written: *mut usize,
) -> ZeppelinStatus {
    run(|| unsafe {
        let p = preset_of(ct, Kind::SeededCiphertext)?;
        let out = object::output(out, out_len)?;
        let n = with_preset!(p, P => get::<SeededCiphertext<P>, _>(ct).write_bytes(out).map_err(ZeppelinStatus::from))?;
        object::put(written, n)
    })
}

/// Reads a seeded ciphertext's raw form at `level`, checking every residue.
///
/// # Safety
/// As `zeppelin_secret_key_read`.
#[no_mangle]
pub unsafe extern "C" fn zeppelin_seeded_ciphertext_read(
    ct: *mut ZeppelinSeededCiphertext,
    level: u32,
    bytes: *const u8,
    len: usize,
) -> ZeppelinStatus {
    run(|| unsafe {
        let p = preset_of(ct, Kind::SeededCiphertext)?;
        let bytes = object::input(bytes, len)?;
        with_preset!(p, P => get_mut::<SeededCiphertext<P>, _>(ct).read_bytes(self::level(level), bytes).map_err(Into::into))
    })
}

/// The level of a ciphertext (0 while empty) into `*level`.
///
/// # Safety
/// `ct` from its init function; `level` valid for a write.
#[no_mangle]
pub unsafe extern "C" fn zeppelin_ciphertext_level(
    ct: *const ZeppelinCiphertext,
    level: *mut u32,
) -> ZeppelinStatus {
    run(|| unsafe {
        let p = preset_of(ct, Kind::Ciphertext)?;
        object::check_ptr(level)?;
        let l = with_preset!(p, P => Ok(get::<Ciphertext<P>, _>(ct).level()))?;
        object::put(level, l as u32)
    })
}

// ----- wire forms (SEAL's Ciphertext layout) --------------------------------------------------

/// Bytes of the full wire form at `level` into `*len`.
///
/// # Safety
/// `len` valid for a write.
#[no_mangle]
pub unsafe extern "C" fn zeppelin_wire_full_len(
    preset: u32,
    level: u32,
    len: *mut usize,
) -> ZeppelinStatus {
    run(|| unsafe {
        object::check_ptr(len)?;
        let n = with_preset!(preset, P => {
            wire::parms_id::<P>(self::level(level)).ok_or(ZeppelinStatus::Level)?;
            Ok(wire::full_len::<P>(self::level(level)))
        })?;
        object::put(len, n)
    })
}

/// Bytes of the seeded wire form at `level` into `*len`.
///
/// # Safety
/// `len` valid for a write.
#[no_mangle]
pub unsafe extern "C" fn zeppelin_wire_seeded_len(
    preset: u32,
    level: u32,
    len: *mut usize,
) -> ZeppelinStatus {
    run(|| unsafe {
        object::check_ptr(len)?;
        let n = with_preset!(preset, P => {
            wire::parms_id::<P>(self::level(level)).ok_or(ZeppelinStatus::Level)?;
            Ok(wire::seeded_len::<P>(self::level(level)))
        })?;
        object::put(len, n)
    })
}

/// Writes a full ciphertext in SEAL's `Ciphertext` layout (for Seal4096 byte for byte what
/// SEAL's `Ciphertext.save` writes, `compr_mode` none).
///
/// # Safety
/// As `zeppelin_secret_key_write`.
#[no_mangle]
pub unsafe extern "C" fn zeppelin_ciphertext_write_wire(
    ct: *const ZeppelinCiphertext,
    out: *mut u8,
    out_len: usize,
    written: *mut usize,
) -> ZeppelinStatus {
    run(|| unsafe {
        let p = preset_of(ct, Kind::Ciphertext)?;
        let out = object::output(out, out_len)?;
        let n = with_preset!(p, P => wire::write_full(get::<Ciphertext<P>, _>(ct), out).map_err(ZeppelinStatus::from))?;
        object::put(written, n)
    })
}

/// Parses a full wire form (or a SEAL ciphertext, `compr_mode` none, at a level of this
/// preset), checking every field and residue. On error the ciphertext is unchanged.
///
/// # Safety
/// As `zeppelin_secret_key_read`.
#[no_mangle]
pub unsafe extern "C" fn zeppelin_ciphertext_read_wire(
    ct: *mut ZeppelinCiphertext,
    bytes: *const u8,
    len: usize,
) -> ZeppelinStatus {
    run(|| unsafe {
        let p = preset_of(ct, Kind::Ciphertext)?;
        let bytes = object::input(bytes, len)?;
        with_preset!(p, P => wire::read_full(bytes, get_mut::<Ciphertext<P>, _>(ct)).map_err(Into::into))
    })
}

/// Writes a seeded ciphertext in the seeded wire form (SEAL layout with Zeppelin's
/// AES-CTR `prng_type`; `zeppelin adapt` expands it for SEAL).
///
/// # Safety
/// As `zeppelin_secret_key_write`.
#[no_mangle]
pub unsafe extern "C" fn zeppelin_seeded_ciphertext_write_wire(
    ct: *const ZeppelinSeededCiphertext,
    out: *mut u8,
    out_len: usize,
    written: *mut usize,
) -> ZeppelinStatus {
    run(|| unsafe {
        let p = preset_of(ct, Kind::SeededCiphertext)?;
        let out = object::output(out, out_len)?;
        let n = with_preset!(p, P => wire::write_seeded(get::<SeededCiphertext<P>, _>(ct), out).map_err(ZeppelinStatus::from))?;
        object::put(written, n)
    })
}

/// Parses the seeded wire form, checking every field and residue.
///
/// # Safety
/// As `zeppelin_secret_key_read`.
#[no_mangle]
pub unsafe extern "C" fn zeppelin_seeded_ciphertext_read_wire(
    ct: *mut ZeppelinSeededCiphertext,
    bytes: *const u8,
    len: usize,
) -> ZeppelinStatus {
    run(|| unsafe {
        let p = preset_of(ct, Kind::SeededCiphertext)?;
        let bytes = object::input(bytes, len)?;
        with_preset!(p, P => wire::read_seeded(bytes, get_mut::<SeededCiphertext<P>, _>(ct)).map_err(Into::into))
    })
}
