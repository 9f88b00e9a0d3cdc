//! The tables and passes of BFV multiplication by BEHZ (see [`crate::behz`] for the
//! algorithm and why our auxiliary primes give SEAL's bytes): per-level constants, the
//! extension of the inputs, the tensor, and the floor and conversion back.

use std::sync::OnceLock;

use zeppelin_ring::modulus::is_prime;
use zeppelin_ring::{
    default_backend, DefaultBackend, Modulus, Mont, NttBackend, NttTable, RnsKernels,
};
use zeppelin_seal::{Ciphertext, Level, SealContext, SealError};

use crate::error::{EvalError, Result};

/// SEAL's largest ciphertext size (`SEAL_CIPHERTEXT_SIZE_MAX`).
pub const CIPHERTEXT_SIZE_MAX: usize = 16;

/// Most products of a tensor coefficient: `min(size_a, size_b)` with `size_a + size_b − 1 ≤ 16`.
const MAX_TENSOR_TERMS: usize = CIPHERTEXT_SIZE_MAX / 2;

/// `log2(m̃)`: SEAL's `m_tilde` is `2^32`, so arithmetic mod `m̃` is wrapping `u32` arithmetic.
const M_TILDE_BITS: u32 = 32;

/// Our auxiliary primes are at least this large (and below `2^30`).
const AUX_PRIME_MIN: u32 = 3 << 28;

/// The per-level tables of every level of a context, built on first use.
pub(crate) struct BehzCache {
    levels: Vec<OnceLock<LevelTables>>,
    ntt: DefaultBackend,
}

impl BehzCache {
    /// An empty cache for `ctx`'s levels.
    pub(crate) fn new(ctx: &SealContext) -> Self {
        Self {
            levels: ctx.levels().iter().map(|_| OnceLock::new()).collect(),
            ntt: default_backend(),
        }
    }
}

impl BehzCache {
    /// The tables of `level` (of `ctx`, the context the cache was made for), built on first
    /// use.
    fn tables(&self, ctx: &SealContext, level: &Level) -> Result<&LevelTables> {
        let index = ctx
            .levels()
            .iter()
            .position(|l| l.parms_id == level.parms_id)
            .ok_or(SealError::UnknownParmsId {
                what: "Ciphertext",
                found: level.parms_id,
            })?;
        let cell = self.levels.get(index).ok_or(SealError::UnknownParmsId {
            what: "Ciphertext",
            found: level.parms_id,
        })?;
        if let Some(tables) = cell.get() {
            return Ok(tables);
        }
        let built = LevelTables::new(ctx, level, None)?;
        Ok(cell.get_or_init(|| built))
    }

    /// `a·b` at `level` (`a²` without `b`), operands already checked to be at `level`.
    pub(crate) fn multiply(
        &self,
        ctx: &SealContext,
        level: &Level,
        a: &Ciphertext,
        b: Option<&Ciphertext>,
    ) -> Result<Ciphertext> {
        multiply_with(self.tables(ctx, level)?, &self.ntt, a, b, level)
    }
}

impl std::fmt::Debug for BehzCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let built = self.levels.iter().filter(|c| c.get().is_some()).count();
        write!(
            f,
            "BehzCache {{ levels: {}, built: {built} }}",
            self.levels.len()
        )
    }
}

/// `log2` of the bound on `|y|` (the scaled tensor) at a level with primes `q`, plus one bit
/// of margin (see the module documentation): `log2(t·s·n·X²/q + k)` with `s = 8` and
/// `X = q/2 + k·q/2^32`; the auxiliary base's reach must exceed it.
pub fn aux_bits_needed(n: usize, t: u64, primes: &[u64]) -> f64 {
    let k = primes.len() as f64;
    let log_q: f64 = primes.iter().map(|&q| (q as f64).log2()).sum();
    let x_over_half_q = 1.0 + 2.0 * k / 2f64.powi(M_TILDE_BITS as i32);
    (t as f64).log2() + (MAX_TENSOR_TERMS as f64).log2() + (n as f64).log2() + log_q - 2.0
        + 2.0 * x_over_half_q.log2()
        + 1.0
}

/// Everything one level's multiplication needs: NTT tables of its primes and of `Bsk`, and
/// the conversion constants, each with the step's scalars folded in.
struct LevelTables {
    n: usize,
    /// The level's data primes.
    q: Vec<NttTable<Vec<u32>>>,
    /// `B` (all but the last) and `m_sk` (the last).
    bsk: Vec<NttTable<Vec<u32>>>,
    /// Step 1: `m̃·(q/q_i)^-1 mod q_i`.
    lift_scale: Vec<Mont>,
    /// Steps 1–2, per prime `p` of `Bsk`, the weights of the rows `y_0..y_k, r_lo, r_hi,
    /// r_sign` (`r = r_lo + 2^16·r_hi − 2^32·r_sign`): `(q/q_i)·m̃^-1`, `q·m̃^-1`,
    /// `q·2^16·m̃^-1`, `−q·2^32·m̃^-1 mod p`, so that one sum is `(v + q·r)·m̃^-1 mod p`.
    lift_weights: Vec<Vec<Mont>>,
    /// Step 2: `(q/q_i) mod 2^32`.
    lift_weights_m_tilde: Vec<u32>,
    /// Step 2: `−q^-1 mod 2^32`.
    neg_inv_q_m_tilde: u32,
    /// Steps 6–7: `t·(q/q_i)^-1 mod q_i`.
    floor_scale: Vec<Mont>,
    /// Steps 6–7: `[p][i] = −(q/q_i)·q^-1 mod p` for `i < k`, then `t·q^-1 mod p`.
    floor_weights: Vec<Vec<Mont>>,
    /// Step 8: `(B/b_j)^-1 mod b_j`.
    sk_scale: Vec<Mont>,
    /// Step 8: `[j] = (B/b_j)·B^-1 mod m_sk`, then `−B^-1 mod m_sk` (the weight of `y_msk`).
    sk_alpha_weights: Vec<Mont>,
    /// Step 8: `[i][j] = (B/b_j) mod q_i`, then `−B mod q_i` (the weight of `α`).
    sk_weights: Vec<Vec<Mont>>,
}

/// Our auxiliary primes for degree `n`: NTT-friendly, in `[AUX_PRIME_MIN, 2^30)`, largest
/// first, none of them a prime of the context or `t`; `count` of them.
fn aux_primes(ctx: &SealContext, count: usize) -> Result<Vec<u32>> {
    let n = ctx.n() as u64;
    let step = 2 * n;
    let mut found = Vec::with_capacity(count);
    let top = (1u64 << 30) - 1;
    let mut candidate = top - (top - 1) % step;
    while found.len() < count && candidate >= u64::from(AUX_PRIME_MIN) {
        let c = candidate as u32;
        let used =
            ctx.parms().coeff_modulus.contains(&candidate) || ctx.plain_modulus() == candidate;
        if !used && is_prime(c) {
            found.push(c);
        }
        candidate -= step;
    }
    if found.len() < count {
        return Err(EvalError::AuxiliaryPrimes {
            n: ctx.n(),
            needed: count,
            found: found.len(),
        });
    }
    Ok(found)
}

/// `Π_{l ≠ skip} primes[l] mod m`.
fn product_mod(m: &Modulus, primes: &[u32], skip: Option<usize>) -> u32 {
    primes
        .iter()
        .enumerate()
        .filter(|&(l, _)| Some(l) != skip)
        .fold(1 % m.value(), |acc, (_, &p)| m.mul(acc, m.reduce_u32(p)))
}

/// `Π_{l ≠ skip} primes[l] mod 2^32`.
fn product_mod_2_32(primes: &[u32], skip: Option<usize>) -> u32 {
    primes
        .iter()
        .enumerate()
        .filter(|&(l, _)| Some(l) != skip)
        .fold(1u32, |acc, (_, &p)| acc.wrapping_mul(p))
}

fn inverse(m: &Modulus, a: u32) -> Result<u32> {
    m.inv(a)
        .ok_or(EvalError::NotInvertible { modulus: m.value() })
}

impl LevelTables {
    /// The tables of `level`, with the fewest auxiliary primes the bound allows, or `b_count`
    /// primes in `B` when given (tests).
    fn new(ctx: &SealContext, level: &Level, b_count: Option<usize>) -> Result<Self> {
        let n = ctx.n();
        let t = ctx.plain_modulus();
        let mut q_primes = Vec::with_capacity(level.coeff_modulus.len());
        for &p in &level.coeff_modulus {
            q_primes.push(u32::try_from(p).map_err(|_| SealError::PrimeTooWide { prime: p })?);
        }
        let t32 = u32::try_from(t).map_err(|_| SealError::PrimeTooWide { prime: t })?;
        // Enough primes for the bound (each is above 2^29.58, so count by their own bits).
        let needed_bits = aux_bits_needed(n, t, &level.coeff_modulus);
        let pool = aux_primes(ctx, 64.min(4 + (needed_bits / 29.0) as usize + 1))?;
        // The reach of step 8 with `b` primes in B and the next one as m_sk (see the module
        // documentation): log2(B·((m_sk−1)/2 − b)).
        let reach = |b: usize| -> f64 {
            let log_b: f64 = pool[..b].iter().map(|&p| f64::from(p).log2()).sum();
            log_b + (f64::from((pool[b] - 1) / 2) - b as f64).log2()
        };
        let b_len = match b_count {
            Some(c) => c,
            None => (1..pool.len()).find(|&b| reach(b) > needed_bits).ok_or(
                EvalError::AuxiliaryPrimes {
                    n,
                    needed: pool.len() + 1,
                    found: pool.len(),
                },
            )?,
        };
        if b_len == 0 || b_len + 1 > pool.len() {
            return Err(EvalError::AuxiliaryPrimes {
                n,
                needed: b_len + 1,
                found: pool.len(),
            });
        }
        let b_primes = &pool[..b_len];
        let bsk_primes = &pool[..=b_len];
        let m_sk = Modulus::new(pool[b_len]).map_err(SealError::from)?;

        let q: Vec<NttTable<Vec<u32>>> = q_primes
            .iter()
            .map(|&p| NttTable::new_vec(p, n))
            .collect::<std::result::Result<_, _>>()
            .map_err(SealError::from)?;
        let bsk: Vec<NttTable<Vec<u32>>> = bsk_primes
            .iter()
            .map(|&p| NttTable::new_vec(p, n))
            .collect::<std::result::Result<_, _>>()
            .map_err(SealError::from)?;
        let q_mods: Vec<Modulus> = q.iter().map(|t| *t.modulus()).collect();
        let bsk_mods: Vec<Modulus> = bsk.iter().map(|t| *t.modulus()).collect();
        let k = q_primes.len();

        let two_32 = |m: &Modulus| m.reduce_u64(1 << M_TILDE_BITS);
        let mut lift_scale = Vec::with_capacity(k);
        let mut floor_scale = Vec::with_capacity(k);
        for (i, qi) in q_mods.iter().enumerate() {
            let q_hat_inv = inverse(qi, product_mod(qi, &q_primes, Some(i)))?;
            lift_scale.push(qi.mont(qi.mul(two_32(qi), q_hat_inv)));
            floor_scale.push(qi.mont(qi.mul(qi.reduce_u32(t32), q_hat_inv)));
        }
        let mut lift_weights = Vec::with_capacity(bsk_mods.len());
        let mut floor_weights = Vec::with_capacity(bsk_mods.len());
        for p in &bsk_mods {
            let q_mod_p = product_mod(p, &q_primes, None);
            let inv_q = inverse(p, q_mod_p)?;
            let inv_m_tilde = inverse(p, two_32(p))?;
            let q_hats: Vec<u32> = (0..k).map(|i| product_mod(p, &q_primes, Some(i))).collect();
            let mut lw: Vec<Mont> = q_hats
                .iter()
                .map(|&h| p.mont(p.mul(h, inv_m_tilde)))
                .collect();
            let q_over_m = p.mul(q_mod_p, inv_m_tilde);
            lw.push(p.mont(q_over_m));
            lw.push(p.mont(p.mul(q_over_m, p.reduce_u32(1 << 16))));
            lw.push(p.mont(p.neg(p.mul(q_over_m, two_32(p)))));
            let mut fw: Vec<Mont> = q_hats
                .iter()
                .map(|&h| p.mont(p.neg(p.mul(h, inv_q))))
                .collect();
            fw.push(p.mont(p.mul(p.reduce_u32(t32), inv_q)));
            lift_weights.push(lw);
            floor_weights.push(fw);
        }
        let lift_weights_m_tilde = (0..k)
            .map(|i| product_mod_2_32(&q_primes, Some(i)))
            .collect();
        let q_mod_2_32 = product_mod_2_32(&q_primes, None);
        // q is odd, so it is invertible mod 2^32 (Newton: each step doubles the correct bits).
        let mut inv = q_mod_2_32;
        for _ in 0..5 {
            inv = inv.wrapping_mul(2u32.wrapping_sub(q_mod_2_32.wrapping_mul(inv)));
        }
        let neg_inv_q_m_tilde = inv.wrapping_neg();

        let mut sk_scale = Vec::with_capacity(b_len);
        for (j, b) in bsk_mods[..b_len].iter().enumerate() {
            sk_scale.push(b.mont(inverse(b, product_mod(b, b_primes, Some(j)))?));
        }
        let inv_b_msk = inverse(&m_sk, product_mod(&m_sk, b_primes, None))?;
        let mut sk_alpha_weights: Vec<Mont> = (0..b_len)
            .map(|j| m_sk.mont(m_sk.mul(product_mod(&m_sk, b_primes, Some(j)), inv_b_msk)))
            .collect();
        sk_alpha_weights.push(m_sk.mont(m_sk.neg(inv_b_msk)));
        let sk_weights = q_mods
            .iter()
            .map(|qi| {
                let mut w: Vec<Mont> = (0..b_len)
                    .map(|j| qi.mont(product_mod(qi, b_primes, Some(j))))
                    .collect();
                w.push(qi.mont(qi.neg(product_mod(qi, b_primes, None))));
                w
            })
            .collect();
        Ok(Self {
            n,
            q,
            bsk,
            lift_scale,
            lift_weights,
            lift_weights_m_tilde,
            neg_inv_q_m_tilde,
            floor_scale,
            floor_weights,
            sk_scale,
            sk_alpha_weights,
            sk_weights,
        })
    }

    fn k(&self) -> usize {
        self.q.len()
    }

    /// Primes of `q ∪ Bsk`, the rows of an extended polynomial.
    fn width(&self) -> usize {
        self.q.len() + self.bsk.len()
    }

    fn table(&self, row: usize) -> &NttTable<Vec<u32>> {
        if row < self.q.len() {
            &self.q[row]
        } else {
            &self.bsk[row - self.q.len()]
        }
    }

    /// Steps 1–3 for one polynomial: `src` (its `k` residue rows, checked below their primes)
    /// into `dst` (`width()` rows: the residues, then the lifted residues mod `Bsk`), every
    /// row then in NTT form. `scratch` holds `(k + 3)·n` words.
    fn extend_to_ntt(
        &self,
        ntt: &DefaultBackend,
        src: &[u64],
        dst: &mut [u32],
        scratch: &mut [u32],
    ) -> Result<()> {
        let (n, k) = (self.n, self.k());
        let (dst_q, dst_bsk) = dst.split_at_mut(k * n);
        for (i, (row, out)) in src
            .chunks_exact(n)
            .zip(dst_q.chunks_exact_mut(n))
            .enumerate()
        {
            let q = u64::from(self.q[i].modulus().value());
            for (j, (o, &v)) in out.iter_mut().zip(row).enumerate() {
                if v >= q {
                    return Err(SealError::CoefficientOutOfRange {
                        what: "ciphertext",
                        index: i * n + j,
                        modulus: q,
                    }
                    .into());
                }
                *o = v as u32;
            }
        }
        let (y, r) = scratch[..(k + 3) * n].split_at_mut(k * n);
        // Step 1: y_i = [x_i·m̃·(q/q_i)^-1]_{q_i}.
        for (i, (yrow, xrow)) in y.chunks_exact_mut(n).zip(dst_q.chunks_exact(n)).enumerate() {
            ntt.base_convert(self.q[i].modulus(), &[xrow], &[self.lift_scale[i]], yrow)
                .map_err(SealError::from)?;
        }
        // Step 2: r = [−v·q^-1]_{m̃} (wrapping u32 arithmetic), split into rows below 2^16:
        // r = r_lo + 2^16·r_hi − 2^32·r_sign, r centred (its top half negative).
        let (r_lo, rest) = r.split_at_mut(n);
        let (r_hi, r_sign) = rest.split_at_mut(n);
        r_lo.fill(0);
        for (i, yrow) in y.chunks_exact(n).enumerate() {
            let w = self.lift_weights_m_tilde[i];
            for (rv, &yv) in r_lo.iter_mut().zip(yrow) {
                *rv = rv.wrapping_add(yv.wrapping_mul(w));
            }
        }
        for ((lo, hi), sign) in r_lo.iter_mut().zip(r_hi.iter_mut()).zip(r_sign.iter_mut()) {
            let rv = lo.wrapping_mul(self.neg_inv_q_m_tilde);
            *lo = rv & 0xffff;
            *hi = rv >> 16;
            *sign = rv >> 31;
        }
        // x' = (v + q·r)·m̃^-1 mod p: one weighted sum of the k + 3 rows per prime of Bsk.
        let mut rows: Vec<&[u32]> = y.chunks_exact(n).collect();
        rows.extend([&*r_lo, &*r_hi, &*r_sign]);
        for (l, out) in dst_bsk.chunks_exact_mut(n).enumerate() {
            ntt.base_convert(self.bsk[l].modulus(), &rows, &self.lift_weights[l], out)
                .map_err(SealError::from)?;
        }
        for (row, chunk) in dst.chunks_exact_mut(n).enumerate() {
            ntt.forward(&self.table(row).view(), chunk)
                .map_err(SealError::from)?;
        }
        Ok(())
    }

    /// Scratch words [`Self::extend_to_ntt`] and [`Self::floor_and_convert`] need.
    fn scratch_len(&self) -> usize {
        let b = self.bsk.len();
        self.n * (self.k() + 3).max(2 * self.k() + 2 * b)
    }

    /// Steps 6–8 for one tensor polynomial `src` (`width()` rows in coefficient form): the
    /// result's `k` rows into `dst`. `scratch` holds [`Self::scratch_len`] words.
    fn floor_and_convert(
        &self,
        ntt: &DefaultBackend,
        src: &[u32],
        dst: &mut [u64],
        scratch: &mut [u32],
    ) -> Result<()> {
        let (n, k) = (self.n, self.k());
        let b_len = self.bsk.len() - 1;
        let (src_q, src_bsk) = src.split_at(k * n);
        let (z, rest) = scratch.split_at_mut(k * n);
        let (ybsk, rest) = rest.split_at_mut((b_len + 1) * n);
        let (u, rest) = rest.split_at_mut(b_len * n);
        let (alpha, rest) = rest.split_at_mut(n);
        let alpha_q = &mut rest[..k * n];
        let map = |e| EvalError::from(SealError::from(e));
        // z_i = [t·T_i·(q/q_i)^-1]_{q_i} (step 6's t folded into step 7's conversion).
        for (i, (zrow, trow)) in z.chunks_exact_mut(n).zip(src_q.chunks_exact(n)).enumerate() {
            ntt.base_convert(self.q[i].modulus(), &[trow], &[self.floor_scale[i]], zrow)
                .map_err(map)?;
        }
        // Step 7: y_p = (t·T_p − Σ z_i·(q/q_i))·q^-1 mod p, T_p as the last row.
        let mut rows: Vec<&[u32]> = z.chunks_exact(n).collect();
        rows.push(&[]);
        for (l, (yrow, trow)) in ybsk
            .chunks_exact_mut(n)
            .zip(src_bsk.chunks_exact(n))
            .enumerate()
        {
            rows[k] = trow;
            ntt.base_convert(self.bsk[l].modulus(), &rows, &self.floor_weights[l], yrow)
                .map_err(map)?;
        }
        // Step 8: u_j = [y_j·(B/b_j)^-1]_{b_j}.
        for (j, (urow, yrow)) in u.chunks_exact_mut(n).zip(ybsk.chunks_exact(n)).enumerate() {
            ntt.base_convert(self.bsk[j].modulus(), &[yrow], &[self.sk_scale[j]], urow)
                .map_err(map)?;
        }
        // α = [(Σ u_j·(B/b_j) − y_msk)·B^-1]_{m_sk}.
        let m_sk = self.bsk[b_len].modulus();
        let mut rows: Vec<&[u32]> = u.chunks_exact(n).collect();
        rows.push(&ybsk[b_len * n..]);
        ntt.base_convert(m_sk, &rows, &self.sk_alpha_weights, alpha)
            .map_err(map)?;
        // out_i = Σ u_j·(B/b_j) − α·B mod q_i, with α centred (SEAL's "α > m_sk/2 is
        // negative") and lifted to q_i as the last row.
        for (i, arow) in alpha_q.chunks_exact_mut(n).enumerate() {
            ntt.lift_centered(alpha, m_sk, self.q[i].modulus(), arow)
                .map_err(map)?;
        }
        let mut out = vec![0u32; n];
        for (i, (drow, arow)) in dst
            .chunks_exact_mut(n)
            .zip(alpha_q.chunks_exact(n))
            .enumerate()
        {
            let qi = self.q[i].modulus();
            rows[b_len] = arow;
            ntt.base_convert(qi, &rows, &self.sk_weights[i], &mut out)
                .map_err(map)?;
            for (d, &o) in drow.iter_mut().zip(&out) {
                *d = u64::from(o);
            }
        }
        Ok(())
    }
}

/// The product of `a` and `b` (`a` with itself when `b` is `None`).
fn multiply_with(
    tables: &LevelTables,
    ntt: &DefaultBackend,
    a: &Ciphertext,
    b: Option<&Ciphertext>,
    level: &Level,
) -> Result<Ciphertext> {
    let (n, k, width) = (tables.n, tables.k(), tables.width());
    let size_a = a.size;
    let size_b = b.map_or(size_a, |b| b.size);
    for size in [size_a, size_b] {
        if size < 2 {
            return Err(EvalError::Size {
                operation: "multiply",
                size,
                expected: "at least 2",
            });
        }
    }
    let dest_size = size_a + size_b - 1;
    if dest_size > CIPHERTEXT_SIZE_MAX {
        return Err(EvalError::Size {
            operation: "multiply",
            size: dest_size,
            expected: "a product of size at most 16",
        });
    }
    let poly = width * n;
    let ext_len = |size: usize| size * poly;
    let needed = ext_len(size_a)
        + b.map_or(0, |b| ext_len(b.size))
        + dest_size * poly
        + tables.scratch_len();
    let data = WORKSPACE.with(|cell| -> Result<Vec<u64>> {
        let mut workspace = cell.take();
        if workspace.len() < needed {
            workspace.resize(needed, 0);
        }
        let result = tensor_and_convert(tables, ntt, a, b, dest_size, &mut workspace[..needed]);
        cell.set(workspace);
        result
    })?;
    // Every residue is reduced by construction: no second check.
    Ok(Ciphertext {
        parms_id: level.parms_id,
        is_ntt_form: false,
        size: dest_size,
        poly_modulus_degree: n,
        coeff_modulus_size: k,
        scale: a.scale,
        correction_factor: a.correction_factor,
        data,
    })
}

thread_local! {
    /// Each thread's working memory for products, kept between calls (hundreds of KiB per
    /// product: fresh allocations cost page faults every time).
    static WORKSPACE: std::cell::Cell<Vec<u32>> = const { std::cell::Cell::new(Vec::new()) };
}

/// Steps 1–8 of `a·b` (`a²` without `b`) in `workspace`: the product's residues.
fn tensor_and_convert(
    tables: &LevelTables,
    ntt: &DefaultBackend,
    a: &Ciphertext,
    b: Option<&Ciphertext>,
    dest_size: usize,
    workspace: &mut [u32],
) -> Result<Vec<u64>> {
    let (n, k, width) = (tables.n, tables.k(), tables.width());
    let poly = width * n;
    let (size_a, size_b) = (a.size, b.map_or(a.size, |b| b.size));
    let (ext_a, rest) = workspace.split_at_mut(size_a * poly);
    let (ext_b_own, rest) = rest.split_at_mut(b.map_or(0, |b| b.size * poly));
    let (tensor, scratch) = rest.split_at_mut(dest_size * poly);
    let map = |e| EvalError::from(SealError::from(e));
    let mut extend = |ct: &Ciphertext, ext: &mut [u32]| -> Result<()> {
        for (src, dst) in ct.data.chunks_exact(k * n).zip(ext.chunks_exact_mut(poly)) {
            tables.extend_to_ntt(ntt, src, dst, scratch)?;
        }
        Ok(())
    };
    extend(a, ext_a)?;
    if let Some(b) = b {
        extend(b, ext_b_own)?;
    }
    let ext_a = &*ext_a;
    let ext_b = if b.is_some() { &*ext_b_own } else { ext_a };

    // Step 4: dest[I] = Σ_{i + j = I} a_i ⊙ b_j, every row of q ∪ Bsk.
    for (index, dest) in tensor.chunks_exact_mut(poly).enumerate() {
        let first = index.saturating_sub(size_b - 1);
        let last = index.min(size_a - 1);
        for (step, i) in (first..=last).enumerate() {
            let j = index - i;
            for row in 0..width {
                let modulus = tables.table(row).modulus();
                let x = &ext_a[i * poly + row * n..i * poly + (row + 1) * n];
                let y = &ext_b[j * poly + row * n..j * poly + (row + 1) * n];
                let out = &mut dest[row * n..(row + 1) * n];
                if step == 0 {
                    ntt.pointwise_mul(modulus, x, y, out)
                } else {
                    ntt.pointwise_mul_add(modulus, x, y, out)
                }
                .map_err(map)?;
            }
        }
        // Step 5.
        for (row, chunk) in dest.chunks_exact_mut(n).enumerate() {
            ntt.inverse(&tables.table(row).view(), chunk).map_err(map)?;
        }
    }

    // Steps 6–8.
    let mut data = vec![0u64; dest_size * k * n];
    for (src, dst) in tensor.chunks_exact(poly).zip(data.chunks_exact_mut(k * n)) {
        tables.floor_and_convert(ntt, src, dst, scratch)?;
    }
    Ok(data)
}

#[cfg(test)]
mod tests {
    use super::*;

    use zeppelin_seal::EncryptionParameters;

    /// The bound's prime counts per level (3 data primes: 111 bits need B of 3 primes of
    /// about 30 bits and m_sk; 7 data primes at n = 8192: 220 bits need 7 and m_sk).
    #[test]
    fn each_level_takes_the_fewest_primes_above_the_bound() {
        let ctx4 =
            SealContext::new(EncryptionParameters::for_preset::<zeppelin::Seal4096>()).unwrap();
        let ctx8 =
            SealContext::new(EncryptionParameters::for_preset::<zeppelin::Seal8192>()).unwrap();
        for (ctx, k, b_len) in [(&ctx4, 3, 3), (&ctx4, 2, 2), (&ctx4, 1, 1), (&ctx8, 7, 7)] {
            let level = ctx.data_level_with(k).unwrap();
            let tables = LevelTables::new(ctx, level, None).unwrap();
            assert_eq!(tables.bsk.len(), b_len + 1, "{k} primes");
            let logs: Vec<f64> = tables
                .bsk
                .iter()
                .map(|t| f64::from(t.modulus().value()).log2())
                .collect();
            let needed = aux_bits_needed(ctx.n(), ctx.plain_modulus(), &level.coeff_modulus);
            let reach: f64 = logs.iter().sum::<f64>() - 1.0;
            let fewer = reach - logs[0];
            assert!(reach > needed && fewer <= needed, "{reach} {needed}");
            for t in &tables.bsk {
                let p = u64::from(t.modulus().value());
                assert!(!ctx.parms().coeff_modulus.contains(&p));
                assert_eq!((p - 1) % (2 * ctx.n() as u64), 0);
            }
        }
    }

    /// Every coefficient `(q−1)/2` (`≡ (q_i−1)/2 mod q_i`, as `q ≡ 0`): the tensor at its
    /// largest, `2·n·((q−1)/2)²` in the middle polynomial.
    fn extreme(ctx: &SealContext, level: &Level) -> Ciphertext {
        let n = ctx.n();
        let mut data = Vec::new();
        for _ in 0..2 {
            for &q in &level.coeff_modulus {
                data.extend(std::iter::repeat_n((q - 1) / 2, n));
            }
        }
        Ciphertext::new(level, n, 2, false, data).unwrap()
    }

    /// The known-bad variant: one auxiliary prime fewer than the bound asks for gives another
    /// result on the extreme input (which SEAL's test shows our default computes as SEAL
    /// does), so the test input reaches the range the bound protects.
    #[test]
    fn one_auxiliary_prime_fewer_changes_the_extreme_product() {
        let ctx =
            SealContext::new(EncryptionParameters::for_preset::<zeppelin::Seal4096>()).unwrap();
        let ntt = default_backend();
        for k in [3, 2, 1] {
            let level = ctx.data_level_with(k).unwrap();
            let good = LevelTables::new(&ctx, level, None).unwrap();
            let b_len = good.bsk.len() - 1;
            if b_len == 1 {
                continue; // B cannot be empty
            }
            let short = LevelTables::new(&ctx, level, Some(b_len - 1)).unwrap();
            let a = extreme(&ctx, level);
            let right = multiply_with(&good, &ntt, &a, None, level).unwrap();
            let wrong = multiply_with(&short, &ntt, &a, None, level).unwrap();
            assert_ne!(right, wrong, "{k} primes");
            // Small coefficients (the same integer in every prime's row) stay far inside
            // both ranges: the same result.
            let mut small = a.clone();
            let n = ctx.n();
            for (i, v) in small.data.iter_mut().enumerate() {
                let (poly, coeff) = (i / (k * n), i % n);
                *v = ((poly * n + coeff) as u64 * 7919) % 1000;
            }
            assert_eq!(
                multiply_with(&good, &ntt, &small, None, level).unwrap(),
                multiply_with(&short, &ntt, &small, None, level).unwrap(),
                "{k} primes"
            );
        }
    }
}
