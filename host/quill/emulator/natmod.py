"""Build the optional native crypto module, quill_secp256k1.mpy (libsecp256k1).

    python -m quill.emulator.natmod [--arch x64|armv6m|armv7emsp] [--gen-kb 2|22|86] [--window N]
                                    # prints the .mpy path and what it costs a board

The module's own code is firmware/natmod/quill_secp256k1 (a C wrapper and a
Makefile for MicroPython's py/dynruntime.mk); libsecp256k1 and MicroPython are
third-party sources that never enter the repository: they are unpacked from
../shared/toolchains (or taken from $SECP256K1_SRC / $MICROPYTHON_SRC) into a
cache outside it, and each build lands there too, keyed by what went into it.
x64 is the unix-port emulator's architecture; armv6m (RP2040), armv7emsp
(STM32F4 with its FPU) and armv7m (a Cortex-M3/M4 firmware built without floating
point, as the qemu-m4 target) need arm-none-eabi-gcc. mpy_ld.py needs pyelftools (and `ar` to link
libgcc on ARM), installed with the test extras. A cold build takes ~10 s.

The tables are build parameters, chosen per board (boards/<board>/board.json
"natmod"): ECMULT_GEN_KB (2, 22 or 86: the k*G comb, which every signature and
public key uses) and ECMULT_WINDOW_SIZE (2..24: verification's table of G,
2^(w-2) points twice). A board loads the module's code and tables into RAM
(MicroPython copies a native .mpy's text into its heap when importing it), so
sizes(path) reports what the build costs: the .mpy bytes on flash and the text
(code and tables) and bss bytes in RAM.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
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


# Defaults for a build without a board: the smallest tables (the unix emulator's).
GEN_KB = 2
WINDOW = 2


def _build_key(arch: str, micropython: Path, secp256k1: Path, gen_kb: int, window: int,
               source: Path, profile: bool) -> str:
    digest = hashlib.sha256(f"{arch}\0{micropython}\0{secp256k1}\0{gen_kb}\0{window}\0{profile}\0".encode())
    for path in sorted(source.iterdir()):
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


def build(arch: str = "x64", gen_kb: int = GEN_KB, window: int = WINDOW,
          source: Path = SOURCE_DIR, profile: bool = False) -> Path:
    """The built quill_secp256k1.mpy for arch with these table sizes (ECMULT_GEN_KB,
    ECMULT_WINDOW_SIZE), building it first if needed. source: the module's own files
    (another revision's, for a before/after benchmark); profile: the ARMv6-M
    profiling build (call counters, tests/bench/bench_natmod_profile.py)."""
    if arch not in ARCHES:
        raise ValueError(f"unknown architecture {arch!r} ({', '.join(ARCHES)})")
    if gen_kb not in (2, 22, 86) or not 2 <= window <= 24:
        raise ValueError(f"ECMULT_GEN_KB must be 2, 22 or 86 and ECMULT_WINDOW_SIZE 2..24 "
                         f"(got {gen_kb}, {window})")
    micropython = _unpacked("MICROPYTHON_SRC", "micropython")
    secp256k1 = _unpacked("SECP256K1_SRC", "secp256k1")
    key = _build_key(arch, micropython, secp256k1, gen_kb, window, source, profile)
    out = cache_dir() / "build" / key / arch / f"{MODULE}.mpy"
    if out.exists() and out.with_suffix(".json").exists():
        return out
    _check_tools(arch)
    work = Path(tempfile.mkdtemp(dir=_mkdir(cache_dir() / "build")))
    try:
        for path in source.iterdir():
            shutil.copy(path, work / path.name)
        proc = subprocess.run(["make", f"ARCH={arch}", f"MPY_DIR={micropython}",
                               f"SECP256K1_DIR={secp256k1}", f"PYTHON={sys.executable}",
                               f"ECMULT_GEN_KB={gen_kb}", f"ECMULT_WINDOW_SIZE={window}",
                               f"PROFILE={int(profile)}"],
                              cwd=work, capture_output=True, text=True)
        if proc.returncode != 0:
            raise NatmodUnavailable(f"building {MODULE} for {arch} failed:\n{proc.stdout[-2000:]}"
                                    f"{proc.stderr[-2000:]}")
        _mkdir(out.parent)
        # mpy_ld's report: the code and tables the board copies into RAM, and the static data
        found = dict(re.findall(r"^(text|bss) size:\s+(\d+)", proc.stdout, re.M))
        record = {"arch": arch, "ecmult_gen_kb": gen_kb, "ecmult_window_size": window,
                  "mpy_bytes": (work / f"{MODULE}.mpy").stat().st_size,
                  "text_bytes": int(found.get("text", 0)), "bss_bytes": int(found.get("bss", 0))}
        staged = work / "sizes.json"
        staged.write_text(json.dumps(record, indent=1, sort_keys=True) + "\n")
        os.replace(work / f"{MODULE}.mpy", out)  # atomic: concurrent builds write the same bytes
        os.replace(staged, out.with_suffix(".json"))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return out


def sizes(module: Path) -> dict:
    """What a built module costs a board: {"mpy_bytes": on flash, "text_bytes": code and
    tables copied into RAM at import, "bss_bytes": its static data (the context), ...}."""
    return json.loads(Path(module).with_suffix(".json").read_text())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--arch", choices=ARCHES, default="x64")
    ap.add_argument("--gen-kb", type=int, default=GEN_KB, help="ECMULT_GEN_KB: 2, 22 or 86")
    ap.add_argument("--window", type=int, default=WINDOW, help="ECMULT_WINDOW_SIZE: 2..24")
    args = ap.parse_args(argv)
    try:
        out = build(args.arch, args.gen_kb, args.window)
        print(out)
        print(json.dumps(sizes(out), sort_keys=True))
    except NatmodUnavailable as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
