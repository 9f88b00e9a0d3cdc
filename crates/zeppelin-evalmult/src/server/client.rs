//! The host side of the protocol: a blocking client (std sockets, no runtime needed).

use std::io::{BufReader, BufWriter};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::Duration;

use crate::context::{Ciphertext, RelinKey, RnsContext};
use crate::engine::TowerMajorDigits;
use crate::error::{EvalMultError, FrameError, Result};
use crate::frames::{self, Incoming};

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

    /// Read and write timeouts of the connection (`None`: wait forever, the default).
    pub fn set_timeout(&mut self, timeout: Option<Duration>) -> Result<()> {
        let stream = self.writer.get_ref();
        stream.set_read_timeout(timeout).map_err(io_error)?;
        stream.set_write_timeout(timeout).map_err(io_error)
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
