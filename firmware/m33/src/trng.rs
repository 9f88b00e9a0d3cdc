//! A stand-in for a hardware TRNG: QEMU's AN505 has none. Each 32-bit "register read" is
//! one xorshift32 step, so the cost of entropy in the cold-start figures is that of reading
//! a data register, not of a software hash. NOT a source of entropy: for measurements only.
//! (The KATs use `rblwe::KatEntropy`, as on the host.)

use core::convert::Infallible;
use rand_core::{TryCryptoRng, TryRng};

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

impl TryRng for SimTrng {
    type Error = Infallible;
    fn try_next_u32(&mut self) -> Result<u32, Infallible> {
        Ok(self.read())
    }
    fn try_next_u64(&mut self) -> Result<u64, Infallible> {
        Ok(self.read() as u64 | ((self.read() as u64) << 32))
    }
    fn try_fill_bytes(&mut self, dst: &mut [u8]) -> Result<(), Infallible> {
        for chunk in dst.chunks_mut(4) {
            let word = self.read().to_le_bytes();
            chunk.copy_from_slice(&word[..chunk.len()]);
        }
        Ok(())
    }
}

impl TryCryptoRng for SimTrng {}
