//! Ciphertext–plaintext operations: [`Evaluator::add_plain`], [`Evaluator::sub_plain`]
//! (SEAL's `multiply_add_plain_with_scaling_variant` / `multiply_sub_plain_...`) and
//! [`Evaluator::multiply_plain`] (SEAL's `multiply_plain_normal`, with its monomial path).

use zeppelin_ring::{ClientKernels, Modulus, NttBackend};
use zeppelin_seal::{Ciphertext, ParmsId, Plaintext};

use crate::error::{EvalError, PlaintextProblem, Result};
use crate::evaluator::Evaluator;
use crate::tables::{self, LevelTables};

impl Evaluator {
    /// Checks a coefficient-form plaintext: zero parms_id, at most `n` coefficients, each
    /// below `t`.
    fn check_plain(&self, plain: &Plaintext, operation: &'static str) -> Result<()> {
        let problem = |problem| Err(EvalError::Plaintext { operation, problem });
        if plain.parms_id != ParmsId::ZERO {
            return problem(PlaintextProblem::NttForm);
        }
        let n = self.ctx.n();
        if plain.data.len() > n {
            return problem(PlaintextProblem::TooLong {
                len: plain.data.len(),
                n,
            });
        }
        let t = self.ctx.plain_modulus();
        if let Some(index) = plain.data.iter().position(|&v| v >= t) {
            return problem(PlaintextProblem::NotBelowT {
                index,
                value: plain.data[index],
                t,
            });
        }
        Ok(())
    }

    /// `ct + plain` (SEAL's `add_plain`): `Δ·m` with SEAL's rounding,
    /// `floor((Q·m + floor((t+1)/2)) / t)` per coefficient, added to `c0`. Byte-identical
    /// with SEAL.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use zeppelin_seal::{Ciphertext, EncryptionParameters, Plaintext, SealContext};
    /// use zeppelin_server::Evaluator;
    ///
    /// let ctx = Arc::new(SealContext::new(EncryptionParameters::for_preset::<zeppelin::Seal4096>())?);
    /// let eval = Evaluator::new(ctx.clone())?;
    /// let zero = Ciphertext::new(ctx.first_level(), ctx.n(), 2, false, vec![0; 2 * 3 * ctx.n()])?;
    /// let ct = eval.add_plain(&zero, &Plaintext::new(vec![1]))?;
    /// // Δ·1 with rounding: floor(Q/t) + 1 here (Q mod t > t/2), modulo each prime.
    /// assert!(ct.data[0] > 0 && ct.data[1] == 0);
    /// assert_eq!(eval.sub_plain(&ct, &Plaintext::new(vec![1]))?, zero);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn add_plain(&self, ct: &Ciphertext, plain: &Plaintext) -> Result<Ciphertext> {
        let mut out = ct.clone();
        self.add_plain_assign(&mut out, plain)?;
        Ok(out)
    }

    /// `ct += plain` (SEAL's `add_plain_inplace`).
    pub fn add_plain_assign(&self, ct: &mut Ciphertext, plain: &Plaintext) -> Result<()> {
        self.scaled_plain_assign(ct, plain, false, "add_plain")
    }

    /// `ct − plain` (SEAL's `sub_plain`): the scaled plaintext of [`Evaluator::add_plain`]
    /// subtracted from `c0`. Byte-identical with SEAL.
    pub fn sub_plain(&self, ct: &Ciphertext, plain: &Plaintext) -> Result<Ciphertext> {
        let mut out = ct.clone();
        self.sub_plain_assign(&mut out, plain)?;
        Ok(out)
    }

    /// `ct −= plain` (SEAL's `sub_plain_inplace`).
    pub fn sub_plain_assign(&self, ct: &mut Ciphertext, plain: &Plaintext) -> Result<()> {
        self.scaled_plain_assign(ct, plain, true, "sub_plain")
    }

    fn scaled_plain_assign(
        &self,
        ct: &mut Ciphertext,
        plain: &Plaintext,
        subtract: bool,
        operation: &'static str,
    ) -> Result<()> {
        let level = self.checked_level(ct, operation)?;
        self.check_plain(plain, operation)?;
        let n = self.ctx.n();
        let backend = self.key_ntt()?.backend();
        let pt = &self.tables.plain;
        let mut m = vec![0u32; n];
        let mut carry = vec![0u32; n];
        for ((m, c), &v) in m.iter_mut().zip(carry.iter_mut()).zip(&plain.data) {
            // Checked below t < 2^30.
            *m = v as u32;
            *c = pt.carry(level.q_mod_t, *m);
        }
        let no_error = vec![0i8; n];
        let mut row = vec![0u32; n];
        for (i, q) in level.moduli.iter().enumerate() {
            let c0 = &mut ct.data[i * n..(i + 1) * n];
            for (r, &c) in row.iter_mut().zip(c0.iter()) {
                *r = c as u32;
            }
            // The device's encryption finish with a zero error: c0 + Δm, or Δm − c0 (then
            // negated) for a subtraction.
            backend.encrypt_finish(
                q,
                level.delta_mont[i],
                &m,
                &carry,
                &no_error,
                &mut row,
                subtract,
            )?;
            for (c, &r) in c0.iter_mut().zip(&row) {
                *c = u64::from(if subtract { q.neg(r) } else { r });
            }
        }
        Ok(())
    }

    /// `ct · plain` (SEAL's `multiply_plain` for BFV): the exact negacyclic product of every
    /// polynomial of `ct` with the plaintext lifted to each prime, where a coefficient
    /// `v >= (t+1)/2` stands for `v − t`. Byte-identical with SEAL, including SEAL's fast path
    /// for a plaintext with one nonzero coefficient `v·x^e` (a scalar weight), which is a
    /// shift and one multiplication per residue, no NTT: SEAL multiplies there by `v` itself
    /// when every prime exceeds `t` (so a "negative" scalar is *not* centred on that path,
    /// which decrypts the same but carries more noise), as done here.
    ///
    /// The zero plaintext is refused, as SEAL refuses it (the product would be transparent).
    ///
    /// ```
    /// use std::sync::Arc;
    /// use zeppelin_seal::{Ciphertext, EncryptionParameters, Plaintext, SealContext};
    /// use zeppelin_server::Evaluator;
    ///
    /// let ctx = Arc::new(SealContext::new(EncryptionParameters::for_preset::<zeppelin::Seal4096>())?);
    /// let eval = Evaluator::new(ctx.clone())?;
    /// let ct = Ciphertext::new(ctx.first_level(), ctx.n(), 2, false, vec![3; 2 * 3 * ctx.n()])?;
    /// let doubled = eval.multiply_plain(&ct, &Plaintext::new(vec![2]))?;
    /// assert_eq!(doubled, eval.add(&ct, &ct)?);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn multiply_plain(&self, ct: &Ciphertext, plain: &Plaintext) -> Result<Ciphertext> {
        let mut out = ct.clone();
        self.multiply_plain_assign(&mut out, plain)?;
        Ok(out)
    }

    /// `ct *= plain` (SEAL's `multiply_plain_inplace`).
    pub fn multiply_plain_assign(&self, ct: &mut Ciphertext, plain: &Plaintext) -> Result<()> {
        const OP: &str = "multiply_plain";
        let level = self.checked_level(ct, OP)?;
        self.check_plain(plain, OP)?;
        let mut nonzero = plain.data.iter().enumerate().filter(|(_, &v)| v != 0);
        let first = nonzero.next();
        let second = nonzero.next();
        match (first, second) {
            (None, _) => Err(EvalError::Plaintext {
                operation: OP,
                problem: PlaintextProblem::Zero,
            }),
            (Some((exponent, &v)), None) => {
                self.multiply_monomial(ct, level, exponent, v as u32);
                Ok(())
            }
            _ => self.multiply_poly(ct, level, plain),
        }
    }

    /// The residue of plaintext coefficient `v` modulo prime `i` in SEAL's lift: `v − t` for
    /// `v >= (t+1)/2`.
    #[inline(always)]
    fn lift(&self, level: &LevelTables, i: usize, v: u32) -> u32 {
        let q = &level.moduli[i];
        let r = q.reduce_u32(v);
        if v >= self.tables.plain.half_up {
            q.sub(r, level.t_mod_q[i])
        } else {
            r
        }
    }

    /// The residue mod prime `i` that SEAL's monomial path scales by for coefficient `v`.
    #[inline]
    fn monomial_residue(
        &self,
        level: &LevelTables,
        fast_plain_lift: bool,
        i: usize,
        v: u32,
    ) -> u32 {
        if fast_plain_lift {
            level.moduli[i].reduce_u32(v)
        } else {
            self.lift(level, i, v)
        }
    }

    /// The per-prime factors by which [`Self::multiply_plain`] with the constant plaintext
    /// `v` (`0 < v < t`) scales every row of a ciphertext at `parms_id` (one per prime):
    /// `multiply_plain(ct, [v])` is `c_i · row mod q_i` row by row. For callers that scale
    /// residues themselves (a weighted sum accumulated outside SEAL's form) and must agree
    /// with it bit for bit.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use zeppelin_seal::{EncryptionParameters, SealContext};
    /// use zeppelin_server::Evaluator;
    ///
    /// let ctx = Arc::new(SealContext::new(EncryptionParameters::for_preset::<zeppelin::Seal4096>())?);
    /// let eval = Evaluator::new(ctx.clone())?;
    /// assert_eq!(eval.scalar_residues(&ctx.first_level().parms_id, 2)?, vec![2, 2, 2]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn scalar_residues(&self, parms_id: &ParmsId, v: u64) -> Result<Vec<u32>> {
        const OP: &str = "scalar_residues";
        let level = self.tables.level(parms_id).ok_or(EvalError::Seal(
            zeppelin_seal::SealError::WrongLevel {
                what: "parms_id",
                rule: zeppelin_seal::LevelRule::DataLevel,
            },
        ))?;
        let t = self.tables.plain.modulus.value();
        let v = match u32::try_from(v) {
            Ok(v) if v < t => v,
            _ => {
                return Err(EvalError::Plaintext {
                    operation: OP,
                    problem: PlaintextProblem::NotBelowT {
                        index: 0,
                        value: v,
                        t: u64::from(t),
                    },
                })
            }
        };
        if v == 0 {
            return Err(EvalError::Plaintext {
                operation: OP,
                problem: PlaintextProblem::Zero,
            });
        }
        let fast_plain_lift = level.moduli.iter().all(|q| q.value() > t);
        Ok((0..level.moduli.len())
            .map(|i| self.monomial_residue(level, fast_plain_lift, i, v))
            .collect())
    }

    /// `ct · v·x^e` (SEAL's monomial path).
    fn multiply_monomial(&self, ct: &mut Ciphertext, level: &LevelTables, e: usize, v: u32) {
        let n = self.ctx.n();
        let t = self.tables.plain.modulus.value();
        // SEAL lifts a "negative" monomial only when some prime is below t.
        let fast_plain_lift = level.moduli.iter().all(|q| q.value() > t);
        let mut shifted = vec![0u64; n];
        for (row, (i, q)) in ct
            .data
            .chunks_exact_mut(n)
            .zip(level.moduli.iter().enumerate().cycle())
        {
            let c = self.monomial_residue(level, fast_plain_lift, i, v);
            negacyclic_scale_shift(row, q, c, e, &mut shifted);
            row.copy_from_slice(&shifted);
        }
    }

    /// `ct · plain` for a plaintext with several nonzero coefficients, through the NTT.
    fn multiply_poly(
        &self,
        ct: &mut Ciphertext,
        level: &LevelTables,
        plain: &Plaintext,
    ) -> Result<()> {
        let n = self.ctx.n();
        let key_ntt = self.key_ntt()?;
        let backend = key_ntt.backend();
        let k = level.len();
        let mut lifted = vec![0u32; k * n];
        for (i, row) in lifted.chunks_exact_mut(n).enumerate() {
            for (r, &v) in row.iter_mut().zip(&plain.data) {
                *r = self.lift(level, i, v as u32);
            }
            backend.forward(&tables::table(key_ntt, i)?.view(), row)?;
        }
        let mut buf = vec![0u32; n];
        for (row, i) in ct.data.chunks_exact_mut(n).zip((0..k).cycle()) {
            let table = tables::table(key_ntt, i)?.view();
            for (b, &c) in buf.iter_mut().zip(row.iter()) {
                *b = c as u32;
            }
            backend.forward(&table, &mut buf)?;
            backend.pointwise_mul_assign(
                &level.moduli[i],
                &mut buf,
                &lifted[i * n..(i + 1) * n],
            )?;
            backend.inverse(&table, &mut buf)?;
            for (c, &b) in row.iter_mut().zip(&buf) {
                *c = u64::from(b);
            }
        }
        Ok(())
    }
}

/// `out = c·x^e·row` in `Z_q[x]/(x^n + 1)` (`c < q`, `e < n`): coefficient `j` moves to
/// `j + e`, negated when it wraps past `x^n`.
fn negacyclic_scale_shift(row: &[u64], q: &Modulus, c: u32, e: usize, out: &mut [u64]) {
    let n = row.len();
    let c_mont = q.mont(c);
    let (low, high) = row.split_at(n - e);
    for (o, &x) in out[e..].iter_mut().zip(low) {
        *o = u64::from(q.mul_mont_constant(x as u32, c_mont));
    }
    for (o, &x) in out[..e].iter_mut().zip(high) {
        *o = u64::from(q.neg(q.mul_mont_constant(x as u32, c_mont)));
    }
}
