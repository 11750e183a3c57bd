"""Peak heap per board while signing the 500-input P2WPKH transaction, plus the
heap the whole firmware takes once loaded and the self-test's time.

    .venv/bin/python -m tests.bench.bench_board_heap

Per board, the MicroPython unix port runs tests/session_heap/device_loop.py on
the board's .mpy files at the board's heap (tests/boards/board_heap.py: a frozen
board's emulator heap adds the session modules' .mpy bytes, which stay in flash
on the board). Columns:
  emu heap       -X heapsize given; GC heap = what the interpreter reported
  baseline       live heap with the session modules loaded, idle session
  peak live      highest live heap after a collection during the 500 inputs
  headroom       GC heap - peak live
  .mpy in RAM    does the run also fit at the board's plain heap with the modules
                 loaded from files (the "filesystem" deploy)?
Then, per board heap: the live heap after the whole firmware is loaded
(runtime.build_dispatcher with every registered extension) from .mpy files, and
the self-test's run time (median of 5 processes). 64-bit interpreter: the boards
need 1.0-2.0x less for the same objects.
"""
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from boards import boardspec, build
from tests.boards import board_heap
from tests.boards.boardtest import micropython_binary

FIRMWARE_LOADED = """import sys, gc
sys.path.insert(0, %r)
from quillfw.board.runtime import build_dispatcher
d = build_dispatcher('bench')
gc.collect()
print('LIVE', gc.mem_alloc(), gc.mem_alloc() + gc.mem_free())
"""

SELFTEST_TIME = """import sys, time
sys.path.insert(0, %r)
from quillfw.board import selftest
t = time.ticks_us()
status = selftest.run()
print('SELFTEST', status, time.ticks_diff(time.ticks_us(), t))
"""


def _micropython(code, heap):
    proc = subprocess.run([micropython_binary(), "-X", "heapsize=%d" % heap, "-c", code],
                          capture_output=True, text=True, timeout=120)
    return proc.stdout + proc.stderr


def _tagged(text, tag):
    for line in text.splitlines():
        if line.startswith(tag + " "):
            return line.split()[1:]
    return None


def _table(header, rows):
    lines = [header] + [[str(c) for c in r] for r in rows]
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    out = [" | ".join(c.rjust(w) if i else c.ljust(w) for i, (c, w) in enumerate(zip(line, widths, strict=True)))
           for line in lines]
    out.insert(1, "-+-".join("-" * w for w in widths))
    print("\n".join(out))


def main():
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        boards = boardspec.load_all()
        outputs = {b.name: build.build(b, Path(tmp) / b.name) for b in boards}
        rows = []
        for b in boards:
            root = outputs[b.name].root
            heap = board_heap.emulator_heap(b, root)
            run = board_heap.sign_500_p2wpkh(root, heap)
            ok = ok and not run.error
            if b.deploy == "frozen":
                plain = "yes" if not board_heap.sign_500_p2wpkh(root, b.heap_free_bytes).error else "no"
            else:
                plain = "yes" if not run.error else "no"
            rows.append([b.name, b.deploy, f"{b.heap_free_bytes:,}", f"{heap:,}",
                         f"{run.heap:,}", f"{run.baseline:,}", f"{run.peak_live:,}",
                         f"{run.heap - run.peak_live:,}" if not run.error else "-",
                         "yes" if not run.error else "NO: " + run.error[:40], plain])
        print("500-input P2WPKH, streamed session (device_loop.py), bytes")
        _table(["board", "deploy", "board heap", "emu heap", "GC heap", "baseline", "peak live",
                "headroom", "signed", ".mpy in RAM"], rows)

        rows = []
        for b in boards:
            root = outputs[b.name].root
            live = _tagged(_micropython(FIRMWARE_LOADED % str(root), b.heap_free_bytes), "LIVE")
            times = []
            status = "?"
            for _ in range(5):
                got = _tagged(_micropython(SELFTEST_TIME % str(root), b.heap_free_bytes), "SELFTEST")
                if got:
                    status = " ".join(got[:-1])
                    times.append(int(got[-1]))
            rows.append([b.name, f"{b.heap_free_bytes:,}",
                         f"{int(live[0]):,}" if live else "does not load",
                         status, f"{statistics.median(times) / 1000:.1f}" if times else "-"])
        print("\nwhole firmware loaded from .mpy at the board heap; self-test (ms, median of 5)")
        _table(["board", "board heap", "live after load", "selftest", "selftest ms"], rows)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
