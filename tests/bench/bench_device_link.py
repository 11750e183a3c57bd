"""Host <-> quill-emu link: round trips/s and bytes/s for small and maximum-size
messages, through pyserial on the emulator's pty (the path quilld uses), with
the firmware on MicroPython at the pyboard heap (97K).

    .venv/bin/python -m tests.bench.bench_device_link [--rounds N]

Figures are for the unix-port emulator on this machine; a board's USB CDC
stdin path is far slower (see shared/research/micropython-probe.md §4).
"""
import argparse
import statistics
import subprocess
import time

from quill.device.client import DeviceClient
from quill.device.codec import canonical_dumps
from quill.emulator.launcher import Emulator
from quillfw.limits import MAX_MESSAGE_SIZE
from quillfw.wire.framing import OVERHEAD


def _largest_echo_payload():
    """Bytes for debug_echo so that the request body is exactly MAX_MESSAGE_SIZE."""
    n = MAX_MESSAGE_SIZE
    while len(canonical_dumps(_echo_request(n))) > MAX_MESSAGE_SIZE:
        n -= 1
    return n


def _echo_request(n, rid="0123456789"):
    return {"id": rid, "method": "debug_echo", "params": {"data": b"\x00" * n}}


def _time_calls(client, method, params, rounds):
    samples = []
    for _ in range(rounds):
        start = time.perf_counter()
        client.call(method, params)
        samples.append(time.perf_counter() - start)
    return samples


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=300)
    parser.add_argument("--board", default="pyboard", help="the board modelled (default: the smallest)")
    args = parser.parse_args()
    with Emulator(board=args.board, stderr=subprocess.DEVNULL) as emu, \
            DeviceClient(emu.port) as client:
        client.get_info()
        big = _largest_echo_payload()
        cases = [
            ("ping", "ping", None),
            ("get_info", "get_info", None),
            ("echo 32 B", "debug_echo", {"data": b"\x00" * 32}),
            (f"echo {big} B (max)", "debug_echo", {"data": b"\x00" * big}),
        ]
        print(f"quill-emu (MicroPython unix port, modelling {args.board}) via pyserial on "
              f"{emu.port}, {args.rounds} rounds each\n")
        print(f"{'message':24s} {'req B':>6s} {'reply B':>8s} {'median ms':>10s} {'p90 ms':>8s} "
              f"{'round trips/s':>14s} {'payload B/s (each way)':>24s}")
        for name, method, params in cases:
            _time_calls(client, method, params, 5)  # warm-up
            samples = sorted(_time_calls(client, method, params, args.rounds))
            request = canonical_dumps({"id": "0123456789", "method": method,
                                       **({"params": params} if params else {})})
            result = client.call(method, params)
            reply = canonical_dumps({"id": "0123456789", "result": result})
            median = statistics.median(samples)
            payload = len(params["data"]) if params and "data" in params else 0
            print(f"{name:24s} {len(request) + OVERHEAD:6d} {len(reply) + OVERHEAD:8d} "
                  f"{median * 1e3:10.2f} {samples[int(len(samples) * 0.9)] * 1e3:8.2f} "
                  f"{1 / median:14.0f} {payload / median:24.0f}")
        ping = canonical_dumps({"id": "0123456789", "method": "ping"})
        print(f"\nframing overhead: {OVERHEAD} B per message (magic 2 + length 4 + CRC-32 4); "
              f"a ping request is {len(ping)} B of CBOR + {OVERHEAD} B = {len(ping) + OVERHEAD} B")


if __name__ == "__main__":
    main()
