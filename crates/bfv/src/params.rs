//! Compile-time parameter presets.
//!
//! A preset is a zero-sized type implementing [`Params`]. Everything that depends on the primes
//! — NTT tables, the scaling constants of encoding and the BEHZ constants of decryption for
//! every level — is computed by `const fn` at compile time and lives in `static`s, so on a
//! device it sits in flash. A prime that is not NTT-friendly for `n = 4096` (or not prime,
//! or too large) stops the build: the tables are built in a `const` context and refuse it.

use zeppelin_ring::{Modulus, NttTable};

/// Ring degree `n` of every preset.
pub const N: usize = 4096;
/// `log2(n)`.
pub const LOG_N: u32 = 12;
/// Plaintext modulus `t` of every preset (`t ≡ 1 mod 2n`, so it supports batching).
pub const T: u32 = 65537;
/// Most data primes a preset may have (sizes the per-level constant arrays).
pub const MAX_PRIMES: usize = 4;
/// BEHZ auxiliary modulus `γ = 2^31` (paper Section 4.8): `mod γ` is a mask.
pub const GAMMA_BITS: u32 = 31;
const GAMMA_MASK: u32 = (1 << GAMMA_BITS) - 1;

/// Storage for one polynomial in RNS form at the full data level: `K·n` residues, prime by
/// prime (prime-major, then coefficient). Implemented for `[u32; L]`.
pub trait RnsStorage: AsRef<[u32]> + AsMut<[u32]> + Clone + 'static {
    /// All zeros (usable in `static` initialisers).
    const ZERO: Self;
}

impl<const L: usize> RnsStorage for [u32; L] {
    const ZERO: Self = [0; L];
}

/// A BFV parameter preset fixed at compile time.
pub trait Params: Sized + 'static {
    /// Short name, e.g. `"seal4096"`.
    const NAME: &'static str;
    /// The data primes `q_0, …, q_{K-1}`. A ciphertext at level `L` uses the first `L`.
    const DATA_PRIMES: &'static [u32];
    /// The special (key-switching) prime of the SEAL modulus chain, if any. The device never
    /// computes with it; it is here so adapters can build SEAL's parameters.
    const SPECIAL_PRIME: Option<u32>;
    /// Number of data primes `K` (the full data level).
    const K: usize = Self::DATA_PRIMES.len();
    /// Storage for `K·n` residues.
    type Rns: RnsStorage;
    /// NTT tables of the data primes, `K` of them, in flash.
    fn ntt_tables() -> &'static [NttTable<[u32; N]>];
    /// Encoding and decryption constants for every level `1..=K` (index `level - 1`).
    fn levels() -> &'static [LevelConstants];
}

/// SEAL-compatible 128-bit preset (the default): `n = 4096`, `t = 65537`, three 27-bit data
/// primes and SEAL's 28-bit special prime (product 108.996 bits, within the HE standard's 109).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Seal4096;

/// The Zeppelin paper's preset: `n = 4096`, `t = 65537`, four data primes below `2^27`, no
/// special prime.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Zeppelin4096;

/// The default preset.
pub type DefaultParams = Seal4096;

const SEAL4096_PRIMES: [u32; 3] = [134_176_769, 134_111_233, 134_012_929];
const ZEPPELIN4096_PRIMES: [u32; 4] = [134_176_769, 134_111_233, 134_012_929, 133_963_777];

/// Builds an NTT table at compile time.
#[allow(clippy::panic)] // const evaluation only: a panic here is a build error, never a run-time one
const fn table(q: u32) -> NttTable<[u32; N]> {
    match NttTable::new_array(q) {
        Ok(t) => t,
        Err(_) => panic!("a preset prime is not an NTT-friendly prime below 2^30 for n = 4096"),
    }
}

#[allow(clippy::panic)] // const evaluation only
const fn modulus(q: u32) -> Modulus {
    match Modulus::new(q) {
        Ok(m) => m,
        Err(_) => panic!("not a prime below 2^30"),
    }
}

static SEAL4096_TABLES: [NttTable<[u32; N]>; 3] = [
    table(SEAL4096_PRIMES[0]),
    table(SEAL4096_PRIMES[1]),
    table(SEAL4096_PRIMES[2]),
];
static ZEPPELIN4096_TABLES: [NttTable<[u32; N]>; 4] = [
    table(ZEPPELIN4096_PRIMES[0]),
    table(ZEPPELIN4096_PRIMES[1]),
    table(ZEPPELIN4096_PRIMES[2]),
    table(ZEPPELIN4096_PRIMES[3]),
];
static SEAL4096_LEVELS: [LevelConstants; 3] = [
    LevelConstants::new(&SEAL4096_PRIMES, 1),
    LevelConstants::new(&SEAL4096_PRIMES, 2),
    LevelConstants::new(&SEAL4096_PRIMES, 3),
];
static ZEPPELIN4096_LEVELS: [LevelConstants; 4] = [
    LevelConstants::new(&ZEPPELIN4096_PRIMES, 1),
    LevelConstants::new(&ZEPPELIN4096_PRIMES, 2),
    LevelConstants::new(&ZEPPELIN4096_PRIMES, 3),
    LevelConstants::new(&ZEPPELIN4096_PRIMES, 4),
];
// The special prime must be NTT-friendly too (the SEAL adapter computes with it).
const _: () = {
    let _ = table(268_369_921);
};

impl Params for Seal4096 {
    const NAME: &'static str = "seal4096";
    const DATA_PRIMES: &'static [u32] = &SEAL4096_PRIMES;
    const SPECIAL_PRIME: Option<u32> = Some(268_369_921);
    type Rns = [u32; 3 * N];
    fn ntt_tables() -> &'static [NttTable<[u32; N]>] {
        &SEAL4096_TABLES
    }
    fn levels() -> &'static [LevelConstants] {
        &SEAL4096_LEVELS
    }
}

impl Params for Zeppelin4096 {
    const NAME: &'static str = "zeppelin4096";
    const DATA_PRIMES: &'static [u32] = &ZEPPELIN4096_PRIMES;
    const SPECIAL_PRIME: Option<u32> = None;
    type Rns = [u32; 4 * N];
    fn ntt_tables() -> &'static [NttTable<[u32; N]>] {
        &ZEPPELIN4096_TABLES
    }
    fn levels() -> &'static [LevelConstants] {
        &ZEPPELIN4096_LEVELS
    }
}

/// Constants for one level `L` (the first `L` data primes, `Q = q_0·…·q_{L-1}`), computed at
/// compile time. Montgomery forms are `x·2^32 mod m`, for one-multiplication products.
#[derive(Clone, Copy, Debug)]
pub struct LevelConstants {
    /// The level `L`.
    pub level: usize,
    /// `Q` of this level (below `2^108`).
    pub q_product: u128,
    /// Number of significant bits of `Q`.
    pub q_bits: u32,
    /// `Q mod t`, for SEAL's rounding correction of `Δ·m`.
    pub q_mod_t: u32,
    /// `[floor(Q/t)]_{q_i}` in Montgomery form mod `q_i`.
    pub delta_mont: [u32; MAX_PRIMES],
    /// `[γ·t·(Q/q_i)^-1]_{q_i}` in Montgomery form (BEHZ steps 1 and the first half of 2).
    pub behz_scale_mont: [u32; MAX_PRIMES],
    /// `|Q/q_i|_t` in Montgomery form mod `t`.
    pub qhat_mod_t_mont: [u32; MAX_PRIMES],
    /// `|Q/q_i|_γ`.
    pub qhat_mod_gamma: [u32; MAX_PRIMES],
    /// `|−Q^-1|_t` in Montgomery form mod `t`.
    pub neg_q_inv_mod_t_mont: u32,
    /// `|−Q^-1|_γ`.
    pub neg_q_inv_mod_gamma: u32,
    /// `|γ^-1|_t` in Montgomery form mod `t`.
    pub gamma_inv_mod_t_mont: u32,
    /// `γ mod t`.
    pub gamma_mod_t: u32,
    /// `[(Q/q_i)^-1]_{q_i}` in normal form (CRT reconstruction for noise measurement).
    pub qhat_inv: [u32; MAX_PRIMES],
}

impl LevelConstants {
    /// Computes the constants of level `level` over `primes` (compile-time only: it divides).
    #[allow(clippy::panic)] // const evaluation only
    pub const fn new(primes: &[u32], level: usize) -> Self {
        if level == 0 || level > primes.len() || level > MAX_PRIMES {
            panic!("level out of range");
        }
        let t = modulus(T);
        let mut q_product: u128 = 1;
        let mut i = 0;
        while i < level {
            q_product *= primes[i] as u128;
            i += 1;
        }
        let q_bits = 128 - q_product.leading_zeros();
        let q_mod_t = (q_product % T as u128) as u32;
        let delta = q_product / T as u128;
        let gamma: u64 = 1 << GAMMA_BITS;
        let q_mod_gamma = (q_product % gamma as u128) as u32;

        let mut delta_mont = [0u32; MAX_PRIMES];
        let mut behz_scale_mont = [0u32; MAX_PRIMES];
        let mut qhat_mod_t_mont = [0u32; MAX_PRIMES];
        let mut qhat_mod_gamma = [0u32; MAX_PRIMES];
        let mut qhat_inv = [0u32; MAX_PRIMES];
        let mut i = 0;
        while i < level {
            let qi = modulus(primes[i]);
            delta_mont[i] = qi.to_mont((delta % primes[i] as u128) as u32);
            // Q/q_i reduced modulo q_i, t and γ, as a product of the other primes.
            let mut hat_qi = 1u32;
            let mut hat_t = 1u32;
            let mut hat_gamma = 1u32;
            let mut j = 0;
            while j < level {
                if j != i {
                    hat_qi = qi.mul(hat_qi, qi.reduce_u32(primes[j]));
                    hat_t = t.mul(hat_t, t.reduce_u32(primes[j]));
                    hat_gamma = hat_gamma.wrapping_mul(primes[j]) & GAMMA_MASK;
                }
                j += 1;
            }
            let inv = match qi.inv(hat_qi) {
                Some(v) => v,
                None => panic!("primes are not coprime"),
            };
            qhat_inv[i] = inv;
            let gamma_t = qi.mul(qi.reduce_u64(gamma), qi.reduce_u32(T));
            behz_scale_mont[i] = qi.to_mont(qi.mul(gamma_t, inv));
            qhat_mod_t_mont[i] = t.to_mont(hat_t);
            qhat_mod_gamma[i] = hat_gamma;
            i += 1;
        }
        let q_inv_t = match t.inv(q_mod_t) {
            Some(v) => v,
            None => panic!("Q is divisible by t"),
        };
        let gamma_mod_t = t.reduce_u64(gamma);
        let gamma_inv_t = match t.inv(gamma_mod_t) {
            Some(v) => v,
            None => panic!("gamma is divisible by t"),
        };
        Self {
            level,
            q_product,
            q_bits,
            q_mod_t,
            delta_mont,
            behz_scale_mont,
            qhat_mod_t_mont,
            qhat_mod_gamma,
            neg_q_inv_mod_t_mont: t.to_mont(t.neg(q_inv_t)),
            neg_q_inv_mod_gamma: inverse_mod_2_32(q_mod_gamma).wrapping_neg() & GAMMA_MASK,
            gamma_inv_mod_t_mont: t.to_mont(gamma_inv_t),
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

/// The modulus `t` with its Montgomery constants.
pub(crate) const T_MODULUS: Modulus = modulus(T);

/// `floor((t + 1) / 2)`: SEAL's rounding increment for `Δ·m`.
pub(crate) const T_HALF_UP: u32 = T.div_ceil(2);

/// `t^-1 mod 2^32`: exact division by `t` of a multiple of `t` below `2^32·t`.
pub(crate) const T_INV_MOD_2_32: u32 = inverse_mod_2_32(T);

/// `2^31 − 1`.
pub(crate) const GAMMA_MASK_PUB: u32 = GAMMA_MASK;

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
        assert_eq!(<Seal4096 as Params>::Rns::ZERO.len(), 3 * N);
        assert_eq!(Seal4096::ntt_tables().len(), 3);
        assert_eq!(Zeppelin4096::levels().len(), 4);
        for (i, t) in Zeppelin4096::ntt_tables().iter().enumerate() {
            assert_eq!(t.modulus().value(), ZEPPELIN4096_PRIMES[i]);
            assert_eq!(t.degree(), N);
        }
    }

    #[test]
    fn level_constants_are_consistent() {
        for lc in Zeppelin4096::levels() {
            let q = lc.q_product;
            assert_eq!(lc.q_mod_t as u128, q % T as u128);
            let g = 1u128 << 31;
            // (−Q^-1)·Q ≡ −1 mod γ
            assert_eq!((lc.neg_q_inv_mod_gamma as u128 * (q % g)) % g, g - 1);
            assert_eq!(lc.gamma_mod_t as u128, g % T as u128);
        }
    }
}
