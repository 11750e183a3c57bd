"""The follower's mempool through the upstream node's ZMQ notifications (-zmqpubsequence and
-zmqpubrawtx on the real Core's ZMQ build): a wallet transaction replaced long before the next poll
is still seen, with its replacement as a wallet conflict, exactly as Core's own wallet shows both;
blocks are followed as they are announced. (The polling path: test_follow_core.py.)"""
from __future__ import annotations

import time

from tests.follow.corekit import BURN_ADDRESS, CoreChain, Reference, answers_of, strip, wait_for
from tests.kit.bitcoind import BitcoinD, free_port
from tests.kit.rpc_daemon import QuillDaemon
from tests.kit.toolchains import bitcoind_zmq_path

POLL_MS = 120_000      # a poll would come far too late: what is seen comes through ZMQ


def test_replaced_within_one_poll_interval_is_seen_with_its_conflict(tmp_path):
    address = f"tcp://127.0.0.1:{free_port()}"
    core = BitcoinD(tmp_path / "core", f"-zmqpubsequence={address}", f"-zmqpubrawtx={address}",
                    binary=bitcoind_zmq_path()).start()
    q = None
    try:
        chain = CoreChain(core)
        chain.build(140)
        descriptors = chain.watched_descriptors(0)
        ref = Reference(chain, descriptors)
        q = QuillDaemon(tmp_path / "quill", f"-chainsource={core.url_for_follower}",
                        f"-chainpollinterval={POLL_MS}").start()
        best = chain.node.call("getbestblockhash")
        wait_for(lambda: q.rpc("getbestblockhash") == best, what="the follower")
        wait_for(lambda: "mempool through ZMQ" in q.debug_log(), what="the ZMQ subscription")
        assert q.rpc("createwallet", "w", True, True) == {"name": "w"}
        call = lambda method, *params: q.rpc(method, *params, path="/wallet/w")  # noqa: E731
        assert all(r["success"] for r in call("importdescriptors", descriptors))
        hot = chain.hot
        started = time.monotonic()
        paid = hot.call("sendtoaddress", hot.call("getnewaddress", "", "bech32m"), 0.25, "", "", False, True)
        bumped = hot.call("bumpfee", paid)["txid"]
        wait_for(lambda: bumped in q.rpc("getrawmempool") and paid not in q.rpc("getrawmempool"),
                 what="the replacement")
        assert time.monotonic() - started < POLL_MS / 1000          # no poll could have seen it
        chain.node.call("syncwithvalidationinterfacequeue")           # Core's wallet is notified asynchronously
        for txid in (paid, bumped):
            assert strip(call("gettransaction", txid)) == strip(ref.call("gettransaction", txid))
        assert call("gettransaction", paid)["walletconflicts"] == [bumped]
        assert call("gettransaction", bumped)["walletconflicts"] == [paid]
        # a block is followed when Core announces it, not at the next poll
        chain.node.call("generatetoaddress", 1, BURN_ADDRESS)
        best = chain.node.call("getbestblockhash")
        wait_for(lambda: q.rpc("getbestblockhash") == best, timeout=30, what="the announced block")
        assert answers_of(call) == ref.answers()
    finally:
        if q is not None:
            q.stop()
        core.stop()
