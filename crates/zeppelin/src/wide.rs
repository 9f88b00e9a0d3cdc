//! Fixed-width unsigned integers of 256 bits, for what needs `Q` itself: its bit length at
//! compile time and the CRT reconstruction of the noise diagnostic. `Q` has at most
//! `MAX_PRIMES · 28 = 224` bits, so `Q · t` and sums of `K` values below `Q` fit.
//! Variable time: never used on the constant-time paths.

use core::cmp::Ordering;

/// A 256-bit unsigned integer, little-endian 64-bit limbs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Wide([u64; 4]);

impl Wide {
    pub(crate) const ZERO: Self = Self([0; 4]);
    pub(crate) const ONE: Self = Self([1, 0, 0, 0]);

    /// `self · m`; the caller keeps the product below `2^256`.
    pub(crate) const fn mul_u32(self, m: u32) -> Self {
        let mut out = [0u64; 4];
        let mut carry = 0u128;
        let mut i = 0;
        while i < 4 {
            let p = self.0[i] as u128 * m as u128 + carry;
            out[i] = p as u64;
            carry = p >> 64;
            i += 1;
        }
        Self(out)
    }

    /// Number of significant bits.
    pub(crate) const fn bits(self) -> u32 {
        let mut i = 4;
        while i > 0 {
            i -= 1;
            if self.0[i] != 0 {
                return 64 * i as u32 + 64 - self.0[i].leading_zeros();
            }
        }
        0
    }

    pub(crate) fn add(self, other: Self) -> Self {
        let mut out = [0u64; 4];
        let mut carry = false;
        for (o, (&a, &b)) in out.iter_mut().zip(self.0.iter().zip(&other.0)) {
            let (s, c1) = a.overflowing_add(b);
            let (s, c2) = s.overflowing_add(u64::from(carry));
            *o = s;
            carry = c1 | c2;
        }
        Self(out)
    }

    /// `self − other` for `self >= other`.
    pub(crate) fn sub(self, other: Self) -> Self {
        let mut out = [0u64; 4];
        let mut borrow = false;
        for (o, (&a, &b)) in out.iter_mut().zip(self.0.iter().zip(&other.0)) {
            let (d, b1) = a.overflowing_sub(b);
            let (d, b2) = d.overflowing_sub(u64::from(borrow));
            *o = d;
            borrow = b1 | b2;
        }
        Self(out)
    }

    pub(crate) fn cmp(&self, other: &Self) -> Ordering {
        for i in (0..4).rev() {
            match self.0[i].cmp(&other.0[i]) {
                Ordering::Equal => continue,
                o => return o,
            }
        }
        Ordering::Equal
    }

    /// `self mod m` for `self < k·m` with small `k`, by repeated subtraction.
    pub(crate) fn reduce(mut self, m: &Self) -> Self {
        while self.cmp(m) != Ordering::Less {
            self = self.sub(*m);
        }
        self
    }

    /// `(self · k) mod m` for `self < m`, by doubling and adding (17 steps for `k < 2^17`).
    pub(crate) fn mul_mod(self, k: u32, m: &Self) -> Self {
        let mut acc = Self::ZERO;
        for bit in (0..32 - k.leading_zeros()).rev() {
            acc = acc.add(acc).reduce(m);
            if k >> bit & 1 == 1 {
                acc = acc.add(self).reduce(m);
            }
        }
        acc
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arithmetic_matches_u128() {
        let m = Wide::ONE
            .mul_u32(134_176_769)
            .mul_u32(134_111_233)
            .mul_u32(3);
        let m128 = 134_176_769u128 * 134_111_233 * 3;
        let a = m.mul_u32(4).add(Wide::ONE.mul_u32(0xdead_beef));
        let a128 = m128 * 4 + 0xdead_beef;
        let r = a.reduce(&m).mul_mod(65537, &m);
        let r128 = (a128 % m128) * 65537 % m128;
        assert_eq!(r, Wide([r128 as u64, (r128 >> 64) as u64, 0, 0]));
        assert_eq!(m.bits(), 128 - m128.leading_zeros());
        assert_eq!(a.add(m).sub(m), a);
    }
}
