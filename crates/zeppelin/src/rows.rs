//! Borrowed RNS rows tagged with their domain, so that an operation which needs the NTT
//! (evaluation) form cannot be handed the coefficient form, or the other way round.
//!
//! Ciphertexts are in coefficient form, keys in NTT form (as in SEAL). The tags cost nothing:
//! a [`Rows`] is a slice and a zero-sized marker, and it dereferences to `[u32]` for reading.
//! Making one from a plain slice ([`Rows::new`]) is where the caller states the domain.
//!
//! ```compile_fail
//! use zeppelin::{Bfv, Ciphertext, PublicKey, Seal4096};
//! fn wrong(pk: &PublicKey<Seal4096>, ct: &mut Ciphertext<Seal4096>) {
//!     // p0 is NTT form; a ciphertext's rows are coefficient form: refused at compile time.
//!     ct.set_rows(3, pk.p0(), pk.p1());
//! }
//! ```

use core::marker::PhantomData;
use core::ops::Deref;

mod sealed {
    pub trait Sealed {}
}

/// The domain of a row: [`Coeff`] or [`Eval`].
pub trait Domain: sealed::Sealed + Copy + 'static {
    /// `"coefficient"` or `"NTT"`, for messages.
    const NAME: &'static str;
}

/// Coefficient (power-basis) form: `a_0, …, a_{n-1}` per prime.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Coeff {}

/// NTT (evaluation) form: `a(ψ^(2·br(j)+1))` per prime (SEAL's and OpenFHE's order).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Eval {}

impl sealed::Sealed for Coeff {}
impl sealed::Sealed for Eval {}

impl Domain for Coeff {
    const NAME: &'static str = "coefficient";
}

impl Domain for Eval {
    const NAME: &'static str = "NTT";
}

/// `L·n` residues, prime-major, in domain `D`.
#[derive(Debug, PartialEq, Eq)]
pub struct Rows<'a, D: Domain> {
    words: &'a [u32],
    _domain: PhantomData<D>,
}

impl<D: Domain> Clone for Rows<'_, D> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<D: Domain> Copy for Rows<'_, D> {}

/// Rows in coefficient form.
pub type CoeffRows<'a> = Rows<'a, Coeff>;
/// Rows in NTT form.
pub type NttRows<'a> = Rows<'a, Eval>;

impl<'a, D: Domain> Rows<'a, D> {
    /// Declares `words` to be rows in domain `D`.
    pub const fn new(words: &'a [u32]) -> Self {
        Self {
            words,
            _domain: PhantomData,
        }
    }

    /// The residues.
    pub const fn words(&self) -> &'a [u32] {
        self.words
    }
}

impl<D: Domain> Deref for Rows<'_, D> {
    type Target = [u32];

    fn deref(&self) -> &[u32] {
        self.words
    }
}
