"""Exclusive locks on directories, as Core's LockDirectory: one process per data
directory, one per wallet.

A non-blocking flock on a lock file inside the directory. The kernel drops it
when the process ends however it ends, so a killed process leaves no stale lock
behind; the file itself may stay.
"""
from __future__ import annotations

import fcntl
import os


def try_lock(path: str) -> int | None:
    """Lock the file at `path` (created if needed) for this process: its open
    descriptor, which holds the lock until closed, or None when another holds it."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return None
    return fd


def unlock(fd: int) -> None:
    os.close(fd)
