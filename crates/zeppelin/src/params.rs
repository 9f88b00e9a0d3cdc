//! Compile-time parameter presets, each generated from one definition.
//!
//! A preset is a zero-sized type implementing [`Params`], written once with the [`preset!`]
//! macro from its ring degree `n`, plaintext modulus `t` and primes. Everything else is
//! derived at compile time by `const fn` and lives in `static`s (flash on a device): the NTT
//! tables of the data primes and of `t`, the slot permutation of the batch encoder, the
//! scaling and BEHZ constants of every level, and SEAL's `parms_id` of every level. A prime
//! that is not an NTT-friendly prime below `2^30` for `n`, a `t` that does not allow batching,
//! or a modulus above what the device arithmetic supports stops the build.

use zeppelin_ring::{Modulus, Mont, NttTable};

use crate::wide::Wide;

/// Most data primes a preset may have (sizes the per-level constant arrays).
pub const MAX_PRIMES: usize = 8;
/// BEHZ auxiliary modulus `γ = 2^31` (paper Section 4.8): `mod γ` is a mask.
pub const GAMMA_BITS: u32 = 31;
const GAMMA_MASK: u32 = (1 << GAMMA_BITS) - 1;

/// Storage for `L` residues: one polynomial (`L = n`) or one RNS polynomial at the full data
/// level (`L = K·n`, prime-major, then coefficient). Implemented for `[u32; L]`.
pub trait RnsStorage: AsRef<[u32]> + AsMut<[u32]> + Clone + Send + Sync + 'static {
    /// All zeros (usable in `static` initialisers).
    const ZERO: Self;
}

impl<const L: usize> RnsStorage for [u32; L] {
    const ZERO: Self = [0; L];
}

/// Storage for `n` small signed coefficients (ternary secrets, Gaussian errors).
/// Implemented for `[i8; L]`.
pub trait SmallStorage: AsRef<[i8]> + AsMut<[i8]> + Clone + Send + Sync + 'static {
    /// All zeros (usable in `static` initialisers).
    const ZERO: Self;
}

impl<const L: usize> SmallStorage for [i8; L] {
    const ZERO: Self = [0; L];
}

/// A BFV parameter preset fixed at compile time. Implemented by [`preset!`] only: every
/// item is derived from `n`, `t` and the primes.
pub trait Params: Sized + Send + Sync + 'static {
    /// Short name, e.g. `"seal4096"`.
    const NAME: &'static str;
    /// Ring degree `n` (a power of two).
    const N: usize;
    /// `log2(n)`.
    const LOG_N: u32;
    /// Plaintext modulus `t` (a prime `≡ 1 mod 2n`, so it supports batching).
    const T: u32;
    /// The data primes `q_0, …, q_{K-1}`. A ciphertext at level `L` uses the first `L`.
    const DATA_PRIMES: &'static [u32];
    /// The special (key-switching) prime of the SEAL modulus chain, if any. The device never
    /// computes with it; it is here so adapters can build SEAL's parameters.
    const SPECIAL_PRIME: Option<u32>;
    /// Number of data primes `K` (the full data level).
    const K: usize = Self::DATA_PRIMES.len();
    /// Storage for one polynomial: `n` residues.
    type Poly: RnsStorage;
    /// Storage for `n` small signed coefficients.
    type Small: SmallStorage;
    /// Storage for `K·n` residues.
    type Rns: RnsStorage;
    /// NTT tables of the data primes, `K` of them, in flash.
    fn ntt_tables() -> &'static [NttTable<Self::Poly>];
    /// The NTT table of `t` (the batch encoder's transform).
    fn t_table() -> &'static NttTable<Self::Poly>;
    /// `slot_to_ntt()[i]`: the NTT position (bit-reversed evaluation index) of slot `i`.
    fn slot_to_ntt() -> &'static [u16];
    /// The inverse permutation of [`Params::slot_to_ntt`].
    fn ntt_to_slot() -> &'static [u16];
    /// The cycles of [`Params::slot_to_ntt`] (12 at `n = 4096`, 16 at 8192) cut into
    /// [`CycleSegment`]s: the decoder permutes its slots in place along them, several
    /// segments side by side, with no visited set.
    fn slot_cycle_segments() -> &'static [CycleSegment];
    /// Encoding and decryption constants for every level `1..=K` (index `level - 1`).
    fn levels() -> &'static [LevelConstants];
    /// SEAL's `parms_id` of every level `1..=K` (index `level - 1`): BLAKE2b-256 of
    /// `[1, n, q_0, …, q_{L-1}, t]`.
    fn parms_ids() -> &'static [[u8; 32]];
    /// The constants of `t` itself.
    fn plain() -> &'static PlainConstants;
}

/// A preset module's statics `NTT_TABLES` (the data primes) and `T_TABLE`. On the Helium
/// builds, at `n = 4096`, each table carries the packed twiddles of the radix-4 kernels
/// (`zeppelin_ring::mve::PackedTwiddles`, 16 KB per prime, in the `.twiddles` section beside
/// the others); other degrees keep the general schedule (the `n = 8192` preset's companions
/// would not fit the device's tightly coupled memory), and other builds plain tables.
macro_rules! ntt_tables {
    (4096; $($q:literal),+; $t:literal) => {
        #[cfg(not(zeppelin_mve))]
        ntt_tables!(plain; $($q),+; $t);
        #[cfg(zeppelin_mve)]
        pub(super) static PACKED_TABLES: [zeppelin_ring::mve::PackedTwiddles; K] =
            [$(const { packed($q) }),+];
        #[cfg(zeppelin_mve)]
        pub(super) static PACKED_T_TABLE: zeppelin_ring::mve::PackedTwiddles = packed($t);
        #[cfg(zeppelin_mve)]
        pub(super) static NTT_TABLES: [NttTable<[u32; N]>; K] =
            attach_packed([$(const { table::<N>($q) }),+], &PACKED_TABLES);
        #[cfg(zeppelin_mve)]
        pub(super) static T_TABLE: NttTable<[u32; N]> =
            table::<N>($t).with_packed(PACKED_T_TABLE.view());
    };
    (plain; $($q:literal),+; $t:literal) => {
        // `allow`, not `expect`: the lint fires only for the n = 8192 preset's tables (and,
        // on x86-64, whose tables carry the Shoup twiddles too, for its t table).
        #[allow(
            long_running_const_eval,
            reason = "building n = 8192 tables takes the const evaluator a while; it is a build step"
        )]
        // One inline constant per table: each is its own, shorter evaluation.
        pub(super) static NTT_TABLES: [NttTable<[u32; N]>; K] = [$(const { table::<N>($q) }),+];
        #[allow(
            long_running_const_eval,
            reason = "as NTT_TABLES: on x86-64 the tables carry the Shoup twiddles too"
        )]
        pub(super) static T_TABLE: NttTable<[u32; N]> = table::<N>($t);
    };
    ($n:tt; $($q:literal),+; $t:literal) => {
        ntt_tables!(plain; $($q),+; $t);
    };
}

/// Defines a preset: a zero-sized type, its [`Params`] implementation and every table,
/// from `n`, `t` and the primes alone.
///
/// ```text
/// preset! {
///     /// Documentation of the preset.
///     pub struct Seal4096, mod seal4096, name "seal4096",
///     n = 4096, log_n = 12, t = 65537,
///     data = [134_176_769, 134_111_233, 134_012_929],
///     special = Some(268_369_921),
/// }
/// ```
macro_rules! preset {
    (
        $(#[$doc:meta])*
        pub struct $name:ident, mod $module:ident, name $label:literal,
        n = $n:tt, log_n = $log_n:literal, t = $t:literal,
        data = [$($q:literal),+ $(,)?],
        special = $special:expr $(,)?
    ) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
        pub struct $name;

        /// The compile-time tables of the preset of the same name.
        mod $module {
            use super::*;

            pub(super) const N: usize = $n;
            pub(super) const PRIMES: &[u32] = &[$($q),+];
            pub(super) const K: usize = PRIMES.len();
            ntt_tables!($n; $($q),+; $t);
            pub(super) static SLOT_TO_NTT: [u16; N] = slot_to_ntt_map::<N>($log_n);
            pub(super) static NTT_TO_SLOT: [u16; N] = invert(&slot_to_ntt_map::<N>($log_n));
            const SLOT_SEGMENTS: usize = segment_count(&slot_to_ntt_map::<N>($log_n));
            pub(super) static SLOT_CYCLE_SEGMENTS: [CycleSegment; SLOT_SEGMENTS] =
                cycle_segments::<N, SLOT_SEGMENTS>(&slot_to_ntt_map::<N>($log_n));
            pub(super) static LEVELS: [LevelConstants; K] = levels::<K>(PRIMES, $t);
            pub(super) static PARMS_IDS: [[u8; 32]; K] = parms_ids::<K>(N, PRIMES, $t);
            pub(super) static PLAIN: PlainConstants = PlainConstants::new($t, N);
            // The special prime must be NTT-friendly too (the SEAL adapter computes with it).
            const _: () = {
                let special: Option<u32> = $special;
                if let Some(p) = special {
                    let _ = table::<N>(p);
                }
                check_preset(N, $log_n, PRIMES);
            };
        }

        impl Params for $name {
            const NAME: &'static str = $label;
            const N: usize = $n;
            const LOG_N: u32 = $log_n;
            const T: u32 = $t;
            const DATA_PRIMES: &'static [u32] = $module::PRIMES;
            const SPECIAL_PRIME: Option<u32> = $special;
            type Poly = [u32; $n];
            type Small = [i8; $n];
            type Rns = [u32; $module::K * $n];
            fn ntt_tables() -> &'static [NttTable<[u32; $n]>] {
                &$module::NTT_TABLES
            }
            fn t_table() -> &'static NttTable<[u32; $n]> {
                &$module::T_TABLE
            }
            fn slot_to_ntt() -> &'static [u16] {
                &$module::SLOT_TO_NTT
            }
            fn ntt_to_slot() -> &'static [u16] {
                &$module::NTT_TO_SLOT
            }
            fn slot_cycle_segments() -> &'static [CycleSegment] {
                &$module::SLOT_CYCLE_SEGMENTS
            }
            fn levels() -> &'static [LevelConstants] {
                &$module::LEVELS
            }
            fn parms_ids() -> &'static [[u8; 32]] {
                &$module::PARMS_IDS
            }
            fn plain() -> &'static PlainConstants {
                &$module::PLAIN
            }
        }
    };
}

preset! {
    /// SEAL-compatible 128-bit preset (the default): `n = 4096`, `t = 65537`, three 27-bit
    /// data primes and SEAL's 28-bit special prime (product 108.996 bits, within the HE
    /// standard's 109).
    pub struct Seal4096, mod seal4096, name "seal4096",
    n = 4096, log_n = 12, t = 65537,
    data = [134_176_769, 134_111_233, 134_012_929],
    special = Some(268_369_921),
}

preset! {
    /// The Zeppelin paper's preset: `n = 4096`, `t = 65537`, four data primes below `2^27`,
    /// no special prime.
    pub struct Zeppelin4096, mod zeppelin4096, name "zeppelin4096",
    n = 4096, log_n = 12, t = 65537,
    data = [134_176_769, 134_111_233, 134_012_929, 133_963_777],
    special = None,
}

preset! {
    /// SEAL-compatible 128-bit preset for deeper circuits: `n = 8192`, `t = 65537`, seven
    /// 27-bit data primes (`log Q = 188.9`) and SEAL's 28-bit special prime: 217 bits in
    /// SEAL's count, within the HE standard's 218 for `n = 8192`. SEAL 4.1 accepts it with
    /// batching (checked by the interoperability tests).
    pub struct Seal8192, mod seal8192, name "seal8192",
    n = 8192, log_n = 13, t = 65537,
    data = [
        133_857_281, 133_644_289, 133_611_521, 133_513_217, 133_251_073, 132_825_089,
        132_759_553,
    ],
    special = Some(268_369_921),
}

/// The default preset.
pub type DefaultParams = Seal4096;

/// Builds the packed twiddles of the Helium radix-4 kernels at compile time.
#[cfg(zeppelin_mve)]
#[expect(clippy::panic, reason = "const evaluation only")]
const fn packed(q: u32) -> zeppelin_ring::mve::PackedTwiddles {
    match zeppelin_ring::mve::PackedTwiddles::new(q) {
        Ok(t) => t,
        Err(_) => panic!("a preset prime is not certified by the packed Helium NTT's plan"),
    }
}

/// Attaches `packed[i]` to `tables[i]`.
#[cfg(zeppelin_mve)]
const fn attach_packed<const N: usize, const K: usize>(
    mut tables: [NttTable<[u32; N]>; K],
    packed: &'static [zeppelin_ring::mve::PackedTwiddles; K],
) -> [NttTable<[u32; N]>; K] {
    let mut i = 0;
    while i < K {
        tables[i].set_packed(packed[i].view());
        i += 1;
    }
    tables
}

/// Builds an NTT table at compile time.
#[expect(
    clippy::panic,
    reason = "const evaluation only: a panic here is a build error, never a run-time one"
)]
const fn table<const N: usize>(q: u32) -> NttTable<[u32; N]> {
    match NttTable::new_array(q) {
        Ok(t) => t,
        Err(_) => panic!("a preset prime is not an NTT-friendly prime below 2^30 for n"),
    }
}

#[expect(clippy::panic, reason = "const evaluation only")]
const fn modulus(q: u32) -> Modulus {
    match Modulus::new(q) {
        Ok(m) => m,
        Err(_) => panic!("not a prime below 2^30"),
    }
}

/// The shape rules the device arithmetic relies on.
#[expect(clippy::panic, reason = "const evaluation only")]
const fn check_preset(n: usize, log_n: u32, primes: &[u32]) {
    if n != 1 << log_n {
        panic!("n is not 2^log_n");
    }
    if n < 64 || n > u16::MAX as usize + 1 {
        panic!("n must be in 64..=65536 (bitmaps of u64 words, slot maps of u16)");
    }
    if primes.len() > MAX_PRIMES {
        panic!("more data primes than MAX_PRIMES");
    }
    let mut i = 0;
    while i < primes.len() {
        // The BEHZ tail's products (y·|Q/q_i|_t < q·t < 2^28·2^17) and the lazy NTT bounds
        // are certified for primes below 2^28.
        if primes[i] >= 1 << 28 {
            panic!("data primes must be below 2^28");
        }
        let mut j = 0;
        while j < i {
            if primes[j] == primes[i] {
                panic!("data primes must be distinct");
            }
            j += 1;
        }
        i += 1;
    }
}

const fn levels<const K: usize>(primes: &[u32], t: u32) -> [LevelConstants; K] {
    let mut out = [LevelConstants::EMPTY; K];
    let mut l = 0;
    while l < K {
        out[l] = LevelConstants::new(primes, l + 1, t);
        l += 1;
    }
    out
}

const fn parms_ids<const K: usize>(n: usize, primes: &[u32], t: u32) -> [[u8; 32]; K] {
    let mut out = [[0u8; 32]; K];
    let mut l = 0;
    while l < K {
        let (prefix, _) = primes.split_at(l + 1);
        out[l] = crate::parms_id::parms_id(n, prefix, t);
        l += 1;
    }
    out
}

/// Positions per [`CycleSegment`] at most: long enough that a segment's start costs little,
/// short enough that the decoder's four walks in lockstep share most of their steps.
pub const CYCLE_SEGMENT_STEPS: usize = 128;

/// The most [`CycleSegment`]s of any preset's slot permutation (checked at compile time); the
/// decoder saves one value per segment on the stack.
pub const MAX_CYCLE_SEGMENTS: usize = 96;

/// A stretch of one cycle of a permutation `map` of `0..n`, as the in-place permuter walks
/// it: from position `start`, `len` positions `p` along the cycle each take the value at
/// `map[p]`, except the last, which takes the value saved from the start of segment `next`
/// (its successor on the cycle, already overwritten by then). Segments cover every position
/// once and touch disjoint positions, so they can be walked side by side.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CycleSegment {
    /// The first position written.
    pub start: u16,
    /// The number of positions written, at least 1.
    pub len: u16,
    /// The index (in the segment table) of the segment that starts where this one ends.
    pub next: u16,
}

/// The number of [`CycleSegment`]s of a permutation of `0..N` (compile time).
const fn segment_count<const N: usize>(map: &[u16; N]) -> usize {
    let mut visited = [false; N];
    let mut segments = 0;
    let mut start = 0;
    while start < N {
        let mut i = start;
        let mut steps = 0;
        while !visited[i] {
            visited[i] = true;
            if steps % CYCLE_SEGMENT_STEPS == 0 {
                segments += 1;
            }
            steps += 1;
            i = map[i] as usize;
        }
        start += 1;
    }
    segments
}

/// Every cycle of a permutation of `0..N` cut into [`CycleSegment`]s of at most
/// [`CYCLE_SEGMENT_STEPS`] positions, the longest first (so that segments walked side by
/// side have equal lengths), ties in cycle order.
#[expect(clippy::panic, reason = "const evaluation only")]
const fn cycle_segments<const N: usize, const S: usize>(map: &[u16; N]) -> [CycleSegment; S] {
    const EMPTY: CycleSegment = CycleSegment {
        start: 0,
        len: 0,
        next: 0,
    };
    if S > MAX_CYCLE_SEGMENTS {
        panic!("more cycle segments than the decoder saves");
    }
    let mut visited = [false; N];
    let mut walk = [EMPTY; S];
    let mut found = 0;
    let mut start = 0;
    while start < N {
        let first = found;
        let mut i = start;
        let mut steps = 0;
        while !visited[i] {
            visited[i] = true;
            if steps % CYCLE_SEGMENT_STEPS == 0 {
                walk[found] = CycleSegment {
                    start: i as u16,
                    len: 0,
                    next: 0,
                };
                found += 1;
            }
            walk[found - 1].len += 1;
            steps += 1;
            i = map[i] as usize;
        }
        // Each segment of this cycle ends where the following one starts; the last where
        // the first does.
        let mut k = first;
        while k < found {
            walk[k].next = if k + 1 == found { first } else { k + 1 } as u16;
            k += 1;
        }
        start += 1;
    }
    // rank[k]: the place of walk segment k once sorted by length, longest first (stable).
    let mut rank = [0usize; S];
    let mut k = 0;
    while k < S {
        let mut j = 0;
        while j < S {
            let (a, b) = (walk[j].len, walk[k].len);
            if a > b || (a == b && j < k) {
                rank[k] += 1;
            }
            j += 1;
        }
        k += 1;
    }
    let mut sorted = [EMPTY; S];
    let mut k = 0;
    while k < S {
        sorted[rank[k]] = CycleSegment {
            next: rank[walk[k].next as usize] as u16,
            ..walk[k]
        };
        k += 1;
    }
    sorted
}

/// The inverse of a permutation of `0..N`.
const fn invert<const N: usize>(map: &[u16; N]) -> [u16; N] {
    let mut inv = [0u16; N];
    let mut i = 0;
    while i < N {
        inv[map[i] as usize] = i as u16;
        i += 1;
    }
    inv
}

/// SEAL's slot order (see [`crate::encoder`]): slot `i < n/2` holds `m(ψ^(3^i mod 2n))` and
/// slot `n/2 + i` holds `m(ψ^(−3^i mod 2n))`, mapped to the NTT position evaluating there.
const fn slot_to_ntt_map<const N: usize>(log_n: u32) -> [u16; N] {
    let mut map = [0u16; N];
    let row = N / 2;
    let two_n = 2 * N;
    let mut pos = 1usize; // 3^i mod 2n
    let mut i = 0;
    while i < row {
        // The NTT position j holds the evaluation at ψ^(2·br(j)+1); the root ψ^pos has
        // exponent index (pos − 1)/2 in natural order.
        map[i] = zeppelin_ring::ntt::bit_reverse((pos - 1) >> 1, log_n) as u16;
        map[row + i] = zeppelin_ring::ntt::bit_reverse((two_n - pos - 1) >> 1, log_n) as u16;
        pos = (pos * 3) & (two_n - 1);
        i += 1;
    }
    map
}

/// The constants of the plaintext modulus `t`, computed at compile time.
#[derive(Clone, Copy, Debug)]
pub struct PlainConstants {
    /// `t` with its Montgomery constants.
    pub modulus: Modulus,
    /// `floor((t + 1) / 2)`: SEAL's rounding increment for `Δ·m`.
    pub half_up: u32,
    /// `(t − 1) / 2`: the largest centred slot magnitude.
    pub half: u32,
}

impl PlainConstants {
    /// The constants of `t` for ring degree `n` (compile-time only).
    #[expect(clippy::panic, reason = "const evaluation only")]
    pub const fn new(t: u32, n: usize) -> Self {
        // The BEHZ tail needs t < 2^17 (see `check_preset`); batching needs t ≡ 1 mod 2n.
        if t >= 1 << 17 || t < 3 {
            panic!("t must be an odd prime below 2^17");
        }
        if t as usize % (2 * n) != 1 {
            panic!("t must be 1 mod 2n for batching");
        }
        Self {
            modulus: modulus(t),
            half_up: t.div_ceil(2),
            half: (t - 1) / 2,
        }
    }
}

/// Constants for one level `L` (the first `L` data primes, `Q = q_0·…·q_{L-1}`), computed at
/// compile time. Montgomery forms are `x·2^32 mod m`, for one-multiplication products.
#[derive(Clone, Copy, Debug)]
pub struct LevelConstants {
    /// The level `L`.
    pub level: usize,
    /// Number of significant bits of `Q`.
    pub q_bits: u32,
    /// `Q mod t`, for SEAL's rounding correction of `Δ·m`.
    pub q_mod_t: u32,
    /// `floor(q_mod_t·2^32 / t)`: Shoup's quotient estimate for products `m·(Q mod t)`.
    pub q_mod_t_shoup: u32,
    /// `[floor(Q/t)]_{q_i}` in Montgomery form mod `q_i`.
    pub delta_mont: [Mont; MAX_PRIMES],
    /// `[γ·t·(Q/q_i)^-1]_{q_i}` in Montgomery form (BEHZ steps 1 and the first half of 2).
    pub behz_scale_mont: [Mont; MAX_PRIMES],
    /// `|Q/q_i|_t` in Montgomery form mod `t`.
    pub qhat_mod_t_mont: [Mont; MAX_PRIMES],
    /// `|Q/q_i|_γ`.
    pub qhat_mod_gamma: [u32; MAX_PRIMES],
    /// `|−Q^-1|_t` in Montgomery form mod `t`.
    pub neg_q_inv_mod_t_mont: Mont,
    /// `|−Q^-1|_γ`.
    pub neg_q_inv_mod_gamma: u32,
    /// `|γ^-1|_t` in Montgomery form mod `t`.
    pub gamma_inv_mod_t_mont: Mont,
    /// `γ mod t`.
    pub gamma_mod_t: u32,
    /// `[(Q/q_i)^-1]_{q_i}` in normal form (CRT reconstruction for noise measurement).
    pub qhat_inv: [u32; MAX_PRIMES],
}

impl LevelConstants {
    /// A placeholder (level 0) for array initialisers; never a preset's constants.
    const EMPTY: Self = Self {
        level: 0,
        q_bits: 0,
        q_mod_t: 0,
        q_mod_t_shoup: 0,
        delta_mont: [Mont::ZERO; MAX_PRIMES],
        behz_scale_mont: [Mont::ZERO; MAX_PRIMES],
        qhat_mod_t_mont: [Mont::ZERO; MAX_PRIMES],
        qhat_mod_gamma: [0; MAX_PRIMES],
        neg_q_inv_mod_t_mont: Mont::ZERO,
        neg_q_inv_mod_gamma: 0,
        gamma_inv_mod_t_mont: Mont::ZERO,
        gamma_mod_t: 0,
        qhat_inv: [0; MAX_PRIMES],
    };

    /// Computes the constants of level `level` over `primes` with plaintext modulus `t`
    /// (compile-time only). No multi-word division is needed: `[floor(Q/t)]_{q_i}` is
    /// `−(Q mod t)·t^-1 mod q_i`, since `q_i` divides `Q`.
    #[expect(clippy::panic, reason = "const evaluation only")]
    pub const fn new(primes: &[u32], level: usize, t: u32) -> Self {
        if level == 0 || level > primes.len() || level > MAX_PRIMES {
            panic!("level out of range");
        }
        let tm = modulus(t);
        let gamma: u64 = 1 << GAMMA_BITS;
        let mut q = Wide::ONE;
        let mut q_mod_t = 1u32;
        let mut q_mod_gamma = 1u32;
        let mut i = 0;
        while i < level {
            q = q.mul_u32(primes[i]);
            q_mod_t = tm.mul(q_mod_t, tm.reduce_u32(primes[i]));
            q_mod_gamma = q_mod_gamma.wrapping_mul(primes[i]) & GAMMA_MASK;
            i += 1;
        }

        let mut delta_mont = [Mont::ZERO; MAX_PRIMES];
        let mut behz_scale_mont = [Mont::ZERO; MAX_PRIMES];
        let mut qhat_mod_t_mont = [Mont::ZERO; MAX_PRIMES];
        let mut qhat_mod_gamma = [0u32; MAX_PRIMES];
        let mut qhat_inv = [0u32; MAX_PRIMES];
        let mut i = 0;
        while i < level {
            let qi = modulus(primes[i]);
            let t_inv = match qi.inv(qi.reduce_u32(t)) {
                Some(v) => v,
                None => panic!("t divides a data prime"),
            };
            let delta = qi.mul(qi.neg(qi.reduce_u32(q_mod_t)), t_inv);
            delta_mont[i] = qi.mont(delta);
            // Q/q_i reduced modulo q_i, t and γ, as a product of the other primes.
            let mut hat_qi = 1u32;
            let mut hat_t = 1u32;
            let mut hat_gamma = 1u32;
            let mut j = 0;
            while j < level {
                if j != i {
                    hat_qi = qi.mul(hat_qi, qi.reduce_u32(primes[j]));
                    hat_t = tm.mul(hat_t, tm.reduce_u32(primes[j]));
                    hat_gamma = hat_gamma.wrapping_mul(primes[j]) & GAMMA_MASK;
                }
                j += 1;
            }
            let inv = match qi.inv(hat_qi) {
                Some(v) => v,
                None => panic!("primes are not coprime"),
            };
            qhat_inv[i] = inv;
            let gamma_t = qi.mul(qi.reduce_u64(gamma), qi.reduce_u32(t));
            behz_scale_mont[i] = qi.mont(qi.mul(gamma_t, inv));
            qhat_mod_t_mont[i] = tm.mont(hat_t);
            qhat_mod_gamma[i] = hat_gamma;
            i += 1;
        }
        let q_inv_t = match tm.inv(q_mod_t) {
            Some(v) => v,
            None => panic!("Q is divisible by t"),
        };
        let gamma_mod_t = tm.reduce_u64(gamma);
        let gamma_inv_t = match tm.inv(gamma_mod_t) {
            Some(v) => v,
            None => panic!("gamma is divisible by t"),
        };
        Self {
            level,
            q_bits: q.bits(),
            q_mod_t,
            q_mod_t_shoup: (((q_mod_t as u64) << 32) / t as u64) as u32,
            delta_mont,
            behz_scale_mont,
            qhat_mod_t_mont,
            qhat_mod_gamma,
            neg_q_inv_mod_t_mont: tm.mont(tm.neg(q_inv_t)),
            neg_q_inv_mod_gamma: inverse_mod_2_32(q_mod_gamma).wrapping_neg() & GAMMA_MASK,
            gamma_inv_mod_t_mont: tm.mont(gamma_inv_t),
            gamma_mod_t,
            qhat_inv,
        }
    }
}

/// `x^-1 mod 2^32` for odd `x`, by Newton iteration (also the inverse mod `2^31`).
const fn inverse_mod_2_32(x: u32) -> u32 {
    let mut inv = x;
    let mut i = 0;
    while i < 5 {
        inv = inv.wrapping_mul(2u32.wrapping_sub(x.wrapping_mul(inv)));
        i += 1;
    }
    inv
}

/// The level constants of `P` at `level`, or `None` if `level` is not in `1..=K`.
#[inline]
pub fn level_constants<P: Params>(level: usize) -> Option<&'static LevelConstants> {
    if level == 0 {
        return None;
    }
    P::levels().get(level - 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presets_have_expected_shape() {
        assert_eq!(Seal4096::K, 3);
        assert_eq!(Zeppelin4096::K, 4);
        assert_eq!(Seal8192::K, 7);
        assert_eq!(<Seal4096 as Params>::Rns::ZERO.len(), 3 * 4096);
        assert_eq!(<Seal8192 as Params>::Rns::ZERO.len(), 7 * 8192);
        assert_eq!(Seal4096::ntt_tables().len(), 3);
        assert_eq!(Zeppelin4096::levels().len(), 4);
        for (i, t) in Seal8192::ntt_tables().iter().enumerate() {
            assert_eq!(t.modulus().value(), Seal8192::DATA_PRIMES[i]);
            assert_eq!(t.degree(), 8192);
        }
        assert_eq!(Seal8192::t_table().degree(), 8192);
        assert_eq!(Seal8192::slot_to_ntt().len(), 8192);
    }
}
