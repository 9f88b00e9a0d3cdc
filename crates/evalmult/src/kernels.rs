//! The arithmetic the engine runs, from the shared core: on x86-64 the AVX-512 backend of
//! `zeppelin-ring` (which itself falls back to the portable code on older CPUs), elsewhere
//! the portable backend and the scalar definitions below.

use zeppelin_ring::{Modulus, RingError};

#[cfg(not(target_arch = "x86_64"))]
pub(crate) use zeppelin_ring::Portable as Backend;
#[cfg(target_arch = "x86_64")]
pub(crate) use zeppelin_ring::X86 as Backend;

/// `dst[j] = centred_p(src[j]) mod q`.
#[cfg(target_arch = "x86_64")]
pub(crate) fn lift_centered(
    src: &[u32],
    from: &Modulus,
    to: &Modulus,
    dst: &mut [u32],
) -> Result<(), RingError> {
    Backend::lift_centered(src, from, to, dst)
}

/// `dst[j] = centred_p(src[j]) mod q`.
#[cfg(not(target_arch = "x86_64"))]
pub(crate) fn lift_centered(
    src: &[u32],
    from: &Modulus,
    to: &Modulus,
    dst: &mut [u32],
) -> Result<(), RingError> {
    if src.len() != dst.len() {
        return Err(RingError::LengthMismatch {
            expected: dst.len(),
            found: src.len(),
        });
    }
    for (d, &v) in dst.iter_mut().zip(src) {
        *d = to.reduce_i64(i64::from(from.centered(v)));
    }
    Ok(())
}

/// `out_x[j] = add_x[j] + Σ_i digits[i·stride + j]·key_x[i·stride + j]·2^-32 mod q`.
#[cfg(target_arch = "x86_64")]
#[allow(clippy::too_many_arguments)]
pub(crate) fn key_switch_block(
    m: &Modulus,
    count: usize,
    stride: usize,
    digits: &[u32],
    key_a: &[u32],
    key_b: &[u32],
    add_a: &[u32],
    add_b: &[u32],
    out_a: &mut [u32],
    out_b: &mut [u32],
) -> Result<(), RingError> {
    Backend::key_switch_block(
        m, count, stride, digits, key_a, key_b, add_a, add_b, out_a, out_b,
    )
}

/// `out_x[j] = add_x[j] + Σ_i digits[i·stride + j]·key_x[i·stride + j]·2^-32 mod q`.
#[cfg(not(target_arch = "x86_64"))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn key_switch_block(
    m: &Modulus,
    count: usize,
    stride: usize,
    digits: &[u32],
    key_a: &[u32],
    key_b: &[u32],
    add_a: &[u32],
    add_b: &[u32],
    out_a: &mut [u32],
    out_b: &mut [u32],
) -> Result<(), RingError> {
    let len = out_a.len();
    let needed = count.saturating_sub(1) * stride + len;
    for found in [digits.len(), key_a.len(), key_b.len()] {
        if count > 0 && found < needed {
            return Err(RingError::LengthMismatch {
                expected: needed,
                found,
            });
        }
    }
    for found in [out_b.len(), add_a.len(), add_b.len()] {
        if found != len {
            return Err(RingError::LengthMismatch {
                expected: len,
                found,
            });
        }
    }
    for j in 0..len {
        let (mut acc_a, mut acc_b) = (add_a[j], add_b[j]);
        for i in 0..count {
            let d = digits[i * stride + j];
            acc_a = m.add(acc_a, m.mont_mul(d, key_a[i * stride + j]));
            acc_b = m.add(acc_b, m.mont_mul(d, key_b[i * stride + j]));
        }
        out_a[j] = acc_a;
        out_b[j] = acc_b;
    }
    Ok(())
}

/// Per-tower precomputation for the forward transforms of the digits.
#[cfg(target_arch = "x86_64")]
pub(crate) type ForwardTable = zeppelin_ring::ShoupTable;
/// Per-tower precomputation for the forward transforms of the digits (none needed here).
#[cfg(not(target_arch = "x86_64"))]
pub(crate) type ForwardTable = ();

/// Builds the forward table of tower `k`.
#[cfg(target_arch = "x86_64")]
pub(crate) fn forward_table(ctx: &crate::RnsContext, k: usize) -> ForwardTable {
    zeppelin_ring::ShoupTable::new(&ctx.table(k))
}

/// Builds the forward table of tower `k`.
#[cfg(not(target_arch = "x86_64"))]
pub(crate) fn forward_table(_: &crate::RnsContext, _: usize) -> ForwardTable {}

/// The forward NTT of tower `k` (OpenFHE's map), the fastest way this target has.
#[cfg(target_arch = "x86_64")]
pub(crate) fn forward(
    _: &crate::RnsContext,
    table: &ForwardTable,
    _: usize,
    a: &mut [u32],
) -> Result<(), RingError> {
    Backend::forward_shoup(table, a)
}

/// The forward NTT of tower `k` (OpenFHE's map), the fastest way this target has.
#[cfg(not(target_arch = "x86_64"))]
pub(crate) fn forward(
    ctx: &crate::RnsContext,
    _: &ForwardTable,
    k: usize,
    a: &mut [u32],
) -> Result<(), RingError> {
    use zeppelin_ring::NttBackend;
    Backend::forward(&ctx.table(k), a)
}

/// `relin_c0` (`out_b`) and `relin_c1` (`out_a`) of one block: tensor plus key switch.
#[cfg(target_arch = "x86_64")]
#[allow(clippy::too_many_arguments)]
pub(crate) fn tensor_key_switch_block(
    m: &Modulus,
    count: usize,
    stride: usize,
    digits: &[u32],
    key_a: &[u32],
    key_b: &[u32],
    x: [&[u32]; 2],
    y: [&[u32]; 2],
    out_a: &mut [u32],
    out_b: &mut [u32],
) -> Result<(), RingError> {
    Backend::tensor_key_switch_block(m, count, stride, digits, key_a, key_b, x, y, out_a, out_b)
}

/// `relin_c0` (`out_b`) and `relin_c1` (`out_a`) of one block: tensor plus key switch.
#[cfg(not(target_arch = "x86_64"))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn tensor_key_switch_block(
    m: &Modulus,
    count: usize,
    stride: usize,
    digits: &[u32],
    key_a: &[u32],
    key_b: &[u32],
    x: [&[u32]; 2],
    y: [&[u32]; 2],
    out_a: &mut [u32],
    out_b: &mut [u32],
) -> Result<(), RingError> {
    let len = out_a.len();
    for part in [x[0], x[1], y[0], y[1]] {
        if part.len() != len {
            return Err(RingError::LengthMismatch {
                expected: len,
                found: part.len(),
            });
        }
    }
    let add_b: Vec<u32> = (0..len).map(|j| m.mul(x[0][j], y[0][j])).collect();
    let add_a: Vec<u32> = (0..len)
        .map(|j| m.add(m.mul(x[0][j], y[1][j]), m.mul(x[1][j], y[0][j])))
        .collect();
    key_switch_block(
        m, count, stride, digits, key_a, key_b, &add_a, &add_b, out_a, out_b,
    )
}
