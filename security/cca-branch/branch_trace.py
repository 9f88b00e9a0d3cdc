#!/usr/bin/env python3
"""Trace of the M33 test image's own CCA2 entry points on valid against tampered ciphertexts
(issue 31 item 3): does the conditional branch after the inlined ConstantTime selection in
`fault_entry_decrypt_set1_unhardened` (`cmp r1, #1; bne.n` on a byte from the stack slot
the validity mask was stored in, then a 32-byte erase of `out`) depend on validity?

The check.py window ends at the last output store of each `decrypt_inner` copy; this runs
the very image check.py reads (not a rebuild) in Unicorn (security/emu/m33.py) and, per pair,
calls the entry point twice from the same state and buffer addresses: with a valid
ciphertext and with the same ciphertext with one bit flipped (part c1, c2, c3 or c4 by pair,
bit from os.urandom), under one fresh random key per pair. Both calls must execute the same
instruction-address sequence, and the outputs must be the message and something else (the
implicit rejection). Memory addresses are not traced here (see Tracer); QEMU traces them on
the trace image (security/trace). Unicorn gives no code hook to a
condition-failed instruction inside an IT block (SECURITY-TOOLS.md section 2), so
IT-covered instructions (and their memory accesses) are left out of both traces: what is
compared is the sequence of every other instruction, which every taken or not-taken
branch changes. Control: key bytes that fail to parse take the entry point's early exit,
and the traces of that pair must differ (the tracer sees this function's branches).

Usage: branch_trace.py ELF --pairs N [--entry NAME ...]   (exit 1 on any failure)
"""
from __future__ import annotations

import argparse
import hashlib
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "emu"))
from m33 import CODE_BASE, CODE_SIZE, M33  # noqa: E402

N = 256
MSG_BYTES = N // 8
CT_BYTES = 2 * N + 2 * MSG_BYTES
SK_BYTES = MSG_BYTES + 32 + 2 * N
CHECK_NAME_BYTES = 64


class Tracer:
    """PC and memory-address streams of the code hooks, IT-covered instructions left out."""

    def __init__(self, m: M33):
        self.m = m
        self.it_covered: set[int] = set()
        self.decoded: dict[int, tuple[str, int]] = {}
        self.active = False
        self.pc = hashlib.sha256()
        self.n_pc = 0
        m.hook_code(self.on_code, CODE_BASE, CODE_BASE + CODE_SIZE)
        # No memory hook: with any UC_HOOK_MEM installed (even an empty one), Unicorn 2.1.4
        # mis-executes the hardened entry point (status 1, "duplicated output selection", on
        # tampered ciphertexts that run clean without it, and in QEMU). Address traces of
        # this code come from QEMU (security/trace, the fault_entry rows).

    def decode(self, addr: int) -> tuple[str, int]:
        if addr not in self.decoded:
            insn = self.m.decode_one(addr)
            self.decoded[addr] = (insn.mnemonic, insn.size)
        return self.decoded[addr]

    def on_code(self, m: M33, addr: int, size: int) -> None:
        if not self.active:
            return
        mnemonic, _ = self.decode(addr)
        if mnemonic.startswith("it") and set(mnemonic[1:]) <= {"t", "e"}:
            # Mark the 1-4 instructions the IT block covers (before they run).
            a = addr + size
            for _ in range(len(mnemonic) - 1):
                self.it_covered.add(a)
                a += self.decode(a)[1]
        if addr in self.it_covered:
            return
        self.pc.update(addr.to_bytes(4, "little"))
        self.n_pc += 1

    def start(self) -> None:
        self.pc, self.n_pc = hashlib.sha256(), 0
        self.active = True

    def stop(self) -> tuple[str, int]:
        self.active = False
        return self.pc.hexdigest(), self.n_pc


def tampered(ct: bytes, k: int) -> bytes:
    part = k % 4
    start, length = [(0, N), (N, N), (2 * N, MSG_BYTES), (2 * N + MSG_BYTES, MSG_BYTES)][part]
    r = os.urandom(2)
    out = bytearray(ct)
    out[start + r[0] % length] ^= 1 << (r[1] % 8)
    return bytes(out)


def run_entry(elf: str, entry: str, pairs: int) -> bool:
    m = M33(elf)
    fn = m.symbol(entry)
    keygen, encrypt = m.symbol("fault_entry_keygen_set1"), m.symbol("fault_entry_encrypt_set1")
    sk, msg, ct = m.alloc(SK_BYTES), m.alloc(MSG_BYTES), m.alloc(CT_BYTES)
    out, name = m.alloc(MSG_BYTES), m.alloc(CHECK_NAME_BYTES)
    tracer = Tracer(m)
    ok = True
    equal = 0
    snap = m.snapshot()
    for k in range(pairs):
        m.restore(snap)
        message = os.urandom(MSG_BYTES)
        m.write(msg, message)
        if m.call(keygen, int.from_bytes(os.urandom(4), "little"), sk) != 0 or \
                m.call(encrypt, sk, msg, int.from_bytes(os.urandom(4), "little"), ct) != 0:
            print(f"FAIL branch-trace {entry}: key generation or encryption failed")
            return False
        valid = m.read(ct, CT_BYTES)
        state = m.snapshot()
        runs = []
        for side, data in enumerate((valid, tampered(valid, k))):
            m.restore(state)
            m.write(ct, data)
            m.write(out, bytes(MSG_BYTES))
            tracer.start()
            status = m.call(fn, sk, ct, out, name)
            runs.append((tracer.stop(), status, m.read(out, MSG_BYTES)))
        (t0, s0, o0), (t1, s1, o1) = runs
        same = t0[0] == t1[0]
        outcome = s0 == 0 and s1 == 0 and o0 == message and o1 != message
        equal += same
        if not (same and outcome):
            ok = False
            why = m.read(name, CHECK_NAME_BYTES).split(b"\0")[0].decode(errors="replace")
            print(f"     pair {k} (tampered part {'c1 c2 c3 c4'.split()[k % 4]}, check fired: {why or '-'}): traces {'equal' if same else 'DIFFER'} ({t0[1]:,} vs {t1[1]:,} "
                  f"instructions), status {s0}/{s1}, valid output {'= message' if o0 == message else 'WRONG'}, "
                  f"tampered output {'= message (NOT REJECTED)' if o1 == message else 'rejection'}")
    # Control: the same call with a secret part r2 of all ones, which the key parser
    # refuses (wrong structure): the entry point returns early, so the traces must differ.
    m.restore(snap)
    m.call(keygen, 1, sk)
    m.call(encrypt, sk, msg, 2, ct)
    good_key = m.read(sk, SK_BYTES)
    state = m.snapshot()
    traces = []
    for key in (good_key, b"\xff" * MSG_BYTES + good_key[MSG_BYTES:]):
        m.restore(state)
        m.write(sk, key)
        tracer.start()
        status = m.call(fn, sk, ct, out, name)
        traces.append((tracer.stop(), status))
    caught = traces[0][0][0] != traces[1][0][0] and traces[0][1] == 0 and traces[1][1] != 0
    print(f"{'PASS' if ok else 'FAIL'} branch-trace {entry}: {equal}/{pairs} valid/tampered pairs with equal "
          f"PC traces (IT-covered instructions excluded; {t0[1]:,} instructions per call), "
          f"{'valid -> message and tampered -> rejection in every pair' if ok else 'see the pairs above'}")
    print(f"{'control caught' if caught else 'CONTROL NOT CAUGHT'}: branch-trace {entry} on an unparsable key "
          f"(status {traces[1][1]}): traces {'differ' if caught else 'equal'} "
          f"({traces[0][0][1]:,} vs {traces[1][0][1]:,} instructions)")
    return ok and caught


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("elf")
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--entry", action="append",
                    default=[])
    a = ap.parse_args()
    entries = a.entry or ["fault_entry_decrypt_set1_unhardened", "fault_entry_decrypt_set1"]
    status = 0
    for e in entries:
        status |= 0 if run_entry(a.elf, e, a.pairs) else 1
    return status


if __name__ == "__main__":
    sys.exit(main())
