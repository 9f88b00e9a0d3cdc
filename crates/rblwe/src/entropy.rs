//! Buffered randomness over a caller-supplied TRNG.

use rand_core::{CryptoRng, CryptoRngCore, RngCore};
use sha2::{Digest, Sha256};
use zeroize::Zeroize;

use crate::Error;

/// Bytes requested from the TRNG per synchronous refill in cold-start mode (the paper's
/// batched refills are 32 bytes).
pub const REFILL_BYTES: usize = 32;

/// A pool of `CAP` random bytes drawn from a caller-supplied TRNG (any `rand_core`
/// [`CryptoRngCore`], i.e. `RngCore + CryptoRng`: a device plugs in its hardware TRNG). The
/// pool only calls [`RngCore::try_fill_bytes`], so a TRNG reports failures there.
///
/// * Cold start ([`EntropyPool::new`]): the pool starts empty; when it runs dry it is
///   refilled synchronously in batches of [`REFILL_BYTES`](crate::REFILL_BYTES), so every refill counts against
///   the operation that needed it.
/// * Prefetched ([`EntropyPool::prefetch`]): the pool is filled to capacity ahead of time
///   (e.g. while the device is idle), taking the TRNG off the latency-critical path.
///
/// Consumed bytes are erased from the buffer immediately; a TRNG failure erases the pool
/// and returns [`Error::Entropy`].
pub struct EntropyPool<R: CryptoRngCore, const CAP: usize> {
    rng: R,
    buffer: [u8; CAP],
    /// Next unread byte.
    start: usize,
    /// One past the last unread byte.
    end: usize,
}

impl<R: CryptoRngCore, const CAP: usize> EntropyPool<R, CAP> {
    /// An empty pool (cold start) over `rng`.
    pub fn new(rng: R) -> Self {
        Self {
            rng,
            buffer: [0u8; CAP],
            start: 0,
            end: 0,
        }
    }

    /// Bytes currently buffered.
    pub fn available(&self) -> usize {
        self.end - self.start
    }

    /// Fills the pool to capacity (prefetched mode).
    pub fn prefetch(&mut self) -> Result<(), Error> {
        let available = self.available();
        self.buffer.copy_within(self.start..self.end, 0);
        self.buffer[available..].zeroize();
        self.start = 0;
        self.end = available;
        if available < CAP {
            if self
                .rng
                .try_fill_bytes(&mut self.buffer[available..])
                .is_err()
            {
                self.erase();
                return Err(Error::Entropy);
            }
            self.end = CAP;
        }
        Ok(())
    }

    /// Erases every buffered byte.
    pub fn erase(&mut self) {
        self.buffer.zeroize();
        self.start = 0;
        self.end = 0;
    }

    /// Fills `out` with random bytes, refilling synchronously from the TRNG as needed.
    pub fn fill(&mut self, out: &mut [u8]) -> Result<(), Error> {
        let mut written = 0;
        while written < out.len() {
            if self.start == self.end {
                let chunk = if CAP < REFILL_BYTES {
                    CAP
                } else {
                    REFILL_BYTES
                };
                if chunk == 0 {
                    // A zero-capacity pool passes requests straight to the TRNG.
                    return self.direct(&mut out[written..]);
                }
                if self.rng.try_fill_bytes(&mut self.buffer[..chunk]).is_err() {
                    self.erase();
                    out.zeroize();
                    return Err(Error::Entropy);
                }
                self.start = 0;
                self.end = chunk;
            }
            let take = (self.end - self.start).min(out.len() - written);
            out[written..written + take]
                .copy_from_slice(&self.buffer[self.start..self.start + take]);
            self.buffer[self.start..self.start + take].zeroize();
            self.start += take;
            written += take;
        }
        Ok(())
    }

    fn direct(&mut self, out: &mut [u8]) -> Result<(), Error> {
        if self.rng.try_fill_bytes(out).is_err() {
            out.zeroize();
            return Err(Error::Entropy);
        }
        Ok(())
    }
}

impl<R: CryptoRngCore, const CAP: usize> Drop for EntropyPool<R, CAP> {
    fn drop(&mut self) {
        self.buffer.zeroize();
    }
}

/// A deterministic byte stream for known-answer tests and for emulators without a TRNG:
/// block `j` is `SHA-256("zeppelin-rblwe/kat-entropy/v1" || len(label) || label || j)`.
///
/// It implements [`CryptoRng`] only so that it can stand in for a TRNG in tests; it is
/// NOT a source of entropy. Never use it for real keys.
#[derive(Clone)]
pub struct KatEntropy {
    prefix: Sha256,
    counter: u64,
    block: [u8; 32],
    used: usize,
}

impl KatEntropy {
    /// A stream determined by `label`.
    pub fn new(label: &[u8]) -> Self {
        let mut prefix = Sha256::new();
        prefix.update(b"zeppelin-rblwe/kat-entropy/v1");
        prefix.update((label.len() as u64).to_le_bytes());
        prefix.update(label);
        Self {
            prefix,
            counter: 0,
            block: [0u8; 32],
            used: 32,
        }
    }

    /// Bytes produced so far.
    pub fn position(&self) -> u64 {
        self.counter * 32 - (32 - self.used) as u64
    }

    fn next_block(&mut self) {
        let mut hasher = self.prefix.clone();
        hasher.update(self.counter.to_le_bytes());
        self.block.copy_from_slice(&hasher.finalize());
        self.counter += 1;
        self.used = 0;
    }
}

impl RngCore for KatEntropy {
    fn next_u32(&mut self) -> u32 {
        let mut bytes = [0u8; 4];
        self.fill_bytes(&mut bytes);
        u32::from_le_bytes(bytes)
    }

    fn next_u64(&mut self) -> u64 {
        let mut bytes = [0u8; 8];
        self.fill_bytes(&mut bytes);
        u64::from_le_bytes(bytes)
    }

    fn try_fill_bytes(&mut self, dst: &mut [u8]) -> Result<(), rand_core::Error> {
        self.fill_bytes(dst);
        Ok(())
    }

    fn fill_bytes(&mut self, dst: &mut [u8]) {
        let mut written = 0;
        while written < dst.len() {
            if self.used == 32 {
                self.next_block();
            }
            let take = (32 - self.used).min(dst.len() - written);
            dst[written..written + take].copy_from_slice(&self.block[self.used..self.used + take]);
            self.used += take;
            written += take;
        }
    }
}

impl CryptoRng for KatEntropy {}
