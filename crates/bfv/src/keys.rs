//! Secret and public keys.

use crate::error::Error;
use crate::params::{Params, RnsStorage, N};
use crate::prng::PublicSeed;
use crate::sampler::lift_small;
use zeppelin_ring::{default_backend, NttBackend};
use zeroize::Zeroize;

/// The secret key: a ternary polynomial `s`, kept both as its coefficients and, per data
/// prime, in NTT form `ŝ` (SEAL's NTT convention, so the rows equal the data-prime rows of a
/// SEAL `SecretKey`). Zeroized on drop.
///
/// About `4 KB + K·16 KB`; declare it in a `static` (see [`SecretKey::zeroed`]) or on the heap
/// of a host, not on a small stack.
pub struct SecretKey<P: Params> {
    ternary: [i8; N],
    ntt: P::Rns,
}

impl<P: Params> SecretKey<P> {
    /// Bytes of [`SecretKey::write_bytes`]: the `n` ternary coefficients.
    pub const BYTES: usize = N;

    /// An all-zero key (not a usable key), to be filled in place by key generation or
    /// [`SecretKey::set_ternary`]. `const`, so it can initialise a `static`.
    pub const fn zeroed() -> Self {
        Self {
            ternary: [0; N],
            ntt: P::Rns::ZERO,
        }
    }

    /// The coefficients of `s`, each in `{-1, 0, 1}`.
    pub fn ternary(&self) -> &[i8; N] {
        &self.ternary
    }

    /// `ŝ` for all data primes: `K·n` residues, prime-major, NTT form (normal, not
    /// Montgomery, form; each `< q_i`).
    pub fn ntt_residues(&self) -> &[u32] {
        self.ntt.as_ref()
    }

    /// `ŝ` modulo data prime `i` (`n` residues), or `None` if `i >= K`.
    pub fn ntt_row(&self, i: usize) -> Option<&[u32]> {
        self.ntt.as_ref().get(i * N..(i + 1) * N)
    }

    /// Sets the key to `s = coeffs` (each in `{-1, 0, 1}`) and computes `ŝ` in place.
    /// On error the key is unchanged.
    pub fn set_ternary(&mut self, coeffs: &[i8; N]) -> Result<(), Error> {
        if let Some(index) = coeffs.iter().position(|&c| !(-1..=1).contains(&c)) {
            return Err(Error::SecretKeyNotTernary { index });
        }
        self.ternary.copy_from_slice(coeffs);
        self.refresh_ntt()
    }

    /// Recomputes `ŝ` from the ternary coefficients.
    pub(crate) fn refresh_ntt(&mut self) -> Result<(), Error> {
        for (i, table) in P::ntt_tables().iter().enumerate() {
            let row = &mut self.ntt.as_mut()[i * N..(i + 1) * N];
            lift_small(table.modulus(), &self.ternary, row);
            default_backend().forward(&table.view(), row)?;
        }
        Ok(())
    }

    pub(crate) fn ternary_mut(&mut self) -> &mut [i8; N] {
        &mut self.ternary
    }

    /// Writes the key's wire form, the `n` coefficients as two's-complement bytes (`0xFF`,
    /// `0x00`, `0x01`), into `out`; returns the number of bytes written ([`Self::BYTES`]).
    /// Only for storage on the trusted side: the key is secret.
    pub fn write_bytes(&self, out: &mut [u8]) -> Result<usize, Error> {
        let found = out.len();
        let out = out
            .get_mut(..N)
            .ok_or(Error::BufferTooSmall { needed: N, found })?;
        for (o, &c) in out.iter_mut().zip(self.ternary.iter()) {
            *o = c as u8;
        }
        Ok(N)
    }

    /// Reads the form written by [`Self::write_bytes`] into `self` (in place, no large
    /// temporary). On error the key is unchanged.
    pub fn read_bytes(&mut self, bytes: &[u8]) -> Result<(), Error> {
        if bytes.len() != N {
            return Err(Error::LengthMismatch {
                expected: N,
                found: bytes.len(),
            });
        }
        if let Some(index) = bytes.iter().position(|&b| !matches!(b, 0x00 | 0x01 | 0xFF)) {
            return Err(Error::SecretKeyNotTernary { index });
        }
        for (t, &b) in self.ternary.iter_mut().zip(bytes) {
            *t = b as i8;
        }
        self.refresh_ntt()
    }
}

impl<P: Params> Drop for SecretKey<P> {
    fn drop(&mut self) {
        self.ternary.zeroize();
        self.ntt.as_mut().zeroize();
    }
}

/// The public key `(p0, p1) = (−(a·s + e), a)` for the data primes, kept in NTT form (SEAL
/// keeps its public key in NTT form too). When generated here, `p1 = â` is sampled directly in
/// the evaluation domain from a public seed, so `(p0, seed)` is enough to transmit it.
pub struct PublicKey<P: Params> {
    p0: P::Rns,
    p1: P::Rns,
    seed: Option<PublicSeed>,
}

impl<P: Params> PublicKey<P> {
    /// Bytes of [`PublicKey::write_bytes`]: `p0` and `p1`, `2·K·n` little-endian `u32`s.
    pub const BYTES: usize = 2 * P::K * N * 4;

    /// An all-zero key, to be filled in place. `const`, so it can initialise a `static`.
    pub const fn zeroed() -> Self {
        Self {
            p0: P::Rns::ZERO,
            p1: P::Rns::ZERO,
            seed: None,
        }
    }

    /// `p̂0` (NTT form, `K·n` residues, prime-major).
    pub fn p0(&self) -> &[u32] {
        self.p0.as_ref()
    }

    /// `p̂1 = â` (NTT form, `K·n` residues, prime-major).
    pub fn p1(&self) -> &[u32] {
        self.p1.as_ref()
    }

    /// The public seed `p̂1` was expanded from, if the key was generated here.
    pub fn seed(&self) -> Option<&PublicSeed> {
        self.seed.as_ref()
    }

    pub(crate) fn parts_mut(&mut self) -> (&mut [u32], &mut [u32]) {
        (self.p0.as_mut(), self.p1.as_mut())
    }

    pub(crate) fn set_seed(&mut self, seed: Option<PublicSeed>) {
        self.seed = seed;
    }

    /// Sets the key from NTT-form rows (for example the data-prime rows of a SEAL
    /// `PublicKey`). Each slice holds `K·n` residues, each below its prime. On error the key
    /// is unchanged.
    pub fn set_ntt_rows(&mut self, p0: &[u32], p1: &[u32]) -> Result<(), Error> {
        check_rows::<P>(P::K, p0, 0)?;
        check_rows::<P>(P::K, p1, 1)?;
        self.p0.as_mut().copy_from_slice(p0);
        self.p1.as_mut().copy_from_slice(p1);
        self.seed = None;
        Ok(())
    }

    /// Writes `p̂0 ‖ p̂1` as little-endian `u32`s; returns [`Self::BYTES`].
    pub fn write_bytes(&self, out: &mut [u8]) -> Result<usize, Error> {
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

    /// Reads the form written by [`Self::write_bytes`], checking every residue, in place.
    /// On error the key is unchanged.
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
        read_words(a, self.p0.as_mut());
        read_words(b, self.p1.as_mut());
        self.seed = None;
        Ok(())
    }
}

/// Checks that `rows` holds `level·n` residues, each below its prime.
pub(crate) fn check_rows<P: Params>(level: usize, rows: &[u32], poly: usize) -> Result<(), Error> {
    if rows.len() != level * N {
        return Err(Error::LengthMismatch {
            expected: level * N,
            found: rows.len(),
        });
    }
    for (prime, (row, &q)) in rows.chunks_exact(N).zip(P::DATA_PRIMES).enumerate() {
        if let Some(index) = row.iter().position(|&v| v >= q) {
            return Err(Error::CoefficientOutOfRange {
                poly,
                prime,
                index,
                value: row[index],
            });
        }
    }
    Ok(())
}

/// Like [`check_rows`] for little-endian bytes.
pub(crate) fn check_bytes<P: Params>(level: usize, bytes: &[u8], poly: usize) -> Result<(), Error> {
    if bytes.len() != level * N * 4 {
        return Err(Error::LengthMismatch {
            expected: level * N * 4,
            found: bytes.len(),
        });
    }
    for (prime, (row, &q)) in bytes.chunks_exact(4 * N).zip(P::DATA_PRIMES).enumerate() {
        for (index, w) in row.chunks_exact(4).enumerate() {
            let value = u32::from_le_bytes([w[0], w[1], w[2], w[3]]);
            if value >= q {
                return Err(Error::CoefficientOutOfRange {
                    poly,
                    prime,
                    index,
                    value,
                });
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
    for (o, w) in out.iter_mut().zip(bytes.chunks_exact(4)) {
        *o = u32::from_le_bytes([w[0], w[1], w[2], w[3]]);
    }
}
