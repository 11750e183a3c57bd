"""The few names that differ between MicroPython and CPython, in one place,
so every other firmware module runs unchanged on both."""
import sys

IS_MICROPYTHON = sys.implementation.name == "micropython"

try:
    from micropython import const
except ImportError:  # CPython
    def const(x):
        return x

try:
    from time import sleep_ms, ticks_diff, ticks_ms
except ImportError:  # CPython
    import time

    def ticks_ms():
        return int(time.monotonic() * 1000)

    def ticks_diff(a, b):
        return a - b

    def sleep_ms(ms):
        time.sleep(ms / 1000)


def forget(name):
    """Drop a module from sys.modules and from its package, so that the collector
    can free it (the heap of the smallest board has no room for idle code)."""
    if sys.modules.pop(name, None) is None:
        return
    dot = name.rfind(".")
    if dot > 0:
        try:
            delattr(sys.modules[name[:dot]], name[dot + 1:])
        except (KeyError, AttributeError):
            pass
