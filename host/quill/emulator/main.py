"""quill-emu: the Quill firmware under real MicroPython, as a serial port.

    quill-emu [--heapsize 97K] [--idle-ms 2000] [--board NAME] [--no-restart]
              [--stdio] [--port-file PATH]

Prints the pty path to open (e.g. with pyserial, or quilld -device=PATH) on
its first stdout line, then runs until SIGTERM/SIGINT. With --stdio the
firmware serves this process's own stdin/stdout instead (pipes).
"""
import argparse
import os
import signal
import sys
import threading

from quill.emulator.launcher import (DEFAULT_HEAPSIZE, DEFAULT_IDLE_MS, Emulator,
                                     firmware_command, firmware_env)


def parse_args(argv):
    parser = argparse.ArgumentParser(prog="quill-emu", description=__doc__.split("\n\n")[0])
    parser.add_argument("--heapsize", default=DEFAULT_HEAPSIZE,
                        help="MicroPython heap, e.g. 97K (pyboard, default) or 192K (Pico)")
    parser.add_argument("--idle-ms", type=int, default=DEFAULT_IDLE_MS,
                        help="drop a partial frame idle this long (default 2000)")
    parser.add_argument("--board", default="emulator", help="board name reported by get_info")
    parser.add_argument("--no-restart", action="store_true",
                        help="do not restart the firmware when it exits")
    parser.add_argument("--stdio", action="store_true",
                        help="serve this process's stdin/stdout instead of a pty")
    parser.add_argument("--port-file", help="also write the pty path to this file")
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    if args.stdio:
        command = firmware_command(args.heapsize, args.idle_ms, args.board)
        os.execve(command[0], command, firmware_env())
    emulator = Emulator(args.heapsize, args.idle_ms, args.board, restart=not args.no_restart)
    done = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: done.set())
    port = emulator.start()
    try:
        if args.port_file:
            with open(args.port_file, "w") as f:
                f.write(port + "\n")
        print(port, flush=True)
        while not done.wait(0.2):
            if args.no_restart and not emulator.alive():
                break
    finally:
        emulator.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
