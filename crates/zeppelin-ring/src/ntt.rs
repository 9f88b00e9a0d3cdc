//! Negacyclic number-theoretic transforms over `Z_q[x]/(x^n + 1)`.
//!
//! # The evaluation map
//!
//! Let `ψ` be the **smallest** primitive `2n`-th root of unity mod `q` and `br(j)` the
//! `log2(n)`-bit reversal of `j`. The forward transform takes coefficients in natural order
//! and returns the evaluations
//!
//! ```text
//! â[j] = a(ψ^(2·br(j) + 1)) mod q,    j = 0..n
//! ```
//!
//! This is the convention of Microsoft SEAL and of OpenFHE (Cooley–Tukey with bit-reversed
//! output), so secret keys and evaluation-domain ciphertexts can be exchanged with both
//! without permutation. The transform is exact and unscaled: [`NttBackend::inverse`] returns
//! the original coefficients in `[0, q)`, the factor `n^-1` included.
//!
//! Twiddles are kept in Montgomery form, so every butterfly multiplies with one Montgomery
//! product and data never leave normal form. On x86-64 the tables also carry the same
//! twiddles in normal form with Shoup companions ([`ShoupView`]), derived from the
//! Montgomery ones, for the vector backends' Shoup products.

use crate::error::RingError;
use crate::modulus::Modulus;

/// Largest supported ring degree.
pub const MAX_DEGREE: usize = 1 << 17;

/// Borrowed view of an NTT table: what every backend needs, independent of where the
/// table is stored (a `static` array in flash on a device, a `Vec` on a server).
///
/// Take views from [`NttTable::view`]. A view built by hand must hold `n = 2^log_n` entries
/// in `forward` and `inverse`: the SIMD backends check it (they read the tables with
/// unchecked vector loads) and return [`RingError::LengthMismatch`], while `Portable` (and
/// Helium, which then falls back to it) index the tables and panic on a shorter one.
#[derive(Clone, Copy, Debug)]
pub struct NttView<'a> {
    /// The modulus.
    pub modulus: Modulus,
    /// `log2(n)`.
    pub log_n: u32,
    /// `forward[k] = ψ^br(k) · 2^32 mod q` for `k = 1..n` (index 0 unused).
    pub forward: &'a [u32],
    /// `inverse[k] = ψ^-br(k) · 2^32 mod q` for `k = 1..n` (index 0 unused).
    pub inverse: &'a [u32],
    /// `n^-1 · 2^32 mod q`.
    pub n_inv_mont: u32,
    /// The smallest primitive `2n`-th root of unity `ψ`, in normal form.
    pub psi: u32,
    /// The twiddles of the Shoup kernels of the x86-64 backends (normal form with Shoup
    /// companions). Tables built on x86-64 always carry them; elsewhere, and in a view built
    /// by hand, `None` (the backends then run their Montgomery kernels).
    pub shoup: Option<ShoupView<'a>>,
    /// The packed twiddles of the Helium radix-4 kernels (n = 4096), attached to a preset's
    /// device tables with [`NttTable::with_packed`]; `None` elsewhere (the Helium backend then
    /// runs its general schedule).
    pub packed: Option<PackedView<'a>>,
}

/// The twiddles of the Helium radix-4 NTT (`mve::packed`): only the Barrett companions
/// `w' = round(w·2^31/q)` of the forward twiddles `ψ^br(k)`, packed in the order the kernels
/// read them (the kernels recover `w = round(w'·q/2^31)` with one multiply-high, and the
/// inverse reads the same words backwards), and eight constants. Built and certified by
/// `mve::PackedTwiddles::new`; carries the modulus it was built for in `consts[0]`.
#[derive(Clone, Copy, Debug)]
pub struct PackedView<'a> {
    /// `n − 1` packed companions (one spare word).
    pub table: &'a [u32],
    /// `q, −q, 2q, round(2^31/q), n^-1, its companion, ψ^(n/2)·n^-1, its companion`.
    pub consts: &'a [u32; 8],
}

/// The twiddles of the x86-64 Shoup kernels, each beside its Shoup companion
/// `w' = floor(w·2^32 / q)` (so that `y·w mod q` in `[0, 2q)` is `y·w − hi(y·w')·q` for any
/// 32-bit `y`). All arrays hold `n` entries.
///
/// - `forward[k] = ψ^br(k)` (`k = 1..n`, index 0 unused): the Cooley–Tukey twiddles of
///   [`NttView::forward`] in normal form.
/// - `inverse[h + j] = ψ^(−2·j·n/(2h))` for every stage distance `h = 1, 2, .., n/2` and
///   `j < h` (index 0 unused): the inverse runs as a decimation-in-time cyclic transform on
///   the bit-reversed evaluations, one contiguous run of twiddles per stage.
/// - `twist[i] = n^-1·ψ^-i`: the inverse's last pass, which undoes the negacyclic twist and
///   scales by `n^-1` in one product.
#[derive(Clone, Copy, Debug)]
pub struct ShoupView<'a> {
    /// `ψ^br(k)`.
    pub forward: &'a [u32],
    /// Companions of `forward`.
    pub forward_shoup: &'a [u32],
    /// The inverse's per-stage twiddles.
    pub inverse: &'a [u32],
    /// Companions of `inverse`.
    pub inverse_shoup: &'a [u32],
    /// `n^-1·ψ^-i`.
    pub twist: &'a [u32],
    /// Companions of `twist`.
    pub twist_shoup: &'a [u32],
}

impl ShoupView<'_> {
    /// Whether every array holds `n` entries (the x86-64 kernels read them unchecked).
    pub fn has_degree(&self, n: usize) -> bool {
        [
            self.forward,
            self.forward_shoup,
            self.inverse,
            self.inverse_shoup,
            self.twist,
            self.twist_shoup,
        ]
        .iter()
        .all(|t| t.len() == n)
    }
}

impl NttView<'_> {
    /// The ring degree `n`.
    #[inline(always)]
    pub const fn degree(&self) -> usize {
        1 << self.log_n
    }

    /// Checks that `len` is the ring degree.
    #[inline]
    pub const fn check_len(&self, len: usize) -> Result<(), RingError> {
        RingError::check_len(self.degree(), len)
    }
}

/// An NTT implementation. Backends differ in speed, never in results: each one is tested
/// bit for bit against [`crate::Portable`].
///
/// A backend is a value: [`crate::Portable`] and `Mve` (Helium) are plain unit types;
/// the x86-64 ones (`Avx2`, `Avx512`, `Auto`) are tokens obtained from CPU feature detection,
/// so holding one proves that the CPU runs its instructions. Detect once, keep the token, pass
/// it (or a copy: it is `Copy`) to every call. Every backend implements every operation; where
/// one has no faster kernel it says so in its implementation and delegates to `Portable`.
pub trait NttBackend: Copy + Send + Sync + 'static {
    /// A short name for reports and benchmarks (`"portable"`, `"avx2"`, `"avx512"`,
    /// `"mve"`; the x86-64 `Auto` reports the backend it chose).
    fn name(&self) -> &'static str;

    /// In place: coefficients in natural order, each `< q`, to evaluations (see the module
    /// documentation for the map), each `< q`.
    fn forward(&self, table: &NttView<'_>, a: &mut [u32]) -> Result<(), RingError>;

    /// In place: evaluations, each `< q`, back to coefficients in natural order, each `< q`.
    fn inverse(&self, table: &NttView<'_>, a: &mut [u32]) -> Result<(), RingError>;

    /// `out[i] = a[i]·b[i] mod q` (evaluation-domain product); all inputs `< q`.
    fn pointwise_mul(
        &self,
        modulus: &Modulus,
        a: &[u32],
        b: &[u32],
        out: &mut [u32],
    ) -> Result<(), RingError>;

    /// `acc[i] = acc[i] + a[i]·b[i] mod q`; all inputs `< q`.
    fn pointwise_mul_add(
        &self,
        modulus: &Modulus,
        a: &[u32],
        b: &[u32],
        acc: &mut [u32],
    ) -> Result<(), RingError>;

    /// `a[i] = a[i]·b[i] mod q`, in place (evaluation-domain product); all inputs `< q`.
    fn pointwise_mul_assign(
        &self,
        modulus: &Modulus,
        a: &mut [u32],
        b: &[u32],
    ) -> Result<(), RingError>;
}

/// NTT tables for one prime and one degree, generic over storage: `[u32; N]` arrays built
/// at compile time for devices, or `Vec<u32>` (feature `alloc`) for servers.
///
/// ```
/// use zeppelin_ring::{default_backend, NttBackend, NttTable};
/// // Built at compile time, lives in flash.
/// static TABLE: NttTable<[u32; 8]> = match NttTable::new_array(17) {
///     Ok(t) => t,
///     Err(_) => panic!("17 is NTT-friendly for n = 8"),
/// };
/// let mut a = [1, 2, 3, 4, 5, 6, 7, 8];
/// let ntt = default_backend(); // detected once, kept by the caller
/// ntt.forward(&TABLE.view(), &mut a).unwrap();
/// ntt.inverse(&TABLE.view(), &mut a).unwrap();
/// assert_eq!(a, [1, 2, 3, 4, 5, 6, 7, 8]);
/// ```
#[derive(Clone, Debug)]
pub struct NttTable<S> {
    modulus: Modulus,
    log_n: u32,
    forward: S,
    inverse: S,
    n_inv_mont: u32,
    psi: u32,
    /// The Shoup twiddles of the x86-64 kernels (see [`ShoupView`]), in its field order.
    #[cfg(target_arch = "x86_64")]
    shoup: [S; 6],
    /// The Helium radix-4 kernels' twiddles, when a device preset attached them.
    packed: Option<PackedView<'static>>,
}

impl<S: AsRef<[u32]>> NttTable<S> {
    /// The borrowed view every backend takes.
    #[inline(always)]
    pub fn view(&self) -> NttView<'_> {
        NttView {
            modulus: self.modulus,
            log_n: self.log_n,
            forward: self.forward.as_ref(),
            inverse: self.inverse.as_ref(),
            n_inv_mont: self.n_inv_mont,
            psi: self.psi,
            #[cfg(target_arch = "x86_64")]
            shoup: Some(ShoupView {
                forward: self.shoup[0].as_ref(),
                forward_shoup: self.shoup[1].as_ref(),
                inverse: self.shoup[2].as_ref(),
                inverse_shoup: self.shoup[3].as_ref(),
                twist: self.shoup[4].as_ref(),
                twist_shoup: self.shoup[5].as_ref(),
            }),
            #[cfg(not(target_arch = "x86_64"))]
            shoup: None,
            packed: self.packed,
        }
    }

    /// The table with the Helium radix-4 kernels' twiddles attached (a device preset's
    /// `static` tables do this at compile time; see `mve::PackedTwiddles`). The caller
    /// attaches twiddles built for this table's modulus; the Helium backend checks it again
    /// and otherwise ignores them.
    pub const fn with_packed(mut self, packed: PackedView<'static>) -> Self {
        self.set_packed(packed);
        self
    }

    /// In place, as [`NttTable::with_packed`].
    pub const fn set_packed(&mut self, packed: PackedView<'static>) {
        self.packed = Some(packed);
    }

    /// The modulus.
    pub const fn modulus(&self) -> &Modulus {
        &self.modulus
    }

    /// The ring degree `n`.
    pub const fn degree(&self) -> usize {
        1 << self.log_n
    }

    /// The smallest primitive `2n`-th root of unity the table is built on.
    pub const fn psi(&self) -> u32 {
        self.psi
    }
}

impl<const N: usize> NttTable<[u32; N]> {
    /// Builds the table for prime `q` and degree `N` in a `const` context.
    pub const fn new_array(q: u32) -> Result<Self, RingError> {
        let (modulus, log_n, psi) = match check_params(q, N) {
            Ok(p) => p,
            Err(e) => return Err(e),
        };
        let mut forward = [0u32; N];
        let mut inverse = [0u32; N];
        fill_twiddles(&modulus, log_n, psi, &mut forward, &mut inverse);
        let n_inv_mont = n_inv_mont(&modulus, N);
        #[cfg(target_arch = "x86_64")]
        let shoup = {
            let mut shoup = [[0u32; N]; 6];
            let [fw, fws, iw, iws, tw, tws] = &mut shoup;
            fill_shoup(
                &modulus,
                log_n,
                &forward,
                &inverse,
                n_inv_mont,
                [fw, fws, iw, iws, tw, tws],
            );
            shoup
        };
        Ok(Self {
            modulus,
            log_n,
            forward,
            inverse,
            n_inv_mont,
            psi,
            #[cfg(target_arch = "x86_64")]
            shoup,
            packed: None,
        })
    }
}

#[cfg(feature = "alloc")]
impl NttTable<alloc::vec::Vec<u32>> {
    /// Builds the table for prime `q` and a degree chosen at run time.
    pub fn new_vec(q: u32, n: usize) -> Result<Self, RingError> {
        let (modulus, log_n, psi) = check_params(q, n)?;
        let mut forward = alloc::vec![0u32; n];
        let mut inverse = alloc::vec![0u32; n];
        fill_twiddles(&modulus, log_n, psi, &mut forward, &mut inverse);
        let n_inv_mont = n_inv_mont(&modulus, n);
        #[cfg(target_arch = "x86_64")]
        let shoup = {
            let mut shoup: [alloc::vec::Vec<u32>; 6] =
                core::array::from_fn(|_| alloc::vec![0u32; n]);
            let [fw, fws, iw, iws, tw, tws] = &mut shoup;
            fill_shoup(
                &modulus,
                log_n,
                &forward,
                &inverse,
                n_inv_mont,
                [fw, fws, iw, iws, tw, tws],
            );
            shoup
        };
        Ok(Self {
            modulus,
            log_n,
            forward,
            inverse,
            n_inv_mont,
            psi,
            #[cfg(target_arch = "x86_64")]
            shoup,
            packed: None,
        })
    }
}

const fn check_params(q: u32, n: usize) -> Result<(Modulus, u32, u32), RingError> {
    if n < 2 || n > MAX_DEGREE || !n.is_power_of_two() {
        return Err(RingError::DegreeNotSupported { degree: n });
    }
    let modulus = match Modulus::new(q) {
        Ok(m) => m,
        Err(e) => return Err(e),
    };
    if !(q as u64 - 1).is_multiple_of(2 * n as u64) {
        return Err(RingError::NotNttFriendly {
            modulus: q,
            degree: n,
        });
    }
    let psi = smallest_primitive_root(&modulus, n);
    Ok((modulus, n.trailing_zeros(), psi))
}

const fn n_inv_mont(modulus: &Modulus, n: usize) -> u32 {
    // n divides q - 1, so n is invertible; q - (q-1)/n is its inverse.
    let q = modulus.value();
    modulus.to_mont(q - (q - 1) / n as u32)
}

/// The smallest primitive `2n`-th root of unity mod `q`, for `q ≡ 1 mod 2n` prime.
pub const fn smallest_primitive_root(modulus: &Modulus, n: usize) -> u32 {
    let q = modulus.value();
    let two_n = 2 * n as u64;
    // Any element x with x^n = -1 after raising to (q-1)/2n has order exactly 2n.
    let mut g = 2;
    let mut root = 0;
    while g < q {
        let candidate = modulus.pow(g, (q as u64 - 1) / two_n);
        if modulus.pow(candidate, n as u64) == q - 1 {
            root = candidate;
            break;
        }
        g += 1;
    }
    // The primitive 2n-th roots are exactly the odd powers of one of them.
    let square = modulus.mul(root, root);
    let mut smallest = root;
    let mut power = root;
    let mut k = 1;
    while k < n {
        power = modulus.mul(power, square);
        if power < smallest {
            smallest = power;
        }
        k += 1;
    }
    smallest
}

const fn fill_twiddles(
    modulus: &Modulus,
    log_n: u32,
    psi: u32,
    forward: &mut [u32],
    inverse: &mut [u32],
) {
    let n = 1usize << log_n;
    let psi_inv = match modulus.inv(psi) {
        Some(v) => v,
        None => 0, // unreachable: psi is a unit
    };
    let mut power = 1u32;
    let mut power_inv = 1u32;
    let mut i = 0;
    while i < n {
        let slot = bit_reverse(i, log_n);
        forward[slot] = modulus.to_mont(power);
        inverse[slot] = modulus.to_mont(power_inv);
        power = modulus.mul(power, psi);
        power_inv = modulus.mul(power_inv, psi_inv);
        i += 1;
    }
}

/// A twiddle `w` and its Shoup companion from its Montgomery form `w_m = w·2^32 mod q`
/// (`0 < w_m < q`), without a division (the const evaluator builds these tables): since
/// `w·2^32 = w'·q + w_m`, `w' ≡ −w_m·q^-1 (mod 2^32)`, and `hi(w'·q) = w − 1`.
#[cfg(target_arch = "x86_64")]
const fn shoup_pair(modulus: &Modulus, w_mont: u32) -> (u32, u32) {
    let companion = w_mont.wrapping_mul(modulus.q_inv_neg());
    let w = ((companion as u64 * modulus.value() as u64) >> 32) as u32 + 1;
    (w, companion)
}

/// The arrays of [`ShoupView`], in its field order, from the Montgomery tables.
#[cfg(target_arch = "x86_64")]
const fn fill_shoup(
    modulus: &Modulus,
    log_n: u32,
    forward_mont: &[u32],
    inverse_mont: &[u32],
    n_inv_mont: u32,
    out: [&mut [u32]; 6],
) {
    let [fw, fws, iw, iws, tw, tws] = out;
    let n = 1usize << log_n;
    let mut k = 1;
    while k < n {
        (fw[k], fws[k]) = shoup_pair(modulus, forward_mont[k]);
        k += 1;
    }
    // The last stage (h = n/2) holds ψ^-2j for j < n/2 (inverse_mont[br(e)] = ψ^-e in
    // Montgomery form); stage h takes every (n/2h)-th of them.
    let top = n / 2;
    let mut j = 0;
    while j < top {
        (iw[top + j], iws[top + j]) = shoup_pair(modulus, inverse_mont[bit_reverse(2 * j, log_n)]);
        j += 1;
    }
    let mut h = 1;
    while h < top {
        let mut j = 0;
        while j < h {
            iw[h + j] = iw[top + j * (top / h)];
            iws[h + j] = iws[top + j * (top / h)];
            j += 1;
        }
        h *= 2;
    }
    let mut i = 0;
    while i < n {
        let w = modulus.mont_mul(inverse_mont[bit_reverse(i, log_n)], n_inv_mont);
        (tw[i], tws[i]) = shoup_pair(modulus, w);
        i += 1;
    }
}

/// The `bits`-bit reversal of `i`.
#[inline(always)]
pub const fn bit_reverse(i: usize, bits: u32) -> usize {
    if bits == 0 {
        0
    } else {
        i.reverse_bits() >> (usize::BITS - bits)
    }
}
