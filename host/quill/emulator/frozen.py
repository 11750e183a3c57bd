"""The firmware frozen into a unix-port MicroPython, as the smallest board runs it.

The pyboard (the smallest board, 97K of heap) runs its firmware frozen into flash:
bytecode, constants and every name the modules use live in flash, and the heap holds
only what the firmware allocates while it runs. The default emulator loads `.mpy`
files from a ROMFS image instead (the Pico's way), and on that port each loaded
module's names are interned into pools on the heap that only grow, with the module's
function objects beside them: ~30 KB of the 97K heap once the key and PSBT methods
are registered (protocol/SPEC.md §10). `quill-emu --frozen` runs this build instead,
so the 64-bit emulator at 97K has the room the board has (objects still take up to
twice a board's bytes here: it stays the stricter of the two).

    build() -> Path     the `micropython` binary with the firmware frozen (built when needed)
    python -m quill.emulator.frozen      build it and print its path

It is built from MicroPython's source (the one the qemu targets use, quill.emulator.qemu)
with the host's C compiler, the unix port's standard variant without the modules that
need libraries outside the source (ffi, btree, ssl). The port's object files are kept
per source in ~/.cache/quill/unix-frozen/, so a firmware change recompiles only the
frozen modules (seconds; all of them, whatever their dates); each binary is cached by a
digest of the firmware's sources.
"""
from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

from quill.emulator.qemu import (
    FIRMWARE_DIR,
    Unavailable,
    _digest_file,
    _locked,
    cache_root,
    source_dir,
    source_location,
)

# Beside the quillfw package: the emulator's entry, approver and key registration.
EMULATOR_MODULES = ("main_emulator.py", "emulator_approval.py", "emulator_keys.py",
                    "emulator_debuglink.py", "emulator_display.py", "emulator_png.py")
# The standard variant, less the modules that need libraries the source does not carry.
VARIANT = ("VARIANT=standard", "MICROPY_PY_FFI=0", "MICROPY_PY_BTREE=0", "MICROPY_PY_SSL=0")


def cache_dir() -> Path:
    return cache_root().parent / "unix-frozen"


def frozen_modules() -> list[str]:
    """The firmware's modules, relative to firmware/, that the unix port can run: all
    of quillfw but the inline-assembler ones (Thumb code; the firmware falls back to
    its big-int arithmetic without them), and the emulator's own."""
    package = sorted(p for p in (FIRMWARE_DIR / "quillfw").rglob("*.py")
                     if b"@micropython.asm_thumb" not in p.read_bytes())
    return [p.relative_to(FIRMWARE_DIR).as_posix() for p in package] + list(EMULATOR_MODULES)


def _manifest(modules: list[str]) -> str:
    return "".join(f"module({name!r}, base_path={str(FIRMWARE_DIR)!r})\n" for name in modules)


def _firmware_digest(modules: list[str]) -> str:
    h = hashlib.sha256()
    for name in modules:
        h.update(name.encode() + b"\0" + (FIRMWARE_DIR / name).read_bytes() + b"\0")
    return h.hexdigest()


def build() -> Path:
    """The unix-port `micropython` with the firmware frozen: cached, else built
    (about 30 s the first time on 2 cores, seconds after a firmware change).
    Unavailable when the source, a C compiler or make is missing."""
    missing = [tool for tool in ("cc", "make") if not shutil.which(tool)]
    if missing:
        raise Unavailable(f"{', '.join(missing)} not installed: the frozen unix port cannot be built")
    location = source_location()
    source_key = hashlib.sha256(repr((str(location), VARIANT)).encode())
    source_key.update((_digest_file(location) if location.is_file() else str(location)).encode())
    modules = frozen_modules()
    key = source_key.hexdigest()[:16]
    binary = cache_dir() / f"micropython-{key}-{_firmware_digest(modules)[:16]}"
    if binary.exists():
        return binary
    src = source_dir()
    work = cache_dir() / f"build-{key}"
    with _locked(work.with_suffix(".lock")):       # one build per source at a time
        if binary.exists():
            return binary
        manifest = work / "manifest.py"
        work.mkdir(parents=True, exist_ok=True)
        manifest.write_text(_manifest(modules))
        # makemanifest recompiles a module only when its source is newer than its .mpy: a
        # firmware from another worktree or an older edit would be frozen stale otherwise
        shutil.rmtree(work / "build" / "frozen_mpy", ignore_errors=True)
        (work / "build" / "frozen_content.c").unlink(missing_ok=True)
        jobs = f"-j{os.cpu_count() or 2}"
        for folder, variables in ((src / "mpy-cross", ()),
                                  (src / "ports" / "unix", (*VARIANT, f"BUILD={work / 'build'}",
                                                            f"FROZEN_MANIFEST={manifest}"))):
            proc = subprocess.run(["make", "-C", str(folder), jobs, *variables],
                                  capture_output=True, text=True)
            if proc.returncode != 0:
                raise RuntimeError(f"building the frozen unix port failed:\n{proc.stdout[-3000:]}\n"
                                   f"{proc.stderr[-3000:]}")
        staged = binary.with_suffix(".partial")
        shutil.copyfile(work / "build" / "micropython", staged)
        staged.chmod(0o755)
        os.replace(staged, binary)
    return binary


# Runs the frozen entry; nothing of the firmware's source folder on the path.
BOOT = "import sys\nsys.path[:] = ['.frozen']\nimport main_emulator\n"


def main() -> int:
    try:
        print(build())
    except Unavailable as e:
        print(f"quill.emulator.frozen: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
