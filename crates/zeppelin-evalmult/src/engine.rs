//! The batched engine: OpenFHE-exact `EvalMult` + BV relinearization for many ciphertext
//! pairs at once, on all cores.
//!
//! # Data flow
//!
//! The batch is cut into groups of [`EngineOptions::group`] pairs, one task each (rayon
//! spreads the tasks over the cores). A task
//!
//! 1. validates its pairs and computes `c2 = x1·y1` in coefficient form (one inverse NTT per
//!    tower);
//! 2. for each tower `k`: builds the `L` digits of tower `k` for every pair of the group
//!    (digit `k` is `c2`'s own evaluation tower, the others a centred lift of coefficient
//!    tower `i` into `q_k` and one forward NTT); then, one **coefficient block** at a time,
//!    takes the key block `(a_i[k], b_i[k])` for all digits `i` once and uses it for every
//!    pair of the group (coefficient-major key reuse, as the FPGA does across its batch):
//!    `c0 = x0·y0`, `c1 = x0·y1 + x1·y0`, `relin_c0 = c0 + Σ_i b_i·d_i`,
//!    `relin_c1 = c1 + Σ_i a_i·d_i`, the sums accumulated unreduced in 64 bits.
//!
//! A group equal to the batch streams the key exactly once per tower and block for the
//! whole batch (on one core); smaller groups re-read the key once per group but keep the
//! digit buffer in the core's L2 cache and give every core work. Scratch buffers are kept
//! per worker thread and reused across batches.

use std::cell::RefCell;

use rayon::prelude::*;
use zeppelin_ring::checks::first_unreduced;
use zeppelin_ring::{DefaultBackend, NttBackend, RingError, RnsKernels};

use crate::context::{Ciphertext, RelinKey, RnsContext};
use crate::error::{CiphertextId, EvalMultError, Factor, Input, Result};

/// Tuning knobs; results never depend on them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EngineOptions {
    /// Pairs that share one pass over the evaluation key (per tower); also the unit of work
    /// given to a core.
    pub group: usize,
    /// Coefficients per key block (a multiple of 16 keeps the SIMD kernels on full vectors).
    pub block: usize,
}

impl Default for EngineOptions {
    fn default() -> Self {
        // Group 2: the digits, coefficients and key of one tower stay in a 2 MiB L2
        // (group 4 spills; measured with `--example transform_budget`).
        Self {
            group: 2,
            block: 256,
        }
    }
}

/// Outputs of a batch: `c0[ct·L·n ..][.. L·n]` is `relin_c0` of pair `ct`, tower-major
/// (likewise `c1`). Reusable across batches ([`Engine::eval_mult_into`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RelinBatch {
    ring_dim: usize,
    towers: usize,
    batch: usize,
    c0: Vec<u32>,
    c1: Vec<u32>,
}

impl RelinBatch {
    /// An empty batch, to be filled by [`Engine::eval_mult_into`].
    pub fn new() -> Self {
        Self::default()
    }

    /// Number of results.
    pub fn len(&self) -> usize {
        self.batch
    }

    /// Whether the batch is empty.
    pub fn is_empty(&self) -> bool {
        self.batch == 0
    }

    /// Component `component` (0 or 1) of result `ct`, tower-major (`L·n` residues).
    pub fn component(&self, ct: usize, component: usize) -> &[u32] {
        let data = if component == 0 { &self.c0 } else { &self.c1 };
        let len = self.towers * self.ring_dim;
        &data[ct * len..(ct + 1) * len]
    }

    /// Tower `tower` of component `component` (0 or 1) of result `ct`.
    pub fn tower(&self, ct: usize, component: usize, tower: usize) -> &[u32] {
        &self.component(ct, component)[tower * self.ring_dim..(tower + 1) * self.ring_dim]
    }

    /// Result `ct` as a [`Ciphertext`].
    pub fn ciphertext(&self, ct: usize) -> Ciphertext {
        Ciphertext {
            c0: self.component(ct, 0).to_vec(),
            c1: self.component(ct, 1).to_vec(),
        }
    }

    /// All results as [`Ciphertext`]s.
    pub fn to_ciphertexts(&self) -> Vec<Ciphertext> {
        (0..self.batch).map(|ct| self.ciphertext(ct)).collect()
    }

    fn reset(&mut self, ring_dim: usize, towers: usize, batch: usize) {
        self.ring_dim = ring_dim;
        self.towers = towers;
        self.batch = batch;
        // Every residue is overwritten; resizing keeps the allocation of earlier batches.
        self.c0.resize(batch * towers * ring_dim, 0);
        self.c1.resize(batch * towers * ring_dim, 0);
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
            Input::Digits,
            towers,
            digits.len(),
            "digits",
        ));
    }
    let mut out = Vec::with_capacity(towers * towers * n);
    for k in 0..towers {
        for (i, digit) in digits.iter().enumerate() {
            ctx.check_poly(Input::Digit { digit: i }, digit)?;
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
    /// `key_a[(k·L + i)·(n + ROW_PAD) + j]`: digit `i`'s `a` key, tower `k`, Montgomery form.
    key_a: Vec<u32>,
    /// Same for `b`.
    key_b: Vec<u32>,
    options: EngineOptions,
    /// The arithmetic backend, chosen once at construction.
    backend: DefaultBackend,
}

/// The arithmetic backend of `zeppelin_ring` the engine runs on: the one named by the
/// environment variable `ZEPPELIN_BACKEND` (`portable`, `avx2`, `avx512`, `auto`), so that
/// tests and benchmarks can run the whole engine on each backend the CPU has, else the widest
/// one this CPU has. Errors: a named backend this CPU cannot run, or an unknown name.
pub fn backend_from_env() -> Result<DefaultBackend> {
    match std::env::var(zeppelin_ring::BACKEND_ENV) {
        Ok(name) => Ok(zeppelin_ring::default_backend_named(&name)?),
        Err(std::env::VarError::NotPresent) => Ok(zeppelin_ring::default_backend()),
        Err(std::env::VarError::NotUnicode(_)) => Err(RingError::BackendUnknown.into()),
    }
}

impl Engine {
    /// Validates `key` against `ctx` and prepares it (tower-major, Montgomery form).
    pub fn new(ctx: RnsContext, key: &RelinKey) -> Result<Self> {
        Self::with_options(ctx, key, EngineOptions::default())
    }

    /// [`Engine::new`] with explicit tuning. The backend is [`backend_from_env`]'s.
    pub fn with_options(ctx: RnsContext, key: &RelinKey, options: EngineOptions) -> Result<Self> {
        Self::with_backend(ctx, key, options, backend_from_env()?)
    }

    /// [`Engine::with_options`] on an explicit arithmetic backend.
    pub fn with_backend(
        ctx: RnsContext,
        key: &RelinKey,
        options: EngineOptions,
        backend: DefaultBackend,
    ) -> Result<Self> {
        key.check(&ctx)?;
        let (n, towers) = (ctx.ring_dim(), ctx.towers());
        let row = n + ROW_PAD;
        let prepare = |part: &[Vec<u32>]| {
            let mut out = vec![0u32; towers * towers * row];
            for (k, m) in ctx.moduli().iter().enumerate() {
                for (i, digit) in part.iter().enumerate() {
                    let dst = &mut out[(k * towers + i) * row..][..n];
                    for (d, &v) in dst.iter_mut().zip(&digit[k * n..(k + 1) * n]) {
                        *d = m.to_mont(v);
                    }
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
            backend,
        })
    }

    /// The arithmetic backend in use (its `name()` says which).
    pub fn backend(&self) -> DefaultBackend {
        self.backend
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

    /// Like [`Engine::eval_mult`], results in one [`RelinBatch`].
    pub fn eval_mult_batch(&self, pairs: &[(Ciphertext, Ciphertext)]) -> Result<RelinBatch> {
        let mut out = RelinBatch::new();
        self.eval_mult_into(pairs, &mut out)?;
        Ok(out)
    }

    /// Like [`Engine::eval_mult_batch`], reusing `out`'s memory. On error `out` holds no
    /// partial results (it is emptied).
    pub fn eval_mult_into(
        &self,
        pairs: &[(Ciphertext, Ciphertext)],
        out: &mut RelinBatch,
    ) -> Result<()> {
        self.run(pairs, DigitSource::Decompose, out)
    }

    /// Tensor and key switch with digits supplied by the caller (what the FPGA does: the
    /// decomposition happens elsewhere). `digits[ct]` is in [`TowerMajorDigits`] order.
    pub fn relinearize_with_digits(
        &self,
        pairs: &[(Ciphertext, Ciphertext)],
        digits: &[TowerMajorDigits],
    ) -> Result<RelinBatch> {
        let mut out = RelinBatch::new();
        self.relinearize_with_digits_into(pairs, digits, &mut out)?;
        Ok(out)
    }

    /// Like [`Engine::relinearize_with_digits`], reusing `out`'s memory.
    pub fn relinearize_with_digits_into(
        &self,
        pairs: &[(Ciphertext, Ciphertext)],
        digits: &[TowerMajorDigits],
        out: &mut RelinBatch,
    ) -> Result<()> {
        if digits.len() != pairs.len() {
            out.reset(0, 0, 0);
            return Err(EvalMultError::shape(
                Input::DigitSets,
                pairs.len(),
                digits.len(),
                "pairs",
            ));
        }
        self.run(pairs, DigitSource::Given(digits), out)
    }

    fn run(
        &self,
        pairs: &[(Ciphertext, Ciphertext)],
        source: DigitSource<'_>,
        out: &mut RelinBatch,
    ) -> Result<()> {
        let (n, towers) = (self.ctx.ring_dim(), self.ctx.towers());
        out.reset(n, towers, pairs.len());
        let group = self.options.group;
        let len = towers * n;
        let result = out
            .c0
            .par_chunks_mut(group * len)
            .zip(out.c1.par_chunks_mut(group * len))
            .enumerate()
            .try_for_each(|(g, (out0, out1))| {
                let first = g * group;
                let members = &pairs[first..first + out0.len() / len];
                SCRATCH.with(|scratch| {
                    let mut scratch = scratch.borrow_mut();
                    self.run_group(first, members, source, &mut scratch, out0, out1)
                })
            });
        if result.is_err() {
            out.reset(0, 0, 0);
        }
        result
    }

    /// One group: validation, `c2` to coefficient form, then tower by tower the digits and
    /// the blocked multiply-accumulate.
    fn run_group(
        &self,
        first: usize,
        members: &[(Ciphertext, Ciphertext)],
        source: DigitSource<'_>,
        scratch: &mut Scratch,
        out0: &mut [u32],
        out1: &mut [u32],
    ) -> Result<()> {
        let (n, towers) = (self.ctx.ring_dim(), self.ctx.towers());
        let len = towers * n;
        // Digit and key rows are padded by one cache line: rows 2^k bytes apart would all
        // fall into the same L1 set, and the multiply-accumulate walks 3·L rows at once.
        let row = n + ROW_PAD;
        let span = towers * row;
        let block = self.options.block;
        for (g, (x, y)) in members.iter().enumerate() {
            let pair = first + g;
            x.check(
                &self.ctx,
                CiphertextId::Pair {
                    pair,
                    factor: Factor::X,
                },
            )?;
            y.check(
                &self.ctx,
                CiphertextId::Pair {
                    pair,
                    factor: Factor::Y,
                },
            )?;
        }
        let Scratch {
            coefficients,
            digits,
        } = scratch;
        match source {
            DigitSource::Decompose => {
                coefficients.resize(members.len() * len, 0);
                for ((x, y), c2) in members.iter().zip(coefficients.chunks_exact_mut(len)) {
                    for (k, tower) in c2.chunks_exact_mut(n).enumerate() {
                        let range = k * n..(k + 1) * n;
                        self.backend.pointwise_mul(
                            &self.ctx.moduli()[k],
                            &x.c1[range.clone()],
                            &y.c1[range],
                            tower,
                        )?;
                        self.backend.inverse(&self.ctx.table(k), tower)?;
                    }
                }
            }
            DigitSource::Given(sets) => {
                for (g, set) in sets[first..first + members.len()].iter().enumerate() {
                    self.check_digit_set(first + g, set)?;
                }
            }
        }
        digits.resize(members.len() * span, 0);
        for k in 0..towers {
            let m = &self.ctx.moduli()[k];
            for (g, (x, y)) in members.iter().enumerate() {
                let rows = digits[g * span..(g + 1) * span].chunks_exact_mut(row);
                if let DigitSource::Given(sets) = source {
                    let given = sets[first + g][k * len..(k + 1) * len].chunks_exact(n);
                    for (dst, src) in rows.zip(given) {
                        dst[..n].copy_from_slice(src);
                    }
                } else {
                    let c2 = &coefficients[g * len..(g + 1) * len];
                    for (i, digit) in rows.map(|r| &mut r[..n]).enumerate() {
                        if i == k {
                            let range = k * n..(k + 1) * n;
                            self.backend.pointwise_mul(
                                m,
                                &x.c1[range.clone()],
                                &y.c1[range],
                                digit,
                            )?;
                        } else {
                            self.backend.lift_centered(
                                &c2[i * n..(i + 1) * n],
                                &self.ctx.moduli()[i],
                                m,
                                digit,
                            )?;
                            self.backend.forward(&self.ctx.table(k), digit)?;
                        }
                    }
                }
            }
            let key_a = &self.key_a[k * span..(k + 1) * span];
            let key_b = &self.key_b[k * span..(k + 1) * span];
            let tower = k * n;
            for start in (0..n).step_by(block) {
                let width = block.min(n - start);
                let range = tower + start..tower + start + width;
                for (g, (x, y)) in members.iter().enumerate() {
                    let tower_digits = &digits[g * span..(g + 1) * span];
                    let at = g * len + range.start..g * len + range.end;
                    self.backend.tensor_key_switch_block(
                        m,
                        towers,
                        row,
                        &tower_digits[start..],
                        &key_a[start..],
                        &key_b[start..],
                        [&x.c0[range.clone()], &x.c1[range.clone()]],
                        [&y.c0[range.clone()], &y.c1[range.clone()]],
                        &mut out1[at.clone()],
                        &mut out0[at],
                    )?;
                }
            }
        }
        Ok(())
    }

    fn check_digit_set(&self, ct: usize, set: &[u32]) -> Result<()> {
        let (n, towers) = (self.ctx.ring_dim(), self.ctx.towers());
        if set.len() != towers * towers * n {
            return Err(EvalMultError::shape(
                Input::PairDigits { pair: ct },
                towers * towers * n,
                set.len(),
                "residues",
            ));
        }
        for (k, tower_digits) in set.chunks_exact(towers * n).enumerate() {
            let q = self.ctx.moduli()[k].value();
            if let Some(index) = first_unreduced(tower_digits, q) {
                return Err(EvalMultError::ResidueOutOfRange {
                    what: Input::PairDigit {
                        pair: ct,
                        digit: index / n,
                    },
                    tower: k,
                    index: index % n,
                    value: tower_digits[index],
                    modulus: q,
                });
            }
        }
        Ok(())
    }
}

/// Padding of every digit and key row, in residues (one 64-byte cache line).
const ROW_PAD: usize = 16;

/// Where the digits of a run come from.
#[derive(Clone, Copy)]
enum DigitSource<'a> {
    /// Decomposed inside the engine.
    Decompose,
    /// Supplied by the caller, one [`TowerMajorDigits`] per pair.
    Given(&'a [TowerMajorDigits]),
}

/// Per-thread buffers, kept across batches so that steady-state batches allocate nothing.
#[derive(Default)]
struct Scratch {
    coefficients: Vec<u32>,
    digits: Vec<u32>,
}

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
}
