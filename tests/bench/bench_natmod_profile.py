"""Where the native module's instructions go on the Cortex-M0+ (RP2040 model).

    .venv/bin/python -m tests.bench.bench_natmod_profile

Runs the profiling build of quill_secp256k1 (natmod.build(..., profile=True): the
Pico's tables, with call counters in the ARMv6-M field multiplication, squaring and
64-bit product) on qemu-m0plus under QEMU -icount. It measures what one call of each
costs (a loop of them, less the empty loop), counts the calls one operation makes,
and splits each operation's instructions into field multiplications, squarings,
64-bit products (the scalar arithmetic's, and verification's variable-time inverses;
the constant-time ones multiply inline, quill_modinv_armv6m.S) and the rest (the
comb's table lookups, the inverses, SHA-256 for RFC6979 and BIP340, normalization,
additions, the MicroPython call). tests/bench/bench_natmod_functions.py gives every
function's cycles instead. The counters themselves add a few instructions per
call, so the totals are ~1 % above the production build's.
"""
import re
import sys

from boards import boardspec
from quill.emulator import mcu_bench, natmod, qemu

TARGET = "qemu-m0plus"
REPS = 200

SCRIPT = r"""
import sys, time
sys.path.insert(0, '/rom')
import quill_secp256k1 as q
k = bytes(31) + b'\x07'
m = bytes(range(32))
pub = q.pubkey(k)
sig = q.ecdsa_sign(k, m, None)
def run(name, f, n):
    q.profile_counts()
    t = time.ticks_us()
    for _ in range(n):
        f()
    dt = time.ticks_diff(time.ticks_us(), t) * 1000 // n
    c = q.profile_counts()
    print('OP', name, dt, c[0] // n, c[1] // n, c[2] // n)
for op, name in ((0, 'fe_mul'), (1, 'fe_sqr'), (2, 'lmul'), (3, 'loop')):
    t = time.ticks_us()
    q.profile_run(op, %(reps)d)
    print('UNIT', name, time.ticks_diff(time.ticks_us(), t) * 1000 // %(reps)d)
run('pubkey (k*G, affine, serialize)', lambda: q.pubkey(k), 4)
run('ecdsa_sign (one nonce)', lambda: q.ecdsa_sign(k, m, None), 4)
run('ecdsa_sign_grind (one nonce)', lambda: q.ecdsa_sign_grind(k, m), 4)
run('schnorr_sign (keypair + sign)', lambda: q.schnorr_sign(k, m, bytes(32)), 4)
run('ecdsa_verify', lambda: q.ecdsa_verify(b'\x04' + pub, m, sig), 2)
"""


def main():
    spec = boardspec.load("rpi_pico").natmod
    module = natmod.build("armv6m", spec["ecmult_gen_kb"], spec["ecmult_window_size"], profile=True)
    board = qemu.Board(TARGET, None, icount=True, romfs=qemu.romfs_of({module.name: module.read_bytes()}))
    try:
        board.enter_raw_repl()
        out, err = board.exec(SCRIPT % {"reps": REPS}, timeout=900)
    finally:
        board.close()
    if err:
        print(err, file=sys.stderr)
        return 1
    out = out.replace("\r", "")
    unit = {name: int(v) for name, v in re.findall(r"^UNIT (\S+) (\d+)", out, re.M)}
    cost = {name: unit[name] - unit["loop"] for name in ("fe_mul", "fe_sqr", "lmul")}
    print(f"{TARGET} (RP2040 model), quill_secp256k1 for rpi_pico ({spec['ecmult_gen_kb']} KB comb, "
          f"window {spec['ecmult_window_size']}), profiling build")
    print("instructions per call: " + ", ".join(f"{k} {v:,}" for k, v in cost.items()))
    head = "%-34s %11s %8s %13s %13s %13s %8s" % ("operation", "instr", "RP2040 ms", "fe_mul",
                                                  "fe_sqr", "64-bit mul", "rest")
    print(head)
    print("-" * len(head))
    for name, total, muls, sqrs, lmuls in re.findall(r"^OP (.+?) (\d+) (\d+) (\d+) (\d+)$", out, re.M):
        total, muls, sqrs, lmuls = int(total), int(muls), int(sqrs), int(lmuls)
        parts = [muls * cost["fe_mul"], sqrs * cost["fe_sqr"], lmuls * cost["lmul"]]
        rest = total - sum(parts)
        cells = [f"{n:,}x {100 * p / total:4.1f}%" for n, p in zip((muls, sqrs, lmuls), parts, strict=True)]
        print("%-34s %11s %8.2f %13s %13s %13s %7.1f%%" % (name, f"{total:,}", mcu_bench.milliseconds(TARGET, total),
                                                         *cells, 100 * rest / total))
    return 0


if __name__ == "__main__":
    sys.exit(main())
