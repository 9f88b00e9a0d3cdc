//! The accelerator as a service: a [`Session`] state machine over the frames of
//! [`crate::frames`], a TCP server (one thread per connection) and a matching [`Client`].

pub use crate::error::RemoteError;
use std::io::{BufReader, BufWriter};
use std::net::{TcpListener, TcpStream, ToSocketAddrs};

use zeppelin_ring::{NttBackend, RnsKernels};

use crate::context::{Ciphertext, RelinKey, RnsContext};
use crate::engine::{Engine, TowerMajorDigits};
use crate::error::{EvalMultError, FrameError, PairKind, Result};
use crate::frames::{self, codes, Incoming, PairHeader};

/// One connection's state: the profile, and the pair frames of the session in progress.
#[derive(Debug)]
pub struct Session {
    ring_dim: usize,
    context: Option<RnsContext>,
    /// Kind and batch size of the session in progress.
    current: Option<(bool, usize)>,
    /// Which pairs have been answered (RLMP) or received (RLMD).
    seen: Vec<bool>,
    /// RLMD frames waiting for the rest of the session.
    pending: Vec<Option<Vec<u64>>>,
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

    /// Handles one frame and returns the frames to send back (possibly none). Never fails:
    /// a bad frame yields an RLER frame and leaves the session as it was.
    pub fn handle(&mut self, frame: &[u64]) -> Vec<Vec<u64>> {
        match self.try_handle(frame) {
            Ok(replies) => replies,
            Err((code, error)) => vec![frames::encode_error(code, &error.to_string())],
        }
    }

    fn try_handle(&mut self, frame: &[u64]) -> Result<Vec<Vec<u64>>, (u32, EvalMultError)> {
        let command = frame.first().map_or(0, |&w| frames::lo(w));
        if command == frames::CMD_RLPT {
            if self.current.is_some() {
                return Err((codes::SEQUENCE, FrameError::ProfileInSession.into()));
            }
            let ctx = frames::decode_profile(frame, self.ring_dim).map_err(|e| match e {
                EvalMultError::Frame(_) => (codes::MALFORMED, e),
                other => (codes::PARAMETERS, other),
            })?;
            self.context = Some(ctx);
            return Ok(Vec::new());
        }
        if command != frames::CMD_RLMP && command != frames::CMD_RLMD {
            let word = frame.first().copied().unwrap_or(0);
            return Err((codes::MALFORMED, FrameError::UnknownCommand { word }.into()));
        }
        let Some(ctx) = self.context.clone() else {
            return Err((codes::SEQUENCE, FrameError::PairBeforeProfile.into()));
        };
        let header = frames::decode_pair_header(frame, &ctx).map_err(|e| (codes::MALFORMED, e))?;
        let pairs = header.pair_count;
        match self.current {
            None => {
                self.current = Some((header.with_digits, header.ciphertexts));
                self.seen = vec![false; pairs];
                self.pending = vec![None; pairs];
            }
            Some((with_digits, ciphertexts)) => {
                if with_digits != header.with_digits || ciphertexts != header.ciphertexts {
                    return Err((
                        codes::SEQUENCE,
                        FrameError::SessionMismatch {
                            session: PairKind::new(with_digits),
                            session_ciphertexts: ciphertexts,
                            got: PairKind::new(header.with_digits),
                            ciphertexts: header.ciphertexts,
                        }
                        .into(),
                    ));
                }
            }
        }
        if self.seen[header.pair_index] {
            return Err((
                codes::SEQUENCE,
                FrameError::DuplicatePair {
                    pair: header.pair_index,
                }
                .into(),
            ));
        }
        let mut replies = Vec::new();
        if header.with_digits {
            replies
                .push(relinearize_rlmp(&ctx, frame, &header).map_err(|e| (codes::MALFORMED, e))?);
            self.seen[header.pair_index] = true;
        } else {
            self.pending[header.pair_index] = Some(frame.to_vec());
            self.seen[header.pair_index] = true;
            if self.seen.iter().all(|&s| s) {
                let pending = std::mem::take(&mut self.pending);
                let frames: Vec<Vec<u64>> = pending.into_iter().flatten().collect();
                let result = relinearize_rlmd(&ctx, &frames, header.ciphertexts);
                if result.is_err() {
                    self.end_session();
                }
                replies.extend(result.map_err(|e| (codes::PARAMETERS, e))?);
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

/// Serves one connection until the peer closes it (or breaks the framing).
pub fn serve_connection(stream: TcpStream, ring_dim: usize) -> std::io::Result<()> {
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut writer = BufWriter::new(stream);
    let mut session = Session::new(ring_dim);
    loop {
        match frames::read_frame(&mut reader)? {
            Incoming::Closed => return Ok(()),
            Incoming::TooLong(len) => {
                let message = FrameError::TooLong {
                    len,
                    max: frames::MAX_FRAME_WORDS,
                }
                .to_string();
                frames::write_frame(&mut writer, &frames::encode_error(codes::FATAL, &message))?;
                return Ok(());
            }
            Incoming::Frame(frame) => {
                for reply in session.handle(&frame) {
                    frames::write_frame(&mut writer, &reply)?;
                }
            }
        }
    }
}

/// Accepts connections on `listener` (one thread each) for ring dimension `ring_dim`;
/// returns after `max_connections` connections have been accepted and served, or never.
pub fn serve(
    listener: &TcpListener,
    ring_dim: usize,
    max_connections: Option<usize>,
) -> std::io::Result<()> {
    std::thread::scope(|scope| {
        for (count, stream) in listener.incoming().enumerate() {
            let stream = stream?;
            scope.spawn(move || {
                // A broken connection ends only that connection.
                let _ = serve_connection(stream, ring_dim);
            });
            if max_connections.is_some_and(|max| count + 1 >= max) {
                break;
            }
        }
        Ok(())
    })
}

/// The host side of the protocol.
pub struct Client {
    reader: BufReader<TcpStream>,
    writer: BufWriter<TcpStream>,
}

fn io_error(source: std::io::Error) -> EvalMultError {
    EvalMultError::Io {
        path: "<connection>".into(),
        source,
    }
}

impl Client {
    /// Connects to a server.
    pub fn connect(addr: impl ToSocketAddrs) -> Result<Self> {
        let stream = TcpStream::connect(addr).map_err(io_error)?;
        stream.set_nodelay(true).map_err(io_error)?;
        Ok(Self {
            reader: BufReader::new(stream.try_clone().map_err(io_error)?),
            writer: BufWriter::new(stream),
        })
    }

    /// Sends one raw frame.
    pub fn send(&mut self, words: &[u64]) -> Result<()> {
        frames::write_frame(&mut self.writer, words).map_err(io_error)
    }

    /// Receives one frame (an error if the server closed the connection).
    pub fn receive(&mut self) -> Result<Vec<u64>> {
        match frames::read_frame(&mut self.reader).map_err(io_error)? {
            Incoming::Frame(frame) => Ok(frame),
            Incoming::Closed => Err(FrameError::ServerClosed.into()),
            Incoming::TooLong(len) => Err(FrameError::ServerTooLong {
                len,
                max: frames::MAX_FRAME_WORDS,
            }
            .into()),
        }
    }

    /// A whole session: RLPT, one pair frame per tower pair (RLMP with `digits`, RLMD
    /// without), then the RLRP answers and the RLEN marker. Returns the relinearized
    /// products, or the server's error as [`FrameError::Remote`].
    pub fn eval_mult(
        &mut self,
        ctx: &RnsContext,
        key: &RelinKey,
        pairs: &[(Ciphertext, Ciphertext)],
        digits: Option<&[TowerMajorDigits]>,
    ) -> Result<Vec<Ciphertext>> {
        let pair_count = frames::pair_count(ctx.towers());
        self.send(&frames::encode_profile(&ctx.moduli_values())?)?;
        for p in 0..pair_count {
            self.send(&frames::encode_pair_frame(ctx, key, pairs, digits, p)?)?;
        }
        let mut results = vec![Vec::new(); pair_count];
        loop {
            let frame = self.receive()?;
            if let Some((code, message)) = frames::decode_error(&frame) {
                return Err(FrameError::Remote(crate::error::RemoteError { code, message }).into());
            }
            match frame.first().map(|&w| frames::lo(w)) {
                Some(frames::CMD_RLRP) if frame.len() >= 2 => {
                    let p = frames::hi(frame[1]) as usize;
                    if p >= pair_count {
                        return Err(FrameError::ResultPair {
                            pair: p,
                            pairs: pair_count,
                        }
                        .into());
                    }
                    results[p] = frame;
                }
                Some(frames::CMD_RLEN) => break,
                _ => {
                    return Err(FrameError::UnexpectedFrame {
                        word: frame.first().copied().unwrap_or(0),
                    }
                    .into())
                }
            }
        }
        frames::decode_results(ctx, pairs.len(), &results)
    }
}
