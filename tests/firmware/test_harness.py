"""The harness itself: the same file runs under CPython and MicroPython."""
import os
import sys

from tests.firmware import fwtest


def test_interpreter_is_reported():
    name = sys.implementation.name
    assert name in ("cpython", "micropython")
    assert fwtest.IS_MICROPYTHON == (name == "micropython")


def test_raises_checks_type_and_message():
    with fwtest.raises(ValueError, match="bad") as r:
        raise ValueError("bad input")
    assert str(r.value) == "bad input"
    try:
        with fwtest.raises(ValueError):
            pass
    except AssertionError:
        return
    raise AssertionError("raises() accepted a block that did not raise")


def _is_dir(path):
    try:
        return os.stat(path)[0] & 0x4000 != 0
    except OSError:
        return False


def _firmware_modules():
    """Every module of the firmware package, found by walking its folders
    (os.listdir and os.stat only, so MicroPython can run it too)."""
    import quillfw
    names = []

    def walk(folder, package):
        names.append(package)
        for entry in sorted(os.listdir(folder)):
            path = folder + "/" + entry
            stem, _, suffix = entry.rpartition(".")
            if suffix in ("py", "mpy") and stem != "__init__":    # .mpy: a board's ROMFS
                names.append(package + "." + stem)
            elif _is_dir(path) and entry != "__pycache__" and (
                    "__init__.py" in os.listdir(path) or "__init__.mpy" in os.listdir(path)):
                walk(path, package + "." + entry)

    walk(quillfw.__file__.rsplit("/", 1)[0], "quillfw")
    return names


def test_every_firmware_module_imports():
    """Every module, but the inline-assembler arithmetic where the interpreter has no
    inline Thumb assembler (CPython, the unix port): secp256k1 falls back there."""
    from quillfw.crypto import secp256k1
    names = _firmware_modules()
    assert len(names) > 20, names  # the walk found the package's modules
    assert "quillfw.crypto.secp256k1_thumb" in names
    if secp256k1._FE is None:
        names.remove("quillfw.crypto.secp256k1_thumb")
    failed = []
    for name in names:
        try:
            __import__(name)
        except Exception as e:  # collect them all: one broken module must not hide another
            failed.append("%s: %s: %s" % (name, type(e).__name__, e))
    assert not failed, "\n".join(failed)
