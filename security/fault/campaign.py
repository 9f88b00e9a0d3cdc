#!/usr/bin/env python3
"""Instruction-level single-fault campaign on RBLWE CCA2 decryption in the Cortex-M33 ELF.

The firmware image built by firmware/m33/run.sh exports `fault_entry_decrypt_set1`, which
decrypts with exactly the instance the on-target tests run
(`rblwe::cca::decrypt::<Set1, Hardened, SecretKey<Set1>, SimTrng, 6144>`). Unicorn
(security/emu/m33.py) runs it once per trial with one fault:

* skip      the instruction is not executed (PC moved past it; inside an IT block its
            register and flag effects are undone at the next instruction, so the IT state
            still advances, as for a real skipped instruction);
* regflip   one bit of one register the instruction reads is flipped before it executes;
* flagflip  one of N, Z, C, V is flipped before the instruction executes;
* zero      the register the instruction wrote is zeroed after it executes; the groups
            "accumulator", "mask" and "loop counter" are the comparison results (r0 after a
            diff_* call and the ORs combining them), the mask instructions, and the induction
            register of every loop back-edge (incl. the iteration counters).

A fault site is one dynamic instruction of the fault-free run (a golden trace), so a fault in
a callee is attributed to the code region that called it. The regions come from the DWARF
inline chains (addr2line -i) and the source lines of crates/rblwe/src/cca.rs and cpa.rs:
comparison, mask, selection (first output store), duplicated output, output check, decode,
decode check, key check, and the loop control of the multiplications (CPA decryption and
re-encryption). Every static instruction of these regions is a site at its first and last
execution and at a random one in between.

Each trial is classified against references computed here in Python, independently of the
firmware (HKDF-SHA256 / SHA-256 from the specification in cca.rs):
  correct            valid ciphertext -> the message; tampered -> its implicit rejection value
  detected+erased    an error was returned and the output buffer holds nothing from the
                     decryption (erased to zero, or still the caller's previous content)
  implicit rejection valid ciphertext -> its rejection value (safe: availability only)
  crash/hang         CPU exception, unmapped access, panic/exit, 2x the fault-free length, or
                     a status code the entry point has no path to return (control flow
                     diverted, e.g. a flipped return address)
  error, not erased  an error was returned but the output holds data      (failure)
  silent corruption  Ok with an output that is none of the above           (failure)
  forgery released   tampered ciphertext -> (part of) its candidate plaintext (failure)

Two tampered ciphertexts are used: a flipped bit in c3 (the candidate is the message with
that bit flipped: a chosen forgery) and a flipped bit in the tag c4 (the candidate is the
message itself).
"""

from __future__ import annotations

import argparse
import hashlib
import hmac
import json
import os
import random
import re
import subprocess
import sys
import time
from array import array
from collections import Counter, defaultdict
from dataclasses import dataclass, field

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "security", "emu"))

from m33 import (  # noqa: E402
    CODE_BASE,
    RAM_BASE,
    SCRATCH_BASE,
    STACK_TOP,
    XPSR_C,
    XPSR_N,
    XPSR_V,
    XPSR_Z,
    Crash,
    Exited,
    Hang,
    M33,
)
from unicorn.arm_const import UC_ARM_REG_APSR_NZCV, UC_ARM_REG_XPSR_NZCVQG, UC_ARM_REG_PC  # noqa: E402
from capstone.arm import ARM_CC_AL, ARM_CC_INVALID  # noqa: E402

N, NAME = 256, "set1"
MSG_BYTES = N // 8
SK_BYTES = N // 8 + 32 + 2 * N
CT_BYTES = 2 * N + 2 * (N // 8)
CONFIGS = {  # entry point, CCA2 instance, its CPA decryption
    "hardened": ("fault_entry_decrypt_set1", "true, true"),
    "unhardened": ("fault_entry_decrypt_set1_unhardened", "true, false"),
}
TARGET = ""   # set from the configuration in main()
CPA_TARGET = ""


def set_config(name: str) -> str:
    global TARGET, CPA_TARGET
    entry, cfg = CONFIGS[name]
    TARGET = (f"rblwe::cca::decrypt_reporting_output::<rblwe::params::Set1, rblwe::config::Config<{cfg}>, "
              "rblwe::cpa::SecretKey<rblwe::params::Set1>, rblwe_m33::trng::SimTrng, 6144>")
    if name == "unhardened":
        # Its only caller is the entry point, into which LTO inlines it; the regions still
        # come from the inline chains of cca::decrypt_inner.
        TARGET = entry
    CPA_TARGET = f"rblwe::cpa::decrypt::<rblwe::params::Set1, rblwe::config::Config<{cfg}>>"
    return entry
# The status codes fault_entry.rs returns (OK, FAULT_DETECTED, INVALID_KEY, OTHER_ERROR,
# BAD_KEY_BYTES, BAD_CIPHERTEXT_BYTES).
ENTRY_STATUSES = {0, 1, 2, 3, 16, 17}
OUT_FILL = 0xEE  # the output buffer's content before each run (differs from all references)

CLASSES = ["correct", "detected+erased", "implicit rejection", "crash/hang",
           "error, not erased", "silent corruption", "forgery released"]
FAILING = {"error, not erased", "silent corruption", "forgery released"}
TARGETED = {"loop counter", "accumulator", "mask"}  # fault groups --max-trials always keeps
FLAGS = {"N": XPSR_N, "Z": XPSR_Z, "C": XPSR_C, "V": XPSR_V}
GPRS = ["r0", "r1", "r2", "r3", "r4", "r5", "r6", "r7", "r8", "r9", "r10", "r11", "r12", "lr"]
CANON = {"sb": "r9", "sl": "r10", "fp": "r11", "ip": "r12", "r13": "sp", "r14": "lr"}
SAVED = GPRS + ["sp"]


# ----- independent references (Python) ---------------------------------------------------

def hkdf_sha256(salt: bytes, ikm: bytes, info: bytes, length: int) -> bytes:
    prk = hmac.new(salt, ikm, hashlib.sha256).digest()
    out, block, i = b"", b"", 1
    while len(out) < length:
        block = hmac.new(prk, block + info + bytes([i]), hashlib.sha256).digest()
        out += block
        i += 1
    return out[:length]


def rejection_value(sk: bytes, ct: bytes) -> bytes:
    """R(z, H(C)) of cca.rs: HKDF(salt = label, ikm = z || H(C), info = set name)."""
    z = sk[N // 8: N // 8 + 32]
    h = hashlib.sha256(b"zeppelin-rblwe/v1/H/ciphertext" + NAME.encode() + ct).digest()
    return hkdf_sha256(b"zeppelin-rblwe/v1/R/implicit-rejection", z + h, NAME.encode(), MSG_BYTES)


# ----- static analysis: regions ----------------------------------------------------------

def source_markers(path: str, markers: list[tuple[str, str]]) -> list[tuple[int, str]]:
    """(line, region) where each marker text first occurs at or after the previous one."""
    lines = open(path).read().splitlines()
    out, start = [], 0
    for region, text in markers:
        for k in range(start, len(lines)):
            if text in lines[k]:
                out.append((k + 1, region))
                start = k + 1
                break
        else:
            raise SystemExit(f"marker {text!r} not found in {path}")
    return out


CCA_MARKERS = [
    ("setup", "fn decrypt_inner<"),
    ("cpa decrypt", "sk.key.cpa_decrypt"),
    ("kdf/re-encryption", "kdf::<P>(LABEL_G"),
    ("comparison", "let parts = ["),
    ("mask", "// Value barriers"),
    ("selection", "// out = reject XOR"),
    ("duplicated output", "// Duplicated output store"),
    ("output check", "let diff = diff_reverse(out, check"),
    ("cleanup", "v.as_mut().zeroize();"),
]
CPA_MARKERS = [
    ("cpa setup", "fn decrypt_inner<P: ParamSet, C: Countermeasures>("),
    ("key check", "check_binary_secret::<P>(r2.as_ref())"),
    ("CPA multiply", "let mut ext = P::Wide::zeroed();"),
    ("decode", "arith::decode_msb(w.as_ref(), P::LOG_Q, out);"),
    ("decode check", "let mut again = P::Bits::zeroed();"),
    ("cpa cleanup", "w.as_mut().zeroize();"),
]


def region_of_line(markers: list[tuple[int, str]], line: int) -> str:
    region = markers[0][1]
    for start, name in markers:
        if line >= start:
            region = name
    return region


def inline_chains(elf: str, addrs: list[int]) -> dict[int, list[tuple[str, str, int]]]:
    """addr -> [(function, file, line), ...] innermost first (addr2line -i -f -C)."""
    out = {}
    chunk = 4000
    for k in range(0, len(addrs), chunk):
        part = addrs[k:k + chunk]
        res = subprocess.run(["arm-none-eabi-addr2line", "-i", "-f", "-C", "-a", "-e", elf] +
                             [hex(a) for a in part], capture_output=True, text=True, check=True)
        cur, lines = None, res.stdout.splitlines()
        i = 0
        while i < len(lines):
            ln = lines[i]
            if ln.startswith("0x") and not ln.startswith("0x0000000000") or re.fullmatch(r"0x[0-9a-f]+", ln):
                cur = int(ln, 16)
                out[cur] = []
                i += 1
                continue
            func = ln
            loc = lines[i + 1] if i + 1 < len(lines) else "??:0"
            fname, _, lno = loc.rpartition(":")
            lno = int(re.match(r"\d*", lno).group() or 0)
            out[cur].append((func, fname, lno))
            i += 2
    return out


@dataclass
class Static:
    """What the campaign knows about one instruction address."""
    addr: int
    size: int
    mnemonic: str
    op_str: str
    reads: list[str]
    writes: list[str]
    reads_flags: bool
    sets_flags: bool
    in_it: bool
    is_store: bool
    is_branch: bool


def analyse(m: M33, elf: str, traces: list[array]) -> tuple[dict[int, Static], list[list[str]]]:
    """Static facts per executed address and, per trace, the region of each dynamic
    instruction."""
    target = m.symbol(TARGET)
    cpa_dec = m.symbol(CPA_TARGET)
    uniq = sorted(set().union(*(set(t) for t in traces)))
    # Decode every function that was executed, in order, so capstone tracks IT blocks.
    static: dict[int, Static] = {}
    funcs = {}
    for a in uniq:
        s = m.symbol_at(a)
        if s is not None:
            funcs[s.addr] = s
    for s in funcs.values():
        it_left = 0
        for insn in m.disassemble(s):
            mn = insn.mnemonic
            in_it = it_left > 0
            if in_it:
                it_left -= 1
            if re.fullmatch(r"it[te]{0,3}", mn):
                it_left = len(mn) - 1
            try:
                r, w = insn.regs_access()
            except Exception:  # noqa: BLE001 (capstone raises on some system instructions)
                r, w = [], []
            rn = [CANON.get(insn.reg_name(x), insn.reg_name(x)) for x in r]
            wn = [CANON.get(insn.reg_name(x), insn.reg_name(x)) for x in w]
            cc = insn.cc if hasattr(insn, "cc") else ARM_CC_AL
            reads_flags = (cc not in (ARM_CC_AL, ARM_CC_INVALID)) or mn.startswith(("adc", "sbc", "rrx")) or "cpsr" in rn or "apsr" in rn
            sets_flags = "cpsr" in wn or "apsr" in wn or mn in ("cmp", "cmn", "tst", "teq")
            static[insn.address] = Static(
                insn.address, insn.size, mn, insn.op_str,
                [x for x in rn if x in GPRS], [x for x in wn if x in GPRS],
                reads_flags, sets_flags, in_it, mn.startswith(("str", "stm", "push")),
                mn.startswith(("b", "cb", "tb", "pop")) and not mn.startswith(("bic", "bfc", "bfi")) or "pc" in wn)
    chains = inline_chains(elf, [a for a in uniq if target.addr <= a < target.end or cpa_dec.addr <= a < cpa_dec.end])
    cca_src = os.path.join(ROOT, "crates/rblwe/src/cca.rs")
    cpa_src = os.path.join(ROOT, "crates/rblwe/src/cpa.rs")
    cca_marks = source_markers(cca_src, CCA_MARKERS)
    cpa_marks = source_markers(cpa_src, CPA_MARKERS)

    def cca_region(a: int) -> str:
        for func, fname, line in chains.get(a, []):
            if fname.endswith("cca.rs") and "decrypt_inner" in func:
                return region_of_line(cca_marks, line)
        return "entry/erase"

    def cpa_region(a: int) -> str:
        chain = chains.get(a, [])
        if any("rblwe::arith::decode_msb" in f for f, _, _ in chain):
            return "decode"
        for func, fname, line in chain:
            if fname.endswith("cpa.rs") and "decrypt_inner" in func:
                return region_of_line(cpa_marks, line)
        return "cpa setup"

    diff_fns = {m.symbol("rblwe::cpa::diff_forward").addr, m.symbol("rblwe::cpa::diff_reverse").addr}
    mul_fn = m.symbols_matching("rblwe::arith::mul_binary")
    mul_ranges = [(s.addr, s.end) for s in mul_fn]
    fn_cache: dict[int, object] = {}

    def fn_at(a: int):
        if a not in fn_cache:
            fn_cache[a] = m.symbol_at(a)
        return fn_cache[a]

    cache_cca, cache_cpa = {}, {}
    return static, [label(trace, target, cpa_dec, cca_region, cpa_region, fn_at, diff_fns, mul_ranges, cache_cca, cache_cpa)
                    for trace in traces]


def label(trace, target, cpa_dec, cca_region, cpa_region, fn_at, diff_fns, mul_ranges, cache_cca, cache_cpa) -> list[str]:
    regions = []
    site = "outside"   # region of the latest instruction of cca::decrypt
    inner = "cpa setup"
    for a in trace:
        if target.addr <= a < target.end:
            if a not in cache_cca:
                cache_cca[a] = cca_region(a)
            site = cache_cca[a]
            regions.append(site)
            continue
        if site == "outside":
            regions.append("wrapper")
            continue
        if site == "cpa decrypt":
            if cpa_dec.addr <= a < cpa_dec.end:
                if a not in cache_cpa:
                    cache_cpa[a] = cpa_region(a)
                inner = cache_cpa[a]
                regions.append(inner)
            elif any(lo <= a < hi for lo, hi in mul_ranges):
                regions.append("CPA multiply")
            elif inner == "decode check" and fn_at(a) is not None and fn_at(a).addr in diff_fns:
                regions.append("decode check")
            else:
                regions.append(inner if inner in ("CPA multiply", "decode", "decode check", "key check") else "cpa other")
            continue
        if site == "kdf/re-encryption":
            fn = fn_at(a)
            if fn is not None and "encrypt_with_coins" in fn.name:
                regions.append("re-encryption multiply")
            else:
                regions.append("hash/KDF/re-encryption")
            continue
        if site == "entry/erase":
            # Callees of cca::decrypt's own code: the hash and HKDF of the binding check
            # (SHA-256 internals; their result is compared in entry/erase). Kept apart so
            # that the sample is not dominated by SHA-256 instructions.
            regions.append("binding hash/KDF")
            continue
        regions.append(site)
    return regions


# ----- loops: induction registers ----------------------------------------------------------

def loop_counters(static: dict[int, Static]) -> set[tuple[int, str]]:
    """(address of the flag setter of a loop back-edge, its induction register)."""
    out = set()
    addrs = sorted(static)
    index = {a: k for k, a in enumerate(addrs)}
    for a in addrs:
        s = static[a]
        m = re.match(r"^b(ne|eq|lo|hs|cc|cs|lt|ge|gt|le|hi|ls|mi|pl)(\.[wn])?$", s.mnemonic)
        if not m:
            continue
        t = re.match(r"#?0x([0-9a-f]+)", s.op_str)
        if not t or int(t.group(1), 16) >= a:
            continue
        body = [static[x] for x in addrs if int(t.group(1), 16) <= x < a]
        if any(b.mnemonic.startswith("pop") and "pc" in b.op_str or b.mnemonic == "bx" for b in body):
            continue  # a backward jump to a function exit, not a loop
        k = index[a] - 1
        while k >= 0 and not static[addrs[k]].sets_flags:
            k -= 1
        if k >= 0 and static[addrs[k]].reads:
            out.add((addrs[k], static[addrs[k]].reads[0]))
    return out


# ----- the campaign ------------------------------------------------------------------------

@dataclass
class Trial:
    model: str           # skip / regflip / flagflip / zero
    group: str           # finer label (e.g. "loop counter", "Z")
    index: int           # dynamic instruction (golden trace) at whose hook the fault applies
    region: str
    ct: str              # valid / tampered-c3 / tampered-c4
    reg: str = ""
    bit: int = 0
    outcome: str = ""
    check: str = ""
    addr: int = 0
    insn: str = ""


@dataclass
class Setup:
    m: M33
    snap: tuple
    sk: int
    cts: dict
    out: int
    chk: int
    entry: object
    refs: dict = field(default_factory=dict)
    golden_len: int = 0
    regions: list = field(default_factory=list)


def build(elf: str, entry: str) -> Setup:
    m = M33(elf)
    sk = m.alloc(SK_BYTES)
    if m.call(m.symbol("fault_entry_keygen_set1"), 0x5EED, sk) != 0:
        raise SystemExit("keygen entry point failed")
    message = bytes((i * 37 + 11) & 0xFF for i in range(MSG_BYTES))
    mp = m.put(message)
    ct_valid = m.alloc(CT_BYTES)
    if m.call(m.symbol("fault_entry_encrypt_set1"), sk, mp, 0xC0FFEE, ct_valid) != 0:
        raise SystemExit("encrypt entry point failed")
    valid = m.read(ct_valid, CT_BYTES)
    skb = m.read(sk, SK_BYTES)
    t3 = bytearray(valid); t3[2 * N + 5] ^= 0x10          # c3 byte 5, bit 4
    t4 = bytearray(valid); t4[2 * N + MSG_BYTES + 7] ^= 0x01  # c4 (tag) byte 7
    cand3 = bytearray(message); cand3[5] ^= 0x10
    cts = {"valid": ct_valid, "tampered-c3": m.put(bytes(t3)), "tampered-c4": m.put(bytes(t4))}
    refs = {
        "valid": {"expected": message, "reject": rejection_value(skb, valid), "candidate": message},
        "tampered-c3": {"expected": rejection_value(skb, bytes(t3)), "reject": rejection_value(skb, bytes(t3)), "candidate": bytes(cand3)},
        "tampered-c4": {"expected": rejection_value(skb, bytes(t4)), "reject": rejection_value(skb, bytes(t4)), "candidate": message},
    }
    out, chk = m.alloc(MSG_BYTES), m.alloc(64)
    # All of RAM is restored before every trial (a faulted run may store anywhere); the
    # checkpoints hold only the parts a decryption uses.
    snap = m.snapshot()
    st = Setup(m, snap, sk, cts, out, chk, m.symbol(entry), refs)
    st.regions = [(RAM_BASE, 64 << 10), (SCRATCH_BASE, 64 << 10), (STACK_TOP - (256 << 10), 256 << 10)]
    # Fault-free runs must match the independent references.
    for name, ref in refs.items():
        status, data, _ = run_once(st, name, None, 10_000_000)
        if status != 0 or data != ref["expected"]:
            raise SystemExit(f"fault-free decryption of the {name} ciphertext does not match the Python reference")
    return st


def run_once(st: Setup, ct: str, arm, bound: int, checkpoint=None):
    """One decryption (from the start, or from a checkpoint of it); `arm(m)` installs the
    fault hooks and returns their handles."""
    m = st.m
    m.restore(st.snap)
    m.write(st.out, bytes([OUT_FILL]) * MSG_BYTES)
    handles = arm(m) if arm else []
    try:
        if checkpoint is None:
            status = m.call(st.entry, st.sk, st.cts[ct], st.out, st.chk, max_instructions=bound)
        else:
            status = m.resume(checkpoint, max_instructions=bound)
        return status, m.read(st.out, MSG_BYTES), m.read(st.chk, 64).rstrip(b"\0").decode(errors="replace")
    finally:
        for h in handles:
            m.remove_hook(h)


CHECKPOINT_EVERY = 25_000


def golden_trace(st: Setup, ct: str) -> tuple[array, dict]:
    """The fault-free run's instruction addresses from the first to the last instruction of
    cca::decrypt for ciphertext `ct` (IT-predicated instructions whose condition fails are
    not reported by Unicorn, so valid and tampered runs differ there), and checkpoints
    (machine states) every CHECKPOINT_EVERY instructions, so a trial starts at the last
    checkpoint before its fault."""
    m = st.m
    target = m.symbol(TARGET)
    raw = array("I")

    def arm(mm):
        return [mm.hook_code(lambda _m, a, _s: raw.append(a), CODE_BASE, CODE_BASE + (4 << 20) - 0x10)]
    run_once(st, ct, arm, 10_000_000)
    first = next(k for k, a in enumerate(raw) if target.addr <= a < target.end)
    last = max(k for k, a in enumerate(raw) if target.addr <= a < target.end)
    trace = raw[first:last + 1]
    seen = [0]
    cps: dict[int, tuple] = {}

    def on_any(mm, a, _s):
        k = seen[0] - first
        seen[0] += 1
        if 0 <= k < len(trace) and k % CHECKPOINT_EVERY == 0:
            cps[k] = mm.checkpoint(st.regions)

    def arm2(mm):
        return [mm.hook_code(on_any, CODE_BASE, CODE_BASE + (4 << 20) - 0x10)]
    run_once(st, ct, arm2, 10_000_000)
    return trace, cps


def classify(st: Setup, ct: str, result) -> tuple[str, str]:
    if isinstance(result, Exception):
        return "crash/hang", f"{type(result).__name__}: {result}"[:80]
    status, data, check = result
    ref = st.refs[ct]
    if status not in ENTRY_STATUSES:
        # No path of the entry point returns this: control flow was diverted (e.g. a flipped
        # return address landing elsewhere in the caller), like a crash.
        return "crash/hang", f"undefined status {status:#x}"
    if status != 0:
        # Nothing released: the buffer is erased, or still holds what the caller put there.
        untouched = all(b in (0, OUT_FILL) for b in data)
        return ("detected+erased" if untouched else "error, not erased"), (check or f"status {status}")
    if data == ref["expected"]:
        return "correct", ""
    if ct == "valid":
        return ("implicit rejection" if data == ref["reject"] else "silent corruption"), ""
    cand, rej = ref["candidate"], ref["reject"]
    leaked = any(d == c != r for d, c, r in zip(data, cand, rej))
    return ("forgery released" if leaked else "silent corruption"), ""


def make_arm(trial: Trial, trace: array, start: int, static: dict[int, Static], fired: list):
    """Hooks applying the trial's fault at its dynamic instruction, for a run that starts at
    trace index `start` (a checkpoint)."""
    a = trace[trial.index]
    want = trace[start:trial.index + 1].count(a)
    s = static.get(a)

    def arm(m: M33):
        count = [0]
        handles = []

        def on_hit(mm: M33, addr: int, size: int):
            count[0] += 1
            if count[0] != want:
                return
            fired[0] = True
            if trial.model == "skip":
                if s is not None and s.in_it:
                    saved = {r: mm.reg(r) for r in SAVED}
                    saved_psr = mm.uc.reg_read(UC_ARM_REG_XPSR_NZCVQG)
                    undo[0] = (saved, saved_psr)
                else:
                    mm.uc.reg_write(UC_ARM_REG_PC, (addr + size) | 1)
            elif trial.model == "regflip":
                mm.set_reg(trial.reg, mm.reg(trial.reg) ^ (1 << trial.bit))
            elif trial.model == "zero":
                mm.set_reg(trial.reg, 0)
            elif trial.model == "flagflip":
                mm.uc.reg_write(UC_ARM_REG_APSR_NZCV, mm.uc.reg_read(UC_ARM_REG_APSR_NZCV) ^ FLAGS[trial.group])

        undo = [None]

        def on_next(mm: M33, addr: int, size: int):
            if undo[0] is not None:
                saved, psr = undo[0]
                undo[0] = None
                for r, v in saved.items():
                    mm.set_reg(r, v)
                mm.uc.reg_write(UC_ARM_REG_XPSR_NZCVQG, psr)

        handles.append(m.hook_code(on_hit, a, a + 1))
        if trial.model == "skip" and s is not None and s.in_it:
            handles.append(m.hook_code(on_next, a + s.size, a + s.size + 1))
        return handles
    return arm


def plan(trace: array, regions: list[str], static: dict[int, Static], counters: set, short: bool,
         rng: random.Random, cts: list[str]) -> list[Trial]:
    """The trial list: every static instruction of the fault regions at its first, last and a
    random execution, under each model, for the valid and a tampered ciphertext."""
    focus = {"comparison", "mask", "selection", "duplicated output", "output check", "decode",
             "decode check", "key check", "entry/erase", "cleanup"}
    loop_regions = {"CPA multiply", "re-encryption multiply"}
    by_site: dict[tuple[int, str], list[int]] = defaultdict(list)
    for k, (a, r) in enumerate(zip(trace, regions)):
        if r in focus or (r in loop_regions and static.get(a) and (static[a].sets_flags or static[a].is_branch)):
            by_site[(a, r)].append(k)
    counter_addrs = {a for a, _ in counters}
    counter_reg = dict(counters)
    trials: list[Trial] = []
    for (a, region), ks in sorted(by_site.items()):
        picks = sorted({ks[0], ks[-1]} | {ks[rng.randrange(len(ks))] for _ in range(5)})
        s = static.get(a)
        if s is None:
            continue
        for j, k in enumerate(picks):
            for ct in [cts[(k + j) % len(cts)]]:
                trials.append(Trial("skip", "instruction", k, region, ct))
                for _ in range(2 if s.reads else 0):
                    trials.append(Trial("regflip", "read register", k, region, ct,
                                        reg=rng.choice(s.reads), bit=rng.randrange(32)))
                flags = "NZCV" if s.reads_flags else rng.choice("NZCV")
                for f in flags:
                    trials.append(Trial("flagflip", f, k, region, ct))
                if s.writes and k + 1 < len(trace):
                    group = "destination"
                    if region == "comparison" and s.mnemonic.startswith(("orr", "add")):
                        group = "accumulator"
                    if region == "mask":
                        group = "mask"
                    trials.append(Trial("zero", group, k + 1, regions[k + 1], ct, reg=s.writes[0]))
                if a in counter_addrs:
                    trials.append(Trial("zero", "loop counter", k, region, ct, reg=counter_reg[a]))
        # comparison results: r0 right after each diff_* call returns
        if s.mnemonic == "bl" and region in ("comparison", "decode check", "output check"):
            for k in ks:
                if k + 1 < len(trace):
                    nxt = next((q for q in range(k + 1, min(k + 400, len(trace))) if trace[q] == a + s.size), None)
                    if nxt is not None:
                        for ct in [cts[k % len(cts)]]:
                            trials.append(Trial("zero", "accumulator", nxt, region, ct, reg="r0"))
    # loop counters of every loop reached (multiplications included): zero the induction
    # register at 100 random iterations per ciphertext class
    occurrences = [k for k, a in enumerate(trace) if a in counter_addrs and regions[k] != "entry/erase"]
    for k in rng.sample(occurrences, min(100, len(occurrences))):
        trials.append(Trial("zero", "loop counter", k, regions[k], rng.choice(cts), reg=counter_reg[trace[k]]))
    if short:
        rng.shuffle(trials)
        keep = [t for t in trials if t.group in TARGETED][:150]
        rest = [t for t in trials if t.group not in TARGETED][:600]
        trials = keep + rest
    return trials


def replay_trials(path: str, outcomes: str) -> list[Trial]:
    """Trials recorded by an earlier run (--json), selected by outcome, to run again (on the
    same image, or a rebuilt one whose golden trace has the same length up to the site)."""
    with open(path) as f:
        data = json.load(f)
    records = data["trials"] if isinstance(data, dict) else data
    want = {x.strip() for x in re.split(r"[;]|,(?! not)", outcomes) if x.strip()}
    keys = ("model", "group", "index", "region", "ct", "reg", "bit")
    return [Trial(**{k: r[k] for k in keys}) for r in records if r.get("outcome", "") in want]


def sweep_selector(spec: str):
    """A predicate on (trace index, trace length, address) from "a,b,c-d,first:N,last:N":
    hex addresses (c-d: a range, every execution), or the first / last N dynamic
    instructions of the target (its prologue / epilogue, robust to a rebuilt image)."""
    addrs, ranges, first, last = set(), [], 0, 0
    for part in spec.split(","):
        if part.startswith("first:"):
            first = max(first, int(part[6:]))
        elif part.startswith("last:"):
            last = max(last, int(part[5:]))
        else:
            lo, _, hi = part.partition("-")
            ranges.append((int(lo, 16), int(hi or lo, 16)))
    return lambda k, n, a: k < first or k >= n - last or any(lo <= a <= hi for lo, hi in ranges)


def sweep_trials(spec: str, golden: dict, static: dict[int, Static],
                 regions: dict[str, list[str]]) -> list[Trial]:
    """Every single fault at the selected instructions: skip, each bit of each register read,
    each of N/Z/C/V, zeroing of the destination; for every ciphertext."""
    selected = sweep_selector(spec)
    out = []
    for ct, (trace, _) in golden.items():
        for k, a in enumerate(trace):
            if not selected(k, len(trace), a):
                continue
            s, region = static.get(a), regions[ct][k]
            out.append(Trial("skip", "instruction", k, region, ct))
            for r in (s.reads if s else []):
                out.extend(Trial("regflip", "read register", k, region, ct, reg=r, bit=b) for b in range(32))
            out.extend(Trial("flagflip", f, k, region, ct) for f in "NZCV")
            if s and s.writes and k + 1 < len(trace):
                out.append(Trial("zero", "destination", k + 1, regions[ct][k + 1], ct, reg=s.writes[0]))
    if not out:
        raise SystemExit("--sweep: nothing selected in the golden traces")
    return out


def sites_of(trace: array, regions: list[str]) -> dict[str, set]:
    out: dict[str, set] = defaultdict(set)
    for addr, r in zip(trace, regions):
        out[r].add(addr)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--elf", required=True)
    ap.add_argument("--short", action="store_true")
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--json", required=True, help="where to write the per-trial results")
    ap.add_argument("--limit-seconds", type=float, default=3600)
    ap.add_argument("--config", choices=sorted(CONFIGS), default="hardened",
                    help="unhardened = the negative control (ConstantTime, no fault hardening)")
    ap.add_argument("--max-trials", type=int, default=0, help="keep a random subset of this size")
    ap.add_argument("--regions", default="", help="comma-separated regions to keep (default all)")
    ap.add_argument("--plan-only", action="store_true", help="print the planned trials per model and stop")
    ap.add_argument("--replay", default="",
                    help="run only these trials: a JSON file of trial records (a campaign's --json "
                         "output, or a list of records) whose outcome is one of --replay-outcomes")
    ap.add_argument("--replay-outcomes", default="silent corruption,forgery released,error, not erased",
                    help="with --replay: the outcomes to select, separated by ';' or ',' (default: the failures)")
    ap.add_argument("--sweep", default="",
                    help="instead of the plan: every fault (a skip, each bit of each register read, "
                         "each flag, zeroing) at the selected instructions, for every ciphertext: hex "
                         "addresses or lo-hi ranges (every execution), first:N / last:N (the first / last "
                         "N instructions of the target's run), comma-separated")
    a = ap.parse_args()
    t0 = time.time()
    st = build(a.elf, set_config(a.config))
    golden = {ct: golden_trace(st, ct) for ct in st.cts}
    if golden["tampered-c3"][0] != golden["tampered-c4"][0]:
        raise SystemExit("the two tampered ciphertexts execute different instruction sequences")
    print(f"setup and golden traces: {time.time() - t0:.0f} s", flush=True)
    static, (regions_valid, regions_tampered) = analyse(
        st.m, a.elf, [golden["valid"][0], golden["tampered-c3"][0]])
    print(f"analysis: {time.time() - t0:.0f} s", flush=True)
    for ct, (trace, cps) in golden.items():  # no checkpoint inside an IT block
        for k in [k for k in cps if static.get(trace[k]) is None or static[trace[k]].in_it]:
            del cps[k]
    counters = loop_counters(static)
    rng = random.Random(a.seed)
    trials = (plan(golden["valid"][0], regions_valid, static, counters, a.short, rng, ["valid"]) +
              plan(golden["tampered-c3"][0], regions_tampered, static, counters, a.short, rng,
                   ["tampered-c3", "tampered-c4"]))
    if a.replay:
        trials = replay_trials(a.replay, a.replay_outcomes)
    if a.sweep:
        trials = sweep_trials(a.sweep, golden, static,
                              {"valid": regions_valid, "tampered-c3": regions_tampered,
                               "tampered-c4": regions_tampered})
    if a.regions:
        keep = set(a.regions.split(","))
        trials = [t for t in trials if t.region in keep]
    if a.max_trials and len(trials) > a.max_trials:
        # The targeted trials (loop counters, comparison accumulators, masks) are all kept:
        # they are the few sites where one fault on unhardened code releases a forgery
        # (a random sample of the whole plan misses them, the control then shows none).
        counters_kept = [t for t in trials if t.group in TARGETED]
        others = [t for t in trials if t.group not in TARGETED]
        trials = counters_kept + rng.sample(others, max(0, a.max_trials - len(counters_kept)))
    if a.plan_only:
        print(len(trials), dict(Counter((t.model, t.group) for t in trials)))
        print(dict(Counter(t.region for t in trials)))
        return 0
    trace = golden["valid"][0]
    regions = regions_valid
    st.golden_len = len(trace)
    t_start = time.time()
    print(f"golden trace: {len(trace)} instructions of cca::decrypt (incl. callees); {len(trials)} trials planned", flush=True)
    not_fired = 0
    done = []
    for n, t in enumerate(trials):
        if time.time() - t_start > a.limit_seconds:
            print(f"time limit reached after {n} trials", flush=True)
            break
        fired = [False]
        t.addr = golden[t.ct][0][t.index]
        s = static.get(t.addr)
        t.insn = f"{s.mnemonic} {s.op_str}" if s else "?"
        trace_ct, cps = golden[t.ct]
        start = max(k for k in cps if k < t.index) if any(k < t.index for k in cps) else None
        bound = 2 * (len(trace_ct) - (start or 0)) + 200_000
        try:
            res = run_once(st, t.ct, make_arm(t, trace_ct, start or 0, static, fired), bound,
                           cps[start] if start is not None else None)
        except (Crash, Hang, Exited) as e:
            res = e
        if not fired[0]:
            not_fired += 1
            t.outcome, t.check = "not injected", ""
        else:
            t.outcome, t.check = classify(st, t.ct, res)
        done.append(t)
        if a.replay or a.sweep:
            detail = (f"status {res[0]} out {res[1].hex()}" if isinstance(res, tuple) else str(res)[:60])
            print(f"  {t.outcome}: {t.model}/{t.group} {t.ct} index={t.index} {t.addr:#x} {t.insn} "
                  f"reg={t.reg} bit={t.bit} {t.check} | {detail}", flush=True)
        elif t.outcome in ("silent corruption", "forgery released", "error, not erased", "not injected"):
            print(f"  {t.outcome}: {t.model}/{t.group} {t.ct} region={t.region} index={t.index} "
                  f"{t.addr:#x} {t.insn} reg={t.reg} bit={t.bit} {t.check}", flush=True)
        if (n + 1) % 1000 == 0:
            c = Counter(x.outcome for x in done)
            print(f"  {n + 1} trials, {time.time() - t0:.0f} s: {dict(c)}", flush=True)
    result = {
        "config": a.config, "target": TARGET,
        "elf": a.elf, "golden_instructions": len(trace), "seconds": time.time() - t0,
        "short": a.short, "not_injected": not_fired, "planned": len(trials),
        "region_sizes": dict(Counter(regions)),
        "static_sites": {r: len(v) for r, v in sites_of(trace, regions).items()},
        "trials": [t.__dict__ for t in done],
    }
    with open(a.json + ".tmp", "w") as f:
        json.dump(result, f)
    os.replace(a.json + ".tmp", a.json)
    c = Counter(t.outcome for t in done)
    print(f"{len(done)} trials in {time.time() - t0:.0f} s: {dict(c)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
