"""Cortex-M0+ cycles of a run, from QEMU's execution trace and the core's documented
cycle counts per instruction class (not a flat cycles-per-instruction guess).

QEMU's -icount counts instructions; a Cortex-M0+ spends 1 to 5+ cycles on each. This
module reads a trace of qemu-system-arm run with `-d in_asm,exec,nochain` (each
translated block's disassembly once, then one line per executed block), replays the
blocks executed between two marks, and weighs each instruction with the table below. A
conditional branch counts as taken when the next block does not start right after
it.

    histogram(log, start_pc, firmware_end[, region_of]) -> Histogram
        the classes between the first and the last run of the block at start_pc
        (time.ticks_us(): the window the benchmark's two reads bracket), split into
        the native module's code and the firmware's (or by region_of(address): the
        module's functions, ModuleMap.region_of)
    native_signature(pairs[, functions=ModuleMap]) -> Histogram
        one ECDSA signature per pair with the Pico's native module on qemu-m0plus
        (traced without -icount: the same instructions, and QEMU's blocks are not cut
        by the instruction budget)

Cycle counts, zero wait states: ARM Cortex-M0+ Technical Reference Manual (ARM DDI
0484C), section 3.3 "Instruction set summary", Table 3-1. The multiplier is the
fast (single-cycle) one: the RP2040 configures its two Cortex-M0+ cores with it
(RP2040 Datasheet, section 2.4 "Cortex-M0+", the processor's configuration: "fast
multiplier"); the slow option takes 32 cycles per MULS.

    data processing (MOVS, ADDS, ADCS, SUBS, SBCS, RSBS, CMP, CMN, ANDS, EORS, ORRS,
        BICS, MVNS, TST, shifts and rotates, ADR, SXT*/UXT*, REV*, NOP, MOV, ADD)  1
    MOV/ADD with PC as destination                                            2
    MULS (fast multiplier)                                                     1
    LDR/LDRB/LDRH/LDRSB/LDRSH, STR/STRB/STRH (any addressing)                  2
    LDM, STM, PUSH, POP (N registers, LR or PC included)                    1+N
    POP including PC                                                         3+N
    B<cond>: not taken / taken                                               1/2
    B, BX, BLX                                                                  2
    BL                                                                          3
    MRS, MSR, DMB, DSB, ISB                                                     3
        (none of these runs while the module signs; anything else unlisted is an error)

Where the code runs on a real Pico: MicroPython loads a native .mpy module's code
into its heap (the GC heap in the RP2040's striped SRAM, zero wait states), so the
native module's instructions take the table's cycles. MicroPython itself (the
bytecode interpreter, the runtime the module calls) executes in place from QSPI
flash through the RP2040's 16 KB XIP cache: hits are free, misses cost tens of
cycles, which no table gives; its share is reported separately ("firmware").
"""
from __future__ import annotations

import re
import subprocess
import tempfile
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

# mnemonics as QEMU's disassembler prints them, by class (insn_class gives the cycles)
_ONE = ("movs mov adds adcs add adr subs sub sbcs rsbs cmp cmn ands eors orrs bics mvns tst lsls lsrs "
        "asrs rors sxtb sxth uxtb uxth rev rev16 revsh nop muls cpsid cpsie").split()
_MEMORY = "ldr ldrb ldrh ldrsb ldrsh str strb strh".split()
_MULTIPLE = "ldm ldmia stm stmia push pop".split()
_SYSTEM = "mrs msr dmb dsb isb".split()
_CONDITIONS = "eq ne cs hs cc lo mi pl vs vc hi ls ge lt gt le".split()

_INSN = re.compile(r"^0x([0-9a-f]{8}):  ([0-9a-f]{4}(?: [0-9a-f]{4})?)\s+(\S+)\s*(.*)$")
_TRACE = re.compile(r"^Trace \d+: \S+ \[[0-9a-f]+/([0-9a-f]+)/")


@dataclass(frozen=True)
class Insn:
    addr: int
    size: int
    mnemonic: str
    operands: str


def _registers(operands: str) -> list[str]:
    found = re.search(r"\{([^}]*)\}", operands)
    assert found, operands
    regs: list[str] = []
    for part in found.group(1).split(","):
        part = part.strip()
        if "-" in part:                       # r4-r7
            lo, hi = (int(p.strip()[1:]) for p in part.split("-"))
            regs += [f"r{i}" for i in range(lo, hi + 1)]
        elif part:
            regs.append(part)
    return regs


def _writes_pc(operands: str) -> bool:
    return operands.split(",")[0].strip() == "pc"


def insn_class(insn: Insn, taken: bool) -> tuple[str, int]:
    """(class name, cycles) of one executed instruction; taken: for a branch, whether
    execution went on somewhere else than the next instruction."""
    m = insn.mnemonic
    if m in ("mov", "add") and _writes_pc(insn.operands):
        return "mov/add pc", 2
    if m == "muls":
        return "muls", 1
    if m in _ONE:
        return "alu", 1
    if m in _MEMORY:
        return ("ldr" if m.startswith("ldr") else "str"), 2
    if m in _MULTIPLE:
        n = len(_registers(insn.operands))
        if m == "pop" and "pc" in _registers(insn.operands):
            return "pop pc", 3 + n
        return ("ldm/pop" if m in ("ldm", "ldmia", "pop") else "stm/push"), 1 + n
    if m == "bl":
        return "bl", 3
    if m in ("bx", "blx"):
        return m, 2
    if m == "b":
        return "b", 2
    if m.startswith("b") and m[1:] in _CONDITIONS:
        return ("b<c> taken", 2) if taken else ("b<c> not taken", 1)
    if m in _SYSTEM:
        return "system", 3
    raise ValueError(f"no Cortex-M0+ cycle count for {insn}")


@dataclass
class Histogram:
    """Executed instructions and cycles per class, split by where the code runs."""
    instructions: Counter = field(default_factory=Counter)   # (region, class) -> count
    cycles: Counter = field(default_factory=Counter)         # (region, class) -> cycles

    def total(self, what: str = "instructions", region: str | None = None) -> int:
        counter = self.instructions if what == "instructions" else self.cycles
        return sum(v for (r, _), v in counter.items() if region is None or r == region)

    def classes(self, region: str | None = None) -> dict[str, tuple[int, int]]:
        """{class: (instructions, cycles)}, most cycles first."""
        out: dict[str, list[int]] = {}
        for (r, c), n in self.instructions.items():
            if region is None or r == region:
                cell = out.setdefault(c, [0, 0])
                cell[0] += n
                cell[1] += self.cycles[(r, c)]
        return {c: (v[0], v[1]) for c, v in sorted(out.items(), key=lambda kv: -kv[1][1])}


def histogram(log: Path, start_pc: int, firmware_end: int,
              region_of: Callable[[int], str] | None = None) -> Histogram:
    """The classes of the instructions executed between the first and the last
    execution of the block at start_pc (exclusive of the marks' own blocks); code at or
    above firmware_end (the firmware image's _etext: the heap) is the native module's.
    The last, not the second: QEMU logs a block again when an interrupt came between
    its log line and its first instruction, so one call can leave two marks.
    region_of: the region of an instruction's address instead (tests/bench/
    bench_natmod_functions.py: the module's function it belongs to)."""
    if region_of is None:
        def region_of(addr: int) -> str:
            return "module" if addr >= firmware_end else "firmware"
    blocks: dict[int, list[Insn]] = {}
    hist = Histogram()
    segment = Histogram()               # since the latest mark: counted if another follows
    pending: list[Insn] | None = None   # the block before the current one, its last insn open
    marks = 0
    current: list[Insn] | None = None
    with open(log, errors="replace") as f:
        for line in f:
            if line.startswith("0x"):
                m = _INSN.match(line)
                if m:
                    insn = Insn(int(m.group(1), 16), len(m.group(2).replace(" ", "")) // 2, m.group(3),
                                m.group(4))
                    if current is None or (current and current[-1].addr + current[-1].size != insn.addr):
                        current = []
                        blocks[insn.addr] = current
                    current.append(insn)
                continue
            if line.startswith("IN:") or not line.strip() or line.startswith("---"):
                current = None
                continue
            t = _TRACE.match(line)
            if not t:
                continue
            pc = int(t.group(1), 16)
            if pc == start_pc:
                if pending is not None:
                    _count_last(segment, pending, pc, region_of)
                if marks:
                    hist.instructions.update(segment.instructions)
                    hist.cycles.update(segment.cycles)
                segment, pending = Histogram(), None
                marks += 1
                continue
            if not marks:
                continue
            if pending is not None:
                _count_last(segment, pending, pc, region_of)
            block = blocks[pc]
            for insn in block[:-1]:
                _count(segment, insn, False, region_of)
            pending = block
    if marks < 2:
        raise ValueError(f"the block at {start_pc:#x} ran {marks} times in {log}")
    return hist


def _count(hist: Histogram, insn: Insn, taken: bool, region_of: Callable[[int], str]) -> None:
    region = region_of(insn.addr)
    name, cycles = insn_class(insn, taken)
    hist.instructions[(region, name)] += 1
    hist.cycles[(region, name)] += cycles


def _count_last(hist: Histogram, block: list[Insn], next_pc: int, region_of: Callable[[int], str]) -> None:
    last = block[-1]
    _count(hist, last, next_pc != last.addr + last.size, region_of)


_SIGN = """t = time.ticks_us()
for p in pairs:
    ecdsa.sign(*p)
t = time.ticks_us()
"""


def _symbol(elf: Path, name: str) -> int:
    out = subprocess.run(["arm-none-eabi-nm", str(elf)], capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[2] == name:
            return int(parts[0], 16)
    raise KeyError(f"{name} not in {elf}")


def native_signature(pairs: list[tuple[bytes, bytes]], target: str = "qemu-m0plus",
                     module: Path | None = None, functions: ModuleMap | None = None) -> Histogram:
    """The instruction classes of ecdsa.sign over pairs (the firmware with the native
    module, the board's by default; one warm-up signature first), between the two
    time.ticks_us() reads. functions: the module's symbols (bench_natmod_functions.py);
    the regions are then the module's functions (and "firmware")."""
    from quill.emulator import qemu
    from quill.emulator.launcher import romfs_image

    module = module or qemu.native_module(target, "native")
    assert module is not None
    elf = qemu.build(target)
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "trace.log"
        board = qemu.Board(target, None, icount=False, romfs=romfs_image(extra=[module]), trace=log)
        try:
            board.enter_raw_repl()
            out, err = board.exec("import sys, time\nsys.path.insert(0, '/rom')\n"
                                  "from quillfw.crypto import ecdsa\npairs = %r\necdsa.sign(*pairs[0])\n"
                                  "import quill_secp256k1\nprint('ANCHOR', id(quill_secp256k1.ecdsa_sign))\n"
                                  % (pairs,))
            anchor = re.search(r"ANCHOR (\d+)", out)
            if not err:
                out, err = board.exec(_SIGN, timeout=900)
        finally:
            board.close()
        if err or not anchor:
            raise RuntimeError(f"{target}: {out[-500:]} {err[-1500:]}")
        etext = _symbol(elf, "_etext")
        region_of = functions.region_of(int(anchor.group(1)), etext) if functions else None
        # the block QEMU translates for time.ticks_us() starts at the function (Thumb bit clear)
        return histogram(log, _symbol(elf, "time_ticks_us") & ~1, etext, region_of)


@dataclass
class ModuleMap:
    """Where a native module's functions are in its text: (offset, name) sorted, and
    the offset of the function object whose id() the board prints (the load base)."""
    functions: list[tuple[int, str]]
    anchor_offset: int

    def region_of(self, anchor_address: int, firmware_end: int) -> Callable[[int], str]:
        import bisect

        base = anchor_address - self.anchor_offset
        starts = [o for o, _ in self.functions]

        def region(addr: int) -> str:
            if addr < firmware_end:
                return "firmware"
            i = bisect.bisect_right(starts, addr - base) - 1
            return self.functions[i][1] if i >= 0 else "module ?"
        return region
