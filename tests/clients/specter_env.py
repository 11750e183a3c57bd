"""Specter Desktop's own virtual environment, made from specter-requirements.txt and cached.

    python = specter_python()   # <cache>/quill/venvs/specter-<digest>/bin/python

Specter pins its own versions of Flask, embit, requests..., which must not meet Quill's test
packages, so it gets a venv of its own, outside the repository (``$XDG_CACHE_HOME`` or
``~/.cache``), keyed by the digest of the requirements file: changing a pin makes a new one.
The first run installs from PyPI (about two minutes); later runs find the stamp and reuse it.
Concurrent test processes wait on a lock file for the one installing. When the install cannot
be done (no network) the test skips locally and fails in CI, as for a missing toolchain.
"""
from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

from tests.kit.toolchains import unavailable

REQUIREMENTS = Path(__file__).with_name("specter-requirements.txt")
INSTALL_TIMEOUT = 1200  # seconds: the first install in CI downloads ~70 packages


def cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "quill" / "venvs"


def venv_dir() -> Path:
    digest = hashlib.sha256(REQUIREMENTS.read_bytes()).hexdigest()[:12]
    return cache_root() / f"specter-{digest}"


def _install(target: Path) -> None:
    """A fresh venv at `target`, then the pinned requirements; the stamp is written last."""
    shutil.rmtree(target, ignore_errors=True)
    subprocess.run([sys.executable, "-m", "venv", str(target)], check=True, capture_output=True)
    pip = [str(target / "bin" / "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    subprocess.run([*pip, "--upgrade", "pip"], check=True, capture_output=True, timeout=INSTALL_TIMEOUT)
    subprocess.run([*pip, "-r", str(REQUIREMENTS)], check=True, capture_output=True, timeout=INSTALL_TIMEOUT)


def specter_python() -> Path:
    """The interpreter of Specter's venv, installing it first when it is not cached."""
    target = venv_dir()
    python = target / "bin" / "python"
    stamp = target / ".installed"
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target.parent / f"{target.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (stamp.exists() and python.exists()):
            try:
                _install(target)
            except (OSError, subprocess.SubprocessError) as e:
                detail = getattr(e, "stderr", b"") or b""
                tail = detail.decode(errors="replace").strip().splitlines()[-3:] if detail else []
                unavailable(f"cannot install Specter Desktop from {REQUIREMENTS.name} into {target}: "
                            f"{e} {' | '.join(tail)}")
            stamp.write_text(REQUIREMENTS.read_text())
    return python
