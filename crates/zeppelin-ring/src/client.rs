//! The BFV device client's per-coefficient kernels: the BEHZ decryption tail (`γ = 2^31`),
//! the constant-time CDT scan of the Gaussian sampler and the four-block ChaCha20 of the
//! secret keystream, behind one trait so that the
//! client is written once, generic over its backend, without `cfg(target_arch)` blocks.
//!
//! The arguments are primitive (moduli, Montgomery constants, rows): the scheme's parameter
//! tables live in the `zeppelin` crate, which derives every constant (see its `behz` and
//! `sampler` modules for the derivations). [`crate::Portable`] is the reference (the scalar
//! loops); Helium has assembly kernels; the x86-64 backends have AVX2/AVX-512 kernels (the
//! same client code runs on gateways and servers).
//!
//! The BEHZ and CDT kernels handle secret data: masks only, no branch on data, no division,
//! no indexed load (the binary audit of `firmware/m55` checks the copies the device runs).
//! [`ClientKernels::uniform_accept`] runs on the public stream only.

use crate::ct;
use crate::error::RingError;
use crate::modulus::{Modulus, Mont};
use crate::ntt::NttBackend;

/// The device client's scheme kernels; see the [module documentation](self).
pub trait ClientKernels: NttBackend {
    /// BFV decryption by BEHZ (γ = 2^31), steps 1–2 for one prime `q`: for every
    /// coefficient `j`,
    ///
    /// ```text
    /// y        = mont_q(x_j + c0_j mod q, scale_mont)          (= [(x_j + c0_j)·scale]_q)
    /// acc_t_j  ← acc_t_j + mont_t(y, hat_t_mont) mod t
    /// acc_γ_j  ← acc_γ_j + y·hat_γ mod 2^32
    /// ```
    ///
    /// with `mont_p(a, b) = a·b·2^-32 mod p`, canonical. Defined (and equal across backends)
    /// when `x_j, c0_j < q`, `acc_t_j < t`, `scale_mont < q`, `hat_t_mont < t`; outside
    /// that, results are unspecified but memory-safe.
    ///
    /// Errors: rows of different lengths.
    #[expect(
        clippy::too_many_arguments,
        reason = "the kernel's operands, primitive so that the scheme owns its tables"
    )]
    fn behz_accumulate(
        &self,
        q: &Modulus,
        t: &Modulus,
        scale_mont: Mont,
        hat_t_mont: Mont,
        hat_gamma: u32,
        x: &[u32],
        c0: &[u32],
        acc_t: &mut [u32],
        acc_gamma: &mut [u32],
    ) -> Result<(), RingError>;

    /// BFV decryption by BEHZ (γ = 2^31), steps 3–5: `acc_t` (mod `t`, overwritten with the
    /// message) and `acc_γ` become
    ///
    /// ```text
    /// z_t   = mont_t(acc_t_j, neg_q_inv_t_mont)
    /// z_γ   = acc_γ_j·neg_q_inv_gamma mod 2^31
    /// z_γ,t = mont_t(z_γ, 2^32 mod t) − (gamma_mod_t if z_γ ≥ 2^30 else 0) mod t
    /// m_j   = mont_t(z_t − z_γ,t mod t, gamma_inv_t_mont)
    /// ```
    ///
    /// i.e. `m = (z_t − centred(z_γ))·γ^-1 mod t`. Defined (and equal across backends) when
    /// `acc_t_j < t`, the Montgomery constants are below `t` and `gamma_mod_t < t`.
    ///
    /// Errors: rows of different lengths.
    #[expect(
        clippy::too_many_arguments,
        reason = "the kernel's operands, primitive so that the scheme owns its tables"
    )]
    fn behz_finish(
        &self,
        t: &Modulus,
        neg_q_inv_t_mont: Mont,
        neg_q_inv_gamma: u32,
        gamma_mod_t: u32,
        gamma_inv_t_mont: Mont,
        acc_t: &mut [u32],
        acc_gamma: &[u32],
    ) -> Result<(), RingError>;

    /// A constant-time cumulative-distribution-table sampler step, `L` words at a time (`L` a
    /// positive multiple of 8, checked at compile time):
    /// `out[j] = base − #{k : (words[j] mod 2^31) < cdt[k]}` (as `i8`, wrapping), every word
    /// compared with every entry. With `cdt` ascending and `base = cdt.len() − B` this is the
    /// sample `−B + #{k : r >= cdt[k]}` of a CDT over `[−B, B]`. Entries must be at most
    /// `2^31` (larger ones give results that may differ between backends).
    fn cdt_scan<const L: usize>(&self, words: &[u32; L], cdt: &[u32], base: i32, out: &mut [i8; L]);

    /// [`Self::cdt_scan`] for a table the caller guarantees symmetric: `cdt.len() = 2B`,
    /// `cdt[2B − 1 − k] = 2^31 − cdt[k]` and `cdt[k] < 2^30` for `k < B` (a centred
    /// distribution, as the client's Gaussian). Same results as `cdt_scan` then; a backend
    /// may use the symmetry to compare with half the table only (the x86-64 ones do:
    /// `r` and `2^31 − 1 − r` fold onto one half, masks only). For any other table the
    /// results are unspecified (but memory-safe).
    fn cdt_scan_symmetric<const L: usize>(
        &self,
        words: &[u32; L],
        cdt: &[u32],
        base: i32,
        out: &mut [i8; L],
    );

    /// The rejection step of the uniform sampler, for PUBLIC keystream only: the
    /// little-endian words of `words` (its length rounded down to a multiple of 4) are read
    /// in order, and each candidate `w & mask` below `q` is appended to `out`; reading stops
    /// right after the word that fills `out`, or at the end of `words`. Returns
    /// `(words read, residues written)`, equal on every backend.
    ///
    /// Its running time depends on how many candidates are rejected, which is a function of
    /// the public stream only (the uniform mask `a`, whose seed travels in the clear).
    fn uniform_accept(&self, words: &[u8], mask: u32, q: u32, out: &mut [u32]) -> (usize, usize);

    /// The last step of BFV encryption for one prime `q`: with
    /// `Δm_j = mont_q(m_j, delta_mont) + carry_j mod q` (the scaled plaintext: `m_j·[Q/t]_q`
    /// plus the rounding carry, which does not depend on `q`) and `e_j mod q`,
    ///
    /// ```text
    /// negate_error:  row_j ← (Δm_j − row_j) − e_j mod q    (symmetric: c0 = Δm − a·s − e)
    /// otherwise:     row_j ← (row_j + e_j) + Δm_j mod q    (public key: c0 = p0·u + e1 + Δm)
    /// ```
    ///
    /// Defined (and equal across backends) when `m_j, carry_j, row_j < q`, `delta_mont < q`
    /// and `|e_j| < q`. Secret data (message, error): masks only.
    ///
    /// Errors: rows of different lengths.
    #[expect(
        clippy::too_many_arguments,
        reason = "the kernel's operands, primitive so that the scheme owns its tables"
    )]
    fn encrypt_finish(
        &self,
        q: &Modulus,
        delta_mont: Mont,
        plain: &[u32],
        carry: &[u32],
        error: &[i8],
        row: &mut [u32],
        negate_error: bool,
    ) -> Result<(), RingError>;

    /// Four ChaCha20 blocks (RFC 8439 block function): block `i` of `state` (the RFC input
    /// state, see [`crate::chacha::initial_state`]) with block counter `state[12] + i`
    /// (wrapping) into bytes `64·i..64·i + 64` of `out`: 256 keystream bytes in stream order.
    /// Equal on every backend.
    ///
    /// Secret data (the key of the device's secret stream): constant time, no allocation.
    /// The default body is the portable block function ([`crate::chacha::blocks4`]); Helium
    /// overrides it with a straight-line `asm!` kernel.
    #[inline]
    fn chacha20_blocks4(&self, state: &[u32; 16], out: &mut crate::chacha::Blocks4) {
        crate::chacha::blocks4(state, out)
    }
}

/// [`ClientKernels::uniform_accept`] as a scalar loop: the portable backend's kernel, the
/// reference every backend equals, and the tail of the vector kernels. Public data only: it
/// branches on rejections.
pub(crate) fn uniform_accept(words: &[u8], mask: u32, q: u32, out: &mut [u32]) -> (usize, usize) {
    let mut written = 0;
    let mut read = 0;
    for word in words.chunks_exact(4) {
        if written == out.len() {
            break;
        }
        read += 1;
        let candidate = u32::from_le_bytes([word[0], word[1], word[2], word[3]]) & mask;
        if candidate < q {
            out[written] = candidate;
            written += 1;
        }
    }
    (read, written)
}

/// [`ClientKernels::encrypt_finish`], the scalar loop (and the vector kernels' tail).
pub(crate) fn encrypt_finish(
    q: &Modulus,
    delta_mont: Mont,
    plain: &[u32],
    carry: &[u32],
    error: &[i8],
    row: &mut [u32],
    negate_error: bool,
) -> Result<(), RingError> {
    for len in [plain.len(), carry.len(), error.len()] {
        RingError::check_len(row.len(), len)?;
    }
    let qv = q.value();
    for (((x, &m), &c), &e) in row.iter_mut().zip(plain).zip(carry).zip(error) {
        let dm = q.add(q.mul_mont_constant(m, delta_mont), c);
        let v = e as i32 as u32;
        let e = v.wrapping_add(qv & ct::mask_from_msb(v));
        *x = if negate_error {
            q.sub(q.sub(dm, *x), e)
        } else {
            q.add(q.add(*x, e), dm)
        };
    }
    Ok(())
}
