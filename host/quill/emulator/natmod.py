"""Build the optional native crypto module, quill_secp256k1.mpy (libsecp256k1).

    python -m quill.emulator.natmod [--arch x64|armv6m|armv7emsp]   # prints the .mpy path

The module's own code is firmware/natmod/quill_secp256k1 (a C wrapper and a
Makefile for MicroPython's py/dynruntime.mk); libsecp256k1 and MicroPython are
third-party sources that never enter the repository: they are unpacked from
../shared/toolchains (or taken from $SECP256K1_SRC / $MICROPYTHON_SRC) into a
cache outside it, and each build lands there too, keyed by what went into it.
x64 is the unix-port emulator's architecture; armv6m (RP2040), armv7emsp
(STM32F4 with its FPU) and armv7m (a Cortex-M3/M4 firmware built without floating
point, as the qemu-m4 target) need arm-none-eabi-gcc. mpy_ld.py needs pyelftools (and `ar` to link
libgcc on ARM), installed with the test extras.
"""
from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

import quillfw

MODULE = "quill_secp256k1"
FIRMWARE_DIR = Path(quillfw.__file__).resolve().parent.parent
SOURCE_DIR = FIRMWARE_DIR / "natmod" / MODULE
SHARED_TOOLCHAINS = FIRMWARE_DIR.parent.parent / "shared" / "toolchains"
ARCHES = ("x64", "armv6m", "armv7m", "armv7emsp")


class NatmodUnavailable(RuntimeError):
    """A source, compiler or Python tool the build needs is missing."""


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "quill-natmod"


def _archive(env: str, name: str) -> Path:
    value = os.environ.get(env)
    path = Path(value) if value else SHARED_TOOLCHAINS / name / f"{name}-src.tar.gz"
    if not path.exists():
        raise NatmodUnavailable(f"{name} source not found at {path} (set {env})")
    return path


def _unpacked(env: str, name: str) -> Path:
    """The source folder: $ENV when it names a folder, else the archive unpacked in the cache."""
    path = _archive(env, name)
    if path.is_dir():
        return path
    stat = path.stat()
    key = hashlib.sha256(f"{path}\0{stat.st_size}\0{stat.st_mtime_ns}".encode()).hexdigest()[:16]
    dest = cache_dir() / "src" / f"{name}-{key}"
    if not (dest / ".complete").exists():
        work = Path(tempfile.mkdtemp(dir=_mkdir(cache_dir() / "src")))
        try:
            with tarfile.open(path) as tar:
                tar.extractall(work, filter="data")
            (work / ".complete").touch()
            if dest.exists():
                shutil.rmtree(work)
            else:
                os.replace(work, dest)
        finally:
            shutil.rmtree(work, ignore_errors=True)
    inner = [p for p in dest.iterdir() if p.is_dir()]
    return inner[0] if len(inner) == 1 else dest


def _mkdir(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    return path


def _build_key(arch: str, micropython: Path, secp256k1: Path) -> str:
    digest = hashlib.sha256(f"{arch}\0{micropython}\0{secp256k1}\0".encode())
    for path in sorted(SOURCE_DIR.iterdir()):
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:24]


def _check_tools(arch: str) -> None:
    try:
        import elftools  # noqa: F401
    except ImportError as exc:
        raise NatmodUnavailable("pyelftools is not installed (pip install pyelftools)") from exc
    if arch != "x64":
        if not shutil.which("arm-none-eabi-gcc"):
            raise NatmodUnavailable("arm-none-eabi-gcc not found (apt-get install gcc-arm-none-eabi "
                                    "libnewlib-arm-none-eabi)")
        try:
            import ar  # noqa: F401
        except ImportError as exc:
            raise NatmodUnavailable("the ar package is not installed (pip install ar)") from exc
    elif not shutil.which("gcc"):
        raise NatmodUnavailable("gcc not found")


def build(arch: str = "x64") -> Path:
    """The built quill_secp256k1.mpy for arch, building it first if needed."""
    if arch not in ARCHES:
        raise ValueError(f"unknown architecture {arch!r} ({', '.join(ARCHES)})")
    micropython = _unpacked("MICROPYTHON_SRC", "micropython")
    secp256k1 = _unpacked("SECP256K1_SRC", "secp256k1")
    out = cache_dir() / "build" / _build_key(arch, micropython, secp256k1) / arch / f"{MODULE}.mpy"
    if out.exists():
        return out
    _check_tools(arch)
    work = Path(tempfile.mkdtemp(dir=_mkdir(cache_dir() / "build")))
    try:
        for path in SOURCE_DIR.iterdir():
            shutil.copy(path, work / path.name)
        proc = subprocess.run(["make", f"ARCH={arch}", f"MPY_DIR={micropython}",
                               f"SECP256K1_DIR={secp256k1}", f"PYTHON={sys.executable}"],
                              cwd=work, capture_output=True, text=True)
        if proc.returncode != 0:
            raise NatmodUnavailable(f"building {MODULE} for {arch} failed:\n{proc.stdout[-2000:]}"
                                    f"{proc.stderr[-2000:]}")
        _mkdir(out.parent)
        os.replace(work / f"{MODULE}.mpy", out)  # atomic: concurrent builds write the same bytes
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--arch", choices=ARCHES, default="x64")
    args = ap.parse_args(argv)
    try:
        print(build(args.arch))
    except NatmodUnavailable as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
