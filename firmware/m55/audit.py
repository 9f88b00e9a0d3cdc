#!/usr/bin/env python3
"""Binary constant-time audit of the linked Cortex-M55 firmware (see audit.sh for usage).

Disassembles the ELF with arm-none-eabi-objdump (armv8.1-m.main, so MVE is decoded) and
checks every function on the SECRET PATH below. A listed function must exist in the ELF
(a function that vanished by inlining is a failure, not a pass) and must satisfy:

  R1  No division: no `sdiv`/`udiv`, and no call to a software division routine
      (`__aeabi_*div*`, `__udivsi3`, `__divsi3`, `__udivmod*`, ...).
  R2  No conditional control flow except loop control. Every conditional branch
      (`b<cond>`, `cbz`, `cbnz`, `wls`/`wlstp`, `le`/`letp`, and any pc-writing instruction
      inside an IT block) must be one of:
        back-edge   a backward branch (target <= its own address), i.e. a loop back-edge;
        loop exit   a forward branch to the instruction right after an unconditional
                    backward branch `b L` with L <= the exiting branch (it leaves a loop
                    whose back-edge is that `b`);
        loop guard  a forward branch to the instruction right after a backward conditional
                    branch (or `le`) whose target lies after the guard (it skips a whole
                    loop: a zero-trip test);
        bounds check a forward branch to a block that calls a panic routine before any
                    other branch (Rust's slice/overflow checks: they test public indices
                    against public lengths, and end the program if they fail).
      Anything else fails, including conditional returns.
  R3  No secret-indexed load. The disassembly does not show data flow, so the audit
      rejects every load whose address uses a register offset (`ldr* Rt, [Rn, Rm...]`),
      every table branch (`tbb`/`tbh`) and every MVE gather (`vldr* Qd, [Rn, Qm]`) in a
      listed function. A register holding an immediate since the start of its basic block
      (`mov`/`movw` #imm) is a constant offset, not an index.

  Reviewed findings: a list entry may pin, per rule, a number of findings that were reviewed
  and depend only on public values (with the reason in the entry); a different number fails.

What the rules do NOT prove (stated so nobody reads more into a green run): that a loop's
trip count is public (R2 accepts loop control; publicness of the counters is argued in the
source: lengths are compile-time constants or public sizes), that an address computed by
separate arithmetic (`add` then an immediate-offset load) is public (R3 sees addressing
modes only), and anything about callees that are not themselves listed. The functions
listed are the copies the firmware runs (the bfv samplers and lift are `#[inline(never)]`
for this); code that the compiler inlines into a listed function is checked as part of it,
code inlined into unlisted functions is not checked.
"""
import re
import subprocess
import sys

# --- the secret path -----------------------------------------------------------------------
# (symbol, reviewed): `reviewed` is None (every rule strict) or {rule: (count, reason)}: that
# many findings of that rule, per emitted copy, were reviewed as depending only on public
# values; any other count fails until re-reviewed.
SECRET_PATH = [
    # Helium NTT kernels and pointwise products (zeppelin-ring, mve/ntt.rs, mve/pointwise.rs): the butterflies
    # are straight-line asm; loops over public counts only.
    ("zeppelin_ring::mve::ntt::strip_layer::<false>", None),
    ("zeppelin_ring::mve::ntt::strip_layer::<true>", None),
    ("zeppelin_ring::mve::ntt::row_layer::<false>", None),
    ("zeppelin_ring::mve::ntt::row_layer::<true>", None),
    ("zeppelin_ring::mve::ntt::ct_row_layer4", None),
    ("zeppelin_ring::mve::ntt::gs_row_layer4", None),
    ("zeppelin_ring::mve::ntt::ct_quad_row64", None),
    ("zeppelin_ring::mve::ntt::gs_quad_row64", None),
    ("zeppelin_ring::mve::ntt::scale_pass", None),
    ("zeppelin_ring::mve::pointwise::pointwise_pass::<false>", None),
    ("zeppelin_ring::mve::pointwise::pointwise_pass::<true>", None),
    # The secret stream's block cipher (RustCrypto aes, fixsliced, constant-time).
    ("aes::soft::fixslice::aes128_encrypt", None),
    ("aes::soft::fixslice::sub_bytes", None),
    # BFV secret arithmetic (zeppelin crate; its products with the secret key are ring's
    # pointwise kernels above): the noise/message assembly of c0, BEHZ decryption, wiping.
    ("zeppelin::ops::finish_c0::<zeppelin::params::Seal4096>", None),
    ("zeppelin::ops::finish_c0::<zeppelin::params::Zeppelin4096>", None),
    # BEHZ decryption tail: the Helium kernels the MVE build runs (mve/client.rs), and the portable backend's
    # (compared with them on target; the portable build's copies).
    ("zeppelin_ring::mve::client::behz_accumulate_pass", None),
    ("zeppelin_ring::mve::client::behz_finish_pass", None),
    ("<zeppelin_ring::portable::Portable as zeppelin_ring::client::ClientKernels>::behz_accumulate", None),
    ("<zeppelin_ring::portable::Portable as zeppelin_ring::client::ClientKernels>::behz_finish", None),
    # The Gaussian sampler's Helium CDT scan (called from sample_gaussian on MVE builds).
    ("zeppelin_ring::mve::client::cdt_scan_pass", None),
    # Workspace<P> has the same layout for both n = 4096 presets: the compiler emits one copy,
    # under the Zeppelin4096 name, for both.
    ("<zeppelin::ops::Workspace<zeppelin::params::Zeppelin4096>>::clear", None),
    # The secret-stream samplers (the instances on the software-AES secret stream, as the
    # client images use them) and the small-value lift; out of line in the bfv crate.
    ("zeppelin::sampler::sample_ternary::<zeppelin::prng::AesCtr128>", None),
    ("zeppelin::sampler::sample_gaussian::<zeppelin::prng::AesCtr128, zeppelin_ring::mve::Mve>", None),
    ("zeppelin::sampler::lift_small", None),
    # The secret stream's word reader: reviewed findings, pinned per copy.
    # (`SecretPrng::next_u32` is out of line and absorbs the buffered reader; the AesCtr128
    # instance demangles without its default type argument.)
    ("<zeppelin::prng::SecretPrng>::next_u32", {
        "R2": (1, "refill test: the read position, a count of words read (public), reaches the "
                  "end of the 32-byte buffer"),
        "R3": (3, "the four bytes at the read position (public index; a constant index for the "
                  "first word after a refill)"),
    }),
]
# Reviewed and deliberately not listed (glue whose only branches test public values, and
# whose secret-handling leaves are listed above):
#  - <zeppelin::prng::AesCtr128 as Keystream>::fill: buffer position/length arithmetic of the
#    `ctr` crate (public: how many bytes were asked for); the cipher core is listed.
#  - Bfv::accumulate_prime, zeppelin_ring::mve::ntt::forward/inverse (dispatch): branch on `Result`s of length
#    checks and on the certified schedule (public); their kernels are listed.
#  - ct_quad_block/gs_quad_block: only reached for n < 64 (not in the presets).

# Negative controls: functions that MUST fail, each for the rule named, so that a broken
# parser or a too-lenient rule cannot produce a green audit. They are not on the secret path
# (the table AES and the rejection sampler only ever see the public stream, by type).
NEGATIVE_CONTROLS = [
    ("<zeppelin_m55::table_aes::TableAesCtr128 as zeppelin::prng::Keystream>::fill", "R3"),
    ("zeppelin::sampler::sample_uniform::<zeppelin::prng::AesCtr128>", "R2"),
    ("__aeabi_uldivmod", "R1"),
]

DIV_CALL = re.compile(r"__aeabi_[iu]?l?div|__aeabi_[iu]divmod|__u?divsi3|__u?modsi3|__udivmod|__divmod")
PANIC_CALL = re.compile(r"panic|_fail\b|slice_index|unwrap_failed|expect_failed|core::option::|core::result::unwrap")
COND = r"(eq|ne|cs|cc|hs|lo|mi|pl|vs|vc|hi|ls|ge|lt|gt|le)"
COND_BRANCH = re.compile(r"^b" + COND + r"(\.[nw])?$")
UNCOND_BRANCH = re.compile(r"^b(\.[nw])?$")
REG = r"(r\d+|ip|lr|sl|fp|sb|sp)"
REG_OFFSET_LOAD = re.compile(r"^ldr(b|h|sb|sh|d|ex|exb|exh)?(\.[nw])?$")
REG_OFFSET_OPERAND = re.compile(r"\[" + REG + r", -?" + REG + r"(, (lsl|lsr|asr|ror) #\d+)?\]")
GATHER = re.compile(r"^vldr[bhwd]\.")
GATHER_OPERAND = re.compile(r"\[" + REG + r", q\d+")


def disassemble(elf):
    out = subprocess.run(
        ["arm-none-eabi-objdump", "-d", "-C", "-m", "armv8.1-m.main", "--no-show-raw-insn", elf],
        check=True, capture_output=True, text=True).stdout
    # name -> list of copies (a generic function may be emitted more than once under one
    # name); each copy is a list of (address, mnemonic, operands).
    funcs = {}
    current = None
    for line in out.splitlines():
        m = re.match(r"^([0-9a-f]+) <(.*)>:$", line)
        if m:
            current = []
            funcs.setdefault(m.group(2), []).append(current)
            continue
        m = re.match(r"^\s+([0-9a-f]+):\t(\S+)\s*(.*)$", line)
        if m and current is not None:
            current.append((int(m.group(1), 16), m.group(2), m.group(3)))
    return funcs


def branch_target(ops):
    m = re.match(r"^(?:\w+, )?([0-9a-f]+)\b", ops)
    return int(m.group(1), 16) if m else None


def audit_function(name, insns):
    problems = []
    index = {a: i for i, (a, _, _) in enumerate(insns)}
    it_left = 0
    reg_loads = 0
    # Registers holding an immediate (mov/movw/movs #imm) since their last definition: a
    # register-offset load through one of them has a constant offset (a large struct field).
    constant_regs = set()
    # Branch targets start basic blocks: register contents known from straight-line code
    # before them may not hold on every path into them.
    targets = set()
    for (_, m0, o0) in insns:
        if m0.split(".")[0] in ("b", "bl", "cbz", "cbnz", "le", "letp", "wls", "wlstp") or COND_BRANCH.match(m0):
            t0 = branch_target(o0.split(", ")[-1])
            if t0 is not None:
                targets.add(t0)
    for i, (addr, mnem, ops) in enumerate(insns):
        if addr in targets:
            constant_regs.clear()
        base = mnem.split(".")[0]
        # R1: division
        if base in ("sdiv", "udiv"):
            problems.append(f"R1 division at {addr:x}: {mnem} {ops}")
        if base in ("bl", "blx") and DIV_CALL.search(ops):
            problems.append(f"R1 software division call at {addr:x}: {mnem} {ops}")
        # R3: indexed loads
        m_off = REG_OFFSET_OPERAND.search(ops)
        constant_offset = m_off is not None and m_off.group(2) in constant_regs
        if (REG_OFFSET_LOAD.match(mnem) and m_off and not constant_offset) or base in ("tbb", "tbh") \
                or (GATHER.match(mnem) and GATHER_OPERAND.search(ops)):
            reg_loads += 1
            problems.append(f"R3 register-indexed load at {addr:x}: {mnem} {ops}")
        # track immediates (after the R3 check, which uses the state before this instruction)
        dest = ops.split(",")[0].strip()
        if base in ("mov", "movs", "movw") and re.search(r", #-?\d+", ops):
            constant_regs.add(dest)
        elif re.match(r"^" + REG + r"$", dest) and not mnem.startswith(("str", "cmp", "cmn", "tst", "teq", "b", "v")):
            constant_regs.discard(dest)
        # R2: conditional control flow
        if it_left > 0:
            it_left -= 1
            writes_pc = ("pc" in ops.split(",")[0] and not mnem.startswith(("cmp", "tst", "str"))) \
                or (mnem.startswith("pop") and "pc" in ops) or mnem.startswith(("bx", "b"))
            if writes_pc:
                problems.append(f"R2 conditional pc write in IT block at {addr:x}: {mnem} {ops}")
        if re.match(r"^it[te]*$", mnem):
            it_left = len(mnem) - 1
            continue
        # `le`/`letp` (v8.1-M low-overhead loop end) branch back while lr != 0: conditional.
        conditional = COND_BRANCH.match(mnem) or base in ("cbz", "cbnz", "wls", "wlstp", "le", "letp")
        if not conditional:
            continue
        target = branch_target(ops.split(", ")[-1] if base in ("cbz", "cbnz", "wls", "wlstp", "le", "letp") else ops)
        if target is None:
            problems.append(f"R2 unresolved conditional branch at {addr:x}: {mnem} {ops}")
            continue
        if target <= addr:
            continue  # back-edge
        j = index.get(target)
        if j is not None and j > 0:
            _, pmnem, pops = insns[j - 1]
            ptarget = branch_target(pops.split(", ")[-1]) if pmnem.split(".")[0] in ("b", "le", "letp") or COND_BRANCH.match(pmnem) else None
            if UNCOND_BRANCH.match(pmnem) and ptarget is not None and ptarget <= addr:
                continue  # loop exit
            if (COND_BRANCH.match(pmnem) or pmnem.split(".")[0] in ("le", "letp")) and ptarget is not None \
                    and addr < ptarget <= insns[j - 1][0]:
                continue  # loop guard
        # bounds check: the target block reaches a panic call before any other branch
        if j is not None:
            ok = False
            for (_, m2, o2) in insns[j:j + 12]:
                b2 = m2.split(".")[0]
                if b2 in ("bl", "blx", "b") and PANIC_CALL.search(o2):
                    ok = True
                    break
                if b2 in ("bl", "blx", "bx", "pop", "b") or COND_BRANCH.match(m2) or b2 in ("cbz", "cbnz"):
                    break
            if ok:
                continue
        problems.append(f"R2 data-dependent or unclassified conditional branch at {addr:x}: {mnem} {ops}")
    return problems


def main():
    if len(sys.argv) != 2:
        print("usage: audit.py FIRMWARE.elf", file=sys.stderr)
        return 2
    funcs = disassemble(sys.argv[1])
    failed = 0
    for name, reviewed in SECRET_PATH:
        copies = funcs.get(name)
        if not copies:
            print(f"AUDIT FAIL {name}: not found in the ELF (inlined or renamed): update the list")
            failed += 1
            continue
        bad, notes = [], []
        for insns in copies:
            findings = audit_function(name, insns)
            for rule in ("R1", "R2", "R3"):
                hits = [f for f in findings if f.startswith(rule)]
                if reviewed and rule in reviewed:
                    pinned, why = reviewed[rule]
                    if len(hits) == pinned:
                        notes.append(f"{rule}: {len(hits)} reviewed finding(s) ({why})")
                        continue
                    bad.append(f"{rule}: {len(hits)} finding(s), reviewed count is {pinned}: re-review")
                bad.extend(hits)
        size = "+".join(str(len(c)) for c in copies)
        if bad:
            failed += 1
            print(f"AUDIT FAIL {name} ({size} instructions)")
            for p in bad:
                print(f"    {p}")
        else:
            extra = f"; {'; '.join(sorted(set(notes)))}" if notes else ""
            print(f"AUDIT PASS {name} ({size} instructions){extra}")
    for name, rule in NEGATIVE_CONTROLS:
        copies = funcs.get(name) or []
        findings = [f for c in copies for f in audit_function(name, c)]
        if any(f.startswith(rule) for f in findings):
            print(f"AUDIT CONTROL {name}: flagged by {rule} as it must be ({len(findings)} finding(s))")
        else:
            failed += 1
            print(f"AUDIT FAIL control {name}: expected a {rule} finding, got none (audit broken?)")
    total = len(SECRET_PATH) + len(NEGATIVE_CONTROLS)
    print(f"AUDIT RESULT {total - failed} of {total} checks passed ({len(SECRET_PATH)} secret-path functions, {len(NEGATIVE_CONTROLS)} negative controls)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
