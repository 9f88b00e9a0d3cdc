//! Plain schoolbook reference implementations, written for obviousness rather than speed or
//! side-channel safety. Tests (on the host and on the target) compare the byte-lane kernels
//! against these. Not for use on secrets.
#![expect(
    clippy::needless_range_loop,
    reason = "index loops mirror the textbook definitions"
)]

/// Schoolbook negacyclic product `a * b mod (x^n + 1, q)` for `a, b` in `Z_q^n` given as one
/// coefficient per byte (a binary polynomial as bytes 0/1).
pub fn negacyclic_mul(out: &mut [u8], a: &[u8], b: &[u8], q: u16) {
    let n = a.len();
    for k in 0..n {
        let mut acc: i64 = 0;
        for i in 0..n {
            for j in 0..n {
                if (i + j) % n == k {
                    let term = a[j] as i64 * b[i] as i64;
                    if i + j < n {
                        acc += term;
                    } else {
                        acc -= term; // x^n = -1
                    }
                }
            }
        }
        out[k] = acc.rem_euclid(q as i64) as u8;
    }
}

/// Faster schoolbook (same definition, one pass over `(i, j)` pairs).
pub fn negacyclic_mul_fast(out: &mut [u8], a: &[u8], b: &[u8], q: u16) {
    let n = a.len();
    let mut acc = [0i64; 1024];
    for (i, &bi) in b.iter().enumerate() {
        for (j, &aj) in a.iter().enumerate() {
            let term = aj as i64 * bi as i64;
            if i + j < n {
                acc[i + j] += term;
            } else {
                acc[i + j - n] -= term;
            }
        }
    }
    for k in 0..n {
        out[k] = acc[k].rem_euclid(q as i64) as u8;
    }
}

/// Unpacks a packed binary polynomial into one 0/1 byte per coefficient.
pub fn unpack_bits(out: &mut [u8], bits: &[u8]) {
    for (i, o) in out.iter_mut().enumerate() {
        *o = (bits[i / 8] >> (i % 8)) & 1;
    }
}

/// Scalar bias-aware decoder with the published closed form `L_i = i - n/2 + q/4 + 2`.
pub fn decode(out: &mut [u8], w: &[u8], q: u16) {
    let n = w.len() as i64;
    let q = q as i64;
    for byte in out.iter_mut() {
        *byte = 0;
    }
    for (i, &wi) in w.iter().enumerate() {
        let l = i as i64 - n / 2 + q / 4 + 2;
        let z = (wi as i64 - l).rem_euclid(q);
        let msb = if z >= q / 2 { 1 } else { 0 };
        out[i / 8] |= (1 ^ msb) << (i % 8);
    }
}
