"""The optional native backend (libsecp256k1 as quill_secp256k1.mpy) signs the same bytes
as the pure-MicroPython arithmetic.

The module is built for x64 from ../shared/toolchains' sources (quill.emulator.natmod;
skipped locally, failed in CI when a source or tool is missing) and loaded by the unix
port. Checked: 1,000 random keys/messages/aux through both backends in one process
(ECDSA with grinding, BIP340, public keys, each backend verifying the other's
signatures); the firmware's signing test modules (vectors: BIP340, BIP143, Core's
low-R grinding, signing sessions) run again with QUILL_CRYPTO=native; the backend is
the one asked for.
"""
import os
import re
import subprocess
from pathlib import Path

import coincurve
import pytest

from quill.emulator import natmod
from quill.emulator.launcher import micropython_binary
from quillfw.crypto import ecdsa
from tests.crosscheck.test_ecdsa_vs_core_procedure import core_sign, pairs_by_rounds
from tests.kit.toolchains import unavailable

ROOT = Path(__file__).resolve().parents[2]
FIRMWARE = ROOT / "firmware"
FIRMWARE_TESTS = ROOT / "tests" / "firmware"

CROSSCHECK = r"""
import sys
from hashlib import sha256
from quillfw.crypto import ecdsa, schnorr, secp256k1 as ec
assert ec.NATIVE is not None
native = ec.NATIVE
count = int(sys.argv[1])

def both(fn, *args):
    ec.NATIVE = native
    a = fn(*args)
    ec.NATIVE = None
    b = fn(*args)
    ec.NATIVE = native
    return a, b

h = b"quill native crosscheck"
bad = grinds = 0
for i in range(count):
    h = sha256(h).digest()
    key = h
    if not 0 < int.from_bytes(key, "big") < ec.N:
        continue
    msg = sha256(h + b"m").digest()
    aux = sha256(h + b"a").digest() if i % 2 else bytes(32)
    ec.clear_key_cache()
    pub = both(ec.pubkey_from_secret, key, i % 3 != 0)
    sig = both(ecdsa.sign, key, msg)
    if ecdsa.sign(key, msg, False)[3] == 33:
        grinds += 1
    ec.clear_key_cache()
    bip340 = both(schnorr.sign, key, msg, aux)
    xonly = ec.xonly_from_secret(key)[0]
    ok = pub[0] == pub[1] and sig[0] == sig[1] and bip340[0] == bip340[1]
    if i % 20 == 0:  # the pure-Python verifier is the slow part
        ok = ok and both(ecdsa.verify, pub[0], msg, sig[0]) == (True, True)
        ok = ok and both(schnorr.verify, xonly, msg, bip340[0]) == (True, True)
        wrong = sha256(msg).digest()
        ok = ok and both(ecdsa.verify, pub[0], wrong, sig[0]) == (False, False)
        ok = ok and both(schnorr.verify, xonly, wrong, bip340[0]) == (False, False)
    else:
        ok = ok and ecdsa.verify(pub[0], msg, sig[0]) and schnorr.verify(xonly, msg, bip340[0])
    if not ok:
        bad += 1
        print("MISMATCH", key.hex(), msg.hex())
print("checked", count, "mismatches", bad, "grinds", grinds)
"""


@pytest.fixture(scope="module")
def native_dir():
    try:
        return natmod.build("x64").parent
    except natmod.NatmodUnavailable as exc:
        unavailable(f"cannot build the native crypto module: {exc}")


def _micropython(args, native_dir, crypto="native"):
    env = dict(os.environ, MICROPYPATH=f"{FIRMWARE}:{native_dir}", QUILL_CRYPTO=crypto)
    return subprocess.run([micropython_binary(), "-X", "heapsize=8M", *args], capture_output=True,
                          text=True, timeout=600, env=env)


def test_thousand_random_crosschecks(native_dir, tmp_path):
    script = tmp_path / "crosscheck.py"
    script.write_text(CROSSCHECK)
    proc = _micropython([str(script), "1000"], native_dir)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    found = re.search(r"^checked (\d+) mismatches (\d+) grinds (\d+)$", proc.stdout, re.M)
    assert found, proc.stdout[-3000:]
    checked, mismatches, grinds = map(int, found.groups())
    assert (checked, mismatches) == (1000, 0), proc.stdout[-3000:]
    assert 400 < grinds < 600  # about half the first nonces give a high R: grinding was exercised


GRINDING = r"""
import sys
from quillfw.crypto import ecdsa, secp256k1 as ec
assert ec.NATIVE is not None
native = ec.NATIVE


class Older:  # a module built before ecdsa_sign_grind: the firmware grinds a call per round
    ecdsa_sign = native.ecdsa_sign


for line in sys.stdin.read().split():
    key, msg = bytes.fromhex(line[:64]), bytes.fromhex(line[64:])
    rs = ec.NATIVE.ecdsa_sign_grind(key, msg)
    ec.NATIVE = Older
    older = ecdsa.sign(key, msg)
    ec.NATIVE = native
    print("SIG", ecdsa.sign(key, msg).hex(), rs.hex(), ecdsa.sign(key, msg, False).hex(), older.hex())
N = ec.N.to_bytes(32, "big")
print("INVALID", [ec.NATIVE.ecdsa_sign_grind(k, bytes(32)) for k in (bytes(32), N, b"\xff" * 32)])
"""


def test_grinding_rounds_byte_identical_to_core(native_dir, tmp_path):
    """ecdsa_sign_grind (Core's rounds in one call, s only for the kept round) against
    Core's CKey::Sign through libsecp256k1 (coincurve), at 1, 2, 3, 4 and 5+ nonces; the
    firmware's round-per-call path for a module without it signs the same; the
    non-grinding signature stays secp256k1_ecdsa_sign's first; invalid keys give None."""
    cases = [(pair, rounds) for rounds, pairs in sorted(pairs_by_rounds().items()) for pair in pairs]
    script = tmp_path / "grinding.py"
    script.write_text(GRINDING)
    env = dict(os.environ, MICROPYPATH=f"{FIRMWARE}:{native_dir}", QUILL_CRYPTO="native")
    stdin = "\n".join((k + m).hex() for (k, m), _ in cases)
    proc = subprocess.run([micropython_binary(), str(script)], input=stdin, capture_output=True, text=True,
                          timeout=120, env=env)
    rows = re.findall(r"^SIG (\w+) (\w+) (\w+) (\w+)$", proc.stdout, re.M)
    assert proc.returncode == 0 and len(rows) == len(cases), proc.stdout[-3000:] + proc.stderr[-3000:]
    for ((key, msg), rounds), (der, rs, plain, older) in zip(cases, rows, strict=True):
        expected, counter = core_sign(key, msg)
        assert (min(counter, 4), der, older) == (rounds, expected.hex(), der), (key.hex(), msg.hex(), rounds)
        r, s = ecdsa.der_decode(expected)
        assert rs == (r.to_bytes(32, "big") + s.to_bytes(32, "big")).hex()
        first = coincurve.PrivateKey(key).sign(msg, hasher=None)
        assert plain == first.hex() and (plain == der) == (rounds == 0)
    assert "INVALID [None, None, None]" in proc.stdout


@pytest.mark.parametrize("crypto, expected", [("native", "native"), ("python", "python"),
                                              ("auto", "native")])
def test_backend_follows_the_choice(native_dir, crypto, expected):
    code = ("from quillfw.crypto import secp256k1; from quillfw.board import selftest; "
            "print('python' if secp256k1.NATIVE is None else 'native', selftest.run())")
    proc = _micropython(["-c", code], native_dir, crypto)
    assert proc.stdout.split() == [expected, "ok"], proc.stdout + proc.stderr


def test_native_choice_without_the_module_fails(tmp_path):
    proc = _micropython(["-c", "from quillfw.crypto import secp256k1"], tmp_path, "native")
    assert proc.returncode != 0 and "quill_secp256k1" in proc.stdout + proc.stderr


@pytest.mark.parametrize("module", ["test_ecdsa", "test_schnorr", "test_secp256k1", "test_session"])
def test_firmware_signing_tests_on_the_native_backend(native_dir, module):
    proc = _micropython([str(FIRMWARE_TESTS / "mp_runner.py"), str(FIRMWARE), str(ROOT), "tests.firmware." + module],
                        native_dir)
    summary = re.search(r"^(\d+) passed, (\d+) failed, (\d+) skipped$", proc.stdout, re.M)
    assert summary and proc.returncode == 0 and summary.group(2) == "0", proc.stdout[-4000:] + proc.stderr
    assert int(summary.group(1)) > 0
