"""Replacement in the built-in mempool against the real Bitcoin Core 31: the same transactions,
built and signed once (anyone-can-spend coins, tests/kit/anyone.py), go to a Core regtest node
and to quilld's built-in chain holding the same blocks; testmempoolaccept and
sendrawtransaction must answer byte for byte alike (the reject texts quote txids, fees and
cluster counts), the mempools must hold the same transactions, and a watch-only wallet of the
coins' address must show the same thing on both (walletconflicts, mempoolconflicts, trusted,
balances), over a corpus of replacements: accepted ones and one for each reason Core refuses."""
from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from quill.tx.descriptor import add_checksum
from quill.tx.psbt import decode_base64_psbt
from quill.tx.transaction import OutPoint, Transaction, TxIn, TxOut
from tests.chain.chain_testkit import OTHER_SCRIPT
from tests.kit.anyone import ANYONE_ADDRESS, ANYONE_SCRIPT, ANYONE_WITNESS
from tests.kit.bitcoind import BitcoinD, CoreRPCError
from tests.kit.bumps import normalized_bump
from tests.kit.rpc_daemon import QuillDaemon, RPCFailure
from tests.wallet_e2e.e2ekit import Coin as E2ECoin
from tests.wallet_e2e.e2ekit import Keys, build_tx

COIN = 100_000_000
SIGNALS = 0xFFFFFFFD
FINAL = 0xFFFFFFFF
WALLET = "anyone"
# Times differ by nature.
IGNORED = ("time", "timereceived", "bip125-replaceable", "hex")

Coin = tuple[bytes, int, int]          # txid, n, value


def build(inputs: list[Coin], fee: int, outputs: int = 1, sequence: int = SIGNALS,
          script: bytes = ANYONE_SCRIPT) -> Transaction:
    """Spend anyone-can-spend `inputs` into `outputs` equal outputs paying `script`, leaving `fee`."""
    each = (sum(v for _, _, v in inputs) - fee) // outputs
    rest = sum(v for _, _, v in inputs) - fee - each * outputs
    vout = [TxOut(each + (rest if i == 0 else 0), script) for i in range(outputs)]
    return Transaction(2, [TxIn(OutPoint(t, n), b"", sequence, list(ANYONE_WITNESS)) for t, n, _ in inputs], vout, 0)


def outs(tx: Transaction) -> list[Coin]:
    return [(tx.txid(), n, o.value) for n, o in enumerate(tx.vout)]


def answer(node: Any, method: str, *params: Any, wallet: str | None = None) -> Any:
    try:
        if isinstance(node, BitcoinD):
            return ("ok", node.rpc(method, *params, wallet=wallet))
        return ("ok", node.rpc(method, *params, path=f"/wallet/{wallet}" if wallet else "/"))
    except (CoreRPCError, RPCFailure) as e:
        return ("error", e.code, e.message)


class Twins:
    """Core and quilld holding the same chain; a supply of mature anyone-can-spend coinbase coins."""

    def __init__(self, core: BitcoinD, quill: QuillDaemon) -> None:
        self.core, self.quill = core, quill
        self.height = 0

    def coin(self) -> Coin:
        self.height += 1
        txid = self.quill.rpc("getblock", self.quill.rpc("getblockhash", self.height))["tx"][0]
        return bytes.fromhex(txid)[::-1], 0, 50 * COIN

    def both(self, method: str, *params: Any, wallet: str | None = None) -> Any:
        ours, theirs = answer(self.quill, method, *params, wallet=wallet), answer(self.core, method, *params,
                                                                                 wallet=wallet)
        assert ours == theirs, (method, params)
        return ours

    def submit(self, tx: Transaction) -> Any:
        """testmempoolaccept, then sendrawtransaction, on both; the answers must be equal."""
        tested = self.both("testmempoolaccept", [tx.hex()])
        sent = self.both("sendrawtransaction", tx.hex())
        assert (sent[0] == "ok") == tested[1][0]["allowed"], (tested, sent)
        return sent

    def mine(self) -> None:
        for block_hash in self.quill.rpc("generatetoaddress", 1, ANYONE_ADDRESS):
            assert self.core.rpc("submitblock", self.quill.rpc("getblock", block_hash, 0)) is None

    def same_mempool(self) -> list[str]:
        ours, theirs = sorted(self.quill.rpc("getrawmempool")), sorted(self.core.rpc("getrawmempool"))
        assert ours == theirs
        return ours

    def same_wallet_view(self, txs: list[Transaction], wallet: str = WALLET) -> None:
        self.core.rpc("syncwithvalidationinterfacequeue")
        for tx in txs:
            views = []
            for node in (self.quill, self.core):
                found = answer(node, "gettransaction", tx.txid_hex(), wallet=wallet)
                if found[0] == "ok":
                    for key in IGNORED:
                        found[1].pop(key, None)
                views.append(found)
            assert views[0] == views[1], f"{tx.txid_hex()}\nquill {views[0]}\ncore  {views[1]}"
        ours, theirs = (answer(node, "getbalances", wallet=wallet) for node in (self.quill, self.core))
        assert ours == theirs


@pytest.fixture(scope="module")
def twins(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Twins]:
    # Core without -fallbackfee, its default (and Quill's): no fee estimate means none.
    with BitcoinD(tmp_path_factory.mktemp("core"), "-fallbackfee=0") as core:
        quill = QuillDaemon(tmp_path_factory.mktemp("quill")).start()
        try:
            pair = Twins(core, quill)
            for block_hash in quill.rpc("generatetoaddress", 140, ANYONE_ADDRESS):
                assert core.rpc("submitblock", quill.rpc("getblock", block_hash, 0)) is None
            desc = add_checksum(f"addr({ANYONE_ADDRESS})")
            for node in (core, quill):
                node.rpc("createwallet", WALLET, True, True)
            pair.both("importdescriptors", [{"desc": desc, "timestamp": 0}], wallet=WALLET)
            yield pair
        finally:
            quill.stop()


# -- the corpus: each case submits its transactions, in order, to both ------------------------------

def case_more_fee(t: Twins) -> list[Transaction]:
    coin = t.coin()
    a, b = build([coin], 1000), build([coin], 5000, script=OTHER_SCRIPT)
    return [a, b]


def case_neither_signals(t: Twins) -> list[Transaction]:
    coin = t.coin()
    return [build([coin], 1000, sequence=FINAL), build([coin], 3000, sequence=FINAL, script=OTHER_SCRIPT)]


def case_less_fees(t: Twins) -> list[Transaction]:
    coin = t.coin()
    return [build([coin], 5000), build([coin], 3000, outputs=2)]


def case_not_enough_additional(t: Twins) -> list[Transaction]:
    coin = t.coin()
    return [build([coin], 1000), build([coin], 1005, outputs=1, script=OTHER_SCRIPT),
            build([coin], 1200, outputs=3)]


def case_descendants(t: Twins) -> list[Transaction]:
    coin = t.coin()
    a = build([coin], 1000, outputs=2)
    child, other_child = build(outs(a)[:1], 20_000), build(outs(a)[1:], 2_000)
    grandchild = build(outs(child), 3_000)
    short = build([coin], 20_000, script=OTHER_SCRIPT)          # less than the four together
    enough = build([coin], 30_000, script=OTHER_SCRIPT)
    return [a, child, other_child, grandchild, short, enough]


def case_diagram_worse(t: Twins) -> list[Transaction]:
    coin = t.coin()
    small = build([coin], 2_000)
    big = build([coin], 4_000, outputs=40)       # more fee, far lower feerate: the diagram crosses
    return [small, big, build([coin], 9_000, outputs=40)]


def case_pays_for_child(t: Twins) -> list[Transaction]:
    coin = t.coin()
    a = build([coin], 1_000)
    child = build(outs(a), 50_000)
    return [a, child, build([coin], 50_500, script=OTHER_SCRIPT), build([coin], 52_000, script=OTHER_SCRIPT)]


def case_spends_conflicting(t: Twins) -> list[Transaction]:
    coin = t.coin()
    a = build([coin], 1_000, outputs=2)
    return [a, build([coin, outs(a)[1]], 500), build([coin, outs(a)[1]], 20_000)]


def case_two_conflicts(t: Twins) -> list[Transaction]:
    one, two = t.coin(), t.coin()
    a, b = build([one], 3_000), build([two], 4_000)
    return [a, b, build([one, two], 7_050), build([one, two], 9_000)]


def case_new_unconfirmed_input(t: Twins) -> list[Transaction]:
    coin, other = t.coin(), t.coin()
    a, unrelated = build([coin], 1_000), build([other], 1_000, outputs=2)
    return [a, unrelated, build([coin, outs(unrelated)[0]], 1_500), build([coin, outs(unrelated)[0]], 6_000)]


def case_cluster_limit(t: Twins) -> list[Transaction]:
    tx = build([t.coin()], 1_000)
    chain = [tx]
    for _ in range(64):
        tx = build(outs(tx), 1_000)
        chain.append(tx)
    # The 65th is refused (too-large-cluster); replacing the second evicts 63 transactions.
    return [*chain, build(outs(chain[0]), 70_000, script=OTHER_SCRIPT)]


# Each case, and what Core answers to its transactions in turn (so the corpus keeps every reason).
CASES: dict[str, tuple[Callable[[Twins], list[Transaction]], list[str]]] = {
    "more_fee": (case_more_fee, ["ok", "ok"]),
    "neither_signals": (case_neither_signals, ["ok", "ok"]),
    "less_fees": (case_less_fees, ["ok", "insufficient fee"]),
    "not_enough_additional": (case_not_enough_additional, ["ok", "insufficient fee", "replacement-failed"]),
    "descendants": (case_descendants, ["ok", "ok", "ok", "ok", "insufficient fee", "ok"]),
    "diagram_worse": (case_diagram_worse, ["ok", "replacement-failed", "replacement-failed"]),
    "pays_for_child": (case_pays_for_child, ["ok", "ok", "insufficient fee", "ok"]),
    "spends_conflicting": (case_spends_conflicting, ["ok", "insufficient fee", "bad-txns-spends-conflicting-tx"]),
    "two_conflicts": (case_two_conflicts, ["ok", "ok", "ok", "ok"]),
    "new_unconfirmed_input": (case_new_unconfirmed_input, ["ok", "ok", "replacement-failed", "ok"]),
    "cluster_limit": (case_cluster_limit, ["ok"] * 64 + ["too-large-cluster", "ok"]),
}


@pytest.mark.parametrize("name", CASES)
def test_replacement_case(twins: Twins, name: str) -> None:
    build_case, expected = CASES[name]
    txs = build_case(twins)
    answers = [twins.submit(tx) for tx in txs]
    assert [a[0] if a[0] == "ok" else a[2].split(",")[0] for a in answers] == expected
    pool = twins.same_mempool()
    twins.same_wallet_view(txs)
    twins.mine()
    assert not set(pool) & set(twins.same_mempool())
    twins.same_wallet_view(txs)


def test_too_many_conflicting_clusters(twins: Twins) -> None:
    split = build([twins.coin()], 10_000, outputs=101)
    twins.submit(split)
    twins.mine()
    singles = [build([c], 1_000) for c in outs(split)]
    for tx in singles:
        assert twins.submit(tx)[0] == "ok"
    everything = build(outs(split), 200_000)
    refused = twins.submit(everything)
    assert refused[:2] == ("error", -26) and refused[2].startswith("too many potential replacements, ")
    assert twins.submit(build(outs(split)[:100], 200_000))[0] == "ok"
    assert len(twins.same_mempool()) == 2
    twins.mine()


def test_psbtbumpfee_of_a_child_of_an_unconfirmed_parent(twins: Twins) -> None:
    """The same watch-only wallet (keys held here, tests/wallet_e2e/e2ekit.py) on both: a payment
    spends the change of one still unconfirmed; psbtbumpfee also pays what the parent lacks, as
    Core's; the replacement, signed here, replaces the payment on both, and the wallets agree."""
    keys = Keys(b"rbf12 psbtbumpfee")
    for node in (twins.core, twins.quill):
        node.rpc("createwallet", "keys", True, True)
    twins.both("importdescriptors", keys.import_requests(), wallet="keys")
    receive = [twins.both("getnewaddress", "", "bech32", wallet="keys")[1] for _ in range(2)]
    change = [twins.both("getrawchangeaddress", "bech32", wallet="keys")[1] for _ in range(2)]
    script = {a: bytes.fromhex(twins.quill.rpc("getaddressinfo", a, path="/wallet/keys")["scriptPubKey"])
              for a in receive + change}
    txid, n, value = twins.coin()
    funding = build_tx([E2ECoin(txid, n, value, ANYONE_SCRIPT)], [(script[receive[0]], COIN),
                                                                  (ANYONE_SCRIPT, value - COIN - 2_000)])
    twins.submit(funding)
    twins.mine()
    # the parent pays 1 sat/vB, its child 2 sat/vB
    coin = E2ECoin(funding.txid(), 0, COIN, script[receive[0]])
    parent = build_tx([coin], [(OTHER_SCRIPT, 30_000_000), (script[change[0]], COIN - 50_000_000 - 172),
                               (script[receive[1]], 20_000_000)], keys, SIGNALS)
    child_coin = E2ECoin(parent.txid(), 1, parent.vout[1].value, script[change[0]])
    rest = child_coin.value - 10_000_000 - 282
    child = build_tx([child_coin], [(OTHER_SCRIPT, 10_000_000), (script[change[1]], rest)], keys, SIGNALS)
    for tx in (parent, child):
        assert twins.submit(tx)[0] == "ok"
    twins.core.rpc("syncwithvalidationinterfacequeue")
    tip = twins.core.rpc("getblockcount")
    bumps = ([child.txid_hex(), {"fee_rate": 5}], [child.txid_hex(), {"fee_rate": 25}], [child.txid_hex()],
             [child.txid_hex(), {"fee_rate": "1.01"}], [parent.txid_hex(), {"fee_rate": 5}])
    fees = []
    for params in bumps:
        ours, theirs = (answer(node, "psbtbumpfee", *params, wallet="keys") for node in (twins.quill, twins.core))
        a, b = normalized_bump(twins.core, ours, tip), normalized_bump(twins.core, theirs, tip)
        assert a == b, f"{params}\nquill {a}\ncore  {b}"
        fees.append(a[1] if a[0] == "ok" else None)
    # Another child of the parent pays for it (CPFP): Core's mini miner takes both into its mock
    # block, so the bump no longer pays for the parent.
    rich = build_tx([E2ECoin(parent.txid(), 2, 20_000_000, script[receive[1]])], [(OTHER_SCRIPT, 19_980_000)], keys)
    assert twins.submit(rich)[0] == "ok"
    twins.core.rpc("syncwithvalidationinterfacequeue")
    for params, before in zip(bumps, fees, strict=True):
        ours, theirs = (answer(node, "psbtbumpfee", *params, wallet="keys") for node in (twins.quill, twins.core))
        a, b = normalized_bump(twins.core, ours, tip), normalized_bump(twins.core, theirs, tip)
        assert a == b, f"{params}\nquill {a}\ncore  {b}"
        assert before is None or a[1] < before, params
    assert answer(twins.quill, "psbtbumpfee", parent.txid_hex(), wallet="keys")[2] == \
        "Transaction has descendants in the wallet"
    twins.both("bumpfee", child.txid_hex(), wallet="keys")
    # the replacement at 25 sat/vB, signed here: it replaces the child on both nodes
    bumped = answer(twins.quill, "psbtbumpfee", child.txid_hex(), {"fee_rate": 25, "psbt_version": 0},
                    wallet="keys")[1]
    unsigned = decode_base64_psbt(bumped["psbt"]).unsigned_tx()
    assert unsigned is not None
    assert [i.prevout for i in unsigned.vin] == [OutPoint(parent.txid(), 1)]
    replacement = build_tx([child_coin], [(o.script_pubkey, o.value) for o in unsigned.vout], keys,
                           unsigned.vin[0].sequence, unsigned.locktime)
    assert twins.submit(replacement)[0] == "ok"
    assert twins.same_mempool() == sorted([parent.txid_hex(), rich.txid_hex(), replacement.txid_hex()])
    twins.same_wallet_view([parent, rich, child, replacement], wallet="keys")
    twins.mine()
    twins.same_wallet_view([parent, rich, child, replacement], wallet="keys")
