"""Core's conflict, abandon, coinbase and RBF-status scenarios (core-wallet.md §4, §5.2-5.8)
through a real quilld and its HTTP RPC, on the built-in chain and on a follower."""
from decimal import Decimal

from quill.tx.address import encode_destination
from tests.wallet_e2e.e2ekit import COIN, FEE, FOREIGN, SIGNALS_RBF, Coin, btc, coins_of, hexid, of_tx

OTHER_ADDRESS = encode_destination(b"\x00\x14" + b"\x22" * 20, "regtest")   # nobody's either


def wallet_order(*txids):
    """Core's std::set<uint256> order: by the internal (little-endian) bytes."""
    return [hexid(t) for t in sorted(txids)]


def test_double_spend_of_own_sends(net):
    """wallet_txn_doublespend --mineblock: tx1 and tx2 spend foo and bar; DS (foo+bar) wins on
    the other branch, 2 deep: tx1/tx2 -2, DS 2, each other's walletconflicts."""
    w = net.wallet()
    foo, bar = w.funded(12 * COIN, 3 * COIN)
    change = w.new_address(change=True)[1]
    ds = w.spend([foo, bar], [(FOREIGN, 14 * COIN), (change, COIN - 2 * FEE)])
    tx1 = w.spend([foo], [(FOREIGN, 4 * COIN), (change, 8 * COIN - FEE)])
    tx2 = w.spend([bar], [(FOREIGN, 2 * COIN), (change, COIN - FEE)])
    net.send(tx1, tx2)
    (a1,) = net.mine(1)
    assert [w.conf(t.txid()) for t in (tx1, tx2)] == [1, 1]
    g = w.gettx(tx1.txid())
    assert (g["amount"], g["fee"]) == (Decimal(-4), btc(-FEE))
    net.invalidate(a1, sync=False)
    net.mine_block([ds], sync=False)
    net.mine_empty(1, sync=False)
    net.reconsider(a1)
    assert [w.conf(t.txid()) for t in (ds, tx1, tx2)] == [2, -2, -2]
    assert w.gettx(tx1.txid())["walletconflicts"] == [ds.txid_hex()]
    assert w.gettx(tx2.txid())["walletconflicts"] == [ds.txid_hex()]
    assert w.gettx(ds.txid())["walletconflicts"] == wallet_order(tx1.txid(), tx2.txid())
    assert w.gettx(tx1.txid())["trusted"] is False
    assert w.rpc("getbalances")["mine"]["trusted"] == btc(COIN - 2 * FEE)


def test_block_conflicts_earliest_wins_then_clear(net):
    """wallet_conflicts 'block conflicts': AB (+ child C) lose to A1 and B1 on another branch
    (-8 each: the earliest conflict wins); a third, longer branch clears both conflicts; AB
    is then mined again."""
    w = net.wallet()
    c_a, c_b = w.funded(10 * COIN, 10 * COIN)
    h0 = net.height()
    ab = w.spend([c_a, c_b], [(w.new_address()[1], 20 * COIN - FEE)])
    b202 = net.mine_block([ab], sync=False)
    c = w.spend([coins_of(ab)[0]], [(w.new_address()[1], 20 * COIN - 2 * FEE)])
    net.mine_block([c])
    assert (w.conf(ab.txid()), w.conf(c.txid())) == (2, 1)
    # n1's branch from h0: A1 at h0+1, B1 at h0+5, tip h0+8.
    net.invalidate(b202, sync=False)
    a1 = w.spend([c_a], [(w.new_address()[1], 10 * COIN - FEE)])
    b1 = w.spend([c_b], [(w.new_address()[1], 10 * COIN - FEE)])
    b202_n1 = net.mine_block([a1], sync=False)
    net.mine_empty(3, sync=False)
    net.mine_block([b1], sync=False)
    net.mine_empty(3, sync=False)
    net.reconsider(b202)
    assert net.height() == h0 + 8
    assert [w.conf(t.txid()) for t in (ab, c, a1, b1)] == [-8, -8, 8, 4]
    assert w.gettx(ab.txid())["walletconflicts"] == wallet_order(a1.txid(), b1.txid())
    assert w.gettx(a1.txid())["walletconflicts"] == [ab.txid_hex()]
    assert w.gettx(c.txid())["walletconflicts"] == []
    # n2's branch from h0, 15 blocks: the conflicting blocks leave the chain, the conflicts go.
    net.invalidate(b202_n1, sync=False)
    net.invalidate(b202, sync=False)
    net.mine_empty(15, sync=False)
    net.reconsider(b202_n1, sync=False)
    net.reconsider(b202)
    assert net.height() == h0 + 15
    assert [w.conf(t.txid()) for t in (ab, c)] == [0, 0]
    # AB mined again (A1 and B1 were back in the mempool: now they are the conflicted ones).
    blk = net.mine_block([ab])
    g = w.gettx(ab.txid())
    assert (g["confirmations"], g["blockheight"], g["blockhash"]) == (1, h0 + 16, blk)
    assert [w.conf(t.txid()) for t in (a1, b1)] == [-1, -1]


def test_abandon_and_conflict_override(net):
    """wallet_abandonconflict: eligibility errors; abandoning cascades to descendants; a block
    conflict overrides `abandoned`; disconnecting the conflicting block un-conflicts (v26+)."""
    w = net.wallet()
    (coin,) = w.funded(50 * COIN - 3 * FEE)
    addr_a, addr_b, addr_c = (w.new_address()[1] for _ in range(3))
    change = w.new_address(change=True)[1]
    tx_a = w.spend([coin], [(addr_a, 10 * COIN), (change, coin.value - 10 * COIN - FEE)])
    tx_b = w.spend([coins_of(tx_a)[1]], [(addr_b, 10 * COIN), (change, coin.value - 20 * COIN - 2 * FEE)])
    tx_c = w.spend([coins_of(tx_b)[1]], [(addr_c, 10 * COIN), (change, coin.value - 30 * COIN - 3 * FEE)])
    net.send(tx_a, tx_b, tx_c)
    assert w.error("abandontransaction", tx_a.txid_hex()) == (-5, "Transaction not eligible for abandonment")
    net.mine(1)
    assert w.error("abandontransaction", "ff" * 32) == (-5, "Invalid or non-wallet transaction id")
    assert w.error("abandontransaction", tx_a.txid_hex()) == (-5, "Transaction not eligible for abandonment")
    n_a = [d["vout"] for d in w.gettx(tx_a.txid())["details"] if d["amount"] == 10][0]
    in_a, in_b, in_c = coins_of(tx_a)[n_a], coins_of(tx_b)[0], coins_of(tx_c)[0]
    # AB1 pays its fee and returns to the mempool when its block goes; ABC2 and T3 pay none
    # (below the min relay fee, like Core's test) and become inactive.
    ab1 = w.spend([in_a, in_b], [(w.new_address()[1], 15 * COIN - FEE), (FOREIGN, 5 * COIN)])
    abc2 = w.spend([coins_of(ab1)[0], in_c], [(w.new_address()[1], 25 * COIN - FEE)])
    t3 = w.spend([coins_of(abc2)[0]], [(w.new_address()[1], 25 * COIN - FEE)])
    x = net.mine_block([ab1, abc2, t3])       # the wallet sees them (Core's wallet made them)
    net.invalidate(x, sync=False)
    net.mine_empty(2, sync=False)
    net.reconsider(x)
    assert net.driver.rpc("getrawmempool") == [ab1.txid_hex()]
    assert [w.conf(t.txid()) for t in (ab1, abc2, t3)] == [0, 0, 0]
    assert w.error("abandontransaction", ab1.txid_hex()) == (-5, "Transaction not eligible for abandonment")
    assert w.rpc("abandontransaction", abc2.txid_hex()) is None
    assert w.rpc("abandontransaction", abc2.txid_hex()) is None       # already abandoned: a no-op
    entries = w.lsb()["transactions"]
    for t, abandoned in ((ab1, False), (abc2, True), (t3, True)):
        sends = [e for e in of_tx(entries, t.txid()) if e["category"] == "send"]
        assert sends and all((e["abandoned"], e["confirmations"]) == (abandoned, 0) for e in sends)
        assert all(e["trusted"] is (not abandoned) for e in sends)
    # D double-spends txA's output: AB1 and (through it) ABC2, T3 are conflicted by D's block.
    d = w.spend([in_a], [(FOREIGN, 4 * COIN), (b"\x00\x14" + b"\x22" * 20, 6 * COIN - FEE)])
    k = net.mine_block([d])
    listed = w.rpc("listtransactions", "*", 1000)
    conflicted = [e for e in listed if e["confirmations"] < 0]
    assert sorted((e["txid"], e["category"]) for e in conflicted) == sorted(
        [(ab1.txid_hex(), "send")] * 2 + [(abc2.txid_hex(), "send"), (t3.txid_hex(), "send")])
    assert all((e["confirmations"], e["abandoned"], e["trusted"]) == (-1, False, False) for e in conflicted)
    assert [e["walletconflicts"] for e in conflicted if e["walletconflicts"]] == [[d.txid_hex()]] * 2
    winners = [e for e in listed if e["walletconflicts"] and e["confirmations"] > 0]
    assert len(winners) == 2 and all(e["txid"] == d.txid_hex() and e["walletconflicts"] == [ab1.txid_hex()]
                                     and e["abandoned"] is False and "trusted" not in e for e in winners)
    # 10 more blocks, then the conflicting block goes: AB1 is no longer conflicted. D is valid
    # and returns to the mempool, where it double-spends AB1 (a mempool conflict, §3.7).
    net.mine(10, sync=False)
    net.invalidate(k)
    g = w.gettx(ab1.txid())
    assert (g["confirmations"], g["mempoolconflicts"]) == (0, [d.txid_hex()])
    assert w.gettx(t3.txid())["mempoolconflicts"] == [d.txid_hex()]      # descendants inherit it
    net.mine(1)                                                           # D mined again
    assert (w.conf(ab1.txid()), w.gettx(ab1.txid())["mempoolconflicts"]) == (-1, [])


def test_coinbase_maturity_orphan_and_reconnect(net):
    """Categories immature -> generate at 101 confirmations; the block leaves the chain: orphan,
    abandoned, with its in-wallet child; back again: the coinbase recovers, the child stays
    abandoned (§4.5, wallet_reorgsrestore)."""
    w = net.wallet()
    address, _ = w.new_address()
    (blk,) = net.mine(1, address)
    reward = coin_of_coinbase(net, blk)
    cb = reward.txid
    g = w.gettx(cb)
    assert (g["generated"], g["amount"], g["confirmations"], g["details"][0]["category"]) == (
        True, Decimal(0), 1, "immature")
    assert w.rpc("getbalances")["mine"]["immature"] == btc(reward.value)
    net.mine(99)
    assert w.gettx(cb)["details"][0]["category"] == "immature"
    net.mine(1)
    g = w.gettx(cb)
    assert (g["confirmations"], g["amount"], g["details"][0]["category"]) == (101, btc(reward.value), "generate")
    assert w.rpc("getbalances")["mine"]["trusted"] == btc(reward.value)
    child = w.spend([reward], [(w.new_address()[1], reward.value - FEE)])
    net.send(child)
    net.invalidate(blk)
    g = w.gettx(cb)
    assert (g["confirmations"], g["amount"], g["trusted"], g["bip125-replaceable"]) == (0, 0, False, "unknown")
    assert (g["details"][0]["category"], g["details"][0]["abandoned"]) == ("orphan", True)
    assert w.gettx(child.txid())["details"][0]["abandoned"] is True
    assert w.rpc("getbalances")["mine"] == {"trusted": 0, "untrusted_pending": 0, "immature": 0, "nonmempool": 0}
    net.reconsider(blk)
    g = w.gettx(cb)
    assert (g["details"][0]["abandoned"], g["details"][0]["category"], g["confirmations"]) == (False, "generate", 101)
    assert w.gettx(child.txid())["details"][0]["abandoned"] is True


def coin_of_coinbase(net, block_hash):
    """The first output of the block's coinbase (its value: subsidy + fees, the subsidy halving
    every 150 regtest blocks)."""
    raw = net.driver.rpc("getblock", block_hash, 2)["tx"][0]
    out = raw["vout"][0]
    return Coin(bytes.fromhex(raw["txid"])[::-1], 0, int(out["value"] * COIN),
                bytes.fromhex(out["scriptPubKey"]["hex"]))


def test_orphaned_reward_spend_stays_abandoned(net):
    """wallet_orphanedreward: a spend of a payment and a reward; the reward's block is replaced:
    the spend is abandoned (also after unload/load) and stays so when the block comes back."""
    w = net.wallet()
    (ten,) = w.funded(10 * COIN)
    (blk,) = net.mine(1, w.new_address()[0])
    net.mine(100)
    reward = coin_of_coinbase(net, blk)
    before = w.rpc("getbalances")["mine"]
    assert before["trusted"] == btc(10 * COIN + reward.value)
    tx = w.spend([ten, reward], [(FOREIGN, 30 * COIN), (w.new_address(change=True)[1],
                                                        reward.value - 20 * COIN - FEE)])
    net.send(tx)
    net.invalidate(blk, sync=False)
    conflict_block = net.mine(102, sync=False)[0]
    net.sync()
    assert w.rpc("getbalances")["mine"] == {"trusted": 10, "untrusted_pending": 0, "immature": 0, "nonmempool": 0}
    assert w.gettx(tx.txid())["details"][0]["abandoned"] is True
    net.node.rpc("unloadwallet", w.name)
    net.node.rpc("loadwallet", w.name)
    assert w.gettx(tx.txid())["details"][0]["abandoned"] is True
    net.invalidate(conflict_block, sync=False)
    net.reconsider(blk, sync=False)
    net.mine(3)
    assert w.rpc("getbalances")["mine"] == before
    assert w.gettx(tx.txid())["details"][0]["abandoned"] is True


def test_bip125_replaceable_status(net):
    """wallet_listtransactions RBF statuses (without replacement: the chain has no RBF, a block
    conflict takes the signalling tx out of the mempool instead)."""
    w = net.wallet()
    c1, c2 = w.funded(COIN, COIN)

    def change():
        return w.new_address(change=True)[1]

    tx1 = w.spend([c1], [(FOREIGN, COIN // 2), (change(), COIN // 2 - FEE)])
    tx2 = w.spend([coins_of(tx1)[1]], [(FOREIGN, COIN // 2 - 2 * FEE)])
    tx3 = w.spend([c2], [(FOREIGN, COIN // 2), (change(), COIN // 2 - FEE)], sequence=0)
    tx4 = w.spend([coins_of(tx3)[1]], [(FOREIGN, COIN // 2 - 2 * FEE)])
    net.send(tx1, tx2, tx3, tx4)

    def status():
        via_get = [w.gettx(t.txid())["bip125-replaceable"] for t in (tx1, tx2, tx3, tx4)]
        entries = w.lsb()["transactions"]
        via_list = [{e["bip125-replaceable"] for e in of_tx(entries, t.txid())} for t in (tx1, tx2, tx3, tx4)]
        assert via_list == [{s} for s in via_get]
        return via_get
    assert status() == ["no", "no", "yes", "yes"]      # tx4 inherits from its in-mempool parent
    tx3b = w.spend([c2], [(FOREIGN, COIN - 2 * FEE)], sequence=SIGNALS_RBF)
    net.mine_block([tx3b])
    assert status() == ["no", "no", "yes", "unknown"]  # tx3 signals itself; tx4 left the mempool
    assert w.gettx(tx3b.txid())["bip125-replaceable"] == "no"
    net.mine(1)
    assert status() == ["no", "no", "yes", "unknown"] and w.conf(tx1.txid()) == 1


def test_spend_that_left_the_mempool_counts_as_nonmempool(net):
    """Core 31's getbalances `nonmempool` (bitcoin/bitcoin#33671): a spend of a reward, in the
    mempool when the reward has 100 confirmations, is dropped by a one-block reorg (the reward is
    immature again) and stays out: the reward counts in its bucket (immature, then trusted once
    mature) and again, negated, in `nonmempool`; getbalance and listunspent leave it out. Abandoned,
    the spend no longer spends it. Checked value for value against Core in
    tests/wallet_core/test_nonmempool_vs_core.py."""
    w = net.wallet()
    address, _ = w.new_address()
    (blk,) = net.mine(1, address)
    reward = coin_of_coinbase(net, blk)
    net.mine(99)
    spend = w.spend([reward], [(FOREIGN, reward.value - FEE)])
    net.send(spend)
    nothing = {"trusted": 0, "untrusted_pending": 0, "immature": 0, "nonmempool": 0}
    assert w.rpc("getbalances")["mine"] == nothing
    net.invalidate(net.tip())
    assert hexid(spend.txid()) not in net.node.rpc("getrawmempool")
    assert w.rpc("getbalances")["mine"] == {**nothing, "immature": btc(reward.value), "nonmempool": -btc(reward.value)}
    g = w.gettx(spend.txid())
    assert (g["confirmations"], g["trusted"], g["details"][0]["abandoned"]) == (0, False, False)
    net.mine(2, OTHER_ADDRESS)   # not the dropped block again (FOREIGN_ADDRESS would remake it)
    assert w.rpc("getbalances")["mine"] == {**nothing, "trusted": btc(reward.value), "nonmempool": -btc(reward.value)}
    assert w.rpc("getbalance") == 0
    assert w.rpc("listunspent", 0) == []
    w.rpc("abandontransaction", hexid(spend.txid()))
    assert w.rpc("getbalances")["mine"] == {**nothing, "trusted": btc(reward.value)}
    assert w.rpc("getbalance") == btc(reward.value)
    assert [u["txid"] for u in w.rpc("listunspent")] == [hexid(reward.txid)]
