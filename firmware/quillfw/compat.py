"""The few names that differ between MicroPython and CPython, in one place,
so every other firmware module runs unchanged on both."""
import sys

IS_MICROPYTHON = sys.implementation.name == "micropython"

try:
    from micropython import const
except ImportError:  # CPython
    def const(x):
        return x
