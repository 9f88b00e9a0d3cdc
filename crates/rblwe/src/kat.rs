//! Known-answer tests shared by the host tests and the firmware.
//!
//! [`generate`] runs a fixed script of operations with [`KatEntropy`] seeded by the
//! parameter set's name and hands every output, section by section, to a [`Sink`]. The
//! pinned files `tests/kats/<set>.kat` are the concatenation of all sections in order
//! (raw bytes; layout in [`generate`]). [`check`] replays the script against a pinned file
//! without any buffer the size of the file, so the firmware can run it on target.

use crate::cca::{self, CcaCiphertext, CcaSecretKey};
use crate::cpa::{self, Ciphertext, SecretKey};
use crate::masked::MaskedSecretKey;
use crate::params::{ByteArray, ParamSet};
use crate::{EntropyPool, Error, Hardened, KatEntropy, PublicParameter};

/// Pool capacity used by the KAT script.
pub const KAT_POOL: usize = 1024;

/// The public seed of `a` in the KATs.
pub const KAT_SEED: [u8; 32] = *b"zeppelin-rblwe known-answer a!!!";

/// Receives KAT sections in order.
pub trait Sink {
    /// One named section of output bytes.
    fn put(&mut self, section: &'static str, bytes: &[u8]);
}

/// Writes sections contiguously into a buffer.
pub struct Writer<'a> {
    buffer: &'a mut [u8],
    /// Bytes written (or that would have been written, if the buffer was too small).
    pub len: usize,
}

impl<'a> Writer<'a> {
    /// A writer into `buffer`.
    pub fn new(buffer: &'a mut [u8]) -> Self {
        Self { buffer, len: 0 }
    }

    /// Whether everything fitted.
    pub fn fitted(&self) -> bool {
        self.len <= self.buffer.len()
    }
}

impl Sink for Writer<'_> {
    fn put(&mut self, _section: &'static str, bytes: &[u8]) {
        let end = self.len + bytes.len();
        if end <= self.buffer.len() {
            self.buffer[self.len..end].copy_from_slice(bytes);
        }
        self.len = end;
    }
}

/// Compares sections against a pinned file, remembering the first mismatching section.
pub struct Checker<'a> {
    expected: &'a [u8],
    pos: usize,
    /// Name of the first section that differed (or ran past the end of the file).
    pub first_mismatch: Option<&'static str>,
    /// Sections compared.
    pub sections: usize,
}

impl<'a> Checker<'a> {
    /// A checker against `expected`.
    pub fn new(expected: &'a [u8]) -> Self {
        Self {
            expected,
            pos: 0,
            first_mismatch: None,
            sections: 0,
        }
    }
}

impl Sink for Checker<'_> {
    fn put(&mut self, section: &'static str, bytes: &[u8]) {
        self.sections += 1;
        let end = self.pos + bytes.len();
        let matches = end <= self.expected.len() && &self.expected[self.pos..end] == bytes;
        if !matches && self.first_mismatch.is_none() {
            self.first_mismatch = Some(section);
        }
        self.pos = end;
    }
}

/// Outcome of [`check`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KatOutcome {
    /// Every section matched and the file has no extra bytes.
    Pass {
        /// Sections compared.
        sections: usize,
    },
    /// A section differed.
    Mismatch {
        /// The first section that differed.
        section: &'static str,
    },
    /// The file is longer or shorter than the script's output.
    WrongLength {
        /// Bytes the script produced.
        produced: usize,
        /// Bytes in the file.
        expected: usize,
    },
}

/// Replays the KAT script for `P` against `expected`.
pub fn check<P: ParamSet>(expected: &[u8]) -> Result<KatOutcome, Error> {
    let mut checker = Checker::new(expected);
    generate::<P, _>(&mut checker)?;
    Ok(match checker.first_mismatch {
        Some(section) => KatOutcome::Mismatch { section },
        None if checker.pos != expected.len() => KatOutcome::WrongLength {
            produced: checker.pos,
            expected: expected.len(),
        },
        None => KatOutcome::Pass {
            sections: checker.sections,
        },
    })
}

/// The KAT script. Entropy: `KatEntropy::new(P::NAME)` through a cold pool of
/// [`KAT_POOL`] bytes; every operation uses the [`Hardened`] configuration. Sections:
///
/// | section | bytes | content |
/// |---|---|---|
/// | `a` | n | `PublicParameter::from_seed(KAT_SEED)` |
/// | `cpa.pk` | 2n | `a || p` from `cpa::keygen` |
/// | `cpa.sk` | n/8 | packed `r2` |
/// | `message` | n/8 | the message (drawn from the pool) |
/// | `cpa.ct` | 2n | `cpa::encrypt(pk, message)` |
/// | `cpa.dec` | n/8 | `cpa::decrypt` of it |
/// | `masked.dec` | n/8 | masked CPA decryption of it (key shared from `cpa.sk`) |
/// | `cca.sk` | n/8 + 32 + 2n | `cca::keygen` secret key bytes |
/// | `cca.ct` | 2n + n/4 | `cca::encrypt(pk, message)` |
/// | `cca.dec` | n/8 | `cca::decrypt` (plain key) |
/// | `cca.dec-masked` | n/8 | `cca::decrypt` (masked key) |
/// | `cca.reject` | n/8 | `cca::decrypt` of the ciphertext with bit 0 of `c4` flipped |
/// | `cca.reject-masked` | n/8 | the same with the masked key |
/// | `masked-keygen.pk` | 2n | `MaskedSecretKey::keygen` public key |
/// | `masked-keygen.dec` | n/8 | its masked decryption of `cpa::encrypt(pk, message)` |
pub fn generate<P: ParamSet, S: Sink>(sink: &mut S) -> Result<(), Error> {
    type H = Hardened;
    let mut pool: EntropyPool<KatEntropy, KAT_POOL> =
        EntropyPool::new(KatEntropy::new(P::NAME.as_bytes()));
    let a = PublicParameter::<P>::from_seed(&KAT_SEED);
    sink.put("a", a.as_bytes());

    let (pk, sk) = cpa::keygen::<P, H, _, KAT_POOL>(&a, &mut pool)?;
    sink.put("cpa.pk", pk.to_bytes().as_ref());
    let mut bits = P::Bits::zeroed();
    sk.write_bytes(bits.as_mut())?;
    sink.put("cpa.sk", bits.as_ref());

    let mut message = P::Bits::zeroed();
    pool.fill(message.as_mut())?;
    sink.put("message", message.as_ref());

    let ct: Ciphertext<P> = cpa::encrypt::<P, H, _, KAT_POOL>(&pk, message.as_ref(), &mut pool)?;
    sink.put("cpa.ct", ct.to_bytes().as_ref());
    let mut out = P::Bits::zeroed();
    cpa::decrypt::<P, H>(&sk, &ct, out.as_mut())?;
    sink.put("cpa.dec", out.as_ref());
    let mut masked = MaskedSecretKey::from_secret_key(&sk, &mut pool)?;
    masked.decrypt::<H, _, KAT_POOL>(&ct, &mut pool, out.as_mut())?;
    sink.put("masked.dec", out.as_ref());

    let (cpk, mut csk) = cca::keygen::<P, H, _, KAT_POOL>(&a, &mut pool)?;
    let mut sk_bytes = [0u8; 32 + 2 * 512 + 64];
    let sk_len = CcaSecretKey::<P, SecretKey<P>>::BYTES;
    csk.write_bytes(&mut sk_bytes[..sk_len])?;
    sink.put("cca.sk", &sk_bytes[..sk_len]);
    let cct = cca::encrypt::<P, H, _, KAT_POOL>(&cpk, message.as_ref(), &mut pool)?;
    let mut ct_bytes = [0u8; 2 * 512 + 2 * 64];
    let ct_len = CcaCiphertext::<P>::BYTES;
    cct.write_bytes(&mut ct_bytes[..ct_len])?;
    sink.put("cca.ct", &ct_bytes[..ct_len]);
    cca::decrypt::<P, H, _, _, KAT_POOL>(&mut csk, &cct, &mut pool, out.as_mut())?;
    sink.put("cca.dec", out.as_ref());
    let mut msk = csk.to_masked(&mut pool)?;
    cca::decrypt::<P, H, _, _, KAT_POOL>(&mut msk, &cct, &mut pool, out.as_mut())?;
    sink.put("cca.dec-masked", out.as_ref());

    ct_bytes[ct_len - 1 - (P::N / 8 - 1)] ^= 1; // bit 0 of c4
    let tampered = CcaCiphertext::<P>::from_bytes(&ct_bytes[..ct_len])?;
    cca::decrypt::<P, H, _, _, KAT_POOL>(&mut csk, &tampered, &mut pool, out.as_mut())?;
    sink.put("cca.reject", out.as_ref());
    cca::decrypt::<P, H, _, _, KAT_POOL>(&mut msk, &tampered, &mut pool, out.as_mut())?;
    sink.put("cca.reject-masked", out.as_ref());

    let (mpk, mut mkey) = MaskedSecretKey::<P>::keygen::<H, _, KAT_POOL>(&a, &mut pool)?;
    sink.put("masked-keygen.pk", mpk.to_bytes().as_ref());
    let ct2 = cpa::encrypt::<P, H, _, KAT_POOL>(&mpk, message.as_ref(), &mut pool)?;
    mkey.decrypt::<H, _, KAT_POOL>(&ct2, &mut pool, out.as_mut())?;
    sink.put("masked-keygen.dec", out.as_ref());

    use zeroize::Zeroize;
    sk_bytes.zeroize();
    bits.as_mut().zeroize();
    Ok(())
}
