"""RPC throughput with 1, 2 and 3 quilld on one PostgreSQL database (-store=postgresql://,
docs/postgresql.md "Several quilld"), behind a round-robin client: keep-alive connections spread
evenly over the instances, each sending calls back to back for a fixed time.

Three mixes, on watch-only wallets holding 200 transactions:
* reads of one wallet loaded on every instance: getbalances, a page of listtransactions,
  getblockcount, getaddressinfo, in turn;
* writes to that wallet: setlabel, each a PostgreSQL transaction that the other instances learn of
  (NOTIFY) and read the wallet again for;
* writes to a wallet of each instance's own (`own<k>`, loaded there and on the leader, which
  records the chain in every wallet): a service's customers spread over the instances.

    .venv/bin/python -m tests.bench.bench_instances [seconds]      (default 4 per cell)

The PostgreSQL server is a throwaway cluster on this machine (tests/kit/postgres.py); the client
runs in this process (asyncio, one connection per slot), so it shares the cores with the servers.
"""
from __future__ import annotations

import asyncio
import base64
import itertools
import json
import os
import sys
import tempfile
import time
from pathlib import Path

from quill.tx.hashes import sha256
from tests.kit import postgres
from tests.kit.rpc_daemon import QuillDaemon
from tests.wallet_e2e.e2ekit import Keys

AUTH = ("-rpcuser=bench", "-rpcpassword=bench")
HEADER = "Basic " + base64.b64encode(b"bench:bench").decode()
CONNECTIONS = 6         # client connections in all, spread over the instances in turn


def request(port: int, path: str, method: str, params: list) -> bytes:
    body = json.dumps({"jsonrpc": "1.0", "id": 1, "method": method, "params": params}).encode()
    return (f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: {HEADER}\r\n"
            f"Content-Type: text/plain\r\nContent-Length: {len(body)}\r\n\r\n").encode() + body


async def connection(port: int, requests: list[bytes], deadline: float, counts: list[int]) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        for req in itertools.cycle(requests):
            if time.perf_counter() >= deadline:
                return
            writer.write(req)
            head = await reader.readuntil(b"\r\n\r\n")
            length = next(int(line[15:]) for line in head.split(b"\r\n") if line[:15].lower() == b"content-length:")
            await reader.readexactly(length)
            if not head.startswith(b"HTTP/1.1 200"):
                raise RuntimeError(head.split(b"\r\n")[0].decode())
            counts[0] += 1
    finally:
        writer.close()


Mix = list[tuple[str, str, list]]


async def load(daemons: list[QuillDaemon], mixes: list[Mix], seconds: float) -> float:
    """Calls per second over `daemons`, CONNECTIONS connections dealt to them in turn; the
    connections to the i-th instance send mixes[i % len(mixes)]."""
    counts = [0]
    started = time.perf_counter()
    deadline = started + seconds
    tasks = []
    for k in range(CONNECTIONS):
        i = k % len(daemons)
        d = daemons[i]
        reqs = [request(d.port, path, method, params) for path, method, params in mixes[i % len(mixes)]]
        reqs = reqs[k % len(reqs):] + reqs[:k % len(reqs)]      # the connections start at different calls
        tasks.append(connection(d.port, reqs, deadline, counts))
    await asyncio.gather(*tasks)
    return counts[0] / (time.perf_counter() - started)


def cpu_seconds(pids: list[int]) -> float:
    total = 0
    for pid in pids:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        total += int(fields[11]) + int(fields[12])
    return total / os.sysconf("SC_CLK_TCK")


def main() -> None:
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 4.0
    tmp = Path(tempfile.mkdtemp(prefix="bench_instances"))
    cluster = postgres.Cluster()
    daemons: list[QuillDaemon] = []
    try:
        url = cluster.create_database("instances")
        keys = Keys(sha256(b"bench-instances"))
        for k in range(3):
            daemons.append(QuillDaemon(tmp / f"i{k}", *AUTH, f"-store={url}").start())
        leader = daemons[0]
        for k, d in enumerate(daemons):     # w: on every instance; own<k>: on instance k (and the leader)
            for name in ("w", f"own{k}") if k == 0 else (f"own{k}",):
                d.rpc("createwallet", name, True, True)
                d.rpc("importdescriptors", keys.import_requests(), path=f"/wallet/{name}")
        address = leader.rpc("getnewaddress", path="/wallet/w")
        leader.rpc("generatetoaddress", 200, address)
        for d in daemons[1:]:
            d.rpc("loadwallet", "w")
        labels = [leader.rpc("getnewaddress", path="/wallet/w") for _ in range(8)]
        reads = [("/wallet/w", "getbalances", []), ("/wallet/w", "listtransactions", ["*", 10, 50]),
                 ("/", "getblockcount", []), ("/wallet/w", "getaddressinfo", [address])]
        writes = [("/wallet/w", "setlabel", [a, f"l{i}"]) for i, a in enumerate(labels)]
        own = [[(f"/wallet/own{k}", "setlabel", [a, f"l{i}"]) for i, a in enumerate(labels)] for k in range(3)]
        server_pids = [d.proc.pid for d in daemons]
        print(f"{'mix':>18} | {'instances':>9} | {'calls/s':>8} | {'x one':>5} | quilld CPU s per s")
        for name, mixes in (("reads, one wallet", [reads]), ("writes, one wallet", [writes]),
                            ("writes, own wallet", own)):
            one = None
            for n in (1, 2, 3):
                cpu = cpu_seconds(server_pids)
                rate = asyncio.run(load(daemons[:n], mixes, seconds))
                busy = (cpu_seconds(server_pids) - cpu) / seconds
                one = one or rate
                print(f"{name:>18} | {n:>9} | {rate:>8.0f} | {rate / one:>5.2f} | {busy:.2f}", flush=True)
        print(f"load average (1 min): {os.getloadavg()[0]:.2f}; {os.cpu_count()} cores; {CONNECTIONS} client "
              "connections; PostgreSQL and the client on the same machine")
    finally:
        for d in daemons:
            d.stop()
        cluster.stop()


if __name__ == "__main__":
    main()
