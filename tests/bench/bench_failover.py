"""Failover time with the wallets and the chain in PostgreSQL (-store=postgresql://, docs/postgresql.md):
quilld instances on one database, one leading the chain and the others replicas (which answer
RPC all along); the leader is killed (kill -9) and the time until another leads (mines a block) is
measured, round after round, a new replica started each round to keep the count. The one that
takes over opens the chain and the wallets again as the leader's, so the time grows with them:
each round is run with 1 and with 20 wallets.

    .venv/bin/python -m tests.bench.bench_failover [rounds]      (default 5)

The PostgreSQL server is a throwaway cluster on this machine (tests/kit/postgres.py).
"""
from __future__ import annotations

import os
import signal
import statistics
import sys
import tempfile
import time
from pathlib import Path

from tests.kit import postgres
from tests.kit.anyone import ANYONE_ADDRESS
from tests.kit.rpc_daemon import QuillDaemon, RPCFailure

AUTH = ("-rpcuser=bench", "-rpcpassword=bench")
INSTANCES = 3


def first_leader(daemons: list[QuillDaemon], timeout: float = 60.0) -> QuillDaemon:
    """The replica that took the lead, once the chain mines again (a replica passes mining to the
    leader, and answers -9 while none is reachable); the new leader is the one whose log says so."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for d in daemons:
            try:
                d.rpc("generatetoaddress", 1, ANYONE_ADDRESS, timeout=5)
            except (RPCFailure, OSError):
                continue
            return next(d for d in daemons if "This quilld now leads" in d.debug_log())
        time.sleep(0.01)
    raise TimeoutError("no replica took the lead")


def rounds_with(cluster: postgres.Cluster, tmp: Path, wallets: int, rounds: int) -> list[float]:
    url = cluster.create_database(f"failover{wallets}")
    started = 0

    def start(wait: bool) -> QuillDaemon:
        nonlocal started
        started += 1
        return QuillDaemon(tmp / f"{wallets}-{started}", *AUTH, f"-store={url}", wait=wait).start()

    serving = start(True)
    for i in range(wallets):
        serving.rpc("createwallet", f"w{i}", True, True, None, None, None, True)
    serving.rpc("generatetoaddress", 101, ANYONE_ADDRESS)
    standbys = [start(True) for _ in range(INSTANCES - 1)]
    times = []
    try:
        for _ in range(rounds):
            serving.proc.send_signal(signal.SIGKILL)
            t = time.monotonic()
            serving.proc.wait()
            serving = first_leader(standbys)
            times.append(time.monotonic() - t)
            assert len(serving.rpc("listwallets")) == wallets
            standbys.remove(serving)
            standbys.append(start(True))
    finally:
        for d in [serving, *standbys]:
            d.stop()
    return times


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    tmp = Path(tempfile.mkdtemp(prefix="bench_failover"))
    cluster = postgres.Cluster()
    try:
        print(f"{'wallets':>7} | {'rounds':>6} | {'min s':>6} | {'median s':>8} | {'max s':>6}")
        for wallets in (1, 20):
            times = rounds_with(cluster, tmp, wallets, rounds)
            print(f"{wallets:>7} | {rounds:>6} | {min(times):>6.2f} | {statistics.median(times):>8.2f} | "
                  f"{max(times):>6.2f}", flush=True)
        print(f"load average (1 min): {os.getloadavg()[0]:.2f}; {INSTANCES} instances, "
              "kill -9 of the leader, time until another mines")
    finally:
        cluster.stop()


if __name__ == "__main__":
    main()
