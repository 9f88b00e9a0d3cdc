//! The plaintext polynomial: `n` coefficients mod `t`, distinct from the slot values it
//! encodes ([`crate::encoder`] converts between the two).

use zeroize::Zeroize;

use crate::error::Error;
use crate::params::{Params, RnsStorage};
use zeppelin_ring::ct;

/// A plaintext of preset `P`: `n` coefficients, each below `t`. Made by
/// [`crate::encoder::encode`], by decryption, or from checked coefficients. The readings it
/// carries may be secret, so it is zeroized on drop.
///
/// About `4·n` bytes: keep it in a `static` on a device or on a host's heap.
pub struct Plaintext<P: Params> {
    coeffs: P::Poly,
}

impl<P: Params> Plaintext<P> {
    /// The zero plaintext (every slot 0). `const`, so it can initialise a `static`.
    pub const fn zeroed() -> Self {
        Self {
            coeffs: P::Poly::ZERO,
        }
    }

    /// The coefficients, each below `t`.
    pub fn coeffs(&self) -> &[u32] {
        self.coeffs.as_ref()
    }

    /// Sets the coefficients (`n` of them, each below `t`). On error the plaintext is
    /// unchanged.
    pub fn set_coeffs(&mut self, coeffs: &[u32]) -> Result<(), Error> {
        if coeffs.len() != P::N {
            return Err(Error::LengthMismatch {
                expected: P::N,
                found: coeffs.len(),
            });
        }
        check_below_t(coeffs, P::T)?;
        self.coeffs.as_mut().copy_from_slice(coeffs);
        Ok(())
    }

    /// For the encoder and decryption, which keep every coefficient below `t`.
    pub(crate) fn coeffs_mut(&mut self) -> &mut [u32] {
        self.coeffs.as_mut()
    }
}

impl<P: Params> Clone for Plaintext<P> {
    fn clone(&self) -> Self {
        Self {
            coeffs: self.coeffs.clone(),
        }
    }
}

impl<P: Params> PartialEq for Plaintext<P> {
    fn eq(&self, other: &Self) -> bool {
        self.coeffs() == other.coeffs()
    }
}

impl<P: Params> Eq for Plaintext<P> {}

impl<P: Params> core::fmt::Debug for Plaintext<P> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        // The coefficients may be secret readings: not printed.
        write!(f, "Plaintext<{}>(..)", P::NAME)
    }
}

impl<P: Params> Drop for Plaintext<P> {
    fn drop(&mut self) {
        self.coeffs.as_mut().zeroize();
    }
}

/// Checks that every value is below `t`, in constant time until the verdict (the values may
/// be secret sensor data): one branch on the accumulated mask.
pub(crate) fn check_below_t(values: &[u32], t: u32) -> Result<(), Error> {
    let mut bad = 0u32;
    for &v in values.iter() {
        bad |= !ct::mask_lt(v, t);
    }
    if bad == 0 {
        return Ok(());
    }
    // Error path only: find the first offending value to report it.
    match values.iter().position(|&v| v >= t) {
        Some(index) => Err(Error::PlaintextOutOfRange { index, t }),
        None => Ok(()),
    }
}
