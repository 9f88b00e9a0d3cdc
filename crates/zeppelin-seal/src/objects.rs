//! SEAL's serialized objects: `Ciphertext` (full and seeded), `Plaintext`, `SecretKey`,
//! `PublicKey`, `RelinKeys` and `GaloisKeys`.
//!
//! Every loader validates against a [`SealContext`]: the parms_id must be a level of it, the
//! degree and prime count must match, every count is checked against the metadata before
//! anything is allocated, and every residue must be below its prime.

use subtle::ConstantTimeEq;
use zeroize::{Zeroize, Zeroizing};

use crate::error::{LevelRule, Result, SealError};
use crate::params::{Level, ParmsId, SealContext, CIPHERTEXT_SIZE_MAX};
use crate::prng::{sample_poly_uniform, PrngInfo, SealPrng, PRNG_INFO_BYTES};
use crate::validate;
use crate::wire::{self, ComprMode, Reader, WriteLe, HEADER_SIZE};

/// Member bytes of a ciphertext before its data: parms_id, is_ntt_form, size, degree, prime
/// count, scale, correction factor.
const CIPHERTEXT_METADATA: u64 = 32 + 1 + 5 * 8;
/// Member bytes of a plaintext before its data: parms_id, coeff_count, scale.
const PLAINTEXT_METADATA: u64 = 32 + 8 + 8;
/// A nested `DynArray<u64>`'s header and element count.
const DYNARRAY_OVERHEAD: u64 = HEADER_SIZE as u64 + 8;

/// The longest member stream of a ciphertext with up to `max_size` polynomials in `ctx` (at
/// the key level, the widest; SEAL's seeded generator counted as slack).
pub(crate) fn max_ciphertext_members(ctx: &SealContext, max_size: u64) -> u64 {
    let words = (ctx.n() as u64)
        .saturating_mul(ctx.key_level().coeff_modulus.len() as u64)
        .saturating_mul(max_size);
    (CIPHERTEXT_METADATA + DYNARRAY_OVERHEAD + PRNG_INFO_BYTES as u64)
        .saturating_add(words.saturating_mul(8))
}

/// The longest member stream of a plaintext (or secret key) in `ctx`.
pub(crate) fn max_plaintext_members(ctx: &SealContext) -> u64 {
    let words = (ctx.n() as u64).saturating_mul(ctx.key_level().coeff_modulus.len() as u64);
    (PLAINTEXT_METADATA + DYNARRAY_OVERHEAD).saturating_add(words.saturating_mul(8))
}

/// The longest member stream of key-switching keys with up to `max_slots` slots in `ctx`.
fn max_kswitch_members(ctx: &SealContext, max_slots: u64) -> u64 {
    let decomp = ctx.first_level().coeff_modulus.len() as u64;
    let key = HEADER_SIZE as u64 + max_ciphertext_members(ctx, 2);
    let slot = 8u64.saturating_add(decomp.saturating_mul(key));
    (32u64 + 8).saturating_add(max_slots.saturating_mul(slot))
}

/// A SEAL ciphertext: `size` polynomials, each `k` residue polynomials of `n` coefficients
/// (data order: polynomial, then prime, then coefficient).
#[derive(Clone, Debug, PartialEq)]
pub struct Ciphertext {
    /// The level.
    pub parms_id: ParmsId,
    /// Whether the polynomials are in NTT form (BFV ciphertexts are not; keys are).
    pub is_ntt_form: bool,
    /// Number of polynomials (2 for fresh ciphertexts).
    pub size: usize,
    /// Ring degree.
    pub poly_modulus_degree: usize,
    /// Number of primes at this level.
    pub coeff_modulus_size: usize,
    /// 1.0 for BFV.
    pub scale: f64,
    /// 1 for BFV.
    pub correction_factor: u64,
    /// The residues.
    pub data: Vec<u64>,
}

impl Ciphertext {
    /// A BFV ciphertext at `level` from its polynomials laid out as SEAL does.
    pub fn new(
        level: &Level,
        n: usize,
        size: usize,
        is_ntt_form: bool,
        data: Vec<u64>,
    ) -> Result<Self> {
        let k = level.coeff_modulus.len();
        if data.len() != size * k * n {
            return Err(SealError::CountMismatch {
                what: "ciphertext data",
                found: data.len() as u64,
                expected: (size * k * n) as u64,
            });
        }
        let ct = Self {
            parms_id: level.parms_id,
            is_ntt_form,
            size,
            poly_modulus_degree: n,
            coeff_modulus_size: k,
            scale: 1.0,
            correction_factor: 1,
            data,
        };
        check_residues(&ct.data, &level.coeff_modulus, n, "ciphertext")?;
        Ok(ct)
    }

    /// Polynomial `i` (all its residues).
    pub fn poly(&self, i: usize) -> &[u64] {
        let len = self.poly_modulus_degree * self.coeff_modulus_size;
        &self.data[i * len..(i + 1) * len]
    }

    fn put_metadata(&self, m: &mut Vec<u8>) {
        m.extend_from_slice(&self.parms_id.0);
        m.put_u8(u8::from(self.is_ntt_form));
        m.put_u64(self.size as u64);
        m.put_u64(self.poly_modulus_degree as u64);
        m.put_u64(self.coeff_modulus_size as u64);
        m.put_f64(self.scale);
        m.put_u64(self.correction_factor);
    }

    pub(crate) fn put_members(&self, m: &mut Vec<u8>) {
        self.put_metadata(m);
        wire::put_dynarray(m, &self.data);
    }

    /// SEAL's `Ciphertext::save`.
    pub fn save(&self, compr_mode: ComprMode) -> Result<Vec<u8>> {
        let mut m = Vec::with_capacity(100 + 8 * self.data.len());
        self.put_members(&mut m);
        wire::frame(&m, compr_mode)
    }

    /// SEAL's seeded form of a two-polynomial ciphertext: only `c0` is written, followed by
    /// the generator that reproduces `c1`. The caller must have built `c1` from `info`
    /// (see [`Ciphertext::expand_c1`]); SEAL would otherwise load a different ciphertext.
    pub fn save_seeded(&self, info: &PrngInfo, compr_mode: ComprMode) -> Result<Vec<u8>> {
        if self.size != 2 {
            return Err(SealError::NotSeedable { size: self.size });
        }
        let mut m = Vec::with_capacity(200 + 4 * self.data.len());
        self.put_seeded_members(info, &mut m);
        wire::frame(&m, compr_mode)
    }

    fn put_seeded_members(&self, info: &PrngInfo, m: &mut Vec<u8>) {
        self.put_metadata(m);
        wire::put_dynarray(m, self.poly(0));
        info.put(m);
    }

    /// `c1` as SEAL expands it from `info` at `level`.
    pub fn expand_c1(info: &PrngInfo, level: &Level, n: usize) -> Vec<u64> {
        sample_poly_uniform(&mut SealPrng::new(info), &level.coeff_modulus, n)
    }

    /// SEAL's `Ciphertext::load`: any data level, refusing the key level (when it differs
    /// from the first data level), full or seeded, any compression.
    pub fn load(ctx: &SealContext, bytes: &[u8]) -> Result<Self> {
        let max = max_ciphertext_members(ctx, CIPHERTEXT_SIZE_MAX);
        let ct = wire::unframe(bytes, "Ciphertext", max, |r| {
            read_ciphertext(ctx, r, "Ciphertext", CIPHERTEXT_SIZE_MAX)
        })?;
        if ctx.using_keyswitching() && ct.parms_id == ctx.key_level().parms_id {
            return Err(SealError::WrongLevel {
                what: "Ciphertext",
                rule: LevelRule::DataLevel,
            });
        }
        Ok(ct)
    }
}

/// Reads the members of a ciphertext (also the body of a `PublicKey`) at any level, with at
/// most `max_size` polynomials (2 for keys).
pub(crate) fn read_ciphertext(
    ctx: &SealContext,
    r: &mut Reader<'_>,
    what: &'static str,
    max_size: u64,
) -> Result<Ciphertext> {
    let parms_id = ParmsId(r.array::<32>("parms_id")?);
    let level = ctx.level_or_err(&parms_id, what)?;
    let is_ntt_form = r.u8("is_ntt_form")? != 0;
    let size = r.u64("ciphertext size")?;
    if size > max_size {
        return Err(SealError::OversizedCount {
            what: "ciphertext size",
            found: size,
            limit: max_size,
        });
    }
    if size == 1 {
        return Err(SealError::BadCiphertextSize { found: size });
    }
    let n = r.u64("poly_modulus_degree")?;
    if n != ctx.n() as u64 {
        return Err(SealError::WrongDegree {
            what,
            found: n,
            expected: ctx.n() as u64,
        });
    }
    let k = r.u64("coeff_modulus_size")?;
    if k != level.coeff_modulus.len() as u64 {
        return Err(SealError::CountMismatch {
            what: "coeff_modulus_size",
            found: k,
            expected: level.coeff_modulus.len() as u64,
        });
    }
    let scale = r.f64("scale")?;
    if scale != 1.0 {
        return Err(SealError::BadScale { what, found: scale });
    }
    let correction_factor = r.u64("correction_factor")?;
    if correction_factor != 1 {
        return Err(SealError::BadCorrectionFactor {
            found: correction_factor,
        });
    }
    // Bounded: size <= 16, n <= 2^17, k <= 256.
    let (size, n, k) = (size as usize, n as usize, k as usize);
    let full = (size * n * k) as u64;
    let seeded = (size == 2).then_some((n * k) as u64);
    let mut data = wire::read_dynarray(r, "ciphertext data", full, seeded)?;
    if seeded == Some(data.len() as u64) && full != data.len() as u64 {
        let info = PrngInfo::read(r)?;
        check_residues(&data, &level.coeff_modulus, n, what)?;
        data.extend(Ciphertext::expand_c1(&info, level, n));
    }
    check_residues(&data, &level.coeff_modulus, n, what)?;
    Ok(Ciphertext {
        parms_id,
        is_ntt_form,
        size,
        poly_modulus_degree: n,
        coeff_modulus_size: k,
        scale,
        correction_factor,
        data,
    })
}

/// Checks that every residue is below its prime (layout: polynomial, prime, coefficient;
/// `n` coefficients per prime): [`SealError::CoefficientOutOfRange`] names the first one that
/// is not. Each row is scanned without an early exit (so the scan vectorizes), the position
/// found only on failure.
pub fn check_residues(data: &[u64], primes: &[u64], n: usize, what: &'static str) -> Result<()> {
    let row_len = n.max(1);
    for (r, row) in data.chunks(row_len).enumerate() {
        let Some(&modulus) = primes.get(r % primes.len().max(1)) else {
            return Err(SealError::CountMismatch {
                what,
                found: data.len() as u64,
                expected: 0,
            });
        };
        // v < q (for q < 2^63) exactly when v − q borrows and v's top bit is clear: the top
        // bit of (v − q) & !v. Plain 64-bit subtractions and masks, which vectorize on
        // every x86-64 (unsigned 64-bit compares do not before SSE4.2).
        let all_below = row
            .iter()
            .fold(u64::MAX, |acc, &v| acc & (v.wrapping_sub(modulus) & !v));
        if modulus >> 63 != 0 || all_below >> 63 == 0 {
            let j = row.iter().position(|&v| v >= modulus).unwrap_or(0);
            return Err(SealError::CoefficientOutOfRange {
                what,
                index: r * row_len + j,
                modulus,
            });
        }
    }
    Ok(())
}

/// A SEAL plaintext: coefficients mod `t` (parms_id zero), or an NTT-form polynomial at a level.
#[derive(Clone, Debug, PartialEq)]
pub struct Plaintext {
    /// Zero for a coefficient-form BFV plaintext, else the level of an NTT-form one.
    pub parms_id: ParmsId,
    /// The coefficients.
    pub data: Vec<u64>,
    /// 1.0 for BFV.
    pub scale: f64,
}

impl Plaintext {
    /// A coefficient-form BFV plaintext.
    pub fn new(data: Vec<u64>) -> Self {
        Self {
            parms_id: ParmsId::ZERO,
            data,
            scale: 1.0,
        }
    }

    fn put_members(&self, m: &mut Vec<u8>) {
        m.extend_from_slice(&self.parms_id.0);
        m.put_u64(self.data.len() as u64);
        m.put_f64(self.scale);
        wire::put_dynarray(m, &self.data);
    }

    /// SEAL's `Plaintext::save`.
    pub fn save(&self, compr_mode: ComprMode) -> Result<Vec<u8>> {
        let mut m = Vec::new();
        self.put_members(&mut m);
        wire::frame(&m, compr_mode)
    }

    /// SEAL's `Plaintext::load`.
    pub fn load(ctx: &SealContext, bytes: &[u8]) -> Result<Self> {
        let max = max_plaintext_members(ctx);
        wire::unframe(bytes, "Plaintext", max, |r| {
            read_plaintext(ctx, r, "Plaintext")
        })
    }
}

fn read_plaintext(ctx: &SealContext, r: &mut Reader<'_>, what: &'static str) -> Result<Plaintext> {
    let parms_id = ParmsId(r.array::<32>("parms_id")?);
    let count = r.u64("coeff_count")?;
    let scale = r.f64("scale")?;
    if scale != 1.0 {
        return Err(SealError::BadScale { what, found: scale });
    }
    let n = ctx.n();
    if parms_id == ParmsId::ZERO {
        if count > n as u64 {
            return Err(SealError::OversizedCount {
                what: "plaintext coeff_count",
                found: count,
                limit: n as u64,
            });
        }
        let data = Zeroizing::new(wire::read_dynarray(r, "plaintext data", count, None)?);
        let t = ctx.plain_modulus();
        if let Some(index) = data.iter().position(|&v| v >= t) {
            return Err(SealError::CoefficientOutOfRange {
                what,
                index,
                modulus: t,
            });
        }
        let mut data = data;
        let data = std::mem::take(&mut *data);
        Ok(Plaintext {
            parms_id,
            data,
            scale,
        })
    } else {
        let level = ctx.level_or_err(&parms_id, what)?;
        let expected = (level.coeff_modulus.len() * n) as u64;
        if count != expected {
            return Err(SealError::CountMismatch {
                what: "plaintext coeff_count",
                found: count,
                expected,
            });
        }
        let mut data = Zeroizing::new(wire::read_dynarray(r, "plaintext data", expected, None)?);
        check_residues(&data, &level.coeff_modulus, n, what)?;
        let data = std::mem::take(&mut *data);
        Ok(Plaintext {
            parms_id,
            data,
            scale,
        })
    }
}

/// A SEAL secret key: the ternary secret in NTT form at the key level (all primes).
///
/// No `PartialEq` (an early-exit comparison of secrets): compare with [`SecretKey::ct_eq`].
#[derive(Clone)]
pub struct SecretKey {
    /// The key level.
    pub parms_id: ParmsId,
    /// `k·n` NTT-form residues, prime after prime.
    pub data: Vec<u64>,
}

impl std::fmt::Debug for SecretKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SecretKey")
            .field("parms_id", &self.parms_id)
            .finish_non_exhaustive()
    }
}

impl Drop for SecretKey {
    fn drop(&mut self) {
        self.data.zeroize();
    }
}

impl SecretKey {
    /// Member bytes of a key of `words` residues: a plaintext's metadata, then the DynArray.
    fn members_len(words: usize) -> usize {
        (PLAINTEXT_METADATA + DYNARRAY_OVERHEAD) as usize + 8 * words
    }

    /// SEAL's `SecretKey::save`, into a buffer wiped when it drops. The members are written
    /// into one buffer of their final size (no reallocation leaves a prefix of the key behind)
    /// that is wiped after framing.
    pub fn save(&self, compr_mode: ComprMode) -> Result<Zeroizing<Vec<u8>>> {
        let mut m = Zeroizing::new(Vec::with_capacity(Self::members_len(self.data.len())));
        // Same members as a plaintext, written without copying the secret.
        m.extend_from_slice(&self.parms_id.0);
        m.put_u64(self.data.len() as u64);
        m.put_f64(1.0);
        wire::put_dynarray(&mut m, &self.data);
        wire::frame_secret(&m, compr_mode)
    }

    /// SEAL's `SecretKey::load`: must be at the key level, and must be a ternary secret of
    /// plausible weight, the same modulo every prime ([`validate::check_secret_key`]).
    pub fn load(ctx: &SealContext, bytes: &[u8]) -> Result<Self> {
        let max = max_plaintext_members(ctx);
        let pt = wire::unframe(bytes, "SecretKey", max, |r| {
            read_plaintext(ctx, r, "SecretKey")
        })?;
        // Wiped when it drops from here on, on every path.
        let sk = SecretKey {
            parms_id: pt.parms_id,
            data: pt.data,
        };
        if sk.parms_id != ctx.key_level().parms_id {
            return Err(SealError::WrongLevel {
                what: "SecretKey",
                rule: LevelRule::KeyLevel,
            });
        }
        validate::check_secret_key(ctx, &sk.parms_id, &sk.data)?;
        Ok(sk)
    }

    /// Constant-time equality (same level and the same residues): the time depends only on
    /// the lengths.
    pub fn ct_eq(&self, other: &SecretKey) -> bool {
        if self.data.len() != other.data.len() {
            return false;
        }
        let same_level = self.parms_id.0.ct_eq(&other.parms_id.0);
        let same_data = self
            .data
            .iter()
            .zip(&other.data)
            .fold(subtle::Choice::from(1), |acc, (a, b)| acc & a.ct_eq(b));
        bool::from(same_level & same_data)
    }
}

/// A SEAL public key: a two-polynomial NTT-form ciphertext at the key level.
#[derive(Clone, Debug, PartialEq)]
pub struct PublicKey(pub Ciphertext);

impl PublicKey {
    /// SEAL's `PublicKey::save`.
    pub fn save(&self, compr_mode: ComprMode) -> Result<Vec<u8>> {
        self.0.save(compr_mode)
    }

    /// SEAL's `PublicKey::load`: a size-2 NTT-form ciphertext at the key level, every
    /// residue below its prime, and no degenerate row ([`validate::check_public_key`]: an
    /// all-zero body, or `c0 = -e` of a zero secret, is refused).
    pub fn load(ctx: &SealContext, bytes: &[u8]) -> Result<Self> {
        let max = max_ciphertext_members(ctx, 2);
        let ct = wire::unframe(bytes, "PublicKey", max, |r| {
            read_ciphertext(ctx, r, "PublicKey", 2)
        })?;
        check_key_ciphertext(ctx, &ct, "PublicKey")?;
        validate::check_public_key(ctx, &ct.data, "PublicKey")?;
        Ok(PublicKey(ct))
    }

    /// Checks that the SEAL public key `pk` belongs to the secret key `sk`: `c0 + c1·s` (the
    /// key's error, `-e`) must have every coefficient within [`validate::NOISE_BOUND`], modulo every prime
    /// of the key level ([`SealError::KeyPairMismatch`] otherwise). Constant time up to the
    /// outcome; needs primes below 2^30.
    ///
    /// ```
    /// use zeppelin_seal::keygen::KeyGenerator;
    /// use zeppelin_seal::{device, SealError};
    /// use zeppelin::{Bfv, SecretKey, SecretSeed, Seal4096};
    /// let ctx = device::DeviceContext::<Seal4096>::new()?;
    /// let mut sk = Box::new(SecretKey::<Seal4096>::zeroed());
    /// Bfv::<Seal4096>::generate_secret_key_with(&SecretSeed::from_bytes([1; 32]), &mut sk)?;
    /// let seal_sk = device::secret_key(&ctx, &sk)?;
    /// let pk = KeyGenerator::new(ctx.seal(), &seal_sk)?.public_key(&mut rand_core::OsRng)?;
    /// pk.check_key_pair(ctx.seal(), &seal_sk)?;
    ///
    /// let mut other = Box::new(SecretKey::<Seal4096>::zeroed());
    /// Bfv::<Seal4096>::generate_secret_key_with(&SecretSeed::from_bytes([2; 32]), &mut other)?;
    /// let other = device::secret_key(&ctx, &other)?;
    /// assert!(matches!(
    ///     pk.check_key_pair(ctx.seal(), &other),
    ///     Err(SealError::KeyPairMismatch { .. })
    /// ));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn check_key_pair(&self, ctx: &SealContext, sk: &SecretKey) -> Result<()> {
        let pk = self;
        let key_level = ctx.key_level();
        for (what, id) in [("PublicKey", &pk.0.parms_id), ("SecretKey", &sk.parms_id)] {
            if *id != key_level.parms_id {
                return Err(SealError::WrongLevel {
                    what,
                    rule: LevelRule::KeyLevel,
                });
            }
        }
        if pk.0.size != 2 || !pk.0.is_ntt_form {
            return Err(SealError::NotAKey {
                what: "PublicKey",
                size: pk.0.size,
                is_ntt_form: pk.0.is_ntt_form,
            });
        }
        let ntt = ctx.level_ntt(key_level)?;
        validate::check_phase_small(
            ntt,
            &key_level.coeff_modulus,
            pk.0.poly(0),
            pk.0.poly(1),
            &sk.data,
        )
    }
}

fn check_key_ciphertext(ctx: &SealContext, ct: &Ciphertext, what: &'static str) -> Result<()> {
    if ct.parms_id != ctx.key_level().parms_id {
        return Err(SealError::WrongLevel {
            what,
            rule: LevelRule::KeyLevel,
        });
    }
    if !ct.is_ntt_form || ct.size != 2 {
        return Err(SealError::NotAKey {
            what,
            size: ct.size,
            is_ntt_form: ct.is_ntt_form,
        });
    }
    Ok(())
}

/// SEAL's `KSwitchKeys`: for each slot, one key per decomposition prime (or none).
#[derive(Clone, Debug, PartialEq)]
pub struct KSwitchKeys {
    /// The key level.
    pub parms_id: ParmsId,
    /// `keys[slot][i]`: the key for decomposition prime `i`.
    pub keys: Vec<Vec<PublicKey>>,
    /// For keys generated here, `seeds[slot][i]` is the SEAL generator of that key's `c1`,
    /// which allows SEAL's seeded form (about half the size). Empty for loaded keys.
    pub seeds: Vec<Vec<PrngInfo>>,
}

impl KSwitchKeys {
    fn put_members(&self, m: &mut Vec<u8>, seeded: bool) -> Result<()> {
        if seeded
            && (self.seeds.len() != self.keys.len()
                || self
                    .seeds
                    .iter()
                    .zip(&self.keys)
                    .any(|(s, k)| s.len() != k.len()))
        {
            return Err(SealError::MissingSeeds);
        }
        m.extend_from_slice(&self.parms_id.0);
        m.put_u64(self.keys.len() as u64);
        for (index, slot) in self.keys.iter().enumerate() {
            m.put_u64(slot.len() as u64);
            for (j, key) in slot.iter().enumerate() {
                let mut inner = Vec::new();
                match self.seeds.get(index).and_then(|s| s.get(j)) {
                    Some(info) if seeded => key.0.put_seeded_members(info, &mut inner),
                    _ => key.0.put_members(&mut inner),
                }
                wire::put_nested(m, &inner);
            }
        }
        Ok(())
    }

    fn save(&self, compr_mode: ComprMode, seeded: bool) -> Result<Vec<u8>> {
        let mut m = Vec::new();
        self.put_members(&mut m, seeded)?;
        wire::frame(&m, compr_mode)
    }

    fn load(ctx: &SealContext, bytes: &[u8], what: &'static str, max_slots: u64) -> Result<Self> {
        let max = max_kswitch_members(ctx, max_slots);
        wire::unframe(bytes, what, max, |r| {
            let parms_id = ParmsId(r.array::<32>("parms_id")?);
            ctx.level_or_err(&parms_id, what)?;
            if parms_id != ctx.key_level().parms_id {
                return Err(SealError::WrongLevel {
                    what,
                    rule: LevelRule::KeyLevel,
                });
            }
            let slots = r.u64("key count")?;
            if slots > max_slots {
                return Err(SealError::OversizedCount {
                    what: "key count",
                    found: slots,
                    limit: max_slots,
                });
            }
            // Every slot takes at least its 8-byte count.
            r.ensure_available(slots.saturating_mul(8), "key count")?;
            let decomp = ctx.first_level().coeff_modulus.len() as u64;
            let mut keys = Vec::with_capacity(slots as usize);
            for _ in 0..slots {
                let parts = r.u64("decomposition count")?;
                if parts != 0 && parts != decomp {
                    return Err(SealError::CountMismatch {
                        what: "decomposition count",
                        found: parts,
                        expected: decomp,
                    });
                }
                let mut slot = Vec::new();
                for _ in 0..parts {
                    let start = r.offset();
                    let declared = r.nested_header("PublicKey")?;
                    let ct = read_ciphertext(ctx, r, "key-switching key", 2)?;
                    r.check_nested_end("PublicKey", start, declared)?;
                    check_key_ciphertext(ctx, &ct, "key-switching key")?;
                    slot.push(PublicKey(ct));
                }
                keys.push(slot);
            }
            Ok(KSwitchKeys {
                parms_id,
                keys,
                seeds: Vec::new(),
            })
        })
    }
}

/// SEAL's `RelinKeys`: slot `j` switches from `s^(j+2)`.
#[derive(Clone, Debug, PartialEq)]
pub struct RelinKeys(pub KSwitchKeys);

impl RelinKeys {
    /// SEAL's `RelinKeys::save`.
    pub fn save(&self, compr_mode: ComprMode) -> Result<Vec<u8>> {
        self.0.save(compr_mode, false)
    }

    /// SEAL's seeded form (what SEAL's `create_relin_keys()` returns as `Serializable`): every
    /// key's `c1` replaced by its generator. Only for keys generated here.
    pub fn save_seeded(&self, compr_mode: ComprMode) -> Result<Vec<u8>> {
        self.0.save(compr_mode, true)
    }

    /// SEAL's `RelinKeys::load`.
    pub fn load(ctx: &SealContext, bytes: &[u8]) -> Result<Self> {
        KSwitchKeys::load(ctx, bytes, "RelinKeys", CIPHERTEXT_SIZE_MAX - 2).map(RelinKeys)
    }
}

/// SEAL's `GaloisKeys`: slot `(g-1)/2` switches from `s(x^g)`.
#[derive(Clone, Debug, PartialEq)]
pub struct GaloisKeys(pub KSwitchKeys);

impl GaloisKeys {
    /// The slot SEAL uses for Galois element `g`.
    pub const fn index(galois_elt: u32) -> usize {
        ((galois_elt - 1) >> 1) as usize
    }

    /// The Galois elements that have keys.
    pub fn elements(&self) -> Vec<u32> {
        (0..self.0.keys.len())
            .filter(|&i| !self.0.keys[i].is_empty())
            .map(|i| (2 * i + 1) as u32)
            .collect()
    }

    /// SEAL's `GaloisKeys::save`.
    pub fn save(&self, compr_mode: ComprMode) -> Result<Vec<u8>> {
        self.0.save(compr_mode, false)
    }

    /// SEAL's seeded form, as for [`RelinKeys::save_seeded`].
    pub fn save_seeded(&self, compr_mode: ComprMode) -> Result<Vec<u8>> {
        self.0.save(compr_mode, true)
    }

    /// SEAL's `GaloisKeys::load`.
    pub fn load(ctx: &SealContext, bytes: &[u8]) -> Result<Self> {
        KSwitchKeys::load(ctx, bytes, "GaloisKeys", ctx.n() as u64).map(GaloisKeys)
    }
}
