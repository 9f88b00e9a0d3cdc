//! What the AVX2 and AVX-512 backends share: a [`Lanes`] trait over their 32-bit lane
//! vectors (8 or 16 lanes) and every kernel written once on top of it (the pointwise
//! products, the client kernels, the centred lift, the key-switch sums; the NTT is in
//! `shoup_ntt.rs`, on the same trait).
//!
//! A [`Lanes`] implementation is the backend's detection token itself ([`super::Avx2`],
//! [`super::Avx512`]): holding one proves the CPU has the instructions, which is what makes
//! its safe methods sound. Every method is `#[inline(always)]` and the kernels here are
//! `#[inline(always)]` too; each backend instantiates them inside one
//! `#[target_feature(enable = ...)]` function per operation, so that the whole kernel is
//! compiled for the instruction set with no call left inside the loops.
//!
//! Every kernel computes exactly what its portable counterpart ([`crate::Portable`])
//! computes, lane for lane: the same Montgomery reductions (`m = lo(x)·(−q⁻¹)`,
//! `(x + m·q) / 2^32`) and the same masked final subtractions (`min(x, x − m)` on unsigned
//! lanes, which equals [`crate::ct::reduce_once`] under the same preconditions). The NTT
//! computes the same transform by other means (Shoup products, its own lazy bounds), so its
//! results, reduced below `q`, are equal too.

use crate::modulus::Modulus;
use crate::rns::MAX_LAZY_TERMS;

/// A 32-bit-lane vector instruction set, implemented by its detection token.
///
/// 64-bit operations (`*64`, [`Lanes::mul_even`]) see the vector as `WIDTH / 2` lanes of 64
/// bits; a "32-bit lane pair" is one such lane.
pub(crate) trait Lanes: Copy {
    /// The vector of `WIDTH` `u32` lanes.
    type V: Copy;
    /// The result of a lane comparison.
    type Mask: Copy;
    /// What a small NTT stage (butterfly distance 1, 2, 4 or 8) needs: lane permutations.
    type Small: Copy;
    /// Lanes per vector.
    const WIDTH: usize;

    /// # Safety
    /// `p` valid for reading `WIDTH` `u32` (unaligned).
    unsafe fn load(self, p: *const u32) -> Self::V;
    /// # Safety
    /// `p` valid for writing `WIDTH` `u32` (unaligned).
    unsafe fn store(self, p: *mut u32, v: Self::V);
    /// `x` in every 32-bit lane.
    fn splat(self, x: u32) -> Self::V;
    /// `x` in every 64-bit lane.
    fn splat64(self, x: u64) -> Self::V;
    fn zero(self) -> Self::V;
    fn add32(self, a: Self::V, b: Self::V) -> Self::V;
    fn sub32(self, a: Self::V, b: Self::V) -> Self::V;
    /// Low 32 bits of the lane products.
    fn mullo32(self, a: Self::V, b: Self::V) -> Self::V;
    /// Unsigned lane minimum.
    fn min_u32(self, a: Self::V, b: Self::V) -> Self::V;
    fn add64(self, a: Self::V, b: Self::V) -> Self::V;
    fn sub64(self, a: Self::V, b: Self::V) -> Self::V;
    /// Per 64-bit lane: the 64-bit product of the low 32 bits of `a` and `b`.
    fn mul_even(self, a: Self::V, b: Self::V) -> Self::V;
    /// Per 64-bit lane: shift right by 32.
    fn shr64(self, a: Self::V) -> Self::V;
    /// Per 64-bit lane: shift left by 32.
    fn shl64(self, a: Self::V) -> Self::V;
    fn and(self, a: Self::V, b: Self::V) -> Self::V;
    fn or(self, a: Self::V, b: Self::V) -> Self::V;
    /// Even 32-bit lanes from `even`, odd ones from `odd`.
    fn blend_odd(self, even: Self::V, odd: Self::V) -> Self::V;
    /// The high halves of two vectors of 64-bit products as one vector of 32-bit lanes:
    /// `hi(even)` in the even lanes, `hi(odd)` in the odd ones.
    #[inline(always)]
    fn high_halves(self, even: Self::V, odd: Self::V) -> Self::V {
        self.blend_odd(self.shr64(even), odd)
    }
    /// Unsigned `a > b` per lane.
    fn gt_u32(self, a: Self::V, b: Self::V) -> Self::Mask;
    /// `a − b` in the lanes of `mask`, `src` elsewhere.
    fn select_sub(self, src: Self::V, mask: Self::Mask, a: Self::V, b: Self::V) -> Self::V;
    /// `v − 1` in the lanes of `mask`, `v` elsewhere (no branch: a masked or plain add).
    fn decrement_where(self, v: Self::V, mask: Self::Mask) -> Self::V;
    /// Stores the lanes of `v` selected by `mask`, in lane order, at `p`; returns how many
    /// (the lanes after them may be overwritten with anything).
    ///
    /// # Safety
    /// `p` valid for writing `WIDTH` `u32` (unaligned).
    unsafe fn compress_store(self, p: *mut u32, mask: Self::Mask, v: Self::V) -> usize;
    /// `WIDTH` signed bytes at `p`, sign-extended to 32-bit lanes.
    ///
    /// # Safety
    /// `p` valid for reading `WIDTH` bytes (unaligned).
    unsafe fn load_i8(self, p: *const i8) -> Self::V;
    /// Stores the low byte of every lane (`WIDTH` bytes, in lane order) at `p`.
    ///
    /// # Safety
    /// `p` valid for writing `WIDTH` bytes (unaligned).
    unsafe fn store_low_bytes(self, p: *mut i8, v: Self::V);

    /// The permutations of a stage with butterfly distance `h` in {1, 2, 4, 8} (at most
    /// `WIDTH`).
    fn small_stage(self, h: usize) -> Self::Small;
    /// A `2·WIDTH`-coefficient chunk `[a | b]` to the butterfly inputs `x` and their partners
    /// `y = x + h`, in the lane order [`Lanes::small_twiddles`] follows.
    fn split(self, s: &Self::Small, a: Self::V, b: Self::V) -> (Self::V, Self::V);
    /// The inverse of [`Lanes::split`].
    fn merge(self, s: &Self::Small, x: Self::V, y: Self::V) -> (Self::V, Self::V);
    /// What [`Lanes::restage`] needs to go from the layout of one small stage to another's.
    type Restage: Copy;
    /// The [`Lanes::Restage`] from the `split` layout of distance `from` to that of `to`.
    fn restage_for(self, from: usize, to: usize) -> Self::Restage;
    /// `split(to) ∘ merge(from)` of a chunk, in one step where the instruction set allows.
    fn restage(self, r: &Self::Restage, x: Self::V, y: Self::V) -> (Self::V, Self::V);
    /// The twiddles of the butterflies of [`Lanes::split`], for a chunk whose groups start at
    /// `table[first_group]` (`WIDTH / h` consecutive entries).
    ///
    /// # Safety
    /// `table` holds at least `first_group + WIDTH / h` entries.
    unsafe fn small_twiddles(self, s: &Self::Small, table: &[u32], first_group: usize) -> Self::V;
    /// Whether the `split` layout of distance 1 puts butterfly `i` of a chunk in lane `i`, so
    /// that its twiddles are one plain load (AVX-512; AVX2's shuffles work per 128-bit half).
    const SEQUENTIAL_UNIT_STAGE: bool;
}

/// Per-modulus vector constants.
#[derive(Clone, Copy)]
pub(crate) struct Consts<V> {
    q: V,
    q_inv_neg: V,
}

#[inline(always)]
fn consts<L: Lanes>(l: L, m: &Modulus) -> Consts<L::V> {
    Consts {
        q: l.splat(m.value()),
        q_inv_neg: l.splat(m.q_inv_neg()),
    }
}

/// `2^64 mod q`, the constant that turns a Montgomery product back into a plain product.
fn r2(m: &Modulus) -> u32 {
    m.to_mont(m.to_mont(1))
}

/// `min(x, x − m)` per unsigned lane: `x − m` if `x >= m`, else `x` (for `x < 2^31 + m`).
/// Also right for 64-bit lanes whose value is below `2^31 + m` and whose high half is zero
/// (`m` in the low halves only): the high halves stay zero.
#[inline(always)]
pub(crate) fn reduce_once<L: Lanes>(l: L, x: L::V, m: L::V) -> L::V {
    l.min_u32(x, l.sub32(x, m))
}

/// Montgomery product `a·b·2^-32` in `[0, 2q)` per lane, for `a·b < q·2^32`: exactly
/// [`Modulus::mont_mul_lazy`].
#[inline(always)]
fn mont_mul_lazy<L: Lanes>(l: L, a: L::V, b: L::V, c: &Consts<L::V>) -> L::V {
    let p_even = l.mul_even(a, b);
    let p_odd = l.mul_even(l.shr64(a), l.shr64(b));
    // m = lo(p)·(−q⁻¹) mod 2^32 sits in the low half of each 64-bit lane.
    let m_even = l.mul_even(p_even, c.q_inv_neg);
    let m_odd = l.mul_even(p_odd, c.q_inv_neg);
    let t_even = l.add64(p_even, l.mul_even(m_even, c.q));
    let t_odd = l.add64(p_odd, l.mul_even(m_odd, c.q));
    // High halves: even lanes shifted down, odd lanes already in place.
    l.blend_odd(l.shr64(t_even), t_odd)
}

/// [`mont_mul_lazy`] by a broadcast constant `b`, with `bq` the broadcast of
/// `b·(−q⁻¹) mod 2^32` (see [`by_constant`]): the Montgomery quotient
/// `lo(a·b)·(−q⁻¹) = lo(a·bq)` is one product instead of two. Same result (the quotient's low
/// 32 bits are equal).
#[inline(always)]
fn mont_mul_lazy_by<L: Lanes>(l: L, a: L::V, b: L::V, bq: L::V, c: &Consts<L::V>) -> L::V {
    let a_odd = l.shr64(a);
    let p_even = l.mul_even(a, b);
    let p_odd = l.mul_even(a_odd, b);
    let m_even = l.mul_even(a, bq);
    let m_odd = l.mul_even(a_odd, bq);
    let t_even = l.add64(p_even, l.mul_even(m_even, c.q));
    let t_odd = l.add64(p_odd, l.mul_even(m_odd, c.q));
    l.blend_odd(l.shr64(t_even), t_odd)
}

/// The broadcasts `b` and `b·(−q⁻¹) mod 2^32` for [`mont_mul_lazy_by`], made opaque to the
/// optimiser (one store and load, outside the loops): knowing them to be broadcasts, LLVM
/// rewrites the quotient into a 64-bit product, which AVX2 and AVX-512F do not have (three
/// multiplications per half instead of one).
#[inline(always)]
fn by_constant<L: Lanes>(l: L, m: &Modulus, b: u32) -> (L::V, L::V) {
    core::hint::black_box((l.splat(b), l.splat(b.wrapping_mul(m.q_inv_neg()))))
}

/// `y·w mod q` in `[0, 2q)` per lane for `w_shoup = floor(w·2^32/q)` (the portable Shoup
/// product); `w_shoup_odd` holds the odd lanes' companions in the low halves
/// (`w_shoup >> 32` per 64-bit lane, or `w_shoup` itself for a broadcast).
#[inline(always)]
pub(crate) fn shoup_mul_lazy<L: Lanes>(
    l: L,
    y: L::V,
    w: L::V,
    w_shoup: L::V,
    w_shoup_odd: L::V,
    q: L::V,
) -> L::V {
    let quotient = l.high_halves(l.mul_even(y, w_shoup), l.mul_even(l.shr64(y), w_shoup_odd));
    l.sub32(l.mullo32(y, w), l.mullo32(quotient, q))
}

/// `out[j] = a[j]·b[j] mod q` (with `ACCUMULATE`, `out[j] + a[j]·b[j] mod q`) for the
/// `j < len` of whole vectors; returns how many elements that is (`len` rounded down to a
/// multiple of `WIDTH`). `a` may be `out` (each vector is read before it is written).
///
/// # Safety
/// `a`, `b` valid for reading `len` `u32`, `out` for reading and writing as many; `b` does
/// not overlap `out`, and `a` is either `out` or does not overlap it.
#[inline(always)]
pub(crate) unsafe fn pointwise<L: Lanes, const ACCUMULATE: bool>(
    l: L,
    m: &Modulus,
    a: *const u32,
    b: *const u32,
    out: *mut u32,
    len: usize,
) -> usize {
    let c = consts(l, m);
    let r2 = by_constant(l, m, r2(m));
    let done = len - len % L::WIDTH;
    for j in (0..done).step_by(L::WIDTH) {
        // SAFETY: j + WIDTH <= done <= len, the caller's ranges.
        unsafe {
            let x = l.load(a.add(j));
            let y = l.load(b.add(j));
            // Modulus::mul: mont_mul(mont_mul_lazy(x, y), 2^64 mod q).
            let p = mont_mul_lazy(l, x, y, &c);
            let mut p = mont_mul_by(l, p, r2, &c);
            let po = out.add(j);
            if ACCUMULATE {
                p = add_mod(l, l.load(po), p, c.q);
            }
            l.store(po, p);
        }
    }
    done
}

/// [`crate::ClientKernels::cdt_scan`] on the whole vectors of `words`; returns how many
/// words that is. Constant time: every word is compared with every entry, the counts move
/// by masks, and no address depends on a word.
#[inline(always)]
pub(crate) fn cdt_scan<L: Lanes>(
    l: L,
    words: &[u32],
    cdt: &[u32],
    base: i32,
    out: &mut [i8],
) -> usize {
    let low31 = l.splat((1 << 31) - 1);
    let start = l.splat(base as u32);
    let done = words.len().min(out.len()) / L::WIDTH * L::WIDTH;
    for j in (0..done).step_by(L::WIDTH) {
        // SAFETY: j + WIDTH <= done <= both lengths.
        let r = l.and(unsafe { l.load(words.as_ptr().add(j)) }, low31);
        let mut count = start;
        for &c in cdt {
            // r < c as c > r (both below 2^32, unsigned): −1 in those lanes.
            count = l.decrement_where(count, l.gt_u32(l.splat(c), r));
        }
        // SAFETY: j + WIDTH <= done <= out.len().
        unsafe { l.store_low_bytes(out.as_mut_ptr().add(j), count) };
    }
    done
}

/// [`crate::ClientKernels::cdt_scan_symmetric`] on the whole vectors of `words`; returns how
/// many words that is. With `r' = 2^31 − 1 − r` and `A(x) = #{k < B : x >= cdt[k]}`, the
/// symmetry gives `#{j : r >= cdt[j]} = A(r) + B − A(r')`, and `cdt[B − 1] < 2^30` makes one
/// of the two terms trivial: `A(s)` for `s = min(r, r')` when `r < 2^30`, else `2B − A(s)`.
/// Constant time: `B` comparisons per word, masks and selects only.
#[inline(always)]
pub(crate) fn cdt_scan_symmetric<L: Lanes>(
    l: L,
    words: &[u32],
    cdt: &[u32],
    base: i32,
    out: &mut [i8],
) -> usize {
    let half = cdt.len() / 2;
    let lower_half = &cdt[..half];
    let low31 = l.splat((1 << 31) - 1);
    let quarter = l.splat(1 << 30);
    let start = l.splat(half as u32);
    // out = base − #{j : r < cdt[j]} = base − 2B + #{j : r >= cdt[j]}.
    let base_low = l.splat((base - 2 * half as i32) as u32);
    let base_high = l.splat(base as u32);
    let done = words.len().min(out.len()) / L::WIDTH * L::WIDTH;
    for j in (0..done).step_by(L::WIDTH) {
        // SAFETY: j + WIDTH <= done <= both lengths.
        let r = l.and(unsafe { l.load(words.as_ptr().add(j)) }, low31);
        let s = l.min_u32(r, l.and(l.sub32(low31, r), low31));
        let mut a = start;
        for &c in lower_half {
            a = l.decrement_where(a, l.gt_u32(l.splat(c), s));
        }
        // r < 2^30: base − 2B + A(s); otherwise base − A(s).
        let lower = l.gt_u32(quarter, r);
        let count = l.select_sub(l.sub32(base_high, a), lower, base_low, l.sub32(l.zero(), a));
        // SAFETY: j + WIDTH <= done <= out.len().
        unsafe { l.store_low_bytes(out.as_mut_ptr().add(j), count) };
    }
    done
}

/// `a + b mod q` per lane for `a, b < q` ([`Modulus::add`]).
#[inline(always)]
fn add_mod<L: Lanes>(l: L, a: L::V, b: L::V, q: L::V) -> L::V {
    reduce_once(l, l.add32(a, b), q)
}

/// `a − b mod q` per lane for `a, b < q` ([`Modulus::sub`]).
#[inline(always)]
fn sub_mod<L: Lanes>(l: L, a: L::V, b: L::V, q: L::V) -> L::V {
    reduce_once(l, l.sub32(l.add32(a, q), b), q)
}

/// `mont_q(a, b)` in `[0, q)` per lane by a broadcast constant ([`Modulus::mont_mul`]).
#[inline(always)]
fn mont_mul_by<L: Lanes>(l: L, a: L::V, b: (L::V, L::V), c: &Consts<L::V>) -> L::V {
    reduce_once(l, mont_mul_lazy_by(l, a, b.0, b.1, c), c.q)
}

/// [`crate::ClientKernels::encrypt_finish`] on the whole vectors; returns how many elements
/// that is. Secret data: lane arithmetic and masks only.
#[inline(always)]
pub(crate) fn encrypt_finish<L: Lanes, const NEGATE: bool>(
    l: L,
    q: &Modulus,
    delta_mont: u32,
    plain: &[u32],
    carry: &[u32],
    error: &[i8],
    row: &mut [u32],
) -> usize {
    let c = consts(l, q);
    let delta = by_constant(l, q, delta_mont);
    let len = row.len().min(plain.len()).min(carry.len()).min(error.len());
    let done = len / L::WIDTH * L::WIDTH;
    for j in (0..done).step_by(L::WIDTH) {
        // SAFETY: j + WIDTH <= done <= every length.
        unsafe {
            let m = l.load(plain.as_ptr().add(j));
            let dm = add_mod(
                l,
                mont_mul_by(l, m, delta, &c),
                l.load(carry.as_ptr().add(j)),
                c.q,
            );
            // e mod q: for e < 0 the wrapped e + q is the smaller of the two.
            let e = l.load_i8(error.as_ptr().add(j));
            let e = l.min_u32(e, l.add32(e, c.q));
            let p = row.as_mut_ptr().add(j);
            let x = l.load(p);
            let y = if NEGATE {
                sub_mod(l, sub_mod(l, dm, x, c.q), e, c.q)
            } else {
                add_mod(l, add_mod(l, x, e, c.q), dm, c.q)
            };
            l.store(p, y);
        }
    }
    done
}

/// [`crate::ClientKernels::behz_accumulate`] on the whole vectors; returns how many elements
/// that is. Secret data: lane arithmetic only.
#[expect(
    clippy::too_many_arguments,
    reason = "the kernel's operands, as in ClientKernels"
)]
#[inline(always)]
pub(crate) fn behz_accumulate<L: Lanes>(
    l: L,
    q: &Modulus,
    t: &Modulus,
    scale_mont: u32,
    hat_t_mont: u32,
    hat_gamma: u32,
    x: &[u32],
    c0: &[u32],
    acc_t: &mut [u32],
    acc_gamma: &mut [u32],
) -> usize {
    let (cq, ct) = (consts(l, q), consts(l, t));
    let (scale, hat_t) = (by_constant(l, q, scale_mont), by_constant(l, t, hat_t_mont));
    let hat_gamma = l.splat(hat_gamma);
    let len = x.len().min(c0.len()).min(acc_t.len()).min(acc_gamma.len());
    let done = len / L::WIDTH * L::WIDTH;
    for j in (0..done).step_by(L::WIDTH) {
        // SAFETY: j + WIDTH <= done <= every length.
        unsafe {
            let xi = add_mod(
                l,
                l.load(x.as_ptr().add(j)),
                l.load(c0.as_ptr().add(j)),
                cq.q,
            );
            let y = mont_mul_by(l, xi, scale, &cq);
            let pt = acc_t.as_mut_ptr().add(j);
            l.store(
                pt,
                add_mod(l, l.load(pt), mont_mul_by(l, y, hat_t, &ct), ct.q),
            );
            let pg = acc_gamma.as_mut_ptr().add(j);
            l.store(pg, l.add32(l.load(pg), l.mullo32(y, hat_gamma)));
        }
    }
    done
}

/// [`crate::ClientKernels::behz_finish`] on the whole vectors; returns how many elements that
/// is. Secret data: lane arithmetic and masks only.
#[expect(
    clippy::too_many_arguments,
    reason = "the kernel's operands, as in ClientKernels"
)]
#[inline(always)]
pub(crate) fn behz_finish<L: Lanes>(
    l: L,
    t: &Modulus,
    neg_q_inv_t_mont: u32,
    neg_q_inv_gamma: u32,
    gamma_mod_t: u32,
    gamma_inv_t_mont: u32,
    acc_t: &mut [u32],
    acc_gamma: &[u32],
) -> usize {
    let c = consts(l, t);
    let neg_q_inv_t = by_constant(l, t, neg_q_inv_t_mont);
    let one = by_constant(l, t, t.to_mont(1));
    let gamma_inv_t = by_constant(l, t, gamma_inv_t_mont);
    let (neg_q_inv_gamma, gamma_mod_t) = (l.splat(neg_q_inv_gamma), l.splat(gamma_mod_t));
    let (gamma_mask, half_gamma) = (l.splat((1 << 31) - 1), l.splat((1 << 30) - 1));
    let len = acc_t.len().min(acc_gamma.len());
    let done = len / L::WIDTH * L::WIDTH;
    for j in (0..done).step_by(L::WIDTH) {
        // SAFETY: j + WIDTH <= done <= both lengths.
        unsafe {
            let pt = acc_t.as_mut_ptr().add(j);
            let z_t = mont_mul_by(l, l.load(pt), neg_q_inv_t, &c);
            let g = l.load(acc_gamma.as_ptr().add(j));
            let z_gamma = l.and(l.mullo32(g, neg_q_inv_gamma), gamma_mask);
            // Centring: minus γ mod t in the lanes with z_γ >= 2^30.
            let negative = l.gt_u32(z_gamma, half_gamma);
            let z_gamma_mod_t = l.add32(mont_mul_by(l, z_gamma, one, &c), c.q);
            let z_gamma_t = reduce_once(
                l,
                l.select_sub(z_gamma_mod_t, negative, z_gamma_mod_t, gamma_mod_t),
                c.q,
            );
            l.store(
                pt,
                mont_mul_by(l, sub_mod(l, z_t, z_gamma_t, c.q), gamma_inv_t, &c),
            );
        }
    }
    done
}

/// [`crate::ClientKernels::uniform_accept`]: whole vectors while a full vector of accepted
/// candidates cannot fill `out` (so every word of the vector is read, as the scalar loop
/// reads it), the rest by the scalar loop. Public data only.
#[inline(always)]
pub(crate) fn uniform_accept<L: Lanes>(
    l: L,
    words: &[u8],
    mask: u32,
    q: u32,
    out: &mut [u32],
) -> (usize, usize) {
    let available = words.len() / 4;
    let (mask_v, q_v) = (l.splat(mask), l.splat(q));
    let (mut read, mut written) = (0, 0);
    while read + L::WIDTH <= available && written + L::WIDTH < out.len() {
        // SAFETY: words 4·read .. 4·(read + WIDTH) are in `words`, and out[written..] has
        // more than WIDTH elements (the loop condition).
        unsafe {
            let candidate = l.and(l.load(words.as_ptr().add(4 * read).cast()), mask_v);
            let accepted = l.gt_u32(q_v, candidate);
            written += l.compress_store(out.as_mut_ptr().add(written), accepted, candidate);
        }
        read += L::WIDTH;
    }
    let (r, w) = crate::client::uniform_accept(&words[4 * read..], mask, q, &mut out[written..]);
    (read + r, written + w)
}

/// `x mod q` for `x < 2^32` per lane (Barrett with `μ = floor(2^32 / q)` in every lane).
#[inline(always)]
fn reduce_u32<L: Lanes>(l: L, x: L::V, q: L::V, mu: L::V) -> L::V {
    let hi_even = l.shr64(l.mul_even(x, mu));
    let hi_odd = l.mul_even(l.shr64(x), mu);
    let quotient = l.blend_odd(hi_even, hi_odd);
    // The estimate is at most one below the true quotient, so the remainder is < 2q.
    reduce_once(l, l.sub32(x, l.mullo32(quotient, q)), q)
}

/// The centred lift of [`crate::RnsKernels::lift_centered`] on the whole vectors of `dst`;
/// returns how many elements it handled.
///
/// # Safety
/// `src.len() == dst.len()`.
#[inline(always)]
pub(crate) unsafe fn lift_centered<L: Lanes>(
    l: L,
    src: &[u32],
    from: &Modulus,
    to: &Modulus,
    dst: &mut [u32],
) -> usize {
    let p = l.splat(from.value());
    let half = l.splat((from.value() - 1) / 2);
    let q = l.splat(to.value());
    let mu = l.splat(((1u64 << 32) / u64::from(to.value())) as u32);
    let done = dst.len() - dst.len() % L::WIDTH;
    // When every magnitude (at most (p−1)/2) is already below q — the usual case of towers
    // of similar size — the Barrett step is the identity and is skipped.
    let reduce = (from.value() - 1) / 2 >= to.value();
    for j in (0..done).step_by(L::WIDTH) {
        // SAFETY: j + WIDTH <= done <= both lengths.
        unsafe {
            let v = l.load(src.as_ptr().add(j));
            let negative = l.gt_u32(v, half);
            // |centred(v)|: p − v for the upper half, v otherwise.
            let magnitude = l.select_sub(v, negative, p, v);
            let r = if reduce {
                reduce_u32(l, magnitude, q, mu)
            } else {
                magnitude
            };
            // Negate the upper half mod q (q − 0 = q folds back to 0).
            let r = reduce_once(l, l.select_sub(r, negative, q, r), q);
            l.store(dst.as_mut_ptr().add(j), r);
        }
    }
    done
}

/// Reduces a 64-bit lane sum `s` to `s·2^-32 mod q` (`μ = floor(2^32/q)`): the high word is
/// reduced mod `q` by Barrett, then one Montgomery reduction of `(hi mod q)·2^32 + lo`. The
/// result is in the low half of each 64-bit lane, the high half zero. (`q64` holds `q` in the
/// low halves only; the 32-bit [`reduce_once`] is right on these lanes, see there.)
#[inline(always)]
fn reduce_sum<L: Lanes>(l: L, s: L::V, c: &Consts<L::V>, q64: L::V, mu: L::V) -> L::V {
    let hi = l.shr64(s);
    let quotient = l.shr64(l.mul_even(hi, mu));
    let r = l.sub64(hi, l.mul_even(quotient, c.q));
    let hi = reduce_once(l, r, q64);
    let folded = l.or(l.shl64(hi), l.and(s, l.splat64(0xffff_ffff)));
    let m = l.mul_even(folded, c.q_inv_neg);
    let t = l.shr64(l.add64(folded, l.mul_even(m, c.q)));
    reduce_once(l, t, q64)
}

/// The key-switch sums of [`crate::RnsKernels::key_switch_block`] (with the tensor of
/// [`crate::RnsKernels::tensor_key_switch_block`] when `TENSOR`) on the whole vectors of the
/// outputs; returns how many outputs it handled. `inputs = [add_a, add_b, -, -]`, or
/// `[x0, x1, y0, y1]` with `TENSOR`.
///
/// # Safety
/// The shapes passed [`crate::rns::check_key_switch`]: `out_b` and the `inputs` used are as
/// long as `out_a`, and `digits`, `key_a`, `key_b` hold at least `(count−1)·stride + len`
/// elements with `stride >= len`.
#[expect(
    clippy::too_many_arguments,
    reason = "the kernel's operands, as in RnsKernels, plus the lanes"
)]
#[inline(always)]
pub(crate) unsafe fn key_switch<L: Lanes, const TENSOR: bool>(
    l: L,
    m: &Modulus,
    count: usize,
    stride: usize,
    [digits, key_a, key_b]: [&[u32]; 3],
    inputs: [&[u32]; 4],
    out_a: &mut [u32],
    out_b: &mut [u32],
) -> usize {
    let [add_a, add_b, y0s, y1s] = inputs;
    let (x0s, x1s) = (add_a, add_b);
    let c = consts(l, m);
    let r2 = by_constant(l, m, r2(m));
    let zero = l.zero();
    let mu = l.splat64((1u64 << 32) / u64::from(m.value()));
    let q64 = l.splat64(u64::from(m.value()));
    let len = out_a.len() - out_a.len() % L::WIDTH;
    let load = |s: &[u32], at: usize| -> L::V {
        // SAFETY: every caller passes at + WIDTH <= s.len() (see the contract: at is
        // i·stride + j with i < count and j + WIDTH <= len).
        unsafe { l.load(s.as_ptr().add(at)) }
    };
    for j in (0..len).step_by(L::WIDTH) {
        let (mut acc_a, mut acc_b) = if TENSOR {
            (zero, zero)
        } else {
            (load(add_a, j), load(add_b, j))
        };
        let mut first = 0;
        let mut tensor_pending = TENSOR;
        while first < count || tensor_pending {
            // The tensor adds up to two products to a sum: fewer digits in that chunk.
            let cap = if tensor_pending {
                MAX_LAZY_TERMS - 2
            } else {
                MAX_LAZY_TERMS
            };
            let last = count.min(first + cap);
            let (mut a_even, mut a_odd, mut b_even, mut b_odd) = (zero, zero, zero, zero);
            if tensor_pending {
                tensor_pending = false;
                let (x0, x1) = (load(x0s, j), load(x1s, j));
                // y in Montgomery form (y·2^32 mod q), like the keys.
                let y0 = mont_mul_by(l, load(y0s, j), r2, &c);
                let y1 = mont_mul_by(l, load(y1s, j), r2, &c);
                let (x0_odd, x1_odd) = (l.shr64(x0), l.shr64(x1));
                let (y0_odd, y1_odd) = (l.shr64(y0), l.shr64(y1));
                b_even = l.mul_even(x0, y0);
                b_odd = l.mul_even(x0_odd, y0_odd);
                a_even = l.add64(l.mul_even(x0, y1), l.mul_even(x1, y0));
                a_odd = l.add64(l.mul_even(x0_odd, y1_odd), l.mul_even(x1_odd, y0_odd));
            }
            for i in first..last {
                let at = i * stride + j;
                let (d, ka, kb) = (load(digits, at), load(key_a, at), load(key_b, at));
                let d_odd = l.shr64(d);
                a_even = l.add64(a_even, l.mul_even(d, ka));
                a_odd = l.add64(a_odd, l.mul_even(d_odd, l.shr64(ka)));
                b_even = l.add64(b_even, l.mul_even(d, kb));
                b_odd = l.add64(b_odd, l.mul_even(d_odd, l.shr64(kb)));
            }
            let sum_a = l.blend_odd(
                reduce_sum(l, a_even, &c, q64, mu),
                l.shl64(reduce_sum(l, a_odd, &c, q64, mu)),
            );
            let sum_b = l.blend_odd(
                reduce_sum(l, b_even, &c, q64, mu),
                l.shl64(reduce_sum(l, b_odd, &c, q64, mu)),
            );
            acc_a = reduce_once(l, l.add32(acc_a, sum_a), c.q);
            acc_b = reduce_once(l, l.add32(acc_b, sum_b), c.q);
            first = last;
        }
        // SAFETY: j + WIDTH <= len <= both outputs' length.
        unsafe {
            l.store(out_a.as_mut_ptr().add(j), acc_a);
            l.store(out_b.as_mut_ptr().add(j), acc_b);
        }
    }
    len
}

/// [`crate::RnsKernels::base_convert`] on the whole vectors of `out` (the same groups of 16
/// lazy products as the portable loop); returns how many outputs it handled.
///
/// # Safety
/// Every row holds at least `out.len()` entries and `weights` one per row (the shapes
/// [`crate::rns::check_base_convert`] checks).
#[inline(always)]
pub(crate) unsafe fn base_convert<L: Lanes>(
    l: L,
    m: &Modulus,
    rows: &[&[u32]],
    weights: &[crate::Mont],
    out: &mut [u32],
) -> usize {
    let c = consts(l, m);
    let zero = l.zero();
    let mu = l.splat64((1u64 << 32) / u64::from(m.value()));
    let q64 = l.splat64(u64::from(m.value()));
    let len = out.len() - out.len() % L::WIDTH;
    for j in (0..len).step_by(L::WIDTH) {
        let mut acc = zero;
        for (group, group_weights) in rows
            .chunks(MAX_LAZY_TERMS)
            .zip(weights.chunks(MAX_LAZY_TERMS))
        {
            let (mut even, mut odd) = (zero, zero);
            for (row, w) in group.iter().zip(group_weights) {
                // SAFETY: j + WIDTH <= len <= row.len() (the contract).
                let x = unsafe { l.load(row.as_ptr().add(j)) };
                // The weight in both halves of every 64-bit lane: mul_even reads the low one.
                let w = l.splat(w.get());
                even = l.add64(even, l.mul_even(x, w));
                odd = l.add64(odd, l.mul_even(l.shr64(x), w));
            }
            let sum = l.blend_odd(
                reduce_sum(l, even, &c, q64, mu),
                l.shl64(reduce_sum(l, odd, &c, q64, mu)),
            );
            acc = reduce_once(l, l.add32(acc, sum), c.q);
        }
        // SAFETY: j + WIDTH <= len <= out.len().
        unsafe { l.store(out.as_mut_ptr().add(j), acc) };
    }
    len
}

/// The outputs of a key switch from `done` on, by the portable kernel (shapes already
/// checked): what the vectors did not cover.
#[expect(
    clippy::too_many_arguments,
    reason = "the kernel's operands plus where the vectors stopped"
)]
pub(crate) fn key_switch_tail<const TENSOR: bool>(
    m: &Modulus,
    count: usize,
    stride: usize,
    streams: [&[u32]; 3],
    inputs: [&[u32]; 4],
    out_a: &mut [u32],
    out_b: &mut [u32],
    done: usize,
) {
    if done < out_a.len() {
        // Without digits (`count == 0`) the streams may be shorter than `done`; they are
        // not read then.
        fn rest(s: &[u32], done: usize) -> &[u32] {
            s.get(done..).unwrap_or_default()
        }
        crate::portable::key_switch::<TENSOR>(
            m,
            count,
            stride,
            streams.map(|s| rest(s, done)),
            inputs.map(|s| rest(s, done)),
            &mut out_a[done..],
            &mut out_b[done..],
        );
    }
}

/// The backend traits for a [`Lanes`] token `$T`: one `#[target_feature(enable = $feature)]`
/// entry per kernel (so that everything below it is compiled for the instruction set), and
/// [`crate::NttBackend`], [`crate::RnsKernels`], [`crate::ClientKernels`] on top, named
/// `$name`. Each operation checks its shapes, runs the vector kernel on the whole vectors and
/// hands the rest (short tails, transforms shorter than two vectors) to [`crate::Portable`],
/// which computes the same values.
macro_rules! simd_backend {
    ($T:ident, $feature:literal, $name:literal) => {
        impl $T {
            /// # Safety
            /// [`super::shoup_ntt::forward`]'s contract.
            #[target_feature(enable = $feature)]
            unsafe fn shoup_ntt_kernel<const INVERSE: bool>(
                self,
                modulus: u32,
                t: &$crate::ntt::ShoupView<'_>,
                a: &mut [u32],
            ) {
                if INVERSE {
                    // SAFETY: the caller's contract.
                    unsafe { super::shoup_ntt::inverse(self, modulus, t, a) }
                } else {
                    // SAFETY: the caller's contract.
                    unsafe { super::shoup_ntt::forward(self, modulus, t, a) }
                }
            }

            /// # Safety
            /// [`super::lanes::pointwise`]'s contract.
            #[target_feature(enable = $feature)]
            unsafe fn pointwise_kernel<const ACCUMULATE: bool>(
                self,
                m: &$crate::Modulus,
                a: *const u32,
                b: *const u32,
                out: *mut u32,
                len: usize,
            ) -> usize {
                // SAFETY: the caller's contract.
                unsafe { super::lanes::pointwise::<Self, ACCUMULATE>(self, m, a, b, out, len) }
            }

            /// # Safety
            /// None beyond the instruction set `self` proves.
            #[expect(
                clippy::too_many_arguments,
                reason = "the kernel's operands, as in ClientKernels"
            )]
            #[target_feature(enable = $feature)]
            unsafe fn encrypt_finish_kernel(
                self,
                q: &$crate::Modulus,
                delta_mont: u32,
                plain: &[u32],
                carry: &[u32],
                error: &[i8],
                row: &mut [u32],
                negate_error: bool,
            ) -> usize {
                if negate_error {
                    super::lanes::encrypt_finish::<Self, true>(
                        self, q, delta_mont, plain, carry, error, row,
                    )
                } else {
                    super::lanes::encrypt_finish::<Self, false>(
                        self, q, delta_mont, plain, carry, error, row,
                    )
                }
            }

            /// # Safety
            /// None beyond the instruction set `self` proves.
            #[expect(
                clippy::too_many_arguments,
                reason = "the kernel's operands, as in ClientKernels"
            )]
            #[target_feature(enable = $feature)]
            unsafe fn behz_accumulate_kernel(
                self,
                q: &$crate::Modulus,
                t: &$crate::Modulus,
                scale_mont: u32,
                hat_t_mont: u32,
                hat_gamma: u32,
                x: &[u32],
                c0: &[u32],
                acc_t: &mut [u32],
                acc_gamma: &mut [u32],
            ) -> usize {
                super::lanes::behz_accumulate(
                    self, q, t, scale_mont, hat_t_mont, hat_gamma, x, c0, acc_t, acc_gamma,
                )
            }

            /// # Safety
            /// None beyond the instruction set `self` proves.
            #[expect(
                clippy::too_many_arguments,
                reason = "the kernel's operands, as in ClientKernels"
            )]
            #[target_feature(enable = $feature)]
            unsafe fn behz_finish_kernel(
                self,
                t: &$crate::Modulus,
                neg_q_inv_t_mont: u32,
                neg_q_inv_gamma: u32,
                gamma_mod_t: u32,
                gamma_inv_t_mont: u32,
                acc_t: &mut [u32],
                acc_gamma: &[u32],
            ) -> usize {
                super::lanes::behz_finish(
                    self,
                    t,
                    neg_q_inv_t_mont,
                    neg_q_inv_gamma,
                    gamma_mod_t,
                    gamma_inv_t_mont,
                    acc_t,
                    acc_gamma,
                )
            }

            /// # Safety
            /// None beyond the instruction set `self` proves.
            #[target_feature(enable = $feature)]
            unsafe fn cdt_symmetric_kernel(
                self,
                words: &[u32],
                cdt: &[u32],
                base: i32,
                out: &mut [i8],
            ) -> usize {
                super::lanes::cdt_scan_symmetric(self, words, cdt, base, out)
            }

            /// # Safety
            /// None beyond the instruction set `self` proves.
            #[target_feature(enable = $feature)]
            unsafe fn cdt_kernel(
                self,
                words: &[u32],
                cdt: &[u32],
                base: i32,
                out: &mut [i8],
            ) -> usize {
                super::lanes::cdt_scan(self, words, cdt, base, out)
            }

            /// # Safety
            /// None beyond the instruction set `self` proves.
            #[target_feature(enable = $feature)]
            unsafe fn uniform_kernel(
                self,
                words: &[u8],
                mask: u32,
                q: u32,
                out: &mut [u32],
            ) -> (usize, usize) {
                super::lanes::uniform_accept(self, words, mask, q, out)
            }

            /// # Safety
            /// [`super::lanes::lift_centered`]'s contract.
            #[target_feature(enable = $feature)]
            unsafe fn lift_kernel(
                self,
                src: &[u32],
                from: &$crate::Modulus,
                to: &$crate::Modulus,
                dst: &mut [u32],
            ) -> usize {
                // SAFETY: the caller's contract.
                unsafe { super::lanes::lift_centered(self, src, from, to, dst) }
            }

            /// # Safety
            /// [`super::lanes::base_convert`]'s contract.
            #[target_feature(enable = $feature)]
            unsafe fn base_convert_kernel(
                self,
                m: &$crate::Modulus,
                rows: &[&[u32]],
                weights: &[$crate::Mont],
                out: &mut [u32],
            ) -> usize {
                // SAFETY: the caller's contract.
                unsafe { super::lanes::base_convert(self, m, rows, weights, out) }
            }

            /// # Safety
            /// [`super::lanes::key_switch`]'s contract.
            #[expect(
                clippy::too_many_arguments,
                reason = "the kernel's operands, as in RnsKernels"
            )]
            #[target_feature(enable = $feature)]
            unsafe fn key_switch_kernel<const TENSOR: bool>(
                self,
                m: &$crate::Modulus,
                count: usize,
                stride: usize,
                streams: [&[u32]; 3],
                inputs: [&[u32]; 4],
                out_a: &mut [u32],
                out_b: &mut [u32],
            ) -> usize {
                // SAFETY: the caller's contract.
                unsafe {
                    super::lanes::key_switch::<Self, TENSOR>(
                        self, m, count, stride, streams, inputs, out_a, out_b,
                    )
                }
            }
        }

        impl $crate::NttBackend for $T {
            fn name(&self) -> &'static str {
                $name
            }

            fn forward(
                &self,
                table: &$crate::NttView<'_>,
                a: &mut [u32],
            ) -> Result<(), $crate::RingError> {
                table.check_len(a.len())?;
                $crate::RingError::check_len(a.len(), table.forward.len())?;
                if a.len() < 2 * <Self as Lanes>::WIDTH {
                    // Shorter than one chunk of two vectors: no vector kernel.
                    return $crate::Portable.forward(table, a);
                }
                match table.shoup.filter(|t| t.has_degree(a.len())) {
                    // SAFETY: `self` proves the instruction set; `a.len()` is the degree (a
                    // power of two, at least two vectors) and every array's length (checked).
                    Some(t) => unsafe {
                        self.shoup_ntt_kernel::<false>(table.modulus.value(), &t, a)
                    },
                    // A view without Shoup twiddles (built by hand): the portable transform.
                    None => return $crate::Portable.forward(table, a),
                }
                Ok(())
            }

            fn inverse(
                &self,
                table: &$crate::NttView<'_>,
                a: &mut [u32],
            ) -> Result<(), $crate::RingError> {
                table.check_len(a.len())?;
                $crate::RingError::check_len(a.len(), table.inverse.len())?;
                if a.len() < 2 * <Self as Lanes>::WIDTH {
                    // Shorter than one chunk of two vectors: no vector kernel.
                    return $crate::Portable.inverse(table, a);
                }
                match table.shoup.filter(|t| t.has_degree(a.len())) {
                    // SAFETY: as in `forward`.
                    Some(t) => unsafe {
                        self.shoup_ntt_kernel::<true>(table.modulus.value(), &t, a)
                    },
                    None => return $crate::Portable.inverse(table, a),
                }
                Ok(())
            }

            fn pointwise_mul(
                &self,
                modulus: &$crate::Modulus,
                a: &[u32],
                b: &[u32],
                out: &mut [u32],
            ) -> Result<(), $crate::RingError> {
                $crate::RingError::check_len(out.len(), a.len())?;
                $crate::RingError::check_len(out.len(), b.len())?;
                // SAFETY: `self` proves the instruction set; three slices of equal length
                // (checked), `out` borrowed exclusively.
                let done = unsafe {
                    self.pointwise_kernel::<false>(
                        modulus,
                        a.as_ptr(),
                        b.as_ptr(),
                        out.as_mut_ptr(),
                        out.len(),
                    )
                };
                $crate::Portable.pointwise_mul(modulus, &a[done..], &b[done..], &mut out[done..])
            }

            fn pointwise_mul_add(
                &self,
                modulus: &$crate::Modulus,
                a: &[u32],
                b: &[u32],
                acc: &mut [u32],
            ) -> Result<(), $crate::RingError> {
                $crate::RingError::check_len(acc.len(), a.len())?;
                $crate::RingError::check_len(acc.len(), b.len())?;
                // SAFETY: as in `pointwise_mul`.
                let done = unsafe {
                    self.pointwise_kernel::<true>(
                        modulus,
                        a.as_ptr(),
                        b.as_ptr(),
                        acc.as_mut_ptr(),
                        acc.len(),
                    )
                };
                $crate::Portable.pointwise_mul_add(
                    modulus,
                    &a[done..],
                    &b[done..],
                    &mut acc[done..],
                )
            }

            fn pointwise_mul_assign(
                &self,
                modulus: &$crate::Modulus,
                a: &mut [u32],
                b: &[u32],
            ) -> Result<(), $crate::RingError> {
                $crate::RingError::check_len(a.len(), b.len())?;
                let p = a.as_mut_ptr();
                // SAFETY: `self` proves the instruction set; `a` and `b` have equal lengths
                // (checked) and do not overlap (`a` is borrowed exclusively); `a` is both an
                // input and the output, which the kernel allows.
                let done =
                    unsafe { self.pointwise_kernel::<false>(modulus, p, b.as_ptr(), p, a.len()) };
                $crate::Portable.pointwise_mul_assign(modulus, &mut a[done..], &b[done..])
            }
        }

        impl $crate::RnsKernels for $T {
            fn base_convert(
                &self,
                modulus: &$crate::Modulus,
                rows: &[&[u32]],
                weights: &[$crate::Mont],
                out: &mut [u32],
            ) -> Result<(), $crate::RingError> {
                $crate::rns::check_base_convert(rows, weights, out)?;
                // SAFETY: `self` proves the instruction set; the shapes are checked.
                let done = unsafe { self.base_convert_kernel(modulus, rows, weights, out) };
                $crate::portable::base_convert(modulus, rows, weights, out, done);
                Ok(())
            }

            fn lift_centered(
                &self,
                src: &[u32],
                from: &$crate::Modulus,
                to: &$crate::Modulus,
                dst: &mut [u32],
            ) -> Result<(), $crate::RingError> {
                $crate::RingError::check_len(dst.len(), src.len())?;
                // SAFETY: `self` proves the instruction set; equal lengths (checked).
                let done = unsafe { self.lift_kernel(src, from, to, dst) };
                $crate::Portable.lift_centered(&src[done..], from, to, &mut dst[done..])
            }

            fn key_switch_block(
                &self,
                modulus: &$crate::Modulus,
                count: usize,
                stride: usize,
                digits: &[u32],
                key_a: &[u32],
                key_b: &[u32],
                add_a: &[u32],
                add_b: &[u32],
                out_a: &mut [u32],
                out_b: &mut [u32],
            ) -> Result<(), $crate::RingError> {
                let streams = [digits, key_a, key_b];
                $crate::rns::check_key_switch(
                    count,
                    stride,
                    streams,
                    &[add_a, add_b],
                    out_a,
                    out_b,
                )?;
                let inputs = [add_a, add_b, add_a, add_b];
                // SAFETY: `self` proves the instruction set; the shapes are checked.
                let done = unsafe {
                    self.key_switch_kernel::<false>(
                        modulus, count, stride, streams, inputs, out_a, out_b,
                    )
                };
                super::lanes::key_switch_tail::<false>(
                    modulus, count, stride, streams, inputs, out_a, out_b, done,
                );
                Ok(())
            }

            fn tensor_key_switch_block(
                &self,
                modulus: &$crate::Modulus,
                count: usize,
                stride: usize,
                digits: &[u32],
                key_a: &[u32],
                key_b: &[u32],
                x: [&[u32]; 2],
                y: [&[u32]; 2],
                out_a: &mut [u32],
                out_b: &mut [u32],
            ) -> Result<(), $crate::RingError> {
                let streams = [digits, key_a, key_b];
                let inputs = [x[0], x[1], y[0], y[1]];
                $crate::rns::check_key_switch(count, stride, streams, &inputs, out_a, out_b)?;
                // SAFETY: as in `key_switch_block`.
                let done = unsafe {
                    self.key_switch_kernel::<true>(
                        modulus, count, stride, streams, inputs, out_a, out_b,
                    )
                };
                super::lanes::key_switch_tail::<true>(
                    modulus, count, stride, streams, inputs, out_a, out_b, done,
                );
                Ok(())
            }
        }

        /// The device client's kernels in vectors (the same client code runs on gateways
        /// and servers); tails shorter than a vector by the portable loops.
        impl $crate::ClientKernels for $T {
            fn behz_accumulate(
                &self,
                q: &$crate::Modulus,
                t: &$crate::Modulus,
                scale_mont: $crate::Mont,
                hat_t_mont: $crate::Mont,
                hat_gamma: u32,
                x: &[u32],
                c0: &[u32],
                acc_t: &mut [u32],
                acc_gamma: &mut [u32],
            ) -> Result<(), $crate::RingError> {
                $crate::portable::same_lengths([acc_t.len(), x.len(), c0.len(), acc_gamma.len()])?;
                // SAFETY: `self` proves the instruction set.
                let done = unsafe {
                    self.behz_accumulate_kernel(
                        q,
                        t,
                        scale_mont.get(),
                        hat_t_mont.get(),
                        hat_gamma,
                        x,
                        c0,
                        acc_t,
                        acc_gamma,
                    )
                };
                $crate::Portable.behz_accumulate(
                    q,
                    t,
                    scale_mont,
                    hat_t_mont,
                    hat_gamma,
                    &x[done..],
                    &c0[done..],
                    &mut acc_t[done..],
                    &mut acc_gamma[done..],
                )
            }

            fn behz_finish(
                &self,
                t: &$crate::Modulus,
                neg_q_inv_t_mont: $crate::Mont,
                neg_q_inv_gamma: u32,
                gamma_mod_t: u32,
                gamma_inv_t_mont: $crate::Mont,
                acc_t: &mut [u32],
                acc_gamma: &[u32],
            ) -> Result<(), $crate::RingError> {
                $crate::RingError::check_len(acc_t.len(), acc_gamma.len())?;
                // SAFETY: `self` proves the instruction set.
                let done = unsafe {
                    self.behz_finish_kernel(
                        t,
                        neg_q_inv_t_mont.get(),
                        neg_q_inv_gamma,
                        gamma_mod_t,
                        gamma_inv_t_mont.get(),
                        acc_t,
                        acc_gamma,
                    )
                };
                $crate::Portable.behz_finish(
                    t,
                    neg_q_inv_t_mont,
                    neg_q_inv_gamma,
                    gamma_mod_t,
                    gamma_inv_t_mont,
                    &mut acc_t[done..],
                    &acc_gamma[done..],
                )
            }

            fn encrypt_finish(
                &self,
                q: &$crate::Modulus,
                delta_mont: $crate::Mont,
                plain: &[u32],
                carry: &[u32],
                error: &[i8],
                row: &mut [u32],
                negate_error: bool,
            ) -> Result<(), $crate::RingError> {
                $crate::portable::same_lengths([row.len(), plain.len(), carry.len(), error.len()])?;
                // SAFETY: `self` proves the instruction set.
                let done = unsafe {
                    self.encrypt_finish_kernel(
                        q,
                        delta_mont.get(),
                        plain,
                        carry,
                        error,
                        row,
                        negate_error,
                    )
                };
                $crate::client::encrypt_finish(
                    q,
                    delta_mont,
                    &plain[done..],
                    &carry[done..],
                    &error[done..],
                    &mut row[done..],
                    negate_error,
                )
            }

            fn cdt_scan<const L: usize>(
                &self,
                words: &[u32; L],
                cdt: &[u32],
                base: i32,
                out: &mut [i8; L],
            ) {
                // SAFETY: `self` proves the instruction set.
                let done = unsafe { self.cdt_kernel(words, cdt, base, out) };
                $crate::portable::cdt_scan_words(&words[done..], cdt, base, &mut out[done..]);
            }

            fn cdt_scan_symmetric<const L: usize>(
                &self,
                words: &[u32; L],
                cdt: &[u32],
                base: i32,
                out: &mut [i8; L],
            ) {
                // SAFETY: `self` proves the instruction set.
                let done = unsafe { self.cdt_symmetric_kernel(words, cdt, base, out) };
                $crate::portable::cdt_scan_words(&words[done..], cdt, base, &mut out[done..]);
            }

            fn uniform_accept(
                &self,
                words: &[u8],
                mask: u32,
                q: u32,
                out: &mut [u32],
            ) -> (usize, usize) {
                // SAFETY: `self` proves the instruction set.
                unsafe { self.uniform_kernel(words, mask, q, out) }
            }
        }
    };
}
pub(crate) use simd_backend;
