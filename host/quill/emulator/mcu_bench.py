"""Instruction counts of the firmware's hot paths on a Cortex-M target (QEMU's
-icount shift=0: deterministic, independent of the machine's load), and their
time on the real chips.

    counts(target="qemu-m0plus") -> {name: instructions}
    python -m quill.emulator.mcu_bench [--target T ...] [--json]

One board boots per target and runs every case in it; a case's count is the
instructions between two time.ticks_us() reads (1 us = 1,000 instructions),
divided by its repetitions. Milliseconds on a chip = instructions x CPI / clock,
the clock the board's MicroPython runs at (boards/<board>/board.json "clock_hz"),
with these cycles-per-instruction assumptions for MicroPython's bytecode loop
(loads, branches and multi-cycle multiplies dominate):

    RP2040 (Cortex-M0+, 125 MHz, XIP flash behind a 16 KB cache)   CPI 1.5
    STM32F405 (Cortex-M4, 168 MHz, flash with the ART accelerator)  CPI 1.3

For the Pico's native module these are an overestimate: its code runs from SRAM
(MicroPython copies a native .mpy into the heap) and the RP2040's MULS takes one
cycle, so tests/bench/m0plus_cycles.py weighs a traced signature's instructions
with the Cortex-M0+'s cycles per class instead (1.277 per instruction for ECDSA;
tests/bench/bench_mcu_icount.py prints both).

ECDSA is Core's CKey::Sign with low-R grinding: a signature tries RFC6979 nonces
until R's top bit is clear, each nonce's R being high with probability 1/2, so
it takes 2 nonces on average. The "grind" case signs the first pairs of a fixed
chain of keys and messages whose mean nonce count is within 5 % of 2
(grinding_sample; nonce_attempts counts them on the host with the firmware's own
code); the "1 nonce" and "2 nonces" cases sign pairs that take exactly that
many, so one more nonce costs their difference and an average signature costs
the "2 nonces" figure (attempt_cost).
"""
from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
from functools import cache
from pathlib import Path

from quill.emulator import models, qemu

# target -> (chip, cycles per instruction); the clock is the board's (board.json clock_hz)
CHIPS = {"qemu-m0plus": ("RP2040", 1.5), "qemu-m4": ("STM32F405", 1.3)}
EXPECTED_NONCES = 2            # Core's grinding: a geometric number of nonces with p = 1/2
NONCE_TOLERANCE = 0.05         # the grind sample's mean nonce count is within 5 % of it
MIN_SAMPLE = 16


def clock_hz(target: str) -> int:
    """The clock of the board the target stands for (boards/<board>/board.json)."""
    return models.load(qemu.TARGET_BOARDS[target][0]).clock_hz


def chain(seed: bytes, n: int) -> list[bytes]:
    """n valid secp256k1 scalars (keys, or messages): SHA-256 iterated from seed."""
    from quillfw.crypto.secp256k1 import N
    out: list[bytes] = []
    h = seed
    while len(out) < n:
        h = hashlib.sha256(h).digest()
        if 0 < int.from_bytes(h, "big") < N:
            out.append(h)
    return out


def nonce_attempts(secret32: bytes, msg32: bytes) -> int:
    """How many RFC6979 nonces Core's CKey::Sign tries for this key and message: the first
    without extra entropy, then one per grinding round (counter 1, 2, ...) while R is high.
    Computed here with the firmware's own nonce code (quillfw.crypto.ecdsa, under CPython)."""
    from quillfw.crypto import ecdsa
    from quillfw.crypto import secp256k1 as ec
    d = ec.scalar_from_secret(secret32)
    z = int.from_bytes(msg32, "big") % ec.N
    attempts, extra = 1, None
    while ecdsa._nonce_and_r(d, z, secret32, msg32, extra)[1] >= ecdsa._HIGH_R:
        extra = attempts.to_bytes(4, "little") + bytes(28)
        attempts += 1
    return attempts


@cache
def _pairs(n: int) -> tuple[tuple[bytes, bytes, int], ...]:
    """The chain's first n (key, message, nonces) triples."""
    keys, msgs = chain(b"quill bench keys", n), chain(b"quill bench msgs", n)
    return tuple((k, m, nonce_attempts(k, m)) for k, m in zip(keys, msgs, strict=True))


def grinding_sample(min_count: int = MIN_SAMPLE, limit: int = 2000) -> list[tuple[bytes, bytes]]:
    """The chain's first n >= min_count (key, message) pairs whose mean nonce count is within
    NONCE_TOLERANCE of EXPECTED_NONCES: the grinding rate Core's signatures have on average."""
    total = 0
    for n, (_, _, attempts) in enumerate(_pairs(limit), 1):
        total += attempts
        if n >= min_count and abs(total / n - EXPECTED_NONCES) <= NONCE_TOLERANCE * EXPECTED_NONCES:
            return [(k, m) for k, m, _ in _pairs(limit)[:n]]
    raise RuntimeError(f"no prefix of {limit} pairs grinds at the expected rate")


def pairs_taking(nonces: int, count: int) -> list[tuple[bytes, bytes]]:
    """The chain's first count (key, message) pairs that take exactly this many nonces."""
    found = [(k, m) for k, m, attempts in _pairs(200) if attempts == nonces][:count]
    assert len(found) == count
    return found


def mean_nonces(pairs: list[tuple[bytes, bytes]]) -> float:
    return sum(nonce_attempts(k, m) for k, m in pairs) / len(pairs)


def _ecdsa_case(pairs: list[tuple[bytes, bytes]]) -> tuple[str, str, int]:
    return ("from quillfw.crypto import ecdsa\npairs = %r\n" % (pairs,), "ecdsa.sign(*pairs[_i])", len(pairs))


# name -> (setup code, measured code, repetitions). The setup builds a 3-input,
# 2-output transaction's digests; the measured code runs `reps` times.
CASES = {
    "ecdsa_sign_grind": _ecdsa_case(grinding_sample()),
    "ecdsa_sign_1_nonce": _ecdsa_case(pairs_taking(1, 4)),
    "ecdsa_sign_2_nonces": _ecdsa_case(pairs_taking(2, 4)),
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
NATIVE_CASES = ("ecdsa_sign_grind", "ecdsa_sign_1_nonce", "ecdsa_sign_2_nonces", "schnorr_sign", "boot_selftest")


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


def milliseconds(target: str, instructions: float) -> float:
    return instructions * CHIPS[target][1] / clock_hz(target) * 1000


def attempt_cost(found: dict[str, int]) -> tuple[int, int]:
    """(instructions of one more nonce, of a signature at Core's average 2 nonces)."""
    return found["ecdsa_sign_2_nonces"] - found["ecdsa_sign_1_nonce"], found["ecdsa_sign_2_nonces"]


def table(results: dict[str, dict[str, int]]) -> str:
    header = ["case"]
    for target in results:
        chip = CHIPS[target][0]
        header += [f"{target} instr", f"{chip} ms ({clock_hz(target) / 1e6:g} MHz)"]
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
    lines.append(f"ecdsa_sign_grind: {len(grinding_sample())} signatures, "
                 f"{mean_nonces(grinding_sample()):.3f} nonces each on average (Core's: {EXPECTED_NONCES})")
    for target, found in results.items():
        attempt, two = attempt_cost(found)
        lines.append(f"{target}: one more nonce {attempt:,} instructions ({milliseconds(target, attempt):.2f} ms); "
                     f"a signature at 2 nonces {two:,} ({milliseconds(target, two):.2f} ms)")
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
