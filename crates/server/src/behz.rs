//! BFV `multiply` and `square` as SEAL 4.1 computes them (`Evaluator::bfv_multiply`, BEHZ with
//! `RNSTool`), byte for byte, on 30-bit auxiliary primes of our own.
//!
//! # Why our auxiliary primes give SEAL's bytes
//!
//! SEAL extends each input polynomial `x` (residues mod `q = q_1···q_k`) to an auxiliary base
//! `Bsk = B ∪ {m_sk}` through `m̃ = 2^32`, tensors in both bases, scales by `t/q` in `Bsk`
//! and converts back. Every step is a function of integers that does not depend on which
//! primes make up `Bsk`:
//!
//! 1. `fastbconv_m_tilde`: `v = Σ_i [x_i·m̃·(q/q_i)^-1]_{q_i}·(q/q_i)`, an integer in
//!    `[0, k·q)`, taken mod every prime of `Bsk` and mod `m̃`.
//! 2. `sm_mrq`: `r = [−v·q^-1]_{m̃}` centred in `[−m̃/2, m̃/2)`, and `x' = (v + q·r)/m̃`, an
//!    integer `≡ x (mod q)` in `(−q/2, q/2 + k·q/m̃)`, taken mod every prime of `Bsk`.
//! 3. to 5. The tensor `T` of the lifted polynomials in `Z[X]/(X^n+1)` (its residues mod `q`
//!    are those of the tensor of the inputs, as `x' ≡ x`): exact residues in both bases, by
//!    NTT.
//! 6. and 7. `fast_floor`: with `F = Σ_i [t·T_i·(q/q_i)^-1]_{q_i}·(q/q_i)` (`t·T mod q` plus
//!    `q·e`, `0 ≤ e < k`), `y = (t·T − F)/q`, an integer, mod every prime of `Bsk`.
//! 8. `fastbconv_sk` (Shenoy–Kumaresan): with `ỹ = y mod B` and `ỹ + B·e` its fast conversion
//!    (`0 ≤ e < |B|`, the number of primes of `B`), SEAL's correction is
//!    `α = [(ỹ + B·e − y)/B]_{m_sk} = [e − ⌊y/B⌋]_{m_sk}`, read as negative above `m_sk/2`, and
//!    the output `ỹ + B·e − α·B` is `y mod q_i` exactly when `e − ⌊y/B⌋` lies in
//!    `[−(m_sk−1)/2, (m_sk−1)/2]`, which holds for `|y| < B·((m_sk−1)/2 − |B|)`.
//!
//! So the output is `y mod q_i` for both SEAL (61-bit `Bsk` primes) and us as long as `|y|` is
//! below that range on both sides (SEAL sizes its base by the same condition,
//! `K·n·t·q² < q·B·m_sk`). With `s = min(size_a, size_b)` products per tensor coefficient
//! (`s ≤ 8`, since SEAL's sizes are at most 16), `|T| ≤ s·n·X²` for `X = q/2 + k·q/m̃`, and
//! `|y| < t·|T|/q + k`; [`aux_bits_needed`] is the `log2` of that bound plus one bit of
//! margin, and each level takes the fewest of our primes for which
//! `log2(B·((m_sk−1)/2 − |B|))` exceeds it (a test shows that one prime fewer changes the
//! result on extreme inputs, which SEAL's test shows we compute as SEAL does).
//!
//! # Arithmetic
//!
//! Residues are `u32` (every prime `< 2^30`); the transforms are the ring's backend NTTs and
//! every base conversion is one [`zeppelin_ring::RnsKernels::base_convert`] per target prime
//! (a weighted sum of rows, accumulated unreduced in 64-bit lanes), with every constant of a
//! step folded into its weights (`t` into the floor, `m̃^-1` into the lift, `B^-1` into `α`).
//! The tables and passes live in the private module `bconv`.

use rayon::prelude::*;
use zeppelin_seal::Ciphertext;

pub use crate::bconv::{aux_bits_needed, CIPHERTEXT_SIZE_MAX};
use crate::error::Result;
use crate::evaluator::Evaluator;

impl Evaluator {
    /// `a · b` (SEAL's `multiply` for BFV): the BEHZ tensor product, of size
    /// `a.size + b.size − 1` (at most 16), at the operands' common level; byte-identical with
    /// SEAL 4.1's result.
    pub fn multiply(&self, a: &Ciphertext, b: &Ciphertext) -> Result<Ciphertext> {
        let level = self.same_level(a, b, "multiply")?;
        self.behz.multiply(self.context(), level, a, Some(b))
    }

    /// `a²` (SEAL's `square`): the same ciphertext as `multiply(a, a)` (SEAL's own square
    /// computes `c0², 2·c0·c1, c1²`, the same residues), with each input extended once.
    pub fn square(&self, a: &Ciphertext) -> Result<Ciphertext> {
        let level = self.level_of(a, "square")?;
        self.behz.multiply(self.context(), level, a, None)
    }

    /// [`Evaluator::multiply`] of many pairs, spread over all cores (rayon).
    pub fn multiply_many(&self, pairs: &[(Ciphertext, Ciphertext)]) -> Result<Vec<Ciphertext>> {
        pairs.par_iter().map(|(a, b)| self.multiply(a, b)).collect()
    }
}
