//! SEAL's `parms_id`: the identifier of one level of a parameter set.

use std::fmt;

/// SEAL's identifier of one level of a parameter set: unkeyed BLAKE2b with a 32-byte output
/// over the little-endian `u64` words `[scheme, n, q_0, ..., q_{k-1}, t]`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct ParmsId(pub [u8; 32]);

impl ParmsId {
    /// The all-zero id SEAL gives to non-NTT plaintexts.
    pub const ZERO: ParmsId = ParmsId([0; 32]);

    /// Computes the id of a level from its scheme byte, degree, primes and plain modulus.
    pub fn compute(scheme: u8, n: u64, coeff_modulus: &[u64], plain_modulus: u64) -> ParmsId {
        let mut state = blake2b_simd::Params::new().hash_length(32).to_state();
        state.update(&u64::from(scheme).to_le_bytes());
        state.update(&n.to_le_bytes());
        for q in coeff_modulus {
            state.update(&q.to_le_bytes());
        }
        state.update(&plain_modulus.to_le_bytes());
        let mut id = [0u8; 32];
        id.copy_from_slice(state.finalize().as_bytes());
        ParmsId(id)
    }
}

impl fmt::Display for ParmsId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // SEAL prints parms_id as four u64 words in hex.
        for (i, chunk) in self.0.chunks_exact(8).enumerate() {
            let mut w = [0u8; 8];
            w.copy_from_slice(chunk);
            if i > 0 {
                f.write_str(" ")?;
            }
            write!(f, "{:016X}", u64::from_le_bytes(w))?;
        }
        Ok(())
    }
}

impl fmt::Debug for ParmsId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ParmsId({self})")
    }
}
