//! The end-to-end NTT ablation's backend (Table 3): zeppelin-ring's scalar `Portable`
//! forward and inverse transforms, and the Helium `Mve` backend for every other kernel
//! (pointwise products, BEHZ tail, CDT scan, uniform rejection, encryption's last step).
//! The two workspaces `Mve` and `ScalarNtt` then differ in the transforms only, so the
//! difference of their end-to-end figures is what the Helium NTT saves.

use zeppelin_ring::mve::Mve;
use zeppelin_ring::{ClientKernels, Modulus, Mont, NttBackend, NttView, Portable, RingError};

/// Scalar NTT, Helium everything else (see the module documentation).
#[derive(Clone, Copy, Debug, Default)]
pub struct ScalarNtt;

impl NttBackend for ScalarNtt {
    fn name(&self) -> &'static str {
        "scalar-ntt"
    }

    fn forward(&self, table: &NttView<'_>, a: &mut [u32]) -> Result<(), RingError> {
        Portable.forward(table, a)
    }

    fn inverse(&self, table: &NttView<'_>, a: &mut [u32]) -> Result<(), RingError> {
        Portable.inverse(table, a)
    }

    fn pointwise_mul(
        &self,
        modulus: &Modulus,
        a: &[u32],
        b: &[u32],
        out: &mut [u32],
    ) -> Result<(), RingError> {
        Mve.pointwise_mul(modulus, a, b, out)
    }

    fn pointwise_mul_add(
        &self,
        modulus: &Modulus,
        a: &[u32],
        b: &[u32],
        acc: &mut [u32],
    ) -> Result<(), RingError> {
        Mve.pointwise_mul_add(modulus, a, b, acc)
    }

    fn pointwise_mul_assign(
        &self,
        modulus: &Modulus,
        a: &mut [u32],
        b: &[u32],
    ) -> Result<(), RingError> {
        Mve.pointwise_mul_assign(modulus, a, b)
    }
}

impl ClientKernels for ScalarNtt {
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
    ) -> Result<(), RingError> {
        Mve.behz_accumulate(
            q, t, scale_mont, hat_t_mont, hat_gamma, x, c0, acc_t, acc_gamma,
        )
    }

    fn behz_finish(
        &self,
        t: &Modulus,
        neg_q_inv_t_mont: Mont,
        neg_q_inv_gamma: u32,
        gamma_mod_t: u32,
        gamma_inv_t_mont: Mont,
        acc_t: &mut [u32],
        acc_gamma: &[u32],
    ) -> Result<(), RingError> {
        Mve.behz_finish(
            t,
            neg_q_inv_t_mont,
            neg_q_inv_gamma,
            gamma_mod_t,
            gamma_inv_t_mont,
            acc_t,
            acc_gamma,
        )
    }

    fn cdt_scan<const L: usize>(
        &self,
        words: &[u32; L],
        cdt: &[u32],
        base: i32,
        out: &mut [i8; L],
    ) {
        Mve.cdt_scan(words, cdt, base, out)
    }

    fn cdt_scan_symmetric<const L: usize>(
        &self,
        words: &[u32; L],
        cdt: &[u32],
        base: i32,
        out: &mut [i8; L],
    ) {
        Mve.cdt_scan_symmetric(words, cdt, base, out)
    }

    fn uniform_accept(&self, words: &[u8], mask: u32, q: u32, out: &mut [u32]) -> (usize, usize) {
        Mve.uniform_accept(words, mask, q, out)
    }

    fn encrypt_finish(
        &self,
        q: &Modulus,
        delta_mont: Mont,
        plain: &[u32],
        carry: &[u32],
        error: &[i8],
        row: &mut [u32],
        negate_error: bool,
    ) -> Result<(), RingError> {
        Mve.encrypt_finish(q, delta_mont, plain, carry, error, row, negate_error)
    }

    fn chacha20_blocks4(&self, state: &[u32; 16], out: &mut zeppelin_ring::chacha::Blocks4) {
        Mve.chacha20_blocks4(state, out)
    }
}
