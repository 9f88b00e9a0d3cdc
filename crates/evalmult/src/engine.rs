//! The batched engine: OpenFHE-exact `EvalMult` + BV relinearization for many ciphertext
//! pairs at once, on all cores.
//!
//! # Data flow
//!
//! 1. Per pair (in parallel): validate, `c2 = x1·y1`, and `c2` to coefficient form (one
//!    inverse NTT per tower).
//! 2. Per (tower `k`, group of pairs) task (in parallel): for every pair of the group, the `L`
//!    digits of tower `k` (digit `k` is `c2`'s own evaluation tower, the others a centred lift
//!    of coefficient tower `i` into `q_k` and one forward NTT); then, one **coefficient block**
//!    at a time, the key block `(a_i[k], b_i[k])` for all digits `i` is loaded once and used by
//!    every pair of the group (coefficient-major key reuse, as the FPGA does across its
//!    batch): `c0 = x0·y0`, `c1 = x0·y1 + x1·y0` and `relin_c0 = c0 + Σ_i b_i·d_i`,
//!    `relin_c1 = c1 + Σ_i a_i·d_i`, with the sums accumulated unreduced in 64 bits.
//!
//! With [`EngineOptions::group`] equal to the batch size the key is streamed exactly once per
//! tower and coefficient block for the whole batch (per worker); smaller groups trade key
//! re-reads for a digit buffer that stays in cache.

use rayon::prelude::*;
use zeppelin_ring::NttBackend;

use crate::context::{Ciphertext, RelinKey, RnsContext};
use crate::error::{EvalMultError, Result};
use crate::kernels::{self, Backend};

/// Tuning knobs; results never depend on them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EngineOptions {
    /// Pairs that share one pass over the evaluation key (per tower).
    pub group: usize,
    /// Coefficients per key block (a multiple of 16 keeps the SIMD kernels on full vectors).
    pub block: usize,
}

impl Default for EngineOptions {
    fn default() -> Self {
        Self {
            group: 8,
            block: 256,
        }
    }
}

/// Outputs of a batch, tower-major: `c0[(k·batch + ct)·n ..][..n]` is tower `k` of
/// `relin_c0` of pair `ct` (the layout the workers write without copying).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RelinBatch {
    ring_dim: usize,
    towers: usize,
    batch: usize,
    c0: Vec<u32>,
    c1: Vec<u32>,
}

impl RelinBatch {
    /// Number of results.
    pub fn len(&self) -> usize {
        self.batch
    }

    /// Whether the batch is empty.
    pub fn is_empty(&self) -> bool {
        self.batch == 0
    }

    /// Tower `tower` of component `component` (0 or 1) of result `ct`.
    pub fn tower(&self, ct: usize, component: usize, tower: usize) -> &[u32] {
        let data = if component == 0 { &self.c0 } else { &self.c1 };
        let start = (tower * self.batch + ct) * self.ring_dim;
        &data[start..start + self.ring_dim]
    }

    /// Result `ct` as a tower-major [`Ciphertext`].
    pub fn ciphertext(&self, ct: usize) -> Ciphertext {
        let gather = |component| {
            (0..self.towers)
                .flat_map(|k| self.tower(ct, component, k).iter().copied())
                .collect()
        };
        Ciphertext {
            c0: gather(0),
            c1: gather(1),
        }
    }

    /// All results as [`Ciphertext`]s.
    pub fn to_ciphertexts(&self) -> Vec<Ciphertext> {
        (0..self.batch).map(|ct| self.ciphertext(ct)).collect()
    }
}

/// BV digits supplied from outside (the FPGA's host/accelerator split): for one pair,
/// `L·L·n` residues ordered `[tower k][digit i][coefficient]`, evaluation format.
pub type TowerMajorDigits = Vec<u32>;

/// Reorders digits as [`crate::reference::decompose`] returns them (`[digit i]` of tower-major
/// RNS polynomials) into [`TowerMajorDigits`].
pub fn tower_major_digits(ctx: &RnsContext, digits: &[Vec<u32>]) -> Result<TowerMajorDigits> {
    let (n, towers) = (ctx.ring_dim(), ctx.towers());
    if digits.len() != towers {
        return Err(EvalMultError::shape(
            "digits",
            towers,
            digits.len(),
            "digits",
        ));
    }
    let mut out = Vec::with_capacity(towers * towers * n);
    for k in 0..towers {
        for (i, digit) in digits.iter().enumerate() {
            ctx.check_poly(&format!("digit {i}"), digit)?;
            out.extend_from_slice(&digit[k * n..(k + 1) * n]);
        }
    }
    Ok(out)
}

/// The batched engine for one parameter set and one relinearization key.
///
/// ```
/// use zeppelin_evalmult::{reference, Ciphertext, Engine, RelinKey, RnsContext};
/// let (n, moduli) = (64, [65_537u32, 40_961]);
/// let ctx = RnsContext::new(n, &moduli).unwrap();
/// let poly = |seed: u32| -> Vec<u32> {
///     (0..2 * n as u32).map(|j| (j * 7919 + seed) % moduli[(j as usize) / n]).collect()
/// };
/// let key = RelinKey { ring_dim: n, moduli: moduli.to_vec(), a: vec![poly(1), poly(2)], b: vec![poly(3), poly(4)] };
/// let x = Ciphertext { c0: poly(5), c1: poly(6) };
/// let y = Ciphertext { c0: poly(7), c1: poly(8) };
/// let engine = Engine::new(ctx.clone(), &key).unwrap();
/// let fast = engine.eval_mult(&[(x.clone(), y.clone())]).unwrap();
/// let slow = reference::eval_mult(&ctx, &key, &x, &y).unwrap();
/// assert_eq!(fast[0], slow.relin);
/// ```
#[derive(Clone, Debug)]
pub struct Engine {
    ctx: RnsContext,
    /// `key_a[(k·L + i)·n + j]`: digit `i`'s `a` key, tower `k`, Montgomery form.
    key_a: Vec<u32>,
    /// Same for `b`.
    key_b: Vec<u32>,
    options: EngineOptions,
}

impl Engine {
    /// Validates `key` against `ctx` and prepares it (tower-major, Montgomery form).
    pub fn new(ctx: RnsContext, key: &RelinKey) -> Result<Self> {
        Self::with_options(ctx, key, EngineOptions::default())
    }

    /// [`Engine::new`] with explicit tuning.
    pub fn with_options(ctx: RnsContext, key: &RelinKey, options: EngineOptions) -> Result<Self> {
        key.check(&ctx)?;
        let (n, towers) = (ctx.ring_dim(), ctx.towers());
        let prepare = |part: &[Vec<u32>]| {
            let mut out = Vec::with_capacity(towers * towers * n);
            for (k, m) in ctx.moduli().iter().enumerate() {
                for digit in part {
                    out.extend(digit[k * n..(k + 1) * n].iter().map(|&v| m.to_mont(v)));
                }
            }
            out
        };
        let (key_a, key_b) = (prepare(&key.a), prepare(&key.b));
        let options = EngineOptions {
            group: options.group.max(1),
            block: options.block.clamp(1, n),
        };
        Ok(Self {
            ctx,
            key_a,
            key_b,
            options,
        })
    }

    /// The parameter set.
    pub fn context(&self) -> &RnsContext {
        &self.ctx
    }

    /// The tuning in effect.
    pub fn options(&self) -> EngineOptions {
        self.options
    }

    /// `EvalMult(x, y)` with BV relinearization for every pair, results in input order.
    pub fn eval_mult(&self, pairs: &[(Ciphertext, Ciphertext)]) -> Result<Vec<Ciphertext>> {
        Ok(self.eval_mult_batch(pairs)?.to_ciphertexts())
    }

    /// Like [`Engine::eval_mult`], results in the engine's tower-major layout.
    pub fn eval_mult_batch(&self, pairs: &[(Ciphertext, Ciphertext)]) -> Result<RelinBatch> {
        self.check_pairs(pairs)?;
        let (n, towers) = (self.ctx.ring_dim(), self.ctx.towers());
        // Phase 1: c2 in coefficient form, per pair.
        let coefficients: Vec<Vec<u32>> = pairs
            .par_iter()
            .map(|(x, y)| -> Result<Vec<u32>> {
                let mut c2 = vec![0u32; towers * n];
                for (k, tower) in c2.chunks_exact_mut(n).enumerate() {
                    let range = k * n..(k + 1) * n;
                    Backend::pointwise_mul(
                        &self.ctx.moduli()[k],
                        &x.c1[range.clone()],
                        &y.c1[range],
                        tower,
                    )?;
                    Backend::inverse(&self.ctx.table(k), tower)?;
                }
                Ok(c2)
            })
            .collect::<Result<_>>()?;
        self.relinearize(pairs, |k, ct, x, y, digits| {
            // Digits of tower k for pair ct: [digit i][coefficient].
            let m = &self.ctx.moduli()[k];
            for (i, digit) in digits.chunks_exact_mut(n).enumerate() {
                if i == k {
                    let range = k * n..(k + 1) * n;
                    Backend::pointwise_mul(m, &x.c1[range.clone()], &y.c1[range], digit)?;
                } else {
                    let source = &coefficients[ct][i * n..(i + 1) * n];
                    kernels::lift_centered(source, &self.ctx.moduli()[i], m, digit)?;
                    Backend::forward(&self.ctx.table(k), digit)?;
                }
            }
            Ok(())
        })
    }

    /// Tensor and key switch with digits supplied by the caller (what the FPGA does: the
    /// decomposition happens elsewhere). `digits[ct]` is in [`TowerMajorDigits`] order.
    pub fn relinearize_with_digits(
        &self,
        pairs: &[(Ciphertext, Ciphertext)],
        digits: &[TowerMajorDigits],
    ) -> Result<RelinBatch> {
        self.check_pairs(pairs)?;
        let (n, towers) = (self.ctx.ring_dim(), self.ctx.towers());
        if digits.len() != pairs.len() {
            return Err(EvalMultError::shape(
                "digit sets",
                pairs.len(),
                digits.len(),
                "pairs",
            ));
        }
        digits.par_iter().enumerate().try_for_each(|(ct, set)| {
            if set.len() != towers * towers * n {
                return Err(EvalMultError::shape(
                    format!("digits of pair {ct}"),
                    towers * towers * n,
                    set.len(),
                    "residues",
                ));
            }
            for (k, tower_digits) in set.chunks_exact(towers * n).enumerate() {
                let q = self.ctx.moduli()[k].value();
                if let Some(index) = tower_digits.iter().position(|&v| v >= q) {
                    return Err(EvalMultError::ResidueOutOfRange {
                        what: format!("digit {} of pair {ct}", index / n),
                        tower: k,
                        index: index % n,
                        value: tower_digits[index],
                        modulus: q,
                    });
                }
            }
            Ok(())
        })?;
        self.relinearize(pairs, |k, ct, _, _, out| {
            out.copy_from_slice(&digits[ct][k * towers * n..(k + 1) * towers * n]);
            Ok(())
        })
    }

    fn check_pairs(&self, pairs: &[(Ciphertext, Ciphertext)]) -> Result<()> {
        pairs.par_iter().enumerate().try_for_each(|(ct, (x, y))| {
            x.check(&self.ctx, &format!("pair {ct} x"))?;
            y.check(&self.ctx, &format!("pair {ct} y"))
        })
    }

    /// Phase 2: `make_digits(k, ct, x, y, buffer)` fills the `L·n` digits of tower `k` of
    /// pair `ct`; the rest is the blocked multiply-accumulate.
    fn relinearize<F>(
        &self,
        pairs: &[(Ciphertext, Ciphertext)],
        make_digits: F,
    ) -> Result<RelinBatch>
    where
        F: Fn(usize, usize, &Ciphertext, &Ciphertext, &mut [u32]) -> Result<()> + Sync,
    {
        let (n, towers, batch) = (self.ctx.ring_dim(), self.ctx.towers(), pairs.len());
        let EngineOptions { group, block } = self.options;
        let mut c0 = vec![0u32; towers * batch * n];
        let mut c1 = vec![0u32; towers * batch * n];
        if batch > 0 {
            c0.par_chunks_mut(batch * n)
                .zip(c1.par_chunks_mut(batch * n))
                .enumerate()
                .try_for_each(|(k, (out0, out1))| {
                    out0.par_chunks_mut(group * n)
                        .zip(out1.par_chunks_mut(group * n))
                        .enumerate()
                        .try_for_each(|(g, (out0, out1))| {
                            let first = g * group;
                            let members = &pairs[first..first + out0.len() / n];
                            self.relinearize_group(
                                k,
                                first,
                                members,
                                &make_digits,
                                block,
                                out0,
                                out1,
                            )
                        })
                })?;
        }
        Ok(RelinBatch {
            ring_dim: n,
            towers,
            batch,
            c0,
            c1,
        })
    }

    #[allow(clippy::too_many_arguments)]
    fn relinearize_group<F>(
        &self,
        k: usize,
        first: usize,
        members: &[(Ciphertext, Ciphertext)],
        make_digits: &F,
        block: usize,
        out0: &mut [u32],
        out1: &mut [u32],
    ) -> Result<()>
    where
        F: Fn(usize, usize, &Ciphertext, &Ciphertext, &mut [u32]) -> Result<()> + Sync,
    {
        let (n, towers) = (self.ctx.ring_dim(), self.ctx.towers());
        let m = &self.ctx.moduli()[k];
        let stride = towers * n;
        let mut digits = vec![0u32; members.len() * stride];
        for (g, ((x, y), buffer)) in members
            .iter()
            .zip(digits.chunks_exact_mut(stride))
            .enumerate()
        {
            make_digits(k, first + g, x, y, buffer)?;
        }
        let key_a = &self.key_a[k * stride..(k + 1) * stride];
        let key_b = &self.key_b[k * stride..(k + 1) * stride];
        let mut tensor0 = vec![0u32; block];
        let mut tensor1 = vec![0u32; block];
        let tower = k * n;
        for start in (0..n).step_by(block) {
            let len = block.min(n - start);
            let (t0, t1) = (&mut tensor0[..len], &mut tensor1[..len]);
            let range = tower + start..tower + start + len;
            for (g, (x, y)) in members.iter().enumerate() {
                Backend::pointwise_mul(m, &x.c0[range.clone()], &y.c0[range.clone()], t0)?;
                Backend::pointwise_mul(m, &x.c0[range.clone()], &y.c1[range.clone()], t1)?;
                Backend::pointwise_mul_add(m, &x.c1[range.clone()], &y.c0[range.clone()], t1)?;
                let out = g * n + start..g * n + start + len;
                kernels::key_switch_block(
                    m,
                    towers,
                    n,
                    &digits[g * stride + start..(g + 1) * stride],
                    &key_a[start..],
                    &key_b[start..],
                    t1,
                    t0,
                    &mut out1[out.clone()],
                    &mut out0[out],
                )?;
            }
        }
        Ok(())
    }
}
