//! The x86-64 NTT kernels: Shoup twiddle products and lazy reduction with certified bounds,
//! written once over [`Lanes`] for AVX2 and AVX-512.
//!
//! # Why these kernels
//!
//! On 32-bit lanes a Shoup product `y·w − hi(y·w')·q` costs two `vpmuludq`, two `vpmulld`
//! and three lane moves; a Montgomery product costs six `vpmuludq` and five moves. And since
//! a Shoup product accepts any 32-bit `y` and returns `[0, 2q)`, a butterfly only has to keep
//! its values below `2^32`: each stage adds at most `2q` to the bound, so with 27-bit primes
//! twelve stages run without a single reduction (Harvey's butterfly reduces at every stage).
//!
//! # The bounds, certified
//!
//! [`LazyBound`] tracks `b` with every value `< b·q`, stage by stage, from public data only
//! (`q`, `n`); a stage whose outputs could reach `2^32` first halves the bound of its `x`
//! inputs (`x ← min(x, x − c·q)` with `c = ⌈b/2⌉`, which leaves `x < c·q`). Every constant it
//! hands to the kernels comes with the bound it guarantees, and `certify` in the tests walks
//! the same schedule for every prime size to show that no intermediate reaches `2^32`.
//!
//! # The transforms
//!
//! - Forward: Cooley–Tukey with the negacyclic twist merged (SEAL's map, bit-reversed
//!   output); one broadcast twiddle per group while the butterfly distance spans a vector,
//!   two such stages per pass over the data (four vectors in registers, which halves the
//!   loads and stores: about 11 % off the n = 4096 transform, 15 % at n = 16384; three per
//!   pass measured slower), the stages below a vector in one register pass (lane
//!   permutations between them); the last
//!   stage halves its `x` until it is below `2q`, and its outputs are brought below `q` on
//!   the way out.
//! - Inverse: a decimation-in-time cyclic transform with `ψ^-2` on the bit-reversed
//!   evaluations (the same butterfly, so the same additive bounds, where a Gentleman–Sande
//!   inverse doubles its bound each stage); the stages below a vector first, in one register
//!   pass, then the wide ones two per pass as in the forward transform, and the last stage
//!   multiplies its outputs by `n^-1·ψ^-i` on the way out, which undoes the twist, scales,
//!   and reduces below `q` without a pass of its own.

use super::lanes::{reduce_once, shoup_mul_lazy, Lanes};
use crate::ntt::ShoupView;

/// Lazy reduction bounds in units of `q`: every value is `< b·q`, and `b·q <= 2^32`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct LazyBound {
    q: u32,
    /// `floor(2^32 / q)`: the largest bound that keeps values in 32 bits.
    headroom: u64,
    /// The current bound.
    b: u64,
}

impl LazyBound {
    /// Inputs `< q` (`b = 1`).
    pub(crate) fn new(q: u32) -> Self {
        Self {
            q,
            headroom: (1u64 << 32) / u64::from(q),
            b: 1,
        }
    }

    /// The current bound `b` (values `< b·q`).
    pub(crate) fn get(&self) -> u64 {
        self.b
    }

    /// One halving of the `x` inputs of the next butterfly stage, if its outputs (`< b + 2`)
    /// could leave 32 bits: the constant `c·q` to subtract with `min(x, x − c·q)`, which leaves
    /// `x < c·q` for `c = ⌈b/2⌉`. `None` when no halving is needed.
    pub(crate) fn halve_for_stage(&mut self) -> Option<u32> {
        if self.b + 2 <= self.headroom {
            return None;
        }
        Some(self.halve())
    }

    /// `c·q` for `c = ⌈b/2⌉`, and the bound becomes `c` (see [`LazyBound::halve_for_stage`]).
    pub(crate) fn halve(&mut self) -> u32 {
        let c = self.b.div_ceil(2);
        self.b = c;
        // c·q <= b·q <= 2^32, and c < b for b >= 2 so c·q < 2^32.
        (c * u64::from(self.q)) as u32
    }

    /// After a butterfly stage: `x + t` and `x − t + 2q` with `x < b·q`, `t < 2q`.
    pub(crate) fn after_stage(&mut self) {
        self.b += 2;
        debug_assert!(self.b <= self.headroom);
    }
}

/// The largest number of halvings a last forward stage needs (the bound before it is below
/// `2·17 + 1`, since `n <= 2^17`, and 6 halvings take any `b <= 64` to 1).
const MAX_HALVINGS: usize = 6;

/// A butterfly's twiddle operand: `w`, its Shoup companion, and the odd lanes' companions
/// in the low halves (`shoup >> 32` per 64-bit lane, or `shoup` itself for a broadcast).
#[derive(Clone, Copy)]
struct Twiddle<V> {
    w: V,
    shoup: V,
    shoup_odd: V,
}

/// The forward butterfly: `(x + t, x − t + 2q)` for `t = y·w mod q` in `[0, 2q)`.
#[inline(always)]
fn butterfly<L: Lanes>(
    l: L,
    x: L::V,
    y: L::V,
    tw: Twiddle<L::V>,
    q: L::V,
    two_q: L::V,
) -> (L::V, L::V) {
    let t = shoup_mul_lazy(l, y, tw.w, tw.shoup, tw.shoup_odd, q);
    (l.add32(x, t), l.sub32(l.add32(x, two_q), t))
}

/// `min(x, x − c)` when the stage halves its inputs.
#[inline(always)]
fn maybe_halve<L: Lanes>(l: L, x: L::V, c: Option<L::V>) -> L::V {
    match c {
        Some(c) => reduce_once(l, x, c),
        None => x,
    }
}

/// The data size up to which the inverse's wide stages go offset by offset: well inside the
/// L1 data cache (48 KB here), with room for the twiddles.
const BY_OFFSET_MAX_BYTES: usize = 32 * 1024;

/// The most stages below a vector (`log2(WIDTH)`: 4 for AVX-512, 3 for AVX2).
const MAX_SMALL: usize = 4;

/// Where the stages below a vector take their twiddles.
#[derive(Clone, Copy)]
enum SmallTwiddles<'a, V> {
    /// The forward transform's: `WIDTH / h` distinct ones per chunk, from the tables (a
    /// plain load at `h = 1`, a masked load and a permutation above).
    Forward(&'a ShoupView<'a>),
    /// The inverse transform's: the same vector in every chunk, one per stage.
    Inverse([Twiddle<V>; MAX_SMALL]),
}

/// The `log2(WIDTH)` stages whose distance is below a vector, in one pass: each chunk of two
/// vectors holds whole blocks of them, so it is loaded once, runs every stage in registers
/// (one [`Lanes::restage`] between two stages) and is stored once. `halve[i]` halves stage
/// `i`'s `x`; `last_halvings` (the forward transform's last stage) halve `x` before the last
/// stage, whose outputs (`< 4q`) then go below `q`. (No closures here: a closure would not
/// inherit the instruction set of the kernel that calls it, and its intrinsics would become
/// calls.)
///
/// # Safety
/// `a` holds a multiple of `2·WIDTH` elements, at most the tables' length.
#[inline(always)]
unsafe fn small_stages<L: Lanes, const FORWARD: bool>(
    l: L,
    a: &mut [u32],
    halve: &[Option<L::V>; MAX_SMALL],
    last_halvings: &[L::V],
    q: L::V,
    two_q: L::V,
    twiddles: SmallTwiddles<'_, L::V>,
) {
    let width = L::WIDTH;
    let n = a.len();
    // log2(WIDTH) stages, distances WIDTH/2 down to 1 (forward) or 1 up to WIDTH/2: constants
    // once the kernel is instantiated, so that the stage loop unrolls.
    let count = L::WIDTH.trailing_zeros() as usize;
    let log_h = |i: usize| if FORWARD { count - 1 - i } else { i };
    let mut smalls = [l.small_stage(1); MAX_SMALL];
    let mut restages = [l.restage_for(1, 1); MAX_SMALL];
    for i in 0..count {
        smalls[i] = l.small_stage(1 << log_h(i));
        if i > 0 {
            restages[i] = l.restage_for(1 << log_h(i - 1), 1 << log_h(i));
        }
    }
    // Two chunks per step, interleaved stage by stage: one chunk's stages form a chain of
    // dependent products, permutations and halvings too long for the out-of-order window to
    // overlap with the next chunk's on its own. (`n / (2·WIDTH)` is even once n >= 4·WIDTH.)
    let plan = SmallPlan {
        smalls: &smalls,
        restages: &restages,
        count,
        halve,
        last_halvings,
        q,
        two_q,
        twiddles,
    };
    // SAFETY: the caller's contract.
    unsafe {
        if n >= 4 * width {
            small_chunks::<L, FORWARD, 2>(l, a, &plan)
        } else {
            small_chunks::<L, FORWARD, 1>(l, a, &plan)
        }
    }
}

/// What [`small_chunks`] needs of [`small_stages`]' set-up.
struct SmallPlan<'a, L: Lanes> {
    smalls: &'a [L::Small; MAX_SMALL],
    restages: &'a [L::Restage; MAX_SMALL],
    count: usize,
    halve: &'a [Option<L::V>; MAX_SMALL],
    /// The forward transform's last halvings; their presence also means the outputs
    /// (`< 4q`) go below `q` on the way out.
    last_halvings: &'a [L::V],
    q: L::V,
    two_q: L::V,
    twiddles: SmallTwiddles<'a, L::V>,
}

/// [`small_stages`]' pass, `STEP` chunks at a time.
///
/// # Safety
/// As [`small_stages`], and `a.len()` is a multiple of `2·WIDTH·STEP`.
#[inline(always)]
unsafe fn small_chunks<L: Lanes, const FORWARD: bool, const STEP: usize>(
    l: L,
    a: &mut [u32],
    plan: &SmallPlan<'_, L>,
) {
    let width = L::WIDTH;
    let n = a.len();
    let count = plan.count;
    let log_h = |i: usize| if FORWARD { count - 1 - i } else { i };
    let (smalls, restages, halve) = (plan.smalls, plan.restages, plan.halve);
    let (q, two_q) = (plan.q, plan.two_q);
    let ptr = a.as_mut_ptr();
    for chunk0 in (0..n).step_by(2 * width * STEP) {
        // SAFETY: every chunk + 2·WIDTH <= n (a multiple of 2·WIDTH·STEP). Forward twiddles of
        // stage i: entries g + chunk/(2h) .. + WIDTH/h with g = n/(2h), at most 2·g = n/h <= n.
        unsafe {
            let mut x = [l.zero(); STEP];
            let mut y = [l.zero(); STEP];
            for k in 0..STEP {
                let chunk = chunk0 + k * 2 * width;
                (x[k], y[k]) = l.split(
                    &smalls[0],
                    l.load(ptr.add(chunk)),
                    l.load(ptr.add(chunk + width)),
                );
            }
            for i in 0..count {
                for k in 0..STEP {
                    if i > 0 {
                        (x[k], y[k]) = l.restage(&restages[i], x[k], y[k]);
                    }
                    x[k] = maybe_halve(l, x[k], halve[i]);
                    if i + 1 == count {
                        for &c in plan.last_halvings {
                            x[k] = reduce_once(l, x[k], c);
                        }
                    }
                }
                for k in 0..STEP {
                    let chunk = chunk0 + k * 2 * width;
                    let tw = match plan.twiddles {
                        SmallTwiddles::Forward(t) => {
                            let first = (n + chunk) >> (log_h(i) + 1);
                            let (w, shoup) = if log_h(i) == 0 && L::SEQUENTIAL_UNIT_STAGE {
                                (
                                    l.load(t.forward.as_ptr().add(first)),
                                    l.load(t.forward_shoup.as_ptr().add(first)),
                                )
                            } else {
                                (
                                    l.small_twiddles(&smalls[i], t.forward, first),
                                    l.small_twiddles(&smalls[i], t.forward_shoup, first),
                                )
                            };
                            Twiddle {
                                w,
                                shoup,
                                shoup_odd: l.shr64(shoup),
                            }
                        }
                        SmallTwiddles::Inverse(tws) => tws[i],
                    };
                    (x[k], y[k]) = butterfly(l, x[k], y[k], tw, q, two_q);
                }
            }
            for k in 0..STEP {
                let chunk = chunk0 + k * 2 * width;
                let (mut va, mut vb) = l.merge(&smalls[count - 1], x[k], y[k]);
                if !plan.last_halvings.is_empty() {
                    // Outputs < 4q: below q in two masked subtractions.
                    va = reduce_once(l, reduce_once(l, va, two_q), q);
                    vb = reduce_once(l, reduce_once(l, vb, two_q), q);
                }
                l.store(ptr.add(chunk), va);
                l.store(ptr.add(chunk + width), vb);
            }
        }
    }
}

/// The forward transform (see the [module documentation](self)).
///
/// # Safety
/// `a.len()` is a power of two `>= 2·WIDTH`, and `t` holds `a.len()` entries per array
/// ([`ShoupView::has_degree`]).
#[inline(always)]
pub(crate) unsafe fn forward<L: Lanes>(l: L, modulus: u32, t: &ShoupView<'_>, a: &mut [u32]) {
    let n = a.len();
    let width = L::WIDTH;
    let q = l.splat(modulus);
    let two_q = l.splat(2 * modulus);
    let mut bound = LazyBound::new(modulus);
    let ptr = a.as_mut_ptr();
    let (w, ws) = (t.forward.as_ptr(), t.forward_shoup.as_ptr());
    let mut half = n / 2;
    let mut groups = 1;
    // Stages whose butterfly distance spans at least a vector: one broadcast twiddle a group,
    // two stages per pass over the data while both distances span a vector (each element
    // meets the same operations in the same order as stage by stage, so the bounds and the
    // results are those of one stage at a time).
    while half >= width {
        if half >= 2 * width {
            let halve_first = next_stage(l, &mut bound);
            let halve_second = next_stage(l, &mut bound);
            let quarter = half / 2;
            for group in 0..groups {
                // SAFETY: groups + group < 2·groups and 2·groups + 2·group + 1 < 4·groups <= n:
                // within the twiddle arrays.
                let tws = unsafe {
                    [
                        broadcast(l, w, ws, groups + group),
                        broadcast(l, w, ws, 2 * groups + 2 * group),
                        broadcast(l, w, ws, 2 * groups + 2 * group + 1),
                    ]
                };
                let base = group * 2 * half;
                for j in (0..quarter).step_by(width) {
                    // SAFETY: base + 3·quarter + j + WIDTH <= (group + 1)·2·half <= n.
                    unsafe {
                        wide_radix4(
                            l,
                            ptr,
                            [
                                base + j,
                                base + j + quarter,
                                base + j + half,
                                base + j + 3 * quarter,
                            ],
                            [tws[0], tws[0], tws[1], tws[2]],
                            [halve_first, halve_second],
                            q,
                            two_q,
                        )
                    };
                }
            }
            half /= 4;
            groups *= 4;
        } else {
            let halve = next_stage(l, &mut bound);
            for group in 0..groups {
                // SAFETY: groups + group < 2·groups <= n: within the twiddle arrays.
                let tw = unsafe { broadcast(l, w, ws, groups + group) };
                let base = group * 2 * half;
                for j in (0..half).step_by(width) {
                    // SAFETY: base + half + j + WIDTH <= (group + 1)·2·half <= n.
                    unsafe { wide_butterfly(l, ptr, base + j, half, tw, halve, q, two_q) };
                }
            }
            half /= 2;
            groups *= 2;
        }
    }
    // Stages below a vector, in one pass: per-lane twiddles, `WIDTH / h` distinct ones per
    // chunk (a plain load at h = 1).
    let mut halve = [None; MAX_SMALL];
    let mut count = 0;
    let mut halvings = [l.zero(); MAX_HALVINGS];
    let mut last = 0;
    while half >= 1 {
        if half == 1 {
            // The last stage: x below 2q so that the outputs are below 4q.
            while bound.get() > 2 && last < MAX_HALVINGS {
                halvings[last] = l.splat(bound.halve());
                last += 1;
            }
        } else {
            halve[count] = bound.halve_for_stage().map(|c| l.splat(c));
        }
        bound.after_stage();
        count += 1;
        half /= 2;
    }
    // SAFETY: a.len() is a multiple of 2·WIDTH and the tables' length.
    unsafe {
        small_stages::<L, true>(
            l,
            a,
            &halve,
            &halvings[..last],
            q,
            two_q,
            SmallTwiddles::Forward(t),
        )
    };
}

/// The inverse transform (see the [module documentation](self)).
///
/// # Safety
/// As [`forward`].
#[inline(always)]
pub(crate) unsafe fn inverse<L: Lanes>(l: L, modulus: u32, t: &ShoupView<'_>, a: &mut [u32]) {
    let n = a.len();
    let width = L::WIDTH;
    let q = l.splat(modulus);
    let two_q = l.splat(2 * modulus);
    let mut bound = LazyBound::new(modulus);
    let ptr = a.as_mut_ptr();
    let mut half = 1;
    // Distances below a vector, in one pass: the twiddle of lane l is inverse[h + l mod h],
    // the same in every chunk (x lanes are the elements whose offset in their block is
    // l mod h).
    let mut halve = [None; MAX_SMALL];
    let mut tws = [Twiddle {
        w: l.zero(),
        shoup: l.zero(),
        shoup_odd: l.zero(),
    }; MAX_SMALL];
    let mut count = 0;
    while half < width {
        halve[count] = next_stage(l, &mut bound);
        let mut w = [0u32; 16];
        let mut ws = [0u32; 16];
        for lane in 0..width {
            w[lane] = t.inverse[half + lane % half];
            ws[lane] = t.inverse_shoup[half + lane % half];
        }
        // SAFETY: 16 >= WIDTH entries.
        tws[count] = unsafe {
            let shoup = l.load(ws.as_ptr());
            Twiddle {
                w: l.load(w.as_ptr()),
                shoup,
                shoup_odd: l.shr64(shoup),
            }
        };
        count += 1;
        half *= 2;
    }
    // SAFETY: a.len() is a multiple of 2·WIDTH.
    unsafe { small_stages::<L, false>(l, a, &halve, &[], q, two_q, SmallTwiddles::Inverse(tws)) };
    // Distances of a vector or more, but the last: a contiguous run of twiddles per stage.
    // While the data fit the L1 cache, offset by offset: each twiddle vector is loaded once
    // and used in every block. Above, block by block, so that data and twiddles are both read
    // in address order (striding through 64 KB of data per offset cost a third of the time
    // at n = 16384).
    let by_offset = n * 4 <= BY_OFFSET_MAX_BYTES;
    // Two stages per pass while neither is the last (as in the forward transform, each
    // element meets the same operations in the same order as stage by stage).
    while 2 * half < n / 2 {
        let halves = [next_stage(l, &mut bound), next_stage(l, &mut bound)];
        // Offset j of a block of 4·half: stage `half` pairs (a0, a1) and (a2, a3), both with
        // inverse[half + j]; stage `2·half` pairs (a0, a2) with inverse[2·half + j] and
        // (a1, a3) with inverse[3·half + j].
        let at = |base: usize, j: usize| {
            [
                base + j,
                base + j + half,
                base + j + 2 * half,
                base + j + 3 * half,
            ]
        };
        if by_offset {
            for j in (0..half).step_by(width) {
                // SAFETY: 3·half + j + WIDTH <= 4·half <= n: within the twiddle arrays.
                let tws = unsafe { inverse_radix4_twiddles(l, t, half, j) };
                for base in (0..n).step_by(4 * half) {
                    // SAFETY: base + 3·half + j + WIDTH <= base + 4·half <= n.
                    unsafe {
                        inverse_radix4(l, ptr, at(base, j), tws, halves, q, two_q);
                    }
                }
            }
        } else {
            for base in (0..n).step_by(4 * half) {
                for j in (0..half).step_by(width) {
                    // SAFETY: as above.
                    unsafe {
                        let tws = inverse_radix4_twiddles(l, t, half, j);
                        inverse_radix4(l, ptr, at(base, j), tws, halves, q, two_q);
                    }
                }
            }
        }
        half *= 4;
    }
    // At most one stage of a vector or more is left before the last.
    if half < n / 2 {
        let halve = next_stage(l, &mut bound);
        if by_offset {
            for j in (0..half).step_by(width) {
                // SAFETY: half + j + WIDTH <= 2·half <= n: within the twiddle arrays.
                let tw = unsafe { inverse_twiddle(l, t, half + j) };
                for base in (0..n).step_by(2 * half) {
                    // SAFETY: base + half + j + WIDTH <= base + 2·half <= n.
                    unsafe { wide_butterfly(l, ptr, base + j, half, tw, halve, q, two_q) };
                }
            }
        } else {
            for base in (0..n).step_by(2 * half) {
                for j in (0..half).step_by(width) {
                    // SAFETY: as above, and base + half + j + WIDTH <= base + 2·half <= n.
                    unsafe {
                        let tw = inverse_twiddle(l, t, half + j);
                        wide_butterfly(l, ptr, base + j, half, tw, halve, q, two_q);
                    }
                }
            }
        }
        half *= 2;
    }
    // The last stage (half = n/2 >= WIDTH, since n >= 2·WIDTH), its outputs multiplied on the
    // way out by the twist and n^-1 (one Shoup product, any 32-bit input) and brought below q:
    // no separate pass over the data.
    let halve = next_stage(l, &mut bound);
    for j in (0..half).step_by(width) {
        // SAFETY: j + WIDTH <= half and half + j + WIDTH <= n: within `a` and the tables.
        unsafe {
            let tw = inverse_twiddle(l, t, half + j);
            let px = ptr.add(j);
            let py = ptr.add(half + j);
            let x = maybe_halve(l, l.load(px), halve);
            let (x, y) = butterfly(l, x, l.load(py), tw, q, two_q);
            l.store(px, twist(l, t, j, x, q));
            l.store(py, twist(l, t, half + j, y, q));
        }
    }
}

/// `v·n^-1·ψ^-i mod q` in `[0, q)` for the lanes `i = at..at + WIDTH` (a function, not a
/// closure: a closure would not inherit the kernel's instruction set).
///
/// # Safety
/// `at + WIDTH <= n`, the tables' length.
#[inline(always)]
unsafe fn twist<L: Lanes>(l: L, t: &ShoupView<'_>, at: usize, v: L::V, q: L::V) -> L::V {
    // SAFETY: the caller's contract.
    unsafe {
        let shoup = l.load(t.twist_shoup.as_ptr().add(at));
        let w = l.load(t.twist.as_ptr().add(at));
        reduce_once(l, shoup_mul_lazy(l, v, w, shoup, l.shr64(shoup), q), q)
    }
}

/// One vector butterfly of a stage of distance `half >= WIDTH`, in place: `x` at `ptr + at`,
/// `y` at `ptr + at + half` (a function, not a closure, for the instruction set).
///
/// # Safety
/// `ptr + at + half` is valid for `WIDTH` reads and writes, as is `ptr + at`.
#[inline(always)]
#[expect(clippy::too_many_arguments, reason = "one butterfly's operands")]
unsafe fn wide_butterfly<L: Lanes>(
    l: L,
    ptr: *mut u32,
    at: usize,
    half: usize,
    tw: Twiddle<L::V>,
    halve: Option<L::V>,
    q: L::V,
    two_q: L::V,
) {
    // SAFETY: the caller's contract.
    unsafe {
        let px = ptr.add(at);
        let py = ptr.add(at + half);
        let x = maybe_halve(l, l.load(px), halve);
        let (x, y) = butterfly(l, x, l.load(py), tw, q, two_q);
        l.store(px, x);
        l.store(py, y);
    }
}

/// The broadcast twiddle `w[at]` with its Shoup companion `ws[at]`.
///
/// # Safety
/// `w` and `ws` are valid for reading entry `at`.
#[inline(always)]
unsafe fn broadcast<L: Lanes>(l: L, w: *const u32, ws: *const u32, at: usize) -> Twiddle<L::V> {
    // SAFETY: the caller's contract.
    unsafe {
        let shoup = l.splat(*ws.add(at));
        Twiddle {
            w: l.splat(*w.add(at)),
            shoup,
            shoup_odd: shoup,
        }
    }
}

/// Two forward stages on four vectors in place: at `at[0..4]`, the first stage pairs
/// `(a0, a2)` and `(a1, a3)`, the second `(a0, a1)` and `(a2, a3)`; `tws` are the twiddles
/// of the four butterflies in that order, `halve` each stage's halving of its `x` inputs.
///
/// # Safety
/// `ptr + at[i]` is valid for `WIDTH` reads and writes for every `i`.
#[inline(always)]
unsafe fn wide_radix4<L: Lanes>(
    l: L,
    ptr: *mut u32,
    at: [usize; 4],
    tws: [Twiddle<L::V>; 4],
    halve: [Option<L::V>; 2],
    q: L::V,
    two_q: L::V,
) {
    // SAFETY: the caller's contract.
    unsafe {
        let p = at.map(|i| ptr.add(i));
        // Plain loads, not a closure: a closure would not inherit the kernel's instruction set.
        let (mut a0, mut a1, mut a2, mut a3) =
            (l.load(p[0]), l.load(p[1]), l.load(p[2]), l.load(p[3]));
        a0 = maybe_halve(l, a0, halve[0]);
        a1 = maybe_halve(l, a1, halve[0]);
        (a0, a2) = butterfly(l, a0, a2, tws[0], q, two_q);
        (a1, a3) = butterfly(l, a1, a3, tws[1], q, two_q);
        a0 = maybe_halve(l, a0, halve[1]);
        a2 = maybe_halve(l, a2, halve[1]);
        (a0, a1) = butterfly(l, a0, a1, tws[2], q, two_q);
        (a2, a3) = butterfly(l, a2, a3, tws[3], q, two_q);
        for (p, v) in p.into_iter().zip([a0, a1, a2, a3]) {
            l.store(p, v);
        }
    }
}

/// Two inverse stages on four vectors in place: at `at[0..4]`, the first stage pairs
/// `(a0, a1)` and `(a2, a3)` with `tws[0]`, the second `(a0, a2)` with `tws[1]` and
/// `(a1, a3)` with `tws[2]`.
///
/// # Safety
/// As [`wide_radix4`].
#[inline(always)]
unsafe fn inverse_radix4<L: Lanes>(
    l: L,
    ptr: *mut u32,
    at: [usize; 4],
    tws: [Twiddle<L::V>; 3],
    halve: [Option<L::V>; 2],
    q: L::V,
    two_q: L::V,
) {
    // SAFETY: the caller's contract; the same two stages with the pairs swapped round.
    unsafe {
        wide_radix4(
            l,
            ptr,
            [at[0], at[2], at[1], at[3]],
            [tws[0], tws[0], tws[1], tws[2]],
            halve,
            q,
            two_q,
        )
    }
}

/// The halving constant of the next stage's `x` inputs, if it needs one (see
/// [`LazyBound::halve_for_stage`]), with the bound moved past the stage.
#[inline(always)]
fn next_stage<L: Lanes>(l: L, bound: &mut LazyBound) -> Option<L::V> {
    let halve = bound.halve_for_stage().map(|c| l.splat(c));
    bound.after_stage();
    halve
}

/// The three twiddle vectors of [`inverse_radix4`] at offset `j` of the stages `half` and
/// `2·half`: `inverse[half + j]`, `inverse[2·half + j]`, `inverse[3·half + j]`.
///
/// # Safety
/// `3·half + j + WIDTH <= n`, the tables' length.
#[inline(always)]
unsafe fn inverse_radix4_twiddles<L: Lanes>(
    l: L,
    t: &ShoupView<'_>,
    half: usize,
    j: usize,
) -> [Twiddle<L::V>; 3] {
    // SAFETY: the caller's contract.
    unsafe {
        [
            inverse_twiddle(l, t, half + j),
            inverse_twiddle(l, t, 2 * half + j),
            inverse_twiddle(l, t, 3 * half + j),
        ]
    }
}

/// The inverse's twiddle vector at `inverse[at..at + WIDTH]`.
///
/// # Safety
/// `at + WIDTH <= n`, the tables' length.
#[inline(always)]
unsafe fn inverse_twiddle<L: Lanes>(l: L, t: &ShoupView<'_>, at: usize) -> Twiddle<L::V> {
    // SAFETY: the caller's contract.
    unsafe {
        let shoup = l.load(t.inverse_shoup.as_ptr().add(at));
        Twiddle {
            w: l.load(t.inverse.as_ptr().add(at)),
            shoup,
            shoup_odd: l.shr64(shoup),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Walks the schedule of [`forward`] (and of [`inverse`], which runs the same stages
    /// without the last one's extra halvings) as the kernels do, and checks at every step
    /// that the worst value of each butterfly input and output stays below `2^32`.
    fn certify(q: u32, log_n: u32) -> usize {
        let limit = 1u64 << 32;
        let q64 = u64::from(q);
        let mut bound = LazyBound::new(q);
        let mut halvings = 0;
        for stage in 0..log_n {
            if stage + 1 == log_n {
                let mut last = 0;
                while bound.get() > 2 {
                    let c = u64::from(bound.halve());
                    // min(x, x − c) on x < 2c: below c, and c < 2^32.
                    assert!(c < limit);
                    last += 1;
                }
                // The kernel has room for this many.
                assert!(last <= MAX_HALVINGS, "q={q} n=2^{log_n}: {last} halvings");
                halvings += last;
            } else if let Some(c) = bound.halve_for_stage() {
                assert!(u64::from(c) < limit);
                halvings += 1;
            }
            let x = bound.get() * q64;
            // x + t and x − t + 2q with t < 2q: below x + 2q.
            assert!(x + 2 * q64 <= limit, "q={q} n=2^{log_n} stage {stage}");
            bound.after_stage();
        }
        // The last forward stage leaves outputs below 4q: two masked subtractions.
        assert!(bound.get() <= 4);
        halvings
    }

    #[test]
    fn bounds_are_certified_for_every_prime_size_and_degree() {
        // The smallest and largest odd values of each size (the bound depends on q alone).
        for bits in 2..=30 {
            for q in [(1u32 << (bits - 1)) + 1, (1u32 << bits) - 1] {
                for log_n in 1..=17 {
                    certify(q, log_n);
                }
            }
        }
    }

    #[test]
    fn the_27_bit_primes_need_no_halving_before_the_last_stage() {
        // SEAL's 27-bit primes at n = 4096: twelve stages below 2^32 without a reduction;
        // the last stage halves x four times (23 → 12 → 6 → 3 → 2).
        assert_eq!(certify(134_176_769, 12), 4);
        // Near 2^30 (headroom 4) every stage halves once.
        assert!(certify(1_073_741_789, 12) >= 11);
    }

    #[test]
    fn halving_leaves_the_promised_bound() {
        // min(x, x − c·q) for every x below b·q (small q so that the walk is exhaustive).
        let q = 17u32;
        for b in 2..40u64 {
            let mut bound = LazyBound {
                q,
                headroom: u64::MAX,
                b,
            };
            let c = bound.halve();
            for x in 0..(b as u32 * q) {
                let r = x.min(x.wrapping_sub(c));
                assert!(u64::from(r) < bound.get() * u64::from(q));
                assert_eq!(r % q, x % q);
            }
        }
    }
}
