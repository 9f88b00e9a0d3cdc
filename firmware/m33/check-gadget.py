#!/usr/bin/env python3
"""Binary check of the masked decoder's ISW AND gadget in the linked firmware ELF.

The paper found GCC factoring a C masked-AND gadget so that one instruction computed
b0 XOR b1, recombining a secret from its two shares. rblwe's Cortex-M33 gadget is
hand-written assembly (`rblwe_isw_and`); this script checks, on the linked binary, that:

1. `rblwe_isw_and` exists, has no branch other than its final `bx lr`, and touches memory
   only to fetch its fifth argument (the random mask) and to save/restore r4-r5;
2. no instruction produces a value that depends on both shares of the same input
   (x0 and x1, or y0 and y1) unless the fresh random mask r is already folded into it
   (a register-level dependency ("taint") analysis: inputs r0=x0, r1=x1, r2=y0, r3=y1,
   [sp]=r, per the AAPCS signature in crates/rblwe/src/masked.rs);
3. the masked decoder `rblwe::masked::a2b_msb` calls the assembly decoder step
   `rblwe_a2b_msb` (not bypassed by compiled Rust). That routine inlines the same ISW AND
   with its shares in disjoint registers; its leakage (including Hamming distances) is
   checked by security/tvla, not here. `rblwe_isw_and` stays the gadget of the portable
   structure and of the firmware's on-target tests.

This is a structural check of one function, not a leakage proof: it does not model
register-overwrite (Hamming distance) leakage or the surrounding Rust code.

Usage: check-gadget.py FIRMWARE.elf      (exit 0 = pass)
       check-gadget.py --self-test       (the checker must flag a deliberately merged gadget)
"""
import re
import subprocess
import sys

LOGIC = {"and", "ands", "eor", "eors", "orr", "orrs", "bic", "bics"}


def disassemble(elf, symbol):
    out = subprocess.run(
        ["arm-none-eabi-objdump", "-d", "--no-show-raw-insn", f"--disassemble={symbol}", elf],
        check=True, capture_output=True, text=True).stdout
    lines = []
    for line in out.splitlines():
        m = re.match(r"\s*[0-9a-f]+:\s+(\S+)\s*(.*)$", line)
        if m:
            lines.append((m.group(1).split(".")[0], m.group(2).split(";")[0].strip()))
    return lines


def regs(operands):
    return [r.strip() for r in re.split(r",\s*", operands) if r.strip()]


def check_gadget(instructions):
    """Returns a list of problems (empty = pass)."""
    problems = []
    if not instructions:
        return ["rblwe_isw_and not found in the ELF"]
    taint = {"r0": {"x0"}, "r1": {"x1"}, "r2": {"y0"}, "r3": {"y1"}}
    for i, (op, args) in enumerate(instructions):
        last = i == len(instructions) - 1
        if op == "bx" and args == "lr" and last:
            continue
        if op.startswith("b") and op not in LOGIC and op != "bic":
            problems.append(f"branch '{op} {args}' inside the gadget")
            continue
        if op in ("push", "pop"):
            if not re.fullmatch(r"\{r4, r5\}", args):
                problems.append(f"unexpected {op} {args}")
            for r in ("r4", "r5"):
                taint.pop(r, None)
            continue
        if op == "ldr":
            m = re.fullmatch(r"(\w+), \[sp\]", args)
            if not m:
                problems.append(f"unexpected load '{op} {args}'")
                continue
            taint[m.group(1)] = {"r"}
            continue
        if op in ("mov", "movs"):
            d, s = regs(args)
            taint[d] = set(taint.get(s, set()))
            continue
        if op in LOGIC:
            ops = regs(args)
            if len(ops) == 2:  # Thumb-16 two-operand form: d = d op s
                ops = [ops[0], ops[0], ops[1]]
            d, a, b = ops
            t = taint.get(a, set()) | taint.get(b, set())
            taint[d] = t
            for var in ("x", "y"):
                if {var + "0", var + "1"} <= t and "r" not in t:
                    problems.append(
                        f"'{op} {args}' combines both shares of {var} without the mask r "
                        f"(depends on {sorted(t)})")
            continue
        problems.append(f"unexpected instruction '{op} {args}'")
    if instructions[-1] != ("bx", "lr"):
        problems.append("gadget does not end with bx lr")
    return problems


def self_test():
    good = [("ldr", "ip, [sp]"), ("push", "{r4, r5}"), ("and", "r4, r0, r3"),
            ("eor", "r4, r4, ip"), ("and", "r5, r1, r2"), ("eor", "r4, r4, r5"),
            ("and", "r0, r0, r2"), ("eor", "r0, r0, ip"), ("and", "r1, r1, r3"),
            ("eor", "r1, r1, r4"), ("pop", "{r4, r5}"), ("bx", "lr")]
    # What the paper's GCC did: factor x0&y0 ^ x0&y1 into x0 & (y0 ^ y1).
    merged = [("ldr", "ip, [sp]"), ("eor", "r4, r2, r3"), ("and", "r0, r0, r4"),
              ("eor", "r0, r0, ip"), ("bx", "lr")]
    branchy = good[:-1] + [("beq", "0x10"), ("bx", "lr")]
    ok = (check_gadget(good) == [] and check_gadget(merged) != []
          and check_gadget(branchy) != [])
    print("self-test:", "PASS" if ok else "FAIL",
          "| merged gadget flagged:", check_gadget(merged)[:1])
    return 0 if ok else 1


def main():
    if len(sys.argv) == 2 and sys.argv[1] == "--self-test":
        return self_test()
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    elf = sys.argv[1]
    status = 0
    gadget = disassemble(elf, "rblwe_isw_and")
    problems = check_gadget(gadget)
    if problems:
        status = 1
        for p in problems:
            print("FAIL gadget:", p)
    else:
        print(f"PASS gadget rblwe_isw_and: {len(gadget)} instructions, no branch, "
              "no unmasked combination of the shares of x or y")
    nm = subprocess.run(["arm-none-eabi-nm", elf], check=True, capture_output=True,
                        text=True).stdout
    a2b = [line.split()[-1] for line in nm.splitlines() if "6masked7a2b_msb" in line]
    if not a2b:
        print("FAIL rblwe::masked::a2b_msb not found (inlined or renamed?)")
        return 1
    calls = [i for i in disassemble(elf, a2b[0]) if i[0] == "bl" and "rblwe_a2b_msb" in i[1]]
    if calls:
        print(f"PASS a2b_msb calls rblwe_a2b_msb ({len(calls)} call sites)")
    else:
        print("FAIL a2b_msb does not call rblwe_a2b_msb")
        status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
