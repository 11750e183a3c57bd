"""The harness itself: the same file runs under CPython and MicroPython."""
import sys

import fwtest


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


def test_firmware_package_imports():
    import quillfw
    assert quillfw.__name__ == "quillfw"
