//! Recorded keystreams, to measure operations with keystream generation excluded.
//!
//! An operation is first run with [`Record`] keystreams (software AES-CTR, output also
//! written to a tape), then measured with [`Replay`] keystreams that copy the same bytes
//! back from the tape. The arithmetic then sees exactly the bytes it saw with AES (the
//! outputs are compared byte for byte), and the keystream costs only a copy (well under one
//! instruction per byte). Tape 0 holds the public stream, tape 1 the secret stream.

use zeppelin::prng::SEED_BYTES;
use zeppelin::{AesCtr128, Keystream, PublicGenerator, PublicKeystream, SecretKeystream};

const CAPACITY: [usize; 2] = [72 * 1024, 56 * 1024];

struct Tapes {
    seed: [[u8; SEED_BYTES]; 2],
    len: [usize; 2],
    public: [u8; CAPACITY[0]],
    secret: [u8; CAPACITY[1]],
    /// Set when a replay ran past its tape or was started with another seed.
    fault: bool,
}

static mut TAPES: Tapes = Tapes {
    seed: [[0; SEED_BYTES]; 2],
    len: [0; 2],
    public: [0; CAPACITY[0]],
    secret: [0; CAPACITY[1]],
    fault: false,
};

fn tapes() -> &'static mut Tapes {
    // SAFETY: single-threaded firmware without interrupts; callers never hold two of these
    // references across a call that takes another.
    unsafe { &mut *core::ptr::addr_of_mut!(TAPES) }
}

fn tape_bytes(t: &mut Tapes, id: usize) -> &mut [u8] {
    if id == 0 {
        &mut t.public
    } else {
        &mut t.secret
    }
}

/// Clears the fault flag; returns whether a fault happened since the last call.
pub fn take_fault() -> bool {
    let t = tapes();
    core::mem::replace(&mut t.fault, false)
}

/// Empties both tapes (before recording an operation that may use neither stream).
pub fn reset() {
    let t = tapes();
    t.len = [0; 2];
    t.seed = [[0; SEED_BYTES]; 2];
}

/// Bytes recorded on tape `id` by the last [`Record`] run.
pub fn recorded(id: usize) -> usize {
    tapes().len[id]
}

/// Software AES-CTR that also records its output on tape `ID`.
pub struct Record<const ID: usize> {
    inner: AesCtr128,
}

// Constant-time: the software AES-CTR's constant-time output, then a copy of it at the tape's write
// position (a count of bytes, public); no branch or address depends on the bytes.
impl<const ID: usize> SecretKeystream for Record<ID> {}

// Records the software AES-CTR stream.
impl<const ID: usize> PublicKeystream for Record<ID> {
    const GENERATOR: PublicGenerator = PublicGenerator::AesCtr128;
}

impl<const ID: usize> Keystream for Record<ID> {
    type Buffer = zeppelin::ByteBuffer;
    fn from_seed(seed: &[u8; SEED_BYTES]) -> Self {
        let t = tapes();
        t.seed[ID] = *seed;
        t.len[ID] = 0;
        Self {
            inner: AesCtr128::from_seed(seed),
        }
    }

    fn fill(&mut self, out: &mut [u8]) {
        self.inner.fill(out);
        let t = tapes();
        let start = t.len[ID];
        let end = start + out.len();
        if end > CAPACITY[ID] {
            t.fault = true;
            return;
        }
        tape_bytes(t, ID)[start..end].copy_from_slice(out);
        t.len[ID] = end;
    }
}

/// Replays tape `ID` (recorded for the same seed) instead of generating keystream.
pub struct Replay<const ID: usize> {
    pos: usize,
}

// Constant-time: copies recorded bytes from the tape's read position (a count of bytes, public); no
// branch or address depends on the bytes.
impl<const ID: usize> SecretKeystream for Replay<ID> {}

// Replays what `Record` recorded: the software AES-CTR stream.
impl<const ID: usize> PublicKeystream for Replay<ID> {
    const GENERATOR: PublicGenerator = PublicGenerator::AesCtr128;
}

impl<const ID: usize> Keystream for Replay<ID> {
    type Buffer = zeppelin::ByteBuffer;
    fn from_seed(seed: &[u8; SEED_BYTES]) -> Self {
        let t = tapes();
        if t.seed[ID] != *seed {
            t.fault = true;
        }
        Self { pos: 0 }
    }

    fn fill(&mut self, out: &mut [u8]) {
        let t = tapes();
        let end = self.pos + out.len();
        if end > t.len[ID] {
            t.fault = true;
            out.fill(0);
            return;
        }
        let start = self.pos;
        out.copy_from_slice(&tape_bytes(t, ID)[start..end]);
        self.pos = end;
    }
}
