//! Kernels for RNS servers (OpenFHE-style BV key switching), once for every target.
//!
//! [`RnsKernels`] has three operations, plus a fourth with the `alloc` feature:
//!
//! - [`RnsKernels::lift_centered`]: a residue mod `p` to its centred representative mod `q`
//!   (the CRT decomposition step);
//! - [`RnsKernels::key_switch_block`]: a multiply-accumulate over many digits with 64-bit
//!   lazy accumulation and one reduction per output;
//! - [`RnsKernels::tensor_key_switch_block`]: the same with the ciphertext tensor joined to
//!   the sums;
//! - [`RnsKernels::forward_shoup`] (`alloc`): the forward NTT with Shoup twiddle products
//!   from a [`ShoupTable`].
//!
//! The default methods are the portable implementation, plain Rust for every target
//! ([`Portable`] uses them as they are). A SIMD backend overrides what it accelerates and
//! hands what its vectors do not cover (short tails, CPUs without the instructions) back to
//! [`Portable`], so every backend computes exactly these results; the x86 tests compare
//! against them and against big-integer sums.
//!
//! All data handled here is public or treated uniformly: no branch or memory index depends
//! on a residue.

use crate::error::RingError;
use crate::modulus::Modulus;
#[cfg(feature = "alloc")]
use crate::ntt::NttView;
use crate::ntt::{check_same_len, Portable};

/// Products `< 2^60` accumulated before a reduction: 16 of them stay below 2^64.
pub(crate) const MAX_LAZY_TERMS: usize = 16;

/// The RNS server kernels; see the [module documentation](self).
///
/// ```
/// use zeppelin_ring::{Modulus, Portable, RnsKernels};
/// let (p, q) = (Modulus::new(12_289).unwrap(), Modulus::new(65_537).unwrap());
/// let mut lifted = [0u32; 3];
/// Portable::lift_centered(&[1, 6144, 12_288], &p, &q, &mut lifted).unwrap();
/// assert_eq!(lifted, [1, 6144, 65_536]); // 12_288 ≡ −1 mod p, so −1 mod q
/// ```
pub trait RnsKernels {
    /// `dst[j] = centred(src[j]) mod to`, where `centred(v) = v` for `v <= (p−1)/2` and
    /// `v − p` otherwise, `p = from` (OpenFHE's CRT decomposition step). Requires
    /// `src[j] < p`; outputs are in `[0, to)`.
    fn lift_centered(
        src: &[u32],
        from: &Modulus,
        to: &Modulus,
        dst: &mut [u32],
    ) -> Result<(), RingError> {
        check_same_len(dst.len(), src.len())?;
        for (d, &v) in dst.iter_mut().zip(src) {
            *d = to.reduce_i64(i64::from(from.centered(v)));
        }
        Ok(())
    }

    /// Key-switch multiply-accumulate over one coefficient block, for `count` digits:
    ///
    /// ```text
    /// out_a[j] = (add_a[j] + Σ_i digits[i·stride + j] · key_a[i·stride + j] · 2^-32) mod q
    /// out_b[j] = (add_b[j] + Σ_i digits[i·stride + j] · key_b[i·stride + j] · 2^-32) mod q
    /// ```
    ///
    /// for `j < out_a.len()`. Keys are expected in Montgomery form (`k·2^32 mod q`, see
    /// [`Modulus::to_mont`]), so the sums are the plain products `Σ d·k`. All inputs `< q`.
    /// Products are accumulated unreduced in 64 bits (at most 16 at a time, each `< 2^60`)
    /// and reduced once per output.
    #[allow(clippy::too_many_arguments)]
    fn key_switch_block(
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
        check_key_switch(
            count,
            stride,
            [digits, key_a, key_b],
            &[add_a, add_b],
            out_a,
            out_b,
        )?;
        key_switch::<false>(
            modulus,
            count,
            stride,
            [digits, key_a, key_b],
            [add_a, add_b, &[], &[]],
            out_a,
            out_b,
        );
        Ok(())
    }

    /// The tensor and the key switch of one coefficient block in one pass:
    ///
    /// ```text
    /// out_b[j] = x0·y0         + Σ_i digits[i·stride + j] · key_b[i·stride + j] · 2^-32  mod q
    /// out_a[j] = x0·y1 + x1·y0 + Σ_i digits[i·stride + j] · key_a[i·stride + j] · 2^-32  mod q
    /// ```
    ///
    /// (`x`, `y` at index `j`), i.e. `relin_c0` and `relin_c1` of BV relinearization. Keys in
    /// Montgomery form as in [`RnsKernels::key_switch_block`]; all inputs `< q`. The tensor
    /// products join the same unreduced 64-bit sums, so each output is reduced once.
    #[allow(clippy::too_many_arguments)]
    fn tensor_key_switch_block(
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
        let parts = [x[0], x[1], y[0], y[1]];
        check_key_switch(count, stride, [digits, key_a, key_b], &parts, out_a, out_b)?;
        key_switch::<true>(
            modulus,
            count,
            stride,
            [digits, key_a, key_b],
            parts,
            out_a,
            out_b,
        );
        Ok(())
    }

    /// The forward transform of [`crate::NttBackend::forward`] (same evaluation map, same
    /// output) with Shoup twiddle products: coefficients `< q` in natural order to
    /// evaluations `< q`.
    #[cfg(feature = "alloc")]
    fn forward_shoup(table: &ShoupTable, a: &mut [u32]) -> Result<(), RingError> {
        check_same_len(table.degree(), a.len())?;
        let q = table.modulus.value();
        let two_q = 2 * q;
        let n = a.len();
        let (mut half, mut groups) = (n, 1);
        while groups < n {
            half >>= 1;
            for (group, block) in a.chunks_exact_mut(2 * half).enumerate() {
                let (w, w_shoup) = (table.twiddles[groups + group], table.shoup[groups + group]);
                let (lo, hi) = block.split_at_mut(half);
                for (x, y) in lo.iter_mut().zip(hi.iter_mut()) {
                    // Harvey's lazy butterfly of `Portable::forward`: x < 4q on entry.
                    let u = crate::ct::reduce_once(*x, two_q);
                    let v = shoup_mul_lazy(*y, w, w_shoup, q);
                    *x = u + v;
                    *y = u + two_q - v;
                }
            }
            groups <<= 1;
        }
        for x in a.iter_mut() {
            *x = crate::ct::reduce_once(crate::ct::reduce_once(*x, two_q), q);
        }
        Ok(())
    }
}

impl RnsKernels for Portable {}

/// Helium has no RNS kernels of its own: the portable ones, so that [`crate::Ntt`] offers
/// these operations on every target.
#[cfg(all(target_arch = "arm", zeppelin_mve))]
impl RnsKernels for crate::mve::Mve {}

/// Checks the shapes of a key switch: `extra` and `out_b` as long as `out_a`, a `stride` of
/// at least one block, and `(count−1)·stride + len` entries in each of `streams`.
pub(crate) fn check_key_switch(
    count: usize,
    stride: usize,
    streams: [&[u32]; 3],
    extra: &[&[u32]],
    out_a: &[u32],
    out_b: &[u32],
) -> Result<(), RingError> {
    let len = out_a.len();
    check_same_len(len, out_b.len())?;
    for part in extra {
        check_same_len(len, part.len())?;
    }
    if count > 0 {
        if stride < len {
            return Err(RingError::LengthMismatch {
                expected: len,
                found: stride,
            });
        }
        let needed = (count - 1) * stride + len;
        for found in streams.map(<[u32]>::len) {
            if found < needed {
                return Err(RingError::LengthMismatch {
                    expected: needed,
                    found,
                });
            }
        }
    }
    Ok(())
}

/// The portable key switch, after [`check_key_switch`]: `streams = [digits, key_a, key_b]`;
/// `inputs = [add_a, add_b, -, -]`, or `[x0, x1, y0, y1]` with `TENSOR`. The same chunking
/// of the lazy sums as the SIMD kernels (the tensor's two products take two digits' room).
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

/// The forward twiddles of an NTT table in normal form with their Shoup companions
/// `floor(w·2^32 / q)`, for [`RnsKernels::forward_shoup`]: a Shoup product needs three
/// multiplications where a Montgomery product needs six on 32-bit SIMD lanes.
#[cfg(feature = "alloc")]
#[derive(Clone, Debug)]
pub struct ShoupTable {
    pub(crate) modulus: Modulus,
    log_n: u32,
    /// `w[k] = ψ^br(k) mod q` (index 0 unused).
    pub(crate) twiddles: alloc::vec::Vec<u32>,
    /// `floor(w[k]·2^32 / q)`.
    pub(crate) shoup: alloc::vec::Vec<u32>,
}

#[cfg(feature = "alloc")]
impl ShoupTable {
    /// Builds the companions of `table`'s forward twiddles (one division each, once).
    pub fn new(table: &NttView<'_>) -> Self {
        let m = table.modulus;
        let twiddles: alloc::vec::Vec<u32> =
            table.forward.iter().map(|&w| m.from_mont(w)).collect();
        let shoup = twiddles
            .iter()
            .map(|&w| ((u64::from(w) << 32) / u64::from(m.value())) as u32)
            .collect();
        Self {
            modulus: m,
            log_n: table.log_n,
            twiddles,
            shoup,
        }
    }

    /// The ring degree.
    pub fn degree(&self) -> usize {
        1 << self.log_n
    }
}

/// `y·w mod q` in `[0, 2q)` for any `y < 2^32`, `w < q`, `w_shoup = floor(w·2^32/q)`.
#[cfg(feature = "alloc")]
#[inline(always)]
fn shoup_mul_lazy(y: u32, w: u32, w_shoup: u32, q: u32) -> u32 {
    let quotient = ((u64::from(y) * u64::from(w_shoup)) >> 32) as u32;
    y.wrapping_mul(w).wrapping_sub(quotient.wrapping_mul(q))
}

/// The proofs every [`RnsKernels`] implementation must pass, against independent
/// definitions (big-integer sums, the scalar centred lift, the Montgomery NTT of
/// [`Portable`]); run for [`Portable`] here and for the SIMD backends in their modules.
#[cfg(test)]
pub(crate) mod tests {
    extern crate std;
    use std::vec;
    use std::vec::Vec;

    use super::*;
    use crate::{NttBackend, NttTable};
    use rand::{Rng, SeedableRng};

    /// NTT-friendly primes for degree up to 2^15, from both ends of the range.
    pub(crate) fn primes_for(n: usize) -> Vec<u32> {
        let step = 2 * n as u32;
        let mut found = Vec::new();
        // Largest below 2^30.
        let mut q = ((1u32 << 30) - 1) / step * step + 1;
        while found.len() < 2 {
            if crate::modulus::is_prime(q) {
                found.push(q);
            }
            q -= step;
        }
        // Small ones too (tests the generic reductions).
        let mut q = step + 1;
        while found.len() < 3 {
            if crate::modulus::is_prime(q) {
                found.push(q);
            }
            q += step;
        }
        found
    }

    /// `len` residues below `q`, the extremes `q − 1` and 0 first.
    pub(crate) fn random_below(rng: &mut impl Rng, q: u32, len: usize) -> Vec<u32> {
        let mut v: Vec<u32> = (0..len).map(|_| rng.gen_range(0..q)).collect();
        if len >= 2 {
            v[0] = q - 1;
            v[1] = 0;
        }
        v
    }

    /// [`RnsKernels::forward_shoup`] equals the Montgomery NTT of [`Portable`] for every
    /// degree from 2 to 2^15, and refuses a buffer of the wrong length.
    pub(crate) fn check_forward_shoup<B: RnsKernels>() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(6);
        for log_n in 1..=15 {
            let n = 1usize << log_n;
            for q in primes_for(n) {
                let table = NttTable::new_vec(q, n).unwrap();
                let view = table.view();
                let shoup = ShoupTable::new(&view);
                for _ in 0..3 {
                    let input = random_below(&mut rng, q, n);
                    let (mut ours, mut theirs) = (input.clone(), input);
                    B::forward_shoup(&shoup, &mut ours).unwrap();
                    Portable::forward(&view, &mut theirs).unwrap();
                    assert_eq!(ours, theirs, "n={n} q={q}");
                }
            }
        }
        let table = NttTable::new_vec(12_289, 64).unwrap();
        assert!(B::forward_shoup(&ShoupTable::new(&table.view()), &mut [0u32; 32]).is_err());
    }

    /// [`RnsKernels::lift_centered`] equals the centred lift computed on `i64`.
    pub(crate) fn check_lift_centered<B: RnsKernels>() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(3);
        let moduli = [
            1_061_093_377u32,
            972_668_929,
            1_073_741_789,
            65_537,
            12_289,
            7681,
            3,
        ];
        for &p in &moduli {
            for &q in &moduli {
                let (from, to) = (Modulus::new(p).unwrap(), Modulus::new(q).unwrap());
                let mut src = random_below(&mut rng, p, 1000);
                let half = (p - 1) / 2;
                src.extend([half, half + 1, p - 1, 0, 1].iter().map(|v| v % p));
                let mut dst = vec![0; src.len()];
                B::lift_centered(&src, &from, &to, &mut dst).unwrap();
                for (&v, &d) in src.iter().zip(&dst) {
                    let centred = if v > half {
                        i64::from(v) - i64::from(p)
                    } else {
                        i64::from(v)
                    };
                    assert_eq!(
                        i64::from(d),
                        centred.rem_euclid(i64::from(q)),
                        "v={v} p={p} q={q}"
                    );
                }
            }
        }
    }

    /// [`RnsKernels::key_switch_block`] equals the exact (`u128`) sums, maximal inputs
    /// included.
    pub(crate) fn check_key_switch_block<B: RnsKernels>() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(4);
        for q in [1_073_741_789u32, 1_061_093_377, 65_537, 12_289] {
            let m = Modulus::new(q).unwrap();
            for count in [0usize, 1, 12, 16, 17, 40] {
                for len in [1usize, 16, 33, 64] {
                    let stride = len + 3;
                    let total = count.max(1) * stride;
                    let digits = random_below(&mut rng, q, total);
                    // Worst case for the lazy sums: all maximal.
                    let key_a = if count == 17 {
                        vec![q - 1; total]
                    } else {
                        random_below(&mut rng, q, total)
                    };
                    let digits = if count == 17 {
                        vec![q - 1; total]
                    } else {
                        digits
                    };
                    let key_b = random_below(&mut rng, q, total);
                    let add_a = random_below(&mut rng, q, len);
                    let add_b = random_below(&mut rng, q, len);
                    let to_mont = |k: &[u32]| k.iter().map(|&v| m.to_mont(v)).collect::<Vec<_>>();
                    let (mut out_a, mut out_b) = (vec![0; len], vec![0; len]);
                    B::key_switch_block(
                        &m,
                        count,
                        stride,
                        &digits,
                        &to_mont(&key_a),
                        &to_mont(&key_b),
                        &add_a,
                        &add_b,
                        &mut out_a,
                        &mut out_b,
                    )
                    .unwrap();
                    for j in 0..len {
                        let expect = |key: &[u32], add: &[u32]| {
                            let mut s = u128::from(add[j]);
                            for i in 0..count {
                                s += u128::from(digits[i * stride + j])
                                    * u128::from(key[i * stride + j]);
                            }
                            (s % u128::from(q)) as u32
                        };
                        assert_eq!(
                            out_a[j],
                            expect(&key_a, &add_a),
                            "a q={q} count={count} len={len} j={j}"
                        );
                        assert_eq!(
                            out_b[j],
                            expect(&key_b, &add_b),
                            "b q={q} count={count} len={len} j={j}"
                        );
                    }
                }
            }
        }
        // No digits: the streams may be empty and the outputs are the addends (40 outputs:
        // whole vectors and a tail).
        let m = Modulus::new(12_289).unwrap();
        let add: Vec<u32> = (0..40).collect();
        let (mut out_a, mut out_b) = (vec![0; 40], vec![0; 40]);
        B::key_switch_block(&m, 0, 40, &[], &[], &[], &add, &add, &mut out_a, &mut out_b).unwrap();
        assert_eq!((out_a, out_b), (add.clone(), add));
    }

    /// [`RnsKernels::tensor_key_switch_block`] equals the exact (`u128`) sums, maximal
    /// inputs included.
    pub(crate) fn check_tensor_key_switch_block<B: RnsKernels>() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(8);
        for q in [1_073_741_789u32, 1_061_093_377, 65_537, 12_289] {
            let m = Modulus::new(q).unwrap();
            for count in [0usize, 1, 12, 14, 15, 16, 30] {
                for len in [1usize, 16, 33] {
                    let stride = len + 5;
                    let total = count.max(1) * stride;
                    let maximal = count == 14;
                    let pick = |rng: &mut rand::rngs::StdRng, l| {
                        if maximal {
                            vec![q - 1; l]
                        } else {
                            random_below(rng, q, l)
                        }
                    };
                    let digits = pick(&mut rng, total);
                    let key_a = pick(&mut rng, total);
                    let key_b = pick(&mut rng, total);
                    let xs = [pick(&mut rng, len), pick(&mut rng, len)];
                    let ys = [pick(&mut rng, len), pick(&mut rng, len)];
                    let to_mont = |k: &[u32]| k.iter().map(|&v| m.to_mont(v)).collect::<Vec<_>>();
                    let (mut out_a, mut out_b) = (vec![0; len], vec![0; len]);
                    B::tensor_key_switch_block(
                        &m,
                        count,
                        stride,
                        &digits,
                        &to_mont(&key_a),
                        &to_mont(&key_b),
                        [&xs[0], &xs[1]],
                        [&ys[0], &ys[1]],
                        &mut out_a,
                        &mut out_b,
                    )
                    .unwrap();
                    let big = |v: u32| u128::from(v);
                    for j in 0..len {
                        let mut sa = big(xs[0][j]) * big(ys[1][j]) + big(xs[1][j]) * big(ys[0][j]);
                        let mut sb = big(xs[0][j]) * big(ys[0][j]);
                        for i in 0..count {
                            sa += big(digits[i * stride + j]) * big(key_a[i * stride + j]);
                            sb += big(digits[i * stride + j]) * big(key_b[i * stride + j]);
                        }
                        assert_eq!(
                            u128::from(out_a[j]),
                            sa % big(q),
                            "a q={q} count={count} len={len} j={j}"
                        );
                        assert_eq!(
                            u128::from(out_b[j]),
                            sb % big(q),
                            "b q={q} count={count} len={len} j={j}"
                        );
                    }
                }
            }
        }
    }

    /// [`RnsKernels::key_switch_block`] refuses digits shorter than the shape needs.
    pub(crate) fn check_key_switch_rejects_short_inputs<B: RnsKernels>() {
        let m = Modulus::new(12_289).unwrap();
        let (mut oa, mut ob) = (vec![0; 16], vec![0; 16]);
        let z = vec![0u32; 16];
        let short = vec![0u32; 20];
        assert!(B::key_switch_block(&m, 2, 16, &short, &z, &z, &z, &z, &mut oa, &mut ob).is_err());
    }

    /// The tests of one [`RnsKernels`] implementation: `rns_kernel_tests!(Backend);` in a
    /// test module.
    macro_rules! rns_kernel_tests {
        ($backend:ty) => {
            #[test]
            fn shoup_forward_matches_portable() {
                $crate::rns::tests::check_forward_shoup::<$backend>();
            }

            #[test]
            fn lift_matches_scalar_definition() {
                $crate::rns::tests::check_lift_centered::<$backend>();
            }

            #[test]
            fn key_switch_block_matches_big_integers() {
                $crate::rns::tests::check_key_switch_block::<$backend>();
            }

            #[test]
            fn tensor_key_switch_matches_big_integers() {
                $crate::rns::tests::check_tensor_key_switch_block::<$backend>();
            }

            #[test]
            fn key_switch_block_rejects_short_inputs() {
                $crate::rns::tests::check_key_switch_rejects_short_inputs::<$backend>();
            }
        };
    }
    pub(crate) use rns_kernel_tests;

    rns_kernel_tests!(Portable);
}
