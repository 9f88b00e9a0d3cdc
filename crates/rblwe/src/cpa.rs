//! The CPA-secure RBLWE public-key encryption scheme (Buchmann et al.).

use rand_core::CryptoRngCore;
use sha2::{Digest, Sha256};
use zeroize::Zeroize;

use crate::arith;
use crate::fault::{self, Fault};
use crate::params::{decode_offset, ByteArray, ParamSet};
use crate::{Countermeasures, EntropyPool, Error};

/// Checks the length of an input byte string.
pub(crate) fn check_len(what: &'static str, bytes: &[u8], expected: usize) -> Result<(), Error> {
    if bytes.len() != expected {
        return Err(Error::WrongLength {
            what,
            expected,
            actual: bytes.len(),
        });
    }
    Ok(())
}

/// Checks that every coefficient of a public polynomial is below `q`.
pub(crate) fn check_range<P: ParamSet>(what: &'static str, bytes: &[u8]) -> Result<(), Error> {
    match bytes.iter().position(|&b| b > P::COEFF_MASK) {
        Some(index) => Err(Error::CoefficientOutOfRange {
            what,
            index,
            value: bytes[index],
            q: P::Q,
        }),
        None => Ok(()),
    }
}

/// Reads a polynomial (one byte per coefficient, each below `q`).
pub(crate) fn read_poly<P: ParamSet>(what: &'static str, bytes: &[u8]) -> Result<P::Poly, Error> {
    check_len(what, bytes, P::N)?;
    check_range::<P>(what, bytes)?;
    let mut poly = P::Poly::zeroed();
    poly.as_mut().copy_from_slice(bytes);
    Ok(poly)
}

/// Hamming weight, computed without branches on the bits.
pub(crate) fn weight(bits: &[u8]) -> u32 {
    bits.iter().map(|b| b.count_ones()).sum()
}

/// Structural validation of a binary secret: its Hamming weight must lie in `[n/8, 7n/8]`.
/// A uniform binary polynomial falls outside with probability below 2^-90 for `n >= 256`;
/// a zeroed or all-ones (stuck) key always does.
pub(crate) fn check_binary_secret<P: ParamSet>(bits: &[u8]) -> Result<(), Error> {
    let w = weight(bits) as usize;
    if w < P::N / 8 || w > P::N - P::N / 8 {
        return Err(Error::InvalidKey {
            reason: "binary secret has an implausible Hamming weight (zeroed or stuck?)",
        });
    }
    Ok(())
}

/// Constant-time equality of two byte strings of equal length: 0 if equal, else nonzero.
#[inline(never)]
pub(crate) fn diff_forward(x: &[u8], y: &[u8]) -> u32 {
    let mut acc = 0u32;
    for (a, b) in x.iter().zip(y) {
        acc |= (a ^ b) as u32;
    }
    core::hint::black_box(acc)
}

/// As [`diff_forward`], walking the strings from the end (an independent loop, so a single
/// skipped or zeroed accumulator cannot make both agree).
#[inline(never)]
pub(crate) fn diff_reverse(x: &[u8], y: &[u8]) -> u32 {
    let mut acc = 0u32;
    for (a, b) in x.iter().rev().zip(y.iter().rev()) {
        acc = acc.wrapping_add((a ^ b) as u32);
    }
    core::hint::black_box(acc)
}

/// The public polynomial `a`, fixed per deployment (a system parameter, not sent with keys).
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct PublicParameter<P: ParamSet> {
    a: P::Poly,
}

impl<P: ParamSet> PublicParameter<P> {
    /// Derives `a` from a public 32-byte seed: block `j` of the byte stream is
    /// `SHA-256("zeppelin-rblwe/v1/a" || set name || seed || j)`, each byte masked to `q`.
    pub fn from_seed(seed: &[u8; 32]) -> Self {
        let mut a = P::Poly::zeroed();
        for (j, chunk) in a.as_mut().chunks_mut(32).enumerate() {
            let mut h = Sha256::new();
            h.update(b"zeppelin-rblwe/v1/a");
            h.update(P::NAME.as_bytes());
            h.update(seed);
            h.update((j as u32).to_le_bytes());
            let block = h.finalize();
            for (dst, src) in chunk.iter_mut().zip(block.iter()) {
                *dst = src & P::COEFF_MASK;
            }
        }
        Self { a }
    }

    /// Reads `a` from `n` bytes, each below `q`.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, Error> {
        Ok(Self {
            a: read_poly::<P>("public parameter a", bytes)?,
        })
    }

    /// The coefficients of `a`.
    pub fn as_bytes(&self) -> &[u8] {
        self.a.as_ref()
    }
}

/// A public key `(a, p)`; `a` is stored with it, as in the paper's in-memory object.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct PublicKey<P: ParamSet> {
    pub(crate) a: P::Poly,
    pub(crate) p: P::Poly,
}

impl<P: ParamSet> PublicKey<P> {
    /// Serialized size: `a || p`, `2n` bytes.
    pub const BYTES: usize = 2 * P::N;

    /// Serializes as `a || p`.
    pub fn to_bytes(&self) -> P::Wide {
        let mut out = P::Wide::zeroed();
        out.as_mut()[..P::N].copy_from_slice(self.a.as_ref());
        out.as_mut()[P::N..].copy_from_slice(self.p.as_ref());
        out
    }

    /// Reads `a || p` (`2n` bytes, every coefficient below `q`).
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, Error> {
        check_len("public key", bytes, Self::BYTES)?;
        Ok(Self {
            a: read_poly::<P>("public key (a)", &bytes[..P::N])?,
            p: read_poly::<P>("public key (p)", &bytes[P::N..])?,
        })
    }

    /// The public parameter `a` this key was made with.
    pub fn parameter(&self) -> PublicParameter<P> {
        PublicParameter { a: self.a }
    }
}

/// A secret key `r2`, a packed binary polynomial (`n/8` bytes). Zeroized on drop.
pub struct SecretKey<P: ParamSet> {
    pub(crate) r2: P::Bits,
}

impl<P: ParamSet> Drop for SecretKey<P> {
    fn drop(&mut self) {
        self.r2.as_mut().zeroize();
    }
}

impl<P: ParamSet> core::fmt::Debug for SecretKey<P> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("SecretKey(..)")
    }
}

impl<P: ParamSet> SecretKey<P> {
    /// Serialized size: `n/8` bytes.
    pub const BYTES: usize = P::N / 8;

    /// Writes the packed secret into `out` (`n/8` bytes). The caller owns (and should
    /// zeroize) the copy.
    pub fn write_bytes(&self, out: &mut [u8]) -> Result<(), Error> {
        check_len("secret key output buffer", out, Self::BYTES)?;
        out.copy_from_slice(self.r2.as_ref());
        Ok(())
    }

    /// Reads a packed secret (`n/8` bytes) and validates its structure (Hamming weight).
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, Error> {
        check_len("secret key", bytes, Self::BYTES)?;
        check_binary_secret::<P>(bytes)?;
        let mut r2 = P::Bits::zeroed();
        r2.as_mut().copy_from_slice(bytes);
        Ok(Self { r2 })
    }
}

/// A CPA ciphertext `(c1, c2)`.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Ciphertext<P: ParamSet> {
    pub(crate) c1: P::Poly,
    pub(crate) c2: P::Poly,
}

impl<P: ParamSet> Ciphertext<P> {
    /// Serialized size: `c1 || c2`, `2n` bytes.
    pub const BYTES: usize = 2 * P::N;

    /// Serializes as `c1 || c2`.
    pub fn to_bytes(&self) -> P::Wide {
        let mut out = P::Wide::zeroed();
        self.write_bytes(out.as_mut());
        out
    }

    pub(crate) fn write_bytes(&self, out: &mut [u8]) {
        out[..P::N].copy_from_slice(self.c1.as_ref());
        out[P::N..2 * P::N].copy_from_slice(self.c2.as_ref());
    }

    /// Reads `c1 || c2` (`2n` bytes, every coefficient below `q`).
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, Error> {
        check_len("ciphertext", bytes, Self::BYTES)?;
        Ok(Self {
            c1: read_poly::<P>("ciphertext (c1)", &bytes[..P::N])?,
            c2: read_poly::<P>("ciphertext (c2)", &bytes[P::N..])?,
        })
    }
}

/// Key generation: `r1, r2 <- {0,1}^n` from the pool, `p = r1 - a*r2`.
///
/// With fault hardening, the sampled secrets are validated structurally and the
/// multiplication's loop completion is checked; on any failure (including a TRNG failure)
/// every partial key is erased before the error returns.
pub fn keygen<P: ParamSet, C: Countermeasures, R: CryptoRngCore, const CAP: usize>(
    a: &PublicParameter<P>,
    pool: &mut EntropyPool<R, CAP>,
) -> Result<(PublicKey<P>, SecretKey<P>), Error> {
    let mut r1 = P::Bits::zeroed();
    let mut sk = SecretKey::<P> {
        r2: P::Bits::zeroed(),
    };
    let mut pk = PublicKey::<P> {
        a: a.a,
        p: P::Poly::zeroed(),
    };
    let result = keygen_into::<P, C, R, CAP>(&mut pk, &mut sk, &mut r1, pool);
    r1.as_mut().zeroize();
    match result {
        Ok(()) => Ok((pk, sk)),
        Err(e) => {
            // Key erasure on failure: neither half of a possibly weak pair survives.
            pk.p.as_mut().zeroize();
            pk.a.as_mut().zeroize();
            sk.r2.as_mut().zeroize();
            Err(e)
        }
    }
}

fn keygen_into<P: ParamSet, C: Countermeasures, R: CryptoRngCore, const CAP: usize>(
    pk: &mut PublicKey<P>,
    sk: &mut SecretKey<P>,
    r1: &mut P::Bits,
    pool: &mut EntropyPool<R, CAP>,
) -> Result<(), Error> {
    pool.fill(r1.as_mut())?;
    pool.fill(sk.r2.as_mut())?;
    if fault::hit(Fault::ZeroSecretAtKeygen) {
        sk.r2.as_mut().zeroize();
    }
    if C::FAULT_HARDENING {
        check_binary_secret::<P>(r1.as_ref())?;
        check_binary_secret::<P>(sk.r2.as_ref())?;
    }
    let mut ext = P::Wide::zeroed();
    arith::extend(ext.as_mut(), pk.a.as_ref());
    let iterations = mul_binary::<C>(pk.p.as_mut(), ext.as_ref(), sk.r2.as_ref());
    arith::bits_minus(pk.p.as_mut(), r1.as_ref());
    arith::reduce(pk.p.as_mut(), P::COEFF_MASK);
    if C::FAULT_HARDENING {
        if iterations != P::N {
            return Err(Error::FaultDetected {
                check: "key generation loop completion",
            });
        }
        check_range::<P>("generated public key", pk.p.as_ref())?;
    }
    Ok(())
}

#[inline(always)]
fn mul_binary<C: Countermeasures>(out: &mut [u8], ext: &[u8], b: &[u8]) -> usize {
    if C::CONSTANT_TIME {
        arith::mul_binary::<true>(out, ext, b)
    } else {
        arith::mul_binary::<false>(out, ext, b)
    }
}

/// Encryption of an `n`-bit message (`n/8` bytes, bit `i` of byte `i/8` is coefficient
/// `i`), drawing `e1, e2, e3` from the pool.
pub fn encrypt<P: ParamSet, C: Countermeasures, R: CryptoRngCore, const CAP: usize>(
    pk: &PublicKey<P>,
    message: &[u8],
    pool: &mut EntropyPool<R, CAP>,
) -> Result<Ciphertext<P>, Error> {
    check_len("message", message, P::BITS_BYTES)?;
    let mut coins = [P::Bits::zeroed(); 3];
    let result = (|| {
        for e in coins.iter_mut() {
            pool.fill(e.as_mut())?;
        }
        encrypt_with_coins::<P, C>(pk, message, &coins[0], &coins[1], &coins[2])
    })();
    for e in coins.iter_mut() {
        e.as_mut().zeroize();
    }
    result
}

/// Deterministic encryption with caller-supplied binary polynomials `e1, e2, e3` (used by
/// the CCA2 wrapper's re-encryption): `c1 = a*e1 + e2`, `c2 = p*e1 + e3 + Encode(m)`.
pub fn encrypt_with_coins<P: ParamSet, C: Countermeasures>(
    pk: &PublicKey<P>,
    message: &[u8],
    e1: &P::Bits,
    e2: &P::Bits,
    e3: &P::Bits,
) -> Result<Ciphertext<P>, Error> {
    check_len("message", message, P::BITS_BYTES)?;
    let mut ct = Ciphertext::<P> {
        c1: P::Poly::zeroed(),
        c2: P::Poly::zeroed(),
    };
    let mut ext = P::Wide::zeroed();
    arith::extend(ext.as_mut(), pk.a.as_ref());
    let it1 = mul_binary::<C>(ct.c1.as_mut(), ext.as_ref(), e1.as_ref());
    arith::add_bits(ct.c1.as_mut(), e2.as_ref(), 1);
    arith::extend(ext.as_mut(), pk.p.as_ref());
    let it2 = mul_binary::<C>(ct.c2.as_mut(), ext.as_ref(), e1.as_ref());
    arith::add_bits(ct.c2.as_mut(), e3.as_ref(), 1);
    // Packed message encoder: each bit becomes 0 or q/2, eight coefficients per byte.
    arith::add_bits(ct.c2.as_mut(), message, (P::Q / 2) as u8);
    arith::reduce(ct.c1.as_mut(), P::COEFF_MASK);
    arith::reduce(ct.c2.as_mut(), P::COEFF_MASK);
    if C::FAULT_HARDENING && (it1 != P::N || it2 != P::N) {
        ct.c1.as_mut().zeroize();
        ct.c2.as_mut().zeroize();
        return Err(Error::FaultDetected {
            check: "encryption loop completion",
        });
    }
    Ok(ct)
}

/// Decryption into `out` (`n/8` bytes): `w = c1*r2 + c2`, then the bias-aware decoder.
///
/// With fault hardening: the secret is validated structurally first, the multiplication's
/// loop completion is checked, and the decoder runs twice into two buffers that must agree
/// (a skipped store or loop cannot silently corrupt the output). On failure `out` is
/// erased.
pub fn decrypt<P: ParamSet, C: Countermeasures>(
    sk: &SecretKey<P>,
    ct: &Ciphertext<P>,
    out: &mut [u8],
) -> Result<(), Error> {
    check_len("message output buffer", out, P::BITS_BYTES)?;
    let result = decrypt_inner::<P, C>(sk, ct, out);
    if result.is_err() {
        out.zeroize();
    }
    result
}

fn decrypt_inner<P: ParamSet, C: Countermeasures>(
    sk: &SecretKey<P>,
    ct: &Ciphertext<P>,
    out: &mut [u8],
) -> Result<(), Error> {
    let zeroed = P::Bits::zeroed();
    let r2 = if fault::hit(Fault::ZeroSecretAtDecrypt) {
        &zeroed
    } else {
        &sk.r2
    };
    if C::FAULT_HARDENING {
        check_binary_secret::<P>(r2.as_ref())?;
    }
    let mut ext = P::Wide::zeroed();
    arith::extend(ext.as_mut(), ct.c1.as_ref());
    let mut w = P::Poly::zeroed();
    let iterations = mul_binary::<C>(w.as_mut(), ext.as_ref(), r2.as_ref());
    arith::add_assign(w.as_mut(), ct.c2.as_ref());
    arith::sub_offsets(w.as_mut(), decode_offset(P::N, P::Q, 0));
    arith::decode_msb(w.as_ref(), P::LOG_Q, out);
    if fault::hit(Fault::CorruptDecodedByte) {
        out[0] ^= 0x01;
    }
    let mut result = Ok(());
    if C::FAULT_HARDENING {
        let mut again = P::Bits::zeroed();
        arith::decode_msb(w.as_ref(), P::LOG_Q, again.as_mut());
        let diff = diff_forward(out, again.as_ref());
        again.as_mut().zeroize();
        if iterations != P::N {
            result = Err(Error::FaultDetected {
                check: "decryption loop completion",
            });
        } else if diff != 0 {
            result = Err(Error::FaultDetected {
                check: "duplicated decoder output",
            });
        }
    }
    w.as_mut().zeroize();
    result
}

/// Anything that can perform CPA decryption for the CCA2 wrapper: the plain
/// [`SecretKey`] or the masked [`crate::masked::MaskedSecretKey`] (which consumes
/// randomness for its shares).
pub trait CpaDecryptor<P: ParamSet> {
    /// Decrypts `ct` into `out` (`n/8` bytes).
    fn cpa_decrypt<C: Countermeasures, R: CryptoRngCore, const CAP: usize>(
        &mut self,
        ct: &Ciphertext<P>,
        pool: &mut EntropyPool<R, CAP>,
        out: &mut [u8],
    ) -> Result<(), Error>;
}

impl<P: ParamSet> CpaDecryptor<P> for SecretKey<P> {
    fn cpa_decrypt<C: Countermeasures, R: CryptoRngCore, const CAP: usize>(
        &mut self,
        ct: &Ciphertext<P>,
        _pool: &mut EntropyPool<R, CAP>,
        out: &mut [u8],
    ) -> Result<(), Error> {
        decrypt::<P, C>(self, ct, out)
    }
}
