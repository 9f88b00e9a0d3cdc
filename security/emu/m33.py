"""Cortex-M33 (MPS2 AN505) firmware in Unicorn: load an ELF, call its functions, hook ranges.

A small reusable base for the security suite's emulated experiments (fault injection,
leakage traces). It follows /work/shared/SECURITY-TOOLS.md section 2 (Unicorn 2.1.4):

* the CPU model is set to Cortex-M33 before any mapping; the AN505 code window
  (0x1000_0000, 4 MiB), RAM (0x3800_0000, 4 MiB) and the PPB (0xE000_0000, 1 MiB, as plain
  RAM: no SysTick or NVIC is modelled) are mapped; every PT_LOAD segment is written at its
  physical address;
* semihosting (`bkpt 0xab`) is served in an interrupt hook: SYS_OPEN (0x01), SYS_WRITE0
  (0x04), SYS_WRITE (0x05), SYS_EXIT (0x18) and SYS_EXIT_EXTENDED (0x20); the output is
  collected in `M33.output`;
* symbols come from .symtab with their demangled names (Rust legacy and v0 manglings, via
  binutils' c++filt; the crate hashes are dropped), so a caller can ask for
  `rblwe::cca::decrypt_reporting_output::<rblwe::params::Set1, ...>` by substring;
* `call(fn, *args)` runs one function with AAPCS arguments (integers or addresses of
  buffers placed in RAM with `alloc`/`put`) and a sentinel return address, bounded by an
  instruction count; crashes (unmapped access, invalid instruction, any exception other than
  semihosting) raise `Crash`, exceeding the bound raises `Hang`, a semihosting exit (e.g. the
  panic handler) raises `Exited`;
* the code window is mapped read/execute only (like flash): a stray store into it raises
  `Crash` rather than corrupting the image for later runs;
* `hook_code` / `hook_mem` add Python hooks restricted to an address range (the rest runs at
  Unicorn's full speed); `snapshot`/`restore` reset RAM and registers between trials.

API (kept stable; other parts of security/ build on it):

    m = M33(elf_path)                      # load
    f = m.symbol("rblwe::cca::decrypt_reporting_output::<rblwe::params::Set1")  # Symbol(name, addr, size, ...)
    buf = m.put(b"...")                    # copy bytes into scratch RAM, get the address
    out = m.alloc(32)                      # zeroed scratch buffer
    r0 = m.call(f, buf, 32, out)           # or m.call(0x1000_1234, ...)
    data = m.read(out, 32)
    h = m.hook_code(cb, lo, hi)            # cb(m, address, size); [lo, hi) range
    h = m.hook_mem(cb, lo, hi, write=True, read=True)   # cb(m, is_write, address, size, value)
    m.remove_hook(h)
    snap = m.snapshot(); ...; m.restore(snap)   # or snapshot([(addr, size), ...])
    cp = m.checkpoint()                    # inside a code hook during a call: state + PC
    r0 = m.resume(cp)                      # later: continue that call from there to its return
    m.disassemble(sym)                     # capstone instructions of a function
    m.run_image()                          # run from the vector table (reset) until exit

Everything here is plain emulation: Unicorn retires one instruction at a time and models no
cycles, caches or timers.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import dataclass
from typing import Callable, Iterable

from capstone import CS_ARCH_ARM, CS_MODE_MCLASS, CS_MODE_THUMB, Cs
from elftools.elf.elffile import ELFFile
from elftools.elf.sections import SymbolTableSection
from unicorn import (
    UC_ARCH_ARM,
    UC_HOOK_CODE,
    UC_HOOK_INTR,
    UC_HOOK_MEM_READ,
    UC_HOOK_MEM_WRITE,
    UC_MEM_WRITE,
    UC_MODE_MCLASS,
    UC_MODE_THUMB,
    UC_PROT_EXEC,
    UC_PROT_READ,
    Uc,
    UcError,
)
from unicorn.arm_const import (
    UC_ARM_REG_LR,
    UC_ARM_REG_PC,
    UC_ARM_REG_R0,
    UC_ARM_REG_R1,
    UC_ARM_REG_R2,
    UC_ARM_REG_R3,
    UC_ARM_REG_R4,
    UC_ARM_REG_R5,
    UC_ARM_REG_R6,
    UC_ARM_REG_R7,
    UC_ARM_REG_R8,
    UC_ARM_REG_R9,
    UC_ARM_REG_R10,
    UC_ARM_REG_R11,
    UC_ARM_REG_R12,
    UC_ARM_REG_SP,
    UC_ARM_REG_XPSR,
    UC_CPU_ARM_CORTEX_M33,
)

CODE_BASE = 0x1000_0000
CODE_SIZE = 4 << 20
RAM_BASE = 0x3800_0000
RAM_SIZE = 4 << 20
PPB_BASE = 0xE000_0000
PPB_SIZE = 1 << 20

# Scratch buffers for `alloc`/`put` live in the upper half of RAM below the call stack; the
# images built here use a few KiB of .data/.bss at the bottom and their stack at the top.
SCRATCH_BASE = RAM_BASE + (2 << 20)
SCRATCH_END = RAM_BASE + (3 << 20)
STACK_TOP = RAM_BASE + RAM_SIZE
# Return address of `call`: a few Thumb nops at the end of the code window.
SENTINEL = CODE_BASE + CODE_SIZE - 0x10

XPSR_THUMB = 1 << 24
XPSR_N, XPSR_Z, XPSR_C, XPSR_V = 1 << 31, 1 << 30, 1 << 29, 1 << 28

# Register names as capstone spells them, mapped to Unicorn ids (r0-r12, sp, lr, pc).
REGS = {
    "r0": UC_ARM_REG_R0, "r1": UC_ARM_REG_R1, "r2": UC_ARM_REG_R2, "r3": UC_ARM_REG_R3,
    "r4": UC_ARM_REG_R4, "r5": UC_ARM_REG_R5, "r6": UC_ARM_REG_R6, "r7": UC_ARM_REG_R7,
    "r8": UC_ARM_REG_R8, "r9": UC_ARM_REG_R9, "r10": UC_ARM_REG_R10, "sb": UC_ARM_REG_R9,
    "sl": UC_ARM_REG_R10, "r11": UC_ARM_REG_R11, "fp": UC_ARM_REG_R11, "r12": UC_ARM_REG_R12,
    "ip": UC_ARM_REG_R12, "sp": UC_ARM_REG_SP, "r13": UC_ARM_REG_SP, "lr": UC_ARM_REG_LR,
    "r14": UC_ARM_REG_LR, "pc": UC_ARM_REG_PC, "r15": UC_ARM_REG_PC,
}
ARG_REGS = (UC_ARM_REG_R0, UC_ARM_REG_R1, UC_ARM_REG_R2, UC_ARM_REG_R3)
CALLEE_STATE = (
    UC_ARM_REG_R0, UC_ARM_REG_R1, UC_ARM_REG_R2, UC_ARM_REG_R3, UC_ARM_REG_R4,
    UC_ARM_REG_R5, UC_ARM_REG_R6, UC_ARM_REG_R7, UC_ARM_REG_R8, UC_ARM_REG_R9,
    UC_ARM_REG_R10, UC_ARM_REG_R11, UC_ARM_REG_R12, UC_ARM_REG_SP, UC_ARM_REG_LR,
    UC_ARM_REG_XPSR,
)

SYS_OPEN, SYS_WRITE0, SYS_WRITE, SYS_EXIT, SYS_EXIT_EXTENDED = 0x01, 0x04, 0x05, 0x18, 0x20
ADP_STOPPED_APPLICATION_EXIT = 0x20026
EXCP_BKPT = 7  # QEMU's exception number for `bkpt` (semihosting is `bkpt 0xab`)


class EmulationError(Exception):
    """A run ended other than by returning to the caller."""


class Crash(EmulationError):
    """Unmapped access, invalid instruction, or a CPU exception (other than semihosting)."""


class Hang(EmulationError):
    """The instruction bound was reached before the function returned."""


class Exited(EmulationError):
    """The firmware exited through semihosting (e.g. its panic handler) with `code`."""

    def __init__(self, code: int):
        super().__init__(f"semihosting exit with status {code}")
        self.code = code


@dataclass(frozen=True)
class Symbol:
    """A function or object from .symtab; `addr` has the Thumb bit cleared."""

    name: str        # demangled, crate hashes dropped
    raw: str         # as in the ELF
    addr: int
    size: int
    is_function: bool

    @property
    def end(self) -> int:
        return self.addr + self.size


_CONST_TYPE = re.compile(r"\b(true|false|-?[0-9]+): (?:bool|char|[ui](?:8|16|32|64|128|size))\b")


def _strip_hashes(name: str) -> str:
    # v0: crate[0123abcd...]; legacy: trailing ::h0123456789abcdef.
    out, i = [], 0
    while i < len(name):
        if name[i] == "[":
            j = name.find("]", i)
            if j > 0 and all(c in "0123456789abcdef" for c in name[i + 1:j]):
                i = j + 1
                continue
        out.append(name[i])
        i += 1
    s = _CONST_TYPE.sub(r"\1", "".join(out))  # v0 spells const generics `true: bool`
    k = s.rfind("::h")
    if k >= 0 and len(s) - k == 19 and all(c in "0123456789abcdef" for c in s[k + 3:]):
        s = s[:k]
    return s


def demangle(names: list[str]) -> list[str]:
    """Demangles Rust (legacy and v0) and C++ names with binutils' c++filt, in one batch."""
    tool = shutil.which("arm-none-eabi-c++filt") or shutil.which("c++filt")
    if tool is None or not names:
        return list(names)
    res = subprocess.run([tool], input="\n".join(names) + "\n", capture_output=True,
                         text=True, check=True)
    lines = res.stdout.split("\n")[: len(names)]
    return [_strip_hashes(d) for d in lines]


class M33:
    """One emulated AN505 Cortex-M33 with an ELF image loaded. See the module docstring."""

    def __init__(self, elf_path: str):
        self.elf_path = str(elf_path)
        self.uc = Uc(UC_ARCH_ARM, UC_MODE_THUMB | UC_MODE_MCLASS)
        self.uc.ctl_set_cpu_model(UC_CPU_ARM_CORTEX_M33)  # must precede mem_map
        self.uc.mem_map(CODE_BASE, CODE_SIZE)
        self.uc.mem_map(RAM_BASE, RAM_SIZE)
        self.uc.mem_map(PPB_BASE, PPB_SIZE)
        with open(self.elf_path, "rb") as f:
            elf = ELFFile(f)
            self.segments = []
            for seg in elf.iter_segments():
                if seg["p_type"] == "PT_LOAD" and seg["p_filesz"]:
                    self.uc.mem_write(seg["p_paddr"], seg.data())
                    self.segments.append((seg["p_paddr"], seg["p_filesz"]))
            self.symbols = self._read_symbols(elf)
            entry = elf.header["e_entry"]
        self.entry = entry
        self.uc.mem_write(SENTINEL, b"\x00\xbf" * 8)  # nop
        # Code and read-only data are not writable (as in flash): a wild store raises Crash
        # instead of silently corrupting the image for every later run.
        self.uc.mem_protect(CODE_BASE, CODE_SIZE, UC_PROT_READ | UC_PROT_EXEC)
        self.output = bytearray()  # semihosting output
        self.exit_code: int | None = None
        self._fault: EmulationError | None = None
        self._brk = SCRATCH_BASE
        self._code_hooks: dict = {}
        self.uc.hook_add(UC_HOOK_INTR, self._on_interrupt)
        self._cs = Cs(CS_ARCH_ARM, CS_MODE_THUMB | CS_MODE_MCLASS)
        self._cs.detail = True

    # ----- symbols -------------------------------------------------------------------

    @staticmethod
    def _read_symbols(elf: ELFFile) -> list[Symbol]:
        raw = []
        for sec in elf.iter_sections():
            if not isinstance(sec, SymbolTableSection):
                continue
            for s in sec.iter_symbols():
                kind = s["st_info"]["type"]
                if kind not in ("STT_FUNC", "STT_OBJECT") or not s.name:
                    continue
                raw.append((s.name, s["st_value"], s["st_size"], kind == "STT_FUNC"))
        names = demangle([r[0] for r in raw])
        syms = {}
        for (name, value, size, func), dem in zip(raw, names):
            addr = value & ~1 if func else value
            syms[(addr, dem)] = Symbol(dem, name, addr, size, func)
        return sorted(syms.values(), key=lambda s: s.addr)

    def symbols_matching(self, text: str, functions_only: bool = True) -> list[Symbol]:
        """Every symbol whose demangled (or raw) name contains `text`."""
        return [s for s in self.symbols
                if (s.is_function or not functions_only) and (text in s.name or text == s.raw)]

    def symbol(self, text: str, functions_only: bool = True) -> Symbol:
        """The one symbol named exactly `text`, else the one containing it (error if 0 or >1)."""
        exact = [s for s in self.symbols if text in (s.name, s.raw)]
        if len(exact) == 1:
            return exact[0]
        found = self.symbols_matching(text, functions_only)
        if len(found) != 1:
            listing = "\n  ".join(s.name for s in found[:20])
            raise KeyError(f"{len(found)} symbols match {text!r}" + (f":\n  {listing}" if found else ""))
        return found[0]

    def symbol_at(self, addr: int) -> Symbol | None:
        """The function containing `addr`, if any."""
        addr &= ~1
        best = None
        for s in self.symbols:
            if s.is_function and s.addr <= addr < s.end:
                if best is None or s.size < best.size:
                    best = s
        return best

    # ----- memory ----------------------------------------------------------------------

    def read(self, addr: int, size: int) -> bytes:
        return bytes(self.uc.mem_read(addr, size))

    def write(self, addr: int, data: bytes) -> None:
        self.uc.mem_write(addr, bytes(data))

    def alloc(self, size: int, align: int = 8) -> int:
        """A zeroed scratch buffer of `size` bytes in RAM (freed by `reset_scratch`)."""
        addr = (self._brk + align - 1) & ~(align - 1)
        if addr + size > SCRATCH_END:
            raise MemoryError("scratch RAM exhausted")
        self._brk = addr + size
        self.uc.mem_write(addr, b"\x00" * size)
        return addr

    def put(self, data: bytes, align: int = 8) -> int:
        """Copies `data` into a fresh scratch buffer and returns its address."""
        addr = self.alloc(len(data), align)
        self.uc.mem_write(addr, bytes(data))
        return addr

    def reset_scratch(self) -> None:
        self._brk = SCRATCH_BASE

    def reg(self, name: str) -> int:
        return self.uc.reg_read(REGS[name])

    def set_reg(self, name: str, value: int) -> None:
        self.uc.reg_write(REGS[name], value & 0xFFFF_FFFF)

    # ----- state -----------------------------------------------------------------------

    def snapshot(self, regions: list[tuple[int, int]] | None = None) -> tuple:
        """RAM contents (all of it, or only the (address, size) `regions`, e.g. .bss, the
        scratch buffers and the top of the stack, which makes `restore` cheaper), scratch
        pointer and registers, for `restore`."""
        regs = tuple(self.uc.reg_read(r) for r in CALLEE_STATE)
        regions = regions or [(RAM_BASE, RAM_SIZE)]
        ram = [(a, self.read(a, n)) for a, n in regions]
        return (ram, self._brk, regs, bytes(self.output))

    def restore(self, snap: tuple) -> None:
        ram, brk, regs, output = snap
        for addr, data in ram:
            self.uc.mem_write(addr, data)
        self._brk = brk
        for r, v in zip(CALLEE_STATE, regs):
            self.uc.reg_write(r, v)
        self.output = bytearray(output)
        self.exit_code = None
        self._fault = None

    def checkpoint(self, regions: list[tuple[int, int]] | None = None) -> tuple:
        """Inside a code hook: the machine state before the current instruction (a snapshot
        plus the PC), for `resume`."""
        return (self.snapshot(regions), self.uc.reg_read(UC_ARM_REG_PC))

    def resume(self, cp: tuple, max_instructions: int = 50_000_000, until: int = SENTINEL) -> int:
        """Continues a `checkpoint` taken during a `call` until that call returns; returns r0.
        Raises Crash, Hang or Exited like `call`."""
        snap, pc = cp
        self.restore(snap)
        self._run(pc | 1, until, max_instructions)
        return self.uc.reg_read(UC_ARM_REG_R0)

    # ----- hooks -----------------------------------------------------------------------

    def hook_code(self, callback: Callable[["M33", int, int], None], lo: int, hi: int):
        """Calls `callback(m, address, size)` before each instruction in [lo, hi)."""
        handle = self.uc.hook_add(UC_HOOK_CODE, lambda _uc, a, s, _d: callback(self, a, s),
                                  begin=lo, end=hi - 1)
        # Hooks are compiled into translated blocks: drop the cached translation of the range.
        self.uc.ctl_remove_cache(lo, hi)
        self._code_hooks[handle] = (lo, hi)
        return handle

    def hook_mem(self, callback: Callable[["M33", bool, int, int, int], None], lo: int, hi: int,
                 read: bool = True, write: bool = True):
        """Calls `callback(m, is_write, address, size, value)` for data accesses in [lo, hi).
        For reads Unicorn reports value 0: read the memory in the callback if needed."""
        kinds = (UC_HOOK_MEM_READ if read else 0) | (UC_HOOK_MEM_WRITE if write else 0)
        handle = self.uc.hook_add(
            kinds, lambda _uc, acc, a, s, v, _d: callback(self, acc == UC_MEM_WRITE, a, s, v),
            begin=lo, end=hi - 1)
        self.uc.ctl_flush_tb()  # any cached block may access the range
        return handle

    def remove_hook(self, handle) -> None:
        self.uc.hook_del(handle)
        span = self._code_hooks.pop(handle, None)
        if span is not None:
            self.uc.ctl_remove_cache(*span)  # only the blocks that held the hook
        else:
            self.uc.ctl_flush_tb()

    def stop(self, error: EmulationError | None = None) -> None:
        """Stops the current run from inside a hook; `error` is raised by `call`/`run`."""
        if error is not None and self._fault is None:
            self._fault = error
        self.uc.emu_stop()

    def _on_interrupt(self, uc, intno, _data):
        pc = uc.reg_read(UC_ARM_REG_PC)
        if intno == EXCP_BKPT and bytes(uc.mem_read(pc, 2)) == b"\xab\xbe":
            op, arg = uc.reg_read(UC_ARM_REG_R0), uc.reg_read(UC_ARM_REG_R1)
            result = 0
            if op == SYS_OPEN:
                result = 1
            elif op == SYS_WRITE0:
                s = bytearray()
                while len(s) < 1 << 16:
                    c = uc.mem_read(arg + len(s), 1)
                    if c == b"\x00":
                        break
                    s += c
                self.output += s
            elif op == SYS_WRITE:
                _fd, buf, n = (int.from_bytes(uc.mem_read(arg + 4 * i, 4), "little") for i in range(3))
                self.output += uc.mem_read(buf, n)
            elif op in (SYS_EXIT, SYS_EXIT_EXTENDED):
                if op == SYS_EXIT_EXTENDED or arg >= RAM_BASE:
                    reason = int.from_bytes(uc.mem_read(arg, 4), "little")
                    code = int.from_bytes(uc.mem_read(arg + 4, 4), "little")
                    code = 0 if reason == ADP_STOPPED_APPLICATION_EXIT and code == 0 else (code or 1)
                else:
                    code = 0 if arg == ADP_STOPPED_APPLICATION_EXIT else 1
                self.exit_code = code
                self.stop(Exited(code))
                return
            uc.reg_write(UC_ARM_REG_R0, result)
            uc.reg_write(UC_ARM_REG_PC, (pc + 2) | 1)
            return
        self.stop(Crash(f"CPU exception {intno} at {pc:#010x}"))

    # ----- running ---------------------------------------------------------------------

    def call(self, fn, *args: int, max_instructions: int = 50_000_000, stack_top: int = STACK_TOP) -> int:
        """Calls `fn` (Symbol or address) with up to four integer arguments; returns r0.
        Raises Crash, Hang or Exited."""
        addr = fn.addr if isinstance(fn, Symbol) else fn & ~1
        if len(args) > 4:
            raise ValueError("at most four register arguments")
        for r, v in zip(ARG_REGS, args):
            self.uc.reg_write(r, v & 0xFFFF_FFFF)
        self.uc.reg_write(UC_ARM_REG_SP, stack_top)
        self.uc.reg_write(UC_ARM_REG_LR, SENTINEL | 1)
        self.uc.reg_write(UC_ARM_REG_XPSR, XPSR_THUMB)  # reset has Z set: clear the flags
        self._run(addr | 1, SENTINEL, max_instructions)
        return self.uc.reg_read(UC_ARM_REG_R0)

    def call_result(self, fn, *args: int, **kw) -> tuple[int, int]:
        """As `call`, returning (r0, r1) (e.g. a 64-bit or two-word result)."""
        r0 = self.call(fn, *args, **kw)
        return r0, self.uc.reg_read(UC_ARM_REG_R1)

    def run_image(self, max_instructions: int = 2_000_000_000) -> int:
        """Runs the image from reset (SP and PC from the vector table) until semihosting exit;
        returns the exit code."""
        sp = int.from_bytes(self.read(CODE_BASE, 4), "little")
        pc = int.from_bytes(self.read(CODE_BASE + 4, 4), "little")
        self.uc.reg_write(UC_ARM_REG_SP, sp)
        self.uc.reg_write(UC_ARM_REG_XPSR, XPSR_THUMB)
        try:
            self._run(pc | 1, 0xFFFF_FFFE, max_instructions)
        except Exited as e:
            return e.code
        raise Hang("image did not exit")

    def _run(self, begin: int, until: int, count: int) -> None:
        self._fault = None
        try:
            self.uc.emu_start(begin, until, count=count)
        except UcError as e:
            pc = self.uc.reg_read(UC_ARM_REG_PC)
            raise Crash(f"{e} at pc={pc:#010x}") from None
        if self._fault is not None:
            fault, self._fault = self._fault, None
            raise fault
        pc = self.uc.reg_read(UC_ARM_REG_PC) & ~1
        if pc != until:
            raise Hang(f"stopped at {pc:#010x} after the bound of {count} instructions")

    # ----- code ------------------------------------------------------------------------

    def disassemble(self, fn) -> list:
        """Capstone instructions (with detail) of a function (Symbol) or (lo, hi) range."""
        lo, hi = (fn.addr, fn.end) if isinstance(fn, Symbol) else fn
        return list(self._cs.disasm(self.read(lo, hi - lo), lo))

    def decode_one(self, addr: int):
        """The instruction at `addr` (capstone, with detail), or None."""
        for insn in self._cs.disasm(self.read(addr, 4), addr, count=1):
            return insn
        return None


def flags(xpsr: int) -> str:
    """'NZCV' letters of the set flags, '-' for clear ones."""
    return "".join(c if xpsr & b else "-" for c, b in zip("NZCV", (XPSR_N, XPSR_Z, XPSR_C, XPSR_V)))


def iter_calls(insns: Iterable) -> Iterable[tuple[int, int]]:
    """(address of a bl, target) for each direct call in `insns`."""
    for i in insns:
        if i.mnemonic == "bl" and i.op_str.startswith("#"):
            yield i.address, int(i.op_str[1:], 16)


if __name__ == "__main__":
    # Smoke test: `python3 security/emu/m33.py ELF` loads the image, lists the number of
    # symbols and calls rblwe's constant-time comparison on equal and unequal buffers.
    import sys

    machine = M33(sys.argv[1])
    compare = machine.symbol("rblwe::cpa::diff_forward")
    a = machine.put(bytes(range(32)))
    b = machine.put(bytes(range(31)) + b"\x00")
    equal, unequal = machine.call(compare, a, 32, a, 32), machine.call(compare, a, 32, b, 32)
    print(f"{len(machine.symbols)} symbols; diff_forward(equal) = {equal}, (unequal) = {unequal}")
    sys.exit(0 if equal == 0 and unequal == 31 else 1)
