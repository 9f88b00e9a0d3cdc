//! Per-level constants of the evaluator, computed once at [`crate::Evaluator::new`]: the
//! moduli, SEAL's `Δ = floor(Q/t)` in RNS, the plaintext lift, and the key-switching
//! constants of the special prime. Setup only: nothing here runs per coefficient.

use zeppelin_ring::{Modulus, Mont, NttTable};
use zeppelin_seal::poly::RnsNtt;
use zeppelin_seal::{ParmsId, SealContext, SealError};

use crate::error::{EvalError, Result};

/// The plain modulus `t` and what scaling a plaintext by `Δ` needs.
#[derive(Clone, Copy, Debug)]
pub(crate) struct PlainTables {
    /// `t`, for reductions (odd, below 2^30).
    pub modulus: Modulus,
    /// `floor((t + 1) / 2)`: SEAL's rounding increment, and the threshold above which a
    /// plaintext coefficient stands for a negative value.
    pub half_up: u32,
    /// `t^-1 mod 2^64`: exact division by `t` of a multiple of `t`.
    pub inv_mod_2_64: u64,
}

impl PlainTables {
    fn new(t: u64) -> Result<Self> {
        let t32 = u32::try_from(t).map_err(|_| EvalError::Unsupported {
            what: "plain modulus of 30 bits or more",
        })?;
        let modulus = Modulus::new_odd(t32).map_err(|_| EvalError::Unsupported {
            what: "plain modulus that is even or of 30 bits or more",
        })?;
        // Newton: each step doubles the correct low bits of t^-1 (t odd: 3 bits to start).
        let mut inv = t;
        for _ in 0..6 {
            inv = inv.wrapping_mul(2u64.wrapping_sub(t.wrapping_mul(inv)));
        }
        Ok(Self {
            modulus,
            half_up: t32.div_ceil(2),
            inv_mod_2_64: inv,
        })
    }

    /// `floor(((Q mod t)·m + half_up) / t)`: SEAL's rounding carry of `Δ·m`, which does not
    /// depend on the prime (`m < t`, `q_mod_t < t`).
    #[inline(always)]
    pub fn carry(&self, q_mod_t: u32, m: u32) -> u32 {
        let x = u64::from(q_mod_t) * u64::from(m) + u64::from(self.half_up);
        let r = self.modulus.reduce_u64(x);
        // x − r is a multiple of t; its quotient is below t < 2^30.
        (x - u64::from(r)).wrapping_mul(self.inv_mod_2_64) as u32
    }
}

/// One data level: its primes and the constants its operations use.
#[derive(Clone, Debug)]
pub(crate) struct LevelTables {
    /// The level's id.
    pub parms_id: ParmsId,
    /// The level's primes, as moduli.
    pub moduli: Vec<Modulus>,
    /// `Q mod t` (`Q` the product of the level's primes).
    pub q_mod_t: u32,
    /// `[floor(Q/t)]_{q_i}` in Montgomery form.
    pub delta_mont: Vec<Mont>,
    /// `t mod q_i`: a plaintext coefficient `v >= half_up` lifts to `v − t mod q_i`.
    pub t_mod_q: Vec<u32>,
    /// `[P^-1]_{q_i}` repeated over a row of `n` per prime (`P` the special prime), so that
    /// the backend's pointwise product scales a row by it.
    pub special_inv_rows: Vec<u32>,
}

impl LevelTables {
    /// The number of primes.
    pub fn len(&self) -> usize {
        self.moduli.len()
    }
}

/// Every data level's tables, the key level's NTT tables and the plain modulus.
#[derive(Debug)]
pub(crate) struct Tables {
    pub plain: PlainTables,
    /// Data levels, first data level first (the order of `SealContext::levels()[1..]`).
    pub levels: Vec<LevelTables>,
    /// The special prime `P` (the key level's last), when key switching exists.
    pub special: Option<Modulus>,
}

impl Tables {
    pub fn new(ctx: &SealContext) -> Result<Self> {
        let plain = PlainTables::new(ctx.plain_modulus())?;
        let tm = plain.modulus;
        let key = ctx.key_level();
        let key_moduli = key
            .coeff_modulus
            .iter()
            .map(|&q| {
                let q32 = u32::try_from(q).map_err(|_| SealError::PrimeTooWide { prime: q })?;
                Modulus::new(q32).map_err(|e| EvalError::Seal(e.into()))
            })
            .collect::<Result<Vec<_>>>()?;
        let special = if ctx.using_keyswitching() {
            key_moduli.last().copied()
        } else {
            None
        };
        let data_levels = &ctx.levels()[usize::from(ctx.using_keyswitching())..];
        let mut levels = Vec::with_capacity(data_levels.len());
        for level in data_levels {
            let moduli = key_moduli[..level.coeff_modulus.len()].to_vec();
            let q_mod_t = moduli
                .iter()
                .fold(1u32, |acc, m| tm.mul(acc, tm.reduce_u32(m.value())));
            let mut delta_mont = Vec::with_capacity(moduli.len());
            let mut t_mod_q = Vec::with_capacity(moduli.len());
            let mut special_inv_rows = Vec::new();
            for m in &moduli {
                let t_i = m.reduce_u64(ctx.plain_modulus());
                let t_inv = m.inv(t_i).ok_or(EvalError::Unsupported {
                    what: "plain modulus sharing a factor with a prime",
                })?;
                // q_i divides Q, so floor(Q/t) = (Q − (Q mod t))/t ≡ −(Q mod t)·t^-1 mod q_i.
                delta_mont.push(m.mont(m.mul(m.neg(m.reduce_u32(q_mod_t)), t_inv)));
                t_mod_q.push(t_i);
                if let Some(p) = special {
                    let inv = m
                        .inv(m.reduce_u32(p.value()))
                        .ok_or(EvalError::Unsupported {
                            what: "special prime equal to a data prime",
                        })?;
                    special_inv_rows.extend(std::iter::repeat_n(inv, ctx.n()));
                }
            }
            levels.push(LevelTables {
                parms_id: level.parms_id,
                moduli,
                q_mod_t,
                delta_mont,
                t_mod_q,
                special_inv_rows,
            });
        }
        Ok(Self {
            plain,
            levels,
            special,
        })
    }

    /// The tables of the data level `parms_id`.
    pub fn level(&self, parms_id: &ParmsId) -> Option<&LevelTables> {
        self.levels.iter().find(|l| l.parms_id == *parms_id)
    }
}

/// The NTT table of prime `i` of the key level (data primes first, the special prime last).
pub(crate) fn table(key_ntt: &RnsNtt, i: usize) -> Result<&NttTable<Vec<u32>>> {
    key_ntt.table(i).ok_or(EvalError::Unsupported {
        what: "prime index beyond the key level",
    })
}
