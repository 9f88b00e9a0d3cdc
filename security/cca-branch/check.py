#!/usr/bin/env python3
"""Binary check: no conditional branch between the final ciphertext comparison and the output
stores of every `rblwe::cca::decrypt` instance (review F1, issue 11 item 1).

For each instance in a linked binary (Cortex-M33 ELF via arm-none-eabi-objdump, x86-64 via
objdump), the calls to `rblwe::cpa::diff_forward` / `diff_reverse` are located. With fault
hardening there are eight ciphertext comparisons (four forward, four reverse) followed by the
cross-check of the duplicated output; without it, four. The window checked runs from the
last ciphertext-comparison call to the output cross-check call (or the end of the function):
it holds the mask computation, the selection and both output stores. Any conditional control
transfer in it is a finding, except the back-edge of a counted loop (flags from an induction
register that the loop body changes only by a constant step: a public trip count; listed as
notes), e.g. the 64-byte output loops of Set 3:

* Thumb: b<cond> (incl. .w/.n), cbz, cbnz, tbb/tbh, and any instruction inside an IT block
  that writes the PC (conditional bx/pop/ldr/mov/add to pc);
* x86-64: every jcc, jrcxz/jecxz and loop*.

An instance whose call structure is not recognised (other than 4 or 8 comparison calls
before the cross-check) is a failure too, so the check cannot pass vacuously.

Instances are found in the binary's DWARF (issue 31): every concrete copy of
`rblwe::cca::decrypt_inner` (the function that holds the comparisons and the selection),
out of line (DW_TAG_subprogram with code) or inlined (DW_TAG_inlined_subroutine, e.g. in
the fault entries, the size probes, the C library's entry points), with its address ranges;
`cca::decrypt` is `#[inline(always)]`, so every call site of it has its own copy. Without
fault hardening the window ends at the end of the `decrypt_inner` copy (its last output
store); conditional branches after it, in the enclosing decryption (the erase of `out` on
an error result), are listed as notes. Every address that the line table attributes to the
selection line of cca.rs must lie in a checked copy, so that no copy is missed.

Usage:
  check.py --m33 ELF [--host BIN]         check binaries (exit 1 on any finding)
  check.py --m33 ELF --label NAME          ... with a label for the output lines
  check.py --listing FILE --arch {m33,x86} check a pinned objdump listing (negative control)
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from dataclasses import dataclass

DECRYPT = "rblwe::cca::decrypt"
COMPARE = ("rblwe::cpa::diff_forward", "rblwe::cpa::diff_reverse")

THUMB_COND = re.compile(r"^b(eq|ne|cs|hs|cc|lo|mi|pl|vs|vc|hi|ls|ge|lt|gt|le)(\.[wn])?$")
X86_COND = re.compile(r"^(j(?!mp)[a-z]+|jrcxz|jecxz|loop[a-z]*)$")
# objdump -d line: "  10027686:\tf7ff fe12 \tbl\t1002...", or x86 "  e62de:\t09 c5  \tor ..."
LINE = re.compile(r"^\s*([0-9a-f]+):\s*(?:[0-9a-f]{2,8}\s)*\s*\t?([a-z][a-z0-9.]*)\s*(.*)$")
FUNC = re.compile(r"^([0-9a-f]+) <(.*)>:$")


@dataclass
class Insn:
    addr: int
    mnemonic: str
    operands: str
    text: str


@dataclass
class Instance:
    name: str
    addr: int
    insns: list[Insn]


def parse_listing(text: str) -> list[Instance]:
    """The `rblwe::cca::decrypt` functions of an objdump -d -C --no-show-raw-insn listing."""
    out: list[Instance] = []
    current: Instance | None = None
    for line in text.splitlines():
        m = FUNC.match(line.strip())
        if m:
            name = m.group(2)
            current = Instance(name, int(m.group(1), 16), []) if name.startswith(DECRYPT) else None
            if current is not None:
                out.append(current)
            continue
        if current is None:
            continue
        m = LINE.match(line)
        if m and ":" in line:
            current.insns.append(Insn(int(m.group(1), 16), m.group(2), m.group(3).strip(), line.strip()))
    return out


def disassemble(tool: str, binary: str, spans: list[tuple[int, int]] | None = None) -> str:
    """objdump -d of the whole binary, or of the address spans only (one run each)."""
    if spans is None:
        return subprocess.run([tool, "-d", "-C", "--no-show-raw-insn", binary],
                              capture_output=True, text=True, check=True).stdout
    return "\n".join(subprocess.run(
        [tool, "-d", "-C", "--no-show-raw-insn", f"--start-address={lo:#x}", f"--stop-address={hi:#x}", binary],
        capture_output=True, text=True, check=True).stdout for lo, hi in spans)


def spans_of(copies: list["Copy"], before: int = 0x4000, after: int = 0x1000) -> list[tuple[int, int]]:
    """Merged address spans around the copies (room before for the enclosing function's
    register set-up that the x86 call resolution follows, after for the notes)."""
    out: list[tuple[int, int]] = []
    for c in sorted(copies, key=lambda c: c.low):
        lo, hi = max(0, c.low - before), c.high + after
        if out and lo <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], hi))
        else:
            out.append((lo, hi))
    return out


X86_FULL = {f"%e{r}": f"%r{r}" for r in ("ax", "bx", "cx", "dx", "si", "di", "bp", "sp")}


def resolve_x86_calls(binary: str, listing: str) -> str:
    """The host binary is position-independent: diff_* are called through registers loaded
    from the GOT (`mov GOT(%rip),%r12 ; call *%r12`) or `call *GOT(%rip)`. Annotate each
    such call with its target's name so that the comparison calls can be counted."""
    got = {}
    rel = subprocess.run(["readelf", "-rW", binary], capture_output=True, text=True, check=True)
    for line in rel.stdout.splitlines():
        f = line.split()
        if len(f) >= 4 and f[2] == "R_X86_64_RELATIVE":
            got[int(f[0], 16)] = int(f[3], 16)
        elif len(f) >= 5 and f[2] in ("R_X86_64_GLOB_DAT", "R_X86_64_64"):
            got[int(f[0], 16)] = int(f[3], 16)
    syms = {}
    nm = subprocess.run(["nm", "-C", binary], capture_output=True, text=True, check=True)
    for line in nm.stdout.splitlines():
        f = line.split(" ", 2)
        if len(f) == 3 and f[2] in COMPARE:
            syms[int(f[0], 16)] = f[2]
    regs: dict[str, int] = {}
    out = []
    for line in listing.splitlines():
        m = re.search(r"\t(mov|lea)\s+0x[0-9a-f]+\(%rip\),(%r[a-z0-9]+)\s+# ([0-9a-f]+)", line)
        if m:
            addr = int(m.group(3), 16)
            regs[m.group(2)] = got.get(addr, 0) if m.group(1) == "mov" else addr
        else:
            # Register copies carry the target (`mov %r14,%r15 ; call *%r15`); any other
            # write to a register (incl. its 32-bit half) forgets what it held.
            m = re.search(r"\tmov\s+(%r[a-z0-9]+),(%r[a-z0-9]+)\s*$", line)
            if m:
                regs[m.group(2)] = regs.get(m.group(1), 0)
            else:
                m = re.search(r",(%[a-z0-9]+)\s*$", line)
                if m:
                    regs.pop(X86_FULL.get(m.group(1), re.sub(r"[dwb]$", "", m.group(1))), None)
        target = None
        m = re.search(r"\tcall\s+\*(%r[a-z0-9]+)\s*$", line)
        if m:
            target = regs.get(m.group(1))
        m = re.search(r"\tcall\s+\*0x[0-9a-f]+\(%rip\)\s+# ([0-9a-f]+)", line)
        if m:
            target = got.get(int(m.group(1), 16))
        if target in syms:
            line += f" <{syms[target]}>"
        if re.search(r"\t(ret|jmp)\b", line) or re.match(r"^[0-9a-f]+ <", line):
            regs = {} if re.match(r"^[0-9a-f]+ <", line) else regs
        out.append(line)
    return "\n".join(out)


def is_compare_call(insn: Insn) -> bool:
    return insn.mnemonic in ("bl", "call", "callq") and any(
        f"<{c}>" in insn.operands for c in COMPARE)


THUMB_FLAG_SETTERS = re.compile(r"^(cmp|cmn|tst|teq|[a-z]+s)(\.[wn])?$")
IMM = re.compile(r"^#-?(0x[0-9a-f]+|[0-9]+)$")


def thumb_regs(ops: str) -> list[str]:
    return [o.strip() for o in ops.split(";")[0].split("@")[0].split(",")]


def thumb_counted_loop(window: list[Insn], k: int) -> bool:
    """Whether the conditional branch window[k] is the back-edge of a loop whose exit depends
    only on an induction register: the flags come from `cmp R, #imm`, `subs R, #imm` or
    `adds/subs X, R, #imm`, and R is changed in the loop body only by adding or subtracting
    an immediate (a public trip count, not data)."""
    br = window[k]
    m = re.match(r"^([0-9a-f]+)\b", br.operands)
    if not m:
        return False
    target = int(m.group(1), 16)
    if target >= br.addr:
        return False
    body = [i for i in window[:k] if i.addr >= target]
    if not body or body[0].addr != target:
        return False
    setter = next((i for i in reversed(body) if THUMB_FLAG_SETTERS.match(i.mnemonic)), None)
    if setter is None:
        return False
    ops = thumb_regs(setter.operands)
    base = setter.mnemonic.split(".")[0]
    if base == "cmp" and len(ops) == 2 and IMM.match(ops[1]):
        reg = ops[0]
    elif base in ("subs", "adds") and len(ops) == 2 and IMM.match(ops[1]):
        reg = ops[0]
    elif base in ("subs", "adds") and len(ops) == 3 and IMM.match(ops[2]):
        reg = ops[1]
    else:
        return False
    for i in body:
        dst = thumb_regs(i.operands)
        if not dst or dst[0] != reg or i.mnemonic.split(".")[0] in ("cmp", "cmn", "tst", "teq", "str", "strb", "strh"):
            continue
        b = i.mnemonic.split(".")[0]
        step = dst[1:]
        if b in ("adds", "subs", "add", "sub") and (
            (len(step) == 1 and IMM.match(step[0])) or (len(step) == 2 and step[0] == reg and IMM.match(step[1]))):
            continue
        return False
    return True


def thumb_findings(window: list[Insn], notes: list[str]) -> list[Insn]:
    found = []
    it_left = 0
    for k, insn in enumerate(window):
        mn = insn.mnemonic
        predicated = it_left > 0
        if predicated:
            it_left -= 1
        if mn.startswith("it") and len(mn) <= 5 and set(mn[1:]) <= {"t", "e"}:
            it_left = len(mn) - 1
            continue
        base = mn.split(".")[0]
        if THUMB_COND.match(mn) and not predicated and thumb_counted_loop(window, k):
            notes.append(f"counted-loop back-edge (induction register only): {insn.text}")
        elif THUMB_COND.match(mn) or base in ("cbz", "cbnz", "tbb", "tbh"):
            found.append(insn)
        elif predicated and writes_pc(insn):
            found.append(insn)
    return found


def writes_pc(insn: Insn) -> bool:
    base = insn.mnemonic.split(".")[0]
    ops = insn.operands.split(";")[0].replace(" ", "")
    if base.startswith(("bx", "blx", "b")) and not base.startswith(("bic", "bfc", "bfi")):
        return True
    if base.startswith("pop") or base.startswith("ldm"):
        return "pc" in ops
    first = ops.split(",")[0]
    return first == "pc"


X86_FLAG_SETTERS = ("cmp", "add", "sub", "inc", "dec", "test", "and", "or", "xor")


def x86_counted_loop(window: list[Insn], k: int) -> bool:
    """As thumb_counted_loop, for x86-64 (AT&T operand order): flags from `cmp $imm, %R`,
    `add/sub $imm, %R`, `inc/dec %R`, and R changed in the body only by those."""
    br = window[k]
    m = re.match(r"^([0-9a-f]+)\b", br.operands)
    if not m:
        return False
    target = int(m.group(1), 16)
    body = [i for i in window[:k] if i.addr >= target]
    if target >= br.addr or not body or body[0].addr != target:
        return False
    setter = next((i for i in reversed(body) if i.mnemonic.rstrip("lqwb") in X86_FLAG_SETTERS), None)
    if setter is None:
        return False
    ops = [o.strip() for o in setter.operands.split("#")[0].split(",")]
    base = setter.mnemonic.rstrip("lqwb")
    if base in ("cmp", "add", "sub") and len(ops) == 2 and ops[0].startswith("$") and ops[1].startswith("%"):
        reg = ops[1]
    elif base in ("inc", "dec") and len(ops) == 1 and ops[0].startswith("%"):
        reg = ops[0]
    else:
        return False
    for i in body:
        o = [x.strip() for x in i.operands.split("#")[0].split(",")]
        if not o or o[-1] != reg or i.mnemonic.rstrip("lqwb") in ("cmp", "test"):
            continue
        b = i.mnemonic.rstrip("lqwb")
        if (b in ("add", "sub") and len(o) == 2 and o[0].startswith("$")) or (b in ("inc", "dec") and len(o) == 1):
            continue
        return False
    return True


def x86_findings(window: list[Insn], notes: list[str]) -> list[Insn]:
    found = []
    for k, i in enumerate(window):
        if not X86_COND.match(i.mnemonic):
            continue
        if x86_counted_loop(window, k):
            notes.append(f"counted-loop back-edge (induction register only): {i.text}")
        else:
            found.append(i)
    return found


def check_instance(inst: Instance, arch: str) -> tuple[list[str], list[Insn], list[str]]:
    """(problems, window, notes) for one instance."""
    calls = [k for k, i in enumerate(inst.insns) if is_compare_call(i)]
    problems = []
    if len(calls) >= 9:
        start, stop = calls[7], calls[8]
    elif len(calls) == 4:
        start, stop = calls[3], len(inst.insns) - 1
    else:
        return [f"{len(calls)} comparison calls (expected 4 or at least 9): structure not recognised"], [], []
    window = inst.insns[start:stop + 1]
    notes: list[str] = []
    findings = thumb_findings(window, notes) if arch == "m33" else x86_findings(window, notes)
    for f in findings:
        problems.append(f"conditional branch between the final comparison and the output stores: {f.text}")
    return problems, window, notes


def run(listing: str, arch: str, label: str) -> int:
    instances = parse_listing(listing)
    if not instances:
        print(f"FAIL {label}: no {DECRYPT} instance found")
        return 1
    failed = 0
    for inst in instances:
        problems, window, notes = check_instance(inst, arch)
        head = f"{label} {inst.name} @ {inst.addr:#x}"
        if problems:
            failed += 1
            print(f"FAIL {head}")
            for p in problems:
                print(f"     {p}")
        else:
            first, last = window[0].addr, window[-1].addr
            print(f"PASS {head}: window {first:#x}..{last:#x}, {len(window)} instructions, "
                  f"no conditional branch on data ({len(notes)} counted-loop back-edges)")
        for n in notes:
            print(f"     note: {n}")
    print(f"{label}: {len(instances) - failed} of {len(instances)} instances pass")
    return 1 if failed else 0


# ---- instances from DWARF (issue 31) ----------------------------------------------------

INNER = "5rblwe3cca13decrypt_inner"  # in both v0 (_R...) and legacy (_ZN...) mangled names
DIE = re.compile(r"^0x([0-9a-f]+):\s+DW_TAG_(\w+)")
ATTR = re.compile(r"^\s+DW_AT_(\w+)\s+\((.*)$")
RANGE = re.compile(r"\[0x([0-9a-f]+), 0x([0-9a-f]+)\)")
SELECTION_LINE = "*o = r ^ ((m ^ r) & mask_forward & mask_reverse);"


@dataclass
class Copy:
    """One concrete copy of decrypt_inner: its DIE, name and address ranges."""
    die: int
    tag: str
    name: str
    ranges: list[tuple[int, int]]

    @property
    def low(self) -> int:
        return min(a for a, _ in self.ranges)

    @property
    def high(self) -> int:
        return max(b for _, b in self.ranges)


def dwarf_copies(binary: str) -> list[Copy]:
    """Every concrete copy of decrypt_inner (or of its closure, when that is out of line and
    not inside a copy) in the binary's .debug_info, via llvm-dwarfdump (text, filtered)."""
    dump = subprocess.Popen(["llvm-dwarfdump", "--debug-info", binary], stdout=subprocess.PIPE)
    # Only the DIEs that name decrypt_inner and their neighbourhood (a fixed-string grep is
    # much faster than Python over the host binary's ~1 GB dump): the tag line comes at most
    # a few lines before the name, the address ranges right after it.
    grep = subprocess.Popen(["grep", "-F", "-B6", "-A60", INNER], stdin=dump.stdout,
                            stdout=subprocess.PIPE, text=True, errors="replace")
    assert dump.stdout is not None
    dump.stdout.close()
    keep = re.compile(r"^--$|DW_TAG_|DW_AT_(abstract_origin|linkage_name|name|low_pc|high_pc|ranges)\b|^\s+\[0x")
    names: dict[int, str] = {}  # abstract DIE offset -> readable name (for decrypt_inner DIEs)
    dies = []  # (offset, tag, origin-or-linkage, ranges)
    cur = None
    in_ranges = False
    assert grep.stdout is not None
    for line in grep.stdout:
        if not keep.search(line):
            continue
        if line.startswith("--"):  # a gap between grep's excerpts: no DIE spans it
            if cur:
                dies.append(cur)
            cur, in_ranges = None, False
            continue
        m = DIE.match(line)
        if m:
            if cur:
                dies.append(cur)
            cur = {"off": int(m.group(1), 16), "tag": m.group(2), "link": "", "name": "",
                   "origin": None, "low": None, "high": None, "ranges": []}
            in_ranges = False
            continue
        if cur is None:
            continue
        m = ATTR.match(line)
        if m:
            key, val = m.group(1), m.group(2)
            in_ranges = key == "ranges"
            if key == "abstract_origin":
                mo = re.match(r'0x([0-9a-f]+) "(.*)"\)', val)
                if mo:
                    cur["origin"] = int(mo.group(1), 16)
                    cur["link"] = mo.group(2)
            elif key == "linkage_name":
                cur["link"] = val.strip('()"')
            elif key == "name":
                cur["name"] = val.strip('()"')
            elif key == "low_pc":
                cur["low"] = int(val.strip("()"), 16)
            elif key == "high_pc":
                cur["high"] = int(val.strip("()"), 16)
            elif key == "ranges":
                cur["ranges"] += [(int(a, 16), int(b, 16)) for a, b in RANGE.findall(val)]
            continue
        if in_ranges:
            cur["ranges"] += [(int(a, 16), int(b, 16)) for a, b in RANGE.findall(line)]
    if cur:
        dies.append(cur)
    grep.wait()
    if dump.wait() != 0:
        raise RuntimeError(f"llvm-dwarfdump failed on {binary}")
    for d in dies:
        if INNER in d["link"] and d["origin"] is None and d["name"]:
            names[d["off"]] = d["name"]
    copies, closures = [], []
    for d in dies:
        if d["tag"] not in ("subprogram", "inlined_subroutine") or INNER not in d["link"]:
            continue
        ranges = d["ranges"] or ([(d["low"], d["high"])] if d["low"] is not None and d["high"] else [])
        ranges = [(a, b) for a, b in ranges if b > a and a != 0]
        if not ranges:
            continue  # an abstract (inlined-only) DIE: no code of its own
        name = names.get(d["origin"], d["name"] or d["link"])
        c = Copy(d["off"], d["tag"], name, ranges)
        (closures if "closure" in name or d["link"].startswith("_RNC") else copies).append(c)
    for c in closures:
        if not any(o.low <= c.low and c.high <= o.high for o in copies):
            copies.append(c)  # an out-of-line closure: the body is checked where it is
    return sorted(copies, key=lambda c: c.low)


def selection_addresses(binary: str) -> set[int]:
    """Addresses that the line table attributes to the selection line of cca.rs."""
    line_no = None
    here = __file__.rsplit("/security/", 1)[0]
    try:
        with open(f"{here}/crates/rblwe/src/cca.rs") as f:
            for k, text in enumerate(f, 1):
                if SELECTION_LINE in text:
                    line_no = k
    except OSError:
        return set()
    if line_no is None:
        return set()
    out = subprocess.run(["llvm-dwarfdump", "--debug-line", binary], capture_output=True,
                         text=True, errors="replace", check=True).stdout
    # Rows: "0x<addr> <line> <col> <file> ..." under a file-name table per sequence.
    files: dict[int, str] = {}
    addrs = set()
    cur_file = None
    for line in out.splitlines():
        m = re.match(r"^file_names\[\s*(\d+)\]:", line)
        if m:
            cur_file = int(m.group(1))
            continue
        m = re.match(r'^\s+name: "(.*)"', line)
        if m and cur_file is not None:
            files[cur_file] = m.group(1)
            continue
        if line.startswith("debug_line["):
            files = {}
            continue
        m = re.match(r"^0x([0-9a-f]{8,16})\s+(\d+)\s+\d+\s+(\d+)\s", line)
        if m and int(m.group(2)) == line_no and files.get(int(m.group(3)), "").endswith("cca.rs"):
            addrs.add(int(m.group(1), 16))
    return addrs


def all_insns(listing: str) -> tuple[list[Insn], dict[int, str]]:
    """Every instruction of a listing in address order, and each address's function."""
    insns, owner = [], {}
    func = "?"
    for line in listing.splitlines():
        m = FUNC.match(line.strip())
        if m:
            func = m.group(2)
            continue
        m = LINE.match(line)
        if m and ":" in line:
            i = Insn(int(m.group(1), 16), m.group(2), m.group(3).strip(), line.strip())
            insns.append(i)
            owner[i.addr] = func
    insns.sort(key=lambda i: i.addr)
    return insns, owner


def tail_branches(insns: list[Insn], start: int, stop: int) -> list[str]:
    """Conditional branches in [start, stop) with the instructions that set their flags and
    load their operand (for the notes on the code after an unhardened copy)."""
    out = []
    seq = [i for i in insns if start <= i.addr < stop]
    for k, i in enumerate(seq):
        if THUMB_COND.match(i.mnemonic) or X86_COND.match(i.mnemonic) or i.mnemonic.split(".")[0] in ("cbz", "cbnz"):
            ctx = " ; ".join(x.text.split(":", 1)[1].strip().replace("\t", " ") for x in seq[max(0, k - 3):k + 1])
            out.append(f"{i.addr:#x}: {ctx}")
    return out


def run_dwarf(binary: str, arch: str, label: str, none_expected: bool = False) -> int:
    """Checks every decrypt_inner copy the DWARF of `binary` names (see the module doc).
    With `none_expected` (an image without CCA2, e.g. a CPA-only size probe), there must be
    no copy and the line table must place the selection line nowhere."""
    copies = dwarf_copies(binary)
    if none_expected:
        sel = selection_addresses(binary)
        ok = not copies and not sel
        print(f"{'PASS' if ok else 'FAIL'} {label}: {len(copies)} copies of rblwe::cca::decrypt_inner in the DWARF "
              f"and {len(sel)} line-table addresses of the selection line (none expected: no CCA2 in this image)")
        return 0 if ok else 1
    if arch == "m33":
        listing = disassemble("arm-none-eabi-objdump", binary, spans_of(copies))
    else:
        listing = resolve_x86_calls(binary, disassemble("objdump", binary, spans_of(copies)))
    insns, owner = all_insns(listing)
    if not copies:
        print(f"FAIL {label}: no copy of rblwe::cca::decrypt_inner in the DWARF")
        return 1
    failed = 0
    covered: set[int] = set()
    for c in copies:
        body = [i for i in insns if c.low <= i.addr < c.high]
        inst = Instance(c.name, c.low, body)
        where = owner.get(c.low, "?")
        kind = "inlined in" if c.tag == "inlined_subroutine" else "out of line:"
        head = f"{label} {c.name} {kind} {where} @ {c.low:#x}"
        problems, window, notes = check_instance(inst, arch)
        covered.update(i.addr for i in body)
        if problems:
            failed += 1
            print(f"FAIL {head}")
            for p in problems:
                print(f"     {p}")
        else:
            print(f"PASS {head}: window {window[0].addr:#x}..{window[-1].addr:#x}, {len(window)} "
                  f"instructions, no conditional branch on data ({len(notes)} counted-loop back-edges)")
            calls = sum(1 for i in body if is_compare_call(i))
            if calls == 4:
                # Unhardened: what follows the copy in its function, up to the function's end.
                end = next((i.addr for i in insns if i.addr >= c.high and owner.get(i.addr) != where), c.high + 0x200)
                for t in tail_branches(insns, c.high, min(end, c.high + 0x200))[:3]:
                    print(f"     note: conditional branch after the copy, outside the window: {t}")
        for n in notes:
            print(f"     note: {n}")
    sel = selection_addresses(binary)
    missed = sorted(a for a in sel if a not in covered and not any(c.low <= a < c.high for c in copies))
    if missed:
        failed += 1
        print(f"FAIL {label}: the line table puts the selection line at {len(missed)} address(es) "
              f"outside every checked copy, first {missed[0]:#x} ({owner.get(missed[0], '?')})")
    else:
        print(f"{label}: line table: {len(sel)} address(es) of the selection line, all inside checked copies")
    print(f"{label}: {len(copies) - failed} of {len(copies)} copies pass")
    return 1 if failed else 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--m33", action="append", default=[],
                    help="Arm (Thumb-2) ELF, M33 or M55 (arm-none-eabi-objdump); LABEL=PATH or PATH; repeatable")
    ap.add_argument("--host", action="append", default=[], help="x86-64 host binary (objdump); LABEL=PATH or PATH")
    ap.add_argument("--m33-none", action="append", default=[],
                    help="Arm ELF that must hold no copy (no CCA2 in it); LABEL=PATH or PATH; repeatable")
    ap.add_argument("--listing", help="a saved objdump -d -C --no-show-raw-insn listing")
    ap.add_argument("--arch", choices=("m33", "x86"))
    a = ap.parse_args()
    status = 0
    if a.listing:
        if not a.arch:
            ap.error("--listing needs --arch")
        with open(a.listing) as f:
            status |= run(f.read(), a.arch, a.listing)
    for spec in a.m33:
        label, _, path = spec.rpartition("=")
        status |= run_dwarf(path, "m33", f"M33 {label or path.rsplit('/', 1)[-1]}")
    for spec in a.m33_none:
        label, _, path = spec.rpartition("=")
        status |= run_dwarf(path, "m33", f"M33 {label or path.rsplit('/', 1)[-1]}", none_expected=True)
    for spec in a.host:
        label, _, path = spec.rpartition("=")
        status |= run_dwarf(path, "x86", f"host {label or path.rsplit('/', 1)[-1]}")
    if not (a.listing or a.m33 or a.host or a.m33_none):
        ap.error("nothing to check")
    return status


if __name__ == "__main__":
    sys.exit(main())
