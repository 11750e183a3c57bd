"""Give memory back to the system once large requests are done.

Two means, both glibc's (nothing to do elsewhere):

glibc's malloc raises its mmap threshold each time a large block is freed, so
after the first 30 MB request every later one is carved from the heap, whose top
is rarely returned: the daemon's RSS would stay at its largest request times the
number of workers. A fixed threshold (which also stops the adjustment) keeps large
blocks in their own mappings, unmapped on free. And the many small blocks of a
giant batch (its requests and replies) leave the heap's arenas holed: malloc_trim
gives their free pages back once the batch is over (release_free_memory).
"""
from __future__ import annotations

import ctypes
import ctypes.util
import sys

M_TRIM_THRESHOLD = -1
M_MMAP_THRESHOLD = -3
MMAP_THRESHOLD = 256 * 1024
TRIM_THRESHOLD = 1024 * 1024


def _libc() -> ctypes.CDLL | None:
    if not sys.platform.startswith("linux"):
        return None
    # glibc's soname first: find_library runs `ldconfig -p` in a subprocess, tens of ms at start-up
    try:
        return ctypes.CDLL("libc.so.6")
    except OSError:
        pass
    name = ctypes.util.find_library("c")
    try:
        return ctypes.CDLL(name) if name else None
    except OSError:
        return None


_LIBC = _libc()


def release_free_memory() -> bool:
    """glibc's malloc_trim(0): the free pages of every arena back to the system (the call
    leaves the GIL while it runs). False where there is no glibc."""
    trim = getattr(_LIBC, "malloc_trim", None)
    if trim is None:
        return False
    trim.argtypes = [ctypes.c_size_t]
    return bool(trim(0))


def return_large_blocks_to_the_system() -> bool:
    """Set glibc's thresholds; False where there is no glibc (nothing to do)."""
    mallopt = getattr(_LIBC, "mallopt", None)
    if mallopt is None:
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    return bool(mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and bool(mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD))
