//! The per-connection state machine over the frames of [`crate::frames`], without any I/O:
//! what the server does with each frame, and what each frame may cost before it is read.
//!
//! [`Session::admit`] judges a frame from its length prefix and first
//! [`frames::HEADER_WORDS`] words alone (against the loaded profile and the session in
//! progress), and says how many bytes reading and processing it will take
//! ([`Admission::frame_bytes`], [`Admission::work_bytes`]), so the server can refuse it
//! before allocating anything. [`Session::handle`] then processes the whole frame.

use std::sync::Arc;

use zeppelin_ring::{NttBackend, RnsKernels};

use crate::context::{Ciphertext, RelinKey, RnsContext, MAX_TOWERS};
use crate::engine::Engine;
use crate::error::{EvalMultError, FrameError, PairKind, Result};
use crate::frames::{self, codes, PairHeader};

/// Why a frame was refused: the RLER code to answer with, and the typed error.
#[derive(Debug)]
pub struct Refusal {
    /// One of [`frames::codes`].
    pub code: u32,
    /// What is wrong.
    pub error: EvalMultError,
}

impl Refusal {
    fn new(code: u32, error: impl Into<EvalMultError>) -> Self {
        Self {
            code,
            error: error.into(),
        }
    }

    /// The RLER frame that answers it.
    pub fn to_frame(&self) -> Vec<u64> {
        frames::encode_error(self.code, &self.error.to_string())
    }
}

/// What a frame will cost, judged before its body is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Admission {
    /// Bytes of the frame itself once read (`8 · words`).
    pub frame_bytes: usize,
    /// Upper estimate of the further bytes that processing it allocates (decoded arrays,
    /// the engine, results and replies), released when the replies are sent.
    pub work_bytes: usize,
}

impl Admission {
    /// `frame_bytes + work_bytes`.
    pub fn total(&self) -> usize {
        self.frame_bytes.saturating_add(self.work_bytes)
    }
}

/// One connection's state: the profile, and the pair frames of the session in progress.
#[derive(Debug)]
pub struct Session {
    ring_dim: usize,
    context: Option<Arc<RnsContext>>,
    /// Kind and batch size of the session in progress.
    current: Option<(bool, usize)>,
    /// Which pairs have been answered (RLMP) or received (RLMD).
    seen: Vec<bool>,
    /// RLMD frames waiting for the rest of the session.
    pending: Vec<Option<Vec<u64>>>,
}

/// Bytes of a loaded profile: forward and inverse twiddles per tower, plus the engine's
/// Shoup tables when a session runs.
fn context_bytes(ring_dim: usize, towers: usize) -> usize {
    towers.saturating_mul(ring_dim).saturating_mul(16)
}

impl Session {
    /// A session for ring dimension `ring_dim` (fixed per server, as on the FPGA).
    pub fn new(ring_dim: usize) -> Self {
        Self {
            ring_dim,
            context: None,
            current: None,
            seen: Vec::new(),
            pending: Vec::new(),
        }
    }

    /// Whether pair frames of a session have been accepted and its end is still to come.
    pub fn in_progress(&self) -> bool {
        self.current.is_some()
    }

    /// Drops the session in progress (its buffered frames), keeping the profile; returns
    /// whether there was one. The server calls it when a session expires.
    pub fn abandon(&mut self) -> bool {
        let was = self.in_progress();
        self.end_session();
        was
    }

    /// Bytes this session keeps between frames: the profile's tables and the buffered RLMD
    /// frames (what the server's memory caps account for).
    pub fn held_bytes(&self) -> usize {
        let profile = self
            .context
            .as_ref()
            .map_or(0, |ctx| context_bytes(ctx.ring_dim(), ctx.towers()));
        let pending: usize = self
            .pending
            .iter()
            .flatten()
            .map(|f| f.len().saturating_mul(8))
            .sum();
        profile.saturating_add(pending)
    }

    /// The smallest budget one honest session needs at ring dimension `ring_dim` (one
    /// tower, one ciphertext, RLMP): a per-session memory cap below it refuses every
    /// session.
    pub fn minimum_session_bytes(ring_dim: usize) -> usize {
        let header = PairHeader {
            with_digits: true,
            ciphertexts: 1,
            digits: 1,
            pair_index: 0,
            pair_count: 1,
        };
        let frame = header.frame_len(ring_dim).saturating_mul(8);
        context_bytes(ring_dim, 1)
            .saturating_add(frame)
            .saturating_add(rlmp_work_bytes(ring_dim, &header, frame))
    }

    /// Judges a frame from its length prefix `len` (in words) and its first words `head`
    /// (`min(len, HEADER_WORDS)` of them): refused with the RLER code and typed error, or
    /// admitted with what it will cost. Nothing is allocated.
    pub fn admit(&self, len: u64, head: &[u64]) -> Result<Admission, Refusal> {
        let Some(&word0) = head.first() else {
            return Err(Refusal::new(
                codes::MALFORMED,
                FrameError::UnknownCommand { word: 0 },
            ));
        };
        if len > frames::MAX_FRAME_WORDS {
            return Err(Refusal::new(
                codes::FATAL,
                FrameError::TooLong {
                    len,
                    max: frames::MAX_FRAME_WORDS,
                },
            ));
        }
        // len <= 2^25: fits usize.
        let words = len as usize;
        let frame_bytes = words.saturating_mul(8);
        match frames::lo(word0) {
            frames::CMD_RLPT => {
                if self.current.is_some() {
                    return Err(Refusal::new(codes::SEQUENCE, FrameError::ProfileInSession));
                }
                if word0 != u64::from(frames::CMD_RLPT) {
                    return Err(Refusal::new(
                        codes::MALFORMED,
                        FrameError::NotProfile { word: word0 },
                    ));
                }
                let Some(&word1) = head.get(1) else {
                    return Err(Refusal::new(
                        codes::MALFORMED,
                        FrameError::Truncated {
                            frame: "RLPT",
                            needed: 2,
                            found: words,
                        },
                    ));
                };
                let pairs = frames::lo(word1) as usize;
                if frames::hi(word1) as usize != pairs || pairs == 0 {
                    return Err(Refusal::new(
                        codes::MALFORMED,
                        FrameError::ProfilePairCount {
                            upper: frames::hi(word1),
                            lower: frames::lo(word1),
                        },
                    ));
                }
                if pairs > frames::pair_count(MAX_TOWERS) {
                    return Err(Refusal::new(
                        codes::PARAMETERS,
                        EvalMultError::TowerCount {
                            count: 2 * pairs,
                            max: MAX_TOWERS,
                        },
                    ));
                }
                if words != 2 + 2 * pairs {
                    return Err(Refusal::new(
                        codes::MALFORMED,
                        FrameError::ProfileLength {
                            pairs,
                            expected: 2 + 2 * pairs,
                            found: words,
                        },
                    ));
                }
                Ok(Admission {
                    frame_bytes,
                    work_bytes: context_bytes(self.ring_dim, 2 * pairs),
                })
            }
            frames::CMD_RLMP | frames::CMD_RLMD => {
                let Some(ctx) = self.context.as_deref() else {
                    return Err(Refusal::new(codes::SEQUENCE, FrameError::PairBeforeProfile));
                };
                let header = frames::check_pair_header(head, len, ctx)
                    .map_err(|e| Refusal::new(codes::MALFORMED, e))?;
                self.check_sequence(&header)?;
                let work_bytes = if header.with_digits {
                    rlmp_work_bytes(ctx.ring_dim(), &header, frame_bytes)
                } else if self.completes_session(&header) {
                    rlmd_work_bytes(ctx, &header, frame_bytes)
                } else {
                    0
                };
                Ok(Admission {
                    frame_bytes,
                    work_bytes,
                })
            }
            _ => Err(Refusal::new(
                codes::MALFORMED,
                FrameError::UnknownCommand { word: word0 },
            )),
        }
    }

    /// Session consistency of an admissible pair frame: same kind and batch as the
    /// session's first frame, a pair not yet received.
    fn check_sequence(&self, header: &PairHeader) -> Result<(), Refusal> {
        if let Some((with_digits, ciphertexts)) = self.current {
            if with_digits != header.with_digits || ciphertexts != header.ciphertexts {
                return Err(Refusal::new(
                    codes::SEQUENCE,
                    FrameError::SessionMismatch {
                        session: PairKind::new(with_digits),
                        session_ciphertexts: ciphertexts,
                        got: PairKind::new(header.with_digits),
                        ciphertexts: header.ciphertexts,
                    },
                ));
            }
            if self.seen.get(header.pair_index).copied().unwrap_or(false) {
                return Err(Refusal::new(
                    codes::SEQUENCE,
                    FrameError::DuplicatePair {
                        pair: header.pair_index,
                    },
                ));
            }
        }
        Ok(())
    }

    /// Whether `header` (admissible) is the last missing pair of its session.
    fn completes_session(&self, header: &PairHeader) -> bool {
        match self.current {
            None => header.pair_count == 1,
            Some(_) => {
                self.seen
                    .iter()
                    .enumerate()
                    .filter(|&(p, &s)| !s && p != header.pair_index)
                    .count()
                    == 0
            }
        }
    }

    /// Handles one frame and returns the frames to send back (possibly none). Never fails:
    /// a bad frame yields an RLER frame and leaves the session as it was.
    pub fn handle(&mut self, frame: &[u64]) -> Vec<Vec<u64>> {
        self.handle_owned(frame.to_vec())
    }

    /// [`Session::handle`] taking the frame by value (an RLMD frame is kept, not copied).
    pub fn handle_owned(&mut self, frame: Vec<u64>) -> Vec<Vec<u64>> {
        match self.try_handle(frame) {
            Ok(replies) => replies,
            Err(refusal) => vec![refusal.to_frame()],
        }
    }

    fn try_handle(&mut self, frame: Vec<u64>) -> Result<Vec<Vec<u64>>, Refusal> {
        let head = &frame[..frame.len().min(frames::HEADER_WORDS)];
        self.admit(frame.len() as u64, head)?;
        let command = frame.first().map_or(0, |&w| frames::lo(w));
        if command == frames::CMD_RLPT {
            let ctx = frames::decode_profile(&frame, self.ring_dim).map_err(|e| match e {
                EvalMultError::Frame(_) => Refusal::new(codes::MALFORMED, e),
                other => Refusal::new(codes::PARAMETERS, other),
            })?;
            self.context = Some(Arc::new(ctx));
            return Ok(Vec::new());
        }
        // admit() accepted a pair frame: a profile is loaded.
        let Some(ctx) = self.context.clone() else {
            return Err(Refusal::new(codes::SEQUENCE, FrameError::PairBeforeProfile));
        };
        let header = frames::decode_pair_header(&frame, &ctx)
            .map_err(|e| Refusal::new(codes::MALFORMED, e))?;
        let pairs = header.pair_count;
        if self.current.is_none() {
            self.current = Some((header.with_digits, header.ciphertexts));
            self.seen = vec![false; pairs];
            self.pending = vec![None; pairs];
        }
        let mut replies = Vec::new();
        if header.with_digits {
            let reply = relinearize_rlmp(&ctx, &frame, &header);
            if self.seen.iter().all(|&s| !s) && reply.is_err() {
                self.end_session();
            }
            replies.push(reply.map_err(|e| Refusal::new(codes::MALFORMED, e))?);
            self.seen[header.pair_index] = true;
        } else {
            self.pending[header.pair_index] = Some(frame);
            self.seen[header.pair_index] = true;
            if self.seen.iter().all(|&s| s) {
                let pending = std::mem::take(&mut self.pending);
                let frames: Vec<Vec<u64>> = pending.into_iter().flatten().collect();
                let result = relinearize_rlmd(&ctx, &frames, header.ciphertexts);
                drop(frames);
                if result.is_err() {
                    self.end_session();
                }
                replies.extend(result.map_err(|e| Refusal::new(codes::PARAMETERS, e))?);
            }
        }
        if self.seen.iter().all(|&s| s) {
            replies.push(frames::encode_end(pairs, header.ciphertexts));
            self.end_session();
        }
        Ok(replies)
    }

    fn end_session(&mut self) {
        self.current = None;
        self.seen.clear();
        self.pending.clear();
    }
}

/// Bytes of one RLRP reply for `ciphertexts` results.
fn reply_bytes(ring_dim: usize, ciphertexts: usize) -> usize {
    ring_dim
        .saturating_mul(ciphertexts)
        .saturating_mul(16)
        .saturating_add(16)
}

/// What [`relinearize_rlmp`] allocates besides the frame: the split arrays (at most the
/// frame's size), one tower's key in Montgomery form, the results of both towers, four
/// temporaries and the reply.
fn rlmp_work_bytes(ring_dim: usize, header: &PairHeader, frame_bytes: usize) -> usize {
    let (n, c, d) = (ring_dim, header.ciphertexts, header.digits);
    frame_bytes
        .saturating_add(n.saturating_mul(d).saturating_mul(8))
        .saturating_add(n.saturating_mul(c).saturating_mul(16))
        .saturating_add(n.saturating_mul(16))
        .saturating_add(reply_bytes(n, c))
}

/// What the last RLMD frame of a session costs besides the frame: the reassembled
/// ciphertexts and key, the engine's copy of the key and context, one split frame, the
/// results, the per-thread scratch of the engine and the replies; with a quarter on top
/// for what the estimate leaves out (vector headers, allocator rounding).
fn rlmd_work_bytes(ctx: &RnsContext, header: &PairHeader, frame_bytes: usize) -> usize {
    let (n, towers, c) = (ctx.ring_dim(), ctx.towers(), header.ciphertexts);
    let poly = towers.saturating_mul(n).saturating_mul(4);
    let inputs = poly.saturating_mul(4).saturating_mul(c);
    let key = poly.saturating_mul(2).saturating_mul(towers);
    let engine = key
        .saturating_add(towers.saturating_mul(64 * 8))
        .saturating_add(context_bytes(n, towers).saturating_mul(2));
    let results = poly.saturating_mul(2).saturating_mul(c);
    let threads = rayon::current_num_threads().max(1);
    let scratch = poly.saturating_mul(8).saturating_mul(threads);
    let replies = reply_bytes(n, c).saturating_mul(header.pair_count);
    let sum = inputs
        .saturating_add(key)
        .saturating_add(engine)
        .saturating_add(frame_bytes)
        .saturating_add(results)
        .saturating_add(scratch)
        .saturating_add(replies);
    sum.saturating_add(sum / 4)
}

/// An RLMP frame: tensor and key switch of one tower pair with the digits it carries.
fn relinearize_rlmp(ctx: &RnsContext, frame: &[u64], header: &PairHeader) -> Result<Vec<u64>> {
    let backend = crate::engine::backend_from_env()?;
    let n = ctx.ring_dim();
    let data = frames::split_pair_frame(frame, header, ctx);
    let present = data.inputs.len();
    let (c, d) = (header.ciphertexts, header.digits);
    // results[t][ct] = (c0, c1) of present tower t.
    let mut results = Vec::with_capacity(present);
    for t in 0..present {
        let m = &ctx.moduli()[2 * header.pair_index + t];
        let to_mont = |rows: &[Vec<u32>]| -> Vec<u32> {
            rows.iter()
                .flat_map(|r| r.iter().map(|&v| m.to_mont(v)))
                .collect()
        };
        let (key_a, key_b) = (to_mont(&data.key_a[t]), to_mont(&data.key_b[t]));
        let mut tower = Vec::with_capacity(c);
        for ct in 0..c {
            let [x0, x1, y0, y1] = &data.inputs[t][ct];
            let (mut t0, mut t1) = (vec![0u32; n], vec![0u32; n]);
            backend.pointwise_mul(m, x0, y0, &mut t0)?;
            backend.pointwise_mul(m, x0, y1, &mut t1)?;
            backend.pointwise_mul_add(m, x1, y0, &mut t1)?;
            let (mut r0, mut r1) = (vec![0u32; n], vec![0u32; n]);
            backend.key_switch_block(
                m,
                d,
                n,
                &data.digits[t][ct],
                &key_a,
                &key_b,
                &t1,
                &t0,
                &mut r1,
                &mut r0,
            )?;
            tower.push((r0, r1));
        }
        results.push(tower);
    }
    Ok(frames::encode_result_pair(
        header.pair_index,
        c,
        n,
        present,
        |ct, component, t, j| {
            let (r0, r1) = &results[t][ct];
            if component == 0 {
                r0[j]
            } else {
                r1[j]
            }
        },
    ))
}

/// All RLMD frames of a session: reassemble the ciphertexts and the key, run the engine
/// (with the decomposition), answer one RLRP per pair.
fn relinearize_rlmd(ctx: &RnsContext, pair_frames: &[Vec<u64>], c: usize) -> Result<Vec<Vec<u64>>> {
    let (n, towers) = (ctx.ring_dim(), ctx.towers());
    let empty = || Ciphertext {
        c0: vec![0; towers * n],
        c1: vec![0; towers * n],
    };
    let mut pairs = vec![(empty(), empty()); c];
    let mut key = RelinKey {
        ring_dim: n,
        moduli: ctx.moduli_values(),
        a: vec![vec![0; towers * n]; towers],
        b: vec![vec![0; towers * n]; towers],
    };
    for frame in pair_frames {
        let header = frames::decode_pair_header(frame, ctx)?;
        let data = frames::split_pair_frame(frame, &header, ctx);
        for (t, inputs) in data.inputs.iter().enumerate() {
            let k = 2 * header.pair_index + t;
            let range = k * n..(k + 1) * n;
            for (ct, [x0, x1, y0, y1]) in inputs.iter().enumerate() {
                let (x, y) = &mut pairs[ct];
                x.c0[range.clone()].copy_from_slice(x0);
                x.c1[range.clone()].copy_from_slice(x1);
                y.c0[range.clone()].copy_from_slice(y0);
                y.c1[range.clone()].copy_from_slice(y1);
            }
            for i in 0..towers {
                key.a[i][range.clone()].copy_from_slice(&data.key_a[t][i]);
                key.b[i][range.clone()].copy_from_slice(&data.key_b[t][i]);
            }
        }
    }
    let engine = Engine::new(ctx.clone(), &key)?;
    let results = engine.eval_mult_batch(&pairs)?;
    Ok((0..frames::pair_count(towers))
        .map(|p| {
            let present = if 2 * p + 1 < towers { 2 } else { 1 };
            frames::encode_result_pair(p, c, n, present, |ct, component, t, j| {
                results.tower(ct, component, 2 * p + t)[j]
            })
        })
        .collect())
}
