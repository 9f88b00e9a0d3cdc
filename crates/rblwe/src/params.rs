//! The three parameter sets of Buchmann et al., fixed at compile time.
//!
//! | set | n | q | classical security (published) | per-bit decryption failure (published) |
//! |---|---|---|---|---|
//! | [`Set1`] | 256 | 256 | 84 bits | 2^-32 |
//! | [`Set2`] | 256 | 128 | 94 bits | 2^-10 |
//! | [`Set3`] | 512 | 256 | 190 bits | 2^-18 |
//!
//! Set 2's failure rate rules it out for deployment and for the CCA2 wrapper (a decryption
//! failure is a chosen-ciphertext oracle); it is kept for comparison with the paper.

/// A fixed-size byte array (`[u8; K]`), so generic code can hold polynomials of a
/// parameter set's size without allocation.
pub trait ByteArray: Copy + AsRef<[u8]> + AsMut<[u8]> + core::fmt::Debug + PartialEq + Eq {
    /// An all-zero array.
    fn zeroed() -> Self;
}

impl<const K: usize> ByteArray for [u8; K] {
    fn zeroed() -> Self {
        [0u8; K]
    }
}

/// A parameter set: ring degree `n`, power-of-two modulus `q`, and array types of the
/// matching sizes.
pub trait ParamSet: Copy + core::fmt::Debug + Default + PartialEq + Eq + 'static {
    /// Ring degree `n` (a multiple of 8).
    const N: usize;
    /// Modulus `q` (128 or 256).
    const Q: u16;
    /// `log2 q`.
    const LOG_Q: u32;
    /// Short name ("set1", ...), used in KAT file names and reports.
    const NAME: &'static str;
    /// Published classical security estimate in bits.
    const SECURITY_BITS: u32;
    /// Published per-bit decryption failure probability, as `log2` (e.g. -32).
    const FAILURE_LOG2: i32;
    /// `n` bytes: one polynomial in `Z_q^n`.
    type Poly: ByteArray;
    /// `n / 8` bytes: a packed binary polynomial or a message.
    type Bits: ByteArray;
    /// `2n` bytes: an extended operand or a CPA ciphertext.
    type Wide: ByteArray;

    /// `q - 1` as a byte: the coefficient mask (`0xff` or `0x7f`).
    const COEFF_MASK: u8 = (Self::Q - 1) as u8;
    /// Bytes of a packed binary polynomial or message.
    const BITS_BYTES: usize = Self::N / 8;
}

macro_rules! param_set {
    ($(#[$doc:meta])* $name:ident, $n:literal, $q:literal, $logq:literal, $label:literal, $sec:literal, $fail:literal) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
        pub struct $name;
        impl ParamSet for $name {
            const N: usize = $n;
            const Q: u16 = $q;
            const LOG_Q: u32 = $logq;
            const NAME: &'static str = $label;
            const SECURITY_BITS: u32 = $sec;
            const FAILURE_LOG2: i32 = $fail;
            type Poly = [u8; $n];
            type Bits = [u8; $n / 8];
            type Wide = [u8; 2 * $n];
        }
    };
}

param_set!(
    /// Set 1: n = 256, q = 256 (84-bit classical security, per-bit failure 2^-32).
    Set1, 256, 256, 8, "set1", 84, -32
);
param_set!(
    /// Set 2: n = 256, q = 128 (94-bit classical security, per-bit failure 2^-10; not for
    /// deployment).
    Set2, 256, 128, 7, "set2", 94, -10
);
param_set!(
    /// Set 3: n = 512, q = 256 (190-bit classical security, per-bit failure 2^-18).
    Set3, 512, 256, 8, "set3", 190, -18
);

/// Twice the expected residual noise at coefficient `i`, `2 E[nu_i]`, for binary
/// Bernoulli(1/2) secrets and errors.
///
/// `nu = e1*r1 + e2*r2 + e3`. In a negacyclic product of two binary polynomials,
/// coefficient `i` has `i + 1` added terms and `n - i - 1` subtracted (wrapped) terms, each
/// with mean 1/4, so `E[(e*r)_i] = (2i + 2 - n)/4`; two products plus `e3` (mean 1/2) give
/// `E[nu_i] = i - n/2 + 3/2`.
pub const fn twice_expected_noise(n: usize, i: usize) -> i64 {
    2 * i as i64 + 3 - n as i64
}

/// The bias-aware decoding offset `L_i = ceil(E[nu_i]) + q/4 (mod q)`, derived from the
/// expected noise. For even `n` this is the published `i - n/2 + q/4 + 2` (for Set 1,
/// `i - 62`).
pub const fn decode_offset(n: usize, q: u16, i: usize) -> u8 {
    let twice = twice_expected_noise(n, i);
    // ceil(twice / 2) for a signed integer, without relying on rounding direction of `/`.
    let mu_hat = if twice >= 0 {
        (twice + 1) / 2
    } else {
        -((-twice) / 2)
    };
    let l = mu_hat + (q as i64) / 4;
    (l.rem_euclid(q as i64)) as u8
}

/// A parameter set chosen at run time (for tools that take it as an argument); dispatch to
/// the compile-time types with a `match`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SetId {
    /// [`Set1`]: n = 256, q = 256.
    Set1,
    /// [`Set2`]: n = 256, q = 128.
    Set2,
    /// [`Set3`]: n = 512, q = 256.
    Set3,
}

impl SetId {
    /// All sets.
    pub const ALL: [SetId; 3] = [SetId::Set1, SetId::Set2, SetId::Set3];

    /// The set called `name` ("set1", "set2", "set3"), if any.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.name() == name)
    }

    /// Its name, as [`ParamSet::NAME`].
    pub const fn name(self) -> &'static str {
        match self {
            SetId::Set1 => Set1::NAME,
            SetId::Set2 => Set2::NAME,
            SetId::Set3 => Set3::NAME,
        }
    }

    /// Ring degree `n`.
    pub const fn n(self) -> usize {
        match self {
            SetId::Set1 => Set1::N,
            SetId::Set2 => Set2::N,
            SetId::Set3 => Set3::N,
        }
    }

    /// Modulus `q`.
    pub const fn q(self) -> u16 {
        match self {
            SetId::Set1 => Set1::Q,
            SetId::Set2 => Set2::Q,
            SetId::Set3 => Set3::Q,
        }
    }
}

impl core::fmt::Display for SetId {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "{} (n = {}, q = {})", self.name(), self.n(), self.q())
    }
}
