//! Galois automorphisms and batched rotations: [`Evaluator::apply_galois`],
//! [`Evaluator::rotate_rows`] (with SEAL's fallback to the non-adjacent form of the step when
//! its key is missing) and [`Evaluator::rotate_columns`].

use zeppelin_seal::keygen::galois_element_for_step;
use zeppelin_seal::poly::apply_galois_coeff_into;
use zeppelin_seal::Ciphertext;

use crate::error::{EvalError, Result};
use crate::evaluator::Evaluator;
use crate::keyswitch::GaloisKeySource;

impl Evaluator {
    /// SEAL's `apply_galois` for BFV: `(c0(x^g), c1(x^g))` switched back to the secret key
    /// with the Galois key for `g`: `c0' = c0(x^g) + switch(c1(x^g))_0`,
    /// `c1' = switch(c1(x^g))_1`. Byte-identical with SEAL. `galois_elt` must be odd and
    /// below `2n`, and `ct` of size 2.
    pub fn apply_galois(
        &self,
        ct: &Ciphertext,
        galois_elt: u32,
        keys: &impl GaloisKeySource,
    ) -> Result<Ciphertext> {
        const OP: &str = "apply_galois";
        let level = self.checked_level(ct, OP)?;
        let n = self.ctx.n();
        if galois_elt & 1 == 0 || galois_elt as usize >= 2 * n {
            return Err(EvalError::GaloisElement {
                galois_elt: u64::from(galois_elt),
                two_n: 2 * n as u64,
            });
        }
        if ct.size != 2 {
            return Err(EvalError::Size {
                operation: OP,
                size: ct.size,
                expected: "2",
            });
        }
        let key = keys
            .switch_key(self, galois_elt)?
            .ok_or(EvalError::MissingGaloisKey { galois_elt })?;
        let poly_len = level.len() * n;
        // Every residue of the result is written below (c1 starts from zero).
        let mut out = Ciphertext {
            data: vec![0u64; 2 * poly_len],
            ..*ct
        };
        let mut target = vec![0u64; poly_len];
        let (c0, c1) = out.data.split_at_mut(poly_len);
        for (i, m) in level.moduli.iter().enumerate() {
            let rows = i * n..(i + 1) * n;
            apply_galois_coeff_into(
                &ct.poly(0)[rows.clone()],
                m,
                galois_elt as usize,
                &mut c0[rows.clone()],
            );
            apply_galois_coeff_into(
                &ct.poly(1)[rows.clone()],
                m,
                galois_elt as usize,
                &mut target[rows],
            );
        }
        self.switch_key_add(level, &target, &key, c0, c1)?;
        Ok(out)
    }

    /// Rotations need batching (SEAL's `using_batching`: `t` prime, `t ≡ 1 mod 2n`).
    fn check_batching(&self, operation: &'static str) -> Result<()> {
        let t = self.ctx.plain_modulus();
        let two_n = 2 * self.ctx.n() as u64;
        let prime = u32::try_from(t).is_ok_and(zeppelin_ring::modulus::is_prime);
        if !prime || t % two_n != 1 {
            return Err(EvalError::NotSupportedByParameters {
                operation,
                missing: "batching (t prime and t ≡ 1 mod 2n)",
            });
        }
        Ok(())
    }

    /// SEAL's `rotate_rows`: both rows of `n/2` batched slots rotated left by `steps`
    /// (right for negative `steps`), `|steps| < n/2`. With the key for `steps` it is one
    /// [`Evaluator::apply_galois`]; without it, as SEAL does, one rotation per term of the
    /// non-adjacent form of `steps` (lowest first), each of which needs its key. Byte-identical
    /// with SEAL.
    pub fn rotate_rows(
        &self,
        ct: &Ciphertext,
        steps: i32,
        keys: &impl GaloisKeySource,
    ) -> Result<Ciphertext> {
        const OP: &str = "rotate_rows";
        self.check_batching(OP)?;
        self.checked_level(ct, OP)?;
        let n = self.ctx.n();
        let elt = galois_element_for_step(n, i64::from(steps))?;
        if steps == 0 {
            return Ok(ct.clone());
        }
        if keys.has_key(elt) {
            return self.apply_galois(ct, elt, keys);
        }
        let terms = non_adjacent_form(steps);
        if terms.len() == 1 {
            return Err(EvalError::MissingGaloisKey { galois_elt: elt });
        }
        let mut out = ct.clone();
        for term in terms {
            // A term of n/2 is no rotation at all (SEAL skips it).
            if term.unsigned_abs() as usize == n / 2 {
                continue;
            }
            let elt = galois_element_for_step(n, i64::from(term))?;
            if !keys.has_key(elt) {
                return Err(EvalError::MissingGaloisKey { galois_elt: elt });
            }
            out = self.apply_galois(&out, elt, keys)?;
        }
        Ok(out)
    }

    /// SEAL's `rotate_columns`: the two rows of batched slots swapped (the Galois element
    /// `2n − 1`). Byte-identical with SEAL.
    pub fn rotate_columns(
        &self,
        ct: &Ciphertext,
        keys: &impl GaloisKeySource,
    ) -> Result<Ciphertext> {
        self.check_batching("rotate_columns")?;
        let elt = galois_element_for_step(self.ctx.n(), 0)?;
        self.apply_galois(ct, elt, keys)
    }
}

/// The non-adjacent form of `value` as signed powers of two, lowest first (SEAL's `naf`).
fn non_adjacent_form(value: i32) -> Vec<i32> {
    let negative = value < 0;
    let mut v = i64::from(value).abs();
    let mut terms = Vec::new();
    let mut bit = 0u32;
    while v != 0 {
        let digit = if v & 1 == 1 { 2 - (v & 3) } else { 0 };
        v = (v - digit) >> 1;
        if digit != 0 {
            let term = digit << bit;
            // |term| <= 2^31 only for |value| near i32::MAX; steps that large were refused.
            terms.push(i32::try_from(if negative { -term } else { term }).unwrap_or(i32::MAX));
        }
        bit += 1;
    }
    terms
}

#[cfg(test)]
mod tests {
    use super::non_adjacent_form;

    #[test]
    fn naf_sums_to_the_value_without_adjacent_digits() {
        for v in -3000..3000 {
            let terms = non_adjacent_form(v);
            assert_eq!(terms.iter().sum::<i32>(), v);
            let mut bits: Vec<u32> = terms
                .iter()
                .map(|t| t.unsigned_abs().trailing_zeros())
                .collect();
            bits.sort_unstable();
            assert!(bits.windows(2).all(|w| w[1] >= w[0] + 2), "{v}: {terms:?}");
        }
        assert_eq!(non_adjacent_form(7), vec![-1, 8]);
        assert_eq!(non_adjacent_form(-7), vec![1, -8]);
        assert_eq!(non_adjacent_form(5), vec![1, 4]);
    }
}
