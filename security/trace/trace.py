#!/usr/bin/env python3
"""Trace-equivalence constant-time check on the emulated cores (issue 11, item 3).

For each secret-path operation, the trace image of the core runs the operation on PAIRS input
pairs that differ only in secret data (keys, messages, secret-stream seeds, masking
randomness; public inputs equal within the pair). The QEMU plugin ctrace.so hashes, per trace
window, the sequence of executed instruction addresses and the sequence of memory-access
addresses (with size and direction); both hashes must be equal within every pair. Leaky
controls traced by the same harness must be caught.

Usage: trace.py --plugin ctrace.so --m55 ELF --m33 ELF --pairs N --report PATH [--only NAME]
"""
import argparse
import array
import os
import re
import struct
import subprocess
import sys
import tempfile
import time

MAGIC = 0x5254_5443
PUBLIC_BYTES, SECRET_BYTES = 32, 96
PAIR_BYTES = PUBLIC_BYTES + 2 * SECRET_BYTES
MAX_PAIRS = 128

M55_MACHINE = ["-M", "mps3-an547"]
M33_MACHINE = ["-M", "mps2-an505"]

# (core, name, op number, kind) with kind "op" (must be equal) or the channel a control must
# be caught on ("pc" or "mem").
# Operations marked True are the ones issue 11 names (full pair count); the others are extra
# coverage of the secret path at --extra-pairs (they cost as much time again).
M55_OPS = [
    ("symmetric encrypt", 5, True),
    ("seeded (symmetric) encrypt", 6, True),
    ("public-key encrypt", 7, True),
    ("decrypt", 8, True),
    ("Gaussian sampler (+ secret AES-CTR stream)", 10, True),
    ("ternary sampler (+ secret AES-CTR stream)", 11, True),
    ("decrypt seeded", 9, False),
    ("encode (slots -> plaintext)", 1, False),
    ("decode (plaintext -> slots)", 2, False),
    ("secret-key generation", 3, False),
    ("public-key generation", 4, False),
]
M55_CONTROLS = [
    ("leaky branch (beq on a secret bit)", 200, "pc"),
    ("leaky load (ldr at a secret index)", 201, "mem"),
    ("leaky Helium gather (vldrw.u32 q0, [t, q1] at secret offsets)", 202, "mem"),
]
M33_OPS = []
# CCA2 decryption under every configuration a user can name (issue 31): ConstantTime and
# Hardened, each with a plain and a masked key. Pairs compare a valid against a tampered
# (another key's) ciphertext, or two rejections.
for set_no in (1, 2, 3):
    M33_OPS += [
        (f"Set {set_no} CPA decrypt (ConstantTime)", 16 * set_no + 1, True),
        (f"Set {set_no} CPA decrypt (Hardened)", 16 * set_no + 2, True),
        (f"Set {set_no} CCA2 decrypt (ConstantTime)", 16 * set_no + 5, True),
        (f"Set {set_no} CCA2 decrypt (Hardened)", 16 * set_no + 3, True),
        (f"Set {set_no} CCA2 masked decrypt (ConstantTime)", 16 * set_no + 6, True),
        (f"Set {set_no} CCA2 masked decrypt (Hardened)", 16 * set_no + 4, True),
        (f"Set {set_no} CCA2 valid vs tampered, one key (ConstantTime)", 16 * set_no + 9, True),
        (f"Set {set_no} CCA2 valid vs tampered, one key (Hardened)", 16 * set_no + 10, True),
        (f"Set {set_no} CCA2 masked valid vs tampered, one key (ConstantTime)", 16 * set_no + 11, True),
        (f"Set {set_no} CCA2 masked valid vs tampered, one key (Hardened)", 16 * set_no + 12, True),
    ]
# The test image's fault entry points (firmware/m33/src/fault_entry.rs), whose inlined
# copies of cca::decrypt the binary check (security/cca-branch) inspects.
M33_OPS += [
    ("Set 1 CCA2 fault_entry_decrypt_set1_unhardened (ConstantTime, inlined)", 16 + 7, True),
    ("Set 1 CCA2 fault_entry_decrypt_set1 (Hardened)", 16 + 8, True),
    ("Set 1 CCA2 fault_entry_decrypt_set1_unhardened, valid vs tampered, one key (ConstantTime)",
     16 + 13, True),
    ("Set 1 CCA2 fault_entry_decrypt_set1, valid vs tampered, one key (Hardened)", 16 + 14, True),
]
M33_CONTROLS = [
    ("leaky branch (beq on a secret bit)", 200, "pc"),
    ("leaky load (ldr at a secret index)", 201, "mem"),
    ("the crate's Branchy stage-1 CPA decrypt, Set 1", 199, "pc"),
]

# The C library's trace image (firmware/c/src/trace.c), one per board: the C ABI's secret
# paths called from C (RBLWE CCA2 decryption in its three key forms, Sets 1-3; BFV Seal4096
# encryption and decryption). RBLWE pairs alternate: even pairs one key, valid against
# one-bit-tampered ciphertext; odd pairs two keys, one ciphertext.
C_OPS = []
for set_no in (1, 2, 3):
    C_OPS += [
        (f"RBLWE Set {set_no} CCA2 decrypt, key bytes (zeppelin_rblwe_cca_decrypt)", 16 * set_no + 1, True),
        (f"RBLWE Set {set_no} CCA2 decrypt, key object (zeppelin_rblwe_cca_key_decrypt)", 16 * set_no + 2, True),
        (f"RBLWE Set {set_no} CCA2 decrypt, masked key (zeppelin_rblwe_cca_masked_decrypt)", 16 * set_no + 3, True),
    ]
C_OPS += [
    ("BFV Seal4096 symmetric encrypt (zeppelin_encrypt_symmetric)", 100, True),
    ("BFV Seal4096 public-key encrypt (zeppelin_encrypt_public)", 101, True),
    ("BFV Seal4096 decrypt (zeppelin_decrypt)", 102, True),
]
C_CONTROLS = [
    ("leaky branch (beq on a secret bit, C image)", 200, "pc"),
    ("leaky load (ldr at a secret index, C image)", 201, "mem"),
]
MACHINES = {"M55": M55_MACHINE, "M33": M33_MACHINE, "C/M55": M55_MACHINE, "C/M33": M33_MACHINE}

WINDOW = re.compile(r"window (\d+) insns (\d+) mems (\d+) pc ([0-9a-f]{48}) mem ([0-9a-f]{48})")
TRACE = re.compile(r"TRACE op (\d+) pairs (\d+) differing-outputs (\d+) failures (\d+)")


def symbols(elf):
    """name -> (address, size) from arm-none-eabi-nm (Thumb bit cleared)."""
    out = subprocess.run(["arm-none-eabi-nm", "-S", elf], check=True, capture_output=True,
                         text=True).stdout
    table = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 4:
            table[parts[3]] = (int(parts[0], 16) & ~1, int(parts[1], 16))
        elif len(parts) == 3:
            table[parts[2]] = (int(parts[0], 16) & ~1, 0)
    return table


def function_ranges(elf):
    """Sorted (start, end, demangled name) of the ELF's functions, for naming addresses."""
    out = subprocess.run(["arm-none-eabi-nm", "-S", "-C", "--defined-only", elf], check=True,
                         capture_output=True, text=True).stdout
    ranges = []
    for line in out.splitlines():
        m = re.match(r"([0-9a-f]+) ([0-9a-f]+) [tTwW] (.*)", line)
        if m:
            start = int(m.group(1), 16) & ~1
            ranges.append((start, start + int(m.group(2), 16), m.group(3)))
    ranges.sort()
    return ranges


def name_of(ranges, addr):
    for start, end, name in ranges:
        if start <= addr < end:
            return f"{name}+0x{addr - start:x}"
    return "?"


def helium_pcs(elf):
    """Addresses of Helium (MVE) instructions: vector ops on q registers and the
    low-overhead-loop instructions, from the ELF's disassembly."""
    out = subprocess.run(["arm-none-eabi-objdump", "-d", "--no-show-raw-insn", elf], check=True,
                         capture_output=True, text=True).stdout
    pcs = set()
    for line in out.splitlines():
        m = re.match(r"\s+([0-9a-f]+):\s+(\S+)\s*(.*)", line)
        if not m:
            continue
        mnemonic, operands = m.group(2), m.group(3)
        if (mnemonic.startswith("v") and re.search(r"\bq[0-7]\b", operands)) or re.match(
                r"(dlstp|wlstp|letp|lctp)", mnemonic):
            pcs.add(int(m.group(1), 16))
    return pcs


def make_input(op, pairs, rng):
    """Header and pairs: a random public block per pair, two random secret blocks."""
    blob = bytearray(struct.pack("<IIII", MAGIC, op, pairs, 0))
    for _ in range(pairs):
        blob += rng(PUBLIC_BYTES) + rng(SECRET_BYTES) + rng(SECRET_BYTES)
    return bytes(blob)


def run_op(core, elf, syms, op, pairs, workdir, dump_max):
    machine = MACHINES[core]
    tag = f"{core.replace('/', '-')}-{op}"
    inp = os.path.join(workdir, f"{tag}.bin")
    win = os.path.join(workdir, f"{tag}.windows")
    dump = os.path.join(workdir, f"{tag}.w")
    with open(inp, "wb") as f:
        f.write(make_input(op, pairs, os.urandom))
    plugin = (f"{ARGS.plugin},open=0x{syms['ctrace_open'][0]:x},"
              f"close=0x{syms['ctrace_close'][0]:x},out={win},dump={dump},dumpmax={dump_max}")
    cmd = ["qemu-system-arm", *machine, "-nographic",
           "-semihosting-config", "enable=on,target=native", "-plugin", plugin,
           "-device", f"loader,file={inp},addr=0x{syms['CTRACE_INPUT_ADDR'][0]:x}", "-kernel", elf]
    t0 = time.time()
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=3600)
    seconds = time.time() - t0
    windows = []
    with open(win) as f:
        for line in f:
            m = WINDOW.match(line)
            if m:
                windows.append((int(m.group(2)), int(m.group(3)), m.group(4), m.group(5)))
    # The Rust images print through SYS_WRITE (stdout), the C image through SYS_WRITE0,
    # which QEMU sends to stderr.
    m = TRACE.search(proc.stdout) or TRACE.search(proc.stderr)
    result = {
        "exit": proc.returncode, "seconds": seconds, "windows": windows,
        "stdout": proc.stdout + proc.stderr,
        "differing": int(m.group(3)) if m else -1, "failures": int(m.group(4)) if m else -1,
        "dump": dump, "cmd": cmd,
    }
    return result


def compare(res, pairs):
    w = res["windows"]
    complete = len(w) == 2 * pairs
    pc_equal = sum(1 for k in range(len(w) // 2) if w[2 * k][2] == w[2 * k + 1][2])
    mem_equal = sum(1 for k in range(len(w) // 2) if w[2 * k][3] == w[2 * k + 1][3])
    insns = sorted({x[0] for x in w}) or [0]
    mems = sorted({x[1] for x in w}) or [0]
    distinct_pc = len({x[2] for x in w})
    return complete, pc_equal, mem_equal, insns, mems, distinct_pc


def read_records(path, size):
    with open(path, "rb") as f:
        data = f.read()
    return [data[i:i + size] for i in range(0, len(data), size)], data


M64 = (1 << 64) - 1


def stream_hash(words):
    """Python twin of ctrace.c's stream hash (two rotate-multiply lanes and the count)."""
    a, b, n = 0x243F6A8885A308D3, 0x13198A2E03707344, 0
    for x in words:
        a = (((a ^ x) * 0x9E3779B97F4A7C15) & M64)
        a = ((a << 27) | (a >> 37)) & M64
        b = (((b + x) & M64) * 0xC2B2AE3D27D4EB4F) & M64
        b = ((b << 31) | (b >> 33)) & M64
        n += 1
    return f"{a:016x}{b:016x}{n:016x}"


# Windows up to this many records are rehashed in Python; longer ones are checked by
# comparing the raw dumps of the two windows of the first pair with the plugin's verdict.
PY_HASH_LIMIT = 400_000


def check_dump_hashes(res, n):
    """The plugin's hashes against the dumped raw streams of windows < n: rehashed in Python
    where short enough, and equal dumps <=> equal hashes for the first pair."""
    ok = True
    w = res["windows"]
    for k in range(min(n, len(w))):
        for ext, idx, size in ((".pc", 2, 4), (".mem", 3, 5)):
            with open(f"{res['dump']}{k}{ext}", "rb") as f:
                data = f.read()
            if len(data) // size != int(w[k][idx][32:], 16):
                ok = False
            elif len(data) // size <= PY_HASH_LIMIT:
                words = (int.from_bytes(data[i:i + size], "little")
                         for i in range(0, len(data), size))
                ok &= stream_hash(words) == w[k][idx]
    if len(w) >= 2 and n >= 2:
        for ext, idx in ((".pc", 2), (".mem", 3)):
            with open(f"{res['dump']}0{ext}", "rb") as f0, open(f"{res['dump']}1{ext}", "rb") as f1:
                ok &= (f0.read() == f1.read()) == (w[0][idx] == w[1][idx])
    return ok


def first_divergence(res, k, ranges):
    """Where windows 2k and 2k+1 first differ, per stream (needs their dumps)."""
    found = {}
    for ext, size in ((".pc", 4), (".mem", 5)):
        a, _ = read_records(f"{res['dump']}{2 * k}{ext}", size)
        b, _ = read_records(f"{res['dump']}{2 * k + 1}{ext}", size)
        for i, (x, y) in enumerate(zip(a, b)):
            if x != y:
                if ext == ".pc":
                    xa, ya = struct.unpack("<I", x)[0], struct.unpack("<I", y)[0]
                    found["pc"] = (f"instruction {i}: 0x{xa:x} ({name_of(ranges, xa)}) vs "
                                   f"0x{ya:x} ({name_of(ranges, ya)})")
                else:
                    xa, ya = struct.unpack("<I", x[:4])[0], struct.unpack("<I", y[:4])[0]
                    found["mem"] = f"access {i}: 0x{xa:08x} vs 0x{ya:08x}"
                break
        else:
            if len(a) != len(b):
                found[ext[1:]] = f"lengths {len(a)} vs {len(b)}"
    return found


def helium_count(res, pcs):
    with open(f"{res['dump']}0.pc", "rb") as f:
        trace = array.array("I", f.read())  # little-endian host, as the dump
    return sum(1 for pc in trace if pc in pcs)


def drop_dumps(res):
    """Raw dumps are scratch (tens of MB per window): removed once an operation is checked."""
    folder, prefix = os.path.split(res["dump"])
    for f in os.listdir(folder):
        if f.startswith(prefix):
            os.remove(os.path.join(folder, f))


def fmt_range(v):
    return f"{v[0]:,}" if v[0] == v[-1] else f"{v[0]:,}-{v[-1]:,}"


def main():
    global ARGS
    ap = argparse.ArgumentParser()
    ap.add_argument("--plugin", required=True)
    ap.add_argument("--m55", required=True)
    ap.add_argument("--m33", required=True)
    ap.add_argument("--c-m55", help="the C library's trace image for the M55 (firmware/c)")
    ap.add_argument("--c-m33", help="the C library's trace image for the M33 (firmware/c)")
    ap.add_argument("--pairs", type=int, default=100)
    ap.add_argument("--control-pairs", type=int, default=16)
    ap.add_argument("--extra-pairs", type=int, default=10)
    ap.add_argument("--report", required=True)
    ap.add_argument("--form", default="full")
    ap.add_argument("--only", default="")
    ARGS = ap.parse_args()
    if not 1 <= ARGS.pairs <= MAX_PAIRS:
        sys.exit(f"--pairs must be 1..{MAX_PAIRS}")

    failures = []
    rows, control_rows = [], []
    t_start = time.time()
    with tempfile.TemporaryDirectory(prefix="ctrace-") as workdir:
        images = [("M55", ARGS.m55, M55_OPS, M55_CONTROLS), ("M33", ARGS.m33, M33_OPS, M33_CONTROLS)]
        if ARGS.c_m55:
            images.append(("C/M55", ARGS.c_m55, C_OPS, C_CONTROLS))
        if ARGS.c_m33:
            images.append(("C/M33", ARGS.c_m33, C_OPS, C_CONTROLS))
        for core, elf, ops, controls in images:
            if ARGS.only and not any(ARGS.only in f"{core} {x[0]}" for x in ops + controls):
                continue
            syms = symbols(elf)
            ranges = function_ranges(elf)
            helium = helium_pcs(elf) if core.endswith("M55") else set()
            for name, op, named in ops:
                if ARGS.only and ARGS.only not in f"{core} {name}":
                    continue
                pairs = ARGS.pairs if named else min(ARGS.pairs, ARGS.extra_pairs)
                res = run_op(core, elf, syms, op, pairs, workdir, 2)
                complete, pc_eq, mem_eq, insns, mems, distinct = compare(res, pairs)
                hash_ok = check_dump_hashes(res, 2)
                mve = helium_count(res, helium) if core.endswith("M55") and res["windows"] else 0
                ok = (res["exit"] == 0 and complete and pc_eq == pairs
                      and mem_eq == pairs and hash_ok and res["differing"] == pairs)
                where = ""
                if complete and not ok and (pc_eq < pairs or mem_eq < pairs):
                    k = next(k for k in range(pairs)
                             if res["windows"][2 * k][2:] != res["windows"][2 * k + 1][2:])
                    if k == 0:
                        where = "; ".join(f"{c}: {d}" for c, d in
                                          first_divergence(res, 0, ranges).items())
                    else:
                        where = f"first differing pair {k}"
                rows.append((core, name, pairs, fmt_range(insns), fmt_range(mems),
                             mve, f"{pc_eq}/{pairs}", f"{mem_eq}/{pairs}",
                             f"{res['differing']}/{pairs}", f"{res['seconds']:.0f}",
                             "PASS" if ok else "FAIL", where))
                print(f"{'PASS' if ok else 'FAIL'} {core} {name}: pc {pc_eq}/{pairs} "
                      f"mem {mem_eq}/{pairs} insns {fmt_range(insns)} mems {fmt_range(mems)} "
                      f"helium {mve} differing-outputs {res['differing']} exit {res['exit']} "
                      f"hash-check {hash_ok} {res['seconds']:.1f}s {where}", flush=True)
                drop_dumps(res)
                if not ok:
                    failures.append(f"{core} {name}")
                    if res["exit"] != 0:
                        print(res["stdout"][-2000:])
            for name, op, channel in controls:
                if ARGS.only and ARGS.only not in f"{core} {name}":
                    continue
                n = ARGS.control_pairs
                res = run_op(core, elf, syms, op, n, workdir, 2 * n)
                complete, pc_eq, mem_eq, insns, mems, _ = compare(res, n)
                caught_pc, caught_mem = pc_eq < n, mem_eq < n
                caught = caught_pc if channel == "pc" else (caught_mem and not caught_pc)
                ok = res["exit"] == 0 and complete and caught and check_dump_hashes(res, 2 * n)
                where = {}
                if complete:
                    k = next((k for k in range(n)
                              if res["windows"][2 * k][2:] != res["windows"][2 * k + 1][2:]), None)
                    if k is not None:
                        where = first_divergence(res, k, ranges)
                detail = "; ".join(f"{c}: {d}" for c, d in where.items())
                control_rows.append((core, name, n, f"{n - pc_eq}/{n}", f"{n - mem_eq}/{n}",
                                     channel, "caught" if ok else "NOT CAUGHT", detail))
                print(f"{'PASS' if ok else 'FAIL'} {core} control {name}: pc differs in "
                      f"{n - pc_eq}/{n} pairs, addresses in {n - mem_eq}/{n}; {detail}", flush=True)
                drop_dumps(res)
                if not ok:
                    failures.append(f"{core} control {name}")
    total = time.time() - t_start
    write_report(rows, control_rows, failures, total)
    sys.exit(1 if failures else 0)


def write_report(rows, control_rows, failures, total):
    lines = [
        "## Trace equivalence on the emulated cores (constant time, issues 11 and 31)",
        "",
        f"Form: **{ARGS.form}**, {ARGS.pairs} pairs per operation that issue 11 names, "
        f"{min(ARGS.pairs, ARGS.extra_pairs)} per extra operation (decrypt seeded, encoder, key "
        f"generation), {ARGS.control_pairs} per control; whole run {total / 60:.1f} min. Command: `security/trace/run.sh"
        f"{' --short' if ARGS.form == 'short' else ''}`.",
        "",
        "How: each core's trace image (`firmware/m55/src/bin/trace.rs`, Seal4096 on the Helium "
        "backend; `firmware/m33/src/bin/trace.rs`, RBLWE Sets 1-3; the C library's "
        "`firmware/c/src/trace.c`, linked against `libzeppelin.a` for each board and calling the "
        "C ABI from C) reads its inputs from "
        "`CTRACE_INPUT_ADDR` (RAM outside the image), written by QEMU's `-device loader` from random bytes (`os.urandom`): "
        "per pair one public block and two secret blocks (key seed, secret-stream seed, message "
        "seed; on the M33 also the masking-randomness pool seed). Both windows of a pair see "
        "the same public inputs (public key, ciphertext, public seed `a`); setup runs outside "
        "the windows. The QEMU 7.2 TCG plugin `security/trace/ctrace.c` (built at run time) "
        "hashes, between the markers `ctrace_open` and `ctrace_close`, every executed "
        "instruction address (condition-failed IT instructions included) and every memory "
        "access address with size and direction (Helium loads, stores and gathers per element, "
        "as QEMU performs them in helpers). The plugin's stream hash (two 64-bit "
        "rotate-multiply lanes and the record count; one differing record always changes it) "
        "is checked per operation against the raw streams of its first pair, dumped: rehashed "
        "in Python where short, and equal dumps <=> equal hashes.",
        "",
        "CCA2 decryption is traced under every configuration a user can name (`ConstantTime`, "
        "`Hardened`; plain and masked key) with two kinds of pair: the two sides' keys on one "
        "ciphertext (encrypted to side 0, side 1 or neither), and one key on the valid ciphertext "
        "against the same ciphertext with one bit flipped (in c1, c2, c3 or c4 by pair; the "
        "validity bit is then the only secret difference, the plaintext-checking oracle). "
        "The `fault_entry_*` rows run the test image's C-callable entry points "
        "(`firmware/m33/src/fault_entry.rs`): `fault_entry_decrypt_set1_unhardened` is the "
        "inlined `cca::decrypt::<Set1, ConstantTime, ..>` whose post-selection `bne` issue 31 "
        "asks about (security/cca-branch). The C rows alternate the two kinds of pair (even "
        "pairs one key, valid vs tampered; odd pairs two keys); the C ABI's RBLWE is `Hardened` "
        "(its only configuration).",
        "",
        "Columns: instructions and memory accesses per trace (one value if all traces have it), "
        "Helium = MVE instructions executed in the first trace (addresses of q-register and "
        "low-overhead-loop instructions in the ELF's disassembly), PC / address trace equal = "
        "pairs whose two hashes agree, differing outputs = pairs whose two outputs differ (the "
        "secrets reached the operation).",
        "",
        "| core | operation | pairs | instructions per trace | memory accesses per trace "
        "| Helium insns | PC trace equal | address trace equal | differing outputs | seconds "
        "| result | first divergence |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append("| " + " | ".join(str(x) for x in r) + " |")
    lines += [
        "",
        "Leaky controls, traced by the same harness (same plugin, same images, random secrets); "
        "a branch must show in the PC trace, a secret-indexed load in the address trace only "
        "(its PC trace stays equal).",
        "",
        "| core | control | pairs | pairs with PC trace differing | pairs with address trace "
        "differing | expected channel | result | first divergence (first differing pair) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in control_rows:
        lines.append("| " + " | ".join(str(x) for x in r) + " |")
    lines += ["", f"**Result: {'PASS' if not failures else 'FAIL: ' + ', '.join(failures)}**",
              ""]
    tmp = ARGS.report + ".tmp"
    with open(tmp, "w") as f:
        f.write("\n".join(lines))
    os.replace(tmp, ARGS.report)


if __name__ == "__main__":
    main()
