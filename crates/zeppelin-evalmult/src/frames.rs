//! The pynq_butterfly FPGA stream protocol (`shared/seeds/pynq-butterfly-readme.txt`) as a
//! frame codec, plus the few additions a TCP service needs.
//!
//! # Words
//!
//! Everything is a stream of 64-bit little-endian words. Two adjacent towers share a word:
//! bits 31:0 hold the lower-numbered tower, bits 63:32 the higher-numbered one. With an odd
//! number of towers the last pair's upper half is absent: its modulus word is 0 and all its
//! residues must be 0.
//!
//! # Frames (host → accelerator)
//!
//! **RLPT** — load the profile table (the towers):
//!
//! ```text
//! word 0: 0x524c5054 ("RLPT")
//! word 1: {pair_count, pair_count}          (duplicated)
//! per pair p: {q(2p+1), q(2p)}  then  {mu(2p+1), mu(2p)},  mu = floor(2^60 / q)
//! ```
//!
//! The FPGA trusted `mu` blindly (a wrong one silently corrupts results). Here every `q` is
//! checked to be an NTT-friendly prime for the ring in `(2^28, 2^30)` (so `mu` fits 32 bits)
//! and every `mu` must equal `floor(2^60/q)`.
//!
//! **RLMP** — one tower pair of the whole batch, digits supplied (the FPGA's frame):
//!
//! ```text
//! word 0: 0x524c4d50 ("RLMP")
//! word 1: {digit_count, ciphertext_count}
//! word 2: {pair_count, pair_index}
//! for every coefficient j (0..n):
//!     for every ciphertext: x0, x1, y0, y1            (the two input ciphertexts)
//!     for every digit i:    evk_b_i, evk_a_i, then one digit word d_i per ciphertext
//! ```
//!
//! `digit_count` must equal the number of towers (BV, `digitSize = 0`). The key streams
//! once per coefficient for the whole batch (coefficient-major key reuse).
//!
//! **RLMD** (`0x524c4d44`, "RLMD", an addition) — the same frame **without** the digit words;
//! the server buffers the pair frames of a session and, when all `pair_count` have arrived,
//! performs the BV decomposition itself (which needs every tower of `c2`), then answers.
//!
//! # Frames (accelerator → host)
//!
//! **RLRP** (`0x524c5250`) — the result of one pair, the FPGA's output order: pair-major
//! (one RLRP per pair, in the order the pairs complete), then coefficient-major, then
//! ciphertext-major, `relin_c0` before `relin_c1`:
//!
//! ```text
//! word 0: 0x524c5250 ("RLRP")
//! word 1: {pair_index, ciphertext_count}
//! for every coefficient j: for every ciphertext: {c0 hi, c0 lo}, {c1 hi, c1 lo}
//! ```
//!
//! **RLEN** (`0x524c454e`, `{pair_count, ciphertext_count}` in word 1) — end of session,
//! sent after the last pair of a session (the FPGA's final TLAST).
//!
//! **RLER** (`0x524c4552`) — error: word 1 `{byte_length, code}`, then the UTF-8 message,
//! zero-padded to whole words. The frame that caused it is discarded; the session (profile and
//! pairs already accepted) survives.
//!
//! # Transport
//!
//! On a byte stream (TCP) every frame is preceded by one little-endian `u64`: its length in
//! words (at most [`MAX_FRAME_WORDS`]). A length above the limit cannot be skipped safely, so
//! the server answers RLER and closes the connection; every other malformed frame is
//! answered with RLER and the connection goes on.

use std::io::{Read, Write};

use crate::context::{Ciphertext, RelinKey, RnsContext};
use crate::engine::TowerMajorDigits;
use crate::error::{CiphertextId, EvalMultError, Factor, FrameError, Input, Result};

/// "RLPT": profile load.
pub const CMD_RLPT: u32 = 0x524c_5054;
/// "RLMP": pair frame with digits.
pub const CMD_RLMP: u32 = 0x524c_4d50;
/// "RLMD": pair frame without digits (the server decomposes).
pub const CMD_RLMD: u32 = 0x524c_4d44;
/// "RLRP": result of one pair.
pub const CMD_RLRP: u32 = 0x524c_5250;
/// "RLEN": end of session.
pub const CMD_RLEN: u32 = 0x524c_454e;
/// "RLER": error.
pub const CMD_RLER: u32 = 0x524c_4552;

/// Largest frame accepted on a stream, in words (256 MiB).
pub const MAX_FRAME_WORDS: u64 = 1 << 25;
/// Most ciphertexts in one pair frame.
pub const MAX_CIPHERTEXTS: usize = 1 << 12;

/// `{hi, lo}` in one word.
#[inline]
pub const fn word(lo: u32, hi: u32) -> u64 {
    lo as u64 | (hi as u64) << 32
}

/// Bits 31:0.
#[inline]
pub const fn lo(w: u64) -> u32 {
    w as u32
}

/// Bits 63:32.
#[inline]
pub const fn hi(w: u64) -> u32 {
    (w >> 32) as u32
}

/// `floor(2^60 / q)`, the FPGA's Barrett constant.
pub const fn barrett_mu(q: u32) -> u64 {
    (1u64 << 60) / q as u64
}

/// Number of tower pairs for `towers` towers.
pub const fn pair_count(towers: usize) -> usize {
    towers.div_ceil(2)
}

/// The RLPT frame for `moduli`.
pub fn encode_profile(moduli: &[u32]) -> Result<Vec<u64>> {
    let pairs = pair_count(moduli.len());
    let mut words = vec![u64::from(CMD_RLPT), word(pairs as u32, pairs as u32)];
    for p in 0..pairs {
        let q_lo = moduli[2 * p];
        let q_hi = moduli.get(2 * p + 1).copied().unwrap_or(0);
        let mu = |tower: usize, q: u32| -> Result<u32> {
            if q == 0 {
                return Ok(0);
            }
            u32::try_from(barrett_mu(q))
                .map_err(|_| FrameError::ModulusTooSmall { tower, modulus: q }.into())
        };
        words.push(word(q_lo, q_hi));
        words.push(word(mu(2 * p, q_lo)?, mu(2 * p + 1, q_hi)?));
    }
    Ok(words)
}

/// Decodes an RLPT frame and validates it for ring dimension `ring_dim`.
pub fn decode_profile(frame: &[u64], ring_dim: usize) -> Result<RnsContext> {
    if frame.len() < 2 {
        return Err(FrameError::Truncated {
            frame: "RLPT",
            needed: 2,
            found: frame.len(),
        }
        .into());
    }
    if frame[0] != u64::from(CMD_RLPT) {
        return Err(FrameError::NotProfile { word: frame[0] }.into());
    }
    let pairs = lo(frame[1]) as usize;
    if hi(frame[1]) as usize != pairs || pairs == 0 {
        return Err(FrameError::ProfilePairCount {
            upper: hi(frame[1]),
            lower: lo(frame[1]),
        }
        .into());
    }
    if frame.len() != 2 + 2 * pairs {
        return Err(FrameError::ProfileLength {
            pairs,
            expected: 2 + 2 * pairs,
            found: frame.len(),
        }
        .into());
    }
    let mut moduli = Vec::with_capacity(2 * pairs);
    for p in 0..pairs {
        let (q, mu) = (frame[2 + 2 * p], frame[3 + 2 * p]);
        for (half, (q, mu)) in [(lo(q), lo(mu)), (hi(q), hi(mu))].into_iter().enumerate() {
            let tower = 2 * p + half;
            if q == 0 && mu == 0 && half == 1 && p == pairs - 1 {
                continue; // odd tower count: the last upper half is absent
            }
            if q <= 1 << 28 {
                return Err(FrameError::ModulusTooSmall { tower, modulus: q }.into());
            }
            if u64::from(mu) != barrett_mu(q) {
                return Err(FrameError::BarrettConstant {
                    tower,
                    mu,
                    modulus: q,
                    expected: barrett_mu(q),
                }
                .into());
            }
            moduli.push(q);
        }
    }
    RnsContext::new(ring_dim, &moduli)
}

/// Header of an RLMP / RLMD frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PairHeader {
    /// Whether the frame carries digit words (RLMP) or not (RLMD).
    pub with_digits: bool,
    /// Ciphertext pairs in the batch.
    pub ciphertexts: usize,
    /// Digits (= towers).
    pub digits: usize,
    /// Which tower pair.
    pub pair_index: usize,
    /// Tower pairs in the session.
    pub pair_count: usize,
}

impl PairHeader {
    /// Words per coefficient.
    pub fn words_per_coefficient(&self) -> usize {
        4 * self.ciphertexts
            + self.digits
                * (2 + if self.with_digits {
                    self.ciphertexts
                } else {
                    0
                })
    }

    /// Total frame length for ring dimension `n`.
    pub fn frame_len(&self, n: usize) -> usize {
        3 + n * self.words_per_coefficient()
    }
}

/// Words of a pair frame's header (also the most any frame's header has).
pub const HEADER_WORDS: usize = 3;

/// Checks the header words of a pair frame (`head`: its first [`HEADER_WORDS`] words, or
/// fewer when the frame is shorter) against the profile, and that its length `len` (in
/// words, the stream's length prefix) is the one the header implies: everything about a
/// pair frame that can be known before its body is read (or allocated).
pub fn check_pair_header(head: &[u64], len: u64, ctx: &RnsContext) -> Result<PairHeader> {
    let header = pair_header_fields(head, len)?;
    // Checked first: they bound `frame_len` (at most 3 + 2^17 · 278_656 words).
    check_header_fields(&header, ctx)?;
    let expected = header.frame_len(ctx.ring_dim());
    if len != expected as u64 {
        return Err(FrameError::PairLength {
            expected,
            found: usize::try_from(len).unwrap_or(usize::MAX),
        }
        .into());
    }
    Ok(header)
}

fn pair_header_fields(head: &[u64], len: u64) -> Result<PairHeader> {
    let (Some(&w0), Some(&w1), Some(&w2)) = (head.first(), head.get(1), head.get(2)) else {
        return Err(FrameError::Truncated {
            frame: "pair",
            needed: HEADER_WORDS,
            found: usize::try_from(len).unwrap_or(usize::MAX).min(head.len()),
        }
        .into());
    };
    let with_digits = match (lo(w0), hi(w0)) {
        (CMD_RLMP, 0) => true,
        (CMD_RLMD, 0) => false,
        _ => return Err(FrameError::UnknownCommand { word: w0 }.into()),
    };
    Ok(PairHeader {
        with_digits,
        ciphertexts: lo(w1) as usize,
        digits: hi(w1) as usize,
        pair_index: lo(w2) as usize,
        pair_count: hi(w2) as usize,
    })
}

fn check_header_fields(header: &PairHeader, ctx: &RnsContext) -> Result<()> {
    let towers = ctx.towers();
    if header.digits != towers {
        return Err(FrameError::DigitCount {
            digits: header.digits,
            towers,
        }
        .into());
    }
    if header.pair_count != pair_count(towers) || header.pair_index >= header.pair_count {
        return Err(FrameError::PairOutOfProfile {
            index: header.pair_index,
            count: header.pair_count,
            profile: pair_count(towers),
        }
        .into());
    }
    if header.ciphertexts == 0 || header.ciphertexts > MAX_CIPHERTEXTS {
        return Err(FrameError::CiphertextCount {
            count: header.ciphertexts,
            max: MAX_CIPHERTEXTS,
        }
        .into());
    }
    Ok(())
}

/// Reads and checks the header of a pair frame against the session's parameters.
pub fn decode_pair_header(frame: &[u64], ctx: &RnsContext) -> Result<PairHeader> {
    if frame.len() < 3 {
        return Err(FrameError::Truncated {
            frame: "pair",
            needed: 3,
            found: frame.len(),
        }
        .into());
    }
    let header = pair_header_fields(frame, frame.len() as u64)?;
    check_header_fields(&header, ctx)?;
    let expected = header.frame_len(ctx.ring_dim());
    if frame.len() != expected {
        return Err(FrameError::PairLength {
            expected,
            found: frame.len(),
        }
        .into());
    }
    // Every residue below its tower's modulus (an absent upper tower must be zero).
    let q_lo = ctx.moduli()[2 * header.pair_index].value();
    let q_hi = ctx
        .moduli()
        .get(2 * header.pair_index + 1)
        .map_or(1, |m| m.value());
    if let Some(at) = frame[3..]
        .iter()
        .position(|&w| lo(w) >= q_lo || hi(w) >= q_hi)
    {
        return Err(FrameError::Residue {
            word: at + 3,
            upper: hi(frame[3 + at]),
            lower: lo(frame[3 + at]),
            upper_modulus: q_hi,
            lower_modulus: q_lo,
        }
        .into());
    }
    Ok(header)
}

/// The pair frame for towers `2p, 2p+1`: RLMP with `digits` (one [`TowerMajorDigits`] per
/// ciphertext pair), RLMD without.
pub fn encode_pair_frame(
    ctx: &RnsContext,
    key: &RelinKey,
    pairs: &[(Ciphertext, Ciphertext)],
    digits: Option<&[TowerMajorDigits]>,
    pair_index: usize,
) -> Result<Vec<u64>> {
    let (n, towers) = (ctx.ring_dim(), ctx.towers());
    key.check(ctx)?;
    if pair_index >= pair_count(towers) {
        return Err(FrameError::NoSuchPair {
            index: pair_index,
            pairs: pair_count(towers),
        }
        .into());
    }
    for (pair, (x, y)) in pairs.iter().enumerate() {
        x.check(
            ctx,
            CiphertextId::Pair {
                pair,
                factor: Factor::X,
            },
        )?;
        y.check(
            ctx,
            CiphertextId::Pair {
                pair,
                factor: Factor::Y,
            },
        )?;
    }
    if let Some(digits) = digits {
        if digits.len() != pairs.len() || digits.iter().any(|d| d.len() != towers * towers * n) {
            return Err(EvalMultError::shape(
                Input::DigitSets,
                pairs.len(),
                digits.len(),
                "pairs",
            ));
        }
    }
    let header = PairHeader {
        with_digits: digits.is_some(),
        ciphertexts: pairs.len(),
        digits: towers,
        pair_index,
        pair_count: pair_count(towers),
    };
    let (k_lo, k_hi) = (2 * pair_index, 2 * pair_index + 1);
    // Residue of tower k (0 when the upper tower is absent) at coefficient j of a polynomial.
    let at = |poly: &[u32], k: usize, j: usize| if k < towers { poly[k * n + j] } else { 0 };
    let pack = |poly: &[u32], j: usize| word(at(poly, k_lo, j), at(poly, k_hi, j));
    let mut words = Vec::with_capacity(header.frame_len(n));
    words.push(u64::from(if digits.is_some() {
        CMD_RLMP
    } else {
        CMD_RLMD
    }));
    words.push(word(pairs.len() as u32, towers as u32));
    words.push(word(pair_index as u32, header.pair_count as u32));
    for j in 0..n {
        for (x, y) in pairs {
            words.extend([
                pack(&x.c0, j),
                pack(&x.c1, j),
                pack(&y.c0, j),
                pack(&y.c1, j),
            ]);
        }
        for i in 0..towers {
            words.push(pack(&key.b[i], j));
            words.push(pack(&key.a[i], j));
            if let Some(digits) = digits {
                for set in digits {
                    // TowerMajorDigits: [tower k][digit i][coefficient].
                    let get = |k: usize| {
                        if k < towers {
                            set[(k * towers + i) * n + j]
                        } else {
                            0
                        }
                    };
                    words.push(word(get(k_lo), get(k_hi)));
                }
            }
        }
    }
    Ok(words)
}

/// The parts of a decoded pair frame, per present tower of the pair (index 0 = lower).
pub(crate) struct PairData {
    /// `inputs[t][ct]` = (x, y) restricted to the tower, coefficient arrays.
    pub inputs: Vec<Vec<[Vec<u32>; 4]>>,
    /// `key_b[t][i]`, `key_a[t][i]`.
    pub key_b: Vec<Vec<Vec<u32>>>,
    pub key_a: Vec<Vec<Vec<u32>>>,
    /// `digits[t][ct]`: `[digit i][coefficient]` flattened (empty for RLMD).
    pub digits: Vec<Vec<Vec<u32>>>,
}

/// Splits a validated pair frame into per-tower arrays.
pub(crate) fn split_pair_frame(frame: &[u64], header: &PairHeader, ctx: &RnsContext) -> PairData {
    let (n, towers) = (ctx.ring_dim(), ctx.towers());
    let present = if 2 * header.pair_index + 1 < towers {
        2
    } else {
        1
    };
    let (c, d) = (header.ciphertexts, header.digits);
    let half = |w: u64, t: usize| if t == 0 { lo(w) } else { hi(w) };
    let mut data = PairData {
        inputs: vec![vec![[vec![0; n], vec![0; n], vec![0; n], vec![0; n]]; c]; present],
        key_b: vec![vec![vec![0; n]; d]; present],
        key_a: vec![vec![vec![0; n]; d]; present],
        digits: vec![
            vec![
                if header.with_digits {
                    vec![0; d * n]
                } else {
                    Vec::new()
                };
                c
            ];
            present
        ],
    };
    let per = header.words_per_coefficient();
    for j in 0..n {
        let coefficient = &frame[3 + j * per..3 + (j + 1) * per];
        let (inputs, rest) = coefficient.split_at(4 * c);
        let digit_words = 2 + if header.with_digits { c } else { 0 };
        for t in 0..present {
            for ct in 0..c {
                for part in 0..4 {
                    data.inputs[t][ct][part][j] = half(inputs[4 * ct + part], t);
                }
            }
            for i in 0..d {
                let w = &rest[i * digit_words..(i + 1) * digit_words];
                data.key_b[t][i][j] = half(w[0], t);
                data.key_a[t][i][j] = half(w[1], t);
                if header.with_digits {
                    for ct in 0..c {
                        data.digits[t][ct][i * n + j] = half(w[2 + ct], t);
                    }
                }
            }
        }
    }
    data
}

/// The RLRP frame of one pair: `get(ct, component, t, j)` gives the residue of present tower
/// `t` (0 lower, 1 upper) of result `ct`.
pub(crate) fn encode_result_pair(
    pair_index: usize,
    ciphertexts: usize,
    n: usize,
    present: usize,
    get: impl Fn(usize, usize, usize, usize) -> u32,
) -> Vec<u64> {
    let mut words = Vec::with_capacity(2 + 2 * n * ciphertexts);
    words.push(u64::from(CMD_RLRP));
    words.push(word(ciphertexts as u32, pair_index as u32));
    for j in 0..n {
        for ct in 0..ciphertexts {
            for component in 0..2 {
                let upper = if present == 2 {
                    get(ct, component, 1, j)
                } else {
                    0
                };
                words.push(word(get(ct, component, 0, j), upper));
            }
        }
    }
    words
}

/// Reassembles results from the RLRP frames of a session (`frames[p]` for pair `p`).
pub fn decode_results(
    ctx: &RnsContext,
    ciphertexts: usize,
    frames: &[Vec<u64>],
) -> Result<Vec<Ciphertext>> {
    let (n, towers) = (ctx.ring_dim(), ctx.towers());
    if frames.len() != pair_count(towers) {
        return Err(FrameError::ResultCount {
            frames: frames.len(),
            pairs: pair_count(towers),
        }
        .into());
    }
    let mut out = vec![
        Ciphertext {
            c0: vec![0; towers * n],
            c1: vec![0; towers * n]
        };
        ciphertexts
    ];
    for frame in frames {
        let expected = 2 + 2 * n * ciphertexts;
        if frame.len() != expected {
            return Err(FrameError::ResultLength {
                expected,
                found: frame.len(),
            }
            .into());
        }
        if lo(frame[0]) != CMD_RLRP {
            return Err(FrameError::NotResult { word: frame[0] }.into());
        }
        if lo(frame[1]) as usize != ciphertexts {
            return Err(FrameError::ResultCiphertexts {
                expected: ciphertexts,
                found: lo(frame[1]) as usize,
            }
            .into());
        }
        let p = hi(frame[1]) as usize;
        if p >= pair_count(towers) {
            return Err(FrameError::ResultPair {
                pair: p,
                pairs: pair_count(towers),
            }
            .into());
        }
        for j in 0..n {
            for (ct, result) in out.iter_mut().enumerate() {
                for component in 0..2 {
                    let w = frame[2 + (j * ciphertexts + ct) * 2 + component];
                    let target = if component == 0 {
                        &mut result.c0
                    } else {
                        &mut result.c1
                    };
                    target[2 * p * n + j] = lo(w);
                    if 2 * p + 1 < towers {
                        target[(2 * p + 1) * n + j] = hi(w);
                    }
                }
            }
        }
    }
    for (index, result) in out.iter().enumerate() {
        result.check(ctx, CiphertextId::Result { index })?;
    }
    Ok(out)
}

/// An RLEN frame.
pub fn encode_end(pair_count: usize, ciphertexts: usize) -> Vec<u64> {
    vec![
        u64::from(CMD_RLEN),
        word(ciphertexts as u32, pair_count as u32),
    ]
}

/// Error codes of RLER frames.
pub mod codes {
    /// The frame is malformed (header, length, residues).
    pub const MALFORMED: u32 = 1;
    /// The parameters are invalid (moduli, ring).
    pub const PARAMETERS: u32 = 2;
    /// The frame does not fit the session's state (no profile yet, mixed frame kinds, ...).
    pub const SEQUENCE: u32 = 3;
    /// The stream framing itself is broken, or the client sent too many bad frames; the
    /// connection closes.
    pub const FATAL: u32 = 4;
    /// A limit of the server refuses the connection or the frame now (the connection cap,
    /// a memory cap); retrying later may succeed.
    pub const BUSY: u32 = 5;
    /// A timeout: the connection was idle too long (it closes) or the session in progress
    /// expired (its buffered frames are dropped; the connection goes on).
    pub const TIMEOUT: u32 = 6;
    /// The server is shutting down; the connection closes.
    pub const SHUTDOWN: u32 = 7;
}

/// An RLER frame.
pub fn encode_error(code: u32, message: &str) -> Vec<u64> {
    let bytes = message.as_bytes();
    let mut words = vec![u64::from(CMD_RLER), word(code, bytes.len() as u32)];
    for chunk in bytes.chunks(8) {
        let mut b = [0u8; 8];
        b[..chunk.len()].copy_from_slice(chunk);
        words.push(u64::from_le_bytes(b));
    }
    words
}

/// Decodes an RLER frame into `(code, message)`.
pub fn decode_error(frame: &[u64]) -> Option<(u32, String)> {
    if frame.len() < 2 || lo(frame[0]) != CMD_RLER {
        return None;
    }
    let len = hi(frame[1]) as usize;
    let bytes: Vec<u8> = frame[2..]
        .iter()
        .flat_map(|w| w.to_le_bytes())
        .take(len)
        .collect();
    Some((lo(frame[1]), String::from_utf8_lossy(&bytes).into_owned()))
}

/// Writes one frame with its length prefix.
pub fn write_frame(w: &mut impl Write, words: &[u64]) -> std::io::Result<()> {
    let mut bytes = Vec::with_capacity(8 * (words.len() + 1));
    bytes.extend_from_slice(&(words.len() as u64).to_le_bytes());
    for &v in words {
        bytes.extend_from_slice(&v.to_le_bytes());
    }
    w.write_all(&bytes)?;
    w.flush()
}

/// What [`read_frame`] found.
#[derive(Debug)]
pub enum Incoming {
    /// A complete frame.
    Frame(Vec<u64>),
    /// The peer closed the stream between frames.
    Closed,
    /// The length prefix exceeds [`MAX_FRAME_WORDS`]; the stream cannot be resynchronized.
    TooLong(u64),
}

/// Reads one length-prefixed frame. Memory grows with the bytes actually received, never
/// with the claimed length alone.
pub fn read_frame(r: &mut impl Read) -> std::io::Result<Incoming> {
    let mut prefix = [0u8; 8];
    let mut got = 0;
    while got < 8 {
        match r.read(&mut prefix[got..])? {
            0 if got == 0 => return Ok(Incoming::Closed),
            0 => return Err(std::io::ErrorKind::UnexpectedEof.into()),
            k => got += k,
        }
    }
    let len = u64::from_le_bytes(prefix);
    if len > MAX_FRAME_WORDS {
        return Ok(Incoming::TooLong(len));
    }
    let mut bytes = Vec::new();
    r.take(8 * len).read_to_end(&mut bytes)?;
    if bytes.len() as u64 != 8 * len {
        return Err(std::io::ErrorKind::UnexpectedEof.into());
    }
    Ok(Incoming::Frame(
        bytes
            .chunks_exact(8)
            .map(|b| u64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]))
            .collect(),
    ))
}
