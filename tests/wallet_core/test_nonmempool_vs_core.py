"""getbalances' `nonmempool` (Core 31, bitcoin/bitcoin#33671) and everything a wallet transaction
that left the mempool changes, against the real Core.

Core's "keys" wallet (run with -walletbroadcast=0, so it never puts a transaction back into the
mempool by itself) makes spends that later leave the mempool without being confirmed, conflicted
or abandoned, the two ways a follower sees too:
  - a one-block reorg makes a coinbase immature again: its spend is dropped (reason "reorg");
  - -mempoolexpiry=1 and setmocktime an hour on: the next transaction expires all the others.
The spent coins are of every kind: confirmed (A), paid by someone else and back in the mempool
(B), the wallet's own unconfirmed change back in the mempool (C), a chain of two dropped spends
(D), a dropped spend then abandoned (E), an immature, then mature, coinbase (K).
At each step the watch-only wallet on Core and Quill's (quilld following Core) must answer
getbalances, getbalance, listunspent, gettransaction and listtransactions alike.
"""
from __future__ import annotations

import time
from decimal import Decimal
from typing import Any

import pytest

from tests.kit.bitcoind import BitcoinD, follower, import_requests
from tests.wallet_core.test_wallet_coins_vs_core import Wallet, _sorted, sync, watch_only_pair

TIME_FIELDS = ("time", "timereceived")
MEMPOOL_EXPIRY_HOURS = 1


def _no_times(value: Any) -> Any:
    if isinstance(value, list):
        return [_no_times(v) for v in value]
    if isinstance(value, dict):
        return {k: _no_times(v) for k, v in value.items() if k not in TIME_FIELDS}
    return value


class Scenario:
    def __init__(self, core: BitcoinD, quill: Any) -> None:
        self.core, self.quill = core, quill
        for name in ("m", "keys"):
            core.rpc("createwallet", name)
        self.m, self.keys = Wallet(core, "m"), Wallet(core, "keys")
        self.txids: dict[str, str] = {}

    def broadcast(self, wallet: Wallet, txid: str) -> str:
        return str(self.core.rpc("sendrawtransaction", wallet.rpc("gettransaction", txid)["hex"]))

    def send(self, name: str, wallet: Wallet, outputs: dict[str, Any], inputs: list[dict[str, Any]] | None) -> str:
        """`wallet` pays `outputs` from exactly `inputs` (None: its choice), change last; broadcast.
        Locktime 0, not the tip's height (anti-fee-sniping): a one-block reorg would drop it."""
        options: dict[str, Any] = {"change_position": len(outputs), "locktime": 0}
        if inputs is not None:
            options.update(inputs=inputs, add_inputs=False)
        txid = wallet.rpc("send", [outputs], None, "unset", 2, options)["txid"]
        self.txids[name] = txid
        self.broadcast(wallet, txid)
        return str(txid)

    def settle(self) -> None:
        sync(self.core, self.quill)


def compare(c: Wallet, q: Wallet, txids: dict[str, str]) -> dict[str, Decimal]:
    """The same answers from both watch-only wallets; -> Core's `mine` balances."""
    theirs, ours = c.rpc("getbalances"), q.rpc("getbalances")
    assert list(ours["mine"].items()) == list(theirs["mine"].items())
    assert ours["lastprocessedblock"] == theirs["lastprocessedblock"]
    for params in ([], ["*", 0], ["*", 1], ["*", 2], ["*", 101]):
        assert q.rpc("getbalance", *params) == c.rpc("getbalance", *params), params
    listings: list[list[Any]] = [[], [0], [0, 9_999_999, None, True, {"include_immature_coinbase": True}]]
    for params in listings:
        assert _sorted(q.rpc("listunspent", *params)) == _sorted(c.rpc("listunspent", *params)), params
    for name, txid in txids.items():
        assert _no_times(q.rpc("gettransaction", txid)) == _no_times(c.rpc("gettransaction", txid)), name
    assert _sorted(_no_times(q.rpc("listtransactions", "*", 100))) == _sorted(
        _no_times(c.rpc("listtransactions", "*", 100)))
    return dict(theirs["mine"])


@pytest.fixture(scope="module")
def nodes(tmp_path_factory: pytest.TempPathFactory) -> Any:
    with BitcoinD(tmp_path_factory.mktemp("core"), f"-mempoolexpiry={MEMPOOL_EXPIRY_HOURS}",
                  "-walletbroadcast=0") as core, follower(core, tmp_path_factory.mktemp("quill")) as quill:
        yield core, quill


def test_spends_that_left_the_mempool(nodes: Any) -> None:  # noqa: PLR0915 (one story, step by step)
    core, quill = nodes
    s = Scenario(core, quill)
    m, keys = s.m, s.keys
    miner = m.rpc("getnewaddress")
    core.rpc("generatetoaddress", 104, miner)
    s.settle()
    c, q = watch_only_pair(core, quill, "wo", import_requests(keys.rpc("listdescriptors")["descriptors"]))
    reward_block = core.rpc("generatetoaddress", 1, keys.rpc("getnewaddress"))[0]   # K, height 105
    reward = {"txid": core.rpc("getblock", reward_block)["tx"][0], "vout": 0}
    funding = m.rpc("sendmany", "", {keys.rpc("getnewaddress"): 10 for _ in range(4)})
    s.broadcast(m, funding)
    core.rpc("generatetoaddress", 99, miner)   # tip 204: K may be spent in the next block
    s.settle()
    ten = [{"txid": funding, "vout": u["vout"]} for u in c.rpc("listunspent") if u["txid"] == funding]
    assert len(ten) == 4
    external = m.rpc("getnewaddress")
    s.send("A", keys, {external: 1}, [ten[0]])
    paid = s.send("P", m, {keys.rpc("getnewaddress"): 2}, None)
    s.settle()
    paid_vout = next(u["vout"] for u in c.rpc("listunspent", 0) if u["txid"] == paid)
    s.send("B", keys, {external: 1}, [{"txid": paid, "vout": paid_vout}])
    own = s.send("T", keys, {keys.rpc("getnewaddress"): 3}, [ten[1]])
    s.send("C", keys, {external: 1}, [{"txid": own, "vout": 0}])
    first = s.send("D1", keys, {external: 1}, [ten[2]])
    s.send("D2", keys, {external: 1}, [{"txid": first, "vout": 1}])
    s.send("E", keys, {external: 1}, [ten[3]])
    s.send("K", keys, {external: 1}, [reward])
    s.settle()
    mine = compare(c, q, s.txids)
    assert mine["nonmempool"] == 0

    # a one-block reorg: K is immature again and its spend leaves the mempool
    core.rpc("invalidateblock", core.rpc("getbestblockhash"))
    s.settle()
    assert s.txids["K"] not in core.rpc("getrawmempool")
    mine = compare(c, q, s.txids)
    reward_value = c.rpc("gettransaction", reward["txid"])["details"][0]["amount"]
    assert (mine["immature"], mine["nonmempool"]) == (reward_value, -reward_value)

    # an hour later the next transaction expires every other one
    core.rpc("setmocktime", int(time.time()) + MEMPOOL_EXPIRY_HOURS * 3600 + 100)
    s.broadcast(m, m.rpc("sendtoaddress", miner, 1))
    s.settle()
    assert len(core.rpc("getrawmempool")) == 1
    mine = compare(c, q, s.txids)
    assert mine["nonmempool"] == -(4 * 10 + reward_value)   # A, C's and D's and E's coins, K; P and T left too

    # P and T come back: the coins B and C spend count again (untrusted, trusted), minus in nonmempool
    for wallet, name in ((m, "P"), (keys, "T")):
        s.broadcast(wallet, s.txids[name])
    s.settle()
    mine = compare(c, q, s.txids)
    assert (mine["untrusted_pending"], mine["nonmempool"]) == (2, -(10 + 2 + 3 + 10 + 10 + reward_value))

    # E abandoned: its coin is unspent again
    for w in (c, q):
        assert w.rpc("abandontransaction", s.txids["E"]) is None
    mine = compare(c, q, s.txids)
    assert mine["nonmempool"] == -(10 + 2 + 3 + 10 + reward_value)

    # two blocks (P, T and the expiring one in the first): K is mature, its spend still out
    core.rpc("generatetoaddress", 2, m.rpc("getnewaddress"))
    s.settle()
    mine = compare(c, q, s.txids)
    assert (mine["immature"], mine["untrusted_pending"]) == (0, 0)
    assert mine["nonmempool"] == -(10 + 2 + 3 + 10 + reward_value)
