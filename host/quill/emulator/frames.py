"""A qemu target's screens as files (quill-emu --target=qemu-* --screen-dir=DIR).

The firmware on a qemu target draws with the same code as on the unix port and a
board; its panel sends each screen's logical text and 1-bit rows out on the
board's second UART (firmware/emulator_frames.py: why a UART of its own), which
quill.emulator.qemu connects to a unix socket. FrameWriter reads that stream and
writes DIR/<6-digit sequence>-<screen>.png and .txt with the firmware's own
emulator_png (run here under CPython), so that the files are byte for byte those
the unix port's firmware writes for the same screens.
"""
from __future__ import annotations

import importlib.util
import socket
import struct
from pathlib import Path
from types import ModuleType
from typing import IO, Any

FIRMWARE_DIR = Path(__file__).resolve().parents[3] / "firmware"

# the records' kinds (firmware/emulator_frames.py)
BEGIN, TEXT, ROWS, END = b"B", b"T", b"R", b"E"


def _emulator_png() -> ModuleType:
    """The firmware's screen-file writer: it lives beside the quillfw package (emulator
    only), outside every importable package here."""
    spec = importlib.util.spec_from_file_location("emulator_png", FIRMWARE_DIR / "emulator_png.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _exactly(stream: IO[bytes], n: int) -> bytes | None:
    """n bytes, or None when the stream ends first (the board stopped)."""
    data = b""
    while len(data) < n:
        chunk = stream.read(n - len(data))
        if not chunk:
            return None
        data += chunk
    return data


class FrameWriter:
    """Writes the screens of one frame stream into directory, in drawing order."""

    def __init__(self, directory: str | Path):
        self.directory = str(directory)
        self.png = _emulator_png()
        self.screens = 0            # the screens written

    def run(self, stream: IO[bytes]) -> None:
        """Read records until the stream ends; a screen cut short is not written."""
        head: tuple[int, int, bytes, str] | None = None
        lines: list[str] = []
        files: Any = None
        while True:
            header = _exactly(stream, 3)
            if header is None:
                return
            kind, size = header[:1], header[1] | header[2] << 8
            payload = _exactly(stream, size)
            if payload is None:
                return
            if kind == BEGIN:
                width, height = struct.unpack("<HH", payload[:4])
                head = (width, height, payload[4:10], payload[10:].decode())
                lines, files = [], None
            elif kind == TEXT:
                lines.append(payload.decode())
            elif head is not None and kind in (ROWS, END):
                if files is None:
                    width, height, colours, name = head
                    files = self.png.ScreenFiles(self.directory, name, lines, width, height,
                                                 (colours[:3], colours[3:]))
                if kind == ROWS:
                    files.rows(payload, len(payload) // ((head[0] + 7) // 8))
                else:
                    files.finish()
                    self.screens += 1
                    head, files = None, None


def serve_frames(listener: socket.socket, directory: str | Path) -> None:
    """Accept the board's connection on listener and write its screens until it closes."""
    Path(directory).mkdir(parents=True, exist_ok=True)
    connection, _ = listener.accept()
    listener.close()
    with connection, connection.makefile("rb") as stream:
        FrameWriter(directory).run(stream)
