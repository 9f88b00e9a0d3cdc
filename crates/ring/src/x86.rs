//! The x86-64 SIMD backend: AVX-512F (16 lanes) or else AVX2 (8 lanes), detected at run time
//! (`cpufeatures`, works in `no_std`), with [`Portable`] as the fallback on CPUs with neither
//! and for what the vectors do not cover ([`X86::simd_level`] says which is in use).
//!
//! Every routine computes exactly what its portable counterpart computes, lane for lane:
//! the same Montgomery reductions (`m = lo(x)·(−q⁻¹)`, `(x + m·q) / 2^32`), the same lazy
//! bounds (`< 4q` in the forward transform, `< 2q` in the inverse) and the same masked final
//! subtractions (here `min(x, x − m)` on unsigned lanes, which equals
//! [`crate::ct::reduce_once`] under the same preconditions). The tests below compare against
//! [`Portable`] on random inputs for every ring size from 2 to 2^15.
//!
//! Besides the [`NttBackend`] operations, [`X86`] accelerates the [`RnsKernels`] of RNS
//! servers (OpenFHE-style key switching); their portable definitions live in
//! [`crate::rns`].
//!
//! All data handled here is public or treated uniformly: no branch or memory index depends
//! on a residue.

// The AVX-512 intrinsics are stable since Rust 1.89 (the workspace says 1.85; the machine's
// toolchain is newer). The lead should raise `rust-version` to 1.89.
#![allow(clippy::incompatible_msrv)]

use core::arch::x86_64::*;

use crate::error::RingError;
use crate::modulus::Modulus;
use crate::ntt::{check_same_len, NttBackend, NttView, Portable};
#[cfg(feature = "alloc")]
use crate::rns::ShoupTable;
use crate::rns::{check_key_switch, RnsKernels, MAX_LAZY_TERMS};

cpufeatures::new!(avx512f_cpuid, "avx512f");

/// The x86-64 backend: AVX-512F when the CPU (and OS) supports it, else AVX2, else
/// [`Portable`].
///
/// ```
/// use zeppelin_ring::{NttBackend, NttTable, Portable, X86};
/// let table = NttTable::new_vec(1_061_093_377, 4096).unwrap();
/// let mut a: Vec<u32> = (0..4096).collect();
/// let mut b = a.clone();
/// X86::forward(&table.view(), &mut a).unwrap();
/// Portable::forward(&table.view(), &mut b).unwrap();
/// assert_eq!(a, b);
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct X86;

impl X86 {
    /// Whether this CPU runs the AVX-512F code paths.
    pub fn simd_available() -> bool {
        avx512f_cpuid::get()
    }

    /// The instruction set the kernels use on this CPU: `"avx512f"`, `"avx2"` or
    /// `"portable"`.
    pub fn simd_level() -> &'static str {
        if avx512f_cpuid::get() {
            "avx512f"
        } else if avx2::available() {
            "avx2"
        } else {
            "portable"
        }
    }
}

/// The vector code covers a prefix of the outputs (whole vectors); [`Portable`] does the
/// rest, on the same slices from that point on.
impl RnsKernels for X86 {
    fn lift_centered(
        src: &[u32],
        from: &Modulus,
        to: &Modulus,
        dst: &mut [u32],
    ) -> Result<(), RingError> {
        check_same_len(dst.len(), src.len())?;
        let done = if avx512f_cpuid::get() {
            // SAFETY: the CPU supports AVX-512F (checked just above).
            unsafe { lift_centered_avx512(src, from, to, dst) }
        } else if avx2::available() {
            // SAFETY: AVX2 is available; equal lengths (checked).
            unsafe { avx2::lift_centered(src, from, to, dst) }
        } else {
            0
        };
        Portable::lift_centered(&src[done..], from, to, &mut dst[done..])
    }

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
        let streams = [digits, key_a, key_b];
        check_key_switch(count, stride, streams, &[add_a, add_b], out_a, out_b)?;
        let inputs = [add_a, add_b, add_a, add_b];
        // SAFETY: the shapes are checked; the CPU feature is checked by `key_switch_simd`.
        let done = unsafe {
            key_switch_simd::<false>(modulus, count, stride, streams, inputs, out_a, out_b)
        };
        key_switch_tail::<false>(modulus, count, stride, streams, inputs, out_a, out_b, done);
        Ok(())
    }

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
        let streams = [digits, key_a, key_b];
        let inputs = [x[0], x[1], y[0], y[1]];
        check_key_switch(count, stride, streams, &inputs, out_a, out_b)?;
        // SAFETY: as in `key_switch_block`.
        let done = unsafe {
            key_switch_simd::<true>(modulus, count, stride, streams, inputs, out_a, out_b)
        };
        key_switch_tail::<true>(modulus, count, stride, streams, inputs, out_a, out_b, done);
        Ok(())
    }

    #[cfg(feature = "alloc")]
    fn forward_shoup(table: &ShoupTable, a: &mut [u32]) -> Result<(), RingError> {
        check_same_len(table.degree(), a.len())?;
        let (m, twiddles, shoup) = (&table.modulus, &table.twiddles[..], &table.shoup[..]);
        if a.len() >= 32 && avx512f_cpuid::get() {
            // SAFETY: AVX-512F is available; `a.len()` is the table's degree (checked), and
            // both twiddle arrays have that length.
            unsafe { ntt_stages_avx512::<false, true>(m, twiddles, shoup, a) };
            Ok(())
        } else if a.len() >= 16 && avx2::available() {
            // SAFETY: AVX2 is available; lengths as above.
            unsafe { avx2::forward::<true>(m, twiddles, shoup, a) };
            Ok(())
        } else {
            Portable::forward_shoup(table, a)
        }
    }
}

/// The vector part of the key switch (with the tensor when `TENSOR`) on the widest vectors
/// this CPU has; returns how many outputs it handled (0 without AVX2).
///
/// # Safety
/// The shapes must have passed [`check_key_switch`].
#[allow(clippy::too_many_arguments)]
unsafe fn key_switch_simd<const TENSOR: bool>(
    m: &Modulus,
    count: usize,
    stride: usize,
    [digits, key_a, key_b]: [&[u32]; 3],
    inputs: [&[u32]; 4],
    out_a: &mut [u32],
    out_b: &mut [u32],
) -> usize {
    if avx512f_cpuid::get() {
        // SAFETY: AVX-512F is available and every index below `(count−1)·stride + len` is
        // in bounds of the three streams (the caller's contract).
        unsafe {
            key_switch_block_avx512::<TENSOR>(
                m, count, stride, digits, key_a, key_b, inputs, out_a, out_b,
            )
        }
    } else if avx2::available() {
        // SAFETY: AVX2 is available; bounds as above.
        unsafe {
            avx2::key_switch::<TENSOR>(m, count, stride, digits, key_a, key_b, inputs, out_a, out_b)
        }
    } else {
        0
    }
}

/// The outputs from `done` on, by the portable kernel (shapes already checked).
#[allow(clippy::too_many_arguments)]
fn key_switch_tail<const TENSOR: bool>(
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
        crate::rns::key_switch::<TENSOR>(
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

/// `y·w mod q` in `[0, 2q)` per lane for `w_shoup = floor(w·2^32/q)` (the portable
/// Shoup product of [`RnsKernels::forward_shoup`]); `w_shoup_odd` is `w_shoup >> 32` per
/// 64-bit lane.
#[inline]
#[target_feature(enable = "avx512f")]
fn shoup_mul_lazy_v(
    y: __m512i,
    w: __m512i,
    w_shoup: __m512i,
    w_shoup_odd: __m512i,
    q: __m512i,
) -> __m512i {
    let hi_even = _mm512_srli_epi64::<32>(_mm512_mul_epu32(y, w_shoup));
    let hi_odd = _mm512_mul_epu32(_mm512_srli_epi64::<32>(y), w_shoup_odd);
    let quotient = _mm512_mask_blend_epi32(0xAAAA, hi_even, hi_odd);
    _mm512_sub_epi32(_mm512_mullo_epi32(y, w), _mm512_mullo_epi32(quotient, q))
}

/// Cooley–Tukey butterfly with a Shoup product: inputs `< 4q`, outputs `< 4q`.
#[inline]
#[target_feature(enable = "avx512f")]
fn ct_butterfly_shoup(
    x: __m512i,
    y: __m512i,
    w: __m512i,
    w_shoup: __m512i,
    w_shoup_odd: __m512i,
    c: &Consts,
) -> (__m512i, __m512i) {
    let u = reduce_once_v(x, c.two_q);
    let v = shoup_mul_lazy_v(y, w, w_shoup, w_shoup_odd, c.q);
    (
        _mm512_add_epi32(u, v),
        _mm512_sub_epi32(_mm512_add_epi32(u, c.two_q), v),
    )
}

impl NttBackend for X86 {
    const NAME: &'static str = "x86-simd";

    fn forward(table: &NttView<'_>, a: &mut [u32]) -> Result<(), RingError> {
        table.check_len(a.len())?;
        if a.len() >= 32 && avx512f_cpuid::get() {
            // SAFETY: AVX-512F is available; `a.len()` is the table's degree (checked), and
            // so is the twiddle table's length.
            unsafe { ntt_stages_avx512::<false, false>(&table.modulus, table.forward, &[], a) };
            Ok(())
        } else if a.len() >= 16 && avx2::available() {
            // SAFETY: AVX2 is available; lengths as above.
            unsafe { avx2::forward::<false>(&table.modulus, table.forward, &[], a) };
            Ok(())
        } else {
            Portable::forward(table, a)
        }
    }

    fn inverse(table: &NttView<'_>, a: &mut [u32]) -> Result<(), RingError> {
        table.check_len(a.len())?;
        if a.len() >= 32 && avx512f_cpuid::get() {
            // SAFETY: AVX-512F is available; `a.len()` is the table's degree (checked).
            unsafe { inverse_avx512(table, a) };
            Ok(())
        } else if a.len() >= 16 && avx2::available() {
            // SAFETY: AVX2 is available; `a.len()` is the table's degree (checked).
            unsafe { avx2::inverse(table, a) };
            Ok(())
        } else {
            Portable::inverse(table, a)
        }
    }

    fn pointwise_mul(
        modulus: &Modulus,
        a: &[u32],
        b: &[u32],
        out: &mut [u32],
    ) -> Result<(), RingError> {
        check_same_len(out.len(), a.len())?;
        check_same_len(out.len(), b.len())?;
        // SAFETY: the three slices have equal lengths (checked).
        let done = unsafe { pointwise_simd::<false>(modulus, a, b, out) };
        Portable::pointwise_mul(modulus, &a[done..], &b[done..], &mut out[done..])
    }

    fn pointwise_mul_add(
        modulus: &Modulus,
        a: &[u32],
        b: &[u32],
        acc: &mut [u32],
    ) -> Result<(), RingError> {
        check_same_len(acc.len(), a.len())?;
        check_same_len(acc.len(), b.len())?;
        // SAFETY: the three slices have equal lengths (checked).
        let done = unsafe { pointwise_simd::<true>(modulus, a, b, acc) };
        Portable::pointwise_mul_add(modulus, &a[done..], &b[done..], &mut acc[done..])
    }
}

/// The vector part of the pointwise products on the widest vectors this CPU has; returns
/// how many elements it handled (0 without AVX2).
///
/// # Safety
/// The slices must have equal lengths.
unsafe fn pointwise_simd<const ACCUMULATE: bool>(
    m: &Modulus,
    a: &[u32],
    b: &[u32],
    out: &mut [u32],
) -> usize {
    if avx512f_cpuid::get() {
        // SAFETY: AVX-512F is available; equal lengths (the caller's contract).
        unsafe { pointwise_avx512::<ACCUMULATE>(m, a, b, out) }
    } else if avx2::available() {
        // SAFETY: AVX2 is available; equal lengths.
        unsafe { avx2::pointwise::<ACCUMULATE>(m, a, b, out) }
    } else {
        0
    }
}

/// `2^64 mod q`, the constant that turns a Montgomery product back into a plain product.
fn r2(m: &Modulus) -> u32 {
    m.to_mont(m.to_mont(1))
}

/// Per-modulus vector constants.
#[derive(Clone, Copy)]
struct Consts {
    q: __m512i,
    two_q: __m512i,
    q_inv_neg: __m512i,
}

#[inline]
#[target_feature(enable = "avx512f")]
fn consts(m: &Modulus) -> Consts {
    Consts {
        q: _mm512_set1_epi32(m.value() as i32),
        two_q: _mm512_set1_epi32((2 * m.value()) as i32),
        q_inv_neg: _mm512_set1_epi32(m.q_inv_neg() as i32),
    }
}

/// `min(x, x − m)` per unsigned lane: `x − m` if `x >= m`, else `x` (for `x < 2^31 + m`).
#[inline]
#[target_feature(enable = "avx512f")]
fn reduce_once_v(x: __m512i, m: __m512i) -> __m512i {
    _mm512_min_epu32(x, _mm512_sub_epi32(x, m))
}

/// Montgomery product `a·b·2^-32` in `[0, 2q)` per lane, for `a·b < q·2^32`: exactly
/// [`Modulus::mont_mul_lazy`].
#[inline]
#[target_feature(enable = "avx512f")]
fn mont_mul_lazy_v(a: __m512i, b: __m512i, c: &Consts) -> __m512i {
    let p_even = _mm512_mul_epu32(a, b);
    let p_odd = _mm512_mul_epu32(_mm512_srli_epi64::<32>(a), _mm512_srli_epi64::<32>(b));
    // m = lo(p)·(−q⁻¹) mod 2^32 sits in the low half of each 64-bit lane.
    let m_even = _mm512_mul_epu32(p_even, c.q_inv_neg);
    let m_odd = _mm512_mul_epu32(p_odd, c.q_inv_neg);
    let t_even = _mm512_add_epi64(p_even, _mm512_mul_epu32(m_even, c.q));
    let t_odd = _mm512_add_epi64(p_odd, _mm512_mul_epu32(m_odd, c.q));
    // High halves: even lanes shifted down, odd lanes already in place.
    _mm512_mask_blend_epi32(0xAAAA, _mm512_srli_epi64::<32>(t_even), t_odd)
}

/// Cooley–Tukey butterfly of [`Portable::forward`]: inputs `< 4q`, outputs `< 4q`.
#[inline]
#[target_feature(enable = "avx512f")]
fn ct_butterfly(x: __m512i, y: __m512i, w: __m512i, c: &Consts) -> (__m512i, __m512i) {
    let u = reduce_once_v(x, c.two_q);
    let v = mont_mul_lazy_v(y, w, c);
    (
        _mm512_add_epi32(u, v),
        _mm512_sub_epi32(_mm512_add_epi32(u, c.two_q), v),
    )
}

/// Gentleman–Sande butterfly of [`Portable::inverse`]: inputs and outputs `< 2q`.
#[inline]
#[target_feature(enable = "avx512f")]
fn gs_butterfly(x: __m512i, y: __m512i, w: __m512i, c: &Consts) -> (__m512i, __m512i) {
    let sum = reduce_once_v(_mm512_add_epi32(x, y), c.two_q);
    let diff = _mm512_sub_epi32(_mm512_add_epi32(x, c.two_q), y);
    (sum, mont_mul_lazy_v(diff, w, c))
}

/// Lane permutations for the stages whose butterfly distance `h` (1, 2, 4 or 8) is below
/// one vector: a 32-element chunk `[A | B]` is split into the upper-half-free elements `X`
/// and their partners `Y = X + h`, and merged back afterwards.
struct SmallStage {
    to_x: __m512i,
    to_y: __m512i,
    back_lo: __m512i,
    back_hi: __m512i,
    /// Lane `l` takes twiddle `l / h` of the chunk's group run.
    twiddle: __m512i,
    /// Number of distinct twiddles per chunk: `16 / h`.
    twiddle_mask: __mmask16,
}

/// The index vectors of [`SmallStage`] for `h = 2^log_h`, computed at compile time:
/// `[to_x, to_y, back_lo, back_hi, twiddle]`.
const fn small_stage_indices(log_h: usize) -> [[i32; 16]; 5] {
    let h = 1usize << log_h;
    let mut t = [[0i32; 16]; 5];
    let mut l = 0;
    while l < 16 {
        let x = (l / h) * 2 * h + l % h;
        t[0][l] = x as i32;
        t[1][l] = (x + h) as i32;
        t[4][l] = (l / h) as i32;
        l += 1;
    }
    let mut p = 0;
    while p < 32 {
        let (block, offset) = (p / (2 * h), p % (2 * h));
        let source = if offset < h {
            block * h + offset
        } else {
            16 + block * h + offset - h
        };
        t[2 + p / 16][p % 16] = source as i32;
        p += 1;
    }
    t
}

/// [`small_stage_indices`] for `h = 1, 2, 4, 8`.
static SMALL_STAGES: [[[i32; 16]; 5]; 4] = [
    small_stage_indices(0),
    small_stage_indices(1),
    small_stage_indices(2),
    small_stage_indices(3),
];

/// The lane permutations for butterfly distance `h` in {1, 2, 4, 8}.
#[inline]
#[target_feature(enable = "avx512f")]
fn small_stage(h: usize) -> SmallStage {
    let t = &SMALL_STAGES[h.trailing_zeros() as usize & 3];
    // SAFETY: each row is 16 `i32`s, exactly one unaligned 512-bit load.
    let load = |row: &[i32; 16]| unsafe { _mm512_loadu_si512(row.as_ptr().cast()) };
    SmallStage {
        to_x: load(&t[0]),
        to_y: load(&t[1]),
        back_lo: load(&t[2]),
        back_hi: load(&t[3]),
        twiddle: load(&t[4]),
        twiddle_mask: ((1u32 << (16 / h)) - 1) as __mmask16,
    }
}

/// All stages of a forward (Cooley–Tukey, Montgomery or with `SHOUP` Shoup twiddle
/// products, then the final reduction below `q`) or an `INVERSE` (Gentleman–Sande, without
/// the scaling by `n^-1`) transform: one stage loop for the three, the choices made at
/// compile time. `w` holds the table's twiddles (`w_shoup` their Shoup companions, with
/// `SHOUP`; it is not read otherwise).
///
/// # Safety
/// AVX-512F must be available; `a.len()` is a power of two `>= 32` and the length of `w`
/// (and of `w_shoup` with `SHOUP`).
#[target_feature(enable = "avx512f")]
unsafe fn ntt_stages_avx512<const INVERSE: bool, const SHOUP: bool>(
    m: &Modulus,
    w: &[u32],
    w_shoup: &[u32],
    a: &mut [u32],
) {
    let c = &consts(m);
    let n = a.len();
    let ptr = a.as_mut_ptr();
    let log_n = n.trailing_zeros();
    for stage in 0..log_n {
        // Forward: butterfly distance n/2 down to 1; inverse: 1 up to n/2.
        let half = if INVERSE {
            1 << stage
        } else {
            n >> (stage + 1)
        };
        let groups = n / (2 * half);
        if half >= 16 {
            for group in 0..groups {
                let tw = Twiddles {
                    w: _mm512_set1_epi32(w[groups + group] as i32),
                    // A broadcast: the odd lanes' companion is the same value.
                    shoup: if SHOUP {
                        _mm512_set1_epi32(w_shoup[groups + group] as i32)
                    } else {
                        _mm512_setzero_si512()
                    },
                };
                let base = group * 2 * half;
                for j in (0..half).step_by(16) {
                    // SAFETY: base + half + j + 16 <= (group + 1)·2·half <= n.
                    unsafe {
                        let px = ptr.add(base + j);
                        let py = ptr.add(base + half + j);
                        let x = _mm512_loadu_si512(px.cast());
                        let y = _mm512_loadu_si512(py.cast());
                        let (x, y) = butterfly::<INVERSE, SHOUP>(x, y, tw, tw.shoup, c);
                        _mm512_storeu_si512(px.cast(), x);
                        _mm512_storeu_si512(py.cast(), y);
                    }
                }
            }
        } else {
            let s = small_stage(half);
            for chunk in (0..n).step_by(32) {
                let first_group = groups + chunk / (2 * half);
                // SAFETY: chunk + 32 <= n; the masked twiddle loads read entries
                // first_group .. first_group + 16/half <= 2·groups = n/half <= n.
                unsafe {
                    let pa = ptr.add(chunk);
                    let pb = ptr.add(chunk + 16);
                    let va = _mm512_loadu_si512(pa.cast());
                    let vb = _mm512_loadu_si512(pb.cast());
                    let x = _mm512_permutex2var_epi32(va, s.to_x, vb);
                    let y = _mm512_permutex2var_epi32(va, s.to_y, vb);
                    let tw = Twiddles {
                        w: small_stage_twiddles(&s, w, first_group),
                        shoup: if SHOUP {
                            small_stage_twiddles(&s, w_shoup, first_group)
                        } else {
                            _mm512_setzero_si512()
                        },
                    };
                    let shoup_odd = _mm512_srli_epi64::<32>(tw.shoup);
                    let (x, y) = butterfly::<INVERSE, SHOUP>(x, y, tw, shoup_odd, c);
                    let mut va = _mm512_permutex2var_epi32(x, s.back_lo, y);
                    let mut vb = _mm512_permutex2var_epi32(x, s.back_hi, y);
                    if !INVERSE && half == 1 {
                        // The last forward stage: from `< 4q` to `< q` on the way out.
                        va = reduce_once_v(reduce_once_v(va, c.two_q), c.q);
                        vb = reduce_once_v(reduce_once_v(vb, c.two_q), c.q);
                    }
                    _mm512_storeu_si512(pa.cast(), va);
                    _mm512_storeu_si512(pb.cast(), vb);
                }
            }
        }
    }
}

/// The twiddles of a 32-element chunk of a stage of [`SmallStage`] shape, whose groups
/// start at `first_group`: lane `l` gets `table[first_group + l / h]`.
///
/// # Safety
/// `table` must hold `first_group + 16/h` entries.
#[inline]
#[target_feature(enable = "avx512f")]
unsafe fn small_stage_twiddles(s: &SmallStage, table: &[u32], first_group: usize) -> __m512i {
    // SAFETY: the masked load reads entries first_group .. first_group + 16/h (the caller's
    // contract) and nothing beyond.
    let run =
        unsafe { _mm512_maskz_loadu_epi32(s.twiddle_mask, table.as_ptr().add(first_group).cast()) };
    _mm512_permutexvar_epi32(s.twiddle, run)
}

/// The twiddle operand of a butterfly: `w` (Montgomery form, or normal form with its Shoup
/// companion `shoup`).
#[derive(Clone, Copy)]
struct Twiddles {
    w: __m512i,
    shoup: __m512i,
}

/// The butterfly [`ntt_stages_avx512`] uses; `shoup_odd` is `shoup >> 32` per 64-bit lane.
#[inline]
#[target_feature(enable = "avx512f")]
fn butterfly<const INVERSE: bool, const SHOUP: bool>(
    x: __m512i,
    y: __m512i,
    tw: Twiddles,
    shoup_odd: __m512i,
    c: &Consts,
) -> (__m512i, __m512i) {
    if INVERSE {
        gs_butterfly(x, y, tw.w, c)
    } else if SHOUP {
        ct_butterfly_shoup(x, y, tw.w, tw.shoup, shoup_odd, c)
    } else {
        ct_butterfly(x, y, tw.w, c)
    }
}

/// The inverse transform: [`ntt_stages_avx512`], then the scaling by `n^-1`.
///
/// # Safety
/// AVX-512F must be available and `a.len() == table.degree() >= 32`.
#[target_feature(enable = "avx512f")]
unsafe fn inverse_avx512(table: &NttView<'_>, a: &mut [u32]) {
    let c = consts(&table.modulus);
    // SAFETY: the caller's contract; the table's inverse twiddles have `a.len()` entries.
    unsafe { ntt_stages_avx512::<true, false>(&table.modulus, table.inverse, &[], a) };
    let n_inv = _mm512_set1_epi32(table.n_inv_mont as i32);
    for j in (0..a.len()).step_by(16) {
        // SAFETY: j + 16 <= a.len().
        unsafe {
            let p = a.as_mut_ptr().add(j);
            let x = _mm512_loadu_si512(p.cast());
            let x = reduce_once_v(mont_mul_lazy_v(x, n_inv, &c), c.q);
            _mm512_storeu_si512(p.cast(), x);
        }
    }
}

/// Vector part of the pointwise products; returns how many elements it handled.
///
/// # Safety
/// AVX-512F must be available and the slices must have equal lengths.
#[target_feature(enable = "avx512f")]
unsafe fn pointwise_avx512<const ACCUMULATE: bool>(
    m: &Modulus,
    a: &[u32],
    b: &[u32],
    out: &mut [u32],
) -> usize {
    let c = consts(m);
    let r2 = _mm512_set1_epi32(r2(m) as i32);
    let len = out.len() & !15;
    for j in (0..len).step_by(16) {
        // SAFETY: j + 16 <= len <= every slice's length.
        unsafe {
            let x = _mm512_loadu_si512(a.as_ptr().add(j).cast());
            let y = _mm512_loadu_si512(b.as_ptr().add(j).cast());
            // Modulus::mul: mont_mul(mont_mul_lazy(x, y), 2^64 mod q).
            let p = mont_mul_lazy_v(x, y, &c);
            let mut p = reduce_once_v(mont_mul_lazy_v(p, r2, &c), c.q);
            let po = out.as_mut_ptr().add(j);
            if ACCUMULATE {
                let acc = _mm512_loadu_si512(po.cast());
                p = reduce_once_v(_mm512_add_epi32(acc, p), c.q);
            }
            _mm512_storeu_si512(po.cast(), p);
        }
    }
    len
}

/// `x mod q` for `x < 2^32` per lane (Barrett with `μ = floor(2^32 / q)`).
#[inline]
#[target_feature(enable = "avx512f")]
fn reduce_u32_v(x: __m512i, q: __m512i, mu: __m512i) -> __m512i {
    let hi_even = _mm512_srli_epi64::<32>(_mm512_mul_epu32(x, mu));
    let hi_odd = _mm512_mul_epu32(_mm512_srli_epi64::<32>(x), mu);
    let quotient = _mm512_mask_blend_epi32(0xAAAA, hi_even, hi_odd);
    // The estimate is at most one below the true quotient, so the remainder is < 2q.
    let r = _mm512_sub_epi32(x, _mm512_mullo_epi32(quotient, q));
    reduce_once_v(r, q)
}

/// Vector part of [`X86::lift_centered`]; returns how many elements it handled.
///
/// # Safety
/// AVX-512F must be available and `src.len() == dst.len()`.
#[target_feature(enable = "avx512f")]
unsafe fn lift_centered_avx512(
    src: &[u32],
    from: &Modulus,
    to: &Modulus,
    dst: &mut [u32],
) -> usize {
    let p = _mm512_set1_epi32(from.value() as i32);
    let half = _mm512_set1_epi32(((from.value() - 1) / 2) as i32);
    let q = _mm512_set1_epi32(to.value() as i32);
    let mu = _mm512_set1_epi32(((1u64 << 32) / u64::from(to.value())) as u32 as i32);
    let len = dst.len() & !15;
    // When every magnitude (at most (p−1)/2) is already below q — the usual case of towers
    // of similar size — the Barrett step is the identity and is skipped.
    let reduce = (from.value() - 1) / 2 >= to.value();
    for j in (0..len).step_by(16) {
        // SAFETY: j + 16 <= len <= both lengths.
        unsafe {
            let v = _mm512_loadu_si512(src.as_ptr().add(j).cast());
            let negative = _mm512_cmpgt_epu32_mask(v, half);
            // |centred(v)|: p − v for the upper half, v otherwise.
            let magnitude = _mm512_mask_sub_epi32(v, negative, p, v);
            let r = if reduce {
                reduce_u32_v(magnitude, q, mu)
            } else {
                magnitude
            };
            // Negate the upper half mod q (q − 0 = q folds back to 0).
            let r = reduce_once_v(_mm512_mask_sub_epi32(r, negative, q, r), q);
            _mm512_storeu_si512(dst.as_mut_ptr().add(j).cast(), r);
        }
    }
    len
}

/// Reduces a 64-bit lane sum `s` to `s·2^-32 mod q` (`μ = floor(2^32/q)`): the high word is
/// reduced mod `q` by Barrett, then one Montgomery reduction of `(hi mod q)·2^32 + lo`.
#[inline]
#[target_feature(enable = "avx512f")]
fn reduce_sum_v(s: __m512i, c: &Consts, q64: __m512i, mu: __m512i) -> __m512i {
    let hi = _mm512_srli_epi64::<32>(s);
    let quotient = _mm512_srli_epi64::<32>(_mm512_mul_epu32(hi, mu));
    let r = _mm512_sub_epi64(hi, _mm512_mul_epu32(quotient, c.q));
    // `c.q` holds q in both halves of a 64-bit lane; 64-bit subtractions need `q64`.
    let hi = _mm512_min_epu64(r, _mm512_sub_epi64(r, q64));
    let folded = _mm512_or_si512(
        _mm512_slli_epi64::<32>(hi),
        _mm512_and_si512(s, _mm512_set1_epi64(0xffff_ffff)),
    );
    let m = _mm512_mul_epu32(folded, c.q_inv_neg);
    let t = _mm512_srli_epi64::<32>(_mm512_add_epi64(folded, _mm512_mul_epu32(m, c.q)));
    _mm512_min_epu64(t, _mm512_sub_epi64(t, q64))
}

/// Vector part of [`X86::key_switch_block`]; returns how many outputs it handled.
///
/// # Safety
/// AVX-512F must be available; `out_a`, `out_b`, `add_a`, `add_b` have equal lengths `len`,
/// and `digits`, `key_a`, `key_b` hold at least `(count−1)·stride + len` elements.
#[allow(clippy::too_many_arguments)]
#[target_feature(enable = "avx512f")]
unsafe fn key_switch_block_avx512<const TENSOR: bool>(
    m: &Modulus,
    count: usize,
    stride: usize,
    digits: &[u32],
    key_a: &[u32],
    key_b: &[u32],
    inputs: [&[u32]; 4],
    out_a: &mut [u32],
    out_b: &mut [u32],
) -> usize {
    // Without TENSOR: inputs = [add_a, add_b, -, -]. With TENSOR: inputs = [x0, x1, y0, y1].
    let [add_a, add_b, y0s, y1s] = inputs;
    let (x0s, x1s) = (add_a, add_b);
    let c = consts(m);
    let r2v = _mm512_set1_epi32(r2(m) as i32);
    let zero = _mm512_setzero_si512();
    let mu = _mm512_set1_epi64(((1u64 << 32) / u64::from(m.value())) as i64);
    let q64 = _mm512_set1_epi64(i64::from(m.value()));
    let len = out_a.len() & !15;
    for j in (0..len).step_by(16) {
        // SAFETY: j + 16 <= len, and i·stride + j + 16 <= (count−1)·stride + len.
        unsafe {
            let (mut acc_a, mut acc_b) = if TENSOR {
                (zero, zero)
            } else {
                (
                    _mm512_loadu_si512(add_a.as_ptr().add(j).cast()),
                    _mm512_loadu_si512(add_b.as_ptr().add(j).cast()),
                )
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
                    let x0 = _mm512_loadu_si512(x0s.as_ptr().add(j).cast());
                    let x1 = _mm512_loadu_si512(x1s.as_ptr().add(j).cast());
                    // y in Montgomery form (y·2^32 mod q), like the keys.
                    let y0 = _mm512_loadu_si512(y0s.as_ptr().add(j).cast());
                    let y1 = _mm512_loadu_si512(y1s.as_ptr().add(j).cast());
                    let y0 = reduce_once_v(mont_mul_lazy_v(y0, r2v, &c), c.q);
                    let y1 = reduce_once_v(mont_mul_lazy_v(y1, r2v, &c), c.q);
                    let (x0_odd, x1_odd) =
                        (_mm512_srli_epi64::<32>(x0), _mm512_srli_epi64::<32>(x1));
                    let (y0_odd, y1_odd) =
                        (_mm512_srli_epi64::<32>(y0), _mm512_srli_epi64::<32>(y1));
                    b_even = _mm512_mul_epu32(x0, y0);
                    b_odd = _mm512_mul_epu32(x0_odd, y0_odd);
                    a_even = _mm512_add_epi64(_mm512_mul_epu32(x0, y1), _mm512_mul_epu32(x1, y0));
                    a_odd = _mm512_add_epi64(
                        _mm512_mul_epu32(x0_odd, y1_odd),
                        _mm512_mul_epu32(x1_odd, y0_odd),
                    );
                }
                for i in first..last {
                    let at = i * stride + j;
                    let d = _mm512_loadu_si512(digits.as_ptr().add(at).cast());
                    let ka = _mm512_loadu_si512(key_a.as_ptr().add(at).cast());
                    let kb = _mm512_loadu_si512(key_b.as_ptr().add(at).cast());
                    let d_odd = _mm512_srli_epi64::<32>(d);
                    a_even = _mm512_add_epi64(a_even, _mm512_mul_epu32(d, ka));
                    a_odd = _mm512_add_epi64(
                        a_odd,
                        _mm512_mul_epu32(d_odd, _mm512_srli_epi64::<32>(ka)),
                    );
                    b_even = _mm512_add_epi64(b_even, _mm512_mul_epu32(d, kb));
                    b_odd = _mm512_add_epi64(
                        b_odd,
                        _mm512_mul_epu32(d_odd, _mm512_srli_epi64::<32>(kb)),
                    );
                }
                let sum_a = _mm512_mask_blend_epi32(
                    0xAAAA,
                    reduce_sum_v(a_even, &c, q64, mu),
                    _mm512_slli_epi64::<32>(reduce_sum_v(a_odd, &c, q64, mu)),
                );
                let sum_b = _mm512_mask_blend_epi32(
                    0xAAAA,
                    reduce_sum_v(b_even, &c, q64, mu),
                    _mm512_slli_epi64::<32>(reduce_sum_v(b_odd, &c, q64, mu)),
                );
                acc_a = reduce_once_v(_mm512_add_epi32(acc_a, sum_a), c.q);
                acc_b = reduce_once_v(_mm512_add_epi32(acc_b, sum_b), c.q);
                first = last;
            }
            _mm512_storeu_si512(out_a.as_mut_ptr().add(j).cast(), acc_a);
            _mm512_storeu_si512(out_b.as_mut_ptr().add(j).cast(), acc_b);
        }
    }
    len
}

/// The AVX2 versions of the kernels (8 lanes), for x86-64 CPUs without AVX-512F. Same
/// arithmetic, lane for lane, as the AVX-512 code above and as [`Portable`].
mod avx2 {
    use core::arch::x86_64::*;

    use super::{r2, MAX_LAZY_TERMS};
    use crate::modulus::Modulus;
    use crate::ntt::NttView;

    cpufeatures::new!(avx2_cpuid, "avx2");

    /// Whether the CPU runs these kernels.
    pub(super) fn available() -> bool {
        avx2_cpuid::get()
    }

    #[derive(Clone, Copy)]
    struct Consts {
        q: __m256i,
        two_q: __m256i,
        q_inv_neg: __m256i,
    }

    #[inline]
    #[target_feature(enable = "avx2")]
    fn consts(m: &Modulus) -> Consts {
        Consts {
            q: _mm256_set1_epi32(m.value() as i32),
            two_q: _mm256_set1_epi32((2 * m.value()) as i32),
            q_inv_neg: _mm256_set1_epi32(m.q_inv_neg() as i32),
        }
    }

    #[inline]
    #[target_feature(enable = "avx2")]
    fn reduce_once(x: __m256i, m: __m256i) -> __m256i {
        _mm256_min_epu32(x, _mm256_sub_epi32(x, m))
    }

    /// [`Modulus::mont_mul_lazy`] per lane.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn mont_mul_lazy(a: __m256i, b: __m256i, c: &Consts) -> __m256i {
        let p_even = _mm256_mul_epu32(a, b);
        let p_odd = _mm256_mul_epu32(_mm256_srli_epi64::<32>(a), _mm256_srli_epi64::<32>(b));
        let m_even = _mm256_mul_epu32(p_even, c.q_inv_neg);
        let m_odd = _mm256_mul_epu32(p_odd, c.q_inv_neg);
        let t_even = _mm256_add_epi64(p_even, _mm256_mul_epu32(m_even, c.q));
        let t_odd = _mm256_add_epi64(p_odd, _mm256_mul_epu32(m_odd, c.q));
        _mm256_blend_epi32::<0xAA>(_mm256_srli_epi64::<32>(t_even), t_odd)
    }

    /// `y·w mod q` in `[0, 2q)` with the Shoup companion `ws` (`ws_odd = ws >> 32`).
    #[inline]
    #[target_feature(enable = "avx2")]
    fn shoup_mul_lazy(y: __m256i, w: __m256i, ws: __m256i, ws_odd: __m256i, q: __m256i) -> __m256i {
        let hi_even = _mm256_srli_epi64::<32>(_mm256_mul_epu32(y, ws));
        let hi_odd = _mm256_mul_epu32(_mm256_srli_epi64::<32>(y), ws_odd);
        let quotient = _mm256_blend_epi32::<0xAA>(hi_even, hi_odd);
        _mm256_sub_epi32(_mm256_mullo_epi32(y, w), _mm256_mullo_epi32(quotient, q))
    }

    /// The twiddle operand of a butterfly: `w` (Montgomery form, or normal form with its
    /// Shoup companion `shoup`).
    #[derive(Clone, Copy)]
    struct Twiddles {
        w: __m256i,
        shoup: __m256i,
    }

    /// The butterfly of [`ntt_stages`]: Gentleman–Sande (`INVERSE`, inputs and outputs
    /// `< 2q`) or Cooley–Tukey (inputs and outputs `< 4q`) with a Montgomery or (`SHOUP`) a
    /// Shoup twiddle product.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn butterfly<const INVERSE: bool, const SHOUP: bool>(
        x: __m256i,
        y: __m256i,
        tw: Twiddles,
        c: &Consts,
    ) -> (__m256i, __m256i) {
        if INVERSE {
            let sum = reduce_once(_mm256_add_epi32(x, y), c.two_q);
            let diff = _mm256_sub_epi32(_mm256_add_epi32(x, c.two_q), y);
            return (sum, mont_mul_lazy(diff, tw.w, c));
        }
        let u = reduce_once(x, c.two_q);
        let v = if SHOUP {
            let shoup_odd = _mm256_srli_epi64::<32>(tw.shoup);
            shoup_mul_lazy(y, tw.w, tw.shoup, shoup_odd, c.q)
        } else {
            mont_mul_lazy(y, tw.w, c)
        };
        (
            _mm256_add_epi32(u, v),
            _mm256_sub_epi32(_mm256_add_epi32(u, c.two_q), v),
        )
    }

    /// A 16-element chunk `[A | B]` split into butterfly inputs `X`, `Y = X + h` for
    /// `h` in {4, 2, 1} (for `h = 8`, `X = A`, `Y = B`).
    #[inline]
    #[target_feature(enable = "avx2")]
    fn split(h: usize, a: __m256i, b: __m256i) -> (__m256i, __m256i) {
        match h {
            4 => (
                _mm256_permute2x128_si256::<0x20>(a, b),
                _mm256_permute2x128_si256::<0x31>(a, b),
            ),
            2 => (_mm256_unpacklo_epi64(a, b), _mm256_unpackhi_epi64(a, b)),
            1 => {
                let (fa, fb) = (_mm256_castsi256_ps(a), _mm256_castsi256_ps(b));
                (
                    _mm256_castps_si256(_mm256_shuffle_ps::<0b10_00_10_00>(fa, fb)),
                    _mm256_castps_si256(_mm256_shuffle_ps::<0b11_01_11_01>(fa, fb)),
                )
            }
            _ => (a, b),
        }
    }

    /// Inverse of [`split`].
    #[inline]
    #[target_feature(enable = "avx2")]
    fn merge(h: usize, x: __m256i, y: __m256i) -> (__m256i, __m256i) {
        match h {
            4 => (
                _mm256_permute2x128_si256::<0x20>(x, y),
                _mm256_permute2x128_si256::<0x31>(x, y),
            ),
            2 => (_mm256_unpacklo_epi64(x, y), _mm256_unpackhi_epi64(x, y)),
            1 => (_mm256_unpacklo_epi32(x, y), _mm256_unpackhi_epi32(x, y)),
            _ => (x, y),
        }
    }

    /// The twiddle vector matching [`split`]: lane `l` of `X` belongs to group
    /// `g0 + order[l]` of the stage, where `t` holds the table from index `g0` on.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn twiddles(h: usize, t: &[u32]) -> __m256i {
        let w = |i: usize| t[i] as i32;
        match h {
            4 => _mm256_setr_epi32(w(0), w(0), w(0), w(0), w(1), w(1), w(1), w(1)),
            2 => _mm256_setr_epi32(w(0), w(0), w(2), w(2), w(1), w(1), w(3), w(3)),
            1 => _mm256_setr_epi32(w(0), w(1), w(4), w(5), w(2), w(3), w(6), w(7)),
            _ => _mm256_set1_epi32(w(0)),
        }
    }

    /// Forward transform, `a.len()` a power of two `>= 16`: Montgomery products with the
    /// table's forward twiddles `w`, or (`SHOUP`) Shoup products with `w` in normal form and
    /// their companions `w_shoup` (not read otherwise).
    ///
    /// # Safety
    /// AVX2 must be available; `w` (and `w_shoup` with `SHOUP`) hold `a.len()` entries.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn forward<const SHOUP: bool>(
        modulus: &Modulus,
        w: &[u32],
        w_shoup: &[u32],
        a: &mut [u32],
    ) {
        // SAFETY: the caller's contract.
        unsafe { ntt_stages::<false, SHOUP>(&consts(modulus), w, w_shoup, a) }
    }

    /// Inverse transform, `a.len() == table.degree() >= 16`.
    ///
    /// # Safety
    /// AVX2 must be available.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn inverse(table: &NttView<'_>, a: &mut [u32]) {
        let c = consts(&table.modulus);
        // SAFETY: the table's inverse twiddles have `a.len()` entries.
        unsafe { ntt_stages::<true, false>(&c, table.inverse, &[], a) };
        let n_inv = _mm256_set1_epi32(table.n_inv_mont as i32);
        for j in (0..a.len()).step_by(8) {
            // SAFETY: j + 8 <= a.len().
            unsafe {
                let p = a.as_mut_ptr().add(j);
                let x = _mm256_loadu_si256(p.cast());
                _mm256_storeu_si256(p.cast(), reduce_once(mont_mul_lazy(x, n_inv, &c), c.q));
            }
        }
    }

    /// All stages of a forward transform (with the final reduction below `q`) or of an
    /// `INVERSE` one (without the scaling by `n^-1`), as `ntt_stages_avx512` on 8 lanes.
    ///
    /// # Safety
    /// AVX2 must be available; `a.len()` is a power of two `>= 16` and the length of `w`
    /// (and of `w_shoup` with `SHOUP`).
    #[target_feature(enable = "avx2")]
    unsafe fn ntt_stages<const INVERSE: bool, const SHOUP: bool>(
        c: &Consts,
        w: &[u32],
        w_shoup: &[u32],
        a: &mut [u32],
    ) {
        let n = a.len();
        let ptr = a.as_mut_ptr();
        let zero = _mm256_setzero_si256();
        for stage in 0..n.trailing_zeros() {
            // Forward: butterfly distance n/2 down to 1; inverse: 1 up to n/2.
            let half = if INVERSE {
                1 << stage
            } else {
                n >> (stage + 1)
            };
            let groups = n / (2 * half);
            if half >= 16 {
                for group in 0..groups {
                    let tw = Twiddles {
                        w: _mm256_set1_epi32(w[groups + group] as i32),
                        shoup: if SHOUP {
                            _mm256_set1_epi32(w_shoup[groups + group] as i32)
                        } else {
                            zero
                        },
                    };
                    let base = group * 2 * half;
                    for j in (0..half).step_by(8) {
                        // SAFETY: base + half + j + 8 <= (group + 1)·2·half <= n.
                        unsafe {
                            let px = ptr.add(base + j);
                            let py = ptr.add(base + half + j);
                            let x = _mm256_loadu_si256(px.cast());
                            let y = _mm256_loadu_si256(py.cast());
                            let (x, y) = butterfly::<INVERSE, SHOUP>(x, y, tw, c);
                            _mm256_storeu_si256(px.cast(), x);
                            _mm256_storeu_si256(py.cast(), y);
                        }
                    }
                }
            } else {
                for chunk in (0..n).step_by(16) {
                    let first = groups + chunk / (2 * half);
                    let run = first..first + 8 / half.min(8);
                    let tw = Twiddles {
                        w: twiddles(half, &w[run.clone()]),
                        shoup: if SHOUP {
                            twiddles(half, &w_shoup[run])
                        } else {
                            zero
                        },
                    };
                    // SAFETY: chunk + 16 <= n.
                    unsafe {
                        let pa = ptr.add(chunk);
                        let pb = ptr.add(chunk + 8);
                        let (x, y) = split(
                            half,
                            _mm256_loadu_si256(pa.cast()),
                            _mm256_loadu_si256(pb.cast()),
                        );
                        let (x, y) = butterfly::<INVERSE, SHOUP>(x, y, tw, c);
                        let (mut va, mut vb) = merge(half, x, y);
                        if !INVERSE && half == 1 {
                            // The last forward stage: from `< 4q` to `< q` on the way out.
                            va = reduce_once(reduce_once(va, c.two_q), c.q);
                            vb = reduce_once(reduce_once(vb, c.two_q), c.q);
                        }
                        _mm256_storeu_si256(pa.cast(), va);
                        _mm256_storeu_si256(pb.cast(), vb);
                    }
                }
            }
        }
    }

    /// Vector part of the pointwise products; returns how many elements it handled.
    ///
    /// # Safety
    /// AVX2 must be available and the slices must have equal lengths.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn pointwise<const ACCUMULATE: bool>(
        m: &Modulus,
        a: &[u32],
        b: &[u32],
        out: &mut [u32],
    ) -> usize {
        let c = consts(m);
        let r2 = _mm256_set1_epi32(r2(m) as i32);
        let len = out.len() & !7;
        for j in (0..len).step_by(8) {
            // SAFETY: j + 8 <= len <= every slice's length.
            unsafe {
                let x = _mm256_loadu_si256(a.as_ptr().add(j).cast());
                let y = _mm256_loadu_si256(b.as_ptr().add(j).cast());
                let p = mont_mul_lazy(x, y, &c);
                let mut p = reduce_once(mont_mul_lazy(p, r2, &c), c.q);
                let po = out.as_mut_ptr().add(j);
                if ACCUMULATE {
                    p = reduce_once(_mm256_add_epi32(_mm256_loadu_si256(po.cast()), p), c.q);
                }
                _mm256_storeu_si256(po.cast(), p);
            }
        }
        len
    }

    /// Vector part of the centred lift; returns how many elements it handled.
    ///
    /// # Safety
    /// AVX2 must be available and `src.len() == dst.len()`.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn lift_centered(
        src: &[u32],
        from: &Modulus,
        to: &Modulus,
        dst: &mut [u32],
    ) -> usize {
        let p = _mm256_set1_epi32(from.value() as i32);
        let sign = _mm256_set1_epi32(i32::MIN);
        // Unsigned v > half as a signed comparison of sign-flipped values.
        let half_flipped = _mm256_set1_epi32((((from.value() - 1) / 2) ^ 0x8000_0000) as i32);
        let q = _mm256_set1_epi32(to.value() as i32);
        let mu = _mm256_set1_epi32(((1u64 << 32) / u64::from(to.value())) as u32 as i32);
        let reduce = (from.value() - 1) / 2 >= to.value();
        let len = dst.len() & !7;
        for j in (0..len).step_by(8) {
            // SAFETY: j + 8 <= len <= both lengths.
            unsafe {
                let v = _mm256_loadu_si256(src.as_ptr().add(j).cast());
                let negative = _mm256_cmpgt_epi32(_mm256_xor_si256(v, sign), half_flipped);
                let magnitude = _mm256_blendv_epi8(v, _mm256_sub_epi32(p, v), negative);
                let r = if reduce {
                    let hi_even = _mm256_srli_epi64::<32>(_mm256_mul_epu32(magnitude, mu));
                    let hi_odd = _mm256_mul_epu32(_mm256_srli_epi64::<32>(magnitude), mu);
                    let quotient = _mm256_blend_epi32::<0xAA>(hi_even, hi_odd);
                    reduce_once(
                        _mm256_sub_epi32(magnitude, _mm256_mullo_epi32(quotient, q)),
                        q,
                    )
                } else {
                    magnitude
                };
                let r = reduce_once(_mm256_blendv_epi8(r, _mm256_sub_epi32(q, r), negative), q);
                _mm256_storeu_si256(dst.as_mut_ptr().add(j).cast(), r);
            }
        }
        len
    }

    /// `s·2^-32 mod q` for 64-bit lane sums, as `reduce_sum_v` above (values below 2^31 are
    /// compared in 32-bit lanes: AVX2 has no unsigned 64-bit minimum).
    #[inline]
    #[target_feature(enable = "avx2")]
    fn reduce_sum(s: __m256i, c: &Consts, q64: __m256i, mu: __m256i) -> __m256i {
        let hi = _mm256_srli_epi64::<32>(s);
        let quotient = _mm256_srli_epi64::<32>(_mm256_mul_epu32(hi, mu));
        let r = _mm256_sub_epi64(hi, _mm256_mul_epu32(quotient, c.q));
        let hi = _mm256_min_epu32(r, _mm256_sub_epi32(r, q64));
        let lo = _mm256_and_si256(s, _mm256_set1_epi64x(0xffff_ffff));
        let folded = _mm256_or_si256(_mm256_slli_epi64::<32>(hi), lo);
        let m = _mm256_mul_epu32(folded, c.q_inv_neg);
        let t = _mm256_srli_epi64::<32>(_mm256_add_epi64(folded, _mm256_mul_epu32(m, c.q)));
        _mm256_min_epu32(t, _mm256_sub_epi32(t, q64))
    }

    /// Vector part of the key switch (with the tensor when `TENSOR`); same contract as
    /// `key_switch_block_avx512`; returns how many outputs it handled.
    ///
    /// # Safety
    /// As `key_switch_block_avx512`, with AVX2 instead of AVX-512F.
    #[allow(clippy::too_many_arguments)]
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn key_switch<const TENSOR: bool>(
        m: &Modulus,
        count: usize,
        stride: usize,
        digits: &[u32],
        key_a: &[u32],
        key_b: &[u32],
        inputs: [&[u32]; 4],
        out_a: &mut [u32],
        out_b: &mut [u32],
    ) -> usize {
        let [add_a, add_b, y0s, y1s] = inputs;
        let (x0s, x1s) = (add_a, add_b);
        let c = consts(m);
        let r2v = _mm256_set1_epi32(r2(m) as i32);
        let mu = _mm256_set1_epi64x(((1u64 << 32) / u64::from(m.value())) as i64);
        let q64 = _mm256_set1_epi64x(i64::from(m.value()));
        let zero = _mm256_setzero_si256();
        let len = out_a.len() & !7;
        let load = |s: &[u32], at: usize| -> __m256i {
            // SAFETY: every caller passes at + 8 <= s.len() (see the contract).
            unsafe { _mm256_loadu_si256(s.as_ptr().add(at).cast()) }
        };
        for j in (0..len).step_by(8) {
            let (mut acc_a, mut acc_b) = if TENSOR {
                (zero, zero)
            } else {
                (load(add_a, j), load(add_b, j))
            };
            let mut first = 0;
            let mut tensor_pending = TENSOR;
            while first < count || tensor_pending {
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
                    let y0 = reduce_once(mont_mul_lazy(load(y0s, j), r2v, &c), c.q);
                    let y1 = reduce_once(mont_mul_lazy(load(y1s, j), r2v, &c), c.q);
                    let odd = |v| _mm256_srli_epi64::<32>(v);
                    b_even = _mm256_mul_epu32(x0, y0);
                    b_odd = _mm256_mul_epu32(odd(x0), odd(y0));
                    a_even = _mm256_add_epi64(_mm256_mul_epu32(x0, y1), _mm256_mul_epu32(x1, y0));
                    a_odd = _mm256_add_epi64(
                        _mm256_mul_epu32(odd(x0), odd(y1)),
                        _mm256_mul_epu32(odd(x1), odd(y0)),
                    );
                }
                for i in first..last {
                    let at = i * stride + j;
                    let (d, ka, kb) = (load(digits, at), load(key_a, at), load(key_b, at));
                    let d_odd = _mm256_srli_epi64::<32>(d);
                    a_even = _mm256_add_epi64(a_even, _mm256_mul_epu32(d, ka));
                    a_odd = _mm256_add_epi64(
                        a_odd,
                        _mm256_mul_epu32(d_odd, _mm256_srli_epi64::<32>(ka)),
                    );
                    b_even = _mm256_add_epi64(b_even, _mm256_mul_epu32(d, kb));
                    b_odd = _mm256_add_epi64(
                        b_odd,
                        _mm256_mul_epu32(d_odd, _mm256_srli_epi64::<32>(kb)),
                    );
                }
                let sum_a = _mm256_blend_epi32::<0xAA>(
                    reduce_sum(a_even, &c, q64, mu),
                    _mm256_slli_epi64::<32>(reduce_sum(a_odd, &c, q64, mu)),
                );
                let sum_b = _mm256_blend_epi32::<0xAA>(
                    reduce_sum(b_even, &c, q64, mu),
                    _mm256_slli_epi64::<32>(reduce_sum(b_odd, &c, q64, mu)),
                );
                acc_a = reduce_once(_mm256_add_epi32(acc_a, sum_a), c.q);
                acc_b = reduce_once(_mm256_add_epi32(acc_b, sum_b), c.q);
                first = last;
            }
            // SAFETY: j + 8 <= len = the outputs' length (rounded down).
            unsafe {
                _mm256_storeu_si256(out_a.as_mut_ptr().add(j).cast(), acc_a);
                _mm256_storeu_si256(out_b.as_mut_ptr().add(j).cast(), acc_b);
            }
        }
        len
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use std::vec;
    use std::vec::Vec;

    use super::*;
    use crate::rns::tests::*;
    use crate::NttTable;
    use rand::SeedableRng;

    rns_kernel_tests!(X86);

    #[test]
    fn ntt_matches_portable() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(1);
        for log_n in 1..=15 {
            let n = 1usize << log_n;
            for q in primes_for(n) {
                let table = NttTable::new_vec(q, n).unwrap();
                let view = table.view();
                for _ in 0..3 {
                    let input = random_below(&mut rng, q, n);
                    let (mut ours, mut theirs) = (input.clone(), input.clone());
                    X86::forward(&view, &mut ours).unwrap();
                    Portable::forward(&view, &mut theirs).unwrap();
                    assert_eq!(ours, theirs, "forward n={n} q={q}");
                    X86::inverse(&view, &mut ours).unwrap();
                    Portable::inverse(&view, &mut theirs).unwrap();
                    assert_eq!(ours, theirs, "inverse n={n} q={q}");
                    assert_eq!(ours, input, "round trip n={n} q={q}");
                }
            }
        }
    }

    #[test]
    fn pointwise_matches_portable() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(2);
        for q in [1_061_093_377u32, 1_073_741_789, 65_537, 12_289, 3] {
            let m = Modulus::new(q).unwrap();
            for len in [0usize, 1, 15, 16, 17, 100, 4096] {
                let a = random_below(&mut rng, q, len);
                let b = random_below(&mut rng, q, len);
                let acc = random_below(&mut rng, q, len);
                let (mut ours, mut theirs) = (vec![0; len], vec![0; len]);
                X86::pointwise_mul(&m, &a, &b, &mut ours).unwrap();
                Portable::pointwise_mul(&m, &a, &b, &mut theirs).unwrap();
                assert_eq!(ours, theirs);
                let (mut ours, mut theirs) = (acc.clone(), acc);
                X86::pointwise_mul_add(&m, &a, &b, &mut ours).unwrap();
                Portable::pointwise_mul_add(&m, &a, &b, &mut theirs).unwrap();
                assert_eq!(ours, theirs);
            }
        }
    }

    /// The AVX2 kernels, called directly (the dispatcher prefers AVX-512 where present).
    #[test]
    fn avx2_kernels_match_portable() {
        // Detection agrees with std's (and on CPUs without AVX2 there is nothing to test).
        assert_eq!(avx2::available(), std::is_x86_feature_detected!("avx2"));
        if !avx2::available() {
            return;
        }
        let mut rng = rand::rngs::StdRng::seed_from_u64(9);
        for log_n in 4..=13 {
            let n = 1usize << log_n;
            for q in primes_for(n) {
                let table = NttTable::new_vec(q, n).unwrap();
                let view = table.view();
                let shoup = ShoupTable::new(&view);
                let input = random_below(&mut rng, q, n);
                let mut expected = input.clone();
                Portable::forward(&view, &mut expected).unwrap();
                let mut ours = input.clone();
                // SAFETY: AVX2 is available (checked at the top).
                unsafe { avx2::forward::<false>(&view.modulus, view.forward, &[], &mut ours) };
                assert_eq!(ours, expected, "forward n={n} q={q}");
                let mut ours = input.clone();
                // SAFETY: as above.
                unsafe {
                    avx2::forward::<true>(&view.modulus, &shoup.twiddles, &shoup.shoup, &mut ours)
                };
                assert_eq!(ours, expected, "shoup n={n} q={q}");
                let mut theirs = expected.clone();
                Portable::inverse(&view, &mut theirs).unwrap();
                // SAFETY: as above.
                unsafe { avx2::inverse(&view, &mut ours) };
                assert_eq!(ours, theirs, "inverse n={n} q={q}");
            }
        }
        for q in [1_061_093_377u32, 1_073_741_789, 12_289] {
            let m = Modulus::new(q).unwrap();
            let (a, b) = (random_below(&mut rng, q, 64), random_below(&mut rng, q, 64));
            let (mut ours, mut theirs) = (vec![0; 64], vec![0; 64]);
            // SAFETY: as above; equal lengths.
            unsafe { avx2::pointwise::<false>(&m, &a, &b, &mut ours) };
            Portable::pointwise_mul(&m, &a, &b, &mut theirs).unwrap();
            assert_eq!(ours, theirs);
            let mut theirs2 = theirs.clone();
            // SAFETY: as above.
            unsafe { avx2::pointwise::<true>(&m, &a, &b, &mut theirs) };
            Portable::pointwise_mul_add(&m, &a, &b, &mut theirs2).unwrap();
            assert_eq!(theirs, theirs2);
            for p in [1_061_093_377u32, 972_668_929, 7681, 3] {
                let from = Modulus::new(p).unwrap();
                let src = random_below(&mut rng, p, 64);
                let mut ours = vec![0; 64];
                // SAFETY: as above.
                unsafe { avx2::lift_centered(&src, &from, &m, &mut ours) };
                for (&v, &d) in src.iter().zip(&ours) {
                    let centred = if v > (p - 1) / 2 {
                        i64::from(v) - i64::from(p)
                    } else {
                        i64::from(v)
                    };
                    assert_eq!(i64::from(d), centred.rem_euclid(i64::from(q)));
                }
            }
            for count in [0usize, 12, 14, 17] {
                let stride = 40;
                let total = count.max(1) * stride;
                let all_max = count == 14;
                let pick = |rng: &mut rand::rngs::StdRng, l| {
                    if all_max {
                        vec![q - 1; l]
                    } else {
                        random_below(rng, q, l)
                    }
                };
                let digits = pick(&mut rng, total);
                let key_a: Vec<u32> = pick(&mut rng, total)
                    .iter()
                    .map(|&v| m.to_mont(v))
                    .collect();
                let key_b: Vec<u32> = pick(&mut rng, total)
                    .iter()
                    .map(|&v| m.to_mont(v))
                    .collect();
                let xs = [pick(&mut rng, 32), pick(&mut rng, 32)];
                let ys = [pick(&mut rng, 32), pick(&mut rng, 32)];
                for tensor in [false, true] {
                    let (mut oa, mut ob) = (vec![0; 32], vec![0; 32]);
                    let (mut ea, mut eb) = (vec![0; 32], vec![0; 32]);
                    let inputs = [&xs[0][..], &xs[1][..], &ys[0][..], &ys[1][..]];
                    // SAFETY: as above; count·stride elements in digits and keys, 32 outputs.
                    unsafe {
                        if tensor {
                            avx2::key_switch::<true>(
                                &m, count, stride, &digits, &key_a, &key_b, inputs, &mut oa,
                                &mut ob,
                            );
                        } else {
                            avx2::key_switch::<false>(
                                &m, count, stride, &digits, &key_a, &key_b, inputs, &mut oa,
                                &mut ob,
                            );
                        }
                    }
                    // The scalar tails of the public functions are the reference here.
                    for j in 0..32 {
                        let mut sa = 0u128;
                        let mut sb = 0u128;
                        if tensor {
                            sa = u128::from(xs[0][j]) * u128::from(ys[1][j])
                                + u128::from(xs[1][j]) * u128::from(ys[0][j]);
                            sb = u128::from(xs[0][j]) * u128::from(ys[0][j]);
                        } else {
                            sa += u128::from(xs[0][j]);
                            sb += u128::from(xs[1][j]);
                        }
                        for i in 0..count {
                            let at = i * stride + j;
                            sa += u128::from(digits[at]) * u128::from(m.from_mont(key_a[at]));
                            sb += u128::from(digits[at]) * u128::from(m.from_mont(key_b[at]));
                        }
                        ea[j] = (sa % u128::from(q)) as u32;
                        eb[j] = (sb % u128::from(q)) as u32;
                    }
                    assert_eq!((oa, ob), (ea, eb), "q={q} count={count} tensor={tensor}");
                }
            }
        }
    }
}
