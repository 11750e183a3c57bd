"""The data directory lock, as Core's LockDirectory: one daemon per data directory.

An exclusive, non-blocking lock on `<chain datadir>/.lock`, taken before anything
else is written there (cookie, debug.log, stores). The kernel drops it when the
process ends however it ends, so a killed daemon leaves no stale lock behind.
"""
from __future__ import annotations

import fcntl
import os

LOCK_FILE = ".lock"


class DataDirLocked(OSError):
    """Another process holds the directory."""


def lock_directory(directory: str, client_name: str = "Quill") -> int:
    """Lock `directory` for this process; the open descriptor holds the lock
    until it is closed or the process exits."""
    path = os.path.join(directory, LOCK_FILE)
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    except OSError as e:
        raise DataDirLocked(f"Cannot write to directory '{directory}'; check permissions ({e.strerror}).") from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        raise DataDirLocked(f"Cannot obtain a lock on directory {directory}. "
                            f"{client_name} is probably already running.") from None
    return fd
