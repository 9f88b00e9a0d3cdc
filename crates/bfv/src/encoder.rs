//! Batch encoding: `n = 4096` slots mod `t` ↔ a plaintext polynomial in `R_t`, and
//! fixed-point helpers for real-valued readings.
//!
//! # Slot order (the same as SEAL's `BatchEncoder`)
//!
//! The slots form a 2 × 2048 matrix, row-major: slot `i < 2048` (row 0, column `i`) holds
//! `m(ψ^(3^i mod 2n))` and slot `2048 + i` (row 1, column `i`) holds `m(ψ^(−3^i mod 2n))`,
//! where `ψ` is the smallest primitive `2n`-th root of unity mod `t`. So the Galois
//! automorphism `x ↦ x^3` rotates both rows left by one column, and `x ↦ x^(2n−1)` swaps the
//! rows, exactly as SEAL's `rotate_rows` / `rotate_columns` do on the server.
//!
//! Encoding writes each slot to the NTT position that evaluates at its root and runs the
//! inverse NTT mod `t` (the arithmetic core's table for `t = 65537`); decoding runs the
//! forward NTT and reads the positions back.

use crate::error::Error;
use crate::params::{LOG_N, N, T};
use zeppelin_ring::ntt::bit_reverse;
use zeppelin_ring::{ct, default_backend, NttBackend, NttTable};

/// The NTT table mod `t`, built at compile time (flash on a device).
#[allow(clippy::panic)] // const evaluation only: a panic here is a build error
static T_TABLE: NttTable<[u32; N]> = match NttTable::new_array(T) {
    Ok(t) => t,
    Err(_) => panic!("t = 65537 is NTT-friendly for n = 4096"),
};

/// `SLOT_TO_NTT[i]`: the NTT position (bit-reversed evaluation index) of slot `i`.
pub static SLOT_TO_NTT: [u16; N] = slot_to_ntt_map();
/// The inverse permutation: `NTT_TO_SLOT[SLOT_TO_NTT[i]] = i`.
pub static NTT_TO_SLOT: [u16; N] = invert(&slot_to_ntt_map());

const fn invert(map: &[u16; N]) -> [u16; N] {
    let mut inv = [0u16; N];
    let mut i = 0;
    while i < N {
        inv[map[i] as usize] = i as u16;
        i += 1;
    }
    inv
}

const fn slot_to_ntt_map() -> [u16; N] {
    let mut map = [0u16; N];
    let row = N / 2;
    let two_n = 2 * N;
    let mut pos = 1usize; // 3^i mod 2n
    let mut i = 0;
    while i < row {
        // The NTT position j holds the evaluation at ψ^(2·br(j)+1); the root ψ^pos has
        // exponent index (pos − 1)/2 in natural order.
        map[i] = bit_reverse((pos - 1) >> 1, LOG_N) as u16;
        map[row + i] = bit_reverse((two_n - pos - 1) >> 1, LOG_N) as u16;
        pos = (pos * 3) & (two_n - 1);
        i += 1;
    }
    map
}

/// The NTT table mod `t` (for tests and tools).
pub fn t_table() -> &'static NttTable<[u32; N]> {
    &T_TABLE
}

/// Checks that every value is below `t`, in constant time until the verdict (the values may
/// be secret sensor data): one branch on the accumulated mask.
pub(crate) fn check_below_t(values: &[u32; N]) -> Result<(), Error> {
    let mut bad = 0u32;
    for &v in values.iter() {
        bad |= !ct::mask_lt(v, T);
    }
    if bad == 0 {
        return Ok(());
    }
    // Error path only: find the first offending value to report it.
    match values.iter().position(|&v| v >= T) {
        Some(index) => Err(Error::PlaintextOutOfRange {
            index,
            value: values[index],
        }),
        None => Ok(()),
    }
}

/// Encodes `slots` (each `< t`) into the plaintext polynomial `plain` (coefficients `< t`).
/// Nothing is written if a slot is out of range.
///
/// ```
/// use zeppelin::encoder::{decode, encode};
/// let mut slots = [0u32; 4096];
/// slots[0] = 7;
/// slots[2048] = 65536;
/// let mut plain = [0u32; 4096];
/// encode(&slots, &mut plain).unwrap();
/// let mut back = [0u32; 4096];
/// decode(&plain, &mut back).unwrap();
/// assert_eq!(back, slots);
/// ```
pub fn encode(slots: &[u32; N], plain: &mut [u32; N]) -> Result<(), Error> {
    check_below_t(slots)?;
    for (&v, &pos) in slots.iter().zip(SLOT_TO_NTT.iter()) {
        plain[pos as usize] = v;
    }
    default_backend().inverse(&T_TABLE.view(), plain)?;
    Ok(())
}

/// Like [`encode`], in place: `values` holds the slots on entry and the plaintext on exit
/// (saves a 16 KB buffer on a device). Unchanged on error.
pub fn encode_in_place(values: &mut [u32; N]) -> Result<(), Error> {
    check_below_t(values)?;
    permute_in_place(values, &NTT_TO_SLOT);
    default_backend().inverse(&T_TABLE.view(), values)?;
    Ok(())
}

/// Decodes a plaintext polynomial (coefficients `< t`) into its 4096 slots.
pub fn decode(plain: &[u32; N], slots: &mut [u32; N]) -> Result<(), Error> {
    check_below_t(plain)?;
    slots.copy_from_slice(plain);
    default_backend().forward(&T_TABLE.view(), slots)?;
    permute_in_place(slots, &SLOT_TO_NTT);
    Ok(())
}

/// Like [`decode`], in place. Unchanged on error.
pub fn decode_in_place(values: &mut [u32; N]) -> Result<(), Error> {
    check_below_t(values)?;
    default_backend().forward(&T_TABLE.view(), values)?;
    permute_in_place(values, &SLOT_TO_NTT);
    Ok(())
}

/// `values[i] ← values[map[i]]` in place, following the permutation's cycles with a bitmap
/// of visited positions (512 bytes of stack). Addresses depend only on the fixed (public)
/// permutation, never on the values.
fn permute_in_place(values: &mut [u32; N], map: &[u16; N]) {
    let mut visited = [0u64; N / 64];
    for start in 0..N {
        if visited[start / 64] >> (start % 64) & 1 == 1 {
            continue;
        }
        let first = values[start];
        let mut i = start;
        loop {
            visited[i / 64] |= 1 << (i % 64);
            let src = map[i] as usize;
            if src == start {
                values[i] = first;
                break;
            }
            values[i] = values[src];
            i = src;
        }
    }
}

/// Fixed-point quantisation of real readings into slots.
///
/// A value `x` becomes the integer `v = round(x·2^f)` (ties away from zero), stored in the
/// slot as `v mod t`; decoding takes the centred lift of the slot, in `[−32768, 32768]`, and
/// divides by `2^f`.
///
/// **Error bound.** For `|x·2^f| <= 32768` (the range [`FixedPoint::quantize`] accepts),
/// `|dequantize(quantize(x)) − x| <= 2^-(f+1)`. After the server adds `k` quantised values
/// (or multiplies by small integers with absolute sum `k`), the decoded result is within
/// `k·2^-(f+1)` of the exact real result, provided the exact integer result stays within
/// `[−32768, 32768]`; beyond that it wraps mod `t`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FixedPoint {
    frac_bits: u32,
}

/// Largest centred slot magnitude: `(t − 1)/2`.
const HALF_T: u32 = (T - 1) / 2;

impl FixedPoint {
    /// A scale of `2^frac_bits`; `frac_bits <= 52`.
    pub const fn new(frac_bits: u32) -> Result<Self, Error> {
        if frac_bits > 52 {
            return Err(Error::FixedPointScale { frac_bits });
        }
        Ok(Self { frac_bits })
    }

    /// The number of fractional bits `f`.
    pub const fn frac_bits(&self) -> u32 {
        self.frac_bits
    }

    /// `2^f`, exactly.
    fn scale(&self) -> f64 {
        f64::from_bits((1023 + self.frac_bits as u64) << 52)
    }

    /// The largest `|x|` accepted: `32768 / 2^f`.
    pub fn max_abs(&self) -> f64 {
        HALF_T as f64 / self.scale()
    }

    /// One real value to one slot value (see the type's documentation for the bound).
    pub fn quantize(&self, x: f64) -> Result<u32, Error> {
        self.quantize_at(x, 0)
    }

    fn quantize_at(&self, x: f64, index: usize) -> Result<u32, Error> {
        // The reading may be secret: the sign and the rounding are masks; only the range
        // check (is the input valid at all?) branches.
        let scaled = (x * self.scale()).to_bits(); // exact: a power-of-two scale
        let negative = 0u32.wrapping_sub((scaled >> 63) as u32);
        let magnitude = f64::from_bits(scaled & !(1 << 63));
        // Rejects NaN as well (every comparison with NaN is false).
        if !matches!(
            magnitude.partial_cmp(&(HALF_T as f64 + 0.5)),
            Some(core::cmp::Ordering::Less | core::cmp::Ordering::Equal)
        ) {
            return Err(Error::FixedPointOutOfRange { index });
        }
        // Round half away from zero, exactly: truncation and fraction are exact below 2^52.
        let whole = magnitude as u32;
        let frac = magnitude - whole as f64;
        let rounded = whole + u32::from(frac >= 0.5);
        if rounded > HALF_T {
            return Err(Error::FixedPointOutOfRange { index });
        }
        Ok(ct::select(
            negative,
            ct::reduce_once(T - rounded, T),
            rounded,
        ))
    }

    /// One slot value (`< t`) back to a real value (the centred lift, by a mask).
    pub fn dequantize(&self, slot: u32) -> f64 {
        let upper = ct::mask_lt(HALF_T, slot);
        let centred = slot as i32 - (T & upper) as i32;
        centred as f64 / self.scale()
    }

    /// Quantises `values` into the first `values.len()` slots; the other slots are set to 0.
    /// Nothing is written if any value is out of range.
    pub fn quantize_slots(&self, values: &[f64], slots: &mut [u32; N]) -> Result<(), Error> {
        if values.len() > N {
            return Err(Error::LengthMismatch {
                expected: N,
                found: values.len(),
            });
        }
        for (i, &x) in values.iter().enumerate() {
            self.quantize_at(x, i)?;
        }
        slots.fill(0);
        for (i, (&x, s)) in values.iter().zip(slots.iter_mut()).enumerate() {
            *s = self.quantize_at(x, i)?;
        }
        Ok(())
    }

    /// Dequantises the first `out.len()` slots.
    pub fn dequantize_slots(&self, slots: &[u32; N], out: &mut [f64]) {
        for (o, &s) in out.iter_mut().zip(slots.iter()) {
            *o = self.dequantize(s);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slot_map_is_a_permutation() {
        let mut seen = [false; N];
        for &p in SLOT_TO_NTT.iter() {
            assert!(!seen[p as usize]);
            seen[p as usize] = true;
        }
    }

    #[test]
    fn permute_in_place_matches_gather() {
        let mut v = [0u32; N];
        for (i, x) in v.iter_mut().enumerate() {
            *x = i as u32 * 7 + 1;
        }
        let orig = v;
        permute_in_place(&mut v, &SLOT_TO_NTT);
        for i in 0..N {
            assert_eq!(v[i], orig[SLOT_TO_NTT[i] as usize]);
            assert_eq!(NTT_TO_SLOT[SLOT_TO_NTT[i] as usize] as usize, i);
        }
    }

    #[test]
    fn fixed_point_bounds() {
        let fp = FixedPoint::new(8).unwrap();
        for &x in &[
            0.0,
            1.0,
            -1.0,
            2.5,
            -127.99,
            127.998,
            0.5 / 256.0,
            -0.5 / 256.0,
        ] {
            let back = fp.dequantize(fp.quantize(x).unwrap());
            assert!((back - x).abs() <= 0.5 / 256.0, "{x} -> {back}");
        }
        assert_eq!(fp.quantize(-1.0).unwrap(), T - 256);
        assert!(fp.quantize(128.01).is_err());
        assert!(fp.quantize(f64::NAN).is_err());
        assert!(fp.quantize(f64::INFINITY).is_err());
        assert!(FixedPoint::new(53).is_err());
    }
}
