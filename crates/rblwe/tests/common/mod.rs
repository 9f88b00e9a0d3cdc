//! Shared test helpers (included with `mod common;`).
#![allow(
    dead_code,
    reason = "each test crate uses a different subset of the helpers"
)]

use rand_core::RngCore;
use rblwe::KatEntropy;

/// Deterministic test randomness (not the code under test's own sampler path).
pub struct TestRng(pub KatEntropy);

impl TestRng {
    pub fn new(label: &str) -> Self {
        Self(KatEntropy::new(label.as_bytes()))
    }
    pub fn bytes(&mut self, out: &mut [u8]) {
        self.0.fill_bytes(out);
    }
    pub fn u32(&mut self) -> u32 {
        self.0.next_u32()
    }
    pub fn poly(&mut self, out: &mut [u8], q: u16) {
        self.bytes(out);
        for b in out.iter_mut() {
            *b &= (q - 1) as u8;
        }
    }
}
