//! The AVX2 backend: 8 lanes of 32 bits, for x86-64 CPUs without AVX-512F (and, forced, on
//! those with it). Its detection token [`Avx2`] implements [`Lanes`]; the kernels themselves
//! are the shared ones of [`super::lanes`].

use core::arch::x86_64::*;

use super::lanes::{simd_backend, Lanes};

cpufeatures::new!(avx2_cpuid, "avx2");

/// For each 8-bit lane mask, the selected lane indices in order (one byte each, the unused
/// high bytes zero): the permutation of [`Lanes::compress_store`].
static COMPRESS_ORDER: [u64; 256] = compress_order();

const fn compress_order() -> [u64; 256] {
    let mut table = [0u64; 256];
    let mut bits = 0;
    while bits < 256 {
        let (mut lane, mut k, mut order) = (0, 0, 0u64);
        while lane < 8 {
            if bits >> lane & 1 == 1 {
                order |= (lane as u64) << (8 * k);
                k += 1;
            }
            lane += 1;
        }
        table[bits] = order;
        bits += 1;
    }
    table
}

/// The AVX2 backend. A value exists only on a CPU (and OS) that runs AVX2: [`Avx2::detect`]
/// is its only constructor, so holding one is the proof every kernel relies on. Detect once
/// and keep it (it is `Copy`).
///
/// ```
/// use zeppelin_ring::x86::Avx2;
/// use zeppelin_ring::{NttBackend, NttTable, Portable};
/// if let Some(avx2) = Avx2::detect() {
///     let table = NttTable::new_vec(1_061_093_377, 4096).unwrap();
///     let mut a: Vec<u32> = (0..4096).collect();
///     let mut b = a.clone();
///     avx2.forward(&table.view(), &mut a).unwrap();
///     Portable.forward(&table.view(), &mut b).unwrap();
///     assert_eq!(a, b);
/// }
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Avx2 {
    _detected: (),
}

impl Avx2 {
    /// The token, if this CPU runs AVX2 (`cpufeatures`: CPUID and the OS's XSAVE state,
    /// detected once per process and cached).
    pub fn detect() -> Option<Self> {
        avx2_cpuid::get().then_some(Self { _detected: () })
    }
}

// SAFETY (every `unsafe` block in this impl): a value of `Avx2` exists only if
// `Avx2::detect` found AVX2 on this CPU, so its intrinsics may run; pointer contracts are
// stated on the methods that take pointers.
impl Lanes for Avx2 {
    type V = __m256i;
    type Mask = __m256i;
    /// The butterfly distance `h` in {1, 2, 4, 8}: the permutations are chosen per chunk
    /// (`h = 8`: the identity).
    type Small = usize;
    const WIDTH: usize = 8;
    const SEQUENTIAL_UNIT_STAGE: bool = false;

    #[inline(always)]
    unsafe fn load(self, p: *const u32) -> __m256i {
        // SAFETY: AVX2 detected; `p` valid for 8 reads (the caller's contract).
        unsafe { _mm256_loadu_si256(p.cast()) }
    }
    #[inline(always)]
    unsafe fn store(self, p: *mut u32, v: __m256i) {
        // SAFETY: AVX2 detected; `p` valid for 8 writes (the caller's contract).
        unsafe { _mm256_storeu_si256(p.cast(), v) }
    }
    #[inline(always)]
    fn splat(self, x: u32) -> __m256i {
        // SAFETY: AVX2 detected (see the impl).
        unsafe { _mm256_set1_epi32(x as i32) }
    }
    #[inline(always)]
    fn splat64(self, x: u64) -> __m256i {
        // SAFETY: as above.
        unsafe { _mm256_set1_epi64x(x as i64) }
    }
    #[inline(always)]
    fn zero(self) -> __m256i {
        // SAFETY: as above.
        unsafe { _mm256_setzero_si256() }
    }
    #[inline(always)]
    fn add32(self, a: __m256i, b: __m256i) -> __m256i {
        // SAFETY: as above.
        unsafe { _mm256_add_epi32(a, b) }
    }
    #[inline(always)]
    fn sub32(self, a: __m256i, b: __m256i) -> __m256i {
        // SAFETY: as above.
        unsafe { _mm256_sub_epi32(a, b) }
    }
    #[inline(always)]
    fn mullo32(self, a: __m256i, b: __m256i) -> __m256i {
        // SAFETY: as above.
        unsafe { _mm256_mullo_epi32(a, b) }
    }
    #[inline(always)]
    fn min_u32(self, a: __m256i, b: __m256i) -> __m256i {
        // SAFETY: as above.
        unsafe { _mm256_min_epu32(a, b) }
    }
    #[inline(always)]
    fn add64(self, a: __m256i, b: __m256i) -> __m256i {
        // SAFETY: as above.
        unsafe { _mm256_add_epi64(a, b) }
    }
    #[inline(always)]
    fn sub64(self, a: __m256i, b: __m256i) -> __m256i {
        // SAFETY: as above.
        unsafe { _mm256_sub_epi64(a, b) }
    }
    #[inline(always)]
    fn mul_even(self, a: __m256i, b: __m256i) -> __m256i {
        // SAFETY: as above.
        unsafe { _mm256_mul_epu32(a, b) }
    }
    #[inline(always)]
    fn shr64(self, a: __m256i) -> __m256i {
        // SAFETY: as above.
        unsafe { _mm256_srli_epi64::<32>(a) }
    }
    #[inline(always)]
    fn shl64(self, a: __m256i) -> __m256i {
        // SAFETY: as above.
        unsafe { _mm256_slli_epi64::<32>(a) }
    }
    #[inline(always)]
    fn and(self, a: __m256i, b: __m256i) -> __m256i {
        // SAFETY: as above.
        unsafe { _mm256_and_si256(a, b) }
    }
    #[inline(always)]
    fn or(self, a: __m256i, b: __m256i) -> __m256i {
        // SAFETY: as above.
        unsafe { _mm256_or_si256(a, b) }
    }
    #[inline(always)]
    fn blend_odd(self, even: __m256i, odd: __m256i) -> __m256i {
        // SAFETY: as above.
        unsafe { _mm256_blend_epi32::<0xAA>(even, odd) }
    }
    #[inline(always)]
    fn gt_u32(self, a: __m256i, b: __m256i) -> __m256i {
        // Unsigned a > b as a signed comparison of sign-flipped values.
        // SAFETY: as above.
        unsafe {
            let sign = _mm256_set1_epi32(i32::MIN);
            _mm256_cmpgt_epi32(_mm256_xor_si256(a, sign), _mm256_xor_si256(b, sign))
        }
    }
    #[inline(always)]
    fn select_sub(self, src: __m256i, mask: __m256i, a: __m256i, b: __m256i) -> __m256i {
        // SAFETY: as above.
        unsafe { _mm256_blendv_epi8(src, _mm256_sub_epi32(a, b), mask) }
    }
    #[inline(always)]
    fn decrement_where(self, v: __m256i, mask: __m256i) -> __m256i {
        // The mask lanes are all ones (−1).
        // SAFETY: as above.
        unsafe { _mm256_add_epi32(v, mask) }
    }
    #[inline(always)]
    unsafe fn compress_store(self, p: *mut u32, mask: __m256i, v: __m256i) -> usize {
        // AVX2 has no compress: a permutation from a table indexed by the 8-bit lane mask
        // (public data only: the uniform sampler's rejections).
        // SAFETY: AVX2 detected; `p` valid for 8 writes (the caller's contract).
        unsafe {
            let bits = _mm256_movemask_ps(_mm256_castsi256_ps(mask)) as u8;
            let order =
                _mm256_cvtepu8_epi32(_mm_cvtsi64_si128(COMPRESS_ORDER[bits as usize] as i64));
            _mm256_storeu_si256(p.cast(), _mm256_permutevar8x32_epi32(v, order));
            bits.count_ones() as usize
        }
    }
    #[inline(always)]
    unsafe fn load_i8(self, p: *const i8) -> __m256i {
        // SAFETY: AVX2 detected; `p` valid for 8 reads (the caller's contract).
        unsafe { _mm256_cvtepi8_epi32(_mm_loadl_epi64(p.cast())) }
    }
    #[inline(always)]
    unsafe fn store_low_bytes(self, p: *mut i8, v: __m256i) {
        // SAFETY: AVX2 detected; `p` valid for 8 writes (the caller's contract).
        unsafe {
            // Bytes 0, 4, 8, 12 of each 128-bit half to its first word, then words 0 and 4
            // side by side.
            let gather = _mm256_setr_epi8(
                0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 0, 4, 8, 12, -1, -1,
                -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
            );
            let packed = _mm256_permutevar8x32_epi32(
                _mm256_shuffle_epi8(v, gather),
                _mm256_setr_epi32(0, 4, 0, 0, 0, 0, 0, 0),
            );
            _mm_storel_epi64(p.cast(), _mm256_castsi256_si128(packed));
        }
    }

    #[inline(always)]
    fn small_stage(self, h: usize) -> usize {
        h
    }
    type Restage = (usize, usize);
    #[inline(always)]
    fn restage_for(self, from: usize, to: usize) -> (usize, usize) {
        (from, to)
    }
    /// AVX2 has no two-source permutation: a merge and a split.
    #[inline(always)]
    fn restage(self, &(from, to): &(usize, usize), x: __m256i, y: __m256i) -> (__m256i, __m256i) {
        let (a, b) = self.merge(&from, x, y);
        self.split(&to, a, b)
    }
    /// `X`, `Y = X + h` of a 16-element chunk `[A | B]`.
    #[inline(always)]
    fn split(self, &h: &usize, a: __m256i, b: __m256i) -> (__m256i, __m256i) {
        // SAFETY: AVX2 detected (see the impl).
        unsafe {
            match h {
                8 => (a, b),
                4 => (
                    _mm256_permute2x128_si256::<0x20>(a, b),
                    _mm256_permute2x128_si256::<0x31>(a, b),
                ),
                2 => (_mm256_unpacklo_epi64(a, b), _mm256_unpackhi_epi64(a, b)),
                _ => {
                    let (fa, fb) = (_mm256_castsi256_ps(a), _mm256_castsi256_ps(b));
                    (
                        _mm256_castps_si256(_mm256_shuffle_ps::<0b10_00_10_00>(fa, fb)),
                        _mm256_castps_si256(_mm256_shuffle_ps::<0b11_01_11_01>(fa, fb)),
                    )
                }
            }
        }
    }
    #[inline(always)]
    fn merge(self, &h: &usize, x: __m256i, y: __m256i) -> (__m256i, __m256i) {
        // SAFETY: as above.
        unsafe {
            match h {
                8 => (x, y),
                4 => (
                    _mm256_permute2x128_si256::<0x20>(x, y),
                    _mm256_permute2x128_si256::<0x31>(x, y),
                ),
                2 => (_mm256_unpacklo_epi64(x, y), _mm256_unpackhi_epi64(x, y)),
                _ => (_mm256_unpacklo_epi32(x, y), _mm256_unpackhi_epi32(x, y)),
            }
        }
    }
    /// Lane `l` of [`Lanes::split`]'s `X` belongs to group `first_group + order[l]`.
    #[inline(always)]
    unsafe fn small_twiddles(self, &h: &usize, table: &[u32], first_group: usize) -> __m256i {
        // SAFETY: entries first_group .. first_group + 8/h are in the table (the caller's
        // contract), and every index below is in that run.
        let w = |i: usize| unsafe { *table.get_unchecked(first_group + i) } as i32;
        // SAFETY: AVX2 detected (see the impl).
        unsafe {
            match h {
                8 => _mm256_set1_epi32(w(0)),
                4 => _mm256_setr_epi32(w(0), w(0), w(0), w(0), w(1), w(1), w(1), w(1)),
                2 => _mm256_setr_epi32(w(0), w(0), w(2), w(2), w(1), w(1), w(3), w(3)),
                _ => _mm256_setr_epi32(w(0), w(1), w(4), w(5), w(2), w(3), w(6), w(7)),
            }
        }
    }
}

simd_backend!(Avx2, "avx2", "avx2");
