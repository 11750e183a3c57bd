"""e-x 2.0 (the spesmilo Electrum server, PyPI `e-x`) unmodified on quilld, beside an e-x on the real
Bitcoin Core 31.99 holding the same chain (issue 27).

Three e-x servers index three nodes that hold the same blocks and the same mempool:
  built-in  quilld's own regtest chain with -txospenderindex (its txindex is always kept); it mines the
            blocks and every block is given to Core with submitblock, every transaction to both;
  follower  a quilld following Core (-chainsource), which answers its index calls through Core;
  core      Core with -txindex -txospenderindex, the reference.
The chain is small: 110 blocks of coinbases, then blocks whose transactions move coins between
two dozen P2WPKH keys, an anyone-can-spend P2WSH and four outputs nobody spends (P2PKH, P2SH, P2TR,
P2WSH), always with transactions waiting in the mempool. The same Electrum-protocol questions go to
the three servers at three moments: at start, after a replacement (RBF, evicting a child), and after
a reorg (invalidateblock on both nodes, a confirmed transaction replaced, a longer branch mined).
Every answer of the built-in's and the follower's e-x must equal the core's e-x's answer; the table
of counts (questions asked, answers equal, by method) is printed. docs/electrum.md lists them.
"""
from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import pytest

from quill.tx.hashes import hash_to_hex
from quill.tx.transaction import Transaction
from tests.electrum.exkit import ElectrumClient, ElectrumServer, scripthash
from tests.follow.corekit import wait_for
from tests.kit.anyone import ANYONE_ADDRESS, ANYONE_SCRIPT
from tests.kit.bitcoind import BitcoinD
from tests.kit.rpc_daemon import QuillDaemon
from tests.wallet_e2e.e2ekit import SIGNALS_RBF, Coin, Keys, build_tx

KEYS = Keys(bytes(range(27, 59)))
WALLET_SCRIPTS = [KEYS.receive_script(i) for i in range(20)] + list(KEYS._secrets)[40:44]
SPENDABLE = WALLET_SCRIPTS + [ANYONE_SCRIPT]
FOREIGN = [b"\x76\xa9\x14" + b"\x27" * 20 + b"\x88\xac", b"\xa9\x14" + b"\x28" * 20 + b"\x87",
           b"\x51\x20" + b"\x29" * 32, b"\x00\x20" + b"\x2a" * 32]
SCRIPTS = SPENDABLE + FOREIGN
UNKNOWN_TXID = "27" * 32


class Scene:
    """Core, quilld built-in and its follower with the same chain and mempool; the transactions made."""

    def __init__(self, core: BitcoinD, quill: QuillDaemon, follower: QuillDaemon) -> None:
        self.core, self.quill, self.follower = core, quill, follower
        self.rng = random.Random(27)
        self.coinbases_used = 0
        self.made: list[Transaction] = []       # every transaction sent: confirmed, waiting or replaced
        self.servers: dict[str, ElectrumServer] = {}

    # -- the chain ------------------------------------------------------------------------------

    def mine(self, n: int = 1) -> None:
        for block_hash in self.quill.rpc("generatetoaddress", n, ANYONE_ADDRESS):
            assert self.core.rpc("submitblock", self.quill.rpc("getblock", block_hash, 0)) is None

    def send(self, tx: Transaction) -> Transaction:
        assert self.quill.rpc("sendrawtransaction", tx.hex()) == tx.txid_hex()
        assert self.core.rpc("sendrawtransaction", tx.hex()) == tx.txid_hex()
        self.made.append(tx)
        return tx

    def unspent(self, coin: Coin) -> bool:
        return self.quill.rpc("gettxout", hash_to_hex(coin.txid), coin.n, True) is not None

    def coins(self) -> list[Coin]:
        """Outputs of the transactions made that pay a spendable script and are unspent, mempool included."""
        found = [Coin(tx.txid(), n, out.value, out.script_pubkey) for tx in self.made
                 for n, out in enumerate(tx.vout) if out.script_pubkey in SPENDABLE]
        return [c for c in found if self.unspent(c)]

    def spent_by(self, tx: Transaction) -> list[Coin]:
        """The coins `tx` spends: outputs of the transactions made, or coinbases (anyone's, 50 BTC)."""
        made = {t.txid(): t for t in self.made}
        return [Coin(i.prevout.hash, i.prevout.n, made[i.prevout.hash].vout[i.prevout.n].value,
                     made[i.prevout.hash].vout[i.prevout.n].script_pubkey) if i.prevout.hash in made
                else Coin(i.prevout.hash, i.prevout.n, 50 * 100_000_000, ANYONE_SCRIPT) for i in tx.vin]

    def coinbase(self) -> Coin:
        self.coinbases_used += 1
        txid = self.quill.rpc("getblock", self.quill.rpc("getblockhash", self.coinbases_used))["tx"][0]
        return Coin(bytes.fromhex(txid)[::-1], 0, 50 * 100_000_000, ANYONE_SCRIPT)

    def pay(self, inputs: list[Coin], outputs: int, fee: int | None = None) -> Transaction:
        """Spend `inputs` to `outputs` scripts picked among all, at a fee rate of 1 to 30 sat/vB."""
        total = sum(c.value for c in inputs)
        fee = fee if fee is not None else 150 * len(inputs) * self.rng.randrange(1, 31)
        scripts = [self.rng.choice(SCRIPTS) for _ in range(outputs - 1)] + [self.rng.choice(SPENDABLE)]
        each = (total - fee) // (outputs + 1)
        values = [each // 2 + self.rng.randrange(each // 2) for _ in range(outputs - 1)]
        values.append(total - fee - sum(values))
        return build_tx(inputs, list(zip(scripts, values, strict=True)), KEYS, sequence=SIGNALS_RBF)

    def fan_out(self, rate: int, outputs: int = 500) -> None:
        """A coinbase paid to `outputs` outputs of the unspendable scripts at `rate` sat/vB (about
        15,500 vB: e-x's fee histogram shows bins of 30,000 vB and more)."""
        coin = self.coinbase()
        each = (coin.value - rate * 32 * outputs) // outputs
        self.send(build_tx([coin], [(FOREIGN[i % len(FOREIGN)], each) for i in range(outputs)],
                           sequence=SIGNALS_RBF))

    def activity(self, ntx: int) -> None:
        """`ntx` transactions sent to both: from one or two coins of the made ones, or a new coinbase."""
        for _ in range(ntx):
            coins = self.coins()
            if len(coins) < 4:
                inputs = [self.coinbase()]
            else:
                inputs = self.rng.sample(coins, self.rng.choice((1, 1, 2)))
            self.send(self.pay(inputs, self.rng.randrange(2, 5)))

    def in_sync(self) -> None:
        """The three nodes at the same tip with the same mempool and their spender indexes synced."""
        best = self.core.rpc("getbestblockhash")
        height = self.core.rpc("getblockcount")
        assert self.quill.rpc("getbestblockhash") == best
        pool = sorted(self.core.rpc("getrawmempool"))
        assert sorted(self.quill.rpc("getrawmempool")) == pool
        wait_for(lambda: self.follower.rpc("getbestblockhash") == best
                 and sorted(self.follower.rpc("getrawmempool")) == pool, what="the follower")
        self.core.rpc("syncwithvalidationinterfacequeue")
        for node in (self.core, self.quill):
            wait_for(lambda n=node: n.rpc("getindexinfo", "txospenderindex")["txospenderindex"]
                     == {"synced": True, "best_block_height": height}, what="the spender index")

    # -- the servers ----------------------------------------------------------------------------

    def caught_up(self, client: ElectrumClient) -> bool:
        """The server shows the nodes' tip and exactly their mempool (e-x takes a mempool in whole)."""
        tip = client.call("blockchain.headers.subscribe")
        header = self.core.rpc("getblockheader", self.core.rpc("getbestblockhash"), False)
        if tip != {"height": self.core.rpc("getblockcount"), "hex": header}:
            return False
        listed = client.ask_all([("blockchain.scripthash.get_mempool", (scripthash(s),)) for s in SCRIPTS])
        seen = {e["tx_hash"] for answer in listed for e in answer[1]}
        return seen == set(self.core.rpc("getrawmempool"))


class Tally:
    """Questions asked and answers equal to the core's e-x, by server and method."""

    def __init__(self) -> None:
        self.asked: Counter[tuple[str, str]] = Counter()
        self.equal: Counter[tuple[str, str]] = Counter()
        self.differences: list[tuple[str, str, str, tuple[Any, ...], Any, Any]] = []

    def record(self, moment: str, server: str, method: str, params: tuple[Any, ...], ours: Any,
               theirs: Any) -> None:
        self.asked[server, method] += 1
        if comparable(method, ours) == comparable(method, theirs):
            self.equal[server, method] += 1
        else:
            self.differences.append((moment, server, method, params, ours, theirs))

    def table(self) -> str:
        """equal/asked for each server and method."""
        methods = sorted({m for _, m in self.asked})
        rows = [f"{'method':38} {'built-in':>18} {'follower':>18}"]
        for m in methods + ["total"]:
            cells = []
            for server in ("built-in", "follower"):
                keys = [(server, x) for x in methods] if m == "total" else [(server, m)]
                cells.append(f"{sum(self.equal[k] for k in keys)}/{sum(self.asked[k] for k in keys)}")
            rows.append(f"{m:38} {cells[0]:>18} {cells[1]:>18}")
        return "\n".join(rows)


def comparable(method: str, answer: Any) -> Any:
    """The answer as compared: listunspent's mempool outputs sorted, because e-x lists them from a
    Python set (MemPool.unordered_UTXOs), in an order each e-x process picks for itself."""
    if method != "blockchain.scripthash.listunspent" or answer[0] != "ok":
        return answer
    confirmed = [u for u in answer[1] if u["height"] > 0]
    waiting = sorted((u for u in answer[1] if u["height"] <= 0), key=lambda u: (u["tx_hash"], u["tx_pos"]))
    return ("ok", confirmed + waiting)


def questions(scene: Scene) -> list[tuple[str, str, tuple[Any, ...]]]:
    """(protocol, method, params) for every question of one moment. Protocol 1.6 still has the
    scripthash methods; 1.7 (e-x 2.0's newest) has outpoint.get_status."""
    core = scene.core
    height = core.rpc("getblockcount")
    asked: list[tuple[str, str, tuple[Any, ...]]] = []
    for s in SCRIPTS:
        for method in ("get_history", "get_balance", "listunspent", "get_mempool"):
            asked.append(("1.6", f"blockchain.scripthash.{method}", (scripthash(s),)))
    asked.append(("1.6", "blockchain.headers.subscribe", ()))
    for h in (0, 1, 100, height - 3, height - 2, height - 1, height, height + 1):
        asked.append(("1.6", "blockchain.block.header", (h,)))
    asked.append(("1.6", "blockchain.block.header", (height - 4, height)))
    asked.append(("1.6", "blockchain.block.headers", (0, height + 1)))
    asked.append(("1.6", "blockchain.block.headers", (height - 5, 10, height)))
    txids = list(dict.fromkeys(tx.txid_hex() for tx in scene.made)) + [UNKNOWN_TXID]
    for txid in txids:
        asked.append(("1.6", "blockchain.transaction.get", (txid, False)))
        try:
            found = core.rpc("getrawtransaction", txid, 1)
        except Exception:
            found = {}
        if "blockhash" in found:
            block = core.rpc("getblock", found["blockhash"])
            asked.append(("1.6", "blockchain.transaction.get_merkle", (txid, block["height"])))
            position = (block["height"], block["tx"].index(txid), True)
            asked.append(("1.6", "blockchain.transaction.id_from_pos", position))
        else:
            asked.append(("1.6", "blockchain.transaction.get_merkle", (txid, height)))
    for tx in scene.made:
        for n, out in enumerate(tx.vout[:5]):
            asked.append(("1.7", "blockchain.outpoint.get_status", (tx.txid_hex(), n, out.script_pubkey.hex())))
    asked.append(("1.7", "blockchain.outpoint.get_status", (UNKNOWN_TXID, 0, "51")))
    for target in (1, 2, 6, 25, 144):
        asked.append(("1.6", "blockchain.estimatefee", (target,)))
    asked.append(("1.6", "blockchain.estimatefee", (2, "ECONOMICAL")))
    asked.append(("1.6", "blockchain.estimatefee", (2, "CONSERVATIVE")))
    asked.append(("1.6", "mempool.get_fee_histogram", ()))
    asked.append(("1.6", "mempool.get_info", ()))
    return asked


def compare(scene: Scene, tally: Tally, moment: str) -> dict[str, list[Any]]:
    """Ask every server every question (once they show the nodes' state); tally against the core's."""
    scene.in_sync()
    asked = questions(scene)
    answers: dict[str, list[Any]] = {}
    for name, server in scene.servers.items():
        with server.client("1.6") as old, server.client("1.7") as new:
            wait_for(lambda c=old: scene.caught_up(c), timeout=30, what=f"{name}'s e-x")
            sessions = {"1.6": old, "1.7": new}
            answers[name] = [None] * len(asked)
            for p, session in sessions.items():
                mine = [k for k, (q, _, _) in enumerate(asked) if q == p]
                for k, a in zip(mine, session.ask_all([asked[k][1:] for k in mine]), strict=True):
                    answers[name][k] = a
    for server in ("built-in", "follower"):
        for (_, method, params), ours, theirs in zip(asked, answers[server], answers["core"], strict=True):
            tally.record(moment, server, method, params, ours, theirs)
    return {method: [a for (_, m, _), a in zip(asked, answers["core"], strict=True) if m == method]
            for method in {m for _, m, _ in asked}}


@pytest.fixture(scope="module")
def scene(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Scene]:
    tmp = tmp_path_factory.mktemp("electrum")
    with BitcoinD(tmp / "core", "-fallbackfee=0", "-txospenderindex=1") as core:
        quill = QuillDaemon(tmp / "quill", "-txospenderindex")
        follower = QuillDaemon(tmp / "follower", f"-chainsource={core.url_for_follower}", "-chainpollinterval=100")
        s = Scene(core, quill, follower)
        try:
            quill.start()
            s.mine(110)
            follower.start()
            for _ in range(4):
                s.activity(5)
                s.mine()
            s.activity(6)
            for rate in (2, 5, 11, 23):
                s.fan_out(rate)
            s.in_sync()
            # the servers start with transactions waiting: e-x makes its fee histogram at start
            # and then every 120 s, so the first moment's histogram is of this mempool
            for name, node_url in (("built-in", f"http://{quill.user}:{quill.password}@127.0.0.1:{quill.port}/"),
                                   ("follower", f"http://{follower.user}:{follower.password}@127.0.0.1:"
                                                f"{follower.port}/"),
                                   ("core", core.url_for_follower + "/")):
                s.servers[name] = ElectrumServer(tmp / f"ex-{name}", node_url).start()
            yield s
        finally:
            for server in s.servers.values():
                server.stop()
            follower.stop()
            quill.stop()


def test_ex_answers_on_quilld_as_on_core(scene: Scene) -> None:
    s = scene
    tally = Tally()
    first = compare(s, tally, "start")
    assert len(first["mempool.get_fee_histogram"][0][1]) >= 2                 # a mempool to show
    assert sum(bool(a[1]) for a in first["blockchain.outpoint.get_status"] if a[0] == "ok") > 20
    assert any("spender_height" in a[1] for a in first["blockchain.outpoint.get_status"] if a[0] == "ok")

    # a replacement: a waiting transaction with a child, replaced by one paying others more
    pool = s.core.rpc("getrawmempool", True)
    parent = next(t for t, e in pool.items() if e["spentby"] and not e["depends"])
    old = next(tx for tx in s.made if tx.txid_hex() == parent)
    evicted = Decimal(pool[parent]["fees"]["descendant"]) * 100_000_000
    s.send(s.pay(s.spent_by(old), 3, fee=int(evicted) + 20_000))
    assert parent not in s.core.rpc("getrawmempool")
    s.activity(2)
    compare(s, tally, "replacement")

    # a reorg: the last two blocks disconnected on both nodes, a transaction they confirmed
    # replaced while back in the mempool, and a longer branch mined
    s.mine()
    s.in_sync()
    stale = s.core.rpc("getblockhash", s.core.rpc("getblockcount") - 1)
    confirmed = s.core.rpc("getblock", stale)["tx"][1]
    for node in (s.quill, s.core):
        node.rpc("invalidateblock", stale)
    assert confirmed in s.core.rpc("getrawmempool")
    old = next(tx for tx in s.made if tx.txid_hex() == confirmed)
    fees = Decimal(s.core.rpc("getrawmempool", True)[confirmed]["fees"]["descendant"]) * 100_000_000
    s.send(s.pay(s.spent_by(old), 2, fee=int(fees) + 20_000))
    s.mine(3)
    s.activity(3)
    compare(s, tally, "reorg")

    print("\ne-x on quilld against e-x on Core 31.99, equal answers / questions:\n" + tally.table())
    for d in tally.differences:
        print("difference:", d)
    assert tally.differences == []
