//! Byte-lane polynomial arithmetic in `Z_q[x]/(x^n + 1)`, `q` in {128, 256}.
//!
//! Coefficients are bytes. A machine word holds [`LANES`] coefficients and every lane wraps
//! modulo 256 independently, which is reduction modulo `q = 256`; for `q = 128` the results
//! are masked with `0x7f` at the end (valid because 128 divides 256).
//!
//! * On a Cortex-M33 with the DSP extension (`target_arch = "arm"`, `target_feature = "dsp"`)
//!   a word is a `u32` and lane additions/subtractions are the `uadd8`/`usub8` instructions.
//! * Elsewhere a word is a `usize` (8 lanes on 64-bit hosts) and lane arithmetic is SWAR:
//!   the top bit of each byte is handled separately so carries never cross lanes.
//!
//! Negacyclic products use an *extended operand*: for `a` in `Z_q^n`,
//! `ext[j] = -a[j]` and `ext[n + j] = a[j]` (`0 <= j < n`), so that
//! `(a*b)_k = sum_i b_i * ext[n + k - i]` — the wrapped terms (`x^n = -1`) are the negated
//! half, and every outer iteration is one contiguous, unaligned run of word loads.
//! Building `ext` costs one lane negation (`usub8`) per word; afterwards the inner loop is
//! a pure `uadd8` accumulation, with no straddling word at the wrap point.
//!
//! All kernels are tested equal to the schoolbook reference in [`crate::reference`].

/// The machine word used for byte lanes.
#[cfg(all(target_arch = "arm", target_feature = "dsp"))]
pub type Word = u32;
/// The machine word used for byte lanes.
#[cfg(not(all(target_arch = "arm", target_feature = "dsp")))]
pub type Word = usize;

/// Coefficients (bytes) per word.
pub const LANES: usize = core::mem::size_of::<Word>();

const fn splat(byte: u8) -> Word {
    Word::from_le_bytes([byte; LANES])
}

const fn ramp() -> Word {
    let mut bytes = [0u8; LANES];
    let mut i = 0;
    while i < LANES {
        bytes[i] = i as u8;
        i += 1;
    }
    Word::from_le_bytes(bytes)
}

const fn even_bytes() -> Word {
    let mut bytes = [0u8; LANES];
    let mut i = 0;
    while i < LANES {
        bytes[i] = 0xff;
        i += 2;
    }
    Word::from_le_bytes(bytes)
}

#[cfg(not(all(target_arch = "arm", target_feature = "dsp")))]
const HIGH: Word = splat(0x80);
#[cfg(not(all(target_arch = "arm", target_feature = "dsp")))]
const LOW7: Word = splat(0x7f);
const ONES: Word = splat(0x01);
const EVEN: Word = even_bytes();
const RAMP: Word = ramp();

/// Lane-wise `x + y mod 256`.
#[cfg(not(all(target_arch = "arm", target_feature = "dsp")))]
#[inline(always)]
pub fn lane_add(x: Word, y: Word) -> Word {
    ((x & LOW7) + (y & LOW7)) ^ ((x ^ y) & HIGH)
}

/// Lane-wise `x - y mod 256`.
#[cfg(not(all(target_arch = "arm", target_feature = "dsp")))]
#[inline(always)]
pub fn lane_sub(x: Word, y: Word) -> Word {
    ((x | HIGH) - (y & LOW7)) ^ ((x ^ !y) & HIGH)
}

/// Lane-wise `x + y mod 256` (`uadd8`, see the private `arch` module).
#[cfg(all(target_arch = "arm", target_feature = "dsp"))]
#[inline(always)]
pub fn lane_add(x: Word, y: Word) -> Word {
    crate::arch::lane_add(x, y)
}

/// Lane-wise `x - y mod 256` (`usub8`, see the private `arch` module).
#[cfg(all(target_arch = "arm", target_feature = "dsp"))]
#[inline(always)]
pub fn lane_sub(x: Word, y: Word) -> Word {
    crate::arch::lane_sub(x, y)
}

/// Lane-wise `x * s mod 256` for a byte scalar `s` (products of 16-bit lane pairs never
/// carry into the next pair: 255 * 255 < 2^16).
#[inline(always)]
fn lane_mul_scalar(x: Word, s: Word) -> Word {
    let even = (x & EVEN).wrapping_mul(s) & EVEN;
    let odd = ((x >> 8) & EVEN).wrapping_mul(s) & EVEN;
    even | (odd << 8)
}

#[inline(always)]
fn load(src: &[u8], at: usize) -> Word {
    let mut bytes = [0u8; LANES];
    bytes.copy_from_slice(&src[at..at + LANES]);
    Word::from_le_bytes(bytes)
}

/// A word from a chunk of exactly [`LANES`] bytes (from `chunks_exact`, so the length check
/// compiles away).
#[inline(always)]
fn word(chunk: &[u8]) -> Word {
    let mut bytes = [0u8; LANES];
    bytes.copy_from_slice(chunk);
    Word::from_le_bytes(bytes)
}

#[inline(always)]
fn store(dst: &mut [u8], at: usize, word: Word) {
    dst[at..at + LANES].copy_from_slice(&word.to_le_bytes());
}

/// Bit `i` of a packed binary polynomial (bit `i % 8` of byte `i / 8`).
#[inline(always)]
pub fn bit(bits: &[u8], i: usize) -> u8 {
    (bits[i >> 3] >> (i & 7)) & 1
}

/// The word whose lane `t` is `value` if bit `k + t` is set, else 0 (branch-free).
#[inline(always)]
fn spread(bits: &[u8], k: usize, value: u8) -> Word {
    let mut word: Word = 0;
    for t in 0..LANES {
        let lane = 0u8.wrapping_sub(bit(bits, k + t)) & value;
        word |= (lane as Word) << (8 * t);
    }
    word
}

/// Builds the extended operand `ext = (-a, a)` (`ext.len() == 2 * a.len()`).
pub fn extend(ext: &mut [u8], a: &[u8]) {
    let n = a.len();
    debug_assert_eq!(ext.len(), 2 * n);
    for k in (0..n).step_by(LANES) {
        let word = load(a, k);
        store(ext, k, lane_sub(0, word));
        store(ext, n + k, word);
    }
}

/// Opaque identity: stops the optimizer from turning a secret mask back into a branch or
/// from folding a loop-completion counter into a constant.
#[inline(always)]
fn opaque<T>(x: T) -> T {
    core::hint::black_box(x)
}

/// `out = a * b` for `a` given as its extended operand `ext` (see [`extend`]) and `b` a packed
/// binary polynomial. Returns the number of outer iterations executed (always `n`; callers
/// with fault hardening compare it).
///
/// With `CONSTANT_TIME`, every coefficient of `b` is processed: the source words are ANDed
/// with the mask `-b_i` and accumulated. Without it, zero coefficients are skipped (the
/// paper's "branchy" baseline; leaks `b` through timing).
pub fn mul_binary<const CONSTANT_TIME: bool>(out: &mut [u8], ext: &[u8], b: &[u8]) -> usize {
    let n = out.len();
    debug_assert_eq!(ext.len(), 2 * n);
    debug_assert_eq!(b.len() * 8, n);
    out.fill(0);
    let mut iterations = 0usize;
    for i in 0..n {
        iterations = opaque(iterations + 1);
        let source = &ext[n - i..2 * n - i];
        if CONSTANT_TIME {
            let mask = (0 as Word).wrapping_sub(opaque(bit(b, i)) as Word);
            for (o, s) in out.chunks_exact_mut(LANES).zip(source.chunks_exact(LANES)) {
                let sum = lane_add(word(o), word(s) & mask);
                o.copy_from_slice(&sum.to_le_bytes());
            }
        } else {
            if bit(b, i) == 0 {
                continue;
            }
            for (o, s) in out.chunks_exact_mut(LANES).zip(source.chunks_exact(LANES)) {
                let sum = lane_add(word(o), word(s));
                o.copy_from_slice(&sum.to_le_bytes());
            }
        }
    }
    iterations
}

/// `out = a * s` for `a` given as its extended operand and `s` a general element of
/// `Z_256^n` (used on arithmetic key shares; constant-time in `s`). Returns the number of
/// outer iterations executed.
pub fn mul_general(out: &mut [u8], ext: &[u8], s: &[u8]) -> usize {
    let n = out.len();
    debug_assert_eq!(ext.len(), 2 * n);
    debug_assert_eq!(s.len(), n);
    out.fill(0);
    let mut iterations = 0usize;
    for (i, &scalar) in s.iter().enumerate() {
        iterations = opaque(iterations + 1);
        let source = &ext[n - i..2 * n - i];
        let scalar = scalar as Word;
        for (o, s) in out.chunks_exact_mut(LANES).zip(source.chunks_exact(LANES)) {
            let sum = lane_add(word(o), lane_mul_scalar(word(s), scalar));
            o.copy_from_slice(&sum.to_le_bytes());
        }
    }
    iterations
}

/// `out += x` lane-wise.
pub fn add_assign(out: &mut [u8], x: &[u8]) {
    debug_assert_eq!(out.len(), x.len());
    for k in (0..out.len()).step_by(LANES) {
        store(out, k, lane_add(load(out, k), load(x, k)));
    }
}

/// `out -= x` lane-wise.
pub fn sub_assign(out: &mut [u8], x: &[u8]) {
    debug_assert_eq!(out.len(), x.len());
    for k in (0..out.len()).step_by(LANES) {
        store(out, k, lane_sub(load(out, k), load(x, k)));
    }
}

/// `out += value * bits` (branch-free): adds a binary polynomial (`value = 1`) or encodes a
/// packed message (`value = q/2`: the packed message encoder).
pub fn add_bits(out: &mut [u8], bits: &[u8], value: u8) {
    debug_assert_eq!(out.len(), bits.len() * 8);
    for k in (0..out.len()).step_by(LANES) {
        store(out, k, lane_add(load(out, k), spread(bits, k, value)));
    }
}

/// `out = bits - out` (branch-free), i.e. `r1 - a*r2` given `out = a*r2`.
pub fn bits_minus(out: &mut [u8], bits: &[u8]) {
    debug_assert_eq!(out.len(), bits.len() * 8);
    for k in (0..out.len()).step_by(LANES) {
        store(out, k, lane_sub(spread(bits, k, 1), load(out, k)));
    }
}

/// `out &= mask` on every coefficient (reduction mod 128 with `mask = 0x7f`).
pub fn reduce(out: &mut [u8], mask: u8) {
    if mask == 0xff {
        return;
    }
    let mask = splat(mask);
    for k in (0..out.len()).step_by(LANES) {
        store(out, k, load(out, k) & mask);
    }
}

/// `out -= L` where `L_i = (offset0 + i) mod 256`: subtracts the bias-aware decoding offsets
/// (they grow by one per index; see [`crate::params::decode_offset`]).
pub fn sub_offsets(out: &mut [u8], offset0: u8) {
    for k in (0..out.len()).step_by(LANES) {
        let offsets = lane_add(splat(offset0.wrapping_add(k as u8)), RAMP);
        store(out, k, lane_sub(load(out, k), offsets));
    }
}

/// Packed message decoder (branch-free): for `w` already offset by `L`
/// (see [`sub_offsets`]), bit `i` of `out` is `1 XOR MSB_{log2 q}(w_i mod q)`.
pub fn decode_msb(w: &[u8], log_q: u32, out: &mut [u8]) {
    debug_assert_eq!(w.len(), out.len() * 8);
    out.fill(0);
    let shift = log_q - 1;
    for k in (0..w.len()).step_by(LANES) {
        let msb = (load(w, k) >> shift) & ONES;
        let mut packed = 0u8;
        for t in 0..LANES {
            packed |= (((msb >> (8 * t)) & 1) as u8) << t;
        }
        out[k >> 3] |= packed << (k & 7);
    }
    for byte in out.iter_mut() {
        *byte ^= 0xff;
    }
}
