//! One connection: frames read under deadlines, judged by the [`Session`] before their body
//! is read, accounted against the memory caps, processed on the blocking pool.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt, BufReader, BufWriter};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::TcpStream;
use tokio::sync::{watch, OwnedSemaphorePermit, Semaphore};
use tokio::time::{sleep_until, timeout, timeout_at, Instant};

use crate::error::FrameError;
use crate::frames::{self, codes};
use crate::server::budget::{Account, MemoryPool, OverCap};
use crate::server::config::ServerConfig;
use crate::server::session::{Refusal, Session};
use crate::server::stats::Stats;

/// Bytes read from the socket at a time into the frame being assembled.
const CHUNK: usize = 8 * 1024;
/// How long a last, polite frame (RLER before a close) may take to leave.
const FAREWELL: Duration = Duration::from_secs(1);

/// What every connection shares.
pub(crate) struct Shared {
    pub(crate) config: ServerConfig,
    pub(crate) pool: Arc<MemoryPool>,
    pub(crate) compute: Arc<Semaphore>,
    pub(crate) stats: Arc<Stats>,
}

/// Why a connection ends.
#[derive(Debug)]
enum Stop {
    /// The peer closed it (between frames, or inside one).
    Closed,
    /// No frame began in time.
    Idle,
    /// A frame did not arrive fast enough.
    Slow,
    /// Replies were not taken in time.
    WriteStalled,
    /// The server is shutting down.
    Shutdown,
    /// A frame that cannot be skipped, or too many refused frames: RLER sent, closing.
    Fatal,
    /// A socket error, or the computation's task failed.
    Broken,
}

/// How long the rest of a frame may take: a grace period, then at least `rate` bytes/s.
struct Pace {
    start: Instant,
    grace: Duration,
    rate: u64,
    received: u64,
}

impl Pace {
    fn new(config: &ServerConfig) -> Self {
        Self {
            start: Instant::now(),
            grace: config.read_timeout,
            rate: config.min_rate.max(1),
            received: 0,
        }
    }

    fn deadline(&self) -> Instant {
        let nanos = u128::from(self.received) * 1_000_000_000 / u128::from(self.rate);
        let earned = Duration::from_nanos(u64::try_from(nanos).unwrap_or(u64::MAX));
        self.start + self.grace.saturating_add(earned)
    }
}

/// Serves one accepted connection until it ends; `_permit` is its place under the
/// connection cap.
pub(crate) async fn serve(
    stream: TcpStream,
    shared: Arc<Shared>,
    shutdown: watch::Receiver<bool>,
    _permit: OwnedSemaphorePermit,
) {
    let _ = stream.set_nodelay(true);
    let (read, write) = stream.into_split();
    let mut connection = Connection {
        reader: BufReader::with_capacity(4096, read),
        writer: BufWriter::with_capacity(CHUNK, write),
        session: Some(Session::new(shared.config.ring_dim)),
        account: Account::new(shared.pool.clone(), shared.config.session_memory),
        session_deadline: None,
        errors: 0,
        shared,
        shutdown,
    };
    let stop = connection.run().await;
    let stats = &connection.shared.stats;
    let counter = match stop {
        Stop::Idle => Some(&stats.idle_timeouts),
        Stop::Slow => Some(&stats.read_timeouts),
        Stop::WriteStalled => Some(&stats.write_timeouts),
        Stop::Fatal => Some(&stats.fatal_closes),
        Stop::Closed | Stop::Shutdown | Stop::Broken => None,
    };
    if let Some(counter) = counter {
        counter.fetch_add(1, Ordering::Relaxed);
    }
    let _ = connection.writer.shutdown().await;
}

struct Connection {
    reader: BufReader<OwnedReadHalf>,
    writer: BufWriter<OwnedWriteHalf>,
    /// `None` only while a computation has it.
    session: Option<Session>,
    account: Account,
    session_deadline: Option<Instant>,
    /// Consecutive refused frames.
    errors: usize,
    shared: Arc<Shared>,
    shutdown: watch::Receiver<bool>,
}

/// What waiting for the next frame gave.
enum Next {
    /// The first byte of a length prefix.
    Begins(u8),
    /// The session in progress expired.
    SessionExpired,
}

impl Connection {
    async fn run(&mut self) -> Stop {
        loop {
            if let Err(stop) = self.one_frame().await {
                return stop;
            }
        }
    }

    fn config(&self) -> &ServerConfig {
        &self.shared.config
    }

    async fn one_frame(&mut self) -> Result<(), Stop> {
        let first = match self.wait_for_frame().await? {
            Next::Begins(byte) => byte,
            Next::SessionExpired => return self.expire_session().await,
        };
        let mut pace = Pace::new(self.config());
        pace.received = 1;
        let mut prefix = [first, 0, 0, 0, 0, 0, 0, 0];
        let mut shutdown = self.shutdown.clone();
        // The rest of the frame races the shutdown signal: a frame not yet read is dropped.
        let frame = tokio::select! {
            biased;
            _ = shutdown.wait_for(|&s| s) => Err(Stop::Shutdown),
            frame = self.read_rest(&mut prefix, &mut pace) => frame,
        };
        match frame {
            Err(Stop::Shutdown) => {
                self.farewell(FrameError::ShuttingDown, codes::SHUTDOWN)
                    .await;
                Err(Stop::Shutdown)
            }
            Err(stop) => Err(stop),
            Ok(None) => Ok(()),
            Ok(Some(frame)) => self.process(frame).await,
        }
    }

    /// Waits for the first byte of the next frame, for the session deadline or for the
    /// shutdown signal, whichever comes first.
    async fn wait_for_frame(&mut self) -> Result<Next, Stop> {
        let idle = Instant::now() + self.config().idle_timeout;
        let session_deadline = self.session_deadline;
        let mut shutdown = self.shutdown.clone();
        let mut byte = [0u8; 1];
        let next = tokio::select! {
            biased;
            _ = shutdown.wait_for(|&s| s) => Err(Stop::Shutdown),
            () = sleep_until(session_deadline.unwrap_or(idle)), if session_deadline.is_some() => {
                Ok(Next::SessionExpired)
            }
            read = timeout_at(idle, self.reader.read(&mut byte)) => match read {
                Err(_) => Err(Stop::Idle),
                Ok(Ok(0)) => Err(Stop::Closed),
                Ok(Ok(_)) => Ok(Next::Begins(byte[0])),
                Ok(Err(_)) => Err(Stop::Broken),
            },
        };
        match next {
            Err(Stop::Shutdown) => {
                self.farewell(FrameError::ShuttingDown, codes::SHUTDOWN)
                    .await;
                Err(Stop::Shutdown)
            }
            Err(Stop::Idle) => {
                let millis = duration_millis(self.config().idle_timeout);
                self.farewell(FrameError::Idle { millis }, codes::TIMEOUT)
                    .await;
                Err(Stop::Idle)
            }
            other => other,
        }
    }

    /// Drops the session in progress and tells the client.
    async fn expire_session(&mut self) -> Result<(), Stop> {
        self.session_deadline = None;
        if let Some(session) = self.session.as_mut() {
            session.abandon();
            self.account.settle(session.held_bytes());
        }
        self.shared
            .stats
            .sessions_expired
            .fetch_add(1, Ordering::Relaxed);
        let millis = duration_millis(self.config().session_timeout);
        let reply = frames::encode_error(
            codes::TIMEOUT,
            &FrameError::SessionExpired { millis }.to_string(),
        );
        self.send(&[reply]).await
    }

    /// Reads the rest of a frame whose first prefix byte is in `prefix[0]`: the prefix, the
    /// header words, then — if the session admits the frame and the memory caps allow it —
    /// the body. A refused frame is skipped (read and discarded) and answered with RLER;
    /// `None` then.
    async fn read_rest(
        &mut self,
        prefix: &mut [u8; 8],
        pace: &mut Pace,
    ) -> Result<Option<Vec<u64>>, Stop> {
        read_paced(&mut self.reader, &mut prefix[1..], pace).await?;
        let len = u64::from_le_bytes(*prefix);
        if len > frames::MAX_FRAME_WORDS {
            // Cannot be skipped safely: answer and close.
            let error = FrameError::TooLong {
                len,
                max: frames::MAX_FRAME_WORDS,
            };
            self.farewell(error, codes::FATAL).await;
            return Err(Stop::Fatal);
        }
        let head_words = len.min(frames::HEADER_WORDS as u64) as usize;
        let mut head_bytes = [0u8; 8 * frames::HEADER_WORDS];
        read_paced(&mut self.reader, &mut head_bytes[..8 * head_words], pace).await?;
        let mut head = [0u64; frames::HEADER_WORDS];
        for (word, bytes) in head.iter_mut().zip(head_bytes.chunks_exact(8)) {
            *word = u64::from_le_bytes(bytes.try_into().unwrap_or([0; 8]));
        }
        let head = &head[..head_words];
        let rest = 8 * (len - head_words as u64);
        let Some(session) = self.session.as_ref() else {
            return Err(Stop::Broken);
        };
        let admission = match session.admit(len, head) {
            Ok(admission) => admission,
            Err(refusal) => {
                self.skip(rest, pace).await?;
                return self.refuse(refusal).await.map(|()| None);
            }
        };
        if let Err(over) = self.account.reserve(admission.total()) {
            self.shared
                .stats
                .memory_refusals
                .fetch_add(1, Ordering::Relaxed);
            let (scope, cap, held) = match over {
                OverCap::Session => (
                    "per-session",
                    self.config().session_memory,
                    session.held_bytes(),
                ),
                OverCap::Total => (
                    "global",
                    self.config().total_memory,
                    self.shared.pool.used(),
                ),
            };
            let error = FrameError::MemoryCap {
                needed: admission.total(),
                scope,
                cap,
                held,
            };
            self.skip(rest, pace).await?;
            return self
                .refuse(Refusal {
                    code: codes::BUSY,
                    error: error.into(),
                })
                .await
                .map(|()| None);
        }
        // Reserved: now the frame may be allocated (exactly its declared size).
        let mut frame = Vec::with_capacity(len as usize);
        frame.extend_from_slice(head);
        let mut chunk = vec![0u8; CHUNK];
        let mut left = rest as usize;
        while left > 0 {
            let take = left.min(CHUNK);
            read_paced(&mut self.reader, &mut chunk[..take], pace).await?;
            frame.extend(
                chunk[..take]
                    .chunks_exact(8)
                    .map(|b| u64::from_le_bytes(b.try_into().unwrap_or([0; 8]))),
            );
            left -= take;
        }
        Ok(Some(frame))
    }

    /// Reads and discards `bytes` (the body of a refused frame), at the frame's pace.
    async fn skip(&mut self, mut bytes: u64, pace: &mut Pace) -> Result<(), Stop> {
        let mut sink = [0u8; 1024];
        while bytes > 0 {
            let take = bytes.min(sink.len() as u64) as usize;
            read_paced(&mut self.reader, &mut sink[..take], pace).await?;
            bytes -= take as u64;
        }
        Ok(())
    }

    /// Answers a refused frame; closes after `max_errors` refusals in a row (or at once for
    /// a fatal one).
    async fn refuse(&mut self, refusal: Refusal) -> Result<(), Stop> {
        self.shared
            .stats
            .frames_refused
            .fetch_add(1, Ordering::Relaxed);
        self.send(&[refusal.to_frame()]).await?;
        self.count_error(refusal.code == codes::FATAL).await
    }

    async fn count_error(&mut self, fatal: bool) -> Result<(), Stop> {
        self.errors += 1;
        if fatal {
            return Err(Stop::Fatal);
        }
        if self.errors >= self.config().max_errors {
            let count = self.config().max_errors;
            self.farewell(FrameError::TooManyErrors { count }, codes::FATAL)
                .await;
            return Err(Stop::Fatal);
        }
        Ok(())
    }

    /// Runs the session on a whole frame (on the blocking pool, under the compute cap),
    /// sends the replies and settles the account.
    async fn process(&mut self, frame: Vec<u64>) -> Result<(), Stop> {
        let mut shutdown = self.shutdown.clone();
        let compute = self.shared.compute.clone();
        let permit = tokio::select! {
            biased;
            _ = shutdown.wait_for(|&s| s) => None,
            permit = compute.acquire_owned() => permit.ok(),
        };
        let Some(permit) = permit else {
            self.farewell(FrameError::ShuttingDown, codes::SHUTDOWN)
                .await;
            return Err(Stop::Shutdown);
        };
        let Some(mut session) = self.session.take() else {
            return Err(Stop::Broken);
        };
        let stats = self.shared.stats.clone();
        stats.computations.fetch_add(1, Ordering::Relaxed);
        stats.computing.fetch_add(1, Ordering::Relaxed);
        // Once started, a computation finishes (the shutdown grace bounds the wait for it).
        let job = tokio::task::spawn_blocking(move || {
            let replies = session.handle_owned(frame);
            drop(permit);
            (session, replies)
        })
        .await;
        stats.computing.fetch_sub(1, Ordering::Relaxed);
        let Ok((session, replies)) = job else {
            return Err(Stop::Broken);
        };
        let refused = replies
            .iter()
            .filter_map(|r| frames::decode_error(r))
            .map(|(code, _)| code)
            .next();
        let was_in_progress = self.session_deadline.is_some();
        if session.in_progress() && !was_in_progress {
            self.session_deadline = Some(Instant::now() + self.config().session_timeout);
        }
        if !session.in_progress() {
            self.session_deadline = None;
        }
        if replies.iter().any(|r| is_end(r)) {
            stats.sessions_completed.fetch_add(1, Ordering::Relaxed);
        }
        let held = session.held_bytes();
        self.session = Some(session);
        let sent = self.send(&replies).await;
        drop(replies);
        self.account.settle(held);
        sent?;
        match refused {
            Some(code) => {
                stats.frames_refused.fetch_add(1, Ordering::Relaxed);
                self.count_error(code == codes::FATAL).await
            }
            None => {
                self.errors = 0;
                Ok(())
            }
        }
    }

    /// Sends frames within the write timeout.
    async fn send(&mut self, replies: &[Vec<u64>]) -> Result<(), Stop> {
        let limit = self.config().write_timeout;
        match timeout(limit, write_frames(&mut self.writer, replies)).await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(_)) => Err(Stop::Broken),
            Err(_) => Err(Stop::WriteStalled),
        }
    }

    /// A last RLER before closing, best effort.
    async fn farewell(&mut self, error: FrameError, code: u32) {
        let reply = frames::encode_error(code, &error.to_string());
        let _ = timeout(FAREWELL, write_frames(&mut self.writer, &[reply])).await;
    }
}

fn is_end(frame: &[u64]) -> bool {
    frame.first().map(|&w| frames::lo(w)) == Some(frames::CMD_RLEN)
}

fn duration_millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// Fills `buf` from `reader` before the pace's deadline (which moves with every byte).
async fn read_paced(
    reader: &mut BufReader<OwnedReadHalf>,
    buf: &mut [u8],
    pace: &mut Pace,
) -> Result<(), Stop> {
    let mut got = 0;
    while got < buf.len() {
        match timeout_at(pace.deadline(), reader.read(&mut buf[got..])).await {
            Err(_) => return Err(Stop::Slow),
            Ok(Ok(0)) => return Err(Stop::Closed),
            Ok(Ok(k)) => {
                got += k;
                pace.received += k as u64;
            }
            Ok(Err(_)) => return Err(Stop::Broken),
        }
    }
    Ok(())
}

/// Writes length-prefixed frames and flushes.
pub(crate) async fn write_frames(
    writer: &mut BufWriter<OwnedWriteHalf>,
    replies: &[Vec<u64>],
) -> std::io::Result<()> {
    for reply in replies {
        writer
            .write_all(&(reply.len() as u64).to_le_bytes())
            .await?;
        let mut bytes = [0u8; CHUNK];
        for words in reply.chunks(CHUNK / 8) {
            for (slot, word) in bytes.chunks_exact_mut(8).zip(words) {
                slot.copy_from_slice(&word.to_le_bytes());
            }
            writer.write_all(&bytes[..8 * words.len()]).await?;
        }
    }
    writer.flush().await
}
