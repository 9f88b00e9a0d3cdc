//! The fixed inputs of the known-answer tests (`tests/kat.rs`, files under `tests/kats/`),
//! shared so that a device image reproduces exactly the same bytes.
//!
//! For each preset the KATs are: the secret key from [`SECRET_KEY_SEED`]; the public key from
//! [`PUBLIC_KEY_SEED_A`] / [`PUBLIC_KEY_SEED_E`]; and, for the plaintext encoding
//! [`slots`], one ciphertext of each path at the full level: seeded
//! ([`SEEDED_SEED_A`], [`SEEDED_SEED_E`]), classic symmetric ([`SYMMETRIC_SEED_A`],
//! [`SYMMETRIC_SEED_E`]) and public-key ([`PUBLIC_SEED_E`]).

use crate::params::Params;

const fn counting_seed(first: u8) -> [u8; 32] {
    let mut s = [0u8; 32];
    let mut i = 0;
    while i < 32 {
        s[i] = first.wrapping_add(i as u8);
        i += 1;
    }
    s
}

/// Secret seed of the secret key: bytes `0x00, 0x01, …, 0x1f`.
pub const SECRET_KEY_SEED: [u8; 32] = counting_seed(0x00);
/// Public seed of the public key's `â`: bytes `0x20, …, 0x3f`.
pub const PUBLIC_KEY_SEED_A: [u8; 32] = counting_seed(0x20);
/// Secret seed of the public key's error: bytes `0x40, …, 0x5f`.
pub const PUBLIC_KEY_SEED_E: [u8; 32] = counting_seed(0x40);
/// Public seed of the seeded ciphertext: bytes `0x60, …, 0x7f`.
pub const SEEDED_SEED_A: [u8; 32] = counting_seed(0x60);
/// Secret seed of the seeded ciphertext: bytes `0x80, …, 0x9f`.
pub const SEEDED_SEED_E: [u8; 32] = counting_seed(0x80);
/// Public seed of the classic symmetric ciphertext: bytes `0xa0, …, 0xbf`.
pub const SYMMETRIC_SEED_A: [u8; 32] = counting_seed(0xa0);
/// Secret seed of the classic symmetric ciphertext: bytes `0xc0, …, 0xdf`.
pub const SYMMETRIC_SEED_E: [u8; 32] = counting_seed(0xc0);
/// Secret seed of the public-key ciphertext: bytes `0xe0, …, 0xff`.
pub const PUBLIC_SEED_E: [u8; 32] = counting_seed(0xe0);

/// The KAT slots of preset `P` (`out` holds `n` of them): slot `i` holds
/// `(7919·i + 13) mod t`.
pub fn slots<P: Params>(out: &mut [u32]) {
    for (i, s) in out.iter_mut().enumerate() {
        *s = ((7919 * i as u64 + 13) % P::T as u64) as u32;
    }
}
