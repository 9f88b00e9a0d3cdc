//! The demo's sensor fleet: a synthetic day of temperature and humidity per device, seeded so
//! that every run with the same `--seed` reads the same values.
//!
//! Row 0 of the `n` slots holds temperatures, row 1 humidities, at `n/2` equally spaced times
//! of the day. Each reading is a public daily reference profile plus the device's own bias,
//! a device-specific amplitude and Gaussian noise, clipped to the sensors' reporting range
//! around the reference (so a reading is never outside `reference ± range`).

use rand_chacha::rand_core::{RngCore, SeedableRng};
use rand_chacha::ChaCha20Rng;

/// One measured quantity and its public reference profile.
#[derive(Clone, Copy, Debug)]
pub struct Quantity {
    /// Its name in the output.
    pub name: &'static str,
    /// Its unit.
    pub unit: &'static str,
    /// Daily mean of the reference profile.
    base: f64,
    /// Half the reference's daily swing.
    swing: f64,
    /// Hour of the reference's maximum.
    peak_hour: f64,
    /// A device's bias is uniform in `±bias`.
    bias: f64,
    /// A device's swing differs from the reference's by a factor uniform in `1 ± swing_spread`.
    swing_spread: f64,
    /// Standard deviation of the per-reading noise.
    noise: f64,
    /// The reporting range: readings are clipped to `reference ± range` (public: it sets the
    /// fixed-point scale).
    pub range: f64,
}

/// Temperature in °C.
pub const TEMPERATURE: Quantity = Quantity {
    name: "temperature",
    unit: "°C",
    base: 19.0,
    swing: 5.0,
    peak_hour: 15.0,
    bias: 0.8,
    swing_spread: 0.1,
    noise: 0.25,
    range: 2.0,
};

/// Relative humidity in %.
pub const HUMIDITY: Quantity = Quantity {
    name: "humidity",
    unit: "%RH",
    base: 60.0,
    swing: -15.0,
    peak_hour: 15.0,
    bias: 2.0,
    swing_spread: 0.05,
    noise: 0.8,
    range: 4.0,
};

/// The quantities in slot-row order.
pub const QUANTITIES: [Quantity; 2] = [TEMPERATURE, HUMIDITY];

impl Quantity {
    /// The public reference at `hour` (0 ≤ hour < 24): a sinusoid peaking at `peak_hour`.
    pub fn reference(&self, hour: f64) -> f64 {
        self.base + self.swing * self.phase(hour)
    }

    fn phase(&self, hour: f64) -> f64 {
        (std::f64::consts::TAU * (hour - self.peak_hour) / 24.0).cos()
    }
}

/// The hour of the day of slot `j` of a row of `row_len` slots.
pub fn hour_of(j: usize, row_len: usize) -> f64 {
    24.0 * j as f64 / row_len as f64
}

/// The readings of `device` under `seed`, as offsets from the reference: `QUANTITIES.len()`
/// rows of `row_len` values, each in `±range` of its quantity. Devices are independent
/// ChaCha20 streams of one seed, so they can be generated in any order or in parallel.
pub fn device_offsets(seed: u64, device: u64, row_len: usize) -> Vec<f64> {
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    rng.set_stream(device);
    let mut out = Vec::with_capacity(QUANTITIES.len() * row_len);
    for q in &QUANTITIES {
        let bias = q.bias * (2.0 * uniform(&mut rng) - 1.0);
        let swing = q.swing * q.swing_spread * (2.0 * uniform(&mut rng) - 1.0);
        for j in 0..row_len {
            let hour = hour_of(j, row_len);
            let offset = bias + swing * q.phase(hour) + q.noise * gaussian(&mut rng);
            out.push(offset.clamp(-q.range, q.range));
        }
    }
    out
}

/// Uniform in [0, 1) with 53 random bits.
fn uniform(rng: &mut impl RngCore) -> f64 {
    (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64
}

/// Standard normal (Box–Muller; `1 − u` keeps the logarithm finite).
fn gaussian(rng: &mut impl RngCore) -> f64 {
    let u = 1.0 - uniform(rng);
    let v = uniform(rng);
    (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_readings_other_seed_or_device_other_readings() {
        let a = device_offsets(7, 3, 64);
        assert_eq!(a, device_offsets(7, 3, 64));
        assert_ne!(a, device_offsets(8, 3, 64));
        assert_ne!(a, device_offsets(7, 4, 64));
    }

    #[test]
    fn offsets_stay_in_the_reporting_range_and_vary() {
        let row = 256;
        for device in 0..50 {
            let o = device_offsets(1, device, row);
            for (q, values) in QUANTITIES.iter().zip(o.chunks(row)) {
                assert!(values.iter().all(|x| x.abs() <= q.range));
                let mean = values.iter().sum::<f64>() / row as f64;
                let var = values.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / row as f64;
                // The noise alone has variance noise²; a constant stream would have none.
                assert!(var > 0.25 * q.noise * q.noise, "{} {var}", q.name);
            }
        }
    }

    #[test]
    fn gaussian_has_unit_variance() {
        let mut rng = ChaCha20Rng::seed_from_u64(5);
        let n = 200_000;
        let xs: Vec<f64> = (0..n).map(|_| gaussian(&mut rng)).collect();
        let mean = xs.iter().sum::<f64>() / n as f64;
        let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n as f64;
        // Standard errors: 1/sqrt(n) = 0.0022 for the mean, sqrt(2/n) = 0.0032 for the variance.
        assert!(mean.abs() < 0.011, "{mean}");
        assert!((var - 1.0).abs() < 0.016, "{var}");
    }
}
