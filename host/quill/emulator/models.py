"""The boards quill-emu models (boards/<board>/board.json).

An emulated device runs as one named board runs: that board's free heap, its
firmware loaded as that board loads it, and the native crypto module where that
board's deploy installs one. On the unix port:

    files    the firmware's .mpy files on a filesystem, imported into the heap
             (deploy "filesystem": the Pico and the ESP32-S3 copy them to littlefs,
             and MicroPython loads each module's bytecode into RAM)
    frozen   the firmware frozen into the interpreter (deploy "frozen": the pyboard
             keeps bytecode, constants and names in flash; quill.emulator.frozen)
    romfs    a ROMFS image run in place (no board's deploy: an experiment, and the
             qemu-m0plus target's way)

A board's native module lives in its heap (MicroPython copies a native .mpy's code
and tables into RAM); the unix port puts it in executable memory outside the heap
instead, so the model takes its size from the heap (launcher.native_ballast).
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import quillfw

BOARDS_DIR = Path(quillfw.__file__).resolve().parents[2] / "boards"


def _boards() -> tuple[str, ...]:
    """Every board with a board.json but the emulator's own description (boards/unix, whose
    transport is the emulator's stdio): the boards a device can be modelled on."""
    found = []
    for path in sorted(BOARDS_DIR.glob("*/board.json")):
        if json.loads(path.read_text())["transport"]["kind"] != "stdio":
            found.append(path.parent.name)
    return tuple(found)


BOARDS = _boards()
DEFAULT_BOARD = "rpi_pico"
FIRMWARE = ("board", "files", "frozen", "romfs")   # "board": as the board loads it
_LOADING = {"filesystem": "files", "frozen": "frozen"}


class UnknownBoard(ValueError):
    pass


@dataclass(frozen=True)
class BoardModel:
    name: str
    heap: int                   # board.json heap_free_bytes
    firmware: str               # files or frozen: how the board loads the firmware
    natmod: dict | None         # board.json natmod: the tables of the module it deploys, or None
    clock_hz: int               # board.json clock_hz: the CPU clock MicroPython runs it at
    display: str                # board.json display as quill-emu --display names it, or "none"


def load(name: str) -> BoardModel:
    if name not in BOARDS:
        raise UnknownBoard(f"unknown board {name!r} ({', '.join(BOARDS)})")
    spec = json.loads((BOARDS_DIR / name / "board.json").read_text())
    panel = spec["display"]
    display = "none" if panel is None else f"{panel['panel']}-{panel['width']}x{panel['height']}"
    return BoardModel(name, spec["heap_free_bytes"], _LOADING[spec["deploy"]], spec["natmod"], spec["clock_hz"],
                      display)
