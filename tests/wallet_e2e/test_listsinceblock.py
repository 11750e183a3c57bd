"""Core's wallet_listsinceblock.py scenarios (core-wallet.md §5.1 A-L) through a
real quilld and its HTTP RPC, on the built-in chain and on a follower."""
from decimal import Decimal

from quill.tx.address import encode_destination
from quill.tx.descriptor import add_checksum
from tests.kit.anyone import ANYONE_SCRIPT
from tests.wallet_e2e.e2ekit import (
    COIN,
    FEE,
    FOREIGN,
    Keys,
    btc,
    coins_of,
    multiset,
    of_tx,
    project,
    strip_times,
)

RECEIVE_KEYS = ["address", "parent_descs", "category", "amount", "label", "vout", "abandoned", "confirmations",
                "blockhash", "blockheight", "blockindex", "blocktime", "txid", "wtxid", "walletconflicts",
                "mempoolconflicts", "time", "timereceived", "bip125-replaceable"]


def test_no_blockhash_lists_everything(net):
    """A: mempool entry, then confirmed; listsinceblock() == listsinceblock("") == that one entry."""
    w = net.wallet()
    address, script = w.new_address()
    tx = net.pay([(script, COIN)])
    (entry,) = w.lsb()["transactions"]
    assert (entry["category"], entry["amount"], entry["confirmations"], entry["trusted"]) == (
        "receive", Decimal(1), 0, False)
    (b,) = net.mine(1)
    header = net.header(b)
    (entry,) = w.lsb()["transactions"]
    # The whole entry, in Core's key order (a receive entry: abandoned before the long-form block).
    assert list(entry) == RECEIVE_KEYS
    assert strip_times([entry])[0] == {
        "address": address, "parent_descs": [w.keys.receive], "category": "receive", "amount": Decimal(1),
        "label": "", "vout": 0, "abandoned": False, "confirmations": 1, "blockhash": b,
        "blockheight": header["height"], "blockindex": 1, "blocktime": header["time"], "txid": tx.txid_hex(),
        "wtxid": tx.wtxid_hex(), "walletconflicts": [], "mempoolconflicts": [], "bip125-replaceable": "no"}
    expected = {"transactions": [entry], "removed": [], "lastblock": b}
    assert w.lsb() == expected and w.lsb("") == expected and w.lsb(None) == expected


def test_invalid_blockhash(net):
    """B: unknown and malformed block hashes, with Core's codes and messages."""
    w = net.wallet()
    assert w.error("listsinceblock", "42759cde25462784395a337460bde75f58e73d3f08bd31fdc3507cbac856a2c4") == (
        -5, "Block not found")
    assert w.error("listsinceblock", "0" * 64) == (-5, "Block not found")
    assert w.error("listsinceblock", "invalid-hex") == (
        -8, "blockhash must be of length 64 (not 11, for 'invalid-hex')")
    assert w.error("listsinceblock", "Z" + "0" * 63) == (
        -8, "blockhash must be hexadecimal string (not 'Z" + "0" * 63 + "')")


def test_target_confirmations(net):
    """H: lastblock is the block target_confirmations deep, genesis when deeper than the chain."""
    w = net.wallet()
    (b,) = net.mine(1)
    h = net.height(b)
    genesis = net.driver.rpc("getblockhash", 0)
    assert w.lsb(b, h + 1)["lastblock"] == genesis
    assert w.lsb(b, h + 1000)["lastblock"] == genesis
    assert w.lsb(b, 1)["lastblock"] == b
    assert w.lsb(b, 3)["lastblock"] == net.driver.rpc("getblockhash", h - 2)
    assert w.error("listsinceblock", b, 0) == (-8, "Invalid parameter")


def test_reorg_lists_everything_after_the_fork(net):
    """C: the wallet's payment is only on the winning branch, mined in its first block;
    listsinceblock(<losing tip>) lists it although its height is below the losing tip's."""
    w = net.wallet()
    _, script = w.new_address()
    fork = net.tip()
    a = net.mine(6)
    # The other side: 7 blocks from the fork, the first with T; the a-branch stays known, stale.
    net.invalidate(a[0], sync=False)
    coin = net.faucet()
    t = w.spend([coin], [(script, COIN), (ANYONE_SCRIPT, coin.value - COIN - FEE)])
    b1 = net.mine_block([t], sync=False)
    net.mine(6, sync=False)
    net.reconsider(a[0])
    assert net.tip() != a[-1] and net.height() == net.height(fork) + 7
    res = w.lsb(a[-1])
    assert project(res["transactions"], "txid", "category", "blockhash", "blockheight", "confirmations") == {
        (t.txid_hex(), "receive", b1, net.height(fork) + 1, 7): 1}
    assert res["removed"] == [] and res["lastblock"] == net.tip()
    assert w.gettx(t.txid())["blockhash"] == b1


def test_double_spend_across_reorg_and_include_removed(net):
    """E: tx1 (pays W) is mined on the losing branch, tx2 (same coin, pays nobody in W) on the
    winning one: tx1 is conflicted (-4), shows up in `removed` only, and only with include_removed."""
    w = net.wallet()
    _, script = w.new_address()
    coin = net.faucet()
    tx1 = w.spend([coin], [(script, COIN), (ANYONE_SCRIPT, coin.value - COIN - FEE)])
    tx2 = w.spend([coin], [(FOREIGN, COIN), (ANYONE_SCRIPT, coin.value - COIN - FEE)])
    net.send(tx1)
    a = net.mine(3)
    assert w.conf(tx1.txid()) == 3
    net.invalidate(a[0], sync=False)
    net.mine_block([tx2], sync=False)
    net.mine_empty(3, sync=False)
    net.reconsider(a[0])
    g = w.gettx(tx1.txid())
    assert (g["txid"], g["confirmations"], g["amount"], g["details"], g["walletconflicts"], g["trusted"]) == (
        tx1.txid_hex(), -4, Decimal(1), [], [], False)
    res = w.lsb(a[-1])
    assert of_tx(res["transactions"], tx1.txid()) == []
    assert project(res["removed"], "txid", "category", "amount", "confirmations", "blockhash", "trusted") == {
        (tx1.txid_hex(), "receive", Decimal(1), -4, "<absent>", False): 1}
    assert len(res["removed"]) == 1
    no_removed = w.lsb(a[-1], 1, None, False)
    assert "removed" not in no_removed and no_removed["transactions"] == res["transactions"]


def test_double_send_on_both_branches(net):
    """F: the same tx is mined on both branches; after the reorg it is listed in `transactions`
    and in `removed`, both with its current state (2 confirmations in the new block)."""
    w = net.wallet()
    _, script = w.new_address()
    tx1 = net.pay([(script, COIN)], sync=False)
    a = net.mine(3)
    net.invalidate(a[0], sync=False)          # tx1 goes back to the mempool
    net.mine_empty(2, sync=False)
    b3 = net.mine_block([tx1], sync=False)
    net.mine_empty(1, sync=False)
    net.reconsider(a[0])
    g = w.gettx(tx1.txid())
    assert g["blockhash"] == b3 and g["blockheight"] == net.height(b3) and g["confirmations"] == 2
    res = w.lsb(a[-1])
    in_tx, in_removed = of_tx(res["transactions"], tx1.txid()), of_tx(res["removed"], tx1.txid())
    assert strip_times(in_tx) == strip_times(in_removed) and len(in_tx) == 1
    assert (in_tx[0]["confirmations"], in_tx[0]["blockhash"]) == (2, b3)


def test_replaced_tx_filtered_by_block(net):
    """G without bumpfee (the chain has no RBF): O signals and waits in the mempool, R (same
    coin) is mined in X; listsinceblock(X) holds neither O (conflicted at X) nor R (in X)."""
    w = net.wallet()
    (coin,) = w.funded(2 * COIN)
    dest, change = w.new_address()[1], w.new_address(change=True)[1]
    o = w.spend([coin], [(dest, coin.value - 51_000), (change, 50_000)], sequence=0xFFFFFFFD)
    r = w.spend([coin], [(dest, coin.value - 61_000), (change, 50_000)], sequence=0xFFFFFFFD)
    net.send(o)
    before = net.tip()
    assert {e["txid"] for e in w.lsb(before)["transactions"]} == {o.txid_hex()}
    x = net.mine_block([r])
    assert w.conf(o.txid()) == -1 and w.conf(r.txid()) == 1
    assert w.lsb(x)["transactions"] == []
    assert {e["txid"] for e in w.lsb(before)["transactions"]} == {o.txid_hex(), r.txid_hex()}


def test_descriptor_lookup_parent_descs(net):
    """I: two watch-only multisig descriptors (inactive); each payment names its own parent."""
    w = net.wallet()
    ka, kb = Keys(b"\xa1" * 32), Keys(b"\xb2" * 32)
    desc_a = add_checksum(f"wsh(multi(1,{ka.tpub}/1/0/*,{kb.tpub}/1/1/*))")
    desc_b = add_checksum(f"wsh(multi(1,{ka.tpub}/1/1/*,{kb.tpub}/1/0/*))")
    res = w.rpc("importdescriptors", [{"desc": d, "active": False, "timestamp": "now", "range": [0, 5]}
                                      for d in (desc_a, desc_b)])
    assert [r["success"] for r in res] == [True, True]
    addr_a = net.node.rpc("deriveaddresses", desc_a, [0, 0])[0]
    addr_b = net.node.rpc("deriveaddresses", desc_b, [0, 0])[0]

    def script(a):
        return bytes.fromhex(w.rpc("getaddressinfo", a)["scriptPubKey"])

    tx = net.pay([(script(addr_a), COIN), (script(addr_b), 2 * COIN)])
    net.mine(1)
    entries = w.lsb()["transactions"]
    # Not active, not labelled: no address-book entry, so no `label` key.
    assert project(entries, "address", "amount", "parent_descs", "label", "txid") == {
        (addr_a, Decimal(1), (desc_a,), "<absent>", tx.txid_hex()): 1,
        (addr_b, Decimal(2), (desc_b,), "<absent>", tx.txid_hex()): 1}


def test_include_change(net):
    """J: a payment to one of the wallet's own change addresses shows only with include_change."""
    w = net.wallet()
    (coin,) = w.funded(3 * COIN)
    before = net.tip()
    change1, s1 = w.new_address(change=True)
    change2, s2 = w.new_address(change=True)
    tx = w.spend([coin], [(s1, COIN), (s2, coin.value - COIN - FEE)])
    net.send(tx)
    net.mine(1)
    plain = w.lsb(before)["transactions"]
    assert not [e for e in plain if e.get("address") in (change1, change2)]
    with_change = of_tx(w.lsb(before, 1, None, True, True)["transactions"], tx.txid())
    receives = [e for e in with_change if e["category"] == "receive"]
    assert project(receives, "address", "amount", "vout") == {
        (change1, Decimal(1), 0): 1, (change2, btc(coin.value - COIN - FEE), 1): 1}
    for address in (change1, change2):
        assert w.rpc("getaddressinfo", address)["ischange"] is True


def test_op_return_send_has_no_address(net):
    """K: the send entry of a 0-value OP_RETURN output has no `address`."""
    w = net.wallet()
    (coin,) = w.funded(COIN)
    change = w.new_address(change=True)[1]
    tx = w.spend([coin], [(b"\x6a\x01\xaa", 0), (change, coin.value - FEE)])
    net.send(tx)
    sends = [e for e in of_tx(w.lsb()["transactions"], tx.txid()) if e["category"] == "send"]
    assert project(sends, "address", "amount", "vout", "fee") == {
        ("<absent>", Decimal(0), 0, btc(-FEE)): 1}
    assert [d for d in w.gettx(tx.txid())["details"]] == [
        {"category": "send", "amount": Decimal(0), "vout": 0, "fee": btc(-FEE), "abandoned": False}]


def test_label_filter(net):
    """L: only incoming entries whose label equals the filter; the default label "" matches ""
    (an addr() imported without a label gets "", as Core's importdescriptors gives it); sends
    never appear with a filter; "*" is refused."""
    w = net.wallet()
    foreign_addr = encode_destination(b"\x00\x14" + b"\x42" * 20, "regtest")
    w.rpc("importdescriptors", [{"desc": add_checksum(f"addr({foreign_addr})"), "timestamp": "now"}])
    labelled, s_new = w.new_address(label="new_addr")
    unlabelled_default, s_default = w.new_address()
    tx = net.pay([(s_new, 100_000), (s_default, 200_000), (b"\x00\x14" + b"\x42" * 20, 300_000)])
    net.mine(1)
    spend = w.spend([coins_of(tx)[1]], [(FOREIGN, 200_000 - FEE)])
    net.send(spend)
    got = w.lsb(None, 1, None, True, False, "new_addr")["transactions"]
    assert project(got, "txid", "address", "label", "category") == {
        (tx.txid_hex(), labelled, "new_addr", "receive"): 1}
    got = w.lsb(None, 1, None, True, False, "")["transactions"]
    assert project(got, "address", "label", "category") == {
        (unlabelled_default, "", "receive"): 1, (foreign_addr, "", "receive"): 1}
    assert w.error("listsinceblock", None, 1, None, True, False, "*") == (-11, "Invalid label name")
    # Without the filter the spend's send entry is there.
    assert project(of_tx(w.lsb()["transactions"], spend.txid()), "category") == {("send",): 1}


def test_listsinceblock_multiset_equals_fresh_wallet(net):
    """The same keys imported into a new wallet (timestamp 0, full rescan) list the same
    entries, compared as multisets (Core's order is unspecified), times aside."""
    w = net.wallet()
    c1, c2 = w.funded(COIN, 2 * COIN)
    tx = w.spend([c1, c2], [(FOREIGN, COIN), (w.new_address(change=True)[1], 2 * COIN - FEE)])
    net.send(tx)
    net.mine(1)
    fresh = net.wallet(keys=w.keys)
    mine, theirs = w.lsb(), fresh.lsb()
    assert multiset(mine["transactions"]) == multiset(theirs["transactions"])
    assert len(mine["transactions"]) == 3  # two receives, one send (change is not listed)
    assert mine["lastblock"] == theirs["lastblock"]
