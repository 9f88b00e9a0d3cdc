//! The scalar constants every Helium kernel takes.

use crate::modulus::Modulus;

/// Scalar constants every kernel needs.
#[derive(Clone, Copy)]
pub(super) struct Consts {
    pub(super) q: u32,
    pub(super) two_q: u32,
    /// `q^-1 mod 2^32`.
    pub(super) q_inv: u32,
}

impl Consts {
    pub(super) fn new(m: &Modulus) -> Self {
        let q = m.value();
        Self {
            q,
            two_q: 2 * q,
            q_inv: m.q_inv_neg().wrapping_neg(),
        }
    }

    /// `w·q^-1 mod 2^32`: multiplying a lane by it gives the Montgomery quotient directly.
    #[inline(always)]
    pub(super) fn quotient_factor(&self, w: u32) -> u32 {
        w.wrapping_mul(self.q_inv)
    }
}
