#!/usr/bin/env python3
"""Writes chacha_kernel.rs: the Helium ChaCha20 kernel (RFC 8439 block function, four blocks
per call, lane i = block counter + i), fully unrolled straight-line code in `asm!`.

    python3 crates/zeppelin-ring/src/mve/gen_chacha.py          # rewrite chacha_kernel.rs
    python3 crates/zeppelin-ring/src/mve/gen_chacha.py --check  # also run the generated code
                                                                # in a 4-lane interpreter against
                                                                # RFC 8439 2.3.2 and a reference

Plan (eight Q registers, sixteen state words of four lanes each):
- Register k holds ONE state word of all four blocks (lane i = block i), so the column and
  diagonal quarter rounds are the same instructions on different registers: no shuffles.
- A quarter round is 15 instructions: 4 `vadd.i32`, 4 `veor`, `vrev32.16` (<<< 16, in place)
  and `vshl.i32` + `vsri.32` for <<< 12, 8, 7 into a free register, which becomes the word's
  home (the old one is freed), so a quarter round needs its 4 words plus 1 free register.
- The 16 words do not fit: at most 7 stay resident between quarter rounds; the others are
  spilled to the output buffer itself (256 bytes, no stack). Which word to evict is chosen
  with the whole (fixed, public) schedule known: the one used furthest in the future
  (Belady), clean words (not modified since loaded) before dirty ones.
- A word's first load comes straight from the input state: `ldr` + `vdup.32` (word 12, the
  counter: `vidup.u32`, lanes counter + 0..3).
- Spill slot of word k = out + 64*(k % 4) + 16*(k / 4). The final scatter stores of the words
  4g..4g+3 (block i's word k at out + 64i + 4k) overwrite exactly the slots of those four
  words, so each group is loaded whole, finished (`ldr` + `vadd.i32` by the scalar input
  word; word 12: + the `vidup` counter vector) and stored with `vstrw.32 q, [qaddr, #4k]`
  (qaddr = out + [0, 64, 128, 192]) without ever overwriting a slot still to be read.

Every address is `out` or `state` plus a constant; there is no branch and no data-dependent
address (scatter addresses are out + constants), as the binary audit checks.
"""
import bisect
import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent
OUT = HERE / "chacha_kernel.rs"

COLS = [(0, 4, 8, 12), (1, 5, 9, 13), (2, 6, 10, 14), (3, 7, 11, 15)]
DIAG = [(0, 5, 10, 15), (1, 6, 11, 12), (2, 7, 8, 13), (3, 4, 9, 14)]
NREG = 8


def slot(w):
    return 64 * (w % 4) + 16 * (w // 4)


class Gen:
    def __init__(self, seq):
        self.seq = seq
        self.uses = {}
        for t, q in enumerate(seq):
            for w in q:
                self.uses.setdefault(w, []).append(t)
        self.reg = {}  # word -> q register
        self.free = list(range(NREG))
        self.dirty = set()
        self.initial = set(range(16))  # never loaded yet: comes from the input state
        self.lines = []

    def next_use(self, w, t):
        u = self.uses.get(w, [])
        i = bisect.bisect_left(u, t)
        return u[i] if i < len(u) else 10 ** 9

    def emit(self, s):
        self.lines.append(s)

    def alloc(self):
        return self.free.pop(0)

    def evict(self, w):
        r = self.reg.pop(w)
        if w in self.dirty:
            self.emit(f"vstrw.32 q{r}, [{{out}}, #{slot(w)}]")
            self.dirty.discard(w)
        self.free.append(r)

    def load(self, w):
        r = self.alloc()
        if w in self.initial:
            self.emit(f"ldr r12, [{{st}}, #{4 * w}]")
            if w == 12:
                self.emit(f"vidup.u32 q{r}, r12, #1")
            else:
                self.emit(f"vdup.32 q{r}, r12")
            self.initial.discard(w)
        else:
            self.emit(f"vldrw.u32 q{r}, [{{out}}, #{slot(w)}]")
        self.reg[w] = r

    def make_room(self, t, keep, room):
        while len(self.free) < room:
            cand = [x for x in self.reg if x not in keep]
            v = max(cand, key=lambda x: (self.next_use(x, t), x not in self.dirty))
            self.evict(v)

    def rot(self, w, n):
        r = self.reg[w]
        if n == 16:
            self.emit(f"vrev32.16 q{r}, q{r}")
            return
        d = self.alloc()
        self.emit(f"vshl.i32 q{d}, q{r}, #{n}")
        self.emit(f"vsri.32 q{d}, q{r}, #{32 - n}")
        self.reg[w] = d
        self.free.append(r)

    def quarter(self, t, q):
        a, b, c, d = q
        for w in q:
            if w not in self.reg:
                self.make_room(t, q, 2)  # the word and the rotation's free register
                self.load(w)
        self.make_room(t, q, 1)
        R = lambda w: f"q{self.reg[w]}"
        for (x, y, z, n) in ((a, b, d, 16), (c, d, b, 12), (a, b, d, 8), (c, d, b, 7)):
            self.emit(f"vadd.i32 {R(x)}, {R(x)}, {R(y)}")
            self.emit(f"veor {R(z)}, {R(z)}, {R(x)}")
            self.rot(z, n)
        self.dirty.update(q)

    def finish(self):
        # Lanes' output addresses: qaddr = out + [0, 64, 128, 192].
        t = len(self.seq)
        self.make_room(t, (), 1)
        qa = self.alloc()
        self.emit("mov r12, #0")
        self.emit(f"vidup.u32 q{qa}, r12, #8")
        self.emit(f"vshl.i32 q{qa}, q{qa}, #3")
        self.emit(f"vadd.i32 q{qa}, q{qa}, {{out}}")
        # Groups with most words resident first (fewest loads).
        groups = sorted(range(4), key=lambda g: -sum((4 * g + i) in self.reg for i in range(4)))
        for gi, g in enumerate(groups):
            words = [4 * g + i for i in range(4)]
            later = set(w for h in groups[gi + 1:] for w in range(4 * h, 4 * h + 4))
            extra = 1 if g == 3 else 0
            for w in words:
                if w not in self.reg:
                    while len(self.free) < 1 + (extra if w == words[-1] else 0):
                        # evict a resident word of a later group: its slot is not ours
                        v = next(x for x in self.reg if x in later)
                        self.evict(v)
                    self.load(w)
            while len(self.free) < extra:
                v = next(x for x in self.reg if x in later)
                self.evict(v)
            for w in words:
                r = self.reg[w]
                self.emit(f"ldr r12, [{{st}}, #{4 * w}]")
                if w == 12:
                    c = self.free[0]
                    self.emit(f"vidup.u32 q{c}, r12, #1")
                    self.emit(f"vadd.i32 q{r}, q{r}, q{c}")
                else:
                    self.emit(f"vadd.i32 q{r}, q{r}, r12")
            for w in words:
                r = self.reg.pop(w)
                self.emit(f"vstrw.32 q{r}, [q{qa}, #{4 * w}]")
                self.dirty.discard(w)
                self.free.append(r)

    def run(self):
        for t, q in enumerate(self.seq):
            self.quarter(t, q)
        self.finish()
        return self.lines


def schedule():
    seq = []
    for _ in range(10):
        seq += COLS + DIAG
    return seq


# ----- a four-lane interpreter of the generated lines (the --check) ---------------------
M = 0xFFFFFFFF


def interpret(lines, state, mem_words=64):
    import re
    q = [[0] * 4 for _ in range(8)]
    mem = [0xDEADBEEF] * mem_words  # out buffer as words
    t = 0
    for line in lines:
        op, rest = line.split(None, 1)
        args = [a.strip() for a in re.split(r",(?![^\[]*\])", rest)]
        def qi(a):
            return int(a[1:])
        def off(a):
            m = re.match(r"\[\{(\w+)\}(?:, #(\d+))?\]", a)
            return m.group(1), int(m.group(2) or 0)
        if op == "ldr":
            base, o = off(args[1]); assert base == "st"; t = state[o // 4]
        elif op == "mov":
            t = int(args[1][1:])
        elif op == "vdup.32":
            q[qi(args[0])] = [t] * 4
        elif op == "vidup.u32":
            s = int(args[2][1:]); q[qi(args[0])] = [(t + i * s) & M for i in range(4)]; t = (t + 4 * s) & M
        elif op == "vldrw.u32":
            base, o = off(args[1]); assert base == "out" and o % 16 == 0
            q[qi(args[0])] = mem[o // 4:o // 4 + 4]
        elif op == "vstrw.32":
            if args[1].startswith("[q"):
                m = re.match(r"\[q(\d+), #(\d+)\]", args[1]); a = q[int(m.group(1))]; o = int(m.group(2))
                for i in range(4):
                    addr = a[i] + o; assert addr % 4 == 0; mem[addr // 4] = q[qi(args[0])][i]
            else:
                base, o = off(args[1]); assert base == "out"
                mem[o // 4:o // 4 + 4] = list(q[qi(args[0])])
        elif op == "vadd.i32":
            x = q[qi(args[1])]
            y = [t] * 4 if args[2] == "r12" else ([0] * 4 if args[2] == "{out}" else q[qi(args[2])])
            q[qi(args[0])] = [(u + v) & M for u, v in zip(x, y)]
        elif op == "veor":
            q[qi(args[0])] = [u ^ v for u, v in zip(q[qi(args[1])], q[qi(args[2])])]
        elif op == "vrev32.16":
            q[qi(args[0])] = [((u << 16) | (u >> 16)) & M for u in q[qi(args[1])]]
        elif op == "vshl.i32":
            n = int(args[2][1:]); q[qi(args[0])] = [(u << n) & M for u in q[qi(args[1])]]
        elif op == "vsri.32":
            n = int(args[2][1:]); keep = (M << (32 - n)) & M
            q[qi(args[0])] = [(d & keep) | (u >> n) for d, u in zip(q[qi(args[0])], q[qi(args[1])])]
        else:
            raise ValueError(line)
    return mem


def reference_block(state):
    x = list(state)
    def qr(a, b, c, d):
        rl = lambda v, n: ((v << n) | (v >> (32 - n))) & M
        x[a] = (x[a] + x[b]) & M; x[d] = rl(x[d] ^ x[a], 16)
        x[c] = (x[c] + x[d]) & M; x[b] = rl(x[b] ^ x[c], 12)
        x[a] = (x[a] + x[b]) & M; x[d] = rl(x[d] ^ x[a], 8)
        x[c] = (x[c] + x[d]) & M; x[b] = rl(x[b] ^ x[c], 7)
    for _ in range(10):
        for q in COLS + DIAG:
            qr(*q)
    return [(u + v) & M for u, v in zip(x, state)]


def check(lines):
    import random
    # RFC 8439 2.3.2: key 00..1f, nonce 000000090000004a00000000, counter 1.
    key = bytes(range(32))
    nonce = bytes.fromhex("000000090000004a00000000")
    st = [0x61707865, 0x3320646E, 0x79622D32, 0x6B206574]
    st += [int.from_bytes(key[4 * i:4 * i + 4], "little") for i in range(8)]
    st += [1] + [int.from_bytes(nonce[4 * i:4 * i + 4], "little") for i in range(3)]
    mem = interpret(lines, st)
    expect0 = [0xE4E7F110, 0x15593BD1, 0x1FDD0F50, 0xC47120A3, 0xC7F4D1C7, 0x0368C033,
               0x9AAA2204, 0x4E6CD4C3, 0x466482D2, 0x09AA9F07, 0x05D7C214, 0xA2028BD9,
               0xD19C12B5, 0xB94E16DE, 0xE883D0CB, 0x4E3C50A2]
    assert mem[:16] == expect0, "RFC 8439 2.3.2 block"
    rng = random.Random(1)
    for _ in range(50):
        st = [rng.getrandbits(32) for _ in range(16)]
        mem = interpret(lines, st)
        for b in range(4):
            s = list(st); s[12] = (s[12] + b) & M
            assert mem[16 * b:16 * b + 16] == reference_block(s), "random state"


HEADER = '''// @generated by gen_chacha.py (python3 crates/zeppelin-ring/src/mve/gen_chacha.py); do not
// edit: change the generator and run it again (`--check` runs the code in an interpreter).
//! The Helium ChaCha20 kernel: four RFC 8439 blocks per call, straight-line (see
//! `gen_chacha.py` for the register plan: one state word of the four blocks per Q register,
//! spills to the output buffer, scatter stores that write the blocks in stream order).

use core::arch::asm;

/// Instructions in the kernel's `asm!` block (the generator's count).
#[allow(dead_code)]
pub(super) const ASM_INSTRUCTIONS: usize = {count};

/// Four ChaCha20 blocks of `state` (the RFC 8439 input state; lane `i` uses block counter
/// `state[12] + i`, wrapping) into `out[16·i..16·i + 16]` (little-endian: the stream's bytes).
///
/// # Safety
/// `state` valid for reading 16 `u32`, `out` for writing 64 `u32` (word-aligned).
#[inline(never)]
pub(super) unsafe fn chacha20_blocks4_pass(state: *const u32, out: *mut u32) {{
    // SAFETY: the caller guarantees the ranges; every load is `state` + a constant (< 64),
    // every store `out` + a constant (< 256): the output buffer doubles as the spill area;
    // only q0..q7, r12 (scratch: `vidup` takes an even register) and flags change.
    unsafe {{
        asm!(
{body}
            st = in(reg) state,
            out = in(reg) out,
            out("r12") _,
            out("s0") _, out("s1") _, out("s2") _, out("s3") _,
            out("s4") _, out("s5") _, out("s6") _, out("s7") _,
            out("s8") _, out("s9") _, out("s10") _, out("s11") _,
            out("s12") _, out("s13") _, out("s14") _, out("s15") _,
            out("s16") _, out("s17") _, out("s18") _, out("s19") _,
            out("s20") _, out("s21") _, out("s22") _, out("s23") _,
            out("s24") _, out("s25") _, out("s26") _, out("s27") _,
            out("s28") _, out("s29") _, out("s30") _, out("s31") _,
            options(nostack),
        );
    }}
}}
'''


def main(argv):
    lines = Gen(schedule()).run()
    if "--check" in argv:
        check(lines)
        print(f"gen_chacha: interpreter check passed ({len(lines)} instructions)")
    kinds = {}
    for l in lines:
        k = l.split()[0]
        kinds[k] = kinds.get(k, 0) + 1
    body = "\n".join(f'            "{l}",' for l in lines)
    OUT.write_text(HEADER.format(count=len(lines), body=body))
    print(f"gen_chacha: wrote {OUT.name}: {len(lines)} instructions "
          f"({len(lines) / 256:.2f} per byte); {dict(sorted(kinds.items()))}")


if __name__ == "__main__":
    main(sys.argv[1:])
