"""Static constant-time audit of a linked Thumb-2 (Cortex-M33 / M55 + MVE) ELF.

Disassembly: `arm-none-eabi-objdump -d -C -l --inlines -m armv8.1-m.main` (MVE decoded, and
every instruction carries its source line and inlining chain from the DWARF of the release
build, which is `debug = true`). The secret path is the CALL GRAPH walked from the roots of an
image (direct `bl`/`b` to a symbol); every function reached is audited with the rules below.

  R1 variable latency: `sdiv`/`udiv`, `vdiv`/`vsqrt`, and any call (or tail call) of a
     division / floating-point division or square-root helper (`__aeabi_*div*`, ...).
  R2 control flow: every conditional branch (`b<cond>`, `cbz`/`cbnz`, a forward `wls`), every
     pc write inside an IT block (`bxeq lr`, `popne {..,pc}`, `moveq pc, ..`), every table
     branch (`tbb`/`tbh`: an indexed branch) and every indirect branch or call (`bx rN`, `blx
     rN`, `mov pc, rN`, `ldr pc, ..`; `bx lr` / `pop {..,pc}` outside IT blocks are returns)
     and every call of an early-exit compare (`memcmp`, `bcmp`: a finding at the call site),
     unless it is one of the loop shapes (back-edge, loop exit, loop guard) or a bounds check:
       back-edge     a conditional branch to an earlier address (or `le`/`letp`);
       loop exit     a forward branch to the instruction after an unconditional `b L` with L
                     at or before the exiting branch;
       loop guard    a forward branch to the instruction after a conditional back-edge whose
                     target lies after the guard (the zero-trip test of that loop);
       bounds check  a forward branch to a block that calls one of Rust's compiler-inserted
                     check routines (`panic_bounds_check`, `slice_*_fail`, `panic_const_*`:
                     index, overflow and division-by-zero checks) before any other branch.
                     Explicit `panic!`/`unwrap`/`expect` paths are not accepted.
  R3 indexed load: a load whose address is base + register (`ldr* Rt, [Rn, Rm{, lsl #k}]`,
     `pld [Rn, Rm]`), a load through a register computed in the same basic block by a
     register + register `add` (`add.w r0, r0, r1, lsl #2 ; ldrb r0, [r0, #3]`), or an MVE
     gather (`vldr* Qd, [Rn, Qm]`, `[Qm, #imm]`). A register that holds an immediate since its
     last definition in the block (`mov`/`movw` #imm) is a constant offset, not an index.
  R4 indexed store: the same address forms for stores (`str*`, `strd`), and MVE scatters
     (`vstr* Qd, [Rn, Qm]`). For R3 and R4, a load or store inside an IT block (executed or
     not depending on the flags) is also a finding: its address trace depends on the condition.
  R5 loop bound: the condition of every branch accepted as loop control must be a loop
     counter: for a back-edge or loop exit, the flags come from a compare (or a flag-setting
     add/sub with an immediate) of an induction register of the loop (every definition of it
     in the loop is `add`/`sub` of an immediate or of a loop-invariant register, or address
     write-back) against an immediate or a loop-invariant register; `cbz`/`cbnz` test an
     induction register. For a loop guard, the tested registers must feed the loop's own
     bound (its back-edge compare, directly or through the moves/adds between guard and
     loop). `le`/`letp`/`wls` are the hardware loop counter (`lr`, set by `dls`/`wls` from
     the count) and count as loop control. A loop whose trip count is, say, the bit length of
     a secret (`lsrs r0, r0, #1 ; bne`) fails R5.

Findings are attributed to a source location: the innermost frame of the inlining chain that
lies in this repository (crates/, firmware/), else the library crate (core, compiler_builtins,
aes, ...). What this does NOT prove: that a loop-invariant bound, a register offset the review
accepted, or a hardware loop count holds a public value (the reviews give the reasons); it
has no data-flow from the secrets, so the reviewed findings are public-by-argument.
"""
import re
import subprocess

COND = r"(eq|ne|cs|cc|hs|lo|mi|pl|vs|vc|hi|ls|ge|lt|gt|le|al)"
COND_BRANCH = re.compile(r"^b" + COND + r"(\.[nw])?$")
UNCOND_BRANCH = re.compile(r"^b(\.[nw])?$")
CORE_REGS = {f"r{i}" for i in range(13)} | {"sb", "sl", "fp", "ip", "sp", "lr", "pc"}
ALIAS = {"r9": "sb", "r10": "sl", "r11": "fp", "r12": "ip", "r13": "sp", "r14": "lr", "r15": "pc"}
DIV_HELPER = re.compile(r"__aeabi_[iu]?l?div|__aeabi_[iu]?l?divmod|__aeabi_[fd]div|__u?divsi3|__u?modsi3"
                        r"|__udivmod|__divmod|__u?divdi3|__u?moddi3|__div[sd]f3|sqrtf?\b")
# Comparison helpers that return at the first difference (their timing depends on the data).
EARLY_EXIT_HELPER = re.compile(r"^(memcmp|bcmp|strcmp|strncmp)$")
# Rust's compiler-inserted checks (index, slice range, arithmetic overflow, division by zero).
CHECK_CALL = re.compile(r"panic_bounds_check|slice_(start_|end_)?index_(len_|order_)?fail|slice_index_fail"
                        r"|panic_const_|str_index_overflow_fail")
FLAG_ARITH = {"adds", "subs", "rsbs", "adcs", "sbcs", "movs", "mvns", "lsls", "lsrs", "asrs", "rors",
              "ands", "orrs", "eors", "bics", "orns", "muls", "negs"}
NO_DEF = ("str", "cmp", "cmn", "tst", "teq", "b", "cbz", "cbnz", "it", "nop", "dsb", "dmb", "isb",
          "bkpt", "push", "pld", "vstr", "vst", "vcmp", "le", "letp", "svc", "wfi", "wfe", "sev", "cps",
          "udf", "vpst", "vpt", "vcmp", "vmsr", "msr", "stm", "vpush", "lctp", "csdb", "ssbb", "pssbb")
RULES = ("R1", "R2", "R3", "R4", "R5")


def reg(x):
    x = x.strip().lower()
    return ALIAS.get(x, x)


def is_core(x):
    return reg(x) in CORE_REGS


class Insn:
    __slots__ = ("addr", "mnem", "ops", "loc", "where", "func")

    def __init__(self, addr, mnem, ops, loc, where):
        self.addr, self.mnem, self.ops, self.loc, self.where = addr, mnem, ops.split(";")[0].split("@")[0].strip(), loc, where

    @property
    def base(self):
        return self.mnem.split(".")[0]


def attribute(chain):
    """Innermost repo frame (crates/..., firmware/...), else the library crate of the innermost."""
    for path in chain:
        m = re.search(r"/((?:crates|firmware)/[^:]+):(\d+)", path)
        if m:
            return m.group(1), f"{m.group(1)}:{m.group(2)}"
    if chain:
        p = chain[0]
        m = re.search(r"/library/([\w\-]+)/", p) or re.search(r"/([A-Za-z0-9_\-]+?)-\d+\.\d+\.\d+[^/]*/src/", p)
        name = m.group(1) if m else p.rsplit("/", 1)[-1].split(":")[0]
        return name, f"{name}:{p.rsplit('/', 1)[-1]}"
    return "?", "?"


def disassemble(elf):
    """name -> list of copies; each copy a list of Insn. Also start address -> name."""
    out = subprocess.run(
        ["arm-none-eabi-objdump", "-d", "-C", "-l", "--inlines", "-m", "armv8.1-m.main", "--no-show-raw-insn", elf],
        check=True, capture_output=True, text=True).stdout
    funcs, starts = {}, {}
    current = None
    inner, rest, last_was_insn = [], [], False
    for line in out.splitlines():
        m = re.match(r"^([0-9a-f]+) <(.*)>:$", line)
        if m:
            current = []
            funcs.setdefault(m.group(2), []).append(current)
            starts[int(m.group(1), 16)] = m.group(2)
            inner, rest, last_was_insn = [], [], False
            continue
        m = re.match(r"^\s*([0-9a-f]+):\t(\S+)\s*(.*)$", line)
        if m and current is not None:
            chain = inner + rest
            current.append(Insn(int(m.group(1), 16), m.group(2), m.group(3), chain, None))
            last_was_insn = True
            continue
        if line.startswith("inlined by "):
            if last_was_insn:
                rest = []
            rest.append(line[len("inlined by "):].split(" (")[0])
            last_was_insn = False
            continue
        if re.match(r"^/\S+:\d+", line):
            inner, rest, last_was_insn = [line.split(" (")[0]], [], False
    for copies in funcs.values():
        for c in copies:
            for i in c:
                i.where = attribute(i.loc)
    return funcs, starts


def branch_target(ops):
    m = re.match(r"^(?:[\w.]+, )*([0-9a-f]+)(?: <(.*)>)?$", ops.strip())
    return (int(m.group(1), 16), m.group(2)) if m else (None, None)


def mem_operand(ops):
    m = re.search(r"\[([^\]]*)\](!?)(?:, (.*))?$", ops)
    if not m:
        return None
    parts = [p.strip() for p in m.group(1).split(",")]
    return parts, m.group(2) == "!", m.group(3)


def defs(insn):
    """(registers defined, {reg: kind}) kind: 'imm' (+/- immediate), ('reg', r) (+/- register), None."""
    b, ops = insn.base, insn.ops
    d, kinds = set(), {}
    mo = mem_operand(ops)
    if mo:
        parts, pre_wb, post = mo
        if pre_wb or post is not None:
            rn = reg(parts[0])
            if is_core(rn):
                d.add(rn)
                if post is not None and is_core(post.split(",")[0]):
                    kinds[rn] = ("reg", reg(post.split(",")[0]))
                else:
                    kinds[rn] = "imm"
    if b in ("bl", "blx"):
        d |= {"r0", "r1", "r2", "r3", "ip", "lr"}
        return d, kinds
    if b.startswith(("ldm", "pop", "vldm", "stm", "vstm", "push", "vpush", "vpop")):
        m = re.match(r"^(\w+)!", ops)
        if m:
            d.add(reg(m.group(1)))
            kinds[reg(m.group(1))] = "imm"
        if b.startswith(("ldm", "pop")):
            lst = re.search(r"\{([^}]*)\}", ops)
            if lst:
                for r in lst.group(1).split(","):
                    r = r.strip()
                    if "-" in r:
                        lo, hi = r.split("-")
                        for k in range(int(lo[1:]), int(hi[1:]) + 1):
                            d.add(reg(f"r{k}"))
                    elif is_core(r):
                        d.add(reg(r))
        if b.startswith(("push", "pop", "vpush", "vpop")):
            d.add("sp")
        return d, kinds
    if b.startswith(NO_DEF) and not b.startswith(("bic", "bfc", "bfi")):
        if b in ("le", "letp", "wls", "wlstp"):
            d.add("lr")
        return d, kinds
    operands = [o.strip() for o in re.split(r",\s*(?![^{\[]*[}\]])", ops) if o.strip()]
    if not operands:
        return d, kinds
    if b in ("umull", "smull", "umlal", "smlal", "umaal", "smlald", "smlsld", "ldrd", "ldrexd", "vmov", "ldaexd") \
            and len(operands) >= 2 and is_core(operands[0]) and is_core(operands[1]):
        d |= {reg(operands[0]), reg(operands[1])}
        return d, kinds
    if is_core(operands[0]):
        r = reg(operands[0])
        d.add(r)
        if b in ("add", "adds", "sub", "subs", "addw", "subw"):
            srcs = operands[1:]
            if len(srcs) == 1 and srcs[0].startswith("#"):
                kinds[r] = "imm"
            elif len(srcs) == 2 and reg(srcs[0]) == r and srcs[1].startswith("#"):
                kinds[r] = "imm"
            elif len(srcs) >= 1 and is_core(srcs[-1] if len(srcs) == 1 else srcs[1]) and \
                    (len(srcs) == 1 or reg(srcs[0]) == r):
                kinds[r] = ("reg", reg(srcs[-1] if len(srcs) == 1 else srcs[1]))
    return d, kinds




def slot_of(x):
    """Stack slot of `ldr/str Rt, [sp, #k]` (a spilled variable), else None."""
    m = re.search(r"\[sp(?:, #(\d+))?\]$", x.ops)
    if m and x.base in ("ldr", "str"):
        return int(m.group(1) or 0)
    return None


class Loop:
    """A loop body in address order (for a back-edge at the end: target .. branch)."""

    def __init__(self, body):
        self.body = body
        self.defined = {}
        for i in body:
            ds, kinds = defs(i)
            for r in ds:
                self.defined.setdefault(r, []).append(kinds.get(r))

    def trace(self, pos, r):
        """Where the value of r just before body[pos] comes from, walking back through
        counter steps and moves: (("reg", r0) = r0 at the loop head | ("slot", k) = the stack
        slot k at the loop head | ("const",) | None = something else, stepped?)."""
        stepped = False
        for k in range(pos - 1, -1, -1):
            x = self.body[k]
            ds, kinds = defs(x)
            if r not in ds:
                continue
            kind = kinds.get(r)
            ops = [o.strip() for o in x.ops.split(",")]
            if kind == "imm" and (x.base in ("add", "adds", "sub", "subs", "addw", "subw") or mem_operand(x.ops)):
                if x.base in ("add", "adds", "sub", "subs", "addw", "subw") and len(ops) == 3 and reg(ops[1]) != r:
                    r = reg(ops[1])  # r = other + #imm: follow the other register
                stepped = True
                continue
            if isinstance(kind, tuple) and self.invariant(kind[1]):
                stepped = True
                continue
            slot = slot_of(x)
            if x.base == "ldr" and slot is not None:
                return ("slot", slot), stepped
            if x.base == "ldr" and "[pc" in x.ops or x.base in ("movw", "movt") or \
                    (x.base in ("mov", "movs", "mov.w") and len(ops) == 2 and ops[1].startswith("#")):
                return ("const",), stepped
            if x.base in ("mov", "movs") and len(ops) == 2 and is_core(ops[1]):
                r = reg(ops[1])
                continue
            return None, stepped
        return ("reg", r), stepped

    def slot_stores(self, slot):
        return [(k, reg(x.ops.split(",")[0])) for k, x in enumerate(self.body)
                if x.base == "str" and slot_of(x) == slot]

    def invariant(self, r):
        return r not in self.defined

    def classify(self, pos, r):
        """'induction', 'invariant' or None for register r read at body[pos]."""
        origin, stepped = self.trace(pos, r)
        if origin is None:
            return None
        if origin[0] == "const":
            return "invariant"
        if origin[0] == "reg":
            r0 = origin[1]
            if r0 not in self.defined:
                return "induction" if stepped else "invariant"
            end, end_stepped = self.trace(len(self.body), r0)
            return "induction" if end == origin and (end_stepped or stepped) else None
        stores = self.slot_stores(origin[1])
        if not stores:
            return "induction" if stepped else "invariant"
        any_step = stepped
        for k, rs in stores:
            o, st = self.trace(k, rs)
            if o != origin:
                return None
            any_step = any_step or st
        return "induction" if any_step else None


def flag_setter(insns, i, lo):
    for k in range(i - 1, lo - 1, -1):
        b = insns[k].base
        if b in ("cmp", "cmn", "tst", "teq") or b in FLAG_ARITH or b.startswith(("vcmp", "vmrs")):
            return insns[k]
        if b in ("bl", "blx"):
            return None
    return None


def condition_regs(insn):
    """Registers the flag setter compares and whether its form can be a counter compare."""
    ops = [o.strip() for o in insn.ops.split(",")]
    b = insn.base
    if b in ("cmp", "cmn"):
        return [reg(o) for o in ops if is_core(o)], True
    if b in ("adds", "subs"):
        # flags of Rd = Rn +/- #imm: a counter step (Rd is the counter)
        if ops[-1].startswith("#"):
            return [reg(ops[0])], True
        return [reg(o) for o in ops if is_core(o)], True
    return [reg(o) for o in ops if is_core(o)], False


def counter_condition(insns, i, loop_start, loop_end):
    """R5: is the branch at insns[i] controlled by an induction register of the loop
    insns[loop_start..loop_end]? (the branch lies inside it)"""
    loop = Loop(insns[loop_start:loop_end + 1])
    br = insns[i]
    pos = i - loop_start
    if br.base in ("cbz", "cbnz"):
        return loop.classify(pos, reg(br.ops.split(",")[0])) == "induction"
    setter = flag_setter(insns, i, loop_start)
    if setter is None:
        return False
    spos = insns.index(setter) - loop_start
    regs, ok = condition_regs(setter)
    if not ok or not regs:
        return False
    if setter.base in ("adds", "subs") and regs and defs(setter)[1].get(regs[0]) == "imm":
        # the setter is the counter step itself: classify the result after it
        kinds = [loop.classify(spos + 1, regs[0])]
    else:
        kinds = [loop.classify(spos, r) for r in regs]
    return "induction" in kinds and all(k in ("induction", "invariant") for k in kinds)


def audit_copy(insns, starts):
    """Returns (findings, callees). A finding is (rule, insn, text)."""
    findings, callees = [], set()
    index = {x.addr: k for k, x in enumerate(insns)}
    targets = set()
    for x in insns:
        if x.base in ("b", "bl", "cbz", "cbnz", "le", "letp", "wls", "wlstp") or COND_BRANCH.match(x.mnem):
            t, _ = branch_target(x.ops)
            if t is not None:
                targets.add(t)
    constant, indexed = set(), set()
    it_left = 0
    lo = insns[0].addr if insns else 0
    hi = insns[-1].addr if insns else 0

    def add(rule, x, text):
        findings.append((rule, x, f"{rule} {text} at {x.addr:x}: {x.mnem} {x.ops}"))

    for k, x in enumerate(insns):
        if x.addr in targets:
            constant.clear()
            indexed.clear()
        b, ops = x.base, x.ops
        in_it = it_left > 0
        if in_it:
            it_left -= 1
        # calls and tail calls: walk the callee (the graph), R1 for division helpers
        if b in ("bl", "b", "blx") and not ops.startswith(("r", "ip", "lr", "sb", "sl", "fp")):
            t, sym = branch_target(ops)
            if t is not None and (b != "b" or t < lo or t > hi):
                name = starts.get(t)
                if name is not None and "+0x" not in (sym or ""):
                    if DIV_HELPER.search(name):
                        add("R1", x, "call of a variable-latency helper")
                    if EARLY_EXIT_HELPER.search(name):
                        add("R2", x, "call of an early-exit compare helper")
                    callees.add(name)
        # R1
        if b in ("sdiv", "udiv") or b.startswith(("vdiv", "vsqrt")):
            add("R1", x, "variable-latency instruction")
        # R2: indirect branches, table branches, IT-block pc writes
        if b in ("tbb", "tbh"):
            add("R2", x, "table branch")
        elif b.startswith(("bx", "blx")) and re.match(r"^(r\d+|ip|sb|sl|fp|lr)$", ops):
            if reg(ops) != "lr" or in_it or b not in ("bx",):
                add("R2", x, "indirect or conditional branch/return")
        elif (b.startswith("pop") and "pc" in ops) or (b.startswith("ldm") and "pc" in ops):
            if in_it:
                add("R2", x, "conditional return (pc write in IT block)")
        elif ops.split(",")[0].strip() == "pc" and not b.startswith(("cmp", "tst", "str", "push")):
            add("R2", x, "pc write" + (" in IT block" if in_it else ""))
        elif in_it and (b.startswith("b") and not b.startswith(("bic", "bfc", "bfi"))):
            add("R2", x, "branch in IT block")
        # R3/R4: addressing
        mo = mem_operand(ops)
        is_load = b.startswith(("ldr", "ldrex", "lda", "pld", "vldr", "vld")) and not b.startswith("ldm")
        is_store = b.startswith(("str", "strex", "stl", "vstr", "vst")) and not b.startswith("stm")
        if mo and (is_load or is_store) and b not in ("tbb", "tbh"):
            parts, _, post = mo
            rule = "R3" if is_load else "R4"
            what = "load" if is_load else "store"
            if in_it:
                add(rule, x, f"predicated {what} in an IT block (executed or not by the flags)")
            elif any(re.match(r"^q\d+$", p) for p in parts):
                add(rule, x, "MVE gather" if is_load else "MVE scatter")
            elif len(parts) >= 2 and is_core(parts[1]) and reg(parts[0]) != "pc":
                if reg(parts[1]) not in constant:
                    add(rule, x, f"register-indexed {what}")
            elif reg(parts[0]) in indexed:
                add(rule, x, f"{what} through a register+register address")
        # track block-local facts (after the checks above, which use the state before x)
        ds, kinds = defs(x)
        operands = [o.strip() for o in ops.split(",")]
        for r in ds:
            constant.discard(r)
            indexed.discard(r)
        if b in ("mov", "movs", "movw") and len(operands) == 2 and operands[1].startswith("#"):
            constant.add(reg(operands[0]))
        if b in ("add", "add.w", "adds") or x.mnem in ("add.w", "adds.w"):
            regs3 = [o.split(" ")[0] for o in operands]
            if len(regs3) >= 2 and all(is_core(r) for r in regs3[:3]) and not {"sp", "pc"} & {reg(r) for r in regs3}:
                srcs = [reg(r) for r in (regs3[1:3] if len(regs3) >= 3 else regs3[:2])]
                if not all(s in constant for s in srcs):
                    indexed.add(reg(regs3[0]))
        if re.match(r"^it[te]*$", x.mnem) or re.match(r"^it[te]*$", b):
            it_left = len(b) - 1
            continue
        # R2/R5: conditional branches
        cond = COND_BRANCH.match(x.mnem) or b in ("cbz", "cbnz", "wls", "wlstp", "le", "letp")
        if not cond or in_it:
            continue
        if b in ("le", "letp", "wls", "wlstp"):
            continue  # hardware loop control (lr)
        target, sym = branch_target(ops)
        if target is None:
            add("R2", x, "unresolved conditional branch")
            continue
        if target < lo or target > hi:
            add("R2", x, "conditional tail call")
            continue
        if target <= x.addr:  # back-edge
            j = index.get(target)
            if j is None or not counter_condition(insns, k, j, k):
                add("R5", x, "loop back-edge not controlled by a counter")
            continue
        j = index.get(target)
        if j is not None and j > 0:
            prev = insns[j - 1]
            pt, _ = branch_target(prev.ops) if (UNCOND_BRANCH.match(prev.mnem) or COND_BRANCH.match(prev.mnem)) else (None, None)
            if UNCOND_BRANCH.match(prev.mnem) and pt is not None and pt <= x.addr and pt in index:
                if not counter_condition(insns, k, index[pt], j - 1):
                    add("R5", x, "loop exit not controlled by a counter")
                continue
            if COND_BRANCH.match(prev.mnem) and pt is not None and x.addr < pt <= prev.addr and pt in index:
                if not guard_feeds_bound(insns, k, index[pt], j - 1):
                    add("R5", x, "loop guard that does not test the loop's bound")
                continue
        if j is not None:
            ok = False
            for y in insns[j:j + 12]:
                yb = y.base
                if yb in ("bl", "blx", "b") and CHECK_CALL.search(y.ops):
                    ok = True
                    break
                if yb in ("bl", "blx", "bx", "pop", "b", "cbz", "cbnz", "tbb", "tbh") or COND_BRANCH.match(y.mnem):
                    break
            if ok:
                continue
        add("R2", x, "conditional branch")
    return findings, callees


def guard_feeds_bound(insns, g, start, back):
    """Loop guard at g for the loop insns[start..back]: do the registers it tests feed the
    back-edge compare (directly, or through definitions between the guard and the loop)?"""
    loop = Loop(insns[start:back + 1])
    br = insns[back]
    if br.base in ("cbz", "cbnz"):
        bound = {reg(br.ops.split(",")[0])}
    else:
        s = flag_setter(insns, back, start)
        if s is None:
            return False
        bound = set(condition_regs(s)[0])
    # registers that define a bound register before the loop (walking back from the loop start)
    for k in range(start - 1, g, -1):
        ds, _ = defs(insns[k])
        if ds & bound:
            bound |= {reg(r) for r in re.findall(r"\b(r\d+|sb|sl|fp|ip|lr)\b", insns[k].ops.split(",", 1)[-1])}
    # and definitions inside the loop of bound registers from other registers (counter = count - i)
    for y in loop.body:
        ds, _ = defs(y)
        if ds & bound and y.base.startswith(("add", "sub", "mov")):
            bound |= {reg(r) for r in re.findall(r"\b(r\d+|sb|sl|fp|ip|lr)\b", y.ops.split(",", 1)[-1])}
    x = insns[g]
    if x.base in ("cbz", "cbnz"):
        tested = {reg(x.ops.split(",")[0])}
    else:
        s = flag_setter(insns, g, 0)
        if s is None:
            return False
        regs, ok = condition_regs(s)
        if not ok:
            return False
        tested = set(regs)
    return bool(tested) and tested <= bound


def walk(funcs, starts, roots, stop):
    """Functions reachable from roots (regexes on demangled names), not entering `stop`."""
    found_roots, missing = [], []
    for pat in roots:
        hits = [n for n in funcs if re.fullmatch(pat, n)]
        if not hits:
            missing.append(pat)
        found_roots += hits
    seen, order, stack = set(), [], list(found_roots)
    results = {}
    while stack:
        name = stack.pop()
        if name in seen:
            continue
        seen.add(name)
        if any(re.search(s, name) for s in stop):
            continue
        order.append(name)
        allf, allc = [], set()
        for copy in funcs.get(name, []):
            f, c = audit_copy(copy, starts)
            allf += f
            allc |= c
        results[name] = (allf, sum(len(c) for c in funcs.get(name, [])))
        stack.extend(sorted(allc - seen))
    return found_roots, missing, order, results
