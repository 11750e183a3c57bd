"""The protocol's own wire vectors (protocol/vectors/*.json), for firmware
tests under CPython and MicroPython. They belong to this project (unlike the
shared vectors), so a missing file is a failure, not a skip."""
import json


def _protocol_dir():
    if __file__.startswith("/rom/"):    # on a Cortex-M target: beside this module in its ROMFS
        return "/rom/protocol/vectors/"
    here = __file__
    i = here.rfind("/")
    here = here[:i] if i >= 0 else "."
    return here + "/../../protocol/vectors/"


def load(name):
    with open(_protocol_dir() + name) as f:
        return json.load(f)["vectors"]


class FakeTransport:
    """In-memory link: chunks are delivered one read at a time; writes are collected."""

    def __init__(self, chunks=()):
        self.chunks = [bytes(c) for c in chunks]
        self.written = bytearray()

    def read_into(self, buf, timeout_ms):
        if not self.chunks:
            return 0
        chunk = self.chunks[0]
        n = min(len(buf), len(chunk))
        buf[0:n] = chunk[:n]
        if n < len(chunk):
            self.chunks[0] = chunk[n:]
        else:
            self.chunks.pop(0)
        return n

    def write(self, data):
        self.written.extend(data)
