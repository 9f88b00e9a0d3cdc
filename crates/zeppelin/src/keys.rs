//! Secret and public keys.

use crate::error::Error;
use crate::params::{Params, RnsStorage, SmallStorage};
use crate::prng::{PublicGenerator, PublicSeed};
use crate::rows::NttRows;
use crate::sampler::lift_small;
use zeppelin_ring::checks::first_unreduced;
use zeppelin_ring::{default_backend, NttBackend};
use zeroize::Zeroize;

/// The secret key: a ternary polynomial `s`, kept both as its coefficients and, per data
/// prime, in NTT form `ŝ` (SEAL's NTT convention, so the rows equal the data-prime rows of a
/// SEAL `SecretKey`). Zeroized on drop.
///
/// A key is usable only once key generation or a validating reader has filled it: an empty
/// key ([`SecretKey::zeroed`]) is refused by every operation with [`Error::KeyNotSet`], and a
/// reader refuses coefficients outside `{-1, 0, 1}` and implausible weights (see
/// [`SecretKey::WEIGHT_RANGE`]).
///
/// About `n + K·4n` bytes; declare it in a `static` (see [`SecretKey::zeroed`]) or on the
/// heap of a host, not on a small stack.
pub struct SecretKey<P: Params> {
    ternary: P::Small,
    ntt: P::Rns,
    set: bool,
}

impl<P: Params> SecretKey<P> {
    /// Bytes of [`SecretKey::write_bytes`]: the `n` ternary coefficients.
    pub const BYTES: usize = P::N;

    /// The accepted number of nonzero coefficients, `n/2 ..= 5n/6`. A uniform ternary key
    /// (this crate's and SEAL's) has weight `2n/3 ± 0.47·sqrt(n)`, so a generated key
    /// falls outside with probability below `2^-100`; zero, sparse and all-nonzero keys fall
    /// outside.
    pub const WEIGHT_RANGE: core::ops::RangeInclusive<usize> = P::N / 2..=5 * P::N / 6;

    /// An empty key, to be filled in place by key generation or a reader; refused by every
    /// operation until then. `const`, so it can initialise a `static`.
    pub const fn zeroed() -> Self {
        Self {
            ternary: P::Small::ZERO,
            ntt: P::Rns::ZERO,
            set: false,
        }
    }

    /// Whether key generation or a reader has filled the key.
    pub fn is_set(&self) -> bool {
        self.set
    }

    /// [`Error::KeyNotSet`] for an empty key.
    pub(crate) fn check_set(&self) -> Result<(), Error> {
        if self.set {
            Ok(())
        } else {
            Err(Error::KeyNotSet { key: "secret" })
        }
    }

    /// The coefficients of `s`, each in `{-1, 0, 1}` (all zero while the key is empty).
    pub fn ternary(&self) -> &[i8] {
        self.ternary.as_ref()
    }

    /// `ŝ` for all data primes: `K·n` residues, prime-major, NTT form (normal, not
    /// Montgomery, form; each `< q_i`).
    pub fn ntt_residues(&self) -> NttRows<'_> {
        NttRows::new(self.ntt.as_ref())
    }

    /// `ŝ` modulo data prime `i` (`n` residues), or `None` if `i >= K`.
    pub fn ntt_row(&self, i: usize) -> Option<NttRows<'_>> {
        self.ntt
            .as_ref()
            .get(i * P::N..(i + 1) * P::N)
            .map(NttRows::new)
    }

    /// Sets the key to `s = coeffs` (`n` values in `{-1, 0, 1}`, weight in
    /// [`Self::WEIGHT_RANGE`]) and computes `ŝ` in place. On error the key is unchanged.
    pub fn set_ternary(&mut self, coeffs: &[i8]) -> Result<(), Error> {
        if coeffs.len() != P::N {
            return Err(Error::LengthMismatch {
                expected: P::N,
                found: coeffs.len(),
            });
        }
        if let Some(index) = coeffs.iter().position(|&c| !(-1..=1).contains(&c)) {
            return Err(Error::SecretKeyNotTernary { index });
        }
        check_weight::<P>(coeffs.iter().filter(|&&c| c != 0).count())?;
        self.ternary.as_mut().copy_from_slice(coeffs);
        self.refresh_ntt()
    }

    /// Recomputes `ŝ` from the ternary coefficients and marks the key set (with the build's
    /// default backend: key set-up has no workspace).
    pub(crate) fn refresh_ntt(&mut self) -> Result<(), Error> {
        let ntt = default_backend();
        for (i, table) in P::ntt_tables().iter().enumerate() {
            let row = &mut self.ntt.as_mut()[i * P::N..(i + 1) * P::N];
            lift_small(table.modulus(), self.ternary.as_ref(), row);
            ntt.forward(&table.view(), row)?;
        }
        self.set = true;
        Ok(())
    }

    pub(crate) fn ternary_mut(&mut self) -> &mut [i8] {
        self.ternary.as_mut()
    }

    /// Writes the key's wire form, the `n` coefficients as two's-complement bytes (`0xFF`,
    /// `0x00`, `0x01`), into `out`; returns the number of bytes written ([`Self::BYTES`]).
    /// Only for storage on the trusted side: the key is secret.
    pub fn write_bytes(&self, out: &mut [u8]) -> Result<usize, Error> {
        self.check_set()?;
        let n = P::N;
        let found = out.len();
        let out = out
            .get_mut(..n)
            .ok_or(Error::BufferTooSmall { needed: n, found })?;
        for (o, &c) in out.iter_mut().zip(self.ternary.as_ref()) {
            *o = c as u8;
        }
        Ok(n)
    }

    /// Reads the form written by [`Self::write_bytes`] into `self` (in place, no large
    /// temporary), refusing bytes other than `0xFF`, `0x00`, `0x01` and implausible weights.
    /// On error the key is unchanged.
    pub fn read_bytes(&mut self, bytes: &[u8]) -> Result<(), Error> {
        if bytes.len() != P::N {
            return Err(Error::LengthMismatch {
                expected: P::N,
                found: bytes.len(),
            });
        }
        if let Some(index) = bytes.iter().position(|&b| !matches!(b, 0x00 | 0x01 | 0xFF)) {
            return Err(Error::SecretKeyNotTernary { index });
        }
        check_weight::<P>(bytes.iter().filter(|&&b| b != 0).count())?;
        for (t, &b) in self.ternary.as_mut().iter_mut().zip(bytes) {
            *t = b as i8;
        }
        self.refresh_ntt()
    }
}

/// [`Error::SecretKeyWeight`] outside [`SecretKey::WEIGHT_RANGE`].
fn check_weight<P: Params>(weight: usize) -> Result<(), Error> {
    let range = SecretKey::<P>::WEIGHT_RANGE;
    if range.contains(&weight) {
        Ok(())
    } else {
        Err(Error::SecretKeyWeight {
            weight,
            min: *range.start(),
            max: *range.end(),
        })
    }
}

impl<P: Params> Drop for SecretKey<P> {
    fn drop(&mut self) {
        self.ternary.as_mut().zeroize();
        self.ntt.as_mut().zeroize();
    }
}

/// The public key `(p0, p1) = (−(a·s + e), a)` for the data primes, kept in NTT form (SEAL
/// keeps its public key in NTT form too). When generated here, `p1 = â` is sampled directly in
/// the evaluation domain from a public seed, so `(p0, seed)` is enough to transmit it.
///
/// A key is usable only once key generation or a validating reader has filled it: an empty
/// key ([`PublicKey::zeroed`]) is refused by encryption with [`Error::KeyNotSet`], and the
/// readers refuse residues not below their prime and degenerate rows (see
/// [`PublicKey::set_ntt_rows`]), such as the all-zero key or `p0 = −e` of a zero secret,
/// under which a ciphertext would reveal its plaintext.
pub struct PublicKey<P: Params> {
    p0: P::Rns,
    p1: P::Rns,
    /// The seed `p̂1` was expanded from, when generated here.
    seed: Option<PublicSeed>,
    /// The generator that expanded `seed` (meaningful only with a seed). A separate field,
    /// not inside the `Option`: its niche would make `None` non-zero and move every
    /// `static` key from `.bss` to flash.
    generator: PublicGenerator,
    set: bool,
}

/// A residue this close to 0 mod `q` (either side) counts as small for the degeneracy check.
const SMALL_RESIDUE: u32 = 1 << 12;

impl<P: Params> PublicKey<P> {
    /// Bytes of [`PublicKey::write_bytes`]: `p0` and `p1`, `2·K·n` little-endian `u32`s.
    pub const BYTES: usize = 2 * P::K * P::N * 4;

    /// Most residues of one row that may lie within `2^12` of 0 mod `q`: `n/16`. A uniform
    /// residue mod a 27-bit prime lands there with probability `2^-13.9`, so a genuine key
    /// row has about `n·2^-13.9 < 1` of them; an all-zero row, or `p0 = −e` for a zero
    /// secret, has `n`.
    pub const MAX_SMALL_PER_ROW: usize = P::N / 16;

    /// An empty key, to be filled in place by key generation or a reader; refused by
    /// encryption until then. `const`, so it can initialise a `static`.
    pub const fn zeroed() -> Self {
        Self {
            p0: P::Rns::ZERO,
            p1: P::Rns::ZERO,
            seed: None,
            generator: PublicGenerator::AesCtr128,
            set: false,
        }
    }

    /// Whether key generation or a reader has filled the key.
    pub fn is_set(&self) -> bool {
        self.set
    }

    /// [`Error::KeyNotSet`] for an empty key.
    pub(crate) fn check_set(&self) -> Result<(), Error> {
        if self.set {
            Ok(())
        } else {
            Err(Error::KeyNotSet { key: "public" })
        }
    }

    /// `p̂0` (NTT form, `K·n` residues, prime-major).
    pub fn p0(&self) -> NttRows<'_> {
        NttRows::new(self.p0.as_ref())
    }

    /// `p̂1 = â` (NTT form, `K·n` residues, prime-major).
    pub fn p1(&self) -> NttRows<'_> {
        NttRows::new(self.p1.as_ref())
    }

    /// The public seed `p̂1` was expanded from, if the key was generated here.
    pub fn seed(&self) -> Option<&PublicSeed> {
        self.seed.as_ref()
    }

    /// The generator that expanded [`Self::seed`], if the key was generated here.
    pub fn seed_generator(&self) -> Option<PublicGenerator> {
        self.seed.map(|_| self.generator)
    }

    pub(crate) fn parts_mut(&mut self) -> (&mut [u32], &mut [u32]) {
        (self.p0.as_mut(), self.p1.as_mut())
    }

    /// Marks a freshly generated key set, with the generator and public seed of `p̂1`.
    pub(crate) fn mark_generated(&mut self, generator: PublicGenerator, seed: PublicSeed) {
        self.seed = Some(seed);
        self.generator = generator;
        self.set = true;
    }

    /// Sets the key from NTT-form rows (for example the data-prime rows of a SEAL
    /// `PublicKey`). Each slice holds `K·n` residues, each below its prime, and no row may
    /// have more than [`Self::MAX_SMALL_PER_ROW`] residues within `2^12` of 0 (a degenerate
    /// key). On error the key is unchanged.
    pub fn set_ntt_rows(&mut self, p0: NttRows<'_>, p1: NttRows<'_>) -> Result<(), Error> {
        check_rows::<P>(P::K, &p0, 0)?;
        check_rows::<P>(P::K, &p1, 1)?;
        check_not_degenerate::<P>(p0.iter().copied(), 0)?;
        check_not_degenerate::<P>(p1.iter().copied(), 1)?;
        self.p0.as_mut().copy_from_slice(&p0);
        self.p1.as_mut().copy_from_slice(&p1);
        self.seed = None;
        self.set = true;
        Ok(())
    }

    /// Writes `p̂0 ‖ p̂1` as little-endian `u32`s; returns [`Self::BYTES`].
    pub fn write_bytes(&self, out: &mut [u8]) -> Result<usize, Error> {
        self.check_set()?;
        let half = Self::BYTES / 2;
        let found = out.len();
        let out = out.get_mut(..Self::BYTES).ok_or(Error::BufferTooSmall {
            needed: Self::BYTES,
            found,
        })?;
        let (a, b) = out.split_at_mut(half);
        write_words(self.p0.as_ref(), a);
        write_words(self.p1.as_ref(), b);
        Ok(Self::BYTES)
    }

    /// Reads the form written by [`Self::write_bytes`] in place, with the checks of
    /// [`Self::set_ntt_rows`]. On error the key is unchanged.
    pub fn read_bytes(&mut self, bytes: &[u8]) -> Result<(), Error> {
        if bytes.len() != Self::BYTES {
            return Err(Error::LengthMismatch {
                expected: Self::BYTES,
                found: bytes.len(),
            });
        }
        let (a, b) = bytes.split_at(Self::BYTES / 2);
        check_bytes::<P>(P::K, a, 0)?;
        check_bytes::<P>(P::K, b, 1)?;
        check_not_degenerate::<P>(le_words(a), 0)?;
        check_not_degenerate::<P>(le_words(b), 1)?;
        read_words(a, self.p0.as_mut());
        read_words(b, self.p1.as_mut());
        self.seed = None;
        self.set = true;
        Ok(())
    }
}

/// [`Error::PublicKeyDegenerate`] if a row of the `K·n` checked residues `words` (prime-major)
/// has more than [`PublicKey::MAX_SMALL_PER_ROW`] residues within [`SMALL_RESIDUE`] of 0.
fn check_not_degenerate<P: Params>(
    mut words: impl Iterator<Item = u32>,
    poly: usize,
) -> Result<(), Error> {
    for (prime, &q) in P::DATA_PRIMES.iter().enumerate() {
        let small = words
            .by_ref()
            .take(P::N)
            .filter(|&v| v < SMALL_RESIDUE || v > q - SMALL_RESIDUE)
            .count();
        if small > PublicKey::<P>::MAX_SMALL_PER_ROW {
            return Err(Error::PublicKeyDegenerate { poly, prime, small });
        }
    }
    Ok(())
}

/// Little-endian `u32` words of `bytes`.
fn le_words(bytes: &[u8]) -> impl Iterator<Item = u32> + '_ {
    bytes
        .chunks_exact(4)
        .map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]))
}

/// Checks that `rows` holds `level·n` residues, each below its prime.
pub(crate) fn check_rows<P: Params>(level: usize, rows: &[u32], poly: usize) -> Result<(), Error> {
    let n = P::N;
    if rows.len() != level * n {
        return Err(Error::LengthMismatch {
            expected: level * n,
            found: rows.len(),
        });
    }
    for (prime, (row, &q)) in rows.chunks_exact(n).zip(P::DATA_PRIMES).enumerate() {
        if let Some(index) = first_unreduced(row, q) {
            return Err(Error::CoefficientOutOfRange { poly, prime, index });
        }
    }
    Ok(())
}

/// Like [`check_rows`] for little-endian bytes.
pub(crate) fn check_bytes<P: Params>(level: usize, bytes: &[u8], poly: usize) -> Result<(), Error> {
    let n = P::N;
    if bytes.len() != level * n * 4 {
        return Err(Error::LengthMismatch {
            expected: level * n * 4,
            found: bytes.len(),
        });
    }
    for (prime, (row, &q)) in bytes.chunks_exact(4 * n).zip(P::DATA_PRIMES).enumerate() {
        for (index, w) in row.chunks_exact(4).enumerate() {
            let value = u32::from_le_bytes([w[0], w[1], w[2], w[3]]);
            if value >= q {
                return Err(Error::CoefficientOutOfRange { poly, prime, index });
            }
        }
    }
    Ok(())
}

pub(crate) fn write_words(words: &[u32], out: &mut [u8]) {
    for (o, w) in out.chunks_exact_mut(4).zip(words) {
        o.copy_from_slice(&w.to_le_bytes());
    }
}

pub(crate) fn read_words(bytes: &[u8], out: &mut [u32]) {
    for (o, w) in out.iter_mut().zip(le_words(bytes)) {
        *o = w;
    }
}
