"""The emulated device's CPU time and the part of it spent collecting garbage, sampled with
Linux perf while a benchmark's case runs.

MicroPython offers no timing of its collections (gc.collect() from Python is one of them; the
others run inside an allocation that found no free block), so the firmware's process is sampled
instead: `perf record` on the micropython process at a fixed period, every sample attributed to
the C function it fell in. GC time is the samples in the collector's functions (MicroPython's
py/gc.c: the mark, the sweep, the roots' scan, and the unix port's stack and register scan),
never its allocator (gc_alloc, gc_free, gc_realloc: the cost of allocating, not of collecting).

    with DeviceProfile(pid) as profile:   # pid: the micropython process (signkit.firmware_pid)
        ... the case ...
    profile.cpu_ms, profile.gc_ms         # None when perf is missing or not permitted; gc_ms
                                          # None too when the binary has no symbols (the
                                          # pyboard model's frozen port is stripped)
"""
from __future__ import annotations

import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path
from types import TracebackType

PERIOD_NS = 100_000          # one sample per 100 µs of the device's CPU
GC_SYMBOLS = ("gc_collect", "gc_mark", "gc_sweep", "gc_helper_collect", "gc_deal_with_stack_overflow",
              "mp_thread_gc_others", "py_gc_collect")


def is_gc(symbol: str) -> bool:
    return symbol.startswith(GC_SYMBOLS)


class DeviceProfile:
    def __init__(self, pid: int | None) -> None:
        self.pid = pid
        self.cpu_ms: float | None = None
        self.gc_ms: float | None = None
        self._dir = tempfile.TemporaryDirectory(prefix="quill-gc-profile-")
        self._data = Path(self._dir.name) / "perf.data"
        self._proc: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> DeviceProfile:
        perf = shutil.which("perf")
        if perf is None or self.pid is None:
            return self
        self._proc = subprocess.Popen([perf, "record", "-e", "cpu-clock", "-c", str(PERIOD_NS),
                                       "-p", str(self.pid), "-o", str(self._data)],
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        # perf attaches asynchronously: its file first, then a moment to attach to the process
        deadline = time.monotonic() + 5
        while not self._data.exists() and self._proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(0.3)
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        try:
            if self._proc is not None:
                self._proc.send_signal(signal.SIGINT)
                self._proc.wait(30)
                if kind is None:
                    self._count()
        finally:
            self._dir.cleanup()

    def _count(self) -> None:
        # "ip,sym": the symbol alone prints empty lines
        out = subprocess.run(["perf", "script", "-i", str(self._data), "-F", "ip,sym"],
                             capture_output=True, text=True, check=False).stdout
        symbols = [(line.split(None, 1) + [""])[1].strip() for line in out.splitlines() if line.strip()]
        if not symbols:
            return
        per_sample_ms = PERIOD_NS / 1e6
        self.cpu_ms = len(symbols) * per_sample_ms
        if any(s.startswith("mp_") for s in symbols):   # else a stripped binary (the frozen port's)
            self.gc_ms = sum(1 for s in symbols if is_gc(s)) * per_sample_ms
