//! A prime modulus below 2^30 with constant-time 32-bit Montgomery arithmetic (radix 2^32).
//!
//! Values in normal form live in `[0, q)`. Montgomery form (`a·2^32 mod q`) is used only
//! for precomputed constants such as NTT twiddles, so that one Montgomery multiplication by a
//! constant yields a normal-form product. No operation divides, and every final reduction is
//! a mask ([`crate::ct::reduce_once`]), so the running time does not depend on the values.

use crate::ct;
use crate::error::RingError;

/// Largest modulus (exclusive) this core accepts: lazy NTT values stay below `4q < 2^32`.
pub const MODULUS_BOUND: u32 = 1 << 30;

/// A prime modulus `q < 2^30` with its Montgomery and Barrett constants.
///
/// ```
/// use zeppelin_ring::Modulus;
/// let q = Modulus::new(134_176_769).unwrap();
/// assert_eq!(q.mul(q.value() - 1, q.value() - 1), 1);
/// assert_eq!(q.inv(3).map(|i| q.mul(i, 3)), Some(1));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Modulus {
    q: u32,
    /// `-q^-1 mod 2^32`.
    q_inv_neg: u32,
    /// `2^64 mod q`: multiplying by it in Montgomery converts to Montgomery form.
    r2: u32,
    /// `floor(2^64 / q)` for Barrett reduction of 64-bit values.
    barrett: u64,
}

/// A constant in Montgomery form (`x·2^32 mod m` for the modulus `m` that made it, by
/// [`Modulus::mont`]): a distinct type, so a kernel that multiplies by a Montgomery constant
/// cannot be handed a value in normal form.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(transparent)]
pub struct Mont(u32);

impl Mont {
    /// The Montgomery form of 0 (for every modulus).
    pub const ZERO: Mont = Mont(0);

    /// A word already in Montgomery form (inside the crate: kernels that take raw words).
    #[cfg(any(test, all(target_arch = "arm", zeppelin_mve)))]
    #[inline(always)]
    pub(crate) const fn from_word(word: u32) -> Mont {
        Mont(word)
    }

    /// The stored word `x·2^32 mod m`.
    #[inline(always)]
    pub const fn get(self) -> u32 {
        self.0
    }
}

impl Modulus {
    /// Checks that `q` is an odd prime below 2^30 and precomputes its constants.
    pub const fn new(q: u32) -> Result<Self, RingError> {
        if q < 3 || q & 1 == 0 || q >= MODULUS_BOUND {
            return Err(RingError::ModulusOutOfRange { modulus: q as u64 });
        }
        if !is_prime(q) {
            return Err(RingError::ModulusNotPrime { modulus: q });
        }
        Ok(Self::new_unchecked_prime(q))
    }

    /// Like [`Modulus::new`] for an odd modulus that need not be prime (for example a
    /// product used only for additions and multiplications). Inverses are then meaningless.
    pub const fn new_odd(q: u32) -> Result<Self, RingError> {
        if q < 3 || q & 1 == 0 || q >= MODULUS_BOUND {
            return Err(RingError::ModulusOutOfRange { modulus: q as u64 });
        }
        Ok(Self::new_unchecked_prime(q))
    }

    const fn new_unchecked_prime(q: u32) -> Self {
        // Newton iteration: each step doubles the number of correct low bits of q^-1.
        let mut inv = q;
        let mut i = 0;
        while i < 5 {
            inv = inv.wrapping_mul(2u32.wrapping_sub(q.wrapping_mul(inv)));
            i += 1;
        }
        // Setup only, on a public value: division is fine here.
        let r2 = ((1u128 << 64) % q as u128) as u32;
        let barrett = ((1u128 << 64) / q as u128) as u64;
        Self {
            q,
            q_inv_neg: inv.wrapping_neg(),
            r2,
            barrett,
        }
    }

    /// The modulus `q`.
    #[inline(always)]
    pub const fn value(&self) -> u32 {
        self.q
    }

    /// `-q^-1 mod 2^32`, for backends that implement their own Montgomery reduction.
    #[inline(always)]
    pub const fn q_inv_neg(&self) -> u32 {
        self.q_inv_neg
    }

    /// Montgomery reduction of `x < q·2^32`: returns `x·2^-32 mod q` in `[0, 2q)`.
    #[inline(always)]
    pub const fn redc_lazy(&self, x: u64) -> u32 {
        let m = (x as u32).wrapping_mul(self.q_inv_neg);
        // x + m·q < q·2^32 + 2^32·q < 2^63, and is divisible by 2^32.
        ((x + m as u64 * self.q as u64) >> 32) as u32
    }

    /// Montgomery product `a·b·2^-32 mod q` in `[0, 2q)`, for `a·b < q·2^32`
    /// (for instance `a < 4q` and `b < q`, the lazy NTT butterfly).
    #[inline(always)]
    pub const fn mont_mul_lazy(&self, a: u32, b: u32) -> u32 {
        self.redc_lazy(a as u64 * b as u64)
    }

    /// Montgomery product `a·b·2^-32 mod q` in `[0, q)`, for `a·b < q·2^32`.
    #[inline(always)]
    pub const fn mont_mul(&self, a: u32, b: u32) -> u32 {
        ct::reduce_once(self.mont_mul_lazy(a, b), self.q)
    }

    /// `a·2^32 mod q`: the Montgomery form of `a < 2^32`.
    #[inline(always)]
    pub const fn to_mont(&self, a: u32) -> u32 {
        self.mont_mul(a, self.r2)
    }

    /// `a·2^-32 mod q`: back from Montgomery form.
    #[inline(always)]
    pub const fn from_mont(&self, a: u32) -> u32 {
        ct::reduce_once(self.redc_lazy(a as u64), self.q)
    }

    /// `a + b mod q` for `a, b < q`.
    #[inline(always)]
    pub const fn add(&self, a: u32, b: u32) -> u32 {
        ct::reduce_once(a + b, self.q)
    }

    /// `a - b mod q` for `a, b < q`.
    #[inline(always)]
    pub const fn sub(&self, a: u32, b: u32) -> u32 {
        ct::reduce_once(a + self.q - b, self.q)
    }

    /// `-a mod q` for `a < q` (zero stays zero).
    #[inline(always)]
    pub const fn neg(&self, a: u32) -> u32 {
        ct::reduce_once(self.q - a, self.q)
    }

    /// `a·b mod q` for `a, b < q`: two Montgomery multiplications, no division.
    #[inline(always)]
    pub const fn mul(&self, a: u32, b: u32) -> u32 {
        self.mont_mul(self.mont_mul_lazy(a, b), self.r2)
    }

    /// `a·b mod q` where `b_mont` is the Montgomery form of `b` (see [`Modulus::mont`]):
    /// one Montgomery multiplication. Requires `a < 4q`.
    #[inline(always)]
    pub const fn mul_mont_constant(&self, a: u32, b_mont: Mont) -> u32 {
        self.mont_mul(a, b_mont.0)
    }

    /// The Montgomery form `a·2^32 mod q` of `a`, typed so that it cannot be mistaken for a
    /// value in normal form.
    #[inline(always)]
    pub const fn mont(&self, a: u32) -> Mont {
        Mont(self.to_mont(a))
    }

    /// `x mod q` for any 64-bit `x`, by Barrett reduction (no division, constant time).
    #[inline(always)]
    pub const fn reduce_u64(&self, x: u64) -> u32 {
        let quotient = ((x as u128 * self.barrett as u128) >> 64) as u64;
        // The estimate is at most 2 below the true quotient, so the remainder is < 3q < 2^32.
        let r = x.wrapping_sub(quotient.wrapping_mul(self.q as u64)) as u32;
        ct::reduce_once(ct::reduce_once(r, 2 * self.q), self.q)
    }

    /// `x mod q` for any 32-bit `x`.
    #[inline(always)]
    pub const fn reduce_u32(&self, x: u32) -> u32 {
        self.reduce_u64(x as u64)
    }

    /// `x mod q` for a signed `x` with `|x| < 2^63`, constant time.
    #[inline(always)]
    pub const fn reduce_i64(&self, x: i64) -> u32 {
        let negative = ct::mask_from_msb((x >> 32) as u32);
        let magnitude = self.reduce_u64(x.unsigned_abs());
        ct::select(negative, self.neg(magnitude), magnitude)
    }

    /// The centred representative of `a < q`: `a` if `a <= (q-1)/2`, else `a - q`.
    #[inline(always)]
    pub const fn centered(&self, a: u32) -> i32 {
        let upper = !ct::mask_lt((self.q - 1) / 2, a);
        ct::select(upper, a, a.wrapping_sub(self.q)) as i32
    }

    /// `base^exp mod q`. The exponent is treated as public (square and multiply branches on it).
    pub const fn pow(&self, base: u32, mut exp: u64) -> u32 {
        let mut result = 1 % self.q;
        let mut b = self.reduce_u32(base);
        while exp > 0 {
            if exp & 1 == 1 {
                result = self.mul(result, b);
            }
            b = self.mul(b, b);
            exp >>= 1;
        }
        result
    }

    /// `a^-1 mod q` for a prime modulus, by Fermat; `None` for `a ≡ 0`.
    pub const fn inv(&self, a: u32) -> Option<u32> {
        let a = self.reduce_u32(a);
        if a == 0 {
            return None;
        }
        Some(self.pow(a, self.q as u64 - 2))
    }
}

/// Deterministic Miller–Rabin for 32-bit integers (bases 2, 3, 5, 7 suffice below 3.2·10^9).
pub const fn is_prime(n: u32) -> bool {
    if n < 2 {
        return false;
    }
    let small = [2u32, 3, 5, 7];
    let mut i = 0;
    while i < small.len() {
        if n == small[i] {
            return true;
        }
        if n.is_multiple_of(small[i]) {
            return false;
        }
        i += 1;
    }
    let mut d = n as u64 - 1;
    let mut s = 0;
    while d.is_multiple_of(2) {
        d /= 2;
        s += 1;
    }
    let n64 = n as u64;
    let mut k = 0;
    while k < small.len() {
        let mut x = pow_mod_u64(small[k] as u64, d, n64);
        if x != 1 && x != n64 - 1 {
            let mut r = 1;
            let mut witness = true;
            while r < s {
                x = x * x % n64;
                if x == n64 - 1 {
                    witness = false;
                    break;
                }
                r += 1;
            }
            if witness {
                return false;
            }
        }
        k += 1;
    }
    true
}

const fn pow_mod_u64(mut b: u64, mut e: u64, m: u64) -> u64 {
    let mut r = 1 % m;
    b %= m;
    while e > 0 {
        if e & 1 == 1 {
            r = r * b % m;
        }
        b = b * b % m;
        e >>= 1;
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const PRIMES: [u32; 6] = [
        65537,
        134_176_769,
        134_111_233,
        134_012_929,
        268_369_921,
        1_061_093_377,
    ];

    #[test]
    fn rejects_bad_moduli() {
        assert_eq!(
            Modulus::new(2),
            Err(RingError::ModulusOutOfRange { modulus: 2 })
        );
        assert_eq!(
            Modulus::new(1 << 30 | 1),
            Err(RingError::ModulusOutOfRange {
                modulus: (1 << 30) + 1
            })
        );
        assert_eq!(
            Modulus::new(65535),
            Err(RingError::ModulusNotPrime { modulus: 65535 })
        );
        assert!(Modulus::new(1_073_741_789).is_ok()); // the largest prime below 2^30
    }

    #[test]
    fn primality_matches_trial_division() {
        for n in 0u32..20_000 {
            let trial = n >= 2 && (2..n).take_while(|d| d * d <= n).all(|d| n % d != 0);
            assert_eq!(is_prime(n), trial, "{n}");
        }
    }

    proptest! {
        #[test]
        fn arithmetic_matches_u128(a in any::<u32>(), b in any::<u32>(), x in any::<u64>(), s in any::<i64>(), idx in 0usize..6) {
            let q = PRIMES[idx];
            let m = Modulus::new(q).unwrap();
            let (a, b) = (a % q, b % q);
            let big = q as u128;
            prop_assert_eq!(m.add(a, b) as u128, (a as u128 + b as u128) % big);
            prop_assert_eq!(m.sub(a, b) as u128, (a as u128 + big - b as u128) % big);
            prop_assert_eq!(m.neg(a) as u128, (big - a as u128) % big);
            prop_assert_eq!(m.mul(a, b) as u128, a as u128 * b as u128 % big);
            prop_assert_eq!(m.reduce_u64(x) as u128, x as u128 % big);
            let s = s >> 1;
            prop_assert_eq!(m.reduce_i64(s) as i128, (s as i128).rem_euclid(q as i128));
            prop_assert_eq!(m.from_mont(m.to_mont(a)), a);
            prop_assert_eq!(m.mul_mont_constant(a, m.mont(b)), m.mul(a, b));
            let c = m.centered(a) as i64;
            prop_assert!(c.rem_euclid(q as i64) == a as i64 && 2 * c.abs() < q as i64);
            if a != 0 {
                prop_assert_eq!(m.mul(m.inv(a).unwrap(), a), 1);
            }
        }

        #[test]
        fn lazy_montgomery_stays_below_2q(a in any::<u32>(), b in any::<u32>(), idx in 0usize..6) {
            let q = PRIMES[idx];
            let m = Modulus::new(q).unwrap();
            let (a, b) = (a % (4 * q), b % q);
            let r = m.mont_mul_lazy(a, b);
            prop_assert!(r < 2 * q);
            prop_assert_eq!(m.mul(r % q, m.to_mont(1)) as u128, (a as u128 * b as u128) % q as u128);
        }
    }
}
