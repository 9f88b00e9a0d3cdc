//! `EncryptionParameters`, `parms_id` and the modulus-switching chain SEAL derives from them.

use std::sync::OnceLock;

use crate::error::{ParameterError, Result, SealError};
pub use crate::parms_id::ParmsId;
use crate::poly::RnsNtt;
use crate::wire::{self, ComprMode, Reader, WriteLe};

/// SEAL's `scheme_type`. Only BFV is supported by the arithmetic in this crate.
pub const SCHEME_BFV: u8 = 1;

/// Largest ring degree SEAL accepts.
pub const POLY_MOD_DEGREE_MAX: u64 = 131_072;
/// Largest number of primes SEAL accepts in a coefficient modulus.
pub const COEFF_MOD_COUNT_MAX: u64 = 256;
/// Largest number of polynomials in a SEAL ciphertext.
pub const CIPHERTEXT_SIZE_MAX: u64 = 16;

/// BFV encryption parameters as SEAL serializes them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EncryptionParameters {
    /// Scheme byte (1 = BFV).
    pub scheme: u8,
    /// Ring degree `n`.
    pub poly_modulus_degree: u64,
    /// The primes of the key level, the special prime last.
    pub coeff_modulus: Vec<u64>,
    /// Plaintext modulus `t`.
    pub plain_modulus: u64,
}

impl EncryptionParameters {
    /// BFV parameters.
    pub fn bfv(poly_modulus_degree: u64, coeff_modulus: Vec<u64>, plain_modulus: u64) -> Self {
        Self {
            scheme: SCHEME_BFV,
            poly_modulus_degree,
            coeff_modulus,
            plain_modulus,
        }
    }

    /// The `parms_id` of the key level (all primes).
    pub fn parms_id(&self) -> ParmsId {
        ParmsId::compute(
            self.scheme,
            self.poly_modulus_degree,
            &self.coeff_modulus,
            self.plain_modulus,
        )
    }

    fn members(&self) -> Vec<u8> {
        let mut m = Vec::new();
        m.put_u8(self.scheme);
        m.put_u64(self.poly_modulus_degree);
        m.put_u64(self.coeff_modulus.len() as u64);
        for q in &self.coeff_modulus {
            put_modulus(&mut m, *q);
        }
        put_modulus(&mut m, self.plain_modulus);
        m
    }

    /// SEAL's `EncryptionParameters::save`.
    pub fn save(&self, compr_mode: ComprMode) -> Result<Vec<u8>> {
        wire::frame(&self.members(), compr_mode)
    }

    /// SEAL's `EncryptionParameters::load`: reads and checks the fields SEAL checks on load
    /// (scheme, degree and count bounds, modulus bit sizes). Whether the parameters form a
    /// usable context is checked by [`SealContext::new`].
    ///
    /// Bounded: the members of any loadable parameter set fit in about 6 KB, and the prime
    /// count is checked against the bytes left before anything is allocated for it.
    pub fn load(bytes: &[u8]) -> Result<Self> {
        // scheme, degree, count, then up to 256 primes and t, each a nested 8-byte modulus.
        let max = 1 + 8 + 8 + (COEFF_MOD_COUNT_MAX + 1) * MODULUS_BYTES;
        wire::unframe(bytes, "EncryptionParameters", max, |r| {
            let scheme = r.u8("scheme")?;
            if scheme > 3 {
                return Err(SealError::UnknownScheme { found: scheme });
            }
            let n = r.u64("poly_modulus_degree")?;
            if n > POLY_MOD_DEGREE_MAX {
                return Err(SealError::OversizedCount {
                    what: "poly_modulus_degree",
                    found: n,
                    limit: POLY_MOD_DEGREE_MAX,
                });
            }
            let k = r.u64("coeff_modulus_size")?;
            if k > COEFF_MOD_COUNT_MAX {
                return Err(SealError::OversizedCount {
                    what: "coeff_modulus_size",
                    found: k,
                    limit: COEFF_MOD_COUNT_MAX,
                });
            }
            r.ensure_available((k + 1) * MODULUS_BYTES, "coeff_modulus")?;
            let mut coeff_modulus = Vec::with_capacity(k as usize);
            for _ in 0..k {
                coeff_modulus.push(read_modulus(r, "coeff_modulus")?);
            }
            let plain_modulus = read_modulus(r, "plain_modulus")?;
            Ok(Self {
                scheme,
                poly_modulus_degree: n,
                coeff_modulus,
                plain_modulus,
            })
        })
    }
}

/// Bytes of one serialized `Modulus`: its nested header and the value.
const MODULUS_BYTES: u64 = wire::HEADER_SIZE as u64 + 8;

fn put_modulus(out: &mut Vec<u8>, q: u64) {
    wire::put_nested(out, &q.to_le_bytes());
}

fn read_modulus(r: &mut Reader<'_>, what: &'static str) -> Result<u64> {
    let start = r.offset();
    let declared = r.nested_header(what)?;
    let q = r.u64(what)?;
    r.check_nested_end(what, start, declared)?;
    if q == 1 || q >> 61 != 0 {
        return Err(SealError::BadModulus { what, value: q });
    }
    Ok(q)
}

/// One level of the modulus-switching chain.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Level {
    /// The level's id.
    pub parms_id: ParmsId,
    /// Its primes (a prefix of the key level's primes).
    pub coeff_modulus: Vec<u64>,
    /// SEAL's chain index: 0 for the last level, highest for the key level.
    pub chain_index: usize,
}

/// The checked parameters and their modulus-switching chain, like SEAL's `SEALContext`
/// (without SEAL's security-level check, which is the caller's choice of primes).
///
/// `levels[0]` is the key level (all primes). With more than one prime, `levels[1]` is the
/// first data level (the special prime dropped), where fresh ciphertexts live; each next level
/// drops the last remaining prime.
#[derive(Clone, Debug)]
pub struct SealContext {
    parms: EncryptionParameters,
    levels: Vec<Level>,
    ntt: NttCache,
}

/// Each level's NTT tables, built on first use and kept, as SEAL's context keeps its
/// `NTTTables`: finding the roots and filling the twiddles costs more than the transforms a
/// key check or a conversion runs (about half of loading a Seal4096 secret key).
struct NttCache(Vec<OnceLock<RnsNtt>>);

impl NttCache {
    fn new(levels: usize) -> Self {
        Self((0..levels).map(|_| OnceLock::new()).collect())
    }
}

/// A clone starts with an empty cache (the tables are rebuilt on the clone's first use).
impl Clone for NttCache {
    fn clone(&self) -> Self {
        Self::new(self.0.len())
    }
}

impl std::fmt::Debug for NttCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let built = self.0.iter().filter(|cell| cell.get().is_some()).count();
        write!(f, "NttCache {{ levels: {}, built: {built} }}", self.0.len())
    }
}

impl SealContext {
    /// Checks BFV parameters the way SEAL's context does where this crate depends on it:
    /// BFV, `n` a power of two in `[2, 131072]`, distinct primes of 2 to 60 bits each
    /// congruent to 1 mod 2n, a plain modulus of 2 to 60 bits coprime to every prime.
    pub fn new(parms: EncryptionParameters) -> Result<Self> {
        let bad = |e: ParameterError| Err(SealError::InvalidParameters(e));
        if parms.scheme != SCHEME_BFV {
            return bad(ParameterError::NotBfv {
                scheme: parms.scheme,
            });
        }
        let n = parms.poly_modulus_degree;
        if !(2..=POLY_MOD_DEGREE_MAX).contains(&n) || !n.is_power_of_two() {
            return bad(ParameterError::Degree { n });
        }
        if parms.coeff_modulus.is_empty() {
            return bad(ParameterError::NoPrimes);
        }
        for (i, &q) in parms.coeff_modulus.iter().enumerate() {
            if !(2..1u64 << 60).contains(&q) {
                return bad(ParameterError::PrimeSize { prime: q });
            }
            if (q - 1) % (2 * n) != 0 || !is_prime_u64(q) {
                return bad(ParameterError::NotNttPrime {
                    prime: q,
                    two_n: 2 * n,
                });
            }
            if parms.coeff_modulus[..i].contains(&q) {
                return bad(ParameterError::DuplicatePrime { prime: q });
            }
        }
        let t = parms.plain_modulus;
        if !(2..1u64 << 60).contains(&t) {
            return bad(ParameterError::PlainModulusSize { t });
        }
        if parms.coeff_modulus.iter().any(|&q| gcd(q, t) != 1) {
            return bad(ParameterError::PlainNotCoprime { t });
        }
        let k = parms.coeff_modulus.len();
        let mut levels = Vec::new();
        let key = Level {
            parms_id: parms.parms_id(),
            coeff_modulus: parms.coeff_modulus.clone(),
            chain_index: k.saturating_sub(1),
        };
        levels.push(key);
        if k > 1 {
            for len in (1..k).rev() {
                let primes = parms.coeff_modulus[..len].to_vec();
                levels.push(Level {
                    parms_id: ParmsId::compute(parms.scheme, n, &primes, t),
                    coeff_modulus: primes,
                    chain_index: len - 1,
                });
            }
        }
        let ntt = NttCache::new(levels.len());
        Ok(Self { parms, levels, ntt })
    }

    /// The NTT tables of `level`'s primes at this context's degree, built on the first call
    /// for that level and kept for the context's lifetime. `level` is matched by its
    /// `parms_id`; a level of another context is `UnknownParmsId`. Primes the NTT core cannot
    /// take (see [`RnsNtt::new`]) give its error on every call.
    ///
    /// ```
    /// use zeppelin_seal::{EncryptionParameters, SealContext};
    ///
    /// let parms = EncryptionParameters::bfv(16, vec![1_073_741_441, 1_073_740_609], 257);
    /// let ctx = SealContext::new(parms)?;
    /// let ntt = ctx.level_ntt(ctx.key_level())?;
    /// assert_eq!((ntt.n(), ntt.len()), (16, 2));
    /// // The second call returns the same tables.
    /// assert!(std::ptr::eq(ntt, ctx.level_ntt(ctx.key_level())?));
    /// # Ok::<(), zeppelin_seal::SealError>(())
    /// ```
    pub fn level_ntt(&self, level: &Level) -> Result<&RnsNtt> {
        let (known, cell) = self
            .levels
            .iter()
            .zip(&self.ntt.0)
            .find(|(l, _)| l.parms_id == level.parms_id)
            .ok_or(SealError::UnknownParmsId {
                what: "NTT tables",
                found: level.parms_id,
            })?;
        if let Some(ntt) = cell.get() {
            return Ok(ntt);
        }
        let built = RnsNtt::new(&known.coeff_modulus, self.n())?;
        Ok(cell.get_or_init(|| built))
    }

    /// The parameters.
    pub fn parms(&self) -> &EncryptionParameters {
        &self.parms
    }

    /// Ring degree.
    pub fn n(&self) -> usize {
        self.parms.poly_modulus_degree as usize
    }

    /// Plain modulus.
    pub fn plain_modulus(&self) -> u64 {
        self.parms.plain_modulus
    }

    /// All levels, key level first.
    pub fn levels(&self) -> &[Level] {
        &self.levels
    }

    /// The key level.
    pub fn key_level(&self) -> &Level {
        &self.levels[0]
    }

    /// The first data level (the key level when there is a single prime).
    pub fn first_level(&self) -> &Level {
        self.levels.get(1).unwrap_or(&self.levels[0])
    }

    /// Whether key switching exists (more than one prime).
    pub fn using_keyswitching(&self) -> bool {
        self.levels.len() > 1
    }

    /// The level with this id.
    pub fn level(&self, id: &ParmsId) -> Option<&Level> {
        self.levels.iter().find(|l| l.parms_id == *id)
    }

    /// The level with this id, or `UnknownParmsId` naming `what`.
    pub fn level_or_err(&self, id: &ParmsId, what: &'static str) -> Result<&Level> {
        self.level(id)
            .ok_or(SealError::UnknownParmsId { what, found: *id })
    }

    /// The data level holding the first `k` primes.
    pub fn data_level_with(&self, k: usize) -> Option<&Level> {
        self.levels
            .iter()
            .skip(usize::from(self.using_keyswitching()))
            .find(|l| l.coeff_modulus.len() == k)
    }
}

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// Deterministic Miller–Rabin for 64-bit values (public parameters only).
pub(crate) fn is_prime_u64(n: u64) -> bool {
    if n < 2 {
        return false;
    }
    for p in [2u64, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37] {
        if n.is_multiple_of(p) {
            return n == p;
        }
    }
    let mulmod = |a: u64, b: u64| ((a as u128 * b as u128) % n as u128) as u64;
    let powmod = |mut b: u64, mut e: u64| {
        let mut r = 1u64;
        while e > 0 {
            if e & 1 == 1 {
                r = mulmod(r, b);
            }
            b = mulmod(b, b);
            e >>= 1;
        }
        r
    };
    let (mut d, mut s) = (n - 1, 0);
    while d % 2 == 0 {
        d /= 2;
        s += 1;
    }
    'witness: for a in [2u64, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37] {
        let mut x = powmod(a, d);
        if x == 1 || x == n - 1 {
            continue;
        }
        for _ in 1..s {
            x = mulmod(x, x);
            if x == n - 1 {
                continue 'witness;
            }
        }
        return false;
    }
    true
}
