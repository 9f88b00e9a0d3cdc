#!/usr/bin/env python3
"""Writes `packed_kernel.rs`: the radix-4 Helium NTT for n = 4096 (forward and inverse) as
`global_asm!`, and the reduction plan the range auditor (`packed.rs`) certifies.

    python3 crates/zeppelin-ring/src/mve/gen_ntt.py            # writes packed_kernel.rs
    python3 crates/zeppelin-ring/src/mve/gen_ntt.py --check    # fails if the file is stale

Before writing, it runs every emitted instruction in a small interpreter of the MVE subset it
uses, on random and edge inputs for the presets' primes, against a reference NTT, and checks
that the kernel's text matches what was run. The design (see `packed.rs` for the contract):

- signed 32-bit lanes; products are 3-instruction Barrett products
  `vqrdmulh t, y, w'` / `vmul y, y, w` / `vmla y, t, -q` with `w' = round(w·2^31/q)`;
  only `w'` is stored: `w = round(w'·q/2^31)` is one `smmulr` (scalar) or `vqrdmulh` (vector);
- two layers per pass on four rows (radix 4), scalar twiddles in core registers (`ldm`),
  the last two layers on `vld4`-de-interleaved registers with per-lane twiddles, canonical
  output written by `vst4` in natural order;
- the inverse runs Gentleman–Sande passes on the SAME table read backwards (`ldmdb`, and a
  vector-base gather with lanes reversed): `ψ^-e = −ψ^(n−e)`, so each inverse twiddle is a
  forward one with the subtraction turned round; `n^-1` is folded into the last layer;
- loops are hardware loops (`dls`/`le`) on public counts; no other branch.
"""
import os
import random
import sys

N = 4096
LOG_N = 12
HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "packed_kernel.rs")
# Bounds are certified for every q up to this (the presets' primes are below 2^28).
Q_MAX = (1 << 28) - 1
LIMIT = (1 << 31) - 1  # every intermediate |x| <= LIMIT (signed 32-bit lanes)
SCALAR_H2 = [1024, 256, 64, 16, 4]  # second-layer half of each scalar forward pass


# ----- bounds (the same formulas as packed.rs) ---------------------------------------------

def prod_bound(q, a):
    """|Barrett product| for |y| <= a: q/2 + a·q/2^32 (w' rounded, vqrdmulh rounded)."""
    return (q * (1 << 31) + a * q) >> 32


def forward_plan(q):
    """Reduction flags of the forward passes (reduce the x rows before the first layer)."""
    flags = []
    a = q - 1
    for _ in SCALAR_H2 + ["vector"]:
        def run(a, red):
            x = prod_bound(q, a) if red else a
            b1 = x + prod_bound(q, a)
            b2 = b1 + prod_bound(q, b1)
            return b2
        red = run(a, False) > LIMIT
        flags.append(red)
        a = run(a, red)
    assert a <= LIMIT and prod_bound(q, a) <= q - 1
    return flags


def inverse_plan(q):
    """Reduction flags of the inverse passes (reduce row 0, the sum of sums, at the end)."""
    flags = []
    a = q - 1
    passes = ["vector"] + SCALAR_H2[::-1]
    for i, _ in enumerate(passes):
        last = i == len(passes) - 1
        s1 = 2 * a
        d1 = prod_bound(q, s1)
        ss = 2 * s1
        sd = 2 * d1
        assert max(ss, sd) <= LIMIT
        if last:
            out = max(prod_bound(q, ss), prod_bound(q, sd))
            assert out <= q - 1
            flags.append(False)
            break
        outs = [ss, prod_bound(q, ss), sd, prod_bound(q, sd)]
        nxt = max(outs)
        # reduce if the next pass's sums would overflow
        red = 4 * nxt > LIMIT
        if red:
            outs[0] = prod_bound(q, ss)
            nxt = max(outs)
        flags.append(red)
        a = nxt
    return flags


FWD_FLAGS = forward_plan(Q_MAX)
INV_FLAGS = inverse_plan(Q_MAX)


# ----- code builder --------------------------------------------------------------------------

class Prog:
    """Straight-line text plus hardware loops: items are str or ("loop", count, [items])."""

    def __init__(self):
        self.items = []
        self.stack = [self.items]

    def e(self, s):
        self.stack[-1].append(s)

    def loop(self, count):
        body = []
        self.stack[-1].append(("loop", count, body))
        self.stack.append(body)

    def end(self):
        self.stack.pop()


class Regs:
    """Row -> q register map with a free pool (rows are renamed, never moved)."""

    def __init__(self, rows, free):
        self.row = dict(rows)
        self.free = list(free)

    def take(self):
        return self.free.pop(0)

    def give(self, r):
        self.free.append(r)


def bmul(p, regs, row, wp, w, nq):
    """Row := row·w mod q (Barrett), |result| <= prod_bound."""
    t = regs.take()
    y = regs.row[row]
    p.e(f"vqrdmulh.s32 {t}, {y}, {wp}")
    p.e(f"vmul.i32 {y}, {y}, {w}")
    p.e(f"vmla.s32 {y}, {t}, {nq}")
    regs.give(t)


def reduce(p, regs, row, c, nq):
    t = regs.take()
    x = regs.row[row]
    p.e(f"vqrdmulh.s32 {t}, {x}, {c}")
    p.e(f"vmla.s32 {x}, {t}, {nq}")
    regs.give(t)


def add_sub(p, regs, xr, yr, move_x, gs):
    """x, y := x + y, d with d = y − x (Gentleman–Sande) or d = x − y (Cooley–Tukey, after
    y := w·y). The moved row (x if `move_x`, else y) goes to the free register."""
    t = regs.take()
    x, y = regs.row[xr], regs.row[yr]
    a, b = (y, x) if gs else (x, y)  # d = a − b
    if move_x:
        p.e(f"vadd.i32 {t}, {x}, {y}")
        p.e(f"vsub.i32 {y}, {a}, {b}")
        regs.give(x)
        regs.row[xr] = t
    else:
        p.e(f"vsub.i32 {t}, {a}, {b}")
        p.e(f"vadd.i32 {x}, {x}, {y}")
        regs.give(y)
        regs.row[yr] = t


def moves_back(ops, free):
    """Which row each butterfly of `ops` (in order) moves into the one free register so that
    rows 0..3 end where they started (q0..q3, for vst4): a search over 2^4 choices."""
    import itertools
    for choice in itertools.product([False, True], repeat=len(ops)):
        pos = {j: f"q{j}" for j in range(4)}
        f = free
        for (x, y), mx in zip(ops, choice):
            r = x if mx else y
            pos[r], f = f, pos[r]
        if all(pos[j] == f"q{j}" for j in range(4)):
            return choice
    raise AssertionError("no register-neutral move sequence")


def canon(p, regs, row, nq):
    """(−q, q) -> [0, q): min_u(x, x + q)."""
    t = regs.take()
    x = regs.row[row]
    p.e(f"vsub.i32 {t}, {x}, {nq}")
    p.e(f"vmin.u32 {x}, {x}, {t}")
    regs.give(t)


# Consts block (word offsets), see packed.rs `PackedConsts`.
K_Q, K_NQ, K_2Q, K_C, K_NINV_W, K_NINV_WP, K_NPSI_W, K_NPSI_WP = range(8)
TRIPLE_WORDS = 3 * sum(N // (4 * h2) for h2 in SCALAR_H2)  # 1023
VEC_BLOCKS = N // 16


def prologue(p, name):
    p.e(".p2align 2")
    p.e(f".section .text.{name},\"ax\",%progbits")
    p.e(f".global {name}")
    p.e(f".type {name}, %function")
    p.e(".thumb_func")
    p.e(f"{name}:")
    p.e("push {r4-r11, lr}")
    p.e("vpush {d8-d15}")
    # [sp] = a, [sp, #4] = table, [sp, #8] = consts
    p.e("push {r0, r1, r2}")


def epilogue(p, name):
    p.e("add sp, sp, #12")
    p.e("vpop {d8-d15}")
    p.e("pop {r4-r11, pc}")
    p.e(f".size {name}, . - {name}")


def group_loops(p, h2, ptr, block, twiddles):
    """The loops of a radix-4 pass on rows j, j+h2, j+2h2, j+3h2 of each group of 4·h2:
    `twiddles()` once per group (None: loaded before), `block(load, store)` per four vectors.
    Wide groups (h2 >= 64): four row pointers (`ptr`) with post-indexed loads, a hardware loop
    per group. Narrow ones: one pointer r0 with immediate offsets, one hardware loop over the
    groups, the group's blocks unrolled."""
    groups = N // (4 * h2)
    s = 4 * h2  # row stride in bytes
    if h2 >= 64:
        for r in (1, 2, 3):
            p.e(f"add.w {ptr[r]}, r0, #{r * s}")
        for g in range(groups):
            if twiddles:
                twiddles()
            p.e(f"mov.w lr, #{h2 // 4}")
            p.loop(h2 // 4)
            block(lambda r, q: f"vldrw.u32 {q}, [{ptr[r]}], #16",
                  lambda r, q: f"vstrw.32 {q}, [{ptr[r]}, #-16]")
            p.end()
            if g + 1 < groups:
                for r in range(4):
                    p.e(f"add.w {ptr[r]}, {ptr[r]}, #{3 * s}")
        return
    assert twiddles and ptr[0] == "r0"
    p.e(f"mov.w lr, #{groups}")
    p.loop(groups)
    twiddles()
    for j in range(h2 // 4):
        last = j == h2 // 4 - 1
        base = 16 * j

        def st(r, q, base=base, last=last):
            if r == 0 and last and h2 == 4:
                return f"vstrw.32 {q}, [r0], #{4 * s}"
            return f"vstrw.32 {q}, [r0, #{base + r * s}]"
        block(lambda r, q, base=base: f"vldrw.u32 {q}, [r0, #{base + r * s}]", st)
    if h2 != 4:
        p.e(f"add.w r0, r0, #{4 * s}")
    p.end()


def fwd_scalar_pass(p, h2, red):
    """Layers 2·h2 and h2 on rows j, j+h2, j+2h2, j+3h2 of each group of 4·h2."""
    groups = N // (4 * h2)
    p.e(f"@ forward pass: layers half {2 * h2}, {h2}; {groups} groups")
    p.e("ldr r2, [sp, #8]")
    if red:
        p.e(f"ldr r10, [r2, #{4 * K_C}]")
    p.e(f"ldr r3, [r2, #{4 * K_NQ}]")
    p.e(f"ldr r2, [r2, #{4 * K_2Q}]")
    p.e("ldr r0, [sp]")

    def twiddles():
        p.e("ldm r1!, {r4, r6, r8}")
        p.e("smmulr r5, r4, r2")
        p.e("smmulr r7, r6, r2")
        p.e("smmulr r9, r8, r2")

    def block(load, store):
        regs = Regs({}, ["q0", "q1", "q2", "q3", "q4", "q5", "q6", "q7"])
        for row in (2, 3, 0, 1):
            regs.row[row] = regs.take()
        # loads interleaved with the first products
        p.e(load(2, regs.row[2]))
        p.e(load(3, regs.row[3]))
        t = regs.take()
        p.e(f"vqrdmulh.s32 {t}, {regs.row[2]}, r4")
        p.e(load(0, regs.row[0]))
        p.e(f"vmul.i32 {regs.row[2]}, {regs.row[2]}, r5")
        p.e(load(1, regs.row[1]))
        p.e(f"vmla.s32 {regs.row[2]}, {t}, r3")
        regs.give(t)
        if red:
            reduce(p, regs, 0, "r10", "r3")
            reduce(p, regs, 1, "r10", "r3")
        add_sub(p, regs, 0, 2, False, gs=False)
        bmul(p, regs, 3, "r4", "r5", "r3")
        add_sub(p, regs, 1, 3, False, gs=False)
        bmul(p, regs, 1, "r6", "r7", "r3")
        add_sub(p, regs, 0, 1, False, gs=False)
        bmul(p, regs, 3, "r8", "r9", "r3")
        add_sub(p, regs, 2, 3, False, gs=False)
        for row in (1, 2, 3, 0):
            p.e(store(row, regs.row[row]))

    if h2 >= 64:
        assert not red
    group_loops(p, h2, {0: "r0", 1: "r10", 2: "r11", 3: "r12"}, block, twiddles)

def fwd_vector_pass(p, red):
    """Layers 2 and 1 on vld4-de-interleaved rows, per-lane twiddles, canonical vst4 output."""
    p.e("@ forward pass: layers half 2, 1 (per-lane twiddles), canonical output")
    p.e("ldr r2, [sp, #8]")
    p.e(f"ldr r3, [r2, #{4 * K_NQ}]")
    p.e(f"ldr r4, [r2, #{4 * K_Q}]")
    p.e(f"ldr r5, [r2, #{4 * K_C}]")
    p.e("ldr r0, [sp]")
    p.e(f"mov.w lr, #{VEC_BLOCKS}")
    p.loop(VEC_BLOCKS)
    # one free register (q6) and renaming; the moves chosen so the rows end in q0..q3
    regs = Regs({0: "q0", 1: "q1", 2: "q2", 3: "q3"}, ["q6"])
    mv = moves_back([(0, 2), (1, 3), (0, 1), (2, 3)], "q6")
    for k in range(4):
        p.e(f"vld4{k}.32 {{q0, q1, q2, q3}}, [r0]")
    if red:
        reduce(p, regs, 0, "r5", "r3")
        reduce(p, regs, 1, "r5", "r3")
    # layer half 2: pairs (0, 2), (1, 3), twiddle lanes = groups
    p.e("vldrw.u32 q4, [r1], #16")
    p.e("vqrdmulh.s32 q5, q4, r4")
    bmul(p, regs, 2, "q4", "q5", "r3")
    add_sub(p, regs, 0, 2, mv[0], gs=False)
    bmul(p, regs, 3, "q4", "q5", "r3")
    add_sub(p, regs, 1, 3, mv[1], gs=False)
    # layer half 1: pairs (0, 1) even groups, (2, 3) odd groups
    p.e("vldrw.u32 q4, [r1], #16")
    p.e("vqrdmulh.s32 q5, q4, r4")
    bmul(p, regs, 1, "q4", "q5", "r3")
    add_sub(p, regs, 0, 1, mv[2], gs=False)
    p.e("vldrw.u32 q4, [r1], #16")
    p.e("vqrdmulh.s32 q5, q4, r4")
    bmul(p, regs, 3, "q4", "q5", "r3")
    add_sub(p, regs, 2, 3, mv[3], gs=False)
    assert all(regs.row[j] == f"q{j}" for j in range(4))
    regs.free += ["q4", "q5", "q7"]
    for row in range(4):
        reduce(p, regs, row, "r5", "r3")
        canon(p, regs, row, "r3")
    for k in range(4):
        wb = "!" if k == 3 else ""
        p.e(f"vst4{k}.32 {{q0, q1, q2, q3}}, [r0]{wb}")
    p.end()


def inv_vector_pass(p, red):
    """Layers 1 and 2 (inverse) on vld4 rows; twiddles gathered backwards, lanes reversed."""
    p.e("@ inverse pass: layers half 1, 2 (per-lane twiddles gathered in reverse)")
    p.e("ldr r2, [sp, #8]")
    p.e(f"ldr r3, [r2, #{4 * K_NQ}]")
    p.e(f"ldr r4, [r2, #{4 * K_Q}]")
    p.e(f"ldr r5, [r2, #{4 * K_C}]")
    p.e("ldr r1, [sp, #4]")
    end = 4 * (TRIPLE_WORDS + 12 * VEC_BLOCKS + 3)
    p.e(f"movw r8, #{end}")
    p.e("add r8, r8, r1")
    # lane k: one block past the end, lane 3 - k; every gather steps back 16 bytes
    p.e("vddup.u32 q7, r8, #4")
    p.e("ldr r0, [sp]")
    p.e(f"mov.w lr, #{VEC_BLOCKS}")
    p.loop(VEC_BLOCKS)
    regs = Regs({0: "q0", 1: "q1", 2: "q2", 3: "q3"}, ["q6"])
    mv = moves_back([(0, 1), (2, 3), (0, 2), (1, 3)], "q6")
    for k in range(4):
        p.e(f"vld4{k}.32 {{q0, q1, q2, q3}}, [r0]")
    # layer half 1: (0, 1) <- forward odd groups (b), (2, 3) <- even groups (a)
    p.e("vldrw.u32 q4, [q7, #-16]!")
    p.e("vqrdmulh.s32 q5, q4, r4")
    add_sub(p, regs, 0, 1, mv[0], gs=True)
    bmul(p, regs, 1, "q4", "q5", "r3")
    p.e("vldrw.u32 q4, [q7, #-16]!")
    p.e("vqrdmulh.s32 q5, q4, r4")
    add_sub(p, regs, 2, 3, mv[1], gs=True)
    bmul(p, regs, 3, "q4", "q5", "r3")
    # layer half 2: (0, 2), (1, 3)
    p.e("vldrw.u32 q4, [q7, #-16]!")
    p.e("vqrdmulh.s32 q5, q4, r4")
    add_sub(p, regs, 0, 2, mv[2], gs=True)
    bmul(p, regs, 2, "q4", "q5", "r3")
    add_sub(p, regs, 1, 3, mv[3], gs=True)
    bmul(p, regs, 3, "q4", "q5", "r3")
    assert all(regs.row[j] == f"q{j}" for j in range(4))
    if red:
        reduce(p, regs, 0, "r5", "r3")
    for k in range(4):
        wb = "!" if k == 3 else ""
        p.e(f"vst4{k}.32 {{q0, q1, q2, q3}}, [r0]{wb}")
    p.end()
    # the scalar passes read the triples backwards from their end
    p.e(f"movw r7, #{4 * TRIPLE_WORDS}")
    p.e("add r1, r1, r7")


def inv_scalar_pass(p, h2, red, last):
    """Inverse layers h2 and 2·h2 on rows j, j+h2, j+2h2, j+3h2 of each group of 4·h2."""
    groups = N // (4 * h2)
    p.e(f"@ inverse pass: layers half {h2}, {2 * h2}; {groups} groups" + ("; n^-1 folded, canonical" if last else ""))
    p.e("ldr r2, [sp, #8]")
    if red and h2 < 64:
        p.e(f"ldr r10, [r2, #{4 * K_C}]")
    p.e(f"ldr r3, [r2, #{4 * K_NQ}]")
    p.e(f"ldr r2, [r2, #{4 * K_2Q}]")
    p.e("ldr r0, [sp]")

    # with four row pointers there is no spare core register: r2 holds 2q for the twiddle
    # products, then the reduction constant for the loop
    cred = "r2" if (h2 >= 64 and red) else "r10"

    def twiddles():
        p.e("ldmdb r1!, {r4, r6, r8}")
        if cred == "r2":
            p.e("ldr r2, [sp, #8]")
            p.e(f"ldr r2, [r2, #{4 * K_2Q}]")
        if not last:
            p.e("smmulr r5, r4, r2")
        p.e("smmulr r7, r6, r2")
        p.e("smmulr r9, r8, r2")
        if cred == "r2":
            p.e("ldr r2, [sp, #8]")
            p.e(f"ldr r2, [r2, #{4 * K_C}]")

    def block(load, store):
        regs = Regs({}, ["q0", "q1", "q2", "q3", "q4", "q5", "q6", "q7"])
        for row in range(4):
            regs.row[row] = regs.take()
        p.e(load(0, regs.row[0]))
        p.e(load(1, regs.row[1]))
        add_sub(p, regs, 0, 1, True, gs=True)
        p.e(load(2, regs.row[2]))
        bmul(p, regs, 1, "r8", "r9", "r3")
        p.e(load(3, regs.row[3]))
        add_sub(p, regs, 2, 3, True, gs=True)
        bmul(p, regs, 3, "r6", "r7", "r3")
        add_sub(p, regs, 0, 2, True, gs=True)
        if last:
            bmul(p, regs, 0, "r4", "r5", "r3")  # r4/r5 = n^-1 here
            bmul(p, regs, 2, "r11", "r12", "r3")  # ψ^(n/2)·n^-1
        else:
            bmul(p, regs, 2, "r4", "r5", "r3")
        add_sub(p, regs, 1, 3, True, gs=True)
        if last:
            bmul(p, regs, 1, "r4", "r5", "r3")
            bmul(p, regs, 3, "r11", "r12", "r3")
            for row in range(4):
                canon(p, regs, row, "r3")
        else:
            bmul(p, regs, 3, "r4", "r5", "r3")
            if red:
                reduce(p, regs, 0, cred, "r3")
        for row in (1, 2, 3, 0):
            p.e(store(row, regs.row[row]))

    ptr = {0: "r0", 1: "r10", 2: "r11", 3: "r12"}
    if last:
        assert h2 >= 64 and groups == 1
        twiddles()
        p.e("ldr r2, [sp, #8]")
        p.e(f"ldr r4, [r2, #{4 * K_NINV_WP}]")
        p.e(f"ldr r5, [r2, #{4 * K_NINV_W}]")
        p.e(f"ldr r11, [r2, #{4 * K_NPSI_WP}]")
        p.e(f"ldr r12, [r2, #{4 * K_NPSI_W}]")
        # pointers: r0, r10, r1 (table pointer is spent), r2
        ptr = {0: "r0", 1: "r10", 2: "r1", 3: "r2"}
    group_loops(p, h2, ptr, block, None if last else twiddles)

FWD_NAME = "zeppelin_mve_ntt4096_forward"
INV_NAME = "zeppelin_mve_ntt4096_inverse"


def build_forward():
    p = Prog()
    prologue(p, FWD_NAME)
    for h2, red in zip(SCALAR_H2, FWD_FLAGS):
        fwd_scalar_pass(p, h2, red)
    fwd_vector_pass(p, FWD_FLAGS[-1])
    epilogue(p, FWD_NAME)
    return p


def build_inverse():
    p = Prog()
    prologue(p, INV_NAME)
    p.e("ldr r1, [sp, #4]")
    inv_vector_pass(p, INV_FLAGS[0])
    for i, h2 in enumerate(SCALAR_H2[::-1]):
        inv_scalar_pass(p, h2, INV_FLAGS[i + 1], i == len(SCALAR_H2) - 1)
    epilogue(p, INV_NAME)
    return p


# ----- text ------------------------------------------------------------------------------------

def flatten(items, out, labels):
    for it in items:
        if isinstance(it, str):
            out.append(it)
        else:
            _, count, body = it
            labels[0] += 1
            lab = labels[0]
            out.append(f"dls lr, lr")
            out.append(f"{lab}:")
            flatten(body, out, labels)
            out.append(f"le lr, {lab}b")
    return out


def count_executed(items):
    n = 0
    for it in items:
        if isinstance(it, str):
            if not it.startswith(".") and not it.endswith(":") and not it.startswith("@"):
                n += 1
        else:
            _, count, body = it
            n += 1 + count * (count_executed(body) + 1)  # dls, body + le per iteration
    return n


# ----- interpreter of the emitted subset --------------------------------------------------------

M32 = 0xFFFFFFFF


def s32(x):
    x &= M32
    return x - (1 << 32) if x & 0x80000000 else x


class Machine:
    def __init__(self, mem):
        self.r = {f"r{i}": 0 for i in range(13)}
        self.r["lr"] = 0
        self.r["sp"] = 0x7000_0000
        self.q = {f"q{i}": [0, 0, 0, 0] for i in range(8)}
        self.mem = mem
        self.count = 0

    def ld(self, a):
        assert a % 4 == 0, hex(a)
        return self.mem[a]

    def st(self, a, v):
        assert a % 4 == 0
        self.mem[a] = v & M32

    def opnd(self, x):
        x = x.strip()
        if x in self.q:
            return list(self.q[x])
        return [self.r[x]] * 4

    def run(self, items):
        for it in items:
            if isinstance(it, str):
                self.step(it)
            else:
                _, count, body = it
                assert self.r["lr"] == count, (self.r["lr"], count)
                self.count += 1  # dls
                for _ in range(count):
                    self.run(body)
                    self.count += 1  # le

    def addr(self, s):
        """'[rN]', '[rN, #imm]', '[rN], #imm', '[rN]!' -> (address, writeback)."""
        s = s.strip()
        if s.endswith("!") and "#" not in s:
            base = s[1:-2].strip()
            return self.r[base], (base, None)
        if "]," in s:
            base, imm = s.split("],")
            base = base.strip()[1:]
            return self.r[base], (base, int(imm.strip()[1:]))
        inner = s.strip("[]")
        parts = [x.strip() for x in inner.split(",")]
        off = int(parts[1][1:]) if len(parts) > 1 else 0
        return self.r[parts[0]] + off, None

    def step(self, line):
        if line.startswith(".") or line.endswith(":") or line.startswith("@"):
            return
        self.count += 1
        op, _, rest = line.partition(" ")
        r, q = self.r, self.q
        if op == "push":
            regs = rest.strip("{}").split(",")
            names = []
            for x in regs:
                x = x.strip()
                if "-" in x:
                    a, b = x.split("-")
                    names += [f"r{i}" for i in range(int(a[1:]), int(b[1:]) + 1)]
                else:
                    names.append(x)
            r["sp"] -= 4 * len(names)
            for i, x in enumerate(names):
                self.mem[r["sp"] + 4 * i] = r[x] if x in r else 0
            return
        if op in ("vpush", "vpop"):
            return
        if op == "pop":
            return
        if op == "add" and rest.startswith("sp"):
            r["sp"] += 12
            return
        args = [x.strip() for x in rest.split(",")] if "[" not in rest and "{" not in rest else None
        if op in ("ldr",):
            rd, m = rest.split(",", 1)
            a, wb = self.addr(m)
            r[rd.strip()] = self.ld(a)
            return
        if op in ("ldm", "ldmdb"):
            base, lst = rest.split(",", 1)
            base = base.strip().rstrip("!")
            names = [x.strip() for x in lst.strip().strip("{}").split(",")]
            if op == "ldm":
                a = r[base]
                for i, x in enumerate(names):
                    r[x] = self.ld(a + 4 * i)
                r[base] = a + 4 * len(names)
            else:
                a = r[base] - 4 * len(names)
                for i, x in enumerate(names):
                    r[x] = self.ld(a + 4 * i)
                r[base] = a
            return
        if op == "smmulr":
            d, n, m = args
            r[d] = ((s32(r[n]) * s32(r[m]) + (1 << 31)) >> 32) & M32
            return
        if op in ("mov.w", "mov", "movw"):
            d, imm = args
            r[d] = int(imm[1:]) & M32
            return
        if op in ("add.w", "add"):
            d, n, m = args
            v = int(m[1:]) if m.startswith("#") else r[m]
            r[d] = (r[n] + v) & M32
            return
        if op == "vldrw.u32":
            d, m = rest.split(",", 1)
            d = d.strip()
            m = m.strip()
            if m.startswith("[q"):
                qm = m[1:m.index(",")]
                imm = int(m[m.index("#") + 1:m.index("]")])
                q[qm] = [(x + imm) & M32 for x in q[qm]]
                q[d] = [self.ld(x) for x in q[qm]]
                return
            a, wb = self.addr(m)
            q[d] = [self.ld(a + 4 * i) for i in range(4)]
            if wb:
                r[wb[0]] += wb[1]
            return
        if op == "vstrw.32":
            d, m = rest.split(",", 1)
            a, wb = self.addr(m)
            for i in range(4):
                self.st(a + 4 * i, q[d.strip()][i])
            if wb:
                r[wb[0]] += wb[1]
            return
        if op.startswith("vld4") or op.startswith("vst4"):
            k = int(op[4])
            lst, m = rest.split("}", 1)
            names = [x.strip() for x in lst.strip("{ ").split(",")]
            m = m.strip(", ")
            if k != 3:
                return
            base = r[m.strip("[]!")]
            for j in range(4):
                for lane in range(4):
                    a = base + 4 * (4 * lane + j)
                    if op.startswith("vld4"):
                        q[names[j]][lane] = self.ld(a)
                    else:
                        self.st(a, q[names[j]][lane])
            if m.endswith("!"):
                r[m.strip("[]!")] += 64
            return
        if op == "vddup.u32":
            d, n, imm = args
            st = int(imm[1:])
            q[d] = [(r[n] - st * i) & M32 for i in range(4)]
            r[n] = (r[n] - 4 * st) & M32
            return
        d, n, m = args
        a, b = self.opnd(n), self.opnd(m)
        if op == "vqrdmulh.s32":
            res = []
            for x, y in zip(a, b):
                v = (2 * s32(x) * s32(y) + (1 << 31)) >> 32
                v = max(min(v, (1 << 31) - 1), -(1 << 31))
                res.append(v & M32)
            q[d] = res
        elif op == "vmul.i32":
            q[d] = [(x * y) & M32 for x, y in zip(a, b)]
        elif op == "vmla.s32":
            q[d] = [(acc + x * y) & M32 for acc, x, y in zip(q[d], a, b)]
        elif op == "vadd.i32":
            q[d] = [(x + y) & M32 for x, y in zip(a, b)]
        elif op == "vsub.i32":
            q[d] = [(x - y) & M32 for x, y in zip(a, b)]
        elif op == "vmin.u32":
            q[d] = [min(x, y) for x, y in zip(a, b)]
        else:
            raise ValueError(line)


# ----- reference -------------------------------------------------------------------------------

def bitrev(i, bits):
    return int(format(i, f"0{bits}b")[::-1], 2) if bits else 0


def psi_of(q):
    # smallest primitive 2n-th root, as ntt.rs
    g = 2
    while True:
        c = pow(g, (q - 1) // (2 * N), q)
        if pow(c, N, q) == q - 1:
            root = c
            break
        g += 1
    sq = root * root % q
    best, pw = root, root
    for _ in range(1, N):
        pw = pw * sq % q
        best = min(best, pw)
    return best


def fwd_twiddles(q, psi):
    return [pow(psi, bitrev(k, LOG_N), q) for k in range(N)]


def ref_forward(a, q, tw):
    a = list(a)
    t = N
    m = 1
    while m < N:
        t //= 2
        for i in range(m):
            w = tw[m + i]
            for j in range(2 * i * t, 2 * i * t + t):
                u, v = a[j], a[j + t] * w % q
                a[j], a[j + t] = (u + v) % q, (u - v) % q
        m *= 2
    return a


def wprime(w, q):
    return (w * (1 << 31) + q // 2) // q


def packed_table(q, tw):
    """The packed w' table: per scalar pass, per group (w1', w2a', w2b'); then per 16-block
    the lanes of layer half 2, half 1 even, half 1 odd."""
    out = []
    for h2 in SCALAR_H2:
        m1 = N // (4 * h2)
        for g in range(m1):
            out += [wprime(tw[m1 + g], q), wprime(tw[2 * m1 + 2 * g], q), wprime(tw[2 * m1 + 2 * g + 1], q)]
    assert len(out) == TRIPLE_WORDS
    for b in range(VEC_BLOCKS):
        out += [wprime(tw[N // 4 + 4 * b + k], q) for k in range(4)]
        out += [wprime(tw[N // 2 + 8 * b + 2 * k], q) for k in range(4)]
        out += [wprime(tw[N // 2 + 8 * b + 2 * k + 1], q) for k in range(4)]
    return out


def consts(q, tw):
    ninv = pow(N, q - 2, q)
    npsi = ninv * tw[1] % q
    return [q, (-q) & M32, 2 * q, wprime(1, q), ninv, wprime(ninv, q), npsi, wprime(npsi, q)]


def simulate(prog, q, data, table, ks):
    mem = {}
    A, T, K = 0x2000_0000, 0x3000_0000, 0x4000_0000
    for i, v in enumerate(data):
        mem[A + 4 * i] = v
    for i, v in enumerate(table):
        mem[T + 4 * i] = v
    for i, v in enumerate(ks):
        mem[K + 4 * i] = v
    m = Machine(mem)
    m.r["r0"], m.r["r1"], m.r["r2"] = A, T, K
    m.run(prog.items)
    return [mem[A + 4 * i] for i in range(N)], m.count


def self_test(fwd, inv):
    rng = random.Random(2026)
    for q in (134176769, 134111233, 134012929, 268369921, 65537):
        psi = psi_of(q)
        tw = fwd_twiddles(q, psi)
        table = packed_table(q, tw)
        ks = consts(q, tw)
        inputs = [[rng.randrange(q) for _ in range(N)] for _ in range(2)]
        inputs += [[q - 1] * N, [0] * N, [q - 1 if i % 2 else 0 for i in range(N)]]
        for a in inputs:
            want = ref_forward(a, q, tw)
            got, nf = simulate(fwd, q, a, table, ks)
            assert got == want, f"forward q={q}"
            back, ni = simulate(inv, q, want, table, ks)
            assert back == a, f"inverse q={q}"
        print(f"q={q}: forward and inverse match the reference on {len(inputs)} inputs;"
              f" {nf} / {ni} instructions")


def rust_strings(lines):
    out = []
    for l in lines:
        l = l.replace("{", "{{").replace("}", "}}").replace('"', '\\"')
        out.append(f'    "{l}",')
    return "\n".join(out)


def render(fwd, inv):
    f_lines = flatten(fwd.items, [], [0])
    i_lines = flatten(inv.items, [], [0])
    flags = lambda fl: ", ".join("true" if x else "false" for x in fl)
    return f"""// @generated by gen_ntt.py (python3 crates/zeppelin-ring/src/mve/gen_ntt.py); do not edit.
//! The radix-4 Helium NTT kernels for n = 4096 (see `packed.rs`), and the reduction plan
//! the range auditor certifies.

/// Forward passes (five scalar-twiddle radix-4 passes, then the per-lane pass): whether the
/// pass Barrett-reduces its two `x` rows before its first layer.
pub(super) const FORWARD_REDUCE: [bool; {len(FWD_FLAGS)}] = [{flags(FWD_FLAGS)}];
/// Inverse passes (the per-lane pass, then five radix-4 passes, the last with `n^-1`):
/// whether the pass Barrett-reduces row 0 (the sum of sums) after its second layer.
pub(super) const INVERSE_REDUCE: [bool; {len(INV_FLAGS)}] = [{flags(INV_FLAGS)}];
/// Largest modulus the plan was generated (and its flags chosen) for.
pub(super) const PLAN_MAX_MODULUS: u32 = {Q_MAX};
/// Second-layer half of each forward scalar pass, in order.
pub(super) const SCALAR_HALVES: [usize; {len(SCALAR_H2)}] = {SCALAR_H2};
/// Instructions one forward / inverse call retires (counted on the emitted program).
pub(super) const FORWARD_INSTRUCTIONS: usize = {count_executed(fwd.items)};
/// See [`FORWARD_INSTRUCTIONS`].
pub(super) const INVERSE_INSTRUCTIONS: usize = {count_executed(inv.items)};

core::arch::global_asm!(
    ".syntax unified",
    ".thumb",
    // global_asm! does not see the crate's target features: name the ones the kernels use.
    ".cpu cortex-m55",
{rust_strings(f_lines)}
{rust_strings(i_lines)}
    ".text",
);
"""


def main():
    fwd, inv = build_forward(), build_inverse()
    print(f"plan: forward reduce {FWD_FLAGS}, inverse reduce {INV_FLAGS}")
    print(f"instructions: forward {count_executed(fwd.items)}, inverse {count_executed(inv.items)}")
    if "--no-sim" not in sys.argv:
        self_test(fwd, inv)
    text = render(fwd, inv)
    if "--check" in sys.argv:
        if open(OUT).read() != text:
            sys.exit(f"{OUT} is stale: run {sys.argv[0]}")
        print("up to date")
        return
    with open(OUT, "w") as f:
        f.write(text)
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
