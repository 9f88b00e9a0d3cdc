//! A stand-in for a hardware TRNG: QEMU's AN505 has none. Each 32-bit "register read" is
//! one xorshift32 step, so the cost of entropy in the cold-start figures is that of reading
//! a data register, not of a software hash. NOT a source of entropy: for measurements only.
//! (The KATs use `rblwe::KatEntropy`, as on the host.)

use rand_core::{CryptoRng, RngCore};

pub struct SimTrng(u32);

impl SimTrng {
    pub const fn new(seed: u32) -> Self {
        Self(seed | 1)
    }

    #[inline(always)]
    fn read(&mut self) -> u32 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        self.0 = x;
        x
    }
}

impl RngCore for SimTrng {
    fn next_u32(&mut self) -> u32 {
        self.read()
    }
    fn next_u64(&mut self) -> u64 {
        self.read() as u64 | ((self.read() as u64) << 32)
    }
    fn fill_bytes(&mut self, dst: &mut [u8]) {
        for chunk in dst.chunks_mut(4) {
            let word = self.read().to_le_bytes();
            chunk.copy_from_slice(&word[..chunk.len()]);
        }
    }
    fn try_fill_bytes(&mut self, dst: &mut [u8]) -> Result<(), rand_core::Error> {
        self.fill_bytes(dst);
        Ok(())
    }
}

impl CryptoRng for SimTrng {}
