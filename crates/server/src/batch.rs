//! Many ciphertexts across all cores (rayon): [`Evaluator::sum`], [`Evaluator::map_many`],
//! [`Evaluator::relinearize_many`].

use rayon::prelude::*;
use zeppelin_seal::Ciphertext;

use crate::error::{EvalError, Result};
use crate::evaluator::Evaluator;
use crate::keyswitch::RelinKeySource;

/// Below this many ciphertexts a sum is added up on one thread.
const SEQUENTIAL_SUM: usize = 16;

impl Evaluator {
    /// The sum of `cts` (SEAL's `add_many`), as a tree reduction on all cores. Addition
    /// modulo each prime is associative and commutative, so the result is byte-identical
    /// with SEAL's sequential `add_many`. Every ciphertext is checked (level, form, length)
    /// before anything is added.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use zeppelin_seal::{Ciphertext, EncryptionParameters, SealContext};
    /// use zeppelin_server::Evaluator;
    ///
    /// let ctx = Arc::new(SealContext::new(EncryptionParameters::for_preset::<zeppelin::Seal4096>())?);
    /// let eval = Evaluator::new(ctx.clone())?;
    /// let one = Ciphertext::new(ctx.first_level(), ctx.n(), 2, false, vec![1; 2 * 3 * ctx.n()])?;
    /// let sum = eval.sum(&vec![one; 100])?;
    /// assert!(sum.data.iter().all(|&r| r == 100));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn sum(&self, cts: &[Ciphertext]) -> Result<Ciphertext> {
        const OP: &str = "sum";
        let first = cts.first().ok_or(EvalError::Empty { operation: OP })?;
        let level = self.level_of(first, OP)?;
        for ct in cts {
            let l = self.level_of(ct, OP)?;
            if l.parms_id != level.parms_id {
                return Err(EvalError::LevelMismatch {
                    operation: OP,
                    left: level.coeff_modulus.len(),
                    right: l.coeff_modulus.len(),
                });
            }
        }
        self.sum_checked(cts)
    }

    fn sum_checked(&self, cts: &[Ciphertext]) -> Result<Ciphertext> {
        match cts {
            [] => Err(EvalError::Empty { operation: "sum" }),
            [first, rest @ ..] if cts.len() <= SEQUENTIAL_SUM => {
                let mut acc = first.clone();
                for ct in rest {
                    self.add_assign(&mut acc, ct)?;
                }
                Ok(acc)
            }
            _ => {
                let (left, right) = cts.split_at(cts.len() / 2);
                let (l, r) = rayon::join(|| self.sum_checked(left), || self.sum_checked(right));
                let mut acc = l?;
                self.add_assign(&mut acc, &r?)?;
                Ok(acc)
            }
        }
    }

    /// `f(self, item)` for every item, on all cores, in order: the way to run many
    /// independent operations (`|e, ct| e.rotate_rows(ct, 1, &keys)`, ...). The first error
    /// (in no particular order) is returned.
    pub fn map_many<T, F>(&self, items: &[T], f: F) -> Result<Vec<Ciphertext>>
    where
        T: Sync,
        F: Fn(&Evaluator, &T) -> Result<Ciphertext> + Sync + Send,
    {
        items.par_iter().map(|item| f(self, item)).collect()
    }

    /// [`Evaluator::relinearize`] of every ciphertext, on all cores.
    pub fn relinearize_many(
        &self,
        cts: &[Ciphertext],
        keys: &impl RelinKeySource,
    ) -> Result<Vec<Ciphertext>> {
        self.map_many(cts, |e, ct| e.relinearize(ct, keys))
    }
}
