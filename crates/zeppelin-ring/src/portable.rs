//! The portable backend: plain Rust for every target, and the reference every other backend
//! is tested against bit for bit. It implements all three backend traits:
//!
//! - [`NttBackend`]: Harvey-style lazy butterflies with values kept below `4q` (forward) or
//!   `2q` (inverse), Montgomery twiddles, masked reductions;
//! - [`RnsKernels`]: the centred lift, the lazy 64-bit key-switch sums;
//! - [`ClientKernels`]: the BEHZ decryption tail and the CDT scan, one coefficient at a time.
//!
//! Nothing here branches on, or indexes memory by, a residue.

use crate::client::ClientKernels;
use crate::ct;
use crate::error::RingError;
use crate::modulus::{Modulus, Mont};
use crate::ntt::{NttBackend, NttView};
use crate::rns::{check_key_switch, RnsKernels, MAX_LAZY_TERMS};

/// The portable backend: plain Rust, a unit type, available on every target, and the
/// reference every other backend is tested against bit for bit. It implements
/// [`NttBackend`] (Harvey-style lazy butterflies below `4q` / `2q`, Montgomery twiddles,
/// masked reductions), [`RnsKernels`] (centred lift, lazy 64-bit key-switch sums) and [`ClientKernels`] (the BEHZ decryption tail and the CDT scan, one
/// coefficient at a time). Nothing in it branches on, or indexes memory by, a residue.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Portable;

impl NttBackend for Portable {
    fn name(&self) -> &'static str {
        "portable"
    }

    fn forward(&self, table: &NttView<'_>, a: &mut [u32]) -> Result<(), RingError> {
        table.check_len(a.len())?;
        let m = &table.modulus;
        let q = m.value();
        let two_q = 2 * q;
        let n = a.len();
        let mut half = n;
        let mut groups = 1;
        while groups < n {
            half >>= 1;
            for (group, block) in a.chunks_exact_mut(2 * half).enumerate() {
                let w = table.forward[groups + group];
                let (lo, hi) = block.split_at_mut(half);
                for (x, y) in lo.iter_mut().zip(hi.iter_mut()) {
                    // x < 4q on entry; bring it below 2q so the sum stays below 4q.
                    let u = ct::reduce_once(*x, two_q);
                    let v = m.mont_mul_lazy(*y, w);
                    *x = u + v;
                    *y = u + two_q - v;
                }
            }
            groups <<= 1;
        }
        for x in a.iter_mut() {
            *x = ct::reduce_once(ct::reduce_once(*x, two_q), q);
        }
        Ok(())
    }

    fn inverse(&self, table: &NttView<'_>, a: &mut [u32]) -> Result<(), RingError> {
        table.check_len(a.len())?;
        let m = &table.modulus;
        let two_q = 2 * m.value();
        let n = a.len();
        let mut half = 1;
        let mut groups = n >> 1;
        while groups >= 1 {
            for (group, block) in a.chunks_exact_mut(2 * half).enumerate() {
                let w = table.inverse[groups + group];
                let (lo, hi) = block.split_at_mut(half);
                for (x, y) in lo.iter_mut().zip(hi.iter_mut()) {
                    // Both below 2q on entry and on exit.
                    let (u, v) = (*x, *y);
                    *x = ct::reduce_once(u + v, two_q);
                    *y = m.mont_mul_lazy(u + two_q - v, w);
                }
            }
            half <<= 1;
            groups >>= 1;
        }
        for x in a.iter_mut() {
            *x = m.mont_mul(*x, table.n_inv_mont);
        }
        Ok(())
    }

    fn pointwise_mul(
        &self,
        modulus: &Modulus,
        a: &[u32],
        b: &[u32],
        out: &mut [u32],
    ) -> Result<(), RingError> {
        pointwise_with(modulus, a, b, out, |_, product| product)
    }

    fn pointwise_mul_add(
        &self,
        modulus: &Modulus,
        a: &[u32],
        b: &[u32],
        acc: &mut [u32],
    ) -> Result<(), RingError> {
        pointwise_with(modulus, a, b, acc, |sum, product| modulus.add(sum, product))
    }

    fn pointwise_mul_assign(
        &self,
        modulus: &Modulus,
        a: &mut [u32],
        b: &[u32],
    ) -> Result<(), RingError> {
        RingError::check_len(a.len(), b.len())?;
        for (x, &y) in a.iter_mut().zip(b) {
            *x = modulus.mul(*x, y);
        }
        Ok(())
    }
}

/// `out[i] = combine(out[i], a[i]·b[i] mod q)` once the three lengths are checked equal: the
/// loop the portable pointwise products share.
#[inline(always)]
fn pointwise_with(
    modulus: &Modulus,
    a: &[u32],
    b: &[u32],
    out: &mut [u32],
    combine: impl Fn(u32, u32) -> u32,
) -> Result<(), RingError> {
    RingError::check_len(out.len(), a.len())?;
    RingError::check_len(out.len(), b.len())?;
    for ((o, &x), &y) in out.iter_mut().zip(a).zip(b) {
        *o = combine(*o, modulus.mul(x, y));
    }
    Ok(())
}

impl RnsKernels for Portable {
    fn base_convert(
        &self,
        modulus: &Modulus,
        rows: &[&[u32]],
        weights: &[Mont],
        out: &mut [u32],
    ) -> Result<(), RingError> {
        crate::rns::check_base_convert(rows, weights, out)?;
        base_convert(modulus, rows, weights, out, 0);
        Ok(())
    }

    fn lift_centered(
        &self,
        src: &[u32],
        from: &Modulus,
        to: &Modulus,
        dst: &mut [u32],
    ) -> Result<(), RingError> {
        RingError::check_len(dst.len(), src.len())?;
        for (d, &v) in dst.iter_mut().zip(src) {
            *d = to.reduce_i64(i64::from(from.centered(v)));
        }
        Ok(())
    }

    fn key_switch_block(
        &self,
        modulus: &Modulus,
        count: usize,
        stride: usize,
        digits: &[u32],
        key_a: &[u32],
        key_b: &[u32],
        add_a: &[u32],
        add_b: &[u32],
        out_a: &mut [u32],
        out_b: &mut [u32],
    ) -> Result<(), RingError> {
        let streams = [digits, key_a, key_b];
        check_key_switch(count, stride, streams, &[add_a, add_b], out_a, out_b)?;
        key_switch::<false>(
            modulus,
            count,
            stride,
            streams,
            [add_a, add_b, &[], &[]],
            out_a,
            out_b,
        );
        Ok(())
    }

    fn tensor_key_switch_block(
        &self,
        modulus: &Modulus,
        count: usize,
        stride: usize,
        digits: &[u32],
        key_a: &[u32],
        key_b: &[u32],
        x: [&[u32]; 2],
        y: [&[u32]; 2],
        out_a: &mut [u32],
        out_b: &mut [u32],
    ) -> Result<(), RingError> {
        let streams = [digits, key_a, key_b];
        let parts = [x[0], x[1], y[0], y[1]];
        check_key_switch(count, stride, streams, &parts, out_a, out_b)?;
        key_switch::<true>(modulus, count, stride, streams, parts, out_a, out_b);
        Ok(())
    }
}

/// The portable key switch, after [`check_key_switch`]: `streams = [digits, key_a, key_b]`;
/// [`RnsKernels::base_convert`] for the outputs from `start` on (shapes already checked): the
/// reference, and the tail of the vector kernels. The same grouping of the lazy sums as they
/// use (16 products per reduction).
pub(crate) fn base_convert(
    m: &Modulus,
    rows: &[&[u32]],
    weights: &[Mont],
    out: &mut [u32],
    start: usize,
) {
    for (j, o) in out.iter_mut().enumerate().skip(start) {
        let mut acc = 0;
        for (group, group_weights) in rows
            .chunks(MAX_LAZY_TERMS)
            .zip(weights.chunks(MAX_LAZY_TERMS))
        {
            let mut sum = 0u64;
            for (row, w) in group.iter().zip(group_weights) {
                sum = sum.wrapping_add(u64::from(row[j]) * u64::from(w.get()));
            }
            acc = m.add(acc, m.from_mont(m.reduce_u64(sum)));
        }
        *o = acc;
    }
}

/// `inputs = [add_a, add_b, -, -]`, or `[x0, x1, y0, y1]` with `TENSOR`. The same chunking
/// of the lazy sums as the SIMD kernels (the tensor's two products take two digits' room),
/// which also run it on the outputs their vectors do not cover.
pub(crate) fn key_switch<const TENSOR: bool>(
    m: &Modulus,
    count: usize,
    stride: usize,
    streams: [&[u32]; 3],
    inputs: [&[u32]; 4],
    out_a: &mut [u32],
    out_b: &mut [u32],
) {
    let [digits, key_a, key_b] = streams;
    for (j, (out_a, out_b)) in out_a.iter_mut().zip(out_b.iter_mut()).enumerate() {
        let (mut acc_a, mut acc_b) = if TENSOR {
            (0, 0)
        } else {
            (inputs[0][j], inputs[1][j])
        };
        let mut first = 0;
        let mut tensor_pending = TENSOR;
        while first < count || tensor_pending {
            let (mut sum_a, mut sum_b) = (0u64, 0u64);
            let cap = if tensor_pending {
                tensor_pending = false;
                let (x0, x1) = (u64::from(inputs[0][j]), u64::from(inputs[1][j]));
                // y in Montgomery form, like the keys, so that one reduction serves all.
                let y0 = u64::from(m.to_mont(inputs[2][j]));
                let y1 = u64::from(m.to_mont(inputs[3][j]));
                sum_b = x0 * y0;
                sum_a = x0 * y1 + x1 * y0;
                MAX_LAZY_TERMS - 2
            } else {
                MAX_LAZY_TERMS
            };
            let last = count.min(first + cap);
            for i in first..last {
                let at = i * stride + j;
                let d = u64::from(digits[at]);
                sum_a += d * u64::from(key_a[at]);
                sum_b += d * u64::from(key_b[at]);
            }
            acc_a = m.add(acc_a, m.from_mont(m.reduce_u64(sum_a)));
            acc_b = m.add(acc_b, m.from_mont(m.reduce_u64(sum_b)));
            first = last;
        }
        *out_a = acc_a;
        *out_b = acc_b;
    }
}

/// The BEHZ rows' common length, or the first mismatch.
/// The common length of four rows, or an error (the shape check of the client kernels).
pub(crate) fn same_lengths(lens: [usize; 4]) -> Result<usize, RingError> {
    for found in lens {
        RingError::check_len(lens[0], found)?;
    }
    Ok(lens[0])
}

impl ClientKernels for Portable {
    // Out of line: the M55 firmware compares these with the Helium kernels and its binary
    // audit checks them under their own symbols.
    #[inline(never)]
    fn behz_accumulate(
        &self,
        q: &Modulus,
        t: &Modulus,
        scale_mont: Mont,
        hat_t_mont: Mont,
        hat_gamma: u32,
        x: &[u32],
        c0: &[u32],
        acc_t: &mut [u32],
        acc_gamma: &mut [u32],
    ) -> Result<(), RingError> {
        same_lengths([acc_t.len(), x.len(), c0.len(), acc_gamma.len()])?;
        for (((&x, &c), at), ag) in x
            .iter()
            .zip(c0)
            .zip(acc_t.iter_mut())
            .zip(acc_gamma.iter_mut())
        {
            let xi = q.add(x, c);
            // y = [xi·scale]_q: one Montgomery product with the constant (xi < q).
            let y = q.mul_mont_constant(xi, scale_mont);
            // y·hat_t < q·t < t·2^32 for the client's primes: a valid Montgomery product.
            *at = t.add(*at, t.mont_mul(y, hat_t_mont.get()));
            *ag = ag.wrapping_add(y.wrapping_mul(hat_gamma));
        }
        Ok(())
    }

    #[inline(never)]
    fn behz_finish(
        &self,
        t: &Modulus,
        neg_q_inv_t_mont: Mont,
        neg_q_inv_gamma: u32,
        gamma_mod_t: u32,
        gamma_inv_t_mont: Mont,
        acc_t: &mut [u32],
        acc_gamma: &[u32],
    ) -> Result<(), RingError> {
        RingError::check_len(acc_t.len(), acc_gamma.len())?;
        let one_mont = t.to_mont(1);
        for (m, &g) in acc_t.iter_mut().zip(acc_gamma) {
            let z_t = t.mont_mul(*m, neg_q_inv_t_mont.get());
            let z_gamma = g.wrapping_mul(neg_q_inv_gamma) & GAMMA_MASK;
            // Centring: z_γ − γ when bit 30 is set; reduce mod t without division
            // (z_γ·(2^32 mod t) < 2^31·t < t·2^32, so one Montgomery product gives z_γ mod t).
            let negative = ct::mask_from_msb(z_gamma << 1);
            let z_gamma_t = t.sub(t.mont_mul(z_gamma, one_mont), gamma_mod_t & negative);
            *m = t.mont_mul(t.sub(z_t, z_gamma_t), gamma_inv_t_mont.get());
        }
        Ok(())
    }

    fn cdt_scan<const L: usize>(
        &self,
        words: &[u32; L],
        cdt: &[u32],
        base: i32,
        out: &mut [i8; L],
    ) {
        const {
            assert!(
                L > 0 && L.is_multiple_of(8),
                "L must be a positive multiple of 8"
            )
        };
        cdt_scan_words(words, cdt, base, out);
    }

    fn cdt_scan_symmetric<const L: usize>(
        &self,
        words: &[u32; L],
        cdt: &[u32],
        base: i32,
        out: &mut [i8; L],
    ) {
        // The full scan: equal for a symmetric table, and the reference.
        self.cdt_scan(words, cdt, base, out)
    }

    fn uniform_accept(&self, words: &[u8], mask: u32, q: u32, out: &mut [u32]) -> (usize, usize) {
        crate::client::uniform_accept(words, mask, q, out)
    }

    fn encrypt_finish(
        &self,
        q: &Modulus,
        delta_mont: Mont,
        plain: &[u32],
        carry: &[u32],
        error: &[i8],
        row: &mut [u32],
        negate_error: bool,
    ) -> Result<(), RingError> {
        crate::client::encrypt_finish(q, delta_mont, plain, carry, error, row, negate_error)
    }
}

/// The scalar CDT scan of [`ClientKernels::cdt_scan`] on slices (the pairs up to the shorter
/// length), which the vector backends use for their tails.
#[inline(always)]
pub(crate) fn cdt_scan_words(words: &[u32], cdt: &[u32], base: i32, out: &mut [i8]) {
    for (o, &w) in out.iter_mut().zip(words) {
        let r = w & GAMMA_MASK;
        let mut count = base;
        for &c in cdt {
            // −1 when r < c: all comparisons, masks only.
            count += ct::mask_lt(r, c) as i32;
        }
        *o = count as i8;
    }
}

/// `γ − 1` for `γ = 2^31`: the BEHZ redundant modulus and the CDT's fixed-point range.
const GAMMA_MASK: u32 = (1 << 31) - 1;
