"""tests/bench/m0plus_cycles.py: a hand-made QEMU trace replayed and weighed with the
Cortex-M0+ cycle table (taken and not-taken branches, POP with PC, LDM's registers,
the window between two marks, module and firmware code)."""
from pathlib import Path

import pytest

from tests.bench import m0plus_cycles as mc

# Blocks as `-d in_asm` prints them, then `-d exec,nochain` lines. The mark is the
# block at 0x100; the module's code starts at 0x1000.
LOG = """----------------
IN: mark
0x00000100:  4770       bx       lr

----------------
IN:
0x00001000:  b510       push     {r4, lr}
0x00001002:  4343       muls     r3, r0, r3
0x00001004:  6808       ldr      r0, [r1]
0x00001006:  c90c       ldm      r1!, {r2, r3}
0x00001008:  2a00       cmp      r2, #0
0x0000100a:  d001       beq      #0x1010

Trace 0: 0x7f0000000100 [00800400/00000100/00000110/ff000200] mark
Trace 0: 0x7f0000000200 [00800400/00001000/00000110/ff000200]
----------------
IN:
0x0000100c:  f000 f800  bl       #0x1010

Trace 0: 0x7f0000000300 [00800400/0000100c/00000110/ff000200]
----------------
IN:
0x00001010:  bd10       pop      {r4, pc}

Trace 0: 0x7f0000000400 [00800400/00001010/00000110/ff000200]
Trace 0: 0x7f0000000200 [00800400/00001000/00000110/ff000200]
Trace 0: 0x7f0000000400 [00800400/00001010/00000110/ff000200]
----------------
IN: fw
0x00000200:  2001       movs     r0, #1

Trace 0: 0x7f0000000500 [00800400/00000200/00000110/ff000200] fw
Trace 0: 0x7f0000000100 [00800400/00000100/00000110/ff000200] mark
Trace 0: 0x7f0000000200 [00800400/00001000/00000110/ff000200]
"""


def test_trace_is_weighed_by_class(tmp_path: Path):
    log = tmp_path / "trace.log"
    log.write_text(LOG)
    hist = mc.histogram(log, 0x100, 0x1000)
    classes = hist.classes("module")
    # block 0x1000 twice: beq not taken (next block 0x100c), then taken (next 0x1010)
    assert classes["b<c> not taken"] == (1, 1)
    assert classes["b<c> taken"] == (1, 2)
    assert classes["stm/push"] == (2, 2 * 3)          # push {r4, lr}: 1 + 2
    assert classes["ldm/pop"] == (2, 2 * 3)           # ldm r1!, {r2, r3}: 1 + 2
    assert classes["pop pc"] == (2, 2 * 5)            # pop {r4, pc}: 3 + 2
    assert classes["bl"] == (1, 3)
    assert classes["ldr"] == (2, 4)
    assert classes["muls"] == (2, 2)
    assert classes["alu"] == (2, 2)                   # the cmp, twice
    assert hist.classes("firmware") == {"alu": (1, 1)}
    # the mark's own block and everything after its second run are outside the window
    assert hist.total() == 2 * 6 + 1 + 2 * 1 + 1
    assert hist.total("cycles") == 1 + 2 + 6 + 6 + 10 + 3 + 4 + 2 + 2 + 1


def test_an_unknown_instruction_is_an_error():
    with pytest.raises(ValueError, match="no Cortex-M0\\+ cycle count"):
        mc.insn_class(mc.Insn(0x1000, 2, "udf", "#0"), False)


def test_mark_must_run_twice(tmp_path: Path):
    log = tmp_path / "trace.log"
    log.write_text(LOG.replace("] mark\n", "] elsewhere\n").replace("/00000100/", "/00000104/"))
    with pytest.raises(ValueError, match="ran 0 times"):
        mc.histogram(log, 0x100, 0x1000)


def test_a_traced_signature_counts_what_icount_counts():
    """One native ECDSA signature traced on the Cortex-M0+ target: the replayed window
    holds as many instructions as QEMU's -icount measures for the same signature (the
    window and the replay are right), nearly all of them the module's, at a cycles per
    instruction between the core's extremes. ~30 s."""
    from quill.emulator import mcu_bench, natmod, qemu
    from tests.kit.qemu import MCU_TARGET, qemu_target
    from tests.kit.toolchains import unavailable

    qemu_target(MCU_TARGET)
    try:
        module = qemu.native_module(MCU_TARGET, "native")
    except natmod.NatmodUnavailable as exc:
        unavailable(f"cannot build the native crypto module: {exc}")
    assert module is not None
    pairs = mcu_bench.pairs_taking(2, 1)
    hist = mc.native_signature(pairs, MCU_TARGET, module)
    setup = "from quillfw.crypto import ecdsa\npairs = %r\necdsa.sign(*pairs[0])\n" % (pairs,)
    icount = mcu_bench.counts(MCU_TARGET, cases={"sign": (setup, "ecdsa.sign(*pairs[0])", 1)},
                              native=module)["sign"]
    # ticks_us() has a 1 us (1,000 instruction) resolution under -icount
    assert abs(hist.total() - icount) <= 0.01 * icount, (hist.total(), icount)
    assert hist.total(region="module") > 0.9 * hist.total()
    cpi = hist.total("cycles") / hist.total()
    assert 1.1 < cpi < 1.8, cpi
    assert hist.classes()["muls"][0] > 100_000       # the field code's products ran


def test_trace_is_split_by_function(tmp_path: Path):
    """A module map (bench_natmod_functions.py's): each instruction goes to the function
    whose start is the nearest at or below its offset from the load base."""
    log = tmp_path / "trace.log"
    log.write_text(LOG)
    functions = mc.ModuleMap([(0x0, "first"), (0xC, "second")], anchor_offset=0x20)
    hist = mc.histogram(log, 0x100, 0x1000, functions.region_of(0x1020, 0x1000))
    assert hist.total(region="first") == 2 * 6            # block 0x1000, twice
    assert hist.total(region="second") == 1 + 2           # the bl, the pop twice
    assert hist.total(region="firmware") == 1
    assert hist.classes("second")["pop pc"] == (2, 2 * 5)
