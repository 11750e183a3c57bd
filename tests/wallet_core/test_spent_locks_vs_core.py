"""A locked coin that a transaction spends is unlocked, as Core's AddToSpends does (and so
listlockunspent no longer shows it; Specter Desktop lists locked coins as its UTXOs).

Core's "keys" wallet pays and later spends coins that a watch-only wallet on Core and one on
Quill (following Core) have locked, one lock in memory and one persistent; both answer alike.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from tests.kit.bitcoind import BitcoinD, import_requests
from tests.kit.rpc_daemon import QuillDaemon
from tests.wallet_core.test_wallet_coins_vs_core import Wallet, answer, sync, watch_only_pair


def wait_until(done: Callable[[], bool]) -> None:
    """Core's wallet learns of blocks and mempool transactions after the call that made them."""
    deadline = time.monotonic() + 30
    while not done():
        assert time.monotonic() < deadline, "Core's wallet did not catch up"
        time.sleep(0.05)


def test_spending_a_locked_coin_unlocks_it(tmp_path: Any) -> None:
    with BitcoinD(tmp_path / "core") as core:
        quill = QuillDaemon(tmp_path / "quill", f"-chainsource={core.url_for_follower}",
                            "-chainpollinterval=100").start()
        try:
            core.rpc("createwallet", "keys")
            keys = Wallet(core, "keys")
            miner = keys.rpc("getnewaddress", "", "bech32")
            core.rpc("generatetoaddress", 101, miner)
            public = core.rpc("listdescriptors", wallet="keys")["descriptors"]
            requests = import_requests(public)
            sync(core, quill)
            pair = watch_only_pair(core, quill, "wo", requests)
            c, q = pair
            paid = keys.rpc("sendmany", "", {keys.rpc("getnewaddress", "", "bech32"): amount for amount in (1, 2)})
            core.rpc("generatetoaddress", 1, miner)
            sync(core, quill)
            # (listunspent 0: Core's wallet may not have seen the block yet, it learns of blocks later)
            coins = [{"txid": u["txid"], "vout": u["vout"]} for u in sorted(c.rpc("listunspent", 0),
                                                                          key=lambda u: u["amount"])
                     if u["txid"] == paid and u["amount"] in (1, 2)]
            assert len(coins) == 2
            for w in (c, q):
                assert w.rpc("lockunspent", False, [coins[0]]) is True
                assert w.rpc("lockunspent", False, [coins[1]], True) is True
            assert c.rpc("listlockunspent") == q.rpc("listlockunspent")
            assert sorted(q.rpc("listlockunspent"), key=repr) == sorted(coins, key=repr)

            # the keys wallet spends the first locked coin: seen in the mempool, it is unlocked
            spend = keys.rpc("send", [{miner: "0.5"}], None, "unset", 2, {"inputs": [coins[0]], "add_inputs": False})
            sync(core, quill)
            wait_until(lambda: answer(c, "gettransaction", spend["txid"])[0] == "ok")
            assert c.rpc("listlockunspent") == q.rpc("listlockunspent") == [coins[1]]
            assert answer(c, "lockunspent", True, [coins[0]]) == answer(q, "lockunspent", True, [coins[0]])
            # and the persistent one, spent in a block
            spend = keys.rpc("send", [{miner: "0.5"}], None, "unset", 2, {"inputs": [coins[1]], "add_inputs": False})
            core.rpc("generatetoaddress", 1, miner)
            sync(core, quill)
            wait_until(lambda: answer(c, "gettransaction", spend["txid"])[1]["confirmations"] == 1)
            assert c.rpc("listlockunspent") == q.rpc("listlockunspent") == []
            for w in (c, q):
                w.rpc("unloadwallet")
            for node in (core, quill):
                node.rpc("loadwallet", "wo")
            sync(core, quill)
            assert c.rpc("listlockunspent") == q.rpc("listlockunspent") == []
        finally:
            quill.stop()
