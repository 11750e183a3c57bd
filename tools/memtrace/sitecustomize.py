"""Memory tracer for quilld, loaded only when this folder is put on PYTHONPATH
(nothing of it ships in quill): every QUILL_MEMTRACE_EVERY seconds (default 30,
from QUILL_MEMTRACE_DELAY on, default 40)
a quilld process appends one JSON line to QUILL_MEMTRACE_DIR/series.jsonl (RSS,
traced bytes, gc counts, live objects by type, glibc arena figures) and, when
started with PYTHONTRACEMALLOC=N, dumps a tracemalloc snapshot beside it.
Nothing is collected first unless QUILL_MEMTRACE_COLLECT is set (a forced
collection would hide cyclic garbage). With QUILL_MEMTRACE_HOLDERS set it also names what holds dead weak references
(slow: it scans every object). SIGUSR2 runs malloc_trim(0) and records RSS before and after (how much of the
growth is memory the allocator holds free). Compare snapshots with
tools/memtrace/compare.py. Usage:

    PYTHONPATH=tools/memtrace QUILL_MEMTRACE_DIR=/tmp/mt PYTHONTRACEMALLOC=10 \
        QUILL_SOAK_SECONDS=420 .venv/bin/python -m pytest tests/hostile/test_soak.py -s
"""
from __future__ import annotations

import ctypes
import gc
import json
import os
import signal
import sys
import threading
import time
import tracemalloc
import weakref
from collections import Counter
from pathlib import Path


def _status(field: str = "VmRSS") -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024
    return 0


def _rss() -> int:
    return _status("VmRSS")


def _pymalloc(out: Path) -> dict[str, int]:
    """sys._debugmallocstats' arena figures (it writes to fd 2: lent a file for the call)."""
    path = out / "mallocstats.txt"
    saved = os.dup(2)
    try:
        with open(path, "w") as f:
            os.dup2(f.fileno(), 2)
            sys._debugmallocstats()
    finally:
        os.dup2(saved, 2)
        os.close(saved)
    figures = {}
    for line in path.read_text().splitlines():
        for key in ("# arenas allocated current", "# bytes in allocated blocks", "# bytes in available blocks",
                    "Total"):
            if line.startswith(key) and key.strip("# ") not in figures:
                figures[key.strip("# ")] = int(line.split("=")[1].replace(",", ""))
    return figures


class _Mallinfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in
                ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks",
                 "uordblks", "fordblks", "keepcost")]


_libc = ctypes.CDLL("libc.so.6")
_libc.mallinfo2.restype = _Mallinfo2


def _mallinfo() -> dict[str, int]:
    m = _libc.mallinfo2()
    return {name: getattr(m, name) for name, _ in _Mallinfo2._fields_}


def _record(out: Path, n: int, started: float, extra: dict | None = None) -> None:
    if os.environ.get("QUILL_MEMTRACE_COLLECT"):  # off by default: it would hide cyclic garbage
        gc.collect()
    objs = gc.get_objects()
    types = Counter(type(o).__name__ for o in objs)
    weak = Counter(type(r()).__qualname__ for r in objs if type(r) is weakref.ref)
    line = {"n": n, "t": round(time.monotonic() - started, 1), "rss": _rss(), "objects": len(objs),
            "gc": gc.get_count(), "gc_stats": gc.get_stats(), "threads": threading.active_count(),
            "top_types": types.most_common(25), "weakref_targets": weak.most_common(40), "mallinfo": _mallinfo(),
            "blocks": sys.getallocatedblocks(),
            "rss_anon": _status("RssAnon"), "rss_file": _status("RssFile"), "pymalloc": _pymalloc(out)}
    dead = [r for r in objs if type(r) is weakref.ref and r() is None]
    holders: Counter[str] = Counter()
    for r in dead[:20] if os.environ.get("QUILL_MEMTRACE_HOLDERS") else ():
        for holder in gc.get_referrers(r):
            if holder is objs or holder is dead:
                continue
            owners = [type(o).__qualname__ for o in gc.get_referrers(holder) if o is not objs][:3]
            holders[f"{type(holder).__qualname__}<-{','.join(owners)}"] += 1
    line["dead_weakref_holders"] = holders.most_common(10)
    del dead
    if tracemalloc.is_tracing():
        line["traced"] = tracemalloc.get_traced_memory()
        tracemalloc.take_snapshot().dump(str(out / f"snap-{n:03d}.pickle"))
    if extra:
        line.update(extra)
    with open(out / "series.jsonl", "a") as f:
        f.write(json.dumps(line) + "\n")


def _start() -> None:
    out = Path(os.environ["QUILL_MEMTRACE_DIR"])
    out.mkdir(parents=True, exist_ok=True)
    every = float(os.environ.get("QUILL_MEMTRACE_EVERY", "30"))
    started = time.monotonic()

    def loop() -> None:
        n = 0
        time.sleep(float(os.environ.get("QUILL_MEMTRACE_DELAY", "40")))  # after the caller's set-up
        while True:
            _record(out, n, started)
            n += 1
            time.sleep(every)

    def trim(*_: object) -> None:
        before = _rss()
        _libc.malloc_trim(0)
        with open(out / "series.jsonl", "a") as f:
            f.write(json.dumps({"trim": True, "t": round(time.monotonic() - started, 1),
                                "before": before, "after": _rss()}) + "\n")

    signal.signal(signal.SIGUSR2, trim)
    threading.Thread(target=loop, name="memtrace", daemon=True).start()


if os.environ.get("QUILL_MEMTRACE_DIR") and os.path.basename(sys.argv[0]) == "quilld":
    _start()
