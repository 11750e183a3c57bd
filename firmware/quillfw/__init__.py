"""Quill device firmware: plain MicroPython that also runs under CPython."""
