//! The bridge between the Zeppelin device client (`zeppelin`) and SEAL, typed by the device
//! preset.
//!
//! A [`DeviceContext<P>`] is SEAL's context for device preset `P` (derived from the preset by
//! [`EncryptionParameters::for_preset`], or loaded and checked against it). Every conversion
//! takes one, so a SEAL object can only be turned into device values of the preset it was
//! checked against, and the other way round:
//!
//! - [`to_seal`]: a device ciphertext as a SEAL `Ciphertext` (a four-prime ciphertext of the
//!   paper's preset is switched down to SEAL's first data level);
//! - [`from_seal`]: a SEAL `Ciphertext` as a device ciphertext, refusing, with
//!   [`SealError::DeviceMismatch`], a parms_id that is no level of the preset's data primes, a
//!   size other than 2, NTT form, or inconsistent metadata; every residue is checked below its
//!   prime;
//! - [`read_any`]: every accepted byte form — the device's seeded and full wire forms, SEAL's
//!   `Ciphertext` uncompressed, zlib or zstd, SEAL's own seeded forms — recognised by its
//!   header, as an [`AnyCiphertext`];
//! - [`secret_key`], [`secret_key_from_seal`], [`public_key_from_seal`] and
//!   [`seal_public_key`]: the keys, both ways where both ways exist (a device public key has no
//!   residues for SEAL's special prime, so SEAL's public key is generated from the secret).
//!
//! ```
//! use zeppelin::{Bfv, Ciphertext, Plaintext, Seal4096, SecretKey, SecretSeed, Workspace};
//! use zeppelin_seal::device::{self, DeviceContext};
//!
//! let ctx = DeviceContext::<Seal4096>::new()?;
//! let mut sk = Box::new(SecretKey::<Seal4096>::zeroed());
//! Bfv::<Seal4096>::generate_secret_key_with(&SecretSeed::from_bytes([1; 32]), &mut sk)?;
//! let (plain, mut ws) = (Box::new(Plaintext::zeroed()), Box::new(Workspace::new()));
//! let mut ct = Box::new(Ciphertext::<Seal4096>::zeroed());
//! Bfv::<Seal4096>::encrypt_symmetric(&sk, &plain, &mut rand_core::OsRng, &mut ct, &mut ws)?;
//!
//! let seal_ct = device::to_seal(&ctx, &ct)?; // a SEAL Ciphertext at SEAL's first level
//! let mut back = Box::new(Ciphertext::<Seal4096>::zeroed());
//! device::from_seal(&ctx, &seal_ct, &mut back)?;
//! assert_eq!(back.c0(), ct.c0());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::fmt;
use std::marker::PhantomData;

use rand_core::{CryptoRng, RngCore};
use subtle::ConstantTimeEq;
use zeppelin::wire::{self as device_wire};
use zeppelin::PublicGenerator;
use zeppelin::{
    Bfv, Ciphertext as DeviceCiphertext, NttRows, Params, Plaintext, PublicKey as DevicePublicKey,
    Seal4096, Seal8192, SecretKey as DeviceSecretKey, SeededCiphertext, Workspace, Zeppelin4096,
};
use zeroize::Zeroizing;

use crate::convert::drop_last_prime;
use crate::error::{LevelRule, Mismatch, Result, SealError};
use crate::keygen::KeyGenerator;
use crate::objects::{check_residues, Ciphertext, PublicKey, SecretKey};
use crate::params::{EncryptionParameters, SealContext, SCHEME_BFV};
use crate::parms_id::ParmsId;
use crate::poly::RnsNtt;
use crate::wire::{ComprMode, SealHeader, HEADER_SIZE};

/// A device preset and the SEAL parameters its ciphertexts travel under.
pub trait SealPreset: Params {
    /// The SEAL-compatible preset whose data primes, followed by its special prime, are SEAL's
    /// coefficient modulus: `Self` for a preset with a special prime. A preset with more data
    /// primes than SEAL's first level (the paper's four-prime preset) names the SEAL-compatible
    /// preset its data primes begin with; [`to_seal`] switches its full-level ciphertexts down
    /// to SEAL's first data level.
    type Seal: Params;
}

impl SealPreset for Seal4096 {
    type Seal = Seal4096;
}

impl SealPreset for Zeppelin4096 {
    type Seal = Seal4096;
}

impl SealPreset for Seal8192 {
    type Seal = Seal8192;
}

impl EncryptionParameters {
    /// SEAL's BFV parameters for device preset `P`: its ring degree and plaintext modulus, and
    /// the data primes of `P::Seal` followed by its special prime.
    ///
    /// ```
    /// use zeppelin::{Params, Seal4096};
    /// use zeppelin_seal::EncryptionParameters;
    /// let parms = EncryptionParameters::for_preset::<Seal4096>();
    /// assert_eq!(parms.coeff_modulus.len(), Seal4096::K + 1);
    /// ```
    pub fn for_preset<P: SealPreset>() -> Self {
        let mut primes: Vec<u64> = <P::Seal as Params>::DATA_PRIMES
            .iter()
            .map(|&q| u64::from(q))
            .collect();
        primes.extend(<P::Seal as Params>::SPECIAL_PRIME.map(u64::from));
        EncryptionParameters::bfv(P::N as u64, primes, u64::from(P::T))
    }
}

/// SEAL's context for device preset `P`, checked against the preset: the only way into the
/// conversions of this module.
pub struct DeviceContext<P: Params> {
    seal: SealContext,
    /// The parms_id of device level `L` (the first `L` data primes) at index `L - 1`.
    device_levels: Vec<ParmsId>,
    preset: PhantomData<fn() -> P>,
}

impl<P: Params> Clone for DeviceContext<P> {
    fn clone(&self) -> Self {
        Self {
            seal: self.seal.clone(),
            device_levels: self.device_levels.clone(),
            preset: PhantomData,
        }
    }
}

impl<P: Params> fmt::Debug for DeviceContext<P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DeviceContext")
            .field("preset", &P::NAME)
            .field("seal", &self.seal)
            .finish_non_exhaustive()
    }
}

fn mismatch<P: Params>(what: &'static str, mismatch: Mismatch) -> SealError {
    SealError::DeviceMismatch {
        what,
        preset: P::NAME,
        mismatch,
    }
}

fn device_err(operation: &'static str) -> impl FnOnce(zeppelin::Error) -> SealError {
    move |source| SealError::Device { operation, source }
}

fn widen(rows: &[u32]) -> impl Iterator<Item = u64> + '_ {
    rows.iter().map(|&q| u64::from(q))
}

impl<P: SealPreset> DeviceContext<P> {
    /// The context of the preset's own SEAL parameters ([`EncryptionParameters::for_preset`]).
    ///
    /// ```
    /// use zeppelin::Zeppelin4096;
    /// use zeppelin_seal::device::DeviceContext;
    /// let ctx = DeviceContext::<Zeppelin4096>::new()?;
    /// // SEAL's first data level holds the first three of the preset's four data primes.
    /// assert_eq!(ctx.seal().first_level().coeff_modulus.len(), 3);
    /// assert!(!ctx.seal_keys_cover_device());
    /// # Ok::<(), zeppelin_seal::SealError>(())
    /// ```
    pub fn new() -> Result<Self> {
        Self::from_parameters(EncryptionParameters::for_preset::<P>())
    }

    /// The context of `parms` (for example loaded from a key directory), which must be the
    /// preset's SEAL parameters exactly; anything else is refused with
    /// [`SealError::DeviceMismatch`] naming the first difference.
    ///
    /// ```
    /// use zeppelin::Seal4096;
    /// use zeppelin_seal::device::DeviceContext;
    /// use zeppelin_seal::{EncryptionParameters, Mismatch, SealError};
    /// let mut parms = EncryptionParameters::for_preset::<Seal4096>();
    /// parms.plain_modulus = 786_433;
    /// assert!(matches!(
    ///     DeviceContext::<Seal4096>::from_parameters(parms),
    ///     Err(SealError::DeviceMismatch { mismatch: Mismatch::PlainModulus { .. }, .. })
    /// ));
    /// ```
    pub fn from_parameters(parms: EncryptionParameters) -> Result<Self> {
        const WHAT: &str = "EncryptionParameters";
        let want = EncryptionParameters::for_preset::<P>();
        if parms.scheme != SCHEME_BFV {
            return Err(mismatch::<P>(
                WHAT,
                Mismatch::Scheme {
                    found: parms.scheme,
                },
            ));
        }
        if parms.poly_modulus_degree != want.poly_modulus_degree || P::N != <P::Seal as Params>::N {
            return Err(mismatch::<P>(
                WHAT,
                Mismatch::Degree {
                    expected: want.poly_modulus_degree,
                    found: parms.poly_modulus_degree,
                },
            ));
        }
        if parms.plain_modulus != want.plain_modulus {
            return Err(mismatch::<P>(
                WHAT,
                Mismatch::PlainModulus {
                    expected: want.plain_modulus,
                    found: parms.plain_modulus,
                },
            ));
        }
        if parms.coeff_modulus.len() != want.coeff_modulus.len() {
            return Err(mismatch::<P>(
                WHAT,
                Mismatch::PrimeCount {
                    expected: want.coeff_modulus.len(),
                    found: parms.coeff_modulus.len(),
                },
            ));
        }
        let differs = want
            .coeff_modulus
            .iter()
            .zip(&parms.coeff_modulus)
            .position(|(a, b)| a != b);
        if let Some(index) = differs {
            return Err(mismatch::<P>(
                WHAT,
                Mismatch::Prime {
                    index,
                    expected: want.coeff_modulus.get(index).copied().unwrap_or(0),
                    found: parms.coeff_modulus.get(index).copied().unwrap_or(0),
                },
            ));
        }
        let seal = SealContext::new(parms)?;
        let n = P::N as u64;
        let t = u64::from(P::T);
        let primes: Vec<u64> = widen(P::DATA_PRIMES).collect();
        let device_levels = (1..=primes.len())
            .map(|l| ParmsId::compute(SCHEME_BFV, n, primes.get(..l).unwrap_or_default(), t))
            .collect();
        let ctx = Self {
            seal,
            device_levels,
            preset: PhantomData,
        };
        // Every device level must have a SEAL level to go to.
        for level in 1..=P::K {
            ctx.seal_level_for(level)?;
        }
        Ok(ctx)
    }

    /// SEAL's context (levels, parms_ids), for loading and saving SEAL objects.
    pub fn seal(&self) -> &SealContext {
        &self.seal
    }

    /// The device level (number of data primes) whose parms_id is `id`, if any.
    pub fn device_level(&self, id: &ParmsId) -> Option<usize> {
        self.device_levels
            .iter()
            .position(|known| known == id)
            .map(|i| i + 1)
    }

    /// The parms_id of device level `level` (the first `level` data primes), if it exists.
    pub fn device_parms_id(&self, level: usize) -> Option<&ParmsId> {
        self.device_levels.get(level.checked_sub(1)?)
    }

    /// Whether SEAL's key level holds every device data prime, so that a SEAL `PublicKey`
    /// converts into a device public key ([`public_key_from_seal`]).
    pub fn seal_keys_cover_device(&self) -> bool {
        let key = &self.seal.key_level().coeff_modulus;
        widen(P::DATA_PRIMES).all(|q| key.contains(&q))
    }

    /// The SEAL level a device ciphertext at `level` goes to: the SEAL data level with exactly
    /// its primes, else SEAL's first data level when the device primes start with it.
    fn seal_level_for(&self, level: usize) -> Result<&crate::params::Level> {
        let primes = P::DATA_PRIMES.get(..level).unwrap_or_default();
        if let Some(l) = self.seal.data_level_with(level) {
            if l.coeff_modulus.iter().copied().eq(widen(primes)) {
                return Ok(l);
            }
        }
        let first = self.seal.first_level();
        let k = first.coeff_modulus.len();
        if primes.len() >= k
            && widen(primes.get(..k).unwrap_or_default()).eq(first.coeff_modulus.iter().copied())
        {
            return Ok(first);
        }
        Err(mismatch::<P>(
            "device ciphertext",
            Mismatch::NoSealLevel { level },
        ))
    }
}

/// A device ciphertext as a SEAL `Ciphertext`: at the SEAL level with exactly its primes
/// when there is one, else at SEAL's first data level, reached by BFV modulus switching (the
/// device's extra primes dropped one at a time from the last, with rounding, as SEAL's
/// `mod_switch_to_next`). Every residue is checked below its prime first.
///
/// ```
/// use zeppelin::{Bfv, Ciphertext, Plaintext, SecretKey, SecretSeed, Workspace, Zeppelin4096};
/// use zeppelin_seal::device::{self, DeviceContext};
/// let ctx = DeviceContext::<Zeppelin4096>::new()?;
/// let mut sk = Box::new(SecretKey::<Zeppelin4096>::zeroed());
/// Bfv::<Zeppelin4096>::generate_secret_key_with(&SecretSeed::from_bytes([1; 32]), &mut sk)?;
/// let (plain, mut ws) = (Box::new(Plaintext::zeroed()), Box::new(Workspace::new()));
/// let mut ct = Box::new(Ciphertext::<Zeppelin4096>::zeroed());
/// Bfv::<Zeppelin4096>::encrypt_symmetric(&sk, &plain, &mut rand_core::OsRng, &mut ct, &mut ws)?;
/// assert_eq!(ct.level(), 4);
/// let seal_ct = device::to_seal(&ctx, &ct)?;
/// assert_eq!(seal_ct.coeff_modulus_size, 3); // switched down to SEAL's first data level
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn to_seal<P: SealPreset>(
    ctx: &DeviceContext<P>,
    ct: &DeviceCiphertext<P>,
) -> Result<Ciphertext> {
    let level = ct.level();
    if level == 0 || level > P::K {
        return Err(mismatch::<P>(
            "device ciphertext",
            Mismatch::Level {
                found: level,
                max: P::K,
            },
        ));
    }
    let n = P::N;
    let target = ctx.seal_level_for(level)?;
    let mut primes: Vec<u64> = widen(P::DATA_PRIMES.get(..level).unwrap_or_default()).collect();
    let mut data: Vec<u64> = widen(&ct.c0()).chain(widen(&ct.c1())).collect();
    // Rows filled in place (`rows_mut`) are unchecked: check before any arithmetic.
    check_residues(&data, &primes, n, "device ciphertext")?;
    while primes.len() > target.coeff_modulus.len() {
        data = drop_last_prime(&primes, n, 2, &data)?;
        primes.pop();
    }
    Ciphertext::new(target, n, 2, false, data)
}

/// A SEAL `Ciphertext` as a device ciphertext in `out`, at the device level of its parms_id.
///
/// Refused with [`SealError::DeviceMismatch`]: a parms_id that is no level of the preset's
/// data primes (other primes, degree or plain modulus, or SEAL's key level), a degree or
/// `coeff_modulus_size` that disagrees with it, a size other than 2 (relinearize first), NTT
/// form, or a residue array of the wrong length; a residue not below its prime is
/// [`SealError::CoefficientOutOfRange`]. On error `out` is unchanged.
///
/// ```
/// use zeppelin::{Ciphertext, Seal4096};
/// use zeppelin_seal::device::{self, DeviceContext};
/// use zeppelin_seal::{Ciphertext as SealCiphertext, EncryptionParameters, Mismatch};
/// use zeppelin_seal::{SealContext, SealError};
/// // A SEAL ciphertext under other primes (same degree, same level) is no Seal4096 ciphertext.
/// let mut parms = EncryptionParameters::for_preset::<Seal4096>();
/// parms.coeff_modulus[2] = 133_963_777;
/// let other = SealContext::new(parms)?;
/// let ct = SealCiphertext::new(other.first_level(), 4096, 2, false, vec![0; 2 * 3 * 4096])?;
///
/// let ctx = DeviceContext::<Seal4096>::new()?;
/// let mut out = Box::new(Ciphertext::<Seal4096>::zeroed());
/// assert!(matches!(
///     device::from_seal(&ctx, &ct, &mut out),
///     Err(SealError::DeviceMismatch { mismatch: Mismatch::ParmsId { .. }, .. })
/// ));
/// # Ok::<(), SealError>(())
/// ```
pub fn from_seal<P: SealPreset>(
    ctx: &DeviceContext<P>,
    ct: &Ciphertext,
    out: &mut DeviceCiphertext<P>,
) -> Result<()> {
    const WHAT: &str = "Ciphertext";
    let level = ctx.device_level(&ct.parms_id).ok_or(mismatch::<P>(
        WHAT,
        Mismatch::ParmsId { found: ct.parms_id },
    ))?;
    let n = P::N;
    if ct.poly_modulus_degree != n {
        return Err(mismatch::<P>(
            WHAT,
            Mismatch::Degree {
                expected: n as u64,
                found: ct.poly_modulus_degree as u64,
            },
        ));
    }
    if ct.coeff_modulus_size != level {
        return Err(mismatch::<P>(
            WHAT,
            Mismatch::CoeffModulusSize {
                expected: level,
                found: ct.coeff_modulus_size,
            },
        ));
    }
    if ct.size != 2 {
        return Err(mismatch::<P>(WHAT, Mismatch::Size { found: ct.size }));
    }
    if ct.is_ntt_form {
        return Err(mismatch::<P>(WHAT, Mismatch::NttForm));
    }
    if ct.data.len() != 2 * level * n {
        return Err(mismatch::<P>(
            WHAT,
            Mismatch::DataLength {
                expected: 2 * level * n,
                found: ct.data.len(),
            },
        ));
    }
    let primes: Vec<u64> = widen(P::DATA_PRIMES.get(..level).unwrap_or_default()).collect();
    check_residues(&ct.data, &primes, n, WHAT)?;
    let (c0, c1) = out
        .rows_mut(level)
        .map_err(device_err("device ciphertext"))?;
    for (d, &v) in c0.iter_mut().chain(c1.iter_mut()).zip(&ct.data) {
        // Checked above: below a 32-bit prime.
        *d = v as u32;
    }
    Ok(())
}

/// A ciphertext in any of the byte forms [`read_any`] accepts.
pub enum AnyCiphertext<P: Params> {
    /// The device's seeded wire form: `c0` and the AES-CTR seed of `c1`.
    DeviceSeeded(Box<SeededCiphertext<P>>),
    /// The device's full wire form (for a SEAL-compatible preset, byte for byte an
    /// uncompressed SEAL ciphertext at a level of the device's primes).
    DeviceFull(Box<DeviceCiphertext<P>>),
    /// Any other SEAL `Ciphertext` under the preset's SEAL parameters (compressed, at a level
    /// the device does not share, SEAL's own seeded forms, or of a size other than 2).
    Seal(Ciphertext),
}

impl<P: Params> fmt::Debug for AnyCiphertext<P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::DeviceSeeded(ct) => write!(f, "DeviceSeeded(level {})", ct.level()),
            Self::DeviceFull(ct) => write!(f, "DeviceFull(level {})", ct.level()),
            Self::Seal(ct) => f.debug_tuple("Seal").field(ct).finish(),
        }
    }
}

impl<P: SealPreset> AnyCiphertext<P> {
    /// The ciphertext's level (number of primes).
    pub fn level(&self) -> usize {
        match self {
            Self::DeviceSeeded(ct) => ct.level(),
            Self::DeviceFull(ct) => ct.level(),
            Self::Seal(ct) => ct.coeff_modulus_size,
        }
    }

    /// Whether this is one of the device's wire forms.
    pub fn is_device_form(&self) -> bool {
        !matches!(self, Self::Seal(_))
    }

    /// The device ciphertext `(c0, c1)` in `out`: the seed expanded (`expand_ct1`, bit-exact
    /// with the device), or the SEAL ciphertext converted by [`from_seal`].
    pub fn to_device(&self, ctx: &DeviceContext<P>, out: &mut DeviceCiphertext<P>) -> Result<()> {
        match self {
            Self::DeviceSeeded(ct) => {
                zeppelin::expand_seeded(ct, out).map_err(device_err("expanding the seed"))
            }
            Self::DeviceFull(ct) => {
                let (c0, c1) = out
                    .rows_mut(ct.level())
                    .map_err(device_err("device ciphertext"))?;
                c0.copy_from_slice(&ct.c0());
                c1.copy_from_slice(&ct.c1());
                Ok(())
            }
            Self::Seal(ct) => from_seal(ctx, ct, out),
        }
    }

    /// The ciphertext as a SEAL `Ciphertext` ([`to_seal`] for the device forms).
    pub fn to_seal(&self, ctx: &DeviceContext<P>) -> Result<Ciphertext> {
        match self {
            Self::Seal(ct) => Ok(ct.clone()),
            Self::DeviceFull(ct) => to_seal(ctx, ct),
            Self::DeviceSeeded(_) => {
                let mut full = Box::new(DeviceCiphertext::<P>::zeroed());
                self.to_device(ctx, &mut full)?;
                to_seal(ctx, &full)
            }
        }
    }

    /// Decrypts with the device's BEHZ decryption into the plaintext polynomial `plain`
    /// (a seeded ciphertext without expanding its seed; a SEAL ciphertext through
    /// [`from_seal`], so one under other primes is refused, not decrypted to garbage).
    pub fn decrypt(
        &self,
        ctx: &DeviceContext<P>,
        sk: &DeviceSecretKey<P>,
        plain: &mut Plaintext<P>,
        ws: &mut Workspace<P>,
    ) -> Result<()> {
        let decrypted = match self {
            Self::DeviceSeeded(ct) => zeppelin::decrypt_seeded(sk, ct, plain, ws),
            Self::DeviceFull(ct) => Bfv::<P>::decrypt(sk, ct, plain, ws),
            Self::Seal(ct) => {
                let mut full = Box::new(DeviceCiphertext::<P>::zeroed());
                from_seal(ctx, ct, &mut full)?;
                Bfv::<P>::decrypt(sk, &full, plain, ws)
            }
        };
        decrypted.map_err(device_err("decryption"))
    }
}

/// Where [`read_any`] sends the bytes.
enum Form {
    DeviceSeeded,
    DeviceFull,
    Seal,
}

/// Offsets of an uncompressed SEAL `Ciphertext` (the fields are fixed-size): parms_id, size,
/// the DynArray's element count and its first element.
const PARMS_ID_AT: usize = HEADER_SIZE;
const SIZE_AT: usize = 49;
const COUNT_AT: usize = 105;
const DATA_AT: usize = 113;

fn u64_at(bytes: &[u8], at: usize) -> Option<u64> {
    let w: [u8; 8] = bytes.get(at..at + 8)?.try_into().ok()?;
    Some(u64::from_le_bytes(w))
}

/// Recognises the form by its header: compressed objects are SEAL's; uncompressed ones are
/// the device's when their parms_id is a device level, their size 2 and, for the seeded
/// layout (`c0` only), their generator one of Zeppelin's `prng_type`s (AES-128-CTR, ChaCha20).
fn recognise<P: SealPreset>(ctx: &DeviceContext<P>, bytes: &[u8]) -> Result<Form> {
    let raw: &[u8; HEADER_SIZE] = bytes
        .get(..HEADER_SIZE)
        .and_then(|h| h.try_into().ok())
        .ok_or(SealError::Truncated {
            what: "SEALHeader",
            offset: 0,
            needed: HEADER_SIZE as u64,
            available: bytes.len() as u64,
        })?;
    let header = SealHeader::parse(raw, "Ciphertext")?;
    if header.compr_mode != ComprMode::None {
        return Ok(Form::Seal);
    }
    let id = bytes
        .get(PARMS_ID_AT..PARMS_ID_AT + 32)
        .and_then(|b| <[u8; 32]>::try_from(b).ok());
    let (Some(id), Some(size), Some(count)) = (id, u64_at(bytes, SIZE_AT), u64_at(bytes, COUNT_AT))
    else {
        // Too short for the metadata: SEAL's reader names the truncation.
        return Ok(Form::Seal);
    };
    let Some(level) = ctx.device_level(&ParmsId(id)) else {
        return Ok(Form::Seal);
    };
    if size != 2 {
        return Ok(Form::Seal);
    }
    let residues = (level * P::N) as u64;
    if count != residues {
        // The full layout; the device reader names a wrong count.
        return Ok(Form::DeviceFull);
    }
    // The seeded layout: c0, then a UniformRandomGeneratorInfo (header, prng_type, seed).
    let prng_type_at = usize::try_from(residues)
        .ok()
        .and_then(|r| r.checked_mul(8))
        .and_then(|b| b.checked_add(DATA_AT + HEADER_SIZE));
    match prng_type_at.and_then(|at| bytes.get(at)) {
        Some(&t) if PublicGenerator::from_prng_type(t).is_none() => Ok(Form::Seal),
        _ => Ok(Form::DeviceSeeded),
    }
}

/// Reads a ciphertext in any accepted form, recognised by its header (see [`AnyCiphertext`]):
/// the device's seeded and full wire forms (parsed without SEAL's allocation path), SEAL's
/// `Ciphertext` with compression none, zlib or zstd, and SEAL's own seeded forms (Blake2xb,
/// SHAKE256), expanded as SEAL does.
///
/// ```
/// use zeppelin::{Bfv, Plaintext, SecretKey, SecretSeed, SeededCiphertext, Seal4096, Workspace};
/// use zeppelin_seal::device::{self, AnyCiphertext, DeviceContext};
/// use zeppelin_seal::ComprMode;
/// let ctx = DeviceContext::<Seal4096>::new()?;
/// let mut sk = Box::new(SecretKey::<Seal4096>::zeroed());
/// Bfv::<Seal4096>::generate_secret_key_with(&SecretSeed::from_bytes([1; 32]), &mut sk)?;
/// let (mut plain, mut ws) = (Box::new(Plaintext::zeroed()), Box::new(Workspace::new()));
/// let mut ct = Box::new(SeededCiphertext::<Seal4096>::zeroed());
/// Bfv::<Seal4096>::encrypt_seeded(&sk, &plain, &mut rand_core::OsRng, &mut ct, &mut ws)?;
///
/// let wire = device::to_wire_seeded(&ct)?;
/// let any = device::read_any(&ctx, &wire)?;
/// assert!(matches!(any, AnyCiphertext::DeviceSeeded(_)));
/// let zstd = any.to_seal(&ctx)?.save(ComprMode::Zstd)?;
/// let any = device::read_any(&ctx, &zstd)?;
/// assert!(matches!(any, AnyCiphertext::Seal(_)));
/// any.decrypt(&ctx, &sk, &mut plain, &mut ws)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn read_any<P: SealPreset>(ctx: &DeviceContext<P>, bytes: &[u8]) -> Result<AnyCiphertext<P>> {
    match recognise(ctx, bytes)? {
        Form::DeviceSeeded => {
            let mut ct = Box::new(SeededCiphertext::<P>::zeroed());
            device_wire::read_seeded(bytes, &mut ct)?;
            Ok(AnyCiphertext::DeviceSeeded(ct))
        }
        Form::DeviceFull => {
            let mut ct = Box::new(DeviceCiphertext::<P>::zeroed());
            device_wire::read_full(bytes, &mut ct)?;
            Ok(AnyCiphertext::DeviceFull(ct))
        }
        Form::Seal => Ok(AnyCiphertext::Seal(Ciphertext::load(&ctx.seal, bytes)?)),
    }
}

/// The device's full wire form of `ct` (`zeppelin::wire::write_full`, into a new vector).
pub fn to_wire_full<P: Params>(ct: &DeviceCiphertext<P>) -> Result<Vec<u8>> {
    let mut out = vec![0u8; device_wire::full_len::<P>(ct.level())];
    let len = device_wire::write_full(ct, &mut out)?;
    out.truncate(len);
    Ok(out)
}

/// The device's seeded wire form of `ct` (`zeppelin::wire::write_seeded`, into a new vector).
pub fn to_wire_seeded<P: Params>(ct: &SeededCiphertext<P>) -> Result<Vec<u8>> {
    let mut out = vec![0u8; device_wire::seeded_len::<P>(ct.level())];
    let len = device_wire::write_seeded(ct, &mut out)?;
    out.truncate(len);
    Ok(out)
}

/// The device's secret key as a SEAL `SecretKey`: its ternary secret in NTT form over every
/// prime of SEAL's key level (SEAL's NTT), for the trusted side.
///
/// ```
/// use zeppelin::{Bfv, SecretKey, SecretSeed, Seal4096};
/// use zeppelin_seal::device::{self, DeviceContext};
/// let ctx = DeviceContext::<Seal4096>::new()?;
/// let mut sk = Box::new(SecretKey::<Seal4096>::zeroed());
/// Bfv::<Seal4096>::generate_secret_key_with(&SecretSeed::from_bytes([1; 32]), &mut sk)?;
/// let seal_sk = device::secret_key(&ctx, &sk)?;
/// // The data-prime rows are the device's own NTT rows.
/// assert_eq!(seal_sk.data[7], u64::from(sk.ntt_residues()[7]));
///
/// let mut back = Box::new(SecretKey::<Seal4096>::zeroed());
/// device::secret_key_from_seal(&ctx, &seal_sk, &mut back)?;
/// assert_eq!(back.ternary(), sk.ternary());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn secret_key<P: SealPreset>(
    ctx: &DeviceContext<P>,
    sk: &DeviceSecretKey<P>,
) -> Result<SecretKey> {
    seal_secret(ctx, sk.ternary())
}

/// SEAL's secret key for ternary coefficients.
fn seal_secret<P: SealPreset>(ctx: &DeviceContext<P>, ternary: &[i8]) -> Result<SecretKey> {
    let key_level = ctx.seal.key_level();
    let ntt = ctx.seal.level_ntt(key_level)?;
    let mut wide = Zeroizing::new(Vec::with_capacity(ternary.len()));
    wide.extend(ternary.iter().map(|&v| i64::from(v)));
    let data = ntt.from_signed(&wide);
    // Zeroized on drop from here on.
    let mut sk = SecretKey {
        parms_id: key_level.parms_id,
        data: data?,
    };
    ntt.forward(&mut sk.data)?;
    Ok(sk)
}

/// A SEAL `SecretKey` (at SEAL's key level) as the device's secret key in `out`: the ternary
/// coefficients are recovered from the first prime, and the residues modulo every prime must
/// be those of that ternary secret. Trusted side only (the checks are not constant time). On
/// error `out` is unchanged.
pub fn secret_key_from_seal<P: SealPreset>(
    ctx: &DeviceContext<P>,
    sk: &SecretKey,
    out: &mut DeviceSecretKey<P>,
) -> Result<()> {
    let key_level = ctx.seal.key_level();
    if sk.parms_id != key_level.parms_id {
        return Err(SealError::WrongLevel {
            what: "SecretKey",
            rule: LevelRule::KeyLevel,
        });
    }
    let n = P::N;
    let k = key_level.coeff_modulus.len();
    if sk.data.len() != k * n {
        return Err(mismatch::<P>(
            "SecretKey",
            Mismatch::DataLength {
                expected: k * n,
                found: sk.data.len(),
            },
        ));
    }
    check_residues(&sk.data, &key_level.coeff_modulus, n, "SecretKey")?;
    let q0 = key_level.coeff_modulus.first().copied().unwrap_or(0);
    let mut row = Zeroizing::new(sk.data.get(..n).unwrap_or_default().to_vec());
    let ternary = recover_ternary(&RnsNtt::new(&[q0], n)?, q0, &mut row)?;
    let again = seal_secret(ctx, &ternary)?;
    let disagree = again
        .data
        .chunks_exact(n)
        .zip(sk.data.chunks_exact(n))
        .position(|(a, b)| !bool::from(a.ct_eq(b)));
    match disagree {
        Some(prime) => Err(SealError::SecretKeyInconsistent { prime }),
        // set_ternary checks the length (n) and the weight.
        None => out.set_ternary(&ternary).map_err(device_err("secret key")),
    }
}

/// The coefficients `{-1, 0, 1}` of an NTT-form residue row over `q`, in a buffer sized once
/// and wiped when it drops.
fn recover_ternary(ntt: &RnsNtt, q: u64, row: &mut [u64]) -> Result<Zeroizing<Vec<i8>>> {
    ntt.inverse(row)?;
    let mut out = Zeroizing::new(Vec::with_capacity(row.len()));
    for (index, &v) in row.iter().enumerate() {
        out.push(match v {
            0 => 0,
            1 => 1,
            v if v + 1 == q => -1,
            _ => return Err(SealError::SecretKeyNotTernary { index }),
        });
    }
    Ok(out)
}

/// Checks that the SEAL secret key `seal_sk` (for example `secret.seal`) is the device's
/// secret key `sk` (for example `device.sk`), in constant time up to the outcome:
/// [`SealError::SecretKeysDiffer`] otherwise.
pub fn check_secret_keys_agree<P: SealPreset>(
    ctx: &DeviceContext<P>,
    seal_sk: &SecretKey,
    sk: &DeviceSecretKey<P>,
) -> Result<()> {
    if !sk.is_set() {
        return Err(device_err("secret key")(zeppelin::Error::KeyNotSet {
            key: "secret",
        }));
    }
    let ours = secret_key(ctx, sk)?;
    if ours.ct_eq(seal_sk) {
        Ok(())
    } else {
        Err(SealError::SecretKeysDiffer)
    }
}

/// Checks that the device public key `pk` (for example `device.pk`, or one converted from
/// `public.seal`) belongs to the device secret key `sk`: `p0 + p1·s` over the data primes
/// must have every coefficient within [`validate::NOISE_BOUND`](crate::validate::NOISE_BOUND)
/// ([`SealError::KeyPairMismatch`] otherwise). Constant time up to the outcome.
///
/// ```
/// use rand_core::OsRng;
/// use zeppelin::{Bfv, PublicKey, SecretKey, SecretSeed, Seal4096};
/// use zeppelin_seal::device::{self, DeviceContext};
/// let ctx = DeviceContext::<Seal4096>::new()?;
/// let mut sk = Box::new(SecretKey::<Seal4096>::zeroed());
/// Bfv::<Seal4096>::generate_secret_key_with(&SecretSeed::from_bytes([1; 32]), &mut sk)?;
/// let mut pk = Box::new(PublicKey::<Seal4096>::zeroed());
/// device::public_key_from_seal(&ctx, &device::seal_public_key(&ctx, &sk, &mut OsRng)?, &mut pk)?;
/// device::check_key_pair(&pk, &sk)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn check_key_pair<P: Params>(pk: &DevicePublicKey<P>, sk: &DeviceSecretKey<P>) -> Result<()> {
    if !pk.is_set() {
        return Err(device_err("public key")(zeppelin::Error::KeyNotSet {
            key: "public",
        }));
    }
    if !sk.is_set() {
        return Err(device_err("secret key")(zeppelin::Error::KeyNotSet {
            key: "secret",
        }));
    }
    let primes: Vec<u64> = widen(P::DATA_PRIMES).collect();
    let ntt = RnsNtt::new(&primes, P::N)?;
    let p0: Vec<u64> = widen(&pk.p0()).collect();
    let p1: Vec<u64> = widen(&pk.p1()).collect();
    let s = Zeroizing::new(widen(&sk.ntt_residues()).collect::<Vec<u64>>());
    crate::validate::check_phase_small(&ntt, &primes, &p0, &p1, &s)
}

/// A SEAL `PublicKey` as the device's public key in `out`: the NTT-form rows of the
/// device's data primes, each of which must be a prime of SEAL's key level (so not for the
/// four-prime preset: see [`DeviceContext::seal_keys_cover_device`]). On error `out` is
/// unchanged.
///
/// ```
/// use rand_core::OsRng;
/// use zeppelin::{Bfv, PublicKey, SecretKey, SecretSeed, Seal4096};
/// use zeppelin_seal::device::{self, DeviceContext};
/// let ctx = DeviceContext::<Seal4096>::new()?;
/// let mut sk = Box::new(SecretKey::<Seal4096>::zeroed());
/// Bfv::<Seal4096>::generate_secret_key_with(&SecretSeed::from_bytes([1; 32]), &mut sk)?;
/// let seal_pk = device::seal_public_key(&ctx, &sk, &mut OsRng)?; // trusted side
/// let mut pk = Box::new(PublicKey::<Seal4096>::zeroed());
/// device::public_key_from_seal(&ctx, &seal_pk, &mut pk)?;
/// assert_eq!(u64::from(pk.p1()[5]), seal_pk.0.poly(1)[5]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn public_key_from_seal<P: SealPreset>(
    ctx: &DeviceContext<P>,
    pk: &PublicKey,
    out: &mut DevicePublicKey<P>,
) -> Result<()> {
    const WHAT: &str = "PublicKey";
    let key_level = ctx.seal.key_level();
    if pk.0.parms_id != key_level.parms_id {
        return Err(SealError::WrongLevel {
            what: WHAT,
            rule: LevelRule::KeyLevel,
        });
    }
    if !pk.0.is_ntt_form || pk.0.size != 2 {
        return Err(SealError::NotAKey {
            what: WHAT,
            size: pk.0.size,
            is_ntt_form: pk.0.is_ntt_form,
        });
    }
    let n = P::N;
    let key_primes = &key_level.coeff_modulus;
    let k = key_primes.len();
    if pk.0.data.len() != 2 * k * n {
        return Err(mismatch::<P>(
            WHAT,
            Mismatch::DataLength {
                expected: 2 * k * n,
                found: pk.0.data.len(),
            },
        ));
    }
    let mut rows = [Vec::with_capacity(P::K * n), Vec::with_capacity(P::K * n)];
    for &q in P::DATA_PRIMES {
        let j = key_primes
            .iter()
            .position(|&p| p == u64::from(q))
            .ok_or(mismatch::<P>(WHAT, Mismatch::MissingKeyPrime { prime: q }))?;
        for (poly, row) in rows.iter_mut().enumerate() {
            let start = (poly * k + j) * n;
            let residues = pk.0.data.get(start..start + n).unwrap_or_default();
            if let Some(index) = residues.iter().position(|&v| v >= u64::from(q)) {
                return Err(SealError::CoefficientOutOfRange {
                    what: WHAT,
                    index: start + index,
                    modulus: u64::from(q),
                });
            }
            // Checked: below a 32-bit prime.
            row.extend(residues.iter().map(|&v| v as u32));
        }
    }
    let [p0, p1] = rows;
    out.set_ntt_rows(NttRows::new(&p0), NttRows::new(&p1))
        .map_err(device_err("public key"))
}

/// A fresh SEAL `PublicKey` for the device's secret key (trusted side: SEAL's
/// `create_public_key`, an NTT-form encryption of zero at the key level).
pub fn seal_public_key<P: SealPreset, R: RngCore + CryptoRng>(
    ctx: &DeviceContext<P>,
    sk: &DeviceSecretKey<P>,
    rng: &mut R,
) -> Result<PublicKey> {
    let seal_sk = secret_key(ctx, sk)?;
    KeyGenerator::new(&ctx.seal, &seal_sk)?.public_key(rng)
}
