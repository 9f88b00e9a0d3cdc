//! The plain reference: OpenFHE 1.5.1's BGVRNS `EvalMult` with BV relinearization
//! (`digitSize = 0`), one ciphertext at a time, written the obvious way with the portable
//! backend. The fast engine ([`crate::Engine`]) is tested against it.
//!
//! Steps (all residues in OpenFHE's EVALUATION format):
//! 1. tensor: `c0 = x0·y0`, `c1 = x0·y1 + x1·y0`, `c2 = x1·y1`, pointwise per tower;
//! 2. digits (OpenFHE's `CRTDecompose`): `c2` to coefficient form; digit `i` keeps `c2`'s
//!    evaluation tower `i` unchanged, and its tower `k ≠ i` is `NTT_k` of coefficient tower `i`
//!    lifted to its centred representative (`v > q_i/2 ↦ v − q_i`) and reduced mod `q_k`;
//! 3. key switch: `ks_b = Σ_i b_i ⊙ d_i`, `ks_a = Σ_i a_i ⊙ d_i`;
//! 4. result: `(c0 + ks_b, c1 + ks_a)`.

use zeppelin_ring::{NttBackend, Portable};

use crate::context::{Ciphertext, RelinKey, RnsContext};
use crate::error::{CiphertextId, EvalMultError, Factor, Input, Result};

/// The three components of the unrelinearized product (`EvalMultNoRelin`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tensor {
    /// `x0·y0`.
    pub c0: Vec<u32>,
    /// `x0·y1 + x1·y0`.
    pub c1: Vec<u32>,
    /// `x1·y1`.
    pub c2: Vec<u32>,
}

/// The tensor product of two evaluation-format ciphertexts.
pub fn tensor(ctx: &RnsContext, x: &Ciphertext, y: &Ciphertext) -> Result<Tensor> {
    x.check(ctx, CiphertextId::Single(Factor::X))?;
    y.check(ctx, CiphertextId::Single(Factor::Y))?;
    let n = ctx.ring_dim();
    let len = ctx.poly_len();
    let (mut c0, mut c1, mut c2) = (vec![0; len], vec![0; len], vec![0; len]);
    for j in 0..len {
        let m = &ctx.moduli()[j / n];
        c0[j] = m.mul(x.c0[j], y.c0[j]);
        c1[j] = m.add(m.mul(x.c0[j], y.c1[j]), m.mul(x.c1[j], y.c0[j]));
        c2[j] = m.mul(x.c1[j], y.c1[j]);
    }
    Ok(Tensor { c0, c1, c2 })
}

/// OpenFHE's BV digit decomposition of an evaluation-format polynomial: one RNS polynomial
/// (evaluation format) per tower, in tower order.
pub fn decompose(ctx: &RnsContext, c2: &[u32]) -> Result<Vec<Vec<u32>>> {
    ctx.check_poly(Input::C2, c2)?;
    let n = ctx.ring_dim();
    let towers = ctx.towers();
    let mut coefficients = c2.to_vec();
    for (k, tower) in coefficients.chunks_exact_mut(n).enumerate() {
        Portable.inverse(&ctx.table(k), tower)?;
    }
    let mut digits = Vec::with_capacity(towers);
    for i in 0..towers {
        let source = &ctx.moduli()[i];
        let mut digit = vec![0u32; ctx.poly_len()];
        for (k, tower) in digit.chunks_exact_mut(n).enumerate() {
            if k == i {
                tower.copy_from_slice(&c2[i * n..(i + 1) * n]);
                continue;
            }
            let target = &ctx.moduli()[k];
            for (out, &v) in tower.iter_mut().zip(&coefficients[i * n..(i + 1) * n]) {
                *out = target.reduce_i64(i64::from(source.centered(v)));
            }
            Portable.forward(&ctx.table(k), tower)?;
        }
        digits.push(digit);
    }
    Ok(digits)
}

/// The key-switch sums `(ks_b, ks_a) = (Σ_i b_i ⊙ d_i, Σ_i a_i ⊙ d_i)`.
pub fn key_switch(
    ctx: &RnsContext,
    key: &RelinKey,
    digits: &[Vec<u32>],
) -> Result<(Vec<u32>, Vec<u32>)> {
    key.check(ctx)?;
    if digits.len() != ctx.towers() {
        return Err(EvalMultError::shape(
            Input::Digits,
            ctx.towers(),
            digits.len(),
            "digits",
        ));
    }
    let n = ctx.ring_dim();
    let len = ctx.poly_len();
    let (mut ks_b, mut ks_a) = (vec![0u32; len], vec![0u32; len]);
    for (i, digit) in digits.iter().enumerate() {
        ctx.check_poly(Input::Digit { digit: i }, digit)?;
        for j in 0..len {
            let m = &ctx.moduli()[j / n];
            ks_b[j] = m.add(ks_b[j], m.mul(key.b[i][j], digit[j]));
            ks_a[j] = m.add(ks_a[j], m.mul(key.a[i][j], digit[j]));
        }
    }
    Ok((ks_b, ks_a))
}

/// Everything one reference `EvalMult` computes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReferenceOutput {
    /// The unrelinearized product.
    pub tensor: Tensor,
    /// The BV digits of `tensor.c2`.
    pub digits: Vec<Vec<u32>>,
    /// The relinearized product, what OpenFHE's `EvalMult` returns.
    pub relin: Ciphertext,
}

/// OpenFHE's `EvalMult(x, y)` with BV relinearization, unbatched.
pub fn eval_mult(
    ctx: &RnsContext,
    key: &RelinKey,
    x: &Ciphertext,
    y: &Ciphertext,
) -> Result<ReferenceOutput> {
    key.check(ctx)?;
    let tensor = tensor(ctx, x, y)?;
    let digits = decompose(ctx, &tensor.c2)?;
    let (ks_b, ks_a) = key_switch(ctx, key, &digits)?;
    let n = ctx.ring_dim();
    let relin = Ciphertext {
        c0: (0..ctx.poly_len())
            .map(|j| ctx.moduli()[j / n].add(tensor.c0[j], ks_b[j]))
            .collect(),
        c1: (0..ctx.poly_len())
            .map(|j| ctx.moduli()[j / n].add(tensor.c1[j], ks_a[j]))
            .collect(),
    };
    Ok(ReferenceOutput {
        tensor,
        digits,
        relin,
    })
}
