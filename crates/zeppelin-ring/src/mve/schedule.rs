//! The range auditor of the Helium NTT: the step list ([`Schedule`]) the executor
//! (`ntt.rs`) runs, certified with exact worst-case bounds for a given `q` before any
//! transform runs, and the certificate of the pointwise kernel. Pure integer arithmetic,
//! `const fn` throughout, so the presets' schedules are certified at compile time.

/// Every certified intermediate is below this bound (one bit of margin below 2^32).
pub const RANGE_LIMIT: u64 = 1 << 31;

/// Length of one row kernel call, in coefficients (256 bytes).
pub const ROW: usize = 64;
/// Most steps a schedule has: one per layer (`log2 n <= 17`) plus the fused tail.
const MAX_STEPS: usize = 20;

/// Why a schedule was refused by the range auditor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RangeError {
    /// The degree is not supported by the vector schedule (needs `16 <= n`, a power of two).
    Degree {
        /// The degree asked for.
        degree: usize,
    },
    /// An intermediate may reach `bound` (exclusive) at step `step`, above [`RANGE_LIMIT`].
    Overflow {
        /// Index of the offending step.
        step: usize,
        /// Its worst-case exclusive bound.
        bound: u64,
    },
    /// A subtraction may go negative or a final reduction may leave `[0, q)` at `step`.
    Underflow {
        /// Index of the offending step.
        step: usize,
    },
}

impl core::fmt::Display for RangeError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Self::Degree { degree } => {
                write!(f, "degree {degree} not supported by the MVE schedule")
            }
            Self::Overflow { step, bound } => {
                write!(f, "step {step}: intermediate may reach {bound} >= 2^31")
            }
            Self::Underflow { step } => write!(f, "step {step}: range not certified"),
        }
    }
}

/// One step of a schedule: a butterfly layer (identified by its half-distance) and where it
/// runs, or the fused last-two-layer kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// A layer with butterfly distance `half = 2^log_half >= ROW`, run on 8-column strips.
    Strip {
        /// `log2` of the butterfly distance in coefficients.
        log_half: u8,
    },
    /// A layer with `4 <= half = 2^log_half < ROW`, inside one row, broadcast twiddle per
    /// group.
    Row {
        /// `log2` of the butterfly distance in coefficients.
        log_half: u8,
    },
    /// The two layers `half = 2, 1` on de-interleaved registers (`vld4`), per-lane
    /// twiddles; forward: canonicalised to `[0, q)` before the store.
    Quad,
    /// Inverse only: multiply by `n^-1` and canonicalise.
    Scale,
}

/// A certified schedule: the steps the executor runs, in order, and the largest
/// intermediate bound found by the auditor. Only [`Schedule::forward`] and
/// [`Schedule::inverse`] make one, so an uncertified schedule cannot run.
#[derive(Clone, Copy, Debug)]
pub struct Schedule {
    steps: [Step; MAX_STEPS],
    len: usize,
    /// The largest exclusive bound of any intermediate, over all steps.
    pub max_bound: u64,
}

/// `max floor(a·b / 2^32)` for `a < a_excl`, `b < b_excl`.
const fn hi_max(a_excl: u64, b_excl: u64) -> u64 {
    ((a_excl - 1) * (b_excl - 1)) >> 32
}

const fn max(a: u64, b: u64) -> u64 {
    if a > b {
        a
    } else {
        b
    }
}

/// Exclusive bound after `vmin.u32(x, x - m)` for `x < b`: `x - m` if `x >= m`, else `x`.
/// Valid for any `m < 2^32` (the wrapped `x - m` exceeds `x` exactly when `x < m`).
const fn reduce_bound(b: u64, m: u64) -> u64 {
    if b > m {
        max(m, b - m)
    } else {
        b
    }
}

impl Schedule {
    const fn steps_for(log_n: u32, forward: bool) -> Result<Self, RangeError> {
        match log_n {
            4..=17 => {}
            _ => {
                let degree = match 1usize.checked_shl(log_n) {
                    Some(d) => d,
                    None => 0,
                };
                return Err(RangeError::Degree { degree });
            }
        }
        let n = 1usize << log_n;
        let mut steps = [Step::Scale; MAX_STEPS];
        let mut len = 0;
        let row = if n < ROW { n } else { ROW };
        // Forward: halves from n/2 down; the inverse runs the same layers upwards.
        let mut layer_halves = [0usize; MAX_STEPS];
        let mut k = 0;
        let mut half = n >> 1;
        while half >= 4 {
            layer_halves[k] = half;
            k += 1;
            half /= 2;
        }
        if forward {
            let mut i = 0;
            while i < k {
                let h = layer_halves[i];
                steps[len] = if h >= row {
                    Step::Strip {
                        log_half: h.trailing_zeros() as u8,
                    }
                } else {
                    Step::Row {
                        log_half: h.trailing_zeros() as u8,
                    }
                };
                len += 1;
                i += 1;
            }
            steps[len] = Step::Quad;
            len += 1;
        } else {
            steps[len] = Step::Quad;
            len += 1;
            let mut i = k;
            while i > 0 {
                i -= 1;
                let h = layer_halves[i];
                steps[len] = if h >= row {
                    Step::Strip {
                        log_half: h.trailing_zeros() as u8,
                    }
                } else {
                    Step::Row {
                        log_half: h.trailing_zeros() as u8,
                    }
                };
                len += 1;
            }
            steps[len] = Step::Scale;
            len += 1;
        }
        Ok(Self {
            steps,
            len,
            max_bound: 0,
        })
    }

    /// Builds the forward schedule for `n = 2^log_n` and certifies its ranges for `q`.
    pub const fn forward(q: u32, log_n: u32) -> Result<Self, RangeError> {
        let mut s = match Self::steps_for(log_n, true) {
            Ok(s) => s,
            Err(e) => return Err(e),
        };
        let q = q as u64;
        let mut worst = 0u64;
        // Inputs are canonical.
        let mut b = q;
        let mut i = 0;
        while i < s.len {
            let layers = match s.steps[i] {
                Step::Quad => 2,
                _ => 1,
            };
            let mut l = 0;
            while l < layers {
                // u = reduce(x, 2q) + q; d in [-(q-1), dmax]; x' = u + d; y' = u - d.
                let u = reduce_bound(b, 2 * q) + q;
                let dmax = hi_max(b, q);
                if dmax + 1 > q {
                    return Err(RangeError::Underflow { step: i });
                }
                let x_next = u + dmax;
                let y_next = u + q - 1;
                let step_max = max(max(b, u), max(x_next, y_next));
                if step_max > RANGE_LIMIT {
                    return Err(RangeError::Overflow {
                        step: i,
                        bound: step_max,
                    });
                }
                worst = max(worst, step_max);
                b = max(x_next, y_next);
                l += 1;
            }
            if let Step::Quad = s.steps[i] {
                // Fused canonicalisation: reduce by 2q, then by q, must land in [0, q).
                if reduce_bound(reduce_bound(b, 2 * q), q) > q {
                    return Err(RangeError::Underflow { step: i });
                }
                b = q;
            }
            i += 1;
        }
        if b > q {
            return Err(RangeError::Underflow { step: s.len });
        }
        s.max_bound = worst;
        Ok(s)
    }

    /// Builds the inverse schedule for `n = 2^log_n` and certifies its ranges for `q`.
    pub const fn inverse(q: u32, log_n: u32) -> Result<Self, RangeError> {
        let mut s = match Self::steps_for(log_n, false) {
            Ok(s) => s,
            Err(e) => return Err(e),
        };
        let q = q as u64;
        let mut worst = 0u64;
        let mut b = q;
        let mut i = 0;
        while i < s.len {
            match s.steps[i] {
                Step::Scale => {
                    // mont(x, n^-1): hi(x·w) + q - hi(m·q) in [1, q + hi_max]; one reduce by q.
                    let t = q + hi_max(b, q) + 1;
                    worst = max(worst, t);
                    if t > 2 * q || t > RANGE_LIMIT {
                        return Err(RangeError::Underflow { step: i });
                    }
                    b = q;
                }
                step => {
                    let layers = match step {
                        Step::Quad => 2,
                        _ => 1,
                    };
                    let mut l = 0;
                    while l < layers {
                        // x' = reduce(x + y, 2q); t = x + 2q - y (needs y < 2q + 1 > 0... y <= 2q);
                        // y' = hi(t·w) + q - hi(m·q).
                        if b > 2 * q {
                            return Err(RangeError::Underflow { step: i });
                        }
                        let sum = 2 * b - 1;
                        let x_next = reduce_bound(sum, 2 * q);
                        let t = b + 2 * q;
                        let y_next = q + hi_max(t, q) + 1;
                        let step_max = max(max(sum, t), max(x_next, y_next + q));
                        if step_max > RANGE_LIMIT {
                            return Err(RangeError::Overflow {
                                step: i,
                                bound: step_max,
                            });
                        }
                        worst = max(worst, step_max);
                        b = max(x_next, y_next);
                        l += 1;
                    }
                }
            }
            i += 1;
        }
        if b > q {
            return Err(RangeError::Underflow { step: s.len });
        }
        s.max_bound = worst;
        Ok(s)
    }

    /// The certified steps, in execution order.
    pub fn steps(&self) -> &[Step] {
        &self.steps[..self.len]
    }
}

/// Certifies the pointwise product kernel for `q`: two subtractive Montgomery products then
/// one reduction; returns the largest intermediate bound.
pub const fn certify_pointwise(q: u32) -> Result<u64, RangeError> {
    let q = q as u64;
    let t = q + hi_max(q, q) + 1; // mont(a, b), a, b < q
    let h = q + hi_max(t, q) + 1; // mont(t, r2)
    let acc = 2 * q; // acc + product before the last reduction (mul_add)
    let worst = max(max(t, h + q), acc);
    if h > 2 * q || worst > RANGE_LIMIT {
        return Err(RangeError::Overflow {
            step: 0,
            bound: worst,
        });
    }
    Ok(worst)
}

/// Largest modulus the MVE schedule certifies at every supported degree.
pub const MAX_CERTIFIED_MODULUS: u32 = (1 << 29) - 1;

// Compile-time certificates: the worst case over q is the largest q (every bound grows with
// q), at the longest schedule; and the auditor refuses a modulus past the limit.
const _: () = assert!(Schedule::forward(MAX_CERTIFIED_MODULUS, 17).is_ok());
const _: () = assert!(Schedule::inverse(MAX_CERTIFIED_MODULUS, 17).is_ok());
const _: () = assert!(Schedule::forward(MAX_CERTIFIED_MODULUS, 4).is_ok());
const _: () = assert!(Schedule::inverse(MAX_CERTIFIED_MODULUS, 4).is_ok());
const _: () = assert!(certify_pointwise(MAX_CERTIFIED_MODULUS).is_ok());
const _: () = assert!(Schedule::forward((1 << 30) - 35, 12).is_err());
