//! Constant-time helpers: every choice is a mask, never a branch.
//!
//! The functions here are the only place where the project turns a comparison into a mask,
//! so the binary audit has one shape to look for.

/// All ones if `x` has its top bit set, else zero.
#[inline(always)]
pub const fn mask_from_msb(x: u32) -> u32 {
    0u32.wrapping_sub(x >> 31)
}

/// All ones if `a < b` (unsigned), else zero. Valid for any `a`, `b`.
#[inline(always)]
pub const fn mask_lt(a: u32, b: u32) -> u32 {
    // The borrow of a - b, computed without a comparison instruction.
    let borrow = ((!a & b) | (!(a ^ b) & a.wrapping_sub(b))) >> 31;
    0u32.wrapping_sub(borrow)
}

/// All ones if `x == 0`, else zero.
#[inline(always)]
pub const fn mask_is_zero(x: u32) -> u32 {
    // (x | -x) has its top bit set exactly when x != 0.
    !mask_from_msb(x | x.wrapping_neg())
}

/// `a` where `mask` is all ones, `b` where it is zero.
#[inline(always)]
pub const fn select(mask: u32, a: u32, b: u32) -> u32 {
    b ^ (mask & (a ^ b))
}

/// `x - m` if `x >= m`, else `x`; requires `x < 2^31 + m` and `m < 2^31`.
#[inline(always)]
pub const fn reduce_once(x: u32, m: u32) -> u32 {
    let y = x.wrapping_sub(m);
    y.wrapping_add(m & mask_from_msb(y))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masks_match_comparisons() {
        let samples = [
            0u32,
            1,
            2,
            3,
            0x7fff_ffff,
            0x8000_0000,
            0x8000_0001,
            u32::MAX - 1,
            u32::MAX,
        ];
        for &a in &samples {
            assert_eq!(mask_is_zero(a), if a == 0 { u32::MAX } else { 0 });
            assert_eq!(mask_from_msb(a), if a >> 31 == 1 { u32::MAX } else { 0 });
            for &b in &samples {
                assert_eq!(mask_lt(a, b), if a < b { u32::MAX } else { 0 }, "{a} < {b}");
                assert_eq!(select(u32::MAX, a, b), a);
                assert_eq!(select(0, a, b), b);
            }
        }
    }

    #[test]
    fn reduce_once_is_conditional_subtraction() {
        let m = 134_176_769u32;
        for x in [0, 1, m - 1, m, m + 1, 2 * m - 1, (1 << 31) + m - 1] {
            assert_eq!(reduce_once(x, m), if x >= m { x - m } else { x });
        }
    }
}
