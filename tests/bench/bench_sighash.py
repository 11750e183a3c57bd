"""Sighash throughput per input for legacy, BIP143 and BIP341, under CPython
and the MicroPython unix port.

    .venv/bin/python -m tests.bench.bench_sighash [n_inputs ...]

The same file is the worker: CPython runs it in-process and again under
`micropython` (firmware as .py on sys.path, default 2 MiB heap). Per algorithm
it signs-hashes every input of a synthetic transaction with n inputs and 2
outputs, through the streamed code the device uses:
  legacy   one LegacyHasher pass over the whole tx per input (O(n) per input)
  bip143   TxDigests built once, then sighash_segwit_v0.sighash per input
  bip341   TxDigests (with spent outputs) once, then sighash_taproot.sighash
Figures are microseconds per input, the digests' cost included (amortized);
median of 5 runs. The pip wrapper's bytecode speed is close to a native unix
build; see shared/research/micropython-probe.md before extrapolating to a board.
"""
import sys

IS_MICROPYTHON = sys.implementation.name == "micropython"
DEFAULT_SIZES = (10, 100, 500)


def _clock():
    import time
    if IS_MICROPYTHON:
        return time.ticks_us, lambda a, b: time.ticks_diff(b, a)
    return (lambda: int(time.perf_counter() * 1e6)), (lambda a, b: b - a)


def _tx(n):
    spk = b"\x51\x20" + b"\x11" * 32
    inputs = [(bytes((i % 251, i // 251)) + bytes(30), i % 3, 0xFFFFFFFD) for i in range(n)]
    spent = [(100000 + i, spk) for i in range(n)]
    outputs = [(5000, b"\x00\x14" + b"\x22" * 20), (7000, b"\x00\x14" + b"\x33" * 20)]
    return inputs, outputs, spent


def _legacy(inputs, outputs, spent):
    from quillfw.sighash.legacy import LegacyHasher
    code = b"\x76\xa9\x14" + b"\x44" * 20 + b"\x88\xac"
    for i in range(len(inputs)):
        h = LegacyHasher(2, len(inputs), len(outputs), 0, i, code, 1)
        for txid, vout, seq in inputs:
            h.add_input(txid, vout, seq)
        for amount, spk in outputs:
            h.add_output(amount, spk)
        h.digest()


def _digests(inputs, outputs, spent):
    from quillfw.sighash.txdigests import TxDigests
    d = TxDigests(2, 0, spent is not None)
    for i, (txid, vout, seq) in enumerate(inputs):
        if spent is None:
            d.add_input(txid, vout, seq)
        else:
            d.add_input(txid, vout, seq, spent[i][0], spent[i][1])
    for amount, spk in outputs:
        d.add_output(amount, spk)
    return d.finish()


def _bip143(inputs, outputs, spent):
    from quillfw.sighash import segwit_v0 as sighash_segwit_v0
    d = _digests(inputs, outputs, None)
    code = b"\x76\xa9\x14" + b"\x44" * 20 + b"\x88\xac"
    for i, (txid, vout, seq) in enumerate(inputs):
        sighash_segwit_v0.sighash(d, i, txid, vout, seq, code, spent[i][0], 1)


def _bip341(inputs, outputs, spent):
    from quillfw.sighash import taproot as sighash_taproot
    d = _digests(inputs, outputs, spent)
    for i in range(len(inputs)):
        sighash_taproot.sighash(d, i, 0)


ALGORITHMS = (("legacy", _legacy), ("bip143", _bip143), ("bip341", _bip341))


def worker(sizes):
    """Print 'algorithm n us_per_input' lines for this interpreter."""
    now, diff = _clock()
    for n in sizes:
        inputs, outputs, spent = _tx(n)
        for name, fn in ALGORITHMS:
            runs = []
            for _ in range(5):
                t0 = now()
                fn(inputs, outputs, spent)
                runs.append(diff(t0, now()) / n)
            runs.sort()
            print(name, n, "%.1f" % runs[2])


def main(argv):
    import os
    import subprocess
    from pathlib import Path
    sizes = [int(a) for a in argv[1:]] or list(DEFAULT_SIZES)
    here = Path(__file__).resolve()
    import contextlib
    import io
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        worker(sizes)
    results = {"CPython": buf.getvalue()}
    mp = Path(sys.executable).parent / "micropython"
    proc = subprocess.run([str(mp), str(here)] + [str(s) for s in sizes], capture_output=True, text=True,
                          env=dict(os.environ), timeout=1800)
    if proc.returncode != 0:
        sys.exit("micropython run failed:\n" + proc.stderr[-3000:])
    results["MicroPython"] = proc.stdout
    table = {}
    for interp, text in results.items():
        for line in text.split("\n"):
            if line.strip():
                name, n, us = line.split()
                table[(name, int(n), interp)] = float(us)
    print("sighash cost per input, microseconds (median of 5; digests amortized)")
    print("%-8s %8s %14s %14s %8s" % ("algo", "inputs", "CPython", "MicroPython", "ratio"))
    for n in sizes:
        for name, _ in ALGORITHMS:
            c, m = table[(name, n, "CPython")], table[(name, n, "MicroPython")]
            print("%-8s %8d %14.1f %14.1f %7.1fx" % (name, n, c, m, m / c if c else 0))


if IS_MICROPYTHON:  # the micropython subprocess started by main(): it sets its own path
    sys.path.insert(0, __file__.rsplit("/", 1)[0] + "/../../firmware")
    worker([int(a) for a in sys.argv[1:]] or DEFAULT_SIZES)
elif __name__ == "__main__":
    main(sys.argv)
