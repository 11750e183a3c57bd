"""The wallets' coins looked up in the real Core's UTXO set (Follower.ask_utxos, OutpointBook.unspent): a
block is read without its spent outputs when every coin it might spend is unspent at a tip above it,
and still gives exactly what the full walk (quill.chain.scan.scan_block) finds.

The chain, made here on the real Core (regtest, -rest): a block pays three watched coins A, B and C;
B is spent later on, by a transaction paying nobody watched (only B's spend makes that block the
wallet's); A and C stay unspent. Blocks are read one after another through the follower's real
path (fetched ahead on two connections) against a wallet taking in what it is given, three ways:
by REST with the open coins looked for in the spent outputs (FIND_COVERED 0: fetched ahead where
the book tells, and at reading time where it did not), by REST with the few open coins searched for
in the block itself (the default), and by JSON-RPC (no spent outputs at all). Then Core reorganizes onto
a branch that spends C: C was unspent at the old tip, which says nothing of the new branch.

Each case is shown able to fail: the same replay with the book's knowledge sabotaged (a coin the node
no longer holds taken for unspent; a tip's answer applied to a block outside its chain) misses the
spend of B, or of C, and the comparison with the walk says where.
"""
from __future__ import annotations

import logging
from collections import Counter
from typing import Any

import pytest

from quill.chain import prescan
from quill.chain.follower import Follower, ScanHint
from quill.chain.prescan import TipChains
from quill.chain.scan import outpoint_key, scan_block
from quill.chain.service import ChainService
from quill.chain.upstream import UpstreamRPC
from quill.tx.hashes import hex_to_hash
from quill.tx.script import p2wsh_of, push_data
from quill.tx.transaction import OutPoint, Transaction, TxIn, TxOut
from tests.follow.corekit import wait_for
from tests.kit.anyone import ANYONE_ADDRESS, ANYONE_SCRIPT, ANYONE_WITNESS
from tests.kit.bitcoind import BitcoinD
from tests.kit.utxo_chain import submit_block

OP_DROP, OP_TRUE = b"\x75", b"\x51"
FUNDED, SPEND_B, TIP = 111, 120, 129          # heights: A, B, C paid; B spent; the first tip
FORK, SPEND_C, NEW_TIP = 125, 126, 131        # the new branch replaces 125..129 and spends C at 126


def _watched(i: int) -> tuple[bytes, bytes]:
    """(witness script, output script) of the i-th watched coin: anyone can spend it with its script."""
    ws = push_data(i.to_bytes(8, "little")) + OP_DROP + OP_TRUE
    return ws, p2wsh_of(ws)


class _Builder:
    """Blocks on Core's tip: each spends the previous anyone-can-spend change and pays a stranger."""

    def __init__(self, node: UpstreamRPC, change: tuple[bytes, int, int]) -> None:
        self.node = node
        self.change = change            # (txid, n, value)
        self.k = 0

    def filler(self, extra: list[Transaction] | None = None) -> None:
        txid, n, value = self.change
        self.k += 1
        stranger = b"\x00\x14" + self.k.to_bytes(4, "little") * 5
        tx = Transaction(2, [TxIn(OutPoint(txid, n), b"", 0xFFFFFFFD, list(ANYONE_WITNESS))],
                         [TxOut(10_000, stranger), TxOut(value - 11_000, ANYONE_SCRIPT)], 0)
        self.change = (tx.txid(), 1, value - 11_000)
        submit_block(self.node, [tx] + (extra or []))


def _spend(coin: tuple[bytes, int, int], ws: bytes) -> Transaction:
    """A transaction spending watched coin `coin` (txid, n, value) to a stranger only."""
    txid, n, value = coin
    return Transaction(2, [TxIn(OutPoint(txid, n), b"", 0xFFFFFFFD, [ws])],
                       [TxOut(value - 1_000, b"\x00\x14" + txid[:20])], 0)


@pytest.fixture(scope="module")
def chain(tmp_path_factory):
    core = BitcoinD(tmp_path_factory.mktemp("core"), "-rest=1").start()
    service = None
    try:
        node = UpstreamRPC(core.url_for_follower)
        node.call("generatetoaddress", FUNDED - 1, ANYONE_ADDRESS)
        cb = hex_to_hash(node.call("getblock", node.call("getblockhash", 1))["tx"][0])
        coins = [_watched(i) for i in range(3)]
        fund = Transaction(2, [TxIn(OutPoint(cb, 0), b"", 0xFFFFFFFD, list(ANYONE_WITNESS))],
                           [TxOut(100_000_000, out) for _, out in coins] + [TxOut(4_600_000_000, ANYONE_SCRIPT)], 0)
        submit_block(node, [fund])
        a, b, c = [(fund.txid(), i, 100_000_000) for i in range(3)]
        build = _Builder(node, (fund.txid(), 3, 4_600_000_000))
        changes = {}
        for h in range(FUNDED + 1, TIP + 1):
            changes[h - 1] = build.change
            build.filler([_spend(b, coins[1][0])] if h == SPEND_B else None)
        old = [node.call("getblockhash", h) for h in range(FUNDED - 1, TIP + 1)]
        service = ChainService("regtest", str(tmp_path_factory.mktemp("quill")), core.url_for_follower,
                               poll_interval=0.1).start()
        yield Net(core, node, service, coins, (a, b, c), changes, build, old)
    finally:
        if service is not None:
            service.close()
        core.stop()


class Net:
    """Core, the follower's service, the watched coins, and the two branches (`new` once made)."""

    def __init__(self, core: BitcoinD, node: UpstreamRPC, service: ChainService, coins: list[tuple[bytes, bytes]],
                 paid: tuple[Any, ...], changes: dict[int, Any], build: _Builder, old: list[str]) -> None:
        self.core, self.node, self.service, self.coins = core, node, service, coins
        self.paid, self.changes, self.build, self.old = paid, changes, build, old
        self.new: list[str] = []

    def on_old_branch(self) -> None:
        if self.new and self.node.call("getbestblockhash") != self.old[-1]:
            self.node.call("invalidateblock", self.new[0])
            self.node.call("reconsiderblock", self.old[FORK - (FUNDED - 1)])
        self.synced()

    def on_new_branch(self) -> None:
        """Core reorganizes onto a branch from FORK that spends C at SPEND_C."""
        self.node.call("invalidateblock", self.old[FORK - (FUNDED - 1)])
        if self.new:
            self.node.call("reconsiderblock", self.new[0])
        else:
            self.build.change = self.changes[FORK - 1]
            for h in range(FORK, NEW_TIP + 1):
                self.build.filler([_spend(self.paid[2], self.coins[2][0])] if h == SPEND_C else None)
            self.new = [self.node.call("getblockhash", h) for h in range(FORK, NEW_TIP + 1)]
        self.synced()

    def synced(self) -> None:
        """The follower's headers and delivered tip at Core's best block."""
        best = hex_to_hash(self.node.call("getbestblockhash"))
        state = self.service.state
        wait_for(lambda: state.best_header is not None and state.best_header.hash == best
                 and state.tip is not None and state.tip.hash == best, what="the follower")


class _Wallet:
    """The scripts watched and the outpoints a wallet holds, growing with what it is given."""

    def __init__(self, scripts: frozenset[bytes]) -> None:
        self.scripts = scripts
        self.outpoints: set[bytes] = set()

    def hint(self) -> ScanHint:
        return ScanHint(0, self.scripts, 1, self.outpoints)

    def take(self, txs: list[Transaction]) -> None:
        for tx in txs:
            txid = tx.txid()
            self.outpoints |= {outpoint_key(txid, n) for n, o in enumerate(tx.vout) if o.script_pubkey in self.scripts}
            self.outpoints |= {outpoint_key(i.prevout.hash, i.prevout.n) for i in tx.vin}


def _replay(follower: Follower, wallet: _Wallet, hashes: list[str], first: int) -> tuple[list[int], dict[int, int]]:
    """Read `hashes` (heights from `first`) through the follower's path, comparing each with the walk:
    the heights where they differ, and the number of wallet transactions found per height."""
    keys = [hex_to_hash(h) for h in hashes]
    wrong, found = [], {}
    raws = follower.raw_in_order(keys, spent=follower.spent_wanted(wallet.hint))
    try:
        for k, (key, data) in enumerate(zip(keys, raws, strict=True)):
            raw = data[0] if isinstance(data, tuple) else data
            expected = scan_block(raw, wallet.scripts, set(wallet.outpoints))
            got = follower.read_block(key, data, wallet.hint())
            if [tx.wtxid() for _, tx in got.indexed] != [tx.wtxid() for _, tx in expected.indexed]:
                wrong.append(first + k)
            found[first + k] = len(got.indexed)
            wallet.take(got.txs)
    finally:
        raws.close()
    return wrong, found


PATHS = ["REST, spent outputs", "REST, searched in the block", "JSON-RPC"]


def _follower(service: ChainService, core: BitcoinD, path: str, monkeypatch) -> Follower:
    follower = Follower(service, core.url_for_follower, 1.0, logging.getLogger("test"))
    follower._rest = path.startswith("REST")
    if path == "REST, spent outputs":
        monkeypatch.setattr(prescan, "FIND_COVERED", 0)
    return follower


def _counting(monkeypatch) -> Counter:
    fetched: Counter = Counter()
    real = UpstreamRPC.rest_spent_outputs

    def counted(self: UpstreamRPC, block_hash: str) -> Any:
        fetched[block_hash] += 1
        return real(self, block_hash)
    monkeypatch.setattr(UpstreamRPC, "rest_spent_outputs", counted)
    return fetched


SABOTAGE = {
    None: None,
    # a coin Core no longer holds (B, spent at SPEND_B) taken for unspent at the tip
    "spent taken for unspent": lambda mp: mp.setattr(
        Follower, "ask_utxos", lambda self, keys: self.book.record(dict.fromkeys(keys, self.book_tip))),
    # nothing fetched ahead: the spent outputs are fetched when the block is read (not a fault)
    "nothing fetched ahead": lambda mp: mp.setattr(Follower, "spent_wanted", lambda self, hint: (lambda h: False)),
}


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("sabotage", list(SABOTAGE), ids=lambda s: s or "as built")
def test_a_coin_spent_later_in_the_rescan_is_found_as_by_the_walk(chain, path, sabotage, monkeypatch):
    chain.on_old_branch()
    old = chain.old
    fetched = _counting(monkeypatch)
    follower = _follower(chain.service, chain.core, path, monkeypatch)
    follower.book_tip = hex_to_hash(old[-1])            # what the "spent taken for unspent" sabotage claims
    if SABOTAGE[sabotage] is not None:
        SABOTAGE[sabotage](monkeypatch)
    wallet = _Wallet(frozenset(out for _, out in chain.coins))
    wrong, found = _replay(follower, wallet, old, FUNDED - 1)
    if sabotage == "spent taken for unspent":
        assert wrong == [SPEND_B]                      # the walk finds B's spend, the prescan misses it
        return
    assert wrong == []
    assert {h for h, n in found.items() if n} == {FUNDED, SPEND_B}
    by_height = {h: fetched[x] for h, x in enumerate(old, FUNDED - 1)}
    if path == "REST, spent outputs":
        # B is open from its creation to its spend: those blocks' spent outputs were read (ahead, or when
        # the block was read); after it, only blocks fetched ahead while B was still open may have them
        assert all(by_height[h] == 1 for h in range(FUNDED + 1, SPEND_B + 1)), by_height
        assert max(by_height.values()) == 1 and by_height[FUNDED] == 0, by_height
    else:       # B alone is open: searched for in the blocks themselves
        assert sum(by_height.values()) == 0
    # the book: A and C unspent at the tip, B known spent (settled)
    a, b, c = (outpoint_key(*x[:2]) for x in chain.paid)
    assert {a, c} <= follower.book.unspent[hex_to_hash(old[-1])]
    assert b not in set().union(*follower.book.unspent.values()) and b in follower.book.settled
    # read again (a second rescan): every coin is unspent at the tip or settled, no spent outputs at all
    fetched.clear()
    wrong, found = _replay(follower, wallet, old, FUNDED - 1)
    assert wrong == [] and {h for h, n in found.items() if n} == {FUNDED, SPEND_B}
    assert sum(fetched.values()) == 0


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("sabotage", [False, True], ids=["as built", "tip answers applied off their chain"])
def test_a_reorg_onto_a_branch_spending_a_coin_unspent_at_the_old_tip(chain, path, sabotage, monkeypatch):
    chain.on_old_branch()
    fetched = _counting(monkeypatch)
    follower = _follower(chain.service, chain.core, path, monkeypatch)
    wallet = _Wallet(frozenset((chain.coins[0][1], chain.coins[2][1])))      # A and C (B is not watched)
    # the old chain read first: A and C found unspent at the old tip
    assert _replay(follower, wallet, chain.old, FUNDED - 1)[0] == []
    a, c = outpoint_key(*chain.paid[0][:2]), outpoint_key(*chain.paid[2][:2])
    assert {a, c} <= follower.book.unspent[hex_to_hash(chain.old[-1])]
    assert sum(fetched.values()) == 0                 # nothing the wallet holds was ever spent there
    # the node's chain moves: the follower drops what the old blocks settled, and reads the new branch
    chain.on_new_branch()
    follower.book.forget_settled()
    if sabotage:
        monkeypatch.setattr(TipChains, "holds", lambda self, tip, entry: True)
    wrong, found = _replay(follower, wallet, chain.new, FORK)
    if sabotage:
        assert wrong == [SPEND_C]                      # C's spend taken as impossible: missed
        return
    assert wrong == [] and found[SPEND_C] == 1 and sum(found.values()) == 1
    if path == "REST, spent outputs":      # the new branch up to C's spend: C looked for in the spent outputs
        assert {chain.new[h - FORK] for h in range(FORK, SPEND_C + 1)} <= set(fetched)
    else:
        assert not fetched


def test_tip_chains_hold_a_tip_and_its_ancestors_only(chain):
    chain.on_old_branch()
    chain.on_new_branch()
    index = chain.service.state.index
    chains = TipChains(index.get)
    old, new = index.get(hex_to_hash(chain.old[-1])), index.get(hex_to_hash(chain.new[-1]))
    for h in (TIP, FORK, FUNDED, 5, 0):
        assert chains.holds(old.hash, old.ancestor(h))
    assert chains.holds(new.hash, new.ancestor(FORK)) and chains.holds(new.hash, old.ancestor(FORK - 1))
    assert not chains.holds(old.hash, new.ancestor(FORK)) and not chains.holds(new.hash, old)
    assert not chains.holds(old.hash, new)                          # above the tip
    assert not chains.holds(bytes(32), index.active[0])              # an unknown tip holds nothing
