"""The boards an emulated device models (quill.emulator.models), for tests: each test
names the board it runs on, and one whose firmware is frozen (the pyboard, the smallest)
needs the frozen unix port, built once and cached; a test skips with the reason when it
cannot be built here, and fails instead in CI (QUILL_REQUIRE_TOOLCHAINS)."""
from __future__ import annotations

from quill.emulator import frozen, models
from quill.emulator.qemu import Unavailable
from tests.kit.toolchains import unavailable

DEFAULT_BOARD = models.DEFAULT_BOARD      # what quill-emu and quilld -device=emulator model
SMALLEST_BOARD = "pyboard"                # 97K of heap, the firmware frozen as it runs it


def ready(board: str) -> str:
    """board, once what its model needs is built."""
    if models.load(board).firmware == "frozen":
        try:
            frozen.build()
        except Unavailable as e:
            unavailable(str(e))
            raise
    return board
