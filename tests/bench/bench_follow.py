"""Following the real Bitcoin Core from scratch, and a wallet born late in the chain scanned with block
filters (scanblocks) and without; every answer compared with a watch-only Core wallet holding the same
descriptors (the assertions of tests/follow/test_follow_core.py, at full size).

    .venv/bin/python -m tests.bench.bench_follow [blocks]      (default 2,000; the issue's run: 20000)

The chain is made here and given to Core's submitblock (corekit.SubmittedChain: two or three
transactions per block paying mixed output types, 10 minutes apart; the watched keys are paid in one
block of ten and spend with change in one of thirty); the wallet is born at 3/4 of the height.
The follow time counts from quilld's start.
"""
from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

from quill.tx.hashes import sha256
from tests.follow.corekit import Reference, SubmittedChain, answers_of, wait_for
from tests.kit.bitcoind import BitcoinD
from tests.kit.rpc_daemon import QuillDaemon
from tests.wallet_e2e.e2ekit import Keys

WALLET_EVERY = 10       # the watched wallet has transactions in one block of ten


def run(nblocks: int) -> list[tuple[str, str]]:
    rows = []
    tmp = Path(tempfile.mkdtemp(prefix="bench_follow"))
    core = BitcoinD(tmp / "core", "-blockfilterindex=1").start()
    try:
        chain = SubmittedChain(core, Keys(sha256(b"bench_follow")), wallet_every=WALLET_EVERY)
        t = time.monotonic()
        chain.build(nblocks)
        rows.append(("build the chain on Core", f"{time.monotonic() - t:.1f} s ({nblocks} blocks)"))
        birth = nblocks * 3 // 4
        descriptors = chain.keys.import_requests(chain.time_of(birth))
        t = time.monotonic()
        ref = Reference(chain, descriptors)
        rows.append((f"Core: importdescriptors, born at {birth} (its own rescan)", f"{time.monotonic() - t:.2f} s"))
        wait_for(lambda: core.rpc("getindexinfo")["basic block filter index"]["synced"], timeout=600)
        theirs = ref.answers()
        for label, restart in (("with filters", False), ("without filters", True)):
            if restart:
                core.stop()
                core.args = [a for a in core.args if a != "-blockfilterindex=1"]
                core.start()
                core.rpc("loadwallet", "w")
            t = time.monotonic()
            q = QuillDaemon(tmp / f"quill-{label.replace(' ', '-')}", f"-chainsource={core.url_for_follower}",
                            "-chainpollinterval=100").start()
            try:
                best = chain.node.call("getbestblockhash")
                wait_for(lambda q=q, best=best: q.rpc("getbestblockhash") == best, timeout=3600)
                rows.append((f"Quill: follow from scratch to {nblocks} ({label})", f"{time.monotonic() - t:.2f} s"))
                q.rpc("createwallet", "w", True, True)
                t = time.monotonic()
                q.rpc("importdescriptors", descriptors, path="/wallet/w")
                took = time.monotonic() - t
                read = [ln for ln in q.debug_log().splitlines() if "Rescan of w" in ln][-1].split(": ", 1)[-1]
                rows.append((f"Quill: importdescriptors, born at {birth} ({label})", f"{took:.2f} s — {read}"))
                mine = answers_of(lambda m, *p, q=q: q.rpc(m, *p, path="/wallet/w"))
                same = mine == theirs
                rows.append((f"answers equal to Core's ({label}, {len(theirs[3])} wallet txs)", str(same)))
                if not same:
                    raise SystemExit(f"answers differ from Core's {label}")
            finally:
                q.stop()
    finally:
        core.stop()
    return rows


def main() -> None:
    nblocks = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    rows = run(nblocks)
    width = max(len(r[0]) for r in rows)
    print(f"{'step':<{width}}  time")
    for name, value in rows:
        print(f"{name:<{width}}  {value}")


if __name__ == "__main__":
    main()
