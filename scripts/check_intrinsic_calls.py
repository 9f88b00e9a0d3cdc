#!/usr/bin/env python3
"""Fails if a vector intrinsic of ours compiled to a call instead of an instruction.

A closure inside a `#[target_feature]` kernel does not inherit its instruction set, and its
intrinsics then compile to calls into `core::core_arch` (the NTT ran 4x slower that way).
This reads `objdump -d` of a binary, finds every function that calls a `core_arch` AVX/SSE
intrinsic, and fails when that function, or a direct caller up to three levels up, is this
project's code (its symbol names a `zeppelin` crate or type: generic code instantiated from
ours counts as ours). Third-party code doing the same (seen: aho-corasick's Teddy builder,
at construction time, through `core::array::try_map`) is listed and allowed: it is not on
our hot paths and not ours to change.

Usage: check_intrinsic_calls.py BINARY | --disassembly FILE
"""

import re
import subprocess
import sys
from collections import defaultdict

INTRINSIC = re.compile(r"call\s+[0-9a-f]+ <([^>]*core_arch[^>]*(?:avx|sse)[^>]*)>")
FUNCTION = re.compile(r"^([0-9a-f]+) <(.*)>:$")
CALL = re.compile(r"call\s+([0-9a-f]+) <")
LEVELS = 3


def main() -> int:
    args = sys.argv[1:]
    if len(args) == 2 and args[0] == "--disassembly":
        with open(args[1], encoding="utf-8", errors="replace") as f:
            dis = f.read()
    elif len(args) == 1:
        dis = subprocess.run(
            ["objdump", "-d", "--no-show-raw-insn", args[0]],
            check=True, capture_output=True, text=True,
        ).stdout
    else:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    name_at: dict[str, str] = {}
    callers: dict[str, set[str]] = defaultdict(set)
    offenders: set[str] = set()
    current = None
    for line in dis.splitlines():
        m = FUNCTION.match(line)
        if m:
            current = m.group(2)
            name_at[m.group(1).lstrip("0")] = current
            continue
        if current is None or "call" not in line:
            continue
        if INTRINSIC.search(line):
            offenders.add(current)
        c = CALL.search(line)
        if c:
            callers[c.group(1).lstrip("0")].add(current)
    by_name: dict[str, set[str]] = defaultdict(set)
    for addr, fs in callers.items():
        if addr in name_at:
            by_name[name_at[addr]] |= fs

    ours = []
    for f in sorted(offenders):
        chain, frontier = {f}, {f}
        for _ in range(LEVELS):
            frontier = set().union(*(by_name.get(g, set()) for g in frontier)) - chain
            chain |= frontier
        mine = sorted(g for g in chain if "zeppelin" in g)
        if mine:
            ours.append((f, mine))
        else:
            print(f"check_intrinsic_calls: third-party, allowed: {f}")
    for f, mine in ours:
        print(f"check_intrinsic_calls: FAIL {f} calls a vector intrinsic; reached from {mine[:3]}",
              file=sys.stderr)
    if ours:
        return 1
    print(f"check_intrinsic_calls: PASS no intrinsic compiled to a call in our code "
          f"({len(offenders)} third-party function(s) listed above)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
