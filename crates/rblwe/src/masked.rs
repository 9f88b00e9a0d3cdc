//! First-order masked CPA decryption.
//!
//! The secret `r2` lives as two arithmetic shares `r2 = s0 + s1 (mod 256)`, refreshed with a
//! fresh random polynomial before every decryption (`s0 += d`, `s1 -= d`). Decryption
//! computes `u0 = c1*s0` and `u1 = c1*s1 + c2 - L` (general, constant-time multiplication
//! on each share; `L` are the public bias-aware offsets), so `u0 + u1 = w - L` without `w`
//! ever being formed. The decoder then converts each coefficient's arithmetic pair to two
//! Boolean shares with a masked ripple-carry adder whose every AND is an ISW gadget (fresh
//! randomness per gadget), takes the most significant bit of each Boolean share, and packs
//! the two bit shares into two separate buffers. They are combined only once, into the
//! output message, after all coefficients are decoded. (For `q = 128` the shares are kept
//! modulo 256; the bit `log2 q - 1` of the sum is the same.)
//!
//! Four coefficients are decoded per 32-bit word (carries are cut at byte boundaries).
//! On a Cortex-M33 the AND gadget is hand-written assembly (`rblwe_isw_and`), so the
//! compiler cannot factor its expression and recombine shares (the flaw the paper found in
//! GCC output); `firmware/m33/check-gadget.py` checks the linked binary.
//!
//! Randomness per decryption: `n` bytes for the refresh plus `(log2 q + 2) * n` bytes for
//! the decoder (2 input masks and `log2 q` gadget masks per word of four coefficients).

use rand_core::CryptoRngCore;
use zeroize::Zeroize;

use crate::arith;
use crate::cpa::{check_binary_secret, check_len, Ciphertext, CpaDecryptor, PublicKey, SecretKey};
use crate::params::{decode_offset, ByteArray, ParamSet};
use crate::{Countermeasures, EntropyPool, Error, PublicParameter};

/// Random 32-bit words consumed per four decoded coefficients (upper bound over the sets).
pub const RANDOM_WORDS_PER_GROUP: usize = 10;

/// Random bytes one masked decryption draws from the pool.
pub const fn random_bytes_per_decryption(n: usize, log_q: u32) -> usize {
    n + (n / 4) * 4 * (log_q as usize + 2)
}

/// ISW AND gadget on two-share Boolean values (portable form): returns shares of
/// `(x0 ^ x1) & (y0 ^ y1)`, masked by the fresh random `r`. The cross products are folded
/// into `r` one at a time, so no intermediate depends on both shares of an input without
/// `r`. The optimizer may reorder this expression, which is why the Cortex-M33 build uses
/// the assembly version.
#[cfg(not(all(target_arch = "arm", target_feature = "dsp")))]
#[inline(never)]
pub fn isw_and(x0: u32, x1: u32, y0: u32, y1: u32, r: u32) -> (u32, u32) {
    let t = r ^ (x0 & y1);
    let t = t ^ (x1 & y0);
    ((x0 & y0) ^ r, (x1 & y1) ^ t)
}

/// ISW AND gadget (Cortex-M33: the hand-written assembly `rblwe_isw_and` in
/// the private `arch` module; see the module docs).
#[cfg(all(target_arch = "arm", target_feature = "dsp"))]
#[inline(always)]
pub fn isw_and(x0: u32, x1: u32, y0: u32, y1: u32, r: u32) -> (u32, u32) {
    crate::arch::isw_and(x0, x1, y0, y1, r)
}

/// ORs the message-bit shares into their buffers: `m0 |= b0 << shift`, `m1 |= b1 << shift`
/// (portable form).
#[cfg(not(all(target_arch = "arm", target_feature = "dsp")))]
#[inline(always)]
fn pack_shares(b0: u8, b1: u8, m0: &mut u8, m1: &mut u8, shift: u32) {
    *m0 |= b0 << shift;
    *m1 |= b1 << shift;
}

/// ORs the message-bit shares into their buffers (Cortex-M33: the assembly
/// `rblwe_pack_shares` in the private `arch` module, which keeps the two shares apart in
/// registers and on the store bus).
#[cfg(all(target_arch = "arm", target_feature = "dsp"))]
#[inline(always)]
fn pack_shares(b0: u8, b1: u8, m0: &mut u8, m1: &mut u8, shift: u32) {
    crate::arch::pack_shares(b0, b1, m0, m1, shift)
}

#[cfg(not(all(target_arch = "arm", target_feature = "dsp")))]
const LANE_LOW: u32 = 0xfefe_fefe;
#[cfg(not(all(target_arch = "arm", target_feature = "dsp")))]
const LANE_ONES: u32 = 0x0101_0101;

/// Masked arithmetic-to-Boolean conversion and MSB extraction for four coefficients.
///
/// `x0 + x1` (byte lanes, mod 256) is the value; returns two 4-bit shares whose XOR holds,
/// in bit `t`, bit `log_q - 1` of lane `t` of the sum. `r` supplies fresh randomness.
///
/// On a Cortex-M33 this is the assembly `rblwe_a2b_msb` (private `arch` module), which keeps
/// the two shares in disjoint registers; elsewhere the portable form below.
#[inline(never)]
pub fn a2b_msb(x0: u32, x1: u32, r: &[u32; RANDOM_WORDS_PER_GROUP], log_q: u32) -> (u8, u8) {
    #[cfg(all(target_arch = "arm", target_feature = "dsp"))]
    {
        crate::arch::a2b_msb(x0, x1, r, log_q)
    }
    #[cfg(not(all(target_arch = "arm", target_feature = "dsp")))]
    {
        a2b_msb_portable(x0, x1, r, log_q)
    }
}

#[cfg(not(all(target_arch = "arm", target_feature = "dsp")))]
#[inline(always)]
fn a2b_msb_portable(x0: u32, x1: u32, r: &[u32; RANDOM_WORDS_PER_GROUP], log_q: u32) -> (u8, u8) {
    // Boolean sharings of the two addends: A = x0 = a0 ^ a1, B = x1 = b0 ^ b1.
    let (a0, a1) = (x0 ^ r[0], r[0]);
    let (b0, b1) = (r[1], x1 ^ r[1]);
    // Generate and propagate, share-wise.
    let (g0, g1) = isw_and(a0, a1, b0, b1, r[2]);
    let (p0, p1) = (a0 ^ b0, a1 ^ b1);
    // Ripple carry: after step j the carries into bits 1..=j+1 of every lane are right.
    let (mut c0, mut c1) = (0u32, 0u32);
    for j in 0..(log_q as usize - 1) {
        let (t0, t1) = isw_and(p0, p1, c0, c1, r[3 + j]);
        c0 = ((g0 ^ t0) << 1) & LANE_LOW;
        c1 = ((g1 ^ t1) << 1) & LANE_LOW;
    }
    let shift = log_q - 1;
    let m0 = ((p0 ^ c0) >> shift) & LANE_ONES;
    let m1 = ((p1 ^ c1) >> shift) & LANE_ONES;
    (gather(m0), gather(m1))
}

/// Packs bit 0 of each byte lane into a nibble.
#[cfg(not(all(target_arch = "arm", target_feature = "dsp")))]
#[inline(always)]
fn gather(x: u32) -> u8 {
    ((x & 1) | ((x >> 7) & 2) | ((x >> 14) & 4) | ((x >> 21) & 8)) as u8
}

/// Combines the two message shares into `out`: the message bit is 1 XOR MSB, so the
/// complement goes on share 0 only. This is the one place the two shares meet (masking ends
/// here, as in the paper); a function of its own so that leakage tools can bound the masked
/// region (`security/tvla` stops its traces at this symbol).
#[inline(never)]
fn unmask_message(out: &mut [u8], m0: &[u8], m1: &[u8]) {
    for ((o, x), y) in out.iter_mut().zip(m0).zip(m1) {
        *o = (x ^ 0xff) ^ y;
    }
}

/// A secret key held as two arithmetic shares `s0 + s1 = r2 (mod 256)`. Zeroized on drop.
pub struct MaskedSecretKey<P: ParamSet> {
    s0: P::Poly,
    s1: P::Poly,
}

impl<P: ParamSet> Drop for MaskedSecretKey<P> {
    fn drop(&mut self) {
        self.s0.as_mut().zeroize();
        self.s1.as_mut().zeroize();
    }
}

impl<P: ParamSet> core::fmt::Debug for MaskedSecretKey<P> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("MaskedSecretKey(..)")
    }
}

impl<P: ParamSet> MaskedSecretKey<P> {
    /// Splits a plain secret key into fresh shares.
    pub fn from_secret_key<R: CryptoRngCore, const CAP: usize>(
        sk: &SecretKey<P>,
        pool: &mut EntropyPool<R, CAP>,
    ) -> Result<Self, Error> {
        Self::share(&sk.r2, pool)
    }

    fn share<R: CryptoRngCore, const CAP: usize>(
        bits: &P::Bits,
        pool: &mut EntropyPool<R, CAP>,
    ) -> Result<Self, Error> {
        let mut key = Self {
            s0: P::Poly::zeroed(),
            s1: P::Poly::zeroed(),
        };
        pool.fill(key.s0.as_mut())?;
        // s1 = r2 - s0 in one pass: each word of r2 is subtracted from in registers and
        // only the masked difference is stored (never `s1 = r2`, then `s1 -= s0`).
        key.s1.as_mut().copy_from_slice(key.s0.as_ref());
        arith::bits_minus(key.s1.as_mut(), bits.as_ref());
        Ok(key)
    }

    /// The two shares (for tests that check the refresh; never needed in normal use).
    #[doc(hidden)]
    pub fn shares(&self) -> (&[u8], &[u8]) {
        (self.s0.as_ref(), self.s1.as_ref())
    }

    /// Re-randomizes the shares: `s0 += d`, `s1 -= d` for a fresh random `d`.
    pub fn refresh<R: CryptoRngCore, const CAP: usize>(
        &mut self,
        pool: &mut EntropyPool<R, CAP>,
    ) -> Result<(), Error> {
        let mut delta = P::Poly::zeroed();
        let result = pool.fill(delta.as_mut());
        if result.is_ok() {
            arith::add_assign(self.s0.as_mut(), delta.as_ref());
            arith::sub_assign(self.s1.as_mut(), delta.as_ref());
        }
        delta.as_mut().zeroize();
        result
    }

    /// Key generation in the shared-key build: `r2` is split into shares as soon as it is
    /// drawn, and `p = r1 - a*s0 - a*s1` is computed from the shares (general
    /// multiplication) without reconstructing `r2`. Fault hardening and key erasure as in
    /// [`crate::cpa::keygen`].
    pub fn keygen<C: Countermeasures, R: CryptoRngCore, const CAP: usize>(
        a: &PublicParameter<P>,
        pool: &mut EntropyPool<R, CAP>,
    ) -> Result<(PublicKey<P>, Self), Error> {
        let mut pk = PublicKey::<P> {
            a: P::Poly::zeroed(),
            p: P::Poly::zeroed(),
        };
        pk.a.as_mut().copy_from_slice(a.as_bytes());
        let mut r1 = P::Bits::zeroed();
        let mut r2 = P::Bits::zeroed();
        let result = (|| {
            pool.fill(r1.as_mut())?;
            pool.fill(r2.as_mut())?;
            if C::FAULT_HARDENING {
                check_binary_secret::<P>(r1.as_ref())?;
                check_binary_secret::<P>(r2.as_ref())?;
            }
            let key = Self::share(&r2, pool)?;
            r2.as_mut().zeroize();
            let mut ext = P::Wide::zeroed();
            arith::extend(ext.as_mut(), pk.a.as_ref());
            let mut t = P::Poly::zeroed();
            let it0 = arith::mul_general(pk.p.as_mut(), ext.as_ref(), key.s0.as_ref());
            let it1 = arith::mul_general(t.as_mut(), ext.as_ref(), key.s1.as_ref());
            arith::add_assign(pk.p.as_mut(), t.as_ref());
            t.as_mut().zeroize();
            arith::bits_minus(pk.p.as_mut(), r1.as_ref());
            arith::reduce(pk.p.as_mut(), P::COEFF_MASK);
            if C::FAULT_HARDENING && (it0 != P::N || it1 != P::N) {
                return Err(Error::FaultDetected {
                    check: "key generation loop completion",
                });
            }
            Ok(key)
        })();
        r1.as_mut().zeroize();
        r2.as_mut().zeroize();
        match result {
            Ok(key) => Ok((pk, key)),
            Err(e) => {
                pk.a.as_mut().zeroize();
                pk.p.as_mut().zeroize();
                Err(e)
            }
        }
    }

    /// Masked CPA decryption into `out` (`n/8` bytes). Refreshes the shares first. On any
    /// failure (including the pool running out of entropy) `out` is erased.
    pub fn decrypt<C: Countermeasures, R: CryptoRngCore, const CAP: usize>(
        &mut self,
        ct: &Ciphertext<P>,
        pool: &mut EntropyPool<R, CAP>,
        out: &mut [u8],
    ) -> Result<(), Error> {
        check_len("message output buffer", out, P::BITS_BYTES)?;
        let result = self.decrypt_inner::<C, R, CAP>(ct, pool, out);
        if result.is_err() {
            out.zeroize();
        }
        result
    }

    fn decrypt_inner<C: Countermeasures, R: CryptoRngCore, const CAP: usize>(
        &mut self,
        ct: &Ciphertext<P>,
        pool: &mut EntropyPool<R, CAP>,
        out: &mut [u8],
    ) -> Result<(), Error> {
        self.refresh(pool)?;
        let mut ext = P::Wide::zeroed();
        arith::extend(ext.as_mut(), ct.c1.as_ref());
        let mut u0 = P::Poly::zeroed();
        let mut u1 = P::Poly::zeroed();
        let it0 = arith::mul_general(u0.as_mut(), ext.as_ref(), self.s0.as_ref());
        let it1 = arith::mul_general(u1.as_mut(), ext.as_ref(), self.s1.as_ref());
        arith::add_assign(u1.as_mut(), ct.c2.as_ref());
        arith::sub_offsets(u1.as_mut(), decode_offset(P::N, P::Q, 0));

        let mut m0 = P::Bits::zeroed();
        let mut m1 = P::Bits::zeroed();
        let mut random = [0u32; RANDOM_WORDS_PER_GROUP];
        let mut random_bytes = [0u8; 4 * RANDOM_WORDS_PER_GROUP];
        let words = 2 + P::LOG_Q as usize;
        let mut groups = 0usize;
        let mut result = Ok(());
        for k in (0..P::N).step_by(4) {
            if let Err(e) = pool.fill(&mut random_bytes[..4 * words]) {
                result = Err(e);
                break;
            }
            for (word, bytes) in random.iter_mut().zip(random_bytes.chunks_exact(4)) {
                *word = u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
            }
            let x0 = u32::from_le_bytes([
                u0.as_ref()[k],
                u0.as_ref()[k + 1],
                u0.as_ref()[k + 2],
                u0.as_ref()[k + 3],
            ]);
            let x1 = u32::from_le_bytes([
                u1.as_ref()[k],
                u1.as_ref()[k + 1],
                u1.as_ref()[k + 2],
                u1.as_ref()[k + 3],
            ]);
            let (b0, b1) = a2b_msb(x0, x1, &random, P::LOG_Q);
            pack_shares(
                b0,
                b1,
                &mut m0.as_mut()[k >> 3],
                &mut m1.as_mut()[k >> 3],
                (k & 7) as u32,
            );
            groups = core::hint::black_box(groups + 1);
        }
        random.zeroize();
        random_bytes.zeroize();
        u0.as_mut().zeroize();
        u1.as_mut().zeroize();
        if result.is_ok()
            && C::FAULT_HARDENING
            && (it0 != P::N || it1 != P::N || groups != P::N / 4)
        {
            result = Err(Error::FaultDetected {
                check: "masked decryption loop completion",
            });
        }
        if result.is_ok() {
            unmask_message(out, m0.as_ref(), m1.as_ref());
        }
        m0.as_mut().zeroize();
        m1.as_mut().zeroize();
        result
    }
}

impl<P: ParamSet> CpaDecryptor<P> for MaskedSecretKey<P> {
    fn cpa_decrypt<C: Countermeasures, R: CryptoRngCore, const CAP: usize>(
        &mut self,
        ct: &Ciphertext<P>,
        pool: &mut EntropyPool<R, CAP>,
        out: &mut [u8],
    ) -> Result<(), Error> {
        self.decrypt::<C, R, CAP>(ct, pool, out)
    }
}
