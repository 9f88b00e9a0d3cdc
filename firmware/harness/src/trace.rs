//! Trace-equivalence support for the dedicated trace images (`firmware/m55/src/bin/trace.rs`,
//! `firmware/m33/src/bin/trace.rs`), driven by `security/trace/run.sh`:
//!
//! - [`open`] and [`close`] mark one trace window; the QEMU plugin (`security/trace/ctrace.c`)
//!   hashes every instruction address and every memory-access address executed between them.
//! - The inputs come from outside the image: the script writes them with QEMU's
//!   `-device loader,file=...,addr=...` into board RAM that no segment of the image covers
//!   (QEMU refuses overlapping loads, and start-up code never touches it); each image names
//!   that address with [`input_at!`], which also puts it in the ELF's symbol table as the
//!   absolute symbol `CTRACE_INPUT_ADDR` for the script.
//!   Each pair has one public block and two secret blocks; the two windows of a pair differ
//!   only in the secret block.
//! - [`leaky_branch`] and [`leaky_load`] are the deliberately leaky controls (assembly, so
//!   their shape cannot be optimised away): a branch on a secret bit, a load at a
//!   secret-indexed address.

/// Bytes of the public block of a pair (a seed for the pair's public inputs).
pub const PUBLIC_BYTES: usize = 32;
/// Bytes of one secret block: three 32-byte seeds (key, noise stream, message).
pub const SECRET_BYTES: usize = 96;
/// Bytes of one pair: the public block, then the two secret blocks.
pub const PAIR_BYTES: usize = PUBLIC_BYTES + 2 * SECRET_BYTES;
/// Most pairs one input holds.
pub const MAX_PAIRS: usize = 128;
/// Bytes of the header: magic, operation, pair count, reserved (little-endian words).
pub const HEADER_BYTES: usize = 16;
/// `"CTTR"`: the input was written by the script (and not left over or zero).
pub const MAGIC: u32 = 0x5254_5443;

/// Opens a trace window: the plugin starts hashing at this function's first instruction.
#[no_mangle]
#[inline(never)]
pub extern "C" fn ctrace_open() {
    // Distinct bodies keep the two markers at different addresses.
    // SAFETY: no operands, no memory, no stack.
    unsafe { core::arch::asm!("nop", options(nomem, nostack, preserves_flags)) }
}

/// Closes the trace window: the plugin stops hashing before this function's first instruction.
#[no_mangle]
#[inline(never)]
pub extern "C" fn ctrace_close() {
    // SAFETY: no operands, no memory, no stack.
    unsafe { core::arch::asm!("nop", "nop", options(nomem, nostack, preserves_flags)) }
}

/// Declares the board address of the input area: `input_at!(INPUT, 0x2130_0000);` defines
/// the constant and the absolute ELF symbol `CTRACE_INPUT_ADDR` (read by the script).
#[macro_export]
macro_rules! input_at {
    ($name:ident, $addr:expr) => {
        const $name: usize = $addr;
        core::arch::global_asm!(
            ".globl CTRACE_INPUT_ADDR",
            ".set CTRACE_INPUT_ADDR, {addr}",
            addr = const $addr,
        );
    };
}

/// Bytes of the whole input area.
pub const INPUT_BYTES: usize = HEADER_BYTES + MAX_PAIRS * PAIR_BYTES;

/// The input area at a board address (RAM outside the image, written by QEMU's loader).
#[derive(Clone, Copy)]
pub struct Input {
    base: usize,
}

impl Input {
    /// The area at `base`.
    ///
    /// # Safety
    /// `base .. base + INPUT_BYTES` must be readable RAM that nothing else in the image uses.
    pub const unsafe fn at(base: usize) -> Self {
        Self { base }
    }

    /// One byte (volatile: the compiler cannot know that QEMU wrote it).
    fn byte(&self, i: usize) -> u8 {
        if i >= INPUT_BYTES {
            return 0;
        }
        // SAFETY: in bounds of the area that `Input::at`'s caller vouched for.
        unsafe { core::ptr::read_volatile((self.base + i) as *const u8) }
    }

    fn word(&self, i: usize) -> u32 {
        u32::from_le_bytes([
            self.byte(i),
            self.byte(i + 1),
            self.byte(i + 2),
            self.byte(i + 3),
        ])
    }
}

/// What the header asks for.
#[derive(Clone, Copy)]
pub struct Request {
    /// The operation number (each trace image defines its own list).
    pub op: u32,
    /// Number of pairs (at most [`MAX_PAIRS`]).
    pub pairs: usize,
}

impl Input {
    /// The header, if the script wrote one that fits.
    pub fn request(&self) -> Option<Request> {
        let pairs = self.word(8) as usize;
        (self.word(0) == MAGIC && pairs <= MAX_PAIRS).then(|| Request {
            op: self.word(4),
            pairs,
        })
    }

    /// Pair `k`, copied out of the area.
    pub fn pair(&self, k: usize) -> Pair {
        let base = HEADER_BYTES + k * PAIR_BYTES;
        let mut p = Pair {
            public: [0; PUBLIC_BYTES],
            secret: [[0; SECRET_BYTES]; 2],
        };
        for (i, b) in p.public.iter_mut().enumerate() {
            *b = self.byte(base + i);
        }
        for (side, block) in p.secret.iter_mut().enumerate() {
            for (i, b) in block.iter_mut().enumerate() {
                *b = self.byte(base + PUBLIC_BYTES + side * SECRET_BYTES + i);
            }
        }
        p
    }
}

/// The blocks of one pair, copied out of the input buffer.
pub struct Pair {
    /// Seed of the pair's public inputs (equal in both windows).
    pub public: [u8; PUBLIC_BYTES],
    /// The two secret blocks, one per window.
    pub secret: [[u8; SECRET_BYTES]; 2],
}

impl Pair {
    /// Secret seed `j` (0 key, 1 noise stream, 2 message) of side `side`.
    pub fn seed(&self, side: usize, j: usize) -> [u8; 32] {
        let mut s = [0u8; 32];
        s.copy_from_slice(&self.secret[side][32 * j..32 * (j + 1)]);
        s
    }
}

/// Test data expanded from a seed (xorshift32; setup outside the windows only, not for keys).
pub struct Expand(u32);

impl Expand {
    /// The generator for `seed`.
    pub fn new(seed: &[u8; 32]) -> Self {
        let x = seed.chunks(4).fold(0x9e37_79b9u32, |h, c| {
            (h ^ u32::from_le_bytes([c[0], c[1], c[2], c[3]])).wrapping_mul(0x0100_0193)
        });
        Self(x | 1)
    }

    /// The next word.
    pub fn next_u32(&mut self) -> u32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 17;
        self.0 ^= self.0 << 5;
        self.0
    }
}

/// A small digest of an output (FNV-1a), to count pairs whose two outputs differ: proof that
/// the secret blocks reached the operation.
pub fn digest(bytes: impl IntoIterator<Item = u8>) -> u32 {
    bytes.into_iter().fold(0x811c_9dc5u32, |h, b| {
        (h ^ b as u32).wrapping_mul(0x0100_0193)
    })
}

/// Leaky control: branches on bit 0 of `secret` (taken arm: three more instructions).
#[inline(never)]
pub fn leaky_branch(secret: u32) -> u32 {
    let mut x = secret;
    // SAFETY: register-only arithmetic and a local label.
    unsafe {
        core::arch::asm!(
            "tst {x}, #1",
            "beq 2f",
            "adds {x}, {x}, #3",
            "eors {x}, {x}, {x}, lsl #1",
            "adds {x}, {x}, #5",
            "2:",
            x = inout(reg) x,
            options(nomem, nostack),
        );
    }
    x
}

/// Leaky control: one load from `table` at the index `secret % 64` (no branch).
#[inline(never)]
pub fn leaky_load(table: &[u32; 64], secret: u32) -> u32 {
    let out: u32;
    // SAFETY: the index is masked to 0..64, inside `table`.
    unsafe {
        core::arch::asm!(
            "and {i}, {i}, #63",
            "ldr {out}, [{t}, {i}, lsl #2]",
            i = inout(reg) secret => _,
            t = in(reg) table.as_ptr(),
            out = out(reg) out,
            options(readonly, nostack, preserves_flags),
        );
    }
    out
}
