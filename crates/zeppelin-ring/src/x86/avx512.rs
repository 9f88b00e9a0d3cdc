//! The AVX-512F backend: 16 lanes of 32 bits. Its detection token [`Avx512`] implements
//! [`Lanes`]; the kernels themselves are the shared ones of [`super::lanes`].

use core::arch::x86_64::*;

use super::lanes::{simd_backend, Lanes};

cpufeatures::new!(avx512f_cpuid, "avx512f");

/// The AVX-512F backend. A value exists only on a CPU (and OS) that runs AVX-512F:
/// [`Avx512::detect`] is its only constructor, so holding one is the proof every kernel
/// relies on. Detect once and keep it (it is `Copy`).
///
/// ```
/// use zeppelin_ring::x86::Avx512;
/// use zeppelin_ring::{NttBackend, NttTable, Portable};
/// if let Some(avx512) = Avx512::detect() {
///     let table = NttTable::new_vec(1_061_093_377, 4096).unwrap();
///     let mut a: Vec<u32> = (0..4096).collect();
///     let mut b = a.clone();
///     avx512.forward(&table.view(), &mut a).unwrap();
///     Portable.forward(&table.view(), &mut b).unwrap();
///     assert_eq!(a, b);
/// }
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Avx512 {
    _detected: (),
}

impl Avx512 {
    /// The token, if this CPU runs AVX-512F (`cpufeatures`: CPUID and the OS's XSAVE state,
    /// detected once per process and cached).
    pub fn detect() -> Option<Self> {
        avx512f_cpuid::get().then_some(Self { _detected: () })
    }
}

/// The lane permutations of a stage whose butterfly distance `h` (1, 2, 4 or 8) is below
/// one vector: a 32-element chunk `[A | B]` is split into the upper-half-free elements `X`
/// and their partners `Y = X + h`, and merged back afterwards.
#[derive(Clone, Copy)]
pub(crate) struct SmallStage {
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

/// The index vectors of `split(to) ∘ merge(from)`: `[x', y']` as two-source permutations of
/// `(x, y)`, composed from [`small_stage_indices`]: lane `l` of `x'` holds chunk position
/// `to_x[l]` of the `to` layout, which the `from` layout's merge takes from
/// `back[to_x[l]]`.
const fn restage_indices(from_log: usize, to_log: usize) -> [[i32; 16]; 2] {
    let (from, to) = (small_stage_indices(from_log), small_stage_indices(to_log));
    let mut t = [[0i32; 16]; 2];
    let mut l = 0;
    while l < 16 {
        let mut v = 0;
        while v < 2 {
            let p = to[v][l] as usize;
            t[v][l] = from[2 + p / 16][p % 16];
            v += 1;
        }
        l += 1;
    }
    t
}

/// [`restage_indices`] for every pair of distances 1, 2, 4, 8: `RESTAGES[from][to]`.
static RESTAGES: [[[[i32; 16]; 2]; 4]; 4] = {
    let mut t = [[[[0i32; 16]; 2]; 4]; 4];
    let mut from = 0;
    while from < 4 {
        let mut to = 0;
        while to < 4 {
            t[from][to] = restage_indices(from, to);
            to += 1;
        }
        from += 1;
    }
    t
};

// SAFETY (every `unsafe` block in this impl): a value of `Avx512` exists only if
// `Avx512::detect` found AVX-512F on this CPU, so its intrinsics may run; pointer contracts
// are stated on the methods that take pointers.
impl Lanes for Avx512 {
    type V = __m512i;
    type Mask = __mmask16;
    type Small = SmallStage;
    const WIDTH: usize = 16;
    const SEQUENTIAL_UNIT_STAGE: bool = true;

    #[inline(always)]
    unsafe fn load(self, p: *const u32) -> __m512i {
        // SAFETY: AVX-512F detected; `p` valid for 16 reads (the caller's contract).
        unsafe { _mm512_loadu_si512(p.cast()) }
    }
    #[inline(always)]
    unsafe fn store(self, p: *mut u32, v: __m512i) {
        // SAFETY: AVX-512F detected; `p` valid for 16 writes (the caller's contract).
        unsafe { _mm512_storeu_si512(p.cast(), v) }
    }
    #[inline(always)]
    fn splat(self, x: u32) -> __m512i {
        // SAFETY: AVX-512F detected (see the impl).
        unsafe { _mm512_set1_epi32(x as i32) }
    }
    #[inline(always)]
    fn splat64(self, x: u64) -> __m512i {
        // SAFETY: as above.
        unsafe { _mm512_set1_epi64(x as i64) }
    }
    #[inline(always)]
    fn zero(self) -> __m512i {
        // SAFETY: as above.
        unsafe { _mm512_setzero_si512() }
    }
    #[inline(always)]
    fn add32(self, a: __m512i, b: __m512i) -> __m512i {
        // SAFETY: as above.
        unsafe { _mm512_add_epi32(a, b) }
    }
    #[inline(always)]
    fn sub32(self, a: __m512i, b: __m512i) -> __m512i {
        // SAFETY: as above.
        unsafe { _mm512_sub_epi32(a, b) }
    }
    #[inline(always)]
    fn mullo32(self, a: __m512i, b: __m512i) -> __m512i {
        // SAFETY: as above.
        unsafe { _mm512_mullo_epi32(a, b) }
    }
    #[inline(always)]
    fn min_u32(self, a: __m512i, b: __m512i) -> __m512i {
        // SAFETY: as above.
        unsafe { _mm512_min_epu32(a, b) }
    }
    #[inline(always)]
    fn add64(self, a: __m512i, b: __m512i) -> __m512i {
        // SAFETY: as above.
        unsafe { _mm512_add_epi64(a, b) }
    }
    #[inline(always)]
    fn sub64(self, a: __m512i, b: __m512i) -> __m512i {
        // SAFETY: as above.
        unsafe { _mm512_sub_epi64(a, b) }
    }
    #[inline(always)]
    fn mul_even(self, a: __m512i, b: __m512i) -> __m512i {
        // SAFETY: as above.
        unsafe { _mm512_mul_epu32(a, b) }
    }
    #[inline(always)]
    fn shr64(self, a: __m512i) -> __m512i {
        // SAFETY: as above.
        unsafe { _mm512_srli_epi64::<32>(a) }
    }
    #[inline(always)]
    fn shl64(self, a: __m512i) -> __m512i {
        // SAFETY: as above.
        unsafe { _mm512_slli_epi64::<32>(a) }
    }
    #[inline(always)]
    fn and(self, a: __m512i, b: __m512i) -> __m512i {
        // SAFETY: as above.
        unsafe { _mm512_and_si512(a, b) }
    }
    #[inline(always)]
    fn or(self, a: __m512i, b: __m512i) -> __m512i {
        // SAFETY: as above.
        unsafe { _mm512_or_si512(a, b) }
    }
    #[inline(always)]
    fn blend_odd(self, even: __m512i, odd: __m512i) -> __m512i {
        // SAFETY: as above.
        unsafe { _mm512_mask_blend_epi32(0xAAAA, even, odd) }
    }
    #[inline(always)]
    fn high_halves(self, even: __m512i, odd: __m512i) -> __m512i {
        // One two-source permutation instead of a shift and a blend.
        const HIGH_HALVES: [i32; 16] = [1, 17, 3, 19, 5, 21, 7, 23, 9, 25, 11, 27, 13, 29, 15, 31];
        // SAFETY: as above; the index vector is 16 `i32`s.
        unsafe {
            let index = _mm512_loadu_si512(HIGH_HALVES.as_ptr().cast());
            _mm512_permutex2var_epi32(even, index, odd)
        }
    }
    #[inline(always)]
    fn gt_u32(self, a: __m512i, b: __m512i) -> __mmask16 {
        // SAFETY: as above.
        unsafe { _mm512_cmpgt_epu32_mask(a, b) }
    }
    #[inline(always)]
    fn select_sub(self, src: __m512i, mask: __mmask16, a: __m512i, b: __m512i) -> __m512i {
        // SAFETY: as above.
        unsafe { _mm512_mask_sub_epi32(src, mask, a, b) }
    }
    #[inline(always)]
    fn decrement_where(self, v: __m512i, mask: __mmask16) -> __m512i {
        // SAFETY: as above.
        unsafe { _mm512_mask_sub_epi32(v, mask, v, _mm512_set1_epi32(1)) }
    }
    #[inline(always)]
    unsafe fn compress_store(self, p: *mut u32, mask: __mmask16, v: __m512i) -> usize {
        // In a register, then one full store: faster than `vpcompressd` to memory.
        // SAFETY: AVX-512F detected; `p` valid for 16 writes (the caller's contract).
        unsafe { _mm512_storeu_si512(p.cast(), _mm512_maskz_compress_epi32(mask, v)) };
        mask.count_ones() as usize
    }
    #[inline(always)]
    unsafe fn load_i8(self, p: *const i8) -> __m512i {
        // SAFETY: AVX-512F detected; `p` valid for 16 reads (the caller's contract).
        unsafe { _mm512_cvtepi8_epi32(_mm_loadu_si128(p.cast())) }
    }
    #[inline(always)]
    unsafe fn store_low_bytes(self, p: *mut i8, v: __m512i) {
        // SAFETY: AVX-512F detected; `p` valid for 16 writes (the caller's contract).
        unsafe { _mm_storeu_si128(p.cast(), _mm512_cvtepi32_epi8(v)) }
    }

    #[inline(always)]
    fn small_stage(self, h: usize) -> SmallStage {
        let t = &SMALL_STAGES[h.trailing_zeros() as usize & 3];
        // SAFETY: AVX-512F detected; each row is 16 `i32`s, exactly one unaligned load.
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
    type Restage = (__m512i, __m512i);
    #[inline(always)]
    fn restage_for(self, from: usize, to: usize) -> (__m512i, __m512i) {
        let t = &RESTAGES[from.trailing_zeros() as usize & 3][to.trailing_zeros() as usize & 3];
        // SAFETY: AVX-512F detected; each row is 16 `i32`s, exactly one unaligned load.
        unsafe {
            (
                _mm512_loadu_si512(t[0].as_ptr().cast()),
                _mm512_loadu_si512(t[1].as_ptr().cast()),
            )
        }
    }
    #[inline(always)]
    fn restage(self, r: &(__m512i, __m512i), x: __m512i, y: __m512i) -> (__m512i, __m512i) {
        // SAFETY: AVX-512F detected (see the impl).
        unsafe {
            (
                _mm512_permutex2var_epi32(x, r.0, y),
                _mm512_permutex2var_epi32(x, r.1, y),
            )
        }
    }
    #[inline(always)]
    fn split(self, s: &SmallStage, a: __m512i, b: __m512i) -> (__m512i, __m512i) {
        // SAFETY: AVX-512F detected (see the impl).
        unsafe {
            (
                _mm512_permutex2var_epi32(a, s.to_x, b),
                _mm512_permutex2var_epi32(a, s.to_y, b),
            )
        }
    }
    #[inline(always)]
    fn merge(self, s: &SmallStage, x: __m512i, y: __m512i) -> (__m512i, __m512i) {
        // SAFETY: as above.
        unsafe {
            (
                _mm512_permutex2var_epi32(x, s.back_lo, y),
                _mm512_permutex2var_epi32(x, s.back_hi, y),
            )
        }
    }
    #[inline(always)]
    unsafe fn small_twiddles(self, s: &SmallStage, table: &[u32], first_group: usize) -> __m512i {
        // SAFETY: AVX-512F detected; the masked load reads entries first_group ..
        // first_group + 16/h (the caller's contract) and nothing beyond.
        unsafe {
            let run =
                _mm512_maskz_loadu_epi32(s.twiddle_mask, table.as_ptr().add(first_group).cast());
            _mm512_permutexvar_epi32(s.twiddle, run)
        }
    }
}

simd_backend!(Avx512, "avx512f", "avx512");
