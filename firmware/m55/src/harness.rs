//! Test helpers of the M55 firmware; the PASS/FAIL bookkeeping is the shared harness's.

pub use zeppelin_harness::report::Harness;

/// Index and values of the first difference between two slices, if any.
pub fn first_mismatch<T: PartialEq + Copy>(a: &[T], b: &[T]) -> Option<(usize, T, T)> {
    if a.len() != b.len() {
        return a.first().map(|&x| (usize::MAX, x, x));
    }
    a.iter()
        .zip(b)
        .position(|(x, y)| x != y)
        .map(|i| (i, a[i], b[i]))
}

/// A small deterministic generator for test inputs (xorshift64*); not for secrets.
pub struct TestRng(u64);

impl TestRng {
    pub const fn new(seed: u64) -> Self {
        Self(seed | 1)
    }

    pub fn next_u32(&mut self) -> u32 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 32) as u32
    }

    /// Uniform in `[0, bound)` by rejection (test data only).
    pub fn below(&mut self, bound: u32) -> u32 {
        let zone = u32::MAX - u32::MAX % bound;
        loop {
            let x = self.next_u32();
            if x < zone {
                return x % bound;
            }
        }
    }
}
