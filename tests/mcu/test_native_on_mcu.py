"""The native crypto module (libsecp256k1 as quill_secp256k1.mpy) on the Cortex-M0+ target:
the same bytes as the pure arithmetic, from the code the Pico runs.

qemu-m0plus loads the module built for ARMv6-M as boards/rpi_pico gets it ("natmod" in
its board.json: the 22 KB comb, and the project's own field multiplication, 64-bit
products, comb lookup and constant-time inverses in Thumb-1,
firmware/natmod/quill_secp256k1/*_armv6m.*), beside the
firmware, which picks it up as it does on a board. Checked there:
  * the firmware's ECDSA and BIP340 vector tests (Core's transaction signatures with
    five grinding rounds, BIP143, Wycheproof, BIP340, BIP341 key paths) and the boot
    self-test, signing with the module;
  * 1,000 random keys, messages and aux: the public key, ECDSA with Core's grinding and
    BIP340 signature from the board equal the pure arithmetic's, computed here under
    CPython (the same quillfw code, which tests/crosscheck checks against Core's
    procedure and libsecp256k1; it also checks the x64 module on 1,000 inputs);
  * quill-emu --target qemu-m0plus: --crypto=auto signs with the module, python without.
The Cortex-M4 module is libsecp256k1's own arithmetic (UMULL): tests/bench/bench_crypto_mcu
compares its signatures with the pure arithmetic's on qemu-m4 at every run, which also
keeps the suite from building a second Cortex-M firmware. ~40 s (the firmware image
is shared with test_firmware_on_mcu).
"""
import hashlib
import re

import pytest

from boards import boardspec
from quill.device.client import DeviceClient
from quill.emulator import natmod, qemu
from quill.emulator.launcher import Emulator
from quillfw.crypto import ecdsa, schnorr
from quillfw.crypto import secp256k1 as ec
from tests.crosscheck.test_ecdsa_vs_core_procedure import core_sign, pairs_by_rounds
from tests.kit.qemu import qemu_target
from tests.kit.toolchains import unavailable
from tests.mcu.test_firmware_on_mcu import RUNNER, UNIT_TEST_HEAP, firmware_test_image

TARGET, BOARD, ARCH = "qemu-m0plus", "rpi_pico", "armv6m"
CROSSCHECKS = 1000

CROSSCHECK = """
from hashlib import sha256
from quillfw.crypto import ecdsa, schnorr, secp256k1 as ec
h = b"quill mcu native crosscheck"
for i in range(%d):
    h = sha256(h).digest()
    msg = sha256(h + b"m").digest()
    aux = sha256(h + b"a").digest()
    ec.clear_key_cache()
    out = ec.pubkey_from_secret(h, i %% 2 == 0) + ecdsa.sign(h, msg) + schnorr.sign(h, msg, aux)
    print("ROW", i, sha256(out).digest().hex())
"""


def expected_rows(count):
    """CROSSCHECK's rows from the pure arithmetic under CPython."""
    rows, h = [], b"quill mcu native crosscheck"
    assert ec.NATIVE is None
    for i in range(count):
        h = hashlib.sha256(h).digest()
        msg = hashlib.sha256(h + b"m").digest()
        aux = hashlib.sha256(h + b"a").digest()
        ec.clear_key_cache()
        out = ec.pubkey_from_secret(h, i % 2 == 0) + ecdsa.sign(h, msg) + schnorr.sign(h, msg, aux)
        rows.append(hashlib.sha256(out).digest().hex())
    return rows


@pytest.fixture(scope="module")
def board(tmp_path_factory):
    qemu_target(TARGET, UNIT_TEST_HEAP)
    spec = boardspec.load(BOARD).natmod
    try:
        module = natmod.build(ARCH, spec["ecmult_gen_kb"], spec["ecmult_window_size"])
    except natmod.NatmodUnavailable as exc:
        unavailable(f"cannot build the native crypto module: {exc}")
    image = firmware_test_image(tmp_path_factory.mktemp("romfs"), {module.name: module.read_bytes()})
    b = qemu.Board(TARGET, UNIT_TEST_HEAP, romfs=image)
    b.enter_raw_repl()
    out, err = b.exec("import sys\nsys.path[:0] = ['/rom']\n"
                      "from quillfw.crypto import secp256k1\nfrom quillfw.board import selftest\n"
                      "print('python' if secp256k1.NATIVE is None else 'native', selftest.run())")
    assert out.split() == ["native", "ok"], out + err
    yield b
    b.close()


@pytest.mark.parametrize("module", ["test_ecdsa", "test_schnorr"])
def test_signing_vectors_on_the_native_module(board, module):
    out, err = board.exec(RUNNER % (module, module), timeout=600)
    summary = re.search(r"^(\d+) passed, (\d+) failed, (\d+) skipped", out, re.M)
    assert summary and not err, out[-4000:] + err[-2000:]
    passed, failed, _ = map(int, summary.groups())
    assert failed == 0 and passed > 0, out[-4000:]


def test_random_signatures_equal_the_pure_arithmetic(board):
    count = CROSSCHECKS
    out, err = board.exec(CROSSCHECK % count, timeout=600)
    rows = re.findall(r"^ROW (\d+) ([0-9a-f]{64})", out, re.M)
    assert not err and len(rows) == count, out[-2000:] + err[-2000:]
    expected = expected_rows(count)
    differ = [int(i) for i, digest in rows if digest != expected[int(i)]]
    assert not differ, f"rows {differ} differ from the pure arithmetic"


GRINDING = """
from quillfw.crypto import ecdsa
for i, (key, msg) in enumerate(%r):
    print("SIG", i, ecdsa.sign(key, msg).hex())
"""


def test_grinding_rounds_byte_identical_to_core(board):
    """The board's ecdsa_sign_grind (Core's rounds in one native call, s only for the
    round kept) against Core's CKey::Sign through libsecp256k1 (coincurve) on the host,
    at 1, 2, 3, 4 and 5+ nonces."""
    cases = [(pair, rounds) for rounds, pairs in sorted(pairs_by_rounds().items()) for pair in pairs]
    out, err = board.exec(GRINDING % ([pair for pair, _ in cases],), timeout=300)
    rows = re.findall(r"^SIG (\d+) ([0-9a-f]+)", out, re.M)
    assert not err and len(rows) == len(cases), out[-2000:] + err[-2000:]
    for ((key, msg), rounds), (_, der) in zip(cases, rows, strict=True):
        expected, counter = core_sign(key, msg)
        assert (min(counter, 4), der) == (rounds, expected.hex()), (key.hex(), msg.hex())


@pytest.mark.parametrize("crypto, expected", [("auto", "native"), ("python", "python")])
def test_quill_emu_on_the_cortex_m0plus_names_the_backend(crypto, expected):
    """quill-emu --target qemu-m0plus --crypto: auto deploys the Pico's module (faster
    there, tests/bench/bench_crypto_mcu.py), python does not; the self-test's known
    answers hold on the one that signs."""
    qemu_target(TARGET)
    try:
        natmod.build(ARCH, **{"gen_kb": boardspec.load(BOARD).natmod["ecmult_gen_kb"],
                              "window": boardspec.load(BOARD).natmod["ecmult_window_size"]})
    except natmod.NatmodUnavailable as exc:
        unavailable(f"cannot build the native crypto module: {exc}")
    with Emulator(heapsize=None, crypto=crypto, target=TARGET) as emu, DeviceClient(emu.port) as client:
        info = client.get_info()
    assert info["target"] == TARGET
    assert (info["crypto_backend"], info["selftest"]) == (expected, "ok")
