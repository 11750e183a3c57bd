"""Sign the signing benchmarks' largest transaction (500-input P2WPKH) on the
unix port at a board's heap, with the firmware as that board's .mpy files.

The device side is tests/session_heap/device_loop.py (the streamed session with
the live heap recorded after every message). The heap the emulator gets:

    filesystem boards  heap_free_bytes: the .mpy files load into the heap, as on the board
    frozen boards      heap_free_bytes + the .mpy bytes of the modules the session
                       imports: on the board that bytecode and its constants stay in
                       flash; the emulator has to load them into its heap

The unix port is 64-bit: objects take 1.0-2.0x the heap they take on the boards,
so a run that fits here fits there (fragmentation aside).
"""
import random
import subprocess
from dataclasses import dataclass
from pathlib import Path

import coincurve

from tests.boards.boardtest import micropython_binary

DEVICE_LOOP = Path(__file__).resolve().parents[1] / "session_heap" / "device_loop.py"
N_INPUTS = 500
N_OUTPUTS = 3


@dataclass
class HeapRun:
    heap: int              # GC heap the interpreter reported
    baseline: int          # live heap with the modules loaded and an idle session
    peak_live: int         # highest live heap after a collection, over the whole run
    peak_before_gc: int    # highest heap use before a collection (garbage included)
    signatures: list
    transaction: tuple     # (version, locktime, inputs, outputs, pubkeys, hash_types)
    error: str = ""


def session_modules(mpy_root):
    """Names of the quillfw modules that device_loop's session imports."""
    code = ("import sys\nsys.path.insert(0, %r)\nimport quillfw.signing.session\n"
            "print(' '.join(sorted(k for k in sys.modules if k.startswith('quillfw'))))"
            % str(mpy_root))
    proc = subprocess.run([micropython_binary(), "-c", code], capture_output=True, text=True,
                          timeout=60, check=True)
    return proc.stdout.split()


def frozen_code_bytes(mpy_root):
    total = 0
    for name in session_modules(mpy_root):
        parts = name.split(".")
        path = Path(mpy_root, *parts).with_suffix(".mpy")
        if not path.exists():
            path = Path(mpy_root, *parts, "__init__.mpy")
        total += path.stat().st_size
    return total


def emulator_heap(board, mpy_root):
    if board.deploy == "frozen":
        return board.heap_free_bytes + frozen_code_bytes(mpy_root)
    return board.heap_free_bytes


class _Device:
    def __init__(self, mpy_root, heap):
        code = ("import sys\nsys.path.insert(0, %r)\nsys.path.insert(0, %r)\nexec(open(%r).read())"
                % (str(DEVICE_LOOP.parent), str(mpy_root), str(DEVICE_LOOP)))
        self.proc = subprocess.Popen([micropython_binary(), "-X", "heapsize=%d" % heap, "-c", code],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, text=True, bufsize=1)

    def ask(self, *words):
        line = " ".join(w.hex() or "-" if isinstance(w, bytes) else str(w) for w in words)
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()
        reply = self.proc.stdout.readline().split()
        if reply[:1] != ["ok"]:
            rest = self.proc.stdout.read() if self.proc.poll() is not None else ""
            raise RuntimeError((" ".join(reply) + " " + rest)[-1500:] or "device died")
        return reply[1:]

    def close(self):
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def _hash160(pub):
    import hashlib

    from quillfw.crypto.hashes import ripemd160
    return ripemd160(hashlib.sha256(pub).digest())


def _transaction(seed):
    rng = random.Random(seed)
    keys = [coincurve.PrivateKey(rng.randbytes(32)) for _ in range(5)]
    pubs = [k.public_key.format(compressed=True) for k in keys]
    inputs = [(rng.randbytes(32), rng.randrange(4), 0xFFFFFFFD, rng.randrange(1000, 10 ** 8),
               b"\x00\x14" + _hash160(pubs[i % 5]), i % 5) for i in range(N_INPUTS)]
    outputs = [(rng.randrange(1000, 10 ** 8), b"\x00\x14" + rng.randbytes(20))
               for _ in range(N_OUTPUTS)]
    hash_types = [(1, 2, 0x81, 0x82)[i % 4] for i in range(N_INPUTS)]
    return keys, pubs, inputs, outputs, hash_types


def sign_500_p2wpkh(mpy_root, heap, seed=500) -> HeapRun:
    """Stream and sign the transaction; error is set (and no signatures) if the device died."""
    keys, pubs, inputs, outputs, hash_types = _transaction(seed)
    version, locktime = 2, 800000
    dev = _Device(mpy_root, heap)
    sigs = []
    try:
        dev.ask("begin", version, locktime, N_INPUTS, N_OUTPUTS, "segwit_v0")
        for k in keys:
            dev.ask("key", k.secret, 1)
        tokens = [bytes.fromhex(dev.ask("in", txid, vout, seq, amount, spk)[0])
                  for txid, vout, seq, amount, spk, _ in inputs]
        for amount, spk in outputs:
            dev.ask("out", amount, spk)
        for i, (txid, vout, seq, amount, spk, k) in enumerate(inputs):
            script_code = b"\x76\xa9\x14" + spk[2:] + b"\x88\xac"
            sigs.append(bytes.fromhex(dev.ask("v0", i, txid, vout, seq, amount, spk, tokens[i],
                                              script_code, hash_types[i], k)[0]))
        stats = list(map(int, dev.ask("stats")))
        dev.ask("end")
        return HeapRun(stats[3], stats[0], stats[1], stats[2], sigs,
                       (version, locktime, inputs, outputs, pubs, hash_types))
    except (RuntimeError, OSError, ValueError) as e:
        return HeapRun(heap, 0, 0, 0, [], (version, locktime, inputs, outputs, pubs, hash_types),
                       error=str(e) or type(e).__name__)
    finally:
        dev.close()
