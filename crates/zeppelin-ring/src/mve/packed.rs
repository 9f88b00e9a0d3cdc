//! The radix-4 Helium NTT for `n = 4096`: generated kernels (`gen_ntt.py` writes
//! `packed_kernel.rs`), their packed twiddle table, and the range auditor of their plan.
//!
//! # Arithmetic
//!
//! Lanes hold signed 32-bit values. A product by a twiddle `w` is a 3-instruction Barrett
//! product with `w' = round(w·2^31/q)`: `t = vqrdmulh(y, w')` (`round(y·w'/2^31)`, within
//! `1/2 + |y|/2^32` of `y·w/q`), `y·w − t·q` from `vmul` and `vmla` by `−q` (exact mod 2^32,
//! and the true value is below 2^31), so `|y·w mod± q| <= q/2 + |y|·q/2^32`. A butterfly
//! is that product plus one `vadd` and one `vsub` into the free register (rows are renamed,
//! never moved): 5 instructions per four lanes. Only `w'` is stored; `w = round(w'·q/2^31)` is one
//! `smmulr` by `2q` (scalar twiddles) or `vqrdmulh` by `q` (per-lane twiddles).
//!
//! # Schedule
//!
//! Forward: five passes of two layers on four rows each (halves 2048/1024, 512/256, 128/64,
//! 32/16, 8/4) with the twiddles of a group in core registers (`ldm` + `smmulr`), then one
//! pass of the last two layers on `vld4`-de-interleaved rows with per-lane twiddles, which
//! canonicalises (Barrett reduction, then `min_u(x, x + q)`) and stores with `vst4` in
//! natural order. The output is the evaluation map of [`crate::ntt`], bit for bit.
//!
//! Inverse: the mirror image with Gentleman–Sande butterflies, reading the forward table
//! backwards: `ψ^-e = −ψ^(n−e)` and the mirror of entry `k` of a level is entry
//! `3·2^l − 1 − k`, so the inverse's group `g` takes the forward triple of group `G − 1 − g`
//! (`ldmdb`) and computes `(y − x)·w` instead of `(x − y)·w^-1`; the per-lane pass gathers
//! its twiddles backwards with lanes reversed (`vldrw` with a vector base, written back).
//! `n^-1` is folded into the last layer (`n^-1` on the sum, `ψ^(n/2)·n^-1` on the
//! difference), whose products are canonicalised with one `min_u`.
//!
//! Bounds grow by about `q/2` per forward layer and double per inverse layer; the plan
//! (`FORWARD_REDUCE`, `INVERSE_REDUCE`) says where a pass Barrett-reduces, and
//! [`certify`] walks it with exact integer bounds for a given `q`: every intermediate
//! `|x| <= 2^31 − 1`, and every value a canonicalisation sees `|x| <= q − 1`.
//! [`PackedTwiddles::new`] refuses a modulus the plan cannot certify.
//!
//! # Control flow
//!
//! Hardware loops (`dls`/`le`) over public trip counts (groups, blocks); no other branch, no
//! data-dependent address: the only gather reads twiddle addresses fixed by the loop
//! position. The binary audit (`security/audit`) checks both on the linked images.

use super::packed_kernel::{
    FORWARD_INSTRUCTIONS, FORWARD_REDUCE, INVERSE_INSTRUCTIONS, INVERSE_REDUCE, PLAN_MAX_MODULUS,
    SCALAR_HALVES,
};
use super::schedule::RangeError;
use crate::modulus::Modulus;
use crate::ntt::{bit_reverse, smallest_primitive_root, NttView, PackedView};

/// The degree the packed kernels are generated for.
pub const PACKED_DEGREE: usize = 4096;
const LOG_N: u32 = 12;
/// Words of the scalar passes' triples: three per group of every pass (1023).
const TRIPLE_WORDS: usize = {
    let mut words = 0;
    let mut pass = 0;
    while pass < SCALAR_HALVES.len() {
        words += 3 * (PACKED_DEGREE / (4 * SCALAR_HALVES[pass]));
        pass += 1;
    }
    words
};
/// 16-coefficient blocks of the per-lane pass.
const VECTOR_BLOCKS: usize = PACKED_DEGREE / 16;
/// Every intermediate's absolute value is at most this (signed 32-bit lanes).
const LIMIT: u64 = (1 << 31) - 1;
/// Largest modulus the plan certifies (the plan was generated for it).
pub const MAX_PACKED_MODULUS: u32 = PLAN_MAX_MODULUS;

/// Instructions one packed forward / inverse call retires, counted by the generator on the
/// program it emitted (the firmware measures the same under QEMU).
pub const PACKED_INSTRUCTIONS: (usize, usize) = (FORWARD_INSTRUCTIONS, INVERSE_INSTRUCTIONS);

extern "C" {
    fn zeppelin_mve_ntt4096_forward(a: *mut u32, table: *const u32, consts: *const u32);
    fn zeppelin_mve_ntt4096_inverse(a: *mut u32, table: *const u32, consts: *const u32);
}

/// `|Barrett product|` bound for `|y| <= a`: `q/2 + a·q/2^32`, floored (the product is an
/// integer).
const fn product_bound(q: u64, a: u64) -> u64 {
    (q * (1 << 31) + a * q) >> 32
}

const fn max(a: u64, b: u64) -> u64 {
    if a > b {
        a
    } else {
        b
    }
}

/// Certifies the packed forward and inverse plans for `q`; returns the largest bound of any
/// intermediate (absolute value).
pub const fn certify(q: u32) -> Result<u64, RangeError> {
    if q < 3 || q > MAX_PACKED_MODULUS {
        return Err(RangeError::Overflow {
            step: 0,
            bound: q as u64,
        });
    }
    let q = q as u64;
    let mut worst = 0;
    // Forward: inputs in [0, q).
    let mut a = q - 1;
    let mut step = 0;
    while step < FORWARD_REDUCE.len() {
        let x = if FORWARD_REDUCE[step] {
            product_bound(q, a)
        } else {
            a
        };
        let first = x + product_bound(q, a);
        let second = first + product_bound(q, first);
        if second > LIMIT {
            return Err(RangeError::Overflow {
                step,
                bound: second,
            });
        }
        worst = max(worst, second);
        a = second;
        step += 1;
    }
    // The last pass reduces, then canonicalises from (−q, q).
    if product_bound(q, a) > q - 1 {
        return Err(RangeError::Underflow { step });
    }
    // Inverse: inputs in [0, q).
    let mut a = q - 1;
    let mut step = 0;
    while step < INVERSE_REDUCE.len() {
        let sum = 2 * a;
        let diff = product_bound(q, sum);
        let sum_of_sums = 2 * sum;
        let sum_of_diffs = 2 * diff;
        let top = max(sum_of_sums, sum_of_diffs);
        if top > LIMIT {
            return Err(RangeError::Overflow { step, bound: top });
        }
        worst = max(worst, top);
        if step + 1 == INVERSE_REDUCE.len() {
            // Products by n^-1 and ψ^(n/2)·n^-1, then one canonicalisation from (−q, q).
            if max(
                product_bound(q, sum_of_sums),
                product_bound(q, sum_of_diffs),
            ) > q - 1
            {
                return Err(RangeError::Underflow { step });
            }
        } else {
            let row0 = if INVERSE_REDUCE[step] {
                product_bound(q, sum_of_sums)
            } else {
                sum_of_sums
            };
            a = max(
                max(row0, product_bound(q, sum_of_sums)),
                max(sum_of_diffs, product_bound(q, sum_of_diffs)),
            );
        }
        step += 1;
    }
    Ok(worst)
}

// The plan holds for every modulus up to the limit (bounds grow with q), and fails above.
const _: () = assert!(certify(MAX_PACKED_MODULUS).is_ok());
const _: () = assert!(certify(1 << 29).is_err());

/// `round(w·2^31/q)`.
const fn companion(w: u32, q: u32) -> u32 {
    (((w as u64) << 31) + (q as u64 >> 1)).div_euclid(q as u64) as u32
}

/// The packed twiddles of one prime for `n = 4096` (see the [module documentation](self)),
/// built at compile time into a preset's device tables.
///
/// ```ignore
/// static PACKED: PackedTwiddles = match PackedTwiddles::new(134_176_769) {
///     Ok(t) => t,
///     Err(_) => panic!("not certifiable"),
/// };
/// ```
#[derive(Clone, Debug)]
pub struct PackedTwiddles {
    table: [u32; PACKED_DEGREE],
    consts: [u32; 8],
}

impl PackedTwiddles {
    /// Builds and certifies the table for the NTT-friendly prime `q < 2^28`.
    pub const fn new(q: u32) -> Result<Self, RangeError> {
        if let Err(e) = certify(q) {
            return Err(e);
        }
        let modulus = match Modulus::new(q) {
            Ok(m) => m,
            Err(_) => return Err(RangeError::Underflow { step: 0 }),
        };
        if !(q as u64 - 1).is_multiple_of(2 * PACKED_DEGREE as u64) {
            return Err(RangeError::Degree {
                degree: PACKED_DEGREE,
            });
        }
        let psi = smallest_primitive_root(&modulus, PACKED_DEGREE);
        // fwd[br(i)] = ψ^i, in normal form
        let mut fwd = [0u32; PACKED_DEGREE];
        let mut power = 1;
        let mut i = 0;
        while i < PACKED_DEGREE {
            fwd[bit_reverse(i, LOG_N)] = power;
            power = modulus.mul(power, psi);
            i += 1;
        }
        let mut table = [0u32; PACKED_DEGREE];
        let mut at = 0;
        let mut pass = 0;
        while pass < SCALAR_HALVES.len() {
            let groups = PACKED_DEGREE / (4 * SCALAR_HALVES[pass]);
            let mut g = 0;
            while g < groups {
                table[at] = companion(fwd[groups + g], q);
                table[at + 1] = companion(fwd[2 * groups + 2 * g], q);
                table[at + 2] = companion(fwd[2 * groups + 2 * g + 1], q);
                at += 3;
                g += 1;
            }
            pass += 1;
        }
        let mut b = 0;
        while b < VECTOR_BLOCKS {
            let mut k = 0;
            while k < 4 {
                table[at + k] = companion(fwd[PACKED_DEGREE / 4 + 4 * b + k], q);
                table[at + 4 + k] = companion(fwd[PACKED_DEGREE / 2 + 8 * b + 2 * k], q);
                table[at + 8 + k] = companion(fwd[PACKED_DEGREE / 2 + 8 * b + 2 * k + 1], q);
                k += 1;
            }
            at += 12;
            b += 1;
        }
        let n_inv = q - (q - 1) / PACKED_DEGREE as u32;
        let n_inv_psi = modulus.mul(n_inv, fwd[1]);
        let consts = [
            q,
            q.wrapping_neg(),
            2 * q,
            companion(1, q),
            n_inv,
            companion(n_inv, q),
            n_inv_psi,
            companion(n_inv_psi, q),
        ];
        Ok(Self { table, consts })
    }

    /// The view the table carries (see [`crate::NttTable::with_packed`]).
    pub const fn view(&'static self) -> PackedView<'static> {
        PackedView {
            table: &self.table,
            consts: &self.consts,
        }
    }
}

const _: () = assert!(TRIPLE_WORDS + 12 * VECTOR_BLOCKS < PACKED_DEGREE);

/// Whether the packed kernels serve this call: n = 4096, and twiddles built for this modulus.
#[inline(always)]
fn packed_for<'a>(table: &NttView<'a>, len: usize) -> Option<PackedView<'a>> {
    match table.packed {
        Some(p)
            if len == PACKED_DEGREE
                && table.log_n == LOG_N
                && p.consts[0] == table.modulus.value()
                && p.table.len() > TRIPLE_WORDS + 12 * VECTOR_BLOCKS =>
        {
            Some(p)
        }
        _ => None,
    }
}

/// Runs the packed forward kernel if it serves this call; returns whether it ran.
#[inline(always)]
pub(super) fn try_forward(table: &NttView<'_>, a: &mut [u32]) -> bool {
    match packed_for(table, a.len()) {
        Some(p) => {
            // SAFETY: `a` has 4096 entries, the table at least 4095 (checked above), the
            // constants 8; the kernel touches nothing else and preserves the callee-saved
            // registers (AAPCS).
            unsafe {
                zeppelin_mve_ntt4096_forward(a.as_mut_ptr(), p.table.as_ptr(), p.consts.as_ptr())
            };
            true
        }
        None => false,
    }
}

/// Runs the packed inverse kernel if it serves this call; returns whether it ran.
#[inline(always)]
pub(super) fn try_inverse(table: &NttView<'_>, a: &mut [u32]) -> bool {
    match packed_for(table, a.len()) {
        Some(p) => {
            // SAFETY: as in `try_forward`.
            unsafe {
                zeppelin_mve_ntt4096_inverse(a.as_mut_ptr(), p.table.as_ptr(), p.consts.as_ptr())
            };
            true
        }
        None => false,
    }
}
