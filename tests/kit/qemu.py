"""The Cortex-M targets (quill.emulator.qemu) for tests: built once per configuration
and cached outside the tree; a test skips with the reason when the MicroPython source
or the ARM toolchain is absent here, and fails instead in CI (QUILL_REQUIRE_TOOLCHAINS)."""
from __future__ import annotations

from pathlib import Path

from quill.emulator import qemu
from tests.kit.toolchains import micropython_source_archive, unavailable

# The target the suite runs its MCU tests on: the RP2040 stand-in (ARMv6-M, Thumb-1).
MCU_TARGET = "qemu-m0plus"


def qemu_target(name: str = MCU_TARGET, heap: int | None = None) -> Path:
    """The target's firmware.elf, building it if needed."""
    micropython_source_archive()
    try:
        return qemu.build(name, heap)
    except qemu.Unavailable as e:
        unavailable(str(e))
        raise
