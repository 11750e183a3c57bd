"""Signing throughput with a pool of 1, 2 and 4 emulated devices (issue 29): quilld with
-device=emulator given N times, CLIENTS concurrent clients each sending signrawtransactionwithkey
calls (P2WPKH, INPUTS inputs each) until CALLS calls are answered. Prints calls/s, signatures/s,
the speed-up over one device, and how the calls were shared between the devices (from
-debug=device's log), then the load average (the machine may be shared).

Two boards: the Pico, whose native module signs in well under a millisecond (quilld's own
per-call work, one Python process, is then the limit and more devices only add processes to the
machine's cores), and the pyboard, signing in Python (the device is the limit). Each emulated
device is a MicroPython process on this machine's cores (os.cpu_count() is printed): the pool
scales until the devices outnumber them; a real board brings its own core.

    .venv/bin/python -m tests.bench.bench_device_pool [--calls 48] [--clients 8] [--inputs 10] [--board B]
"""
import argparse
import os
import re
import tempfile
import threading
import time
from collections import Counter

from tests.kit import boards
from tests.kit.rpc_daemon import QuillDaemon
from tests.signing.signkit import keys, p2wpkh, prevtx, unsigned_tx

POOLS = (1, 2, 4)
AMOUNT = 50_000


def run(devices: int, calls: int, clients: int, inputs: int, board: str) -> tuple[float, Counter]:
    key = keys(29, 1)[0]
    tx = unsigned_tx(inputs, 2, seed=29)
    entries = [prevtx(tx, i, p2wpkh(key.pubkey), AMOUNT) for i in range(inputs)]
    board = boards.ready(board)
    with tempfile.TemporaryDirectory(prefix="quill-bench-pool-") as tmp, \
            QuillDaemon(tmp, *["-device=emulator"] * devices, f"-emuboard={board}", "-emuseed=none",
                        "-debug=device", f"-rpcworkqueue={calls}") as node:
        node.rpc("getdeviceinfo", timeout=300)                 # every emulator started
        for _ in range(devices):                               # each one's signing code loaded
            node.rpc("signrawtransactionwithkey", tx.hex(), [key.wif], entries)
        log_mark = len(node.debug_log())
        left = [calls]
        lock = threading.Lock()

        def client() -> None:
            while True:
                with lock:
                    if left[0] == 0:
                        return
                    left[0] -= 1
                result = node.rpc("signrawtransactionwithkey", tx.hex(), [key.wif], entries, timeout=600)
                assert result["complete"]

        threads = [threading.Thread(target=client) for _ in range(clients)]
        started = time.perf_counter()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        seconds = time.perf_counter() - started
        shares = Counter(int(m) for m in re.findall(r"signrawtransactionwithkey: queued on device (\d+)",
                                                    node.debug_log()[log_mark:]))
    return seconds, shares


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=48)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--inputs", type=int, default=10)
    parser.add_argument("--board", action="append",
                        help="the emulated board (default: the Pico, signing with its native module, "
                             f"then {boards.SMALLEST_BOARD}, signing in Python: a slow device)")
    args = parser.parse_args()
    for board in args.board or [boards.DEFAULT_BOARD, boards.SMALLEST_BOARD]:
        slow = board == boards.SMALLEST_BOARD and not args.board
        calls, inputs = (args.calls, max(1, args.inputs // 2)) if slow else (args.calls, args.inputs)
        print(f"\nsignrawtransactionwithkey, P2WPKH x{inputs}, {calls} calls from {args.clients} clients, "
              f"{os.cpu_count()} CPU cores, emulated {board}")
        print(f"{'devices':>8} {'seconds':>8} {'calls/s':>8} {'sigs/s':>8} {'speed-up':>9}  calls per device")
        base = None
        for devices in POOLS:
            seconds, shares = run(devices, calls, args.clients, inputs, board)
            rate = calls / seconds
            base = base or rate
            share = " ".join(str(shares.get(i, 0)) for i in range(1, devices + 1))
            print(f"{devices:>8} {seconds:>8.2f} {rate:>8.2f} {rate * inputs:>8.1f} {rate / base:>8.2f}x  {share}",
                  flush=True)
        print(f"load average (1 min) after the table: {os.getloadavg()[0]:.2f}", flush=True)


if __name__ == "__main__":
    main()
