"""A 500-input P2WPKH and a 50-input P2PKH transaction signed through a
streamed session on the MicroPython unix port with a 128 KiB heap.

The host side (this CPython test) plays the host: it pushes the transaction
message by message over the device's stdin (device_loop.py), keeps the tokens,
asks for signatures, then checks every signature with coincurve against a
sighash computed independently by python-bitcointx. The firmware is loaded as
.mpy (compiled by mpy-cross into a temp folder), as on a real device, so the
compiler does not run on the device heap. The peak heap is printed.
"""
import random
import subprocess
import sys
from pathlib import Path

import coincurve
import pytest
from bitcointx.core import CMutableTransaction, COutPoint, CTxIn, CTxOut
from bitcointx.core.script import SIGVERSION_BASE, SIGVERSION_WITNESS_V0, CScript, SignatureHash

from tests.kit.firmware import compile_firmware

HERE = Path(__file__).resolve().parent
FIRMWARE = HERE.parent.parent / "firmware" / "quillfw"
HEAP = "128K"


def _bin(name):
    exe = Path(sys.executable).parent / name
    if not exe.exists():
        pytest.fail("%s is not installed in the virtualenv" % name)
    return str(exe)


@pytest.fixture(scope="module")
def mpy_dir(tmp_path_factory):
    return compile_firmware(tmp_path_factory.mktemp("mpy"))


class Device:
    """device_loop.py under `micropython -X heapsize=128K`, one line per message."""

    def __init__(self, mpy_dir):
        self.proc = subprocess.Popen(
            [_bin("micropython"), "-X", "heapsize=" + HEAP, "-c",
             "import sys; sys.path.insert(0, %r); sys.path.insert(0, %r); "
             "exec(open(%r).read())" % (str(HERE), str(mpy_dir), str(HERE / "device_loop.py"))],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True, bufsize=1)

    def ask(self, *words):
        line = " ".join(w.hex() or "-" if isinstance(w, bytes) else str(w) for w in words)
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()
        reply = self.proc.stdout.readline().split()
        if not reply:
            self.proc.kill()
            pytest.fail("device died: " + self.proc.stderr.read()[-3000:])
        assert reply[0] == "ok", " ".join(reply)
        return reply[1:]

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(timeout=30)


def _keys(rng, n):
    return [coincurve.PrivateKey(rng.randbytes(32)) for _ in range(n)]


def _hash160(pub):
    import hashlib

    from quillfw.crypto.hashes import ripemd160
    return ripemd160(hashlib.sha256(pub).digest())


def _p2pkh(h):
    return b"\x76\xa9\x14" + h + b"\x88\xac"


def _transaction(rng, n_in, n_out, spk_of_key, keys):
    inputs = []
    for i in range(n_in):
        k = i % len(keys)
        inputs.append((rng.randbytes(32), rng.randrange(4), 0xFFFFFFFD - (i % 3),
                       rng.randrange(1000, 10 ** 8), spk_of_key(k), k))
    outputs = [(rng.randrange(1000, 10 ** 8), b"\x00\x14" + rng.randbytes(20)) for _ in range(n_out)]
    return inputs, outputs


def _bitcointx_tx(version, locktime, inputs, outputs):
    return CMutableTransaction(
        [CTxIn(COutPoint(txid, vout), nSequence=seq) for txid, vout, seq, *_ in inputs],
        [CTxOut(amount, CScript(spk)) for amount, spk in outputs],
        nLockTime=locktime, nVersion=version)


def _stream(dev, inputs, outputs):
    tokens = [bytes.fromhex(dev.ask("in", txid, vout, seq, amount, spk)[0])
              for txid, vout, seq, amount, spk, _ in inputs]
    out_tokens = [bytes.fromhex(dev.ask("out", amount, spk)[0]) for amount, spk in outputs]
    return tokens, out_tokens


def _load_keys(dev, keys, compressed):
    for k in keys:
        dev.ask("key", k.secret, 1 if compressed else 0)


def _report(name, dev):
    baseline, live, before_gc, heap = map(int, dev.ask("stats"))
    print("\n%s: heap %d B, baseline %d B, peak live %d B, peak before gc %d B"
          % (name, heap, baseline, live, before_gc))
    assert live < heap
    return live


def test_500_input_p2wpkh_signed_in_128k(mpy_dir):
    rng = random.Random(500)
    keys = _keys(rng, 5)
    pubs = [k.public_key.format(compressed=True) for k in keys]
    inputs, outputs = _transaction(rng, 500, 3, lambda k: b"\x00\x14" + _hash160(pubs[k]), keys)
    # SINGLE only where an output exists (else the session refuses, by design)
    hash_types = [(3, 0x83, 3)[i] if i < 3 else (1, 1, 1, 2, 0x81, 0x82)[i % 6]
                  for i in range(500)]
    version, locktime = 2, 800000
    dev = Device(mpy_dir)
    dev.ask("begin", version, locktime, len(inputs), len(outputs), "segwit_v0")
    _load_keys(dev, keys, True)
    tokens, out_tokens = _stream(dev, inputs, outputs)
    sigs = []
    for i, (txid, vout, seq, amount, spk, k) in enumerate(inputs):
        single = (outputs[i] + (out_tokens[i],)) if hash_types[i] & 0x1F == 3 else ()
        sigs.append(bytes.fromhex(dev.ask("v0", i, txid, vout, seq, amount, spk, tokens[i],
                                          _p2pkh(spk[2:]), hash_types[i], k, *single)[0]))
        if i == 49:
            early_peak = int(dev.ask("stats")[1])
    final_peak = _report("500-input P2WPKH", dev)
    # O(1): 450 more inputs must not raise the live heap (slack for allocator noise)
    assert final_peak - early_peak < 2048, (early_peak, final_peak)
    dev.ask("end")
    dev.close()
    tx = _bitcointx_tx(version, locktime, inputs, outputs)
    for i, (_, _, _, amount, spk, k) in enumerate(inputs):
        digest = SignatureHash(CScript(_p2pkh(spk[2:])), tx, i, hash_types[i], amount=amount,
                               sigversion=SIGVERSION_WITNESS_V0)
        assert sigs[i][-1] == hash_types[i]
        assert coincurve.PublicKey(pubs[k]).verify(sigs[i][:-1], bytes(digest), hasher=None), i


def test_50_input_p2pkh_signed_by_streamed_passes_in_128k(mpy_dir):
    rng = random.Random(50)
    keys = _keys(rng, 3)
    pubs = [k.public_key.format(compressed=False) for k in keys]   # uncompressed, as old P2PKH
    inputs, outputs = _transaction(rng, 50, 2, lambda k: _p2pkh(_hash160(pubs[k])), keys)
    hash_types = [(1, 1, 2, 0x81, 0x82)[i % 5] for i in range(50)]
    version, locktime = 1, 0
    dev = Device(mpy_dir)
    dev.ask("begin", version, locktime, len(inputs), len(outputs), "legacy")
    _load_keys(dev, keys, False)
    _stream(dev, inputs, outputs)
    sigs = []
    for i, (_, _, _, _, spk, k) in enumerate(inputs):
        dev.ask("lp", i, spk, hash_types[i], k)
        _stream(dev, inputs, outputs)
        sigs.append(bytes.fromhex(dev.ask("lf")[0]))
    _report("50-input P2PKH", dev)
    dev.ask("end")
    dev.close()
    tx = _bitcointx_tx(version, locktime, inputs, outputs)
    for i, (_, _, _, _, spk, k) in enumerate(inputs):
        digest = SignatureHash(CScript(spk), tx, i, hash_types[i], sigversion=SIGVERSION_BASE)
        assert sigs[i][-1] == hash_types[i]
        assert coincurve.PublicKey(pubs[k]).verify(sigs[i][:-1], bytes(digest), hasher=None), i
