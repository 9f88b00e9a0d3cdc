//! Ciphertexts: full `(c0, c1)` and seeded `(c0, seed)`, in coefficient form like SEAL's BFV
//! ciphertexts, RNS layout polynomial-major, then prime, then coefficient.

use crate::error::Error;
use crate::keys::{check_bytes, check_rows, read_words, write_words};
use crate::params::{Params, RnsStorage};
use crate::prng::{PublicGenerator, PublicSeed, SEED_BYTES};
use crate::rows::CoeffRows;

/// Checks that `level` is in `1..=K`.
pub(crate) fn check_level<P: Params>(level: usize) -> Result<(), Error> {
    if level == 0 || level > P::K {
        Err(Error::InvalidLevel { level, max: P::K })
    } else {
        Ok(())
    }
}

/// A full ciphertext `(c0, c1)` at a level `L` (the first `L` data primes). Storage is sized
/// for the full level; rows `L..K` are unused. About `2·K·16 KB`: keep it in a `static` or
/// on a host's heap.
#[derive(Clone)]
pub struct Ciphertext<P: Params> {
    level: usize,
    c0: P::Rns,
    c1: P::Rns,
}

impl<P: Params> Ciphertext<P> {
    /// An empty ciphertext, to be filled by encryption or parsing (`const`, for `static`
    /// initialisers). Every byte is zero, level included, so a `static` of it lands in
    /// `.bss` and costs no flash. Level 0 means "not written yet": until it is filled,
    /// decryption, expansion and [`Self::write_bytes`] refuse it with
    /// [`Error::InvalidLevel`] rather than treat it as an encryption of zero.
    pub const fn zeroed() -> Self {
        Self {
            level: 0,
            c0: P::Rns::ZERO,
            c1: P::Rns::ZERO,
        }
    }

    /// The level `L` (number of data primes); 0 while the ciphertext is empty.
    pub fn level(&self) -> usize {
        self.level
    }

    /// `c0`: `L·n` residues, prime-major, coefficient form.
    pub fn c0(&self) -> CoeffRows<'_> {
        CoeffRows::new(&self.c0.as_ref()[..self.level * P::N])
    }

    /// `c1`: `L·n` residues, prime-major, coefficient form.
    pub fn c1(&self) -> CoeffRows<'_> {
        CoeffRows::new(&self.c1.as_ref()[..self.level * P::N])
    }

    /// Sets the level and returns `(c0, c1)` for filling in place (for example by a parser).
    /// Decryption checks every residue, so nothing unchecked can do harm.
    pub fn rows_mut(&mut self, level: usize) -> Result<(&mut [u32], &mut [u32]), Error> {
        check_level::<P>(level)?;
        self.level = level;
        Ok((
            &mut self.c0.as_mut()[..level * P::N],
            &mut self.c1.as_mut()[..level * P::N],
        ))
    }

    /// Sets the ciphertext from coefficient-form rows at `level`, checking every residue. On
    /// error the ciphertext is unchanged.
    pub fn set_rows(
        &mut self,
        level: usize,
        c0: CoeffRows<'_>,
        c1: CoeffRows<'_>,
    ) -> Result<(), Error> {
        check_level::<P>(level)?;
        check_rows::<P>(level, &c0, 0)?;
        check_rows::<P>(level, &c1, 1)?;
        let (d0, d1) = self.rows_mut(level)?;
        d0.copy_from_slice(&c0);
        d1.copy_from_slice(&c1);
        Ok(())
    }

    /// Bytes of the wire form at `level`: `2·L·n·4`.
    pub const fn bytes_at(level: usize) -> usize {
        2 * level * P::N * 4
    }

    /// Writes `c0 ‖ c1` (each `L·n` little-endian `u32`, prime-major); returns the length.
    /// An empty ciphertext ([`Self::zeroed`], never filled) is refused.
    pub fn write_bytes(&self, out: &mut [u8]) -> Result<usize, Error> {
        check_level::<P>(self.level)?;
        let len = Self::bytes_at(self.level);
        let found = out.len();
        let out = out
            .get_mut(..len)
            .ok_or(Error::BufferTooSmall { needed: len, found })?;
        let (a, b) = out.split_at_mut(len / 2);
        write_words(&self.c0(), a);
        write_words(&self.c1(), b);
        Ok(len)
    }

    /// Reads the form written by [`Self::write_bytes`] at `level`, checking every residue.
    /// On error the ciphertext is unchanged.
    pub fn read_bytes(&mut self, level: usize, bytes: &[u8]) -> Result<(), Error> {
        check_level::<P>(level)?;
        if bytes.len() != Self::bytes_at(level) {
            return Err(Error::LengthMismatch {
                expected: Self::bytes_at(level),
                found: bytes.len(),
            });
        }
        let (a, b) = bytes.split_at(bytes.len() / 2);
        check_bytes::<P>(level, a, 0)?;
        check_bytes::<P>(level, b, 1)?;
        let (d0, d1) = self.rows_mut(level)?;
        read_words(a, d0);
        read_words(b, d1);
        Ok(())
    }
}

/// A seeded symmetric ciphertext: `c0`, and the public seed and generator from which `c1`
/// is rebuilt ([`crate::Bfv::expand_ct1`], [`crate::expand_seeded`]). Half the size of a full
/// ciphertext.
#[derive(Clone)]
pub struct SeededCiphertext<P: Params> {
    level: usize,
    c0: P::Rns,
    generator: PublicGenerator,
    seed: PublicSeed,
}

impl<P: Params> SeededCiphertext<P> {
    /// An empty seeded ciphertext, to be filled by encryption or parsing (`const`, for
    /// `static` initialisers). Every byte is zero, level included, so a `static` of it lands
    /// in `.bss` and costs no flash. Level 0 means "not written yet": until it is filled,
    /// decryption, expansion and [`Self::write_bytes`] refuse it with
    /// [`Error::InvalidLevel`].
    pub const fn zeroed() -> Self {
        Self {
            level: 0,
            c0: P::Rns::ZERO,
            generator: PublicGenerator::AesCtr128,
            seed: PublicSeed([0; SEED_BYTES]),
        }
    }

    /// The level `L`; 0 while the ciphertext is empty.
    pub fn level(&self) -> usize {
        self.level
    }

    /// `c0`: `L·n` residues, prime-major, coefficient form.
    pub fn c0(&self) -> CoeffRows<'_> {
        CoeffRows::new(&self.c0.as_ref()[..self.level * P::N])
    }

    /// The public seed of `c1`.
    pub fn seed(&self) -> &PublicSeed {
        &self.seed
    }

    /// The generator that expands [`Self::seed`] into `â`.
    pub fn generator(&self) -> PublicGenerator {
        self.generator
    }

    /// Sets the level, generator and seed and returns `c0` for filling in place.
    pub fn c0_mut(
        &mut self,
        level: usize,
        generator: PublicGenerator,
        seed: PublicSeed,
    ) -> Result<&mut [u32], Error> {
        check_level::<P>(level)?;
        self.level = level;
        self.generator = generator;
        self.seed = seed;
        Ok(&mut self.c0.as_mut()[..level * P::N])
    }

    /// Bytes of the raw form at `level`: `L·n·4 + 1 + 32`.
    pub const fn bytes_at(level: usize) -> usize {
        level * P::N * 4 + 1 + SEED_BYTES
    }

    /// Writes `c0 ‖ prng_type ‖ seed` (`L·n` little-endian `u32`, the generator's
    /// [`PublicGenerator::prng_type`] byte, then the 32 seed bytes). An empty ciphertext
    /// ([`Self::zeroed`], never filled) is refused.
    pub fn write_bytes(&self, out: &mut [u8]) -> Result<usize, Error> {
        check_level::<P>(self.level)?;
        let len = Self::bytes_at(self.level);
        let found = out.len();
        let out = out
            .get_mut(..len)
            .ok_or(Error::BufferTooSmall { needed: len, found })?;
        let (a, b) = out.split_at_mut(len - 1 - SEED_BYTES);
        write_words(&self.c0(), a);
        b[0] = self.generator.prng_type();
        b[1..].copy_from_slice(&self.seed.0);
        Ok(len)
    }

    /// Reads the form written by [`Self::write_bytes`] at `level`, checking every residue.
    /// On error the ciphertext is unchanged.
    pub fn read_bytes(&mut self, level: usize, bytes: &[u8]) -> Result<(), Error> {
        check_level::<P>(level)?;
        if bytes.len() != Self::bytes_at(level) {
            return Err(Error::LengthMismatch {
                expected: Self::bytes_at(level),
                found: bytes.len(),
            });
        }
        let (a, b) = bytes.split_at(bytes.len() - 1 - SEED_BYTES);
        check_bytes::<P>(level, a, 0)?;
        let generator = PublicGenerator::from_prng_type(b[0])
            .ok_or(Error::UnknownGenerator { prng_type: b[0] })?;
        let mut seed = [0u8; SEED_BYTES];
        seed.copy_from_slice(&b[1..]);
        let c0 = self.c0_mut(level, generator, PublicSeed(seed))?;
        read_words(a, c0);
        Ok(())
    }
}
