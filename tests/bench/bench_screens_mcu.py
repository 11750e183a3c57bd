"""What drawing a screen costs on the Cortex-M targets (issue 26): a transaction review of
nine outputs and a fee, drawn page by page with the firmware's own code
(quillfw.ui.display, the emulator's panel) on each panel size, in instructions per page
(QEMU -icount shift=0) and milliseconds at the board's clock (quill.emulator.mcu_bench),
without a screens' folder and with one (each page's text and 7,200 bytes of 1-bit rows
sent on the board's second UART, firmware/emulator_frames.py); and the heap it takes on
the target's board heap: the lowest free heap after a collection at every strip, against
the free heap before the display's modules were imported.

    .venv/bin/python -m tests.bench.bench_screens_mcu [--targets qemu-m0plus,qemu-m4]
"""
import argparse
import shutil
import sys
import tempfile

from quill.emulator import mcu_bench, qemu

PANELS = ("st7789-240x240", "st7789-240x135", "ssd1306-128x64")

# On the target: %(panels)r, %(frames)r and %(collect)r filled in; prints one line per panel
# and one of the heap.
DRAW = """import gc, sys, time
sys.path.insert(0, '/rom')
gc.collect()
FREE = gc.mem_free()
import emulator_display
from quillfw.ui.display import Display
from quillfw.ui.flow import _footer
from quillfw.ui.screen import Screen
items = [("Output %%d of 9: bcrt1qqqqsyqcyq5rqwzqfpg9scrgwpugpzysnard0ew 0.0015000%%d BTC"
          %% (i + 1, i),) for i in range(9)] + [("Fee: 0.00001500 BTC",)]
screen = Screen("review", "Send bitcoin", items)
LOW = [FREE]


class Probe(emulator_display.EmulatedPanel):
    def strip(self, fb, buffer, top, rows):
        emulator_display.EmulatedPanel.strip(self, fb, buffer, top, rows)
        if %(collect)r:
            gc.collect()
            LOW[0] = min(LOW[0], gc.mem_free())


for kind in %(panels)r:
    gc.collect()
    display = Display(Probe(kind, None, %(frames)r))
    n = display.pages(screen)
    t0 = time.ticks_us()
    for page in range(n):
        display.draw(screen, display.page_rows(screen, page), page, n,
                     _footer(page, n, n - 1, False, n, "Approve"))
    print("PAGE", kind, n, time.ticks_diff(time.ticks_us(), t0) * 1000 // n)
print("HEAP", FREE, LOW[0])
"""


def run(target: str, frames: bool, collect: bool) -> tuple[dict[str, tuple[int, int]], tuple[int, int]]:
    """({panel: (pages, instructions per page)}, (free before, lowest free while drawing))."""
    listener = None
    if frames:
        listener, _ = qemu.frame_listener(tempfile.mkdtemp(prefix="quill-bench-screens-"))
    board = qemu.Board(target, icount=True, frames=listener)
    try:
        board.enter_raw_repl()
        out, err = board.exec(DRAW % {"panels": PANELS, "frames": frames, "collect": collect})
    finally:
        board.close()
        if listener is not None:
            shutil.rmtree(listener.parent, ignore_errors=True)
    if err:
        raise RuntimeError(f"{target}: {err}")
    pages, heap = {}, (0, 0)
    for line in out.splitlines():
        fields = line.split()
        if fields[:1] == ["PAGE"]:
            pages[fields[1]] = (int(fields[2]), int(fields[3]))
        elif fields[:1] == ["HEAP"]:
            heap = (int(fields[1]), int(fields[2]))
    return pages, heap


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="bench_screens_mcu")
    parser.add_argument("--targets", default="qemu-m0plus,qemu-m4")
    args = parser.parse_args(argv)
    for target in args.targets.split(","):
        try:
            plain, _ = run(target, frames=False, collect=False)
            sent, _ = run(target, frames=True, collect=False)
            _, (free, low) = run(target, frames=False, collect=True)
        except qemu.Unavailable as e:
            print(f"{target}: skipped: {e}")
            continue
        hz = mcu_bench.clock_hz(target)
        print(f"\n{target} (a review of 9 outputs; ms at {hz / 1e6:g} MHz, quill.emulator.mcu_bench's CPI)")
        print(f"  {'panel':16} {'pages':>5} {'instr/page':>12} {'ms/page':>8} {'+frames':>12} {'ms':>7}")
        for kind in PANELS:
            n, each = plain[kind]
            more = sent[kind][1] - each
            print(f"  {kind:16} {n:>5} {each:>12,} {mcu_bench.milliseconds(target, each):8.1f} "
                  f"{more:>12,} {mcu_bench.milliseconds(target, more):7.1f}")
        print(f"  heap: {free:,} bytes free before the display's modules, {low:,} at the lowest while "
              f"drawing (collected at every strip): {free - low:,} bytes taken")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
