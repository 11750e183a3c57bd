"""Emulator entry: the firmware under the MicroPython unix port, serving its
stdin/stdout (a pty or pipes set up by quill-emu). Logs go to stderr.

    micropython main_emulator.py [--idle-ms N] [--board NAME] [--approve auto|ask|channel]
                                 [--datadir DIR] [--confirm-timeout-ms N] [--target NAME]
                                 [--boot-id HEX] [--display KIND] [--screen-dir DIR] [--frames]

--approve: who confirms (firmware/emulator_approval.py; default auto);
--datadir: where the confirmation policy is kept (confirm_policy.json) and
where the ask/channel approvers exchange their files (without it the policy
lives in memory and only auto is possible); --confirm-timeout-ms: how long a
confirmation waits (default: quillfw.signing.confirm.DEFAULT_TIMEOUT_MS);
--keys: answer the seed and key methods (emulator_keys.py);
--generate-seed (with --datadir): make the device's seed if it has none
(emulator_keys.generate_seed), then exit: quill-emu --seed=generate runs this
once before the firmware serves; --display: the emulated panel
(emulator_display.PANELS, or none, the default here: quill-emu picks its own
default, quill.emulator.launcher.default_display), --screen-dir: where it
writes every screen as PNG and text; --frames (a qemu target, which has no
filesystem): every screen goes to the host on the board's second UART instead
(emulator_frames), and quill-emu writes the files. On a qemu target the
confirmation policy and the review's outputs are kept in RAM, and --approve
channel takes the debug link's presses only (its files need a filesystem).

Also registers debug methods that exist only here, never in a device build:
debug_sleep (a long-running request that polls the link, to exercise ping
while busy or awaiting the user), debug_alloc (a request that can exhaust the
heap), debug_heap (free heap and largest free block) and debug_raise (a handler bug),
and the debug link (emulator_debuglink: debug_layout, debug_press).
"""
import sys
import time

from quillfw.board.runtime import build_dispatcher, serve
from quillfw.signing.confirm import AUTO, DEFAULT_TIMEOUT_MS
from quillfw.wire.dispatcher import ANY, BOOL, BYTES, TEXT, UINT, Method
from quillfw.wire.errors import INVALID_PARAMS, DeviceError
from quillfw.wire.transport import StdioTransport

MAX_SLEEP_MS = 60000
POLICY_FILE = "confirm_policy.json"


def debug_sleep(ctx, params):
    ms = params["ms"]
    if ms > MAX_SLEEP_MS:
        raise DeviceError(INVALID_PARAMS, "Parameter 'ms' exceeds %d" % MAX_SLEEP_MS)
    if params.get("awaiting_user"):
        ctx.awaiting_user()
    start = time.ticks_ms()
    while time.ticks_diff(time.ticks_ms(), start) < ms:
        ctx.poll_link()
        time.sleep_ms(2)
    return ms


def debug_alloc(ctx, params):
    block = bytearray(params["size"])
    return len(block)


def debug_echo(ctx, params):
    return params["data"]


def debug_heap(ctx, params):
    """[free, largest]: the free heap after a collection and the largest block that
    can be allocated (found by halving: the heap's fragmentation, as mem_info's
    "max free sz" shows it, without printing to the link)."""
    import gc
    gc.collect()
    free = gc.mem_free()
    low, high = 0, free
    while low < high:
        size = (low + high + 1) // 2
        try:
            bytearray(size)     # allocated, then garbage at once
            low = size
        except MemoryError:
            high = size - 1
    gc.collect()
    return [free, low]


def debug_raise(ctx, params):
    raise ValueError("handler bug with private detail")


DEBUG_METHODS = [
    Method("debug_sleep", debug_sleep, {"ms": (UINT, True), "awaiting_user": (BOOL, False)}),
    Method("debug_alloc", debug_alloc, {"size": (UINT, True)}),
    Method("debug_echo", debug_echo, {"data": (BYTES, True)}, views=True),
    Method("debug_heap", debug_heap),
    Method("debug_raise", debug_raise, {"detail": (ANY, False)}),
]


def _option(argv, name, default):
    if name in argv:
        return argv[argv.index(name) + 1]
    return default


def _log(text):
    sys.stderr.write("quill-fw: " + text + "\n")


def _approver(kind, datadir):
    """The confirmation approver spec (quillfw.signing.confirm): auto decides at
    once; ask and channel are emulator_approval's, imported only while a
    confirmation waits (datadir None: a qemu board's channel, the debug link's
    presses only)."""
    if kind == "auto":
        return AUTO
    return (kind, "emulator_approval", datadir)


def _display(kind, screen_dir, frames=False):
    """The display spec (quillfw.signing.confirm): None for --display none; kind is
    <panel>-<width>x<height> (emulator_display.PANELS, imported only to draw: at boot
    every name a module brings is interned on the heap)."""
    if kind == "none":
        return None
    panel, _, size = kind.partition("-")
    width, _, height = size.partition("x")
    if panel not in ("st7789", "ssd1306") or not (width.isdigit() and height.isdigit()):
        raise SystemExit("quill-fw: --display must be none or <panel>-<width>x<height>")
    buttons = [{"name": b, "role": b} for b in ("next", "prev", "approve", "reject")]
    info = {"panel": panel, "width": int(width), "height": int(height), "buttons": buttons}
    return (info, "emulator_display", kind, screen_dir, frames)


def _debug_layout(ctx, params):
    from emulator_debuglink import debug_layout
    return debug_layout(ctx, params)


def _debug_press(ctx, params):
    from emulator_debuglink import debug_press
    return debug_press(ctx, params)


def main(argv):
    idle_ms = int(_option(argv, "--idle-ms", "2000"))
    board = _option(argv, "--board", "emulator")
    kind = _option(argv, "--approve", "auto")
    datadir = _option(argv, "--datadir", None)
    timeout_ms = int(_option(argv, "--confirm-timeout-ms", str(DEFAULT_TIMEOUT_MS)))
    target = _option(argv, "--target", "unix")
    boot_id = _option(argv, "--boot-id", None)  # ports whose os.urandom repeats at every boot
    display = _display(_option(argv, "--display", "none"), _option(argv, "--screen-dir", None),
                       "--frames" in argv)
    if kind not in ("auto", "ask", "channel"):
        raise SystemExit("quill-fw: --approve must be auto, ask or channel")
    if datadir is None and kind != "auto":
        raise SystemExit("quill-fw: --approve %s needs --datadir" % kind)
    # a qemu board has no filesystem: its policy, review and approval channel live in RAM
    flash = datadir if target == "unix" else None
    if flash is None and kind == "ask":
        raise SystemExit("quill-fw: --approve ask needs a filesystem (the unix target)")
    if "--generate-seed" in argv:
        if datadir is None:
            raise SystemExit("quill-fw: --generate-seed needs --datadir")
        from emulator_keys import generate_seed
        generate_seed(datadir, _log)
        return
    if display is not None:
        import emulator_debuglink  # noqa: F401  (it stays, with its state: at the heap's bottom)
        from quillfw.compat import forget
        if display[4]:      # the frames' names interned at boot too (quillfw.board.runtime)
            import emulator_frames  # noqa: F401
            forget("emulator_frames")
        elif display[3]:    # the screen files' names likewise
            import emulator_png  # noqa: F401
            forget("emulator_png")
    dispatcher = build_dispatcher(board, emulator=True, approver=_approver(kind, flash),
                                  policy_path=flash and flash + "/" + POLICY_FILE,
                                  confirm_timeout_ms=timeout_ms, target=target, boot_id=boot_id,
                                  display=display)
    dispatcher.register(DEBUG_METHODS + [
        Method("debug_layout", _debug_layout, out_of_band=True),                # the debug link
        Method("debug_press", _debug_press, {"button": (TEXT, True)}, out_of_band=True)])
    if "--keys" in argv and datadir is not None:
        from emulator_keys import register_keys
        # a qemu board has no filesystem: its seed and registrations are kept in RAM
        register_keys(dispatcher, flash)
    if target == "unix":
        _log("serving, idle timeout %d ms, confirmation by %s" % (idle_ms, kind))
    # on a qemu target stderr is the same UART as the link: no log lines there
    serve(StdioTransport(), dispatcher, idle_ms=idle_ms, log=_log if target == "unix" else None)


main(sys.argv)
