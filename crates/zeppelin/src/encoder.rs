//! Batch encoding: `n` slots mod `t` ↔ a [`Plaintext`] polynomial in `R_t`, and fixed-point
//! helpers for real-valued readings.
//!
//! # Slot order (the same as SEAL's `BatchEncoder`)
//!
//! The slots form a 2 × `n/2` matrix, row-major: slot `i < n/2` (row 0, column `i`) holds
//! `m(ψ^(3^i mod 2n))` and slot `n/2 + i` (row 1, column `i`) holds `m(ψ^(−3^i mod 2n))`,
//! where `ψ` is the smallest primitive `2n`-th root of unity mod `t`. So the Galois
//! automorphism `x ↦ x^3` rotates both rows left by one column, and `x ↦ x^(2n−1)` swaps the
//! rows, exactly as SEAL's `rotate_rows` / `rotate_columns` do on the server.
//!
//! Encoding writes each slot to the NTT position that evaluates at its root and runs the
//! inverse NTT mod `t` (the preset's table for `t`); decoding runs the forward NTT and reads
//! the positions back.

use core::marker::PhantomData;

use crate::error::Error;
use crate::params::{CycleSegment, Params, MAX_CYCLE_SEGMENTS};
use crate::plaintext::{check_below_t, Plaintext};
use zeppelin_ring::{ct, default_backend, NttBackend};

/// Encodes `slots` (each `< t`; at most `n` of them, the remaining slots are 0) into the
/// plaintext `plain`. Nothing is written if a slot is out of range.
///
/// ```
/// use zeppelin::{encoder, Plaintext, Seal4096};
/// let mut slots = vec![0u32; 4096];
/// slots[0] = 7;
/// slots[2048] = 65536;
/// let mut plain = Box::new(Plaintext::<Seal4096>::zeroed());
/// encoder::encode(&slots, &mut plain)?;
/// let mut back = vec![0u32; 4096];
/// encoder::decode(&plain, &mut back)?;
/// assert_eq!(back, slots);
/// # Ok::<(), zeppelin::Error>(())
/// ```
pub fn encode<P: Params>(slots: &[u32], plain: &mut Plaintext<P>) -> Result<(), Error> {
    if slots.len() > P::N {
        return Err(Error::LengthMismatch {
            expected: P::N,
            found: slots.len(),
        });
    }
    check_below_t(slots, P::T)?;
    let coeffs = plain.coeffs_mut();
    coeffs.fill(0);
    for (&v, &pos) in slots.iter().zip(P::slot_to_ntt()) {
        coeffs[pos as usize] = v;
    }
    default_backend().inverse(&P::t_table().view(), coeffs)?;
    Ok(())
}

/// Encodes the `n` slots `slot(0), …, slot(n − 1)` (each `< t`) into `plain` without a slot
/// buffer: a device can read its sensors straight into the plaintext (and save the `4·n`
/// bytes of an array of slots). On a slot `>= t`, `plain` is left zeroed and the error names
/// the first such slot.
///
/// ```
/// use zeppelin::{encoder, Plaintext, Seal4096};
/// let mut plain = Box::new(Plaintext::<Seal4096>::zeroed());
/// encoder::encode_with(&mut plain, |i| (i as u32 * 7) % 65537)?;
/// let mut back = vec![0u32; 4096];
/// encoder::decode_with(&mut plain, |i, v| back[i] = v)?;
/// assert!(back.iter().enumerate().all(|(i, &v)| v == (i as u32 * 7) % 65537));
/// # Ok::<(), zeppelin::Error>(())
/// ```
pub fn encode_with<P: Params>(
    plain: &mut Plaintext<P>,
    mut slot: impl FnMut(usize) -> u32,
) -> Result<(), Error> {
    let coeffs = plain.coeffs_mut();
    let mut bad = 0u32;
    for (i, &pos) in P::slot_to_ntt().iter().enumerate() {
        let v = slot(i);
        bad |= !ct::mask_lt(v, P::T);
        if let Some(c) = coeffs.get_mut(pos as usize) {
            *c = v;
        }
    }
    if bad != 0 {
        // Error path only: name the first offending slot, leave nothing behind.
        let index = P::slot_to_ntt()
            .iter()
            .position(|&pos| coeffs.get(pos as usize).is_some_and(|&v| v >= P::T))
            .unwrap_or(0);
        coeffs.fill(0);
        return Err(Error::PlaintextOutOfRange { index, t: P::T });
    }
    default_backend().inverse(&P::t_table().view(), coeffs)?;
    Ok(())
}

/// Decodes `plain` slot by slot into `slot(i, value)`, `i = 0, …, n − 1`, without a slot
/// buffer: the transform runs in the plaintext's own storage and the slots are read from it
/// in slot order; `plain` is zeroed afterwards (it held the decrypted message).
pub fn decode_with<P: Params>(
    plain: &mut Plaintext<P>,
    mut slot: impl FnMut(usize, u32),
) -> Result<(), Error> {
    let evals = plain.coeffs_mut();
    default_backend().forward(&P::t_table().view(), evals)?;
    for (i, &pos) in P::slot_to_ntt().iter().enumerate() {
        if let Some(&v) = evals.get(pos as usize) {
            slot(i, v);
        }
    }
    evals.fill(0);
    Ok(())
}

/// Decodes a plaintext into its `n` slots (`slots.len()` must be `n`).
pub fn decode<P: Params>(plain: &Plaintext<P>, slots: &mut [u32]) -> Result<(), Error> {
    if slots.len() != P::N {
        return Err(Error::LengthMismatch {
            expected: P::N,
            found: slots.len(),
        });
    }
    slots.copy_from_slice(plain.coeffs());
    default_backend().forward(&P::t_table().view(), slots)?;
    permute_in_place(slots, P::slot_to_ntt(), P::slot_cycle_segments());
    Ok(())
}

/// Segments walked side by side by [`permute_in_place`].
const SIDE_BY_SIDE: usize = 4;

/// `values[i] ← values[map[i]]` in place, along the cycle segments computed at compile time
/// (no visited set on the stack). Each step's address comes from the last step's `map` load,
/// so one walk is a chain of dependent loads; four segments side by side keep four chains in
/// flight. Addresses depend only on the fixed (public) permutation, never on the values.
/// `values` must hold the permutation's `n` positions (`decode` checks it).
fn permute_in_place(values: &mut [u32], map: &[u16], segments: &[CycleSegment]) {
    // Every segment's start before any is written: the last step of each takes its
    // successor's.
    let mut saved = [0u32; MAX_CYCLE_SEGMENTS];
    for (s, seg) in saved.iter_mut().zip(segments) {
        *s = values[seg.start as usize];
    }
    let step = |values: &mut [u32], i: usize| {
        let src = map[i] as usize;
        values[i] = values[src];
        src
    };
    // The rest of `seg` from `i`, its position number `done` (1-based), then its last.
    let finish = |values: &mut [u32], mut i: usize, done: u16, seg: &CycleSegment| {
        for _ in done..seg.len {
            i = step(values, i);
        }
        values[i] = saved[seg.next as usize];
    };
    let mut groups = segments.chunks_exact(SIDE_BY_SIDE);
    for group in &mut groups {
        let mut at = [0usize; SIDE_BY_SIDE];
        for (a, seg) in at.iter_mut().zip(group) {
            *a = seg.start as usize;
        }
        let common = group.iter().map(|seg| seg.len).min().unwrap_or(0);
        for _ in 1..common {
            for a in at.iter_mut() {
                *a = step(values, *a);
            }
        }
        for (&a, seg) in at.iter().zip(group) {
            finish(values, a, common.max(1), seg);
        }
    }
    for seg in groups.remainder() {
        finish(values, seg.start as usize, 1, seg);
    }
}

/// Fixed-point quantisation of real readings into slots.
///
/// A value `x` becomes the integer `v = round(x·2^f)` (ties away from zero), stored in the
/// slot as `v mod t`; decoding takes the centred lift of the slot, in `[−(t−1)/2, (t−1)/2]`, and
/// divides by `2^f`.
///
/// **Error bound.** For `|x·2^f| <= (t−1)/2` (the range [`FixedPoint::quantize`] accepts),
/// `|dequantize(quantize(x)) − x| <= 2^-(f+1)`. After the server adds `k` quantised values
/// (or multiplies by small integers with absolute sum `k`), the decoded result is within
/// `k·2^-(f+1)` of the exact real result, provided the exact integer result stays within
/// `[−(t−1)/2, (t−1)/2]`; beyond that it wraps mod `t`.
#[derive(Debug, PartialEq, Eq)]
pub struct FixedPoint<P: Params> {
    frac_bits: u32,
    _preset: PhantomData<P>,
}

impl<P: Params> Clone for FixedPoint<P> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<P: Params> Copy for FixedPoint<P> {}

impl<P: Params> FixedPoint<P> {
    /// A scale of `2^frac_bits` for the slots of preset `P`; `frac_bits <= 52`.
    pub const fn new(frac_bits: u32) -> Result<Self, Error> {
        if frac_bits > 52 {
            return Err(Error::FixedPointScale { frac_bits });
        }
        Ok(Self {
            frac_bits,
            _preset: PhantomData,
        })
    }

    /// The number of fractional bits `f`.
    pub const fn frac_bits(&self) -> u32 {
        self.frac_bits
    }

    /// `2^f`, exactly.
    fn scale(&self) -> f64 {
        f64::from_bits((1023 + self.frac_bits as u64) << 52)
    }

    /// The largest `|x|` accepted: `((t−1)/2) / 2^f`.
    pub fn max_abs(&self) -> f64 {
        P::plain().half as f64 / self.scale()
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
            magnitude.partial_cmp(&(P::plain().half as f64 + 0.5)),
            Some(core::cmp::Ordering::Less | core::cmp::Ordering::Equal)
        ) {
            return Err(Error::FixedPointOutOfRange { index });
        }
        // Round half away from zero, exactly: truncation and fraction are exact below 2^52.
        let whole = magnitude as u32;
        let frac = magnitude - whole as f64;
        let rounded = whole + u32::from(frac >= 0.5);
        if rounded > P::plain().half {
            return Err(Error::FixedPointOutOfRange { index });
        }
        Ok(ct::select(
            negative,
            ct::reduce_once(P::T - rounded, P::T),
            rounded,
        ))
    }

    /// One slot value (`< t`) back to a real value (the centred lift, by a mask).
    pub fn dequantize(&self, slot: u32) -> f64 {
        let upper = ct::mask_lt(P::plain().half, slot);
        let centred = slot as i32 - (P::T & upper) as i32;
        centred as f64 / self.scale()
    }

    /// Quantises `values` into the first `values.len()` slots; the other slots are set to 0.
    /// Nothing is written if any value is out of range.
    pub fn quantize_slots(&self, values: &[f64], slots: &mut [u32]) -> Result<(), Error> {
        if values.len() > slots.len() {
            return Err(Error::LengthMismatch {
                expected: slots.len(),
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
    pub fn dequantize_slots(&self, slots: &[u32], out: &mut [f64]) {
        for (o, &s) in out.iter_mut().zip(slots.iter()) {
            *o = self.dequantize(s);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    extern crate alloc;
    use crate::params::{Seal4096, Seal8192, Zeppelin4096, CYCLE_SEGMENT_STEPS};
    use alloc::boxed::Box;
    use alloc::vec;
    use alloc::vec::Vec;

    fn check_map<P: Params>() {
        let mut seen = [false; 8192];
        for &p in P::slot_to_ntt() {
            assert!(!seen[p as usize]);
            seen[p as usize] = true;
        }
        assert_eq!(seen.iter().filter(|&&s| s).count(), P::N);
    }

    #[test]
    fn slot_maps_are_permutations() {
        check_map::<Seal4096>();
        check_map::<Seal8192>();
    }

    #[test]
    fn permute_in_place_matches_gather() {
        fn check<P: Params>() {
            let map = P::slot_to_ntt();
            let mut v: Vec<u32> = (0..P::N as u32).map(|i| i * 7 + 1).collect();
            let orig = v.clone();
            permute_in_place(&mut v, map, P::slot_cycle_segments());
            for i in 0..P::N {
                assert_eq!(v[i], orig[map[i] as usize]);
                assert_eq!(P::ntt_to_slot()[map[i] as usize] as usize, i);
            }
            // The segments: every position once, none longer than the bound, longest first,
            // each ending where its successor starts.
            let segments = P::slot_cycle_segments();
            let mut written = vec![false; P::N];
            for seg in segments {
                assert!(seg.len >= 1 && seg.len as usize <= CYCLE_SEGMENT_STEPS);
                let mut i = seg.start as usize;
                for _ in 0..seg.len {
                    assert!(!written[i]);
                    written[i] = true;
                    i = map[i] as usize;
                }
                assert_eq!(i, segments[seg.next as usize].start as usize);
            }
            assert!(written.iter().all(|&w| w));
            assert!(segments.windows(2).all(|w| w[0].len >= w[1].len));
        }
        check::<Seal4096>();
        check::<Zeppelin4096>();
        check::<Seal8192>();
        // 12 cycles at n = 4096 (the longest of 3,035 positions), 16 at n = 8192.
        assert_eq!(Seal4096::slot_cycle_segments().len(), 41);
        assert_eq!(Seal8192::slot_cycle_segments().len(), 75);
    }

    #[test]
    fn encode_with_and_decode_with_match_the_buffered_forms() {
        fn check<P: Params>() {
            let slots: Vec<u32> = (0..P::N as u32)
                .map(|i| i.wrapping_mul(2_654_435_761) % P::T)
                .collect();
            let mut a = Box::new(Plaintext::<P>::zeroed());
            let mut b = Box::new(Plaintext::<P>::zeroed());
            encode(&slots, &mut a).unwrap();
            encode_with(&mut b, |i| slots[i]).unwrap();
            assert_eq!(a.coeffs(), b.coeffs());
            let mut back = vec![0u32; P::N];
            decode_with(&mut b, |i, v| back[i] = v).unwrap();
            assert_eq!(back, slots);
            assert!(b.coeffs().iter().all(|&c| c == 0));
            // A slot >= t: an error naming it, and nothing left in the plaintext.
            let err = encode_with(&mut b, |i| if i == 17 { P::T } else { 1 }).unwrap_err();
            assert_eq!(err, Error::PlaintextOutOfRange { index: 17, t: P::T });
            assert!(b.coeffs().iter().all(|&c| c == 0));
        }
        check::<Seal4096>();
        check::<Zeppelin4096>();
        check::<Seal8192>();
    }

    #[test]
    fn fixed_point_bounds() {
        let fp = FixedPoint::<Seal4096>::new(8).unwrap();
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
        assert_eq!(fp.quantize(-1.0).unwrap(), 65537 - 256);
        assert!(fp.quantize(128.01).is_err());
        assert!(fp.quantize(f64::NAN).is_err());
        assert!(fp.quantize(f64::INFINITY).is_err());
        assert!(FixedPoint::<Seal4096>::new(53).is_err());
    }
}
