"""A wallet imported while transactions wait in the mempool equals Core's at once (issue 27, item 4).

Core's wallet "keys" (with keys) makes the chain and the transactions: confirmed coins of every
address type, then, left unconfirmed, a payment out with change, a payment to itself, a child of
that unconfirmed change and a payment in from another wallet ("payer"). quilld holds the same
chain and mempool, on its built-in chain (Core's blocks given with submitblock, its transactions
with sendrawtransaction, parents first) or following Core (-chainsource). A fresh watch-only
wallet imports the public descriptors of "keys" on both nodes, before any block confirms what
waits: getbalances, listunspent and listtransactions must be equal field by field. Then the
wallet is unloaded, more transactions arrive, quilld restarts, and loadwallet must take in the
mempool as Core's does; rescanblockchain finally changes nothing on either.
"""
from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import pytest

from tests.kit.bitcoind import BitcoinD, follower, import_requests
from tests.kit.rpc_daemon import QuillDaemon
from tests.wallet_core.test_wallet_coins_vs_core import Wallet, same, sync

# Times differ by nature (Quill's clock is not Core's).
TIME_KEYS = ("time", "timereceived")
KINDS = ("legacy", "p2sh-segwit", "bech32", "bech32m")


class Pair:
    """Core making the chain and quilld holding the same chain and mempool."""

    def __init__(self, core: BitcoinD, quill: QuillDaemon, builtin: bool) -> None:
        self.core, self.quill, self.builtin = core, quill, builtin
        self.given_blocks = 0
        self.given_txs: set[str] = set()
        self.keys, self.payer = Wallet(core, "keys"), Wallet(core, "payer")

    def mine(self, n: int, wallet: Wallet) -> None:
        self.core.rpc("generatetoaddress", n, wallet.rpc("getnewaddress", "", "bech32"))
        self.synced()

    def synced(self) -> None:
        """quilld has Core's blocks and mempool (given to the built-in chain, or followed)."""
        if self.builtin:
            height = self.core.rpc("getblockcount")
            for h in range(self.given_blocks + 1, height + 1):
                raw = self.core.rpc("getblock", self.core.rpc("getblockhash", h), 0)
                assert self.quill.rpc("submitblock", raw) is None
            self.given_blocks = height
            for txid in self._parents_first(self.core.rpc("getrawmempool", True)):
                if txid not in self.given_txs:
                    self.quill.rpc("sendrawtransaction", self.core.rpc("getrawtransaction", txid))
                    self.given_txs.add(txid)
        sync(self.core, self.quill)

    @staticmethod
    def _parents_first(pool: dict[str, Any]) -> list[str]:
        done: list[str] = []
        while len(done) < len(pool):
            done += [t for t, e in pool.items() if t not in done and all(d in done for d in e["depends"])]
        return done

    def watch_only(self, name: str) -> tuple[Wallet, Wallet]:
        """A fresh watch-only wallet of "keys"'s public descriptors on both: (Core's, Quill's)."""
        requests = import_requests(self.keys.rpc("listdescriptors")["descriptors"])
        pair = []
        for node in (self.core, self.quill):
            node.rpc("createwallet", name, True, True)
            w = Wallet(node, name)
            results = w.rpc("importdescriptors", requests)
            assert all(r["success"] for r in results), results
            pair.append(w)
        self.core.rpc("syncwithvalidationinterfacequeue")
        return pair[0], pair[1]


def untimed(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in e.items() if k not in TIME_KEYS} for e in entries]


def same_wallet(core: Wallet, quill: Wallet) -> dict[str, Any]:
    """getbalances, listunspent (Core lists coins in hash-map order: compared sorted) and
    listtransactions, field by field; Core's answers."""
    balances = same(core, quill, "getbalances")
    same(core, quill, "listunspent", 0, unordered=True)
    listed = [untimed(w.rpc("listtransactions", "*", 1000)) for w in (core, quill)]
    assert listed[1] == listed[0]
    return {"getbalances": balances[1], "listtransactions": listed[0]}


@pytest.fixture(scope="module", params=["built-in", "follower"])
def pair(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Pair]:
    with BitcoinD(tmp_path_factory.mktemp("core")) as core:
        quill = QuillDaemon(tmp_path_factory.mktemp("quill")) if request.param == "built-in" else \
            follower(core, tmp_path_factory.mktemp("quill"))
        with quill:
            for name in ("keys", "payer"):
                core.rpc("createwallet", name)
            p = Pair(core, quill, request.param == "built-in")
            p.mine(110, p.keys)
            p.keys.rpc("sendtoaddress", p.payer.rpc("getnewaddress"), 20)
            p.mine(1, p.keys)
            # confirmed coins of every kind, and spends of them
            for kind in KINDS:
                p.keys.rpc("sendtoaddress", p.keys.rpc("getnewaddress", "", kind), 3)
                p.payer.rpc("sendtoaddress", p.keys.rpc("getnewaddress", "", kind), 1.5)
            p.mine(1, p.payer)
            p.keys.rpc("sendtoaddress", p.payer.rpc("getnewaddress"), 7)
            p.mine(1, p.payer)
            yield p


def test_an_import_with_transactions_waiting_equals_cores_at_once(pair: Pair) -> None:
    p = pair
    keys = p.keys
    # waiting in both mempools: a payment out (with change), one to itself, a child of that change
    # and a payment in from someone else
    out = keys.rpc("sendtoaddress", p.payer.rpc("getnewaddress"), 2.5)
    keys.rpc("sendtoaddress", keys.rpc("getnewaddress", "", "bech32m"), 1.25)
    change = next(u for u in keys.rpc("listunspent", 0) if u["txid"] == out and u["confirmations"] == 0)
    child = keys.rpc("send", {p.payer.rpc("getnewaddress"): 0.1}, None, "unset", None,
             {"inputs": [{"txid": change["txid"], "vout": change["vout"]}], "add_inputs": False,
              "change_address": keys.rpc("getrawchangeaddress", "p2sh-segwit")})["txid"]
    paid_in = p.payer.rpc("sendtoaddress", keys.rpc("getnewaddress", "", "legacy"), 0.75)
    p.synced()
    assert len(p.core.rpc("getrawmempool")) == 4

    core, quill = p.watch_only("wo")
    seen = same_wallet(core, quill)
    mine = seen["getbalances"]["mine"]
    assert mine["untrusted_pending"] == 0.75 and mine["trusted"] > 0
    # the payment to itself has only outputs the watch-only wallet counts as change (no address
    # book entry): Core lists no entry for it, and neither does Quill
    assert {e["txid"] for e in seen["listtransactions"] if e["confirmations"] == 0} == {out, child, paid_in}

    # unloaded, more arrives; quilld restarts; loadwallet takes in the mempool as Core's does
    for node in (p.core, p.quill):
        node.rpc("unloadwallet", "wo")
    p.payer.rpc("sendtoaddress", keys.rpc("getnewaddress", "", "bech32"), 0.3)
    keys.rpc("sendtoaddress", p.payer.rpc("getnewaddress"), 0.2)
    p.synced()
    p.quill.stop()
    p.quill.start()
    p.synced()
    for node in (p.core, p.quill):
        node.rpc("loadwallet", "wo")
    p.core.rpc("syncwithvalidationinterfacequeue")
    after = same_wallet(core, quill)
    assert after["getbalances"]["mine"]["untrusted_pending"] == mine["untrusted_pending"] + Decimal("0.3")

    # a rescan finds nothing new on either, and answers alike
    same(core, quill, "rescanblockchain")
    assert same_wallet(core, quill) == after
