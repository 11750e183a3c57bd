"""The firmware's own unit tests (tests/firmware, the same files pytest runs under
CPython and the unix port) on the Cortex-M0+ target: 32-bit MicroPython, ARMv6-M
code, 31-bit small ints. The signing vectors they read (sighash.json, BIP143,
BIP340, BIP341, Wycheproof with Core's low-R grinding) ride in the board's ROMFS
beside the firmware's .mpy files.

The image is built with a 2 MB heap (the vectors are parsed whole); the Pico-heap
build serves the protocol and quilld tests (tests/device, tests/mcu/test_quilld_on_mcu.py).
"""
import re
import subprocess
import sys
from pathlib import Path

import pytest

from quill.emulator import qemu
from tests.kit.firmware import FIRMWARE_DIR, compile_firmware, mpy_cross
from tests.kit.qemu import MCU_TARGET, qemu_target
from tests.kit.toolchains import vectors_dir

TESTS = Path(__file__).resolve().parents[1] / "firmware"
# hw13's key-storage modules (test_keys_*) are not yet run here: they need a writable
# filesystem and their own vectors in the image (left for issue 13's owner)
MODULES = sorted(p.stem for p in TESTS.glob("test_*.py")
                 if p.name != "test_on_micropython.py" and not p.name.startswith("test_keys_"))
HELPERS = ["fwtest", "wire_vectors"]
VECTORS = ["bips/bip143_examples.json", "bips/bip340_test_vectors.csv", "core/bip341_wallet_vectors.json",
           "core/sighash.json", "wycheproof/ecdsa_secp256k1_sha256_bitcoin_test.json"]
UNIT_TEST_HEAP = 2 * 1024 * 1024

# prints "<passed> passed, <failed> failed, <skipped> skipped" for one tests.firmware module
RUNNER = """import gc, sys
from tests.firmware import fwtest
mod = __import__("tests.firmware." + %r)
mod = getattr(mod.firmware, %r)
passed = failed = skipped = 0
for name in sorted(n for n in dir(mod) if n.startswith("test_")):
    gc.collect()
    try:
        getattr(mod, name)()
        passed += 1
    except fwtest.Skipped as e:
        skipped += 1
        print("SKIP", name, e)
    except Exception as e:
        failed += 1
        print("FAIL", name, type(e).__name__, e)
print("%%d passed, %%d failed, %%d skipped" %% (passed, failed, skipped))
"""


def firmware_test_image(tmp: Path, extra: dict[str, bytes] | None = None) -> Path:
    """The ROMFS image: the firmware, its unit tests and their vectors, and extra files."""
    files = dict(extra or {})
    root = compile_firmware(tmp / "fw")
    for path in root.rglob("*.mpy"):
        files[path.relative_to(root).as_posix()] = path.read_bytes()
    for name in MODULES + HELPERS + ["__init__"]:     # as the package tests.firmware
        out = tmp / (name + ".mpy")
        subprocess.run([mpy_cross(), "-s", f"tests/firmware/{name}.py", "-o", str(out),
                        str(TESTS / (name + ".py"))], check=True)
        files[f"tests/firmware/{name}.mpy"] = out.read_bytes()
    files["tests/__init__.mpy"] = files["tests/firmware/__init__.mpy"]   # both empty
    vectors = vectors_dir()
    for name in VECTORS:
        files["vectors/" + name] = (vectors / name).read_bytes()
    for path in sorted((FIRMWARE_DIR.parent / "protocol" / "vectors").glob("*.json")):
        files["protocol/vectors/" + path.name] = path.read_bytes()
    for path in sorted((vectors / "core-util").iterdir()):
        files["vectors/core-util/" + path.name] = path.read_bytes()
    assert FIRMWARE_DIR.is_dir()
    return qemu.romfs_of(files)


@pytest.fixture(scope="module")
def board(tmp_path_factory):
    qemu_target(MCU_TARGET, UNIT_TEST_HEAP)
    image = firmware_test_image(tmp_path_factory.mktemp("romfs"))
    b = qemu.Board(MCU_TARGET, UNIT_TEST_HEAP, romfs=image)
    b.enter_raw_repl()
    out, err = b.exec("import sys\nsys.path[:0] = ['/rom']\nprint(sys.maxsize)")
    assert out.strip() == str(2 ** 31 - 1), out + err     # a 32-bit build
    yield b
    b.close()


@pytest.mark.parametrize("module", MODULES)
def test_firmware_module_on_the_cortex_m0plus(board, module):
    out, err = board.exec(RUNNER % (module, module), timeout=600)
    summary = re.search(r"^(\d+) passed, (\d+) failed, (\d+) skipped", out, re.M)
    assert summary and not err, out[-4000:] + err[-2000:]
    passed, failed, skipped = map(int, summary.groups())
    assert failed == 0, out[-4000:]
    assert passed > 0, out[-2000:]
    print(module, passed, "passed", skipped, "skipped", file=sys.stderr)
