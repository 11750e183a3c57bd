"""Instruction counts of the firmware's hot paths on a Cortex-M target (QEMU's
-icount shift=0: deterministic, independent of the machine's load), and their
time on the real chips.

    counts(target="qemu-m0plus") -> {name: instructions}
    python -m quill.emulator.mcu_bench [--target T ...] [--json]

One board boots per target and runs every case in it; a case's count is the
instructions between two time.ticks_us() reads (1 us = 1,000 instructions),
divided by its repetitions. Milliseconds on a chip = instructions x CPI / clock,
with these cycles-per-instruction assumptions for MicroPython's bytecode loop
(loads, branches and multi-cycle multiplies dominate):

    RP2040 (Cortex-M0+, 133 MHz, XIP flash behind a 16 KB cache)   CPI 1.5
    STM32F405 (Cortex-M4, 168 MHz, flash with the ART accelerator)  CPI 1.3
"""
from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

from quill.emulator import qemu

CHIPS = {"qemu-m0plus": ("RP2040", 133e6, 1.5), "qemu-m4": ("STM32F405", 168e6, 1.3)}

# name -> (setup code, measured code, repetitions). The setup builds a 3-input,
# 2-output transaction's digests; the measured code runs `reps` times.
CASES = {
    "ecdsa_sign_grind": (
        "from quillfw.crypto import ecdsa\nsk = bytes(31) + b'\\x07'\nmsg = bytes(range(32))\n",
        "ecdsa.sign(sk, msg)", 3),
    "schnorr_sign": (
        "from quillfw.crypto import schnorr\nsk = bytes(31) + b'\\x07'\nmsg = bytes(range(32))\n",
        "schnorr.sign(sk, msg, bytes(32))", 3),
    "bip143_sighash_input": (
        "from quillfw.sighash.txdigests import TxDigests\nfrom quillfw.sighash import segwit_v0\n"
        "d = TxDigests(2, 0, spent_outputs=False)\n"
        "for i in range(3):\n    d.add_input(bytes([i]) * 32, i, 0xfffffffd)\n"
        "for i in range(2):\n    d.add_output(1000 + i, b'\\x00\\x14' + bytes(20))\nd.finish()\n"
        "code = b'\\x76\\xa9\\x14' + bytes(20) + b'\\x88\\xac'\n",
        "segwit_v0.sighash(d, 1, bytes([1]) * 32, 1, 0xfffffffd, code, 5000, 1)", 20),
    "bip341_sighash_input": (
        "from quillfw.sighash.txdigests import TxDigests\nfrom quillfw.sighash import taproot\n"
        "d = TxDigests(2, 0)\n"
        "for i in range(3):\n    d.add_input(bytes([i]) * 32, i, 0xfffffffd, 5000, b'\\x51\\x20' + bytes(32))\n"
        "for i in range(2):\n    d.add_output(1000 + i, b'\\x00\\x14' + bytes(20))\nd.finish()\n",
        "taproot.sighash(d, 1, 0)", 20),
    "session_add_input": (
        "from quillfw.signing.session import Session\ns = Session()\n"
        "s.begin(2, 0, 40, 1, ['segwit_v0'])\nspk = b'\\x00\\x14' + bytes(20)\nn = [0]\n",
        "s.add_input(bytes([n[0]]) * 32, n[0], 0xfffffffd, 5000, spk); n[0] += 1", 40),
    "boot_selftest": (
        "from quillfw.board import selftest\n", "selftest.run()", 1),
}

_CASE = """
{setup}
import gc as _gc
_gc.collect()
_t0 = _t.ticks_us()
for _i in range({reps}):
    {code}
print('CASE {name}', _t.ticks_diff(_t.ticks_us(), _t0) * 1000 // {reps})
"""


# the cases the native crypto module changes (native_counts)
NATIVE_CASES = ("ecdsa_sign_grind", "schnorr_sign", "boot_selftest")


def counts(target: str = "qemu-m0plus", heap: int | None = None, cases: dict | None = None,
           native: Path | None = None) -> dict[str, int]:
    """{case: instructions per run} on the target (one boot for all cases); native: the
    crypto module to put beside the firmware (which then signs with it)."""
    cases = cases or CASES
    romfs = None
    if native is not None:
        from quill.emulator.launcher import romfs_image
        romfs = romfs_image(extra=[native])
    board = qemu.Board(target, heap, icount=True, romfs=romfs)
    found: dict[str, int] = {}
    try:
        board.enter_raw_repl()
        board.exec("import sys, time as _t\nsys.path.insert(0, '/rom')\n")
        for name, (setup, code, reps) in cases.items():
            out, err = board.exec(_CASE.format(setup=setup, code=code, reps=reps, name=name), timeout=900)
            match = re.search(r"^CASE (\S+) (\d+)", out, re.M)
            if err or not match:
                raise RuntimeError(f"{name} on {target}: {out[-500:]} {err[-1500:]}")
            found[name] = int(match.group(2))
            board.exec("for _m in [k for k in sys.modules if k.startswith('quillfw')]:\n"
                       "    del sys.modules[_m]\n_gc.collect()\n")
    finally:
        board.close()
    return found


def native_counts(target: str = "qemu-m0plus") -> dict[str, int]:
    """NATIVE_CASES' counts with the target's board's native module (qemu.native_module)."""
    module = qemu.native_module(target, "native")
    assert module is not None
    return counts(target, cases={name: CASES[name] for name in NATIVE_CASES}, native=module)


def milliseconds(target: str, instructions: int) -> float:
    _, clock, cpi = CHIPS[target]
    return instructions * cpi / clock * 1000


def table(results: dict[str, dict[str, int]]) -> str:
    header = ["case"]
    for target in results:
        chip = CHIPS[target][0]
        header += [f"{target} instr", f"{chip} ms"]
    rows = [header]
    for name in CASES:
        row = [name]
        for target, found in results.items():
            row += [f"{found[name]:,}", f"{milliseconds(target, found[name]):.2f}"]
        rows.append(row)
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    lines = [" | ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths, strict=True)))
             for r in rows]
    lines.insert(1, "-+-".join("-" * w for w in widths))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m quill.emulator.mcu_bench", description=__doc__.split("\n\n")[0])
    parser.add_argument("--target", action="append", choices=sorted(CHIPS))
    parser.add_argument("--json", action="store_true", help="print {target: {case: instructions}}")
    args = parser.parse_args(argv)
    results = {t: counts(t) for t in (args.target or sorted(CHIPS, reverse=True))}
    print(json.dumps(results, indent=1, sort_keys=True) if args.json else table(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
