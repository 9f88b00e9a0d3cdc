//! SEAL's key switching with the special prime (`Evaluator::switch_key_inplace` for BFV),
//! the keys in the evaluator's form, and [`Evaluator::relinearize`].
//!
//! For a target polynomial `a` at a level with primes `q_0..q_{k-1}` and the special prime `P`,
//! SEAL decomposes `a` into its residues `d_j = a mod q_j`, forms for every output prime
//! `r ∈ {q_0, .., q_{k-1}, P}` the sums `Σ_j NTT_r(d_j mod r) ⊙ key[j]_r` for both key
//! components, returns them to coefficient form and divides by `P` with rounding:
//! `out_i = (acc_i − ((acc_P + floor(P/2)) mod P) + floor(P/2)) · P^-1 mod q_i`. Every step
//! is exact modular arithmetic, so computing it in another order (here: 32-bit residues,
//! Montgomery-form keys, the core's lazy multiply-accumulate) gives SEAL's bytes.

use std::borrow::Cow;

use zeppelin_ring::{ct, Modulus, NttBackend, RnsKernels};
use zeppelin_seal::{Ciphertext, GaloisKeys, KSwitchKeys, PublicKey, RelinKeys};

use crate::error::{EvalError, Result};
use crate::evaluator::Evaluator;
use crate::tables::{self, LevelTables};

/// One key-switching key (SEAL's `key_vector` of one slot: one encryption per data prime of
/// the first level) in the evaluator's form: residues as `u32` in Montgomery form, laid out
/// prime (all key-level primes, the special prime last) → component (0, 1) → digit →
/// coefficient, so that every output prime reads its digits' keys with stride `n`.
#[derive(Clone, Debug)]
pub struct SwitchKey {
    decomp: usize,
    n: usize,
    data: Vec<u32>,
}

impl SwitchKey {
    /// The `decomp·n` key residues of `component` for key-level prime `prime`.
    fn rows(&self, prime: usize, component: usize) -> &[u32] {
        let len = self.decomp * self.n;
        let start = (prime * 2 + component) * len;
        &self.data[start..start + len]
    }
}

/// SEAL `RelinKeys` converted once into the evaluator's form, for repeated relinearization
/// (the conversion reads and rewrites every key residue, which costs about as much as a
/// relinearization). Made by [`Evaluator::prepare_relin_keys`].
#[derive(Clone, Debug)]
pub struct PreparedRelinKeys {
    /// Slot `j` switches from `s^(j+2)`.
    keys: Vec<Option<SwitchKey>>,
}

/// SEAL `GaloisKeys` converted once into the evaluator's form. Made by
/// [`Evaluator::prepare_galois_keys`].
#[derive(Clone, Debug)]
pub struct PreparedGaloisKeys {
    /// Slot `(g-1)/2` switches from `s(x^g)`.
    keys: Vec<Option<SwitchKey>>,
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for zeppelin_seal::RelinKeys {}
    impl Sealed for zeppelin_seal::GaloisKeys {}
    impl Sealed for super::PreparedRelinKeys {}
    impl Sealed for super::PreparedGaloisKeys {}
}

/// Relinearization keys the evaluator takes: SEAL's [`RelinKeys`] (converted on every call)
/// or [`PreparedRelinKeys`] (converted once).
pub trait RelinKeySource: sealed::Sealed + Sync {
    /// The key for slot `slot` (`s^(slot+2)`), or `None` when the keys hold none.
    #[doc(hidden)]
    fn switch_key<'a>(
        &'a self,
        eval: &Evaluator,
        slot: usize,
    ) -> Result<Option<Cow<'a, SwitchKey>>>;
}

/// Galois keys the evaluator takes: SEAL's [`GaloisKeys`] (the keys used are converted on
/// every call) or [`PreparedGaloisKeys`] (converted once).
pub trait GaloisKeySource: sealed::Sealed + Sync {
    /// Whether there is a key for `galois_elt`.
    fn has_key(&self, galois_elt: u32) -> bool;
    /// The key for `galois_elt`, or `None`.
    #[doc(hidden)]
    fn switch_key<'a>(
        &'a self,
        eval: &Evaluator,
        galois_elt: u32,
    ) -> Result<Option<Cow<'a, SwitchKey>>>;
}

impl RelinKeySource for RelinKeys {
    fn switch_key<'a>(
        &'a self,
        eval: &Evaluator,
        slot: usize,
    ) -> Result<Option<Cow<'a, SwitchKey>>> {
        eval.check_keys_level(&self.0, "RelinKeys")?;
        match self.0.keys.get(slot) {
            Some(v) if !v.is_empty() => Ok(Some(Cow::Owned(eval.prepare_key(v, "RelinKeys")?))),
            _ => Ok(None),
        }
    }
}

impl RelinKeySource for PreparedRelinKeys {
    fn switch_key<'a>(&'a self, _: &Evaluator, slot: usize) -> Result<Option<Cow<'a, SwitchKey>>> {
        Ok(self
            .keys
            .get(slot)
            .and_then(Option::as_ref)
            .map(Cow::Borrowed))
    }
}

impl GaloisKeySource for GaloisKeys {
    fn has_key(&self, galois_elt: u32) -> bool {
        galois_elt & 1 == 1
            && self
                .0
                .keys
                .get(GaloisKeys::index(galois_elt))
                .is_some_and(|v| !v.is_empty())
    }

    fn switch_key<'a>(
        &'a self,
        eval: &Evaluator,
        galois_elt: u32,
    ) -> Result<Option<Cow<'a, SwitchKey>>> {
        eval.check_keys_level(&self.0, "GaloisKeys")?;
        if !self.has_key(galois_elt) {
            return Ok(None);
        }
        let slot = &self.0.keys[GaloisKeys::index(galois_elt)];
        Ok(Some(Cow::Owned(eval.prepare_key(slot, "GaloisKeys")?)))
    }
}

impl GaloisKeySource for PreparedGaloisKeys {
    fn has_key(&self, galois_elt: u32) -> bool {
        galois_elt & 1 == 1
            && self
                .keys
                .get(GaloisKeys::index(galois_elt))
                .is_some_and(Option::is_some)
    }

    fn switch_key<'a>(
        &'a self,
        _: &Evaluator,
        galois_elt: u32,
    ) -> Result<Option<Cow<'a, SwitchKey>>> {
        if galois_elt & 1 == 0 {
            return Ok(None);
        }
        Ok(self
            .keys
            .get(GaloisKeys::index(galois_elt))
            .and_then(Option::as_ref)
            .map(Cow::Borrowed))
    }
}

impl Evaluator {
    /// Keys must be at this context's key level (SEAL: "parameter mismatch").
    fn check_keys_level(&self, keys: &KSwitchKeys, what: &'static str) -> Result<()> {
        if !self.ctx.using_keyswitching() {
            return Err(EvalError::NotSupportedByParameters {
                operation: what,
                missing: "a special prime (key switching)",
            });
        }
        if keys.parms_id != self.ctx.key_level().parms_id {
            return Err(EvalError::ForeignKeys { what });
        }
        Ok(())
    }

    /// One slot's keys in the evaluator's form, after checking their shape and residues.
    fn prepare_key(&self, key_vector: &[PublicKey], what: &'static str) -> Result<SwitchKey> {
        let bad = |problem| Err(EvalError::MalformedKey { what, problem });
        let n = self.ctx.n();
        let key_level = self.ctx.key_level();
        let primes = key_level.coeff_modulus.len();
        let decomp = self.ctx.first_level().coeff_modulus.len();
        if key_vector.len() != decomp {
            return bad("decomposition count is not the first level's prime count");
        }
        let key_ntt = self.key_ntt()?;
        let mut data = vec![0u32; primes * 2 * decomp * n];
        for (j, key) in key_vector.iter().enumerate() {
            let ct = &key.0;
            if ct.parms_id != key_level.parms_id {
                return Err(EvalError::ForeignKeys { what });
            }
            if ct.size != 2 || !ct.is_ntt_form {
                return bad("a key is not a two-polynomial NTT-form ciphertext");
            }
            if ct.poly_modulus_degree != n
                || ct.coeff_modulus_size != primes
                || ct.data.len() != 2 * primes * n
            {
                return bad("a key's degree, prime count or length does not match the key level");
            }
            for (row_index, row) in ct.data.chunks_exact(n).enumerate() {
                let (component, prime) = (row_index / primes, row_index % primes);
                let m = key_ntt.modulus(prime);
                let q = u64::from(m.value());
                let start = ((prime * 2 + component) * decomp + j) * n;
                // One pass over the (large) key: convert, and keep the top bit of
                // (v − q) & !v, set exactly when v < q (the scan of check_residues).
                let mut all_below = u64::MAX;
                for (o, &v) in data[start..start + n].iter_mut().zip(row) {
                    all_below &= v.wrapping_sub(q) & !v;
                    *o = m.to_mont(v as u32);
                }
                if all_below >> 63 == 0 {
                    return bad("a key residue is not below its prime");
                }
            }
        }
        Ok(SwitchKey { decomp, n, data })
    }

    fn prepare_all(
        &self,
        keys: &KSwitchKeys,
        what: &'static str,
    ) -> Result<Vec<Option<SwitchKey>>> {
        self.check_keys_level(keys, what)?;
        keys.keys
            .iter()
            .map(|slot| {
                if slot.is_empty() {
                    Ok(None)
                } else {
                    self.prepare_key(slot, what).map(Some)
                }
            })
            .collect()
    }

    /// SEAL `RelinKeys` in the evaluator's form, checked (level, shape, every residue) once:
    /// pass them to [`Evaluator::relinearize`] in place of the `RelinKeys` when many
    /// ciphertexts are relinearized with the same keys.
    pub fn prepare_relin_keys(&self, keys: &RelinKeys) -> Result<PreparedRelinKeys> {
        Ok(PreparedRelinKeys {
            keys: self.prepare_all(&keys.0, "RelinKeys")?,
        })
    }

    /// SEAL `GaloisKeys` in the evaluator's form, checked once (every slot that holds a key).
    pub fn prepare_galois_keys(&self, keys: &GaloisKeys) -> Result<PreparedGaloisKeys> {
        Ok(PreparedGaloisKeys {
            keys: self.prepare_all(&keys.0, "GaloisKeys")?,
        })
    }

    /// SEAL's `relinearize` for BFV: a size-3 ciphertext `(c0, c1, c2)` becomes
    /// `(c0, c1) + switch(c2)` with the key for `s^2` (larger sizes are reduced one
    /// polynomial at a time, the last first, with the key for its power, as SEAL does). A
    /// size-2 ciphertext is returned unchanged (SEAL's no-op). Byte-identical with SEAL for
    /// SEAL's own `RelinKeys`.
    pub fn relinearize(&self, ct: &Ciphertext, keys: &impl RelinKeySource) -> Result<Ciphertext> {
        const OP: &str = "relinearize";
        let level = self.checked_level(ct, OP)?;
        if ct.size < 2 {
            return Err(EvalError::Size {
                operation: OP,
                size: ct.size,
                expected: "at least 2",
            });
        }
        if ct.size == 2 {
            return Ok(ct.clone());
        }
        let poly_len = level.len() * self.ctx.n();
        // The last polynomial is switched away: only the others are copied.
        let split = (ct.size - 1) * poly_len;
        let mut out = Ciphertext {
            data: ct.data[..split].to_vec(),
            size: ct.size - 1,
            ..*ct
        };
        let mut target: Cow<'_, [u64]> = Cow::Borrowed(&ct.data[split..]);
        loop {
            // The polynomial switched multiplies s^(out.size): slot out.size − 2.
            let key = keys
                .switch_key(self, out.size - 2)?
                .ok_or(EvalError::MissingRelinKey)?;
            let (c0, rest) = out.data.split_at_mut(poly_len);
            let c1 = &mut rest[..poly_len];
            self.switch_key_add(level, &target, &key, c0, c1)?;
            if out.size == 2 {
                break;
            }
            out.size -= 1;
            target = Cow::Owned(out.data.split_off(out.size * poly_len));
        }
        Ok(out)
    }

    /// Adds the key switch of `target` (coefficient form, at `level`) with `key` to `c0` and
    /// `c1` (coefficient form, at `level`).
    pub(crate) fn switch_key_add(
        &self,
        level: &LevelTables,
        target: &[u64],
        key: &SwitchKey,
        c0: &mut [u64],
        c1: &mut [u64],
    ) -> Result<()> {
        let n = self.ctx.n();
        let k = level.len();
        let key_ntt = self.key_ntt()?;
        let backend = key_ntt.backend();
        let special_index = key_ntt.len() - 1;
        let special = self
            .tables
            .special
            .ok_or(EvalError::NotSupportedByParameters {
                operation: "key switching",
                missing: "a special prime (key switching)",
            })?;
        if k > key.decomp || target.len() != k * n || c0.len() != k * n || c1.len() != k * n {
            return Err(EvalError::MalformedKey {
                what: "key switching",
                problem: "operand lengths do not match the level",
            });
        }
        SCRATCH.with(|cell| -> Result<()> {
            let mut scratch = cell.borrow_mut();
            // digits (k rows), acc[component][output prime] (2·(k+1) rows), one lift row, one
            // zero row: every row but the zeros is overwritten before it is read.
            let rows = k + 2 * (k + 1) + 2;
            if scratch.len() < rows * n {
                scratch.resize(rows * n, 0);
            }
            let (digits, rest) = scratch.split_at_mut(k * n);
            let (acc, rest) = rest.split_at_mut(2 * (k + 1) * n);
            let (lifted, rest) = rest.split_at_mut(n);
            let zeros = &mut rest[..n];
            zeros.fill(0);
            let (acc0, acc1) = acc.split_at_mut((k + 1) * n);
            for (r, (out0, out1)) in acc0
                .chunks_exact_mut(n)
                .zip(acc1.chunks_exact_mut(n))
                .enumerate()
            {
                let key_index = if r == k { special_index } else { r };
                let table = tables::table(key_ntt, key_index)?;
                let m = table.modulus();
                for ((digit, src), src_q) in digits
                    .chunks_exact_mut(n)
                    .zip(target.chunks_exact(n))
                    .zip(&level.moduli)
                {
                    reduce_into(src, src_q, m, digit);
                    backend.forward(&table.view(), digit)?;
                }
                backend.key_switch_block(
                    m,
                    k,
                    n,
                    digits,
                    &key.rows(key_index, 0)[..k * n],
                    &key.rows(key_index, 1)[..k * n],
                    zeros,
                    zeros,
                    out0,
                    out1,
                )?;
            }
            let special_table = tables::table(key_ntt, special_index)?;
            for (acc, out) in [(acc0, &mut *c0), (acc1, &mut *c1)] {
                let (rows, p_row) = acc.split_at_mut(k * n);
                backend.inverse(&special_table.view(), p_row)?;
                for (i, (row, out)) in rows
                    .chunks_exact_mut(n)
                    .zip(out.chunks_exact_mut(n))
                    .enumerate()
                {
                    let m = &level.moduli[i];
                    backend.inverse(&tables::table(key_ntt, i)?.view(), row)?;
                    // SEAL's ((acc_P + floor(P/2)) mod P) − floor(P/2) is the centred
                    // representative of acc_P: the core's centred lift, into q_i.
                    backend.lift_centered(p_row, &special, m, lifted)?;
                    for (a, &l) in row.iter_mut().zip(lifted.iter()) {
                        *a = m.sub(*a, l);
                    }
                    backend.pointwise_mul_assign(
                        m,
                        row,
                        &level.special_inv_rows[i * n..(i + 1) * n],
                    )?;
                    for (o, &x) in out.iter_mut().zip(row.iter()) {
                        *o = u64::from(m.add(*o as u32, x));
                    }
                }
            }
            Ok(())
        })
    }
}

thread_local! {
    /// Each thread's key-switching rows, kept between calls (about 100 KB at n = 4096):
    /// no allocation, zeroing or page faults per operation.
    static SCRATCH: std::cell::RefCell<Vec<u32>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// A residue word as the `u32` it holds (every residue here is below 2^30).
trait Word: Copy {
    fn word(self) -> u32;
}

impl Word for u32 {
    #[inline(always)]
    fn word(self) -> u32 {
        self
    }
}

impl Word for u64 {
    #[inline(always)]
    fn word(self) -> u32 {
        self as u32
    }
}

/// `dst = src mod to` for residues `src < from`: a copy when `from <= to`, conditional
/// subtractions when `from < 4·to` (SEAL's primes: the special prime is about twice a data
/// prime), a Barrett reduction otherwise. Branches on the public primes only.
fn reduce_into<W: Word>(src: &[W], from: &Modulus, to: &Modulus, dst: &mut [u32]) {
    let (p, q) = (u64::from(from.value()), to.value());
    if p <= u64::from(q) {
        for (d, &s) in dst.iter_mut().zip(src) {
            *d = s.word();
        }
    } else if p <= 2 * u64::from(q) {
        for (d, &s) in dst.iter_mut().zip(src) {
            *d = ct::reduce_once(s.word(), q);
        }
    } else if p <= 4 * u64::from(q) {
        for (d, &s) in dst.iter_mut().zip(src) {
            *d = ct::reduce_once(ct::reduce_once(s.word(), 2 * q), q);
        }
    } else {
        for (d, &s) in dst.iter_mut().zip(src) {
            *d = to.reduce_u32(s.word());
        }
    }
}
