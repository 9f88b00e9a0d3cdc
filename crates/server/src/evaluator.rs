//! [`Evaluator`]: SEAL's BFV `Evaluator` over SEAL-format ciphertexts, level by level.

use std::sync::Arc;

use zeppelin_seal::poly::RnsNtt;
use zeppelin_seal::{Ciphertext, Level, SealContext};

use crate::error::{EvalError, Result};
use crate::tables::{LevelTables, Tables};

/// SEAL's BFV evaluator for one context: every operation takes and returns SEAL
/// [`Ciphertext`]s (coefficient form, at one of the context's data levels) and gives the
/// ciphertext SEAL 4.1 gives for the same inputs.
///
/// The evaluator is `Send + Sync`: one instance serves every thread (see
/// [`Evaluator::map_many`]).
pub struct Evaluator {
    pub(crate) ctx: Arc<SealContext>,
    pub(crate) tables: Tables,
    /// The multiplication's per-level tables (see [`crate::behz`]).
    pub(crate) behz: crate::bconv::BehzCache,
}

// One evaluator serves every thread.
const _: fn() = || {
    fn shared<T: Send + Sync>() {}
    shared::<Evaluator>();
};

impl Evaluator {
    /// An evaluator for `ctx`, with every data level's constants computed now. The
    /// parameters must have primes below 2^30 (the arithmetic core's bound; every Zeppelin
    /// preset has them) and an odd plain modulus below 2^30; anything else is
    /// [`EvalError::Unsupported`] or the core's error.
    pub fn new(ctx: Arc<SealContext>) -> Result<Self> {
        let tables = Tables::new(&ctx)?;
        // Build the key level's NTT tables now rather than on the first operation.
        ctx.level_ntt(ctx.key_level())?;
        let behz = crate::bconv::BehzCache::new(&ctx);
        Ok(Self { ctx, tables, behz })
    }

    /// The key level's NTT tables (every prime, the special prime last), cached by the
    /// context.
    pub(crate) fn key_ntt(&self) -> Result<&RnsNtt> {
        Ok(self.ctx.level_ntt(self.ctx.key_level())?)
    }

    /// The evaluator's tables of `ct`'s level, after [`Evaluator::level_of`]'s checks and a
    /// check that every residue is below its prime (the kernels' precondition; loaded
    /// ciphertexts always pass, hand-built ones might not).
    pub(crate) fn checked_level(
        &self,
        ct: &Ciphertext,
        operation: &'static str,
    ) -> Result<&LevelTables> {
        let level = self.level_of(ct, operation)?;
        let tables = self.tables.level(&level.parms_id).ok_or(EvalError::Seal(
            zeppelin_seal::SealError::WrongLevel {
                what: "Ciphertext",
                rule: zeppelin_seal::LevelRule::DataLevel,
            },
        ))?;
        zeppelin_seal::objects::check_residues(
            &ct.data,
            &level.coeff_modulus,
            self.ctx.n(),
            "ciphertext",
        )?;
        Ok(tables)
    }

    /// SEAL's `mod_switch_to_next` for BFV: the same message at the next level, its last
    /// prime dropped with rounding (`round(c / q_last)` per coefficient). Byte-identical
    /// with SEAL. Errors at the last level, for the key level, for NTT form.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use zeppelin_seal::{Ciphertext, EncryptionParameters, SealContext};
    /// use zeppelin_server::Evaluator;
    ///
    /// let ctx = Arc::new(SealContext::new(EncryptionParameters::for_preset::<zeppelin::Seal4096>())?);
    /// let eval = Evaluator::new(ctx.clone())?;
    /// let ct = Ciphertext::new(ctx.first_level(), ctx.n(), 2, false, vec![7; 2 * 3 * ctx.n()])?;
    /// let next = eval.mod_switch_to_next(&ct)?;
    /// assert_eq!(next.coeff_modulus_size, 2);
    /// let last = eval.mod_switch_to_next(&next)?;
    /// assert!(eval.mod_switch_to_next(&last).is_err()); // one prime left
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn mod_switch_to_next(&self, ct: &Ciphertext) -> Result<Ciphertext> {
        self.checked_level(ct, "mod_switch_to_next")?;
        Ok(zeppelin_seal::convert::mod_switch_to_next(&self.ctx, ct)?)
    }

    /// The context.
    pub fn context(&self) -> &SealContext {
        &self.ctx
    }

    /// The level of `ct`, after checking its degree and form.
    pub(crate) fn level_of(&self, ct: &Ciphertext, operation: &'static str) -> Result<&Level> {
        if ct.poly_modulus_degree != self.ctx.n() {
            return Err(EvalError::Degree {
                found: ct.poly_modulus_degree,
                expected: self.ctx.n(),
            });
        }
        if ct.is_ntt_form {
            return Err(EvalError::NttForm { operation });
        }
        let level = self.ctx.level_or_err(&ct.parms_id, "Ciphertext")?;
        if ct.data.len() != ct.size * level.coeff_modulus.len() * self.ctx.n() {
            return Err(zeppelin_seal::SealError::CountMismatch {
                what: "ciphertext data",
                found: ct.data.len() as u64,
                expected: (ct.size * level.coeff_modulus.len() * self.ctx.n()) as u64,
            }
            .into());
        }
        Ok(level)
    }

    /// The common level of two operands.
    pub(crate) fn same_level(
        &self,
        a: &Ciphertext,
        b: &Ciphertext,
        operation: &'static str,
    ) -> Result<&Level> {
        let la = self.level_of(a, operation)?;
        let lb = self.level_of(b, operation)?;
        if la.parms_id != lb.parms_id {
            return Err(EvalError::LevelMismatch {
                operation,
                left: la.coeff_modulus.len(),
                right: lb.coeff_modulus.len(),
            });
        }
        Ok(la)
    }

    /// `a + b` (SEAL's `add`): polynomial by polynomial; the shorter operand is padded with
    /// zero polynomials, so the result has the larger size.
    pub fn add(&self, a: &Ciphertext, b: &Ciphertext) -> Result<Ciphertext> {
        let mut out = a.clone();
        self.add_assign(&mut out, b)?;
        Ok(out)
    }

    /// `a += b` (SEAL's `add_inplace`).
    pub fn add_assign(&self, a: &mut Ciphertext, b: &Ciphertext) -> Result<()> {
        self.combine_assign(a, b, "add", |x, y, q| {
            let s = x + y;
            if s >= q {
                s - q
            } else {
                s
            }
        })
    }

    /// `a - b` (SEAL's `sub`).
    pub fn sub(&self, a: &Ciphertext, b: &Ciphertext) -> Result<Ciphertext> {
        let mut out = a.clone();
        self.sub_assign(&mut out, b)?;
        Ok(out)
    }

    /// `a -= b` (SEAL's `sub_inplace`).
    pub fn sub_assign(&self, a: &mut Ciphertext, b: &Ciphertext) -> Result<()> {
        self.combine_assign(
            a,
            b,
            "sub",
            |x, y, q| if x >= y { x - y } else { x + q - y },
        )
    }

    /// `-a` (SEAL's `negate`): every residue `r` becomes `q - r`, and 0 stays 0.
    pub fn negate(&self, a: &Ciphertext) -> Result<Ciphertext> {
        let level = self.level_of(a, "negate")?;
        let n = self.ctx.n();
        let mut out = a.clone();
        for poly in out.data.chunks_exact_mut(n * level.coeff_modulus.len()) {
            for (residues, &q) in poly.chunks_exact_mut(n).zip(&level.coeff_modulus) {
                for r in residues {
                    *r = if *r == 0 { 0 } else { q - *r };
                }
            }
        }
        Ok(out)
    }

    /// `a ∘= b` residue by residue with `f(x, y, q)`, after growing `a` to `b`'s size with zero
    /// polynomials (`f(x, 0, q)` must be `x`'s own residue, as for `+` and `-`).
    fn combine_assign(
        &self,
        a: &mut Ciphertext,
        b: &Ciphertext,
        operation: &'static str,
        f: impl Fn(u64, u64, u64) -> u64,
    ) -> Result<()> {
        let level = self.same_level(a, b, operation)?;
        let n = self.ctx.n();
        let poly_len = n * level.coeff_modulus.len();
        if b.size > a.size {
            a.data.resize(b.size * poly_len, 0);
            a.size = b.size;
        }
        for (pa, pb) in a
            .data
            .chunks_exact_mut(poly_len)
            .zip(b.data.chunks_exact(poly_len))
        {
            for ((ra, rb), &q) in pa
                .chunks_exact_mut(n)
                .zip(pb.chunks_exact(n))
                .zip(&level.coeff_modulus)
            {
                for (x, &y) in ra.iter_mut().zip(rb) {
                    *x = f(*x, y, q);
                }
            }
        }
        Ok(())
    }
}
