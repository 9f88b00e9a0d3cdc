//! The fleet's fixed point and the key owner's statistics.
//!
//! Each quantity's readings are sent as offsets from its public reference, quantised with
//! `f` fractional bits (`zeppelin::encoder::FixedPoint`). The server adds `K` of them and `K`
//! of their squares; both sums must stay within `±(t−1)/2` or they wrap mod `t`. [`frac_bits`]
//! picks the largest `f` for which the sum of squares of `K` readings at the edge of the
//! reporting range still fits.
//!
//! Error bounds, with `h = 2^−(f+1)` the largest rounding error `δ` of one reading:
//! - mean: the decrypted mean is the mean of the quantised readings, off by the mean of the
//!   `δ`s: at most `h`;
//! - variance (population, `1/K`): `var_q − var_x = 2·cov(x, δ) + var(δ)`, so by
//!   Cauchy–Schwarz `|var_q − var_x| ≤ 2·σ_x·h + h²`, and `σ_x ≤ σ_q + h` (the triangle
//!   inequality in the RMS norm) gives a bound the key owner computes from the decrypted
//!   `σ_q` alone: `2h(σ_q + h) + h²`.

pub use crate::demo_error::TooManyDevices;

/// The largest `f` tried (far beyond what `t = 65537` allows for two devices).
const MAX_FRAC_BITS: u32 = 24;

/// The largest quantised magnitude of a reading in `±range` at `f` fractional bits
/// (`FixedPoint` rounds half away from zero).
fn max_step(range: f64, frac_bits: u32) -> u64 {
    (range * f64::from(1u32 << frac_bits) + 0.5).floor() as u64
}

/// The largest number of devices whose sum of squares fits at `frac_bits`.
pub fn max_devices(range: f64, frac_bits: u32, half: u32) -> usize {
    let m = max_step(range, frac_bits).max(1);
    (u64::from(half) / (m * m)) as usize
}

/// The largest `f` such that `devices` readings in `±range` have a sum of squares (and so a
/// sum) within `±half`.
pub fn frac_bits(
    devices: usize,
    range: f64,
    half: u32,
    quantity: &'static str,
) -> Result<u32, TooManyDevices> {
    let fits = |f: u32| devices <= max_devices(range, f, half);
    if devices == 0 || !fits(0) {
        return Err(TooManyDevices {
            devices,
            quantity,
            half,
            max: max_devices(range, 0, half),
        });
    }
    Ok((0..=MAX_FRAC_BITS)
        .take_while(|&f| fits(f))
        .last()
        .unwrap_or(0))
}

/// `h = 2^−(f+1)`: the largest rounding error of one reading.
pub fn step_error(frac_bits: u32) -> f64 {
    0.5 / f64::from(1u32 << frac_bits)
}

/// A slot value as the integer it stands for (the centred lift mod `t`).
pub fn centred(slot: u32, t: u32) -> i64 {
    let half = (t - 1) / 2;
    if slot > half {
        i64::from(slot) - i64::from(t)
    } else {
        i64::from(slot)
    }
}

/// Mean and (population) variance of one slot, true and decrypted, with the bounds.
#[derive(Clone, Copy, Debug)]
pub struct SlotStats {
    /// Mean of the real readings.
    pub true_mean: f64,
    /// Variance of the real readings.
    pub true_var: f64,
    /// Mean from the decrypted sum.
    pub mean: f64,
    /// Variance from the decrypted sum and sum of squares.
    pub var: f64,
    /// Bound on `|mean − true_mean|`.
    pub mean_bound: f64,
    /// Bound on `|var − true_var|`.
    pub var_bound: f64,
}

impl SlotStats {
    /// The key owner's statistics of one slot from the decrypted `sum` and `sum_sq` (integers
    /// of the quantised offsets), next to the truth from the plaintext accumulators.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        reference: f64,
        devices: usize,
        frac_bits: u32,
        sum: i64,
        sum_sq: i64,
        true_sum: f64,
        true_sum_sq: f64,
    ) -> Self {
        let k = devices as f64;
        let scale = f64::from(1u32 << frac_bits);
        let mean_offset = sum as f64 / (k * scale);
        let var = sum_sq as f64 / (k * scale * scale) - mean_offset * mean_offset;
        let true_mean_offset = true_sum / k;
        let true_var = (true_sum_sq / k - true_mean_offset * true_mean_offset).max(0.0);
        let h = step_error(frac_bits);
        Self {
            true_mean: reference + true_mean_offset,
            true_var,
            mean: reference + mean_offset,
            var,
            mean_bound: h,
            var_bound: 2.0 * h * (var.max(0.0).sqrt() + h) + h * h,
        }
    }

    /// `|mean − true_mean|`.
    pub fn mean_error(&self) -> f64 {
        (self.mean - self.true_mean).abs()
    }

    /// `|var − true_var|`.
    pub fn var_error(&self) -> f64 {
        (self.var - self.true_var).abs()
    }

    /// Both errors within their bounds (with room for the plaintext truth's rounding in
    /// `f64`, far below any bound).
    pub fn within_bounds(&self) -> bool {
        const SLACK: f64 = 1e-9;
        self.mean_error() <= self.mean_bound + SLACK && self.var_error() <= self.var_bound + SLACK
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use zeppelin::encoder::FixedPoint;
    use zeppelin::{Params, Seal4096};

    const HALF: u32 = 32768;

    #[test]
    fn the_chosen_scale_fits_and_the_next_one_does_not() {
        for devices in [1usize, 2, 10, 100, 1000, 2048] {
            for range in [2.0, 4.0] {
                let Ok(f) = frac_bits(devices, range, HALF, "x") else {
                    assert!(devices as f64 * range * range > HALF as f64);
                    continue;
                };
                let fp = FixedPoint::<Seal4096>::new(f).unwrap();
                let q = |x: f64| centred(fp.quantize(x).unwrap(), Seal4096::T);
                let m = q(range).abs().max(q(-range).abs()) as u64;
                assert!(
                    devices as u64 * m * m <= HALF as u64,
                    "{devices} {range} {f}"
                );
                if f < MAX_FRAC_BITS {
                    let fp = FixedPoint::<Seal4096>::new(f + 1).unwrap();
                    let m = centred(fp.quantize(range).unwrap(), Seal4096::T) as u64;
                    assert!(
                        devices as u64 * m * m > HALF as u64,
                        "{devices} {range} {f}"
                    );
                }
            }
        }
        assert_eq!(frac_bits(100, 2.0, HALF, "t"), Ok(3));
        assert_eq!(frac_bits(100, 4.0, HALF, "h"), Ok(2));
        let too_many = frac_bits(2049, 4.0, HALF, "humidity").unwrap_err();
        assert_eq!(too_many.max, 2048);
        assert!(frac_bits(0, 4.0, HALF, "h").is_err());
    }

    /// The bounds hold for random fleets quantised by `FixedPoint`, and are not loose by
    /// orders of magnitude: a variance computed with the sum off by one step breaks them.
    #[test]
    fn bounds_hold_for_quantised_fleets_and_catch_an_error_of_one_step() {
        use rand_chacha::rand_core::{RngCore, SeedableRng};
        let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(9);
        let mut caught = 0;
        for trial in 0..200 {
            let devices = 1 + (trial % 37) * 3;
            let range = 2.0;
            let f = frac_bits(devices, range, HALF, "t").unwrap();
            let fp = FixedPoint::<Seal4096>::new(f).unwrap();
            let xs: Vec<f64> = (0..devices)
                .map(|_| range * (2.0 * (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64 - 1.0))
                .collect();
            let qs: Vec<i64> = xs
                .iter()
                .map(|&x| centred(fp.quantize(x).unwrap(), Seal4096::T))
                .collect();
            let sum: i64 = qs.iter().sum();
            let sum_sq: i64 = qs.iter().map(|q| q * q).sum();
            let true_sum: f64 = xs.iter().sum();
            let true_sum_sq: f64 = xs.iter().map(|x| x * x).sum();
            let s = SlotStats::new(0.0, devices, f, sum, sum_sq, true_sum, true_sum_sq);
            assert!(s.within_bounds(), "{trial}: {s:?}");
            // A sum off by a few devices' worth of steps is outside the mean bound.
            let off = devices as i64 * 2 + 1;
            let bad = SlotStats::new(0.0, devices, f, sum + off, sum_sq, true_sum, true_sum_sq);
            caught += usize::from(!bad.within_bounds());
        }
        assert_eq!(caught, 200);
    }

    #[test]
    fn centred_lift() {
        assert_eq!(centred(0, 65537), 0);
        assert_eq!(centred(32768, 65537), 32768);
        assert_eq!(centred(32769, 65537), -32768);
        assert_eq!(centred(65536, 65537), -1);
    }
}
