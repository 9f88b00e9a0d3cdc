//! The ChaCha20 block function (RFC 8439, §2.3), portable: the reference of
//! [`crate::ClientKernels::chacha20_blocks4`] and its default body.
//!
//! ChaCha is ARX (32-bit additions, XORs, constant rotations): no table, no data-dependent
//! branch or address, so this code is constant time as it stands (the compiler sees fixed
//! trip counts and fixed indices). The device's secret stream (`zeppelin::ChaCha20`) calls the
//! backend's four-block kernel; Helium has an `asm!` one (`mve::chacha_kernel`).

/// The four words `"expand 32-byte k"` that open every ChaCha20 state.
pub const CONSTANTS: [u32; 4] = [0x6170_7865, 0x3320_646e, 0x7962_2d32, 0x6b20_6574];

/// The RFC 8439 input state: constants, the 256-bit key (eight little-endian words), the
/// 32-bit block counter (word 12) and the 96-bit nonce (words 13..16).
pub const fn initial_state(key: &[u32; 8], counter: u32, nonce: &[u32; 3]) -> [u32; 16] {
    [
        CONSTANTS[0],
        CONSTANTS[1],
        CONSTANTS[2],
        CONSTANTS[3],
        key[0],
        key[1],
        key[2],
        key[3],
        key[4],
        key[5],
        key[6],
        key[7],
        counter,
        nonce[0],
        nonce[1],
        nonce[2],
    ]
}

/// [`initial_state`] with the key given as its 32 bytes (RFC 8439 reads them as eight
/// little-endian words), read straight into the state: no copy of the key is left behind in
/// a temporary that would need wiping.
pub fn initial_state_from_key_bytes(key: &[u8; 32], counter: u32, nonce: &[u32; 3]) -> [u32; 16] {
    let mut state = initial_state(&[0; 8], counter, nonce);
    for (word, bytes) in state[4..12].iter_mut().zip(key.chunks_exact(4)) {
        *word = u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
    }
    state
}

#[inline(always)]
fn quarter_round(x: &mut [u32; 16], a: usize, b: usize, c: usize, d: usize) {
    x[a] = x[a].wrapping_add(x[b]);
    x[d] = (x[d] ^ x[a]).rotate_left(16);
    x[c] = x[c].wrapping_add(x[d]);
    x[b] = (x[b] ^ x[c]).rotate_left(12);
    x[a] = x[a].wrapping_add(x[b]);
    x[d] = (x[d] ^ x[a]).rotate_left(8);
    x[c] = x[c].wrapping_add(x[d]);
    x[b] = (x[b] ^ x[c]).rotate_left(7);
}

/// One ChaCha20 block (RFC 8439 §2.3.1): 20 rounds of `state`, plus `state`. The keystream
/// bytes are the little-endian bytes of `out[0]`, `out[1]`, ...
pub fn block(state: &[u32; 16], out: &mut [u32; 16]) {
    let mut x = *state;
    for _ in 0..10 {
        quarter_round(&mut x, 0, 4, 8, 12);
        quarter_round(&mut x, 1, 5, 9, 13);
        quarter_round(&mut x, 2, 6, 10, 14);
        quarter_round(&mut x, 3, 7, 11, 15);
        quarter_round(&mut x, 0, 5, 10, 15);
        quarter_round(&mut x, 1, 6, 11, 12);
        quarter_round(&mut x, 2, 7, 8, 13);
        quarter_round(&mut x, 3, 4, 9, 14);
    }
    for ((o, &w), &s) in out.iter_mut().zip(&x).zip(state) {
        *o = w.wrapping_add(s);
    }
}

/// Four ChaCha20 blocks, 256 keystream bytes in stream order, word-aligned (so a vector
/// kernel can store whole words; no more, so a stack frame holding one needs no realignment).
#[derive(Clone, Debug, PartialEq, Eq)]
#[repr(C, align(4))]
pub struct Blocks4(pub [u8; 256]);

impl Blocks4 {
    /// All zero.
    pub const ZERO: Self = Self([0; 256]);

    /// Word `k` of block `i` (little-endian), for tests.
    pub fn word(&self, i: usize, k: usize) -> u32 {
        let b = &self.0[64 * i + 4 * k..64 * i + 4 * k + 4];
        u32::from_le_bytes([b[0], b[1], b[2], b[3]])
    }
}

/// Four consecutive blocks: block `i` (counter `state[12] + i`, wrapping) into bytes
/// `64·i..64·i + 64` of `out` (the little-endian bytes of its words), i.e. 256 keystream
/// bytes in stream order.
pub fn blocks4(state: &[u32; 16], out: &mut Blocks4) {
    let mut s = *state;
    for (i, chunk) in out.0.chunks_exact_mut(64).enumerate() {
        s[12] = state[12].wrapping_add(i as u32);
        let mut b = [0u32; 16];
        block(&s, &mut b);
        for (d, w) in chunk.chunks_exact_mut(4).zip(b) {
            d.copy_from_slice(&w.to_le_bytes());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 8439 §2.3.2: key 00 01 .. 1f, nonce 00 00 00 09 00 00 00 4a 00 00 00 00, counter 1.
    pub(crate) fn rfc_state() -> [u32; 16] {
        let mut key = [0u32; 8];
        for (i, k) in key.iter_mut().enumerate() {
            let b = 4 * i as u8;
            *k = u32::from_le_bytes([b, b + 1, b + 2, b + 3]);
        }
        initial_state(&key, 1, &[0x0900_0000, 0x4a00_0000, 0])
    }

    #[test]
    fn key_bytes_are_read_as_little_endian_words() {
        let key: [u8; 32] = core::array::from_fn(|i| i as u8);
        assert_eq!(
            initial_state_from_key_bytes(&key, 1, &[0x0900_0000, 0x4a00_0000, 0]),
            rfc_state()
        );
    }

    #[test]
    fn rfc8439_block_vector() {
        let mut out = [0u32; 16];
        block(&rfc_state(), &mut out);
        assert_eq!(
            out,
            [
                0xe4e7f110, 0x15593bd1, 0x1fdd0f50, 0xc47120a3, 0xc7f4d1c7, 0x0368c033, 0x9aaa2204,
                0x4e6cd4c3, 0x466482d2, 0x09aa9f07, 0x05d7c214, 0xa2028bd9, 0xd19c12b5, 0xb94e16de,
                0xe883d0cb, 0x4e3c50a2
            ]
        );
    }

    #[test]
    fn blocks4_are_consecutive_blocks() {
        let mut s = rfc_state();
        s[12] = u32::MAX - 1; // wraps inside the call
        let mut four = Blocks4::ZERO;
        blocks4(&s, &mut four);
        for i in 0..4 {
            let mut t = s;
            t[12] = s[12].wrapping_add(i as u32);
            let mut one = [0u32; 16];
            block(&t, &mut one);
            for (k, &w) in one.iter().enumerate() {
                assert_eq!(four.word(i, k), w);
            }
        }
    }
}
