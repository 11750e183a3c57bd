"""Core's wallet scenarios (core-wallet.md §5) on the real built-in regtest chain,
through the real dispatcher; spends use anyone-can-spend coins (no signer)."""
from collections import Counter
from decimal import Decimal

import pytest

from quill.tx.descriptor import add_checksum
from quill.tx.hashes import hash_to_hex
from quill.wallet.bip32 import master_from_seed
from tests.kit.anyone import ANYONE_SCRIPT
from tests.wallet.chainkit import FOREIGN, Kit

TPUB = master_from_seed(bytes(range(32))).neuter().serialize("regtest")
RECV = add_checksum(f"wpkh({TPUB}/0/*)")
CHANGE = add_checksum(f"wpkh({TPUB}/1/*)")


@pytest.fixture
def kit(tmp_path):
    k = Kit(tmp_path)
    yield k
    k.close()


def make_wallet(kit, name="w"):
    assert kit.rpc("createwallet", name, True, True) == {"name": name}
    res = kit.rpc("importdescriptors", [
        {"desc": RECV, "timestamp": 0, "active": True, "range": [0, 20]},
        {"desc": CHANGE, "timestamp": 0, "active": True, "internal": True, "range": [0, 20]},
        {"desc": add_checksum(f"addr({kit.address(ANYONE_SCRIPT)})"), "timestamp": 0, "label": "coins"},
    ], wallet=name)
    assert [r["success"] for r in res] == [True, True, True], res
    return name


def script_of(kit, address):
    from quill.tx.address import decode_destination
    return decode_destination(address, "regtest")


def multiset(entries):
    return Counter(repr(sorted(e.items())) for e in entries)


def test_no_blockhash_and_target_confirmations(kit):
    w = make_wallet(kit)
    (coin,) = kit.coinbase_coins(1)
    addr = kit.rpc("getnewaddress", wallet=w)
    tx = kit.spend([coin], [(script_of(kit, addr), 100_000_000), (FOREIGN, coin[1] - 100_010_000)])
    # pay from a foreign-looking coin: the wallet owns ANYONE_SCRIPT, so this is a send with change-less receive
    kit.chain.send_transaction(tx)
    entries = kit.rpc("listsinceblock", wallet=w)["transactions"]
    mine = [e for e in entries if e["txid"] == hash_to_hex(tx.txid()) and e["category"] == "receive"]
    assert mine[0]["confirmations"] == 0 and mine[0]["amount"] == Decimal("1.00000000")
    (b,) = kit.mine(1, FOREIGN)
    res = kit.rpc("listsinceblock", wallet=w)
    assert res == kit.rpc("listsinceblock", "", wallet=w)
    assert res["lastblock"] == hash_to_hex(b) and res["removed"] == []
    rec = [e for e in res["transactions"] if e["txid"] == hash_to_hex(tx.txid()) and e["category"] == "receive"][0]
    assert rec["confirmations"] == 1 and rec["blockhash"] == hash_to_hex(b) and "trusted" not in rec
    h = kit.chain.tip()[0]
    genesis = hash_to_hex(kit.chain.block_hash(0))
    assert kit.rpc("listsinceblock", hash_to_hex(b), h + 1, wallet=w)["lastblock"] == genesis
    assert kit.rpc("listsinceblock", hash_to_hex(b), h + 1000, wallet=w)["lastblock"] == genesis
    assert kit.rpc_error("listsinceblock", hash_to_hex(b), 0, wallet=w) == (-8, "Invalid parameter")
    # listsinceblock(tip) holds no confirmed entry
    assert kit.rpc("listsinceblock", hash_to_hex(b), wallet=w)["transactions"] == []


def test_invalid_blockhash_errors(kit):
    w = make_wallet(kit)
    assert kit.rpc_error("listsinceblock", "42759cde25462784395a337460bde75f58e73d3f08bd31fdc3507cbac856a2c4",
                         wallet=w) == (-5, "Block not found")
    assert kit.rpc_error("listsinceblock", "0" * 64, 0, wallet=w) == (-5, "Block not found")
    assert kit.rpc_error("listsinceblock", "invalid-hex", wallet=w) == (
        -8, "blockhash must be of length 64 (not 11, for 'invalid-hex')")
    assert kit.rpc_error("listsinceblock", "Z" + "0" * 63, wallet=w) == (
        -8, "blockhash must be hexadecimal string (not 'Z" + "0" * 63 + "')")
    assert kit.rpc_error("listsinceblock", None, 1, None, None, None, "*", wallet=w) == (-11, "Invalid label name")
    assert kit.rpc_error("gettransaction", "ab", wallet=w) == (-8, "txid must be of length 64 (not 2, for 'ab')")
    assert kit.rpc_error("gettransaction", "ff" * 32, wallet=w) == (-5, "Invalid or non-wallet transaction id")
    assert kit.rpc_error("gettransaction", "ff" * 32, wallet="nope")[0] == -18
    kit.rpc("createwallet", "other", True, True)
    assert kit.rpc_error("gettransaction", "ff" * 32) == (
        -19, "Wallet file not specified (must request wallet RPC through /wallet/<filename> uri-path).")


def test_double_spend_across_reorg_conflict_and_clearing(kit):
    w = make_wallet(kit)
    (coin,) = kit.coinbase_coins(1)
    addr = kit.rpc("getnewaddress", wallet=w)
    tx1 = kit.spend([coin], [(script_of(kit, addr), 100_000_000), (FOREIGN, coin[1] - 100_010_000)])
    kit.chain.send_transaction(tx1)
    a = kit.mine(3, FOREIGN)
    assert kit.rpc("gettransaction", hash_to_hex(tx1.txid()), wallet=w)["confirmations"] == 3
    # the other branch: tx2 spends the same coin to nobody in the wallet, and is 4 blocks long
    kit.chain.invalidate(a[0])
    tx2 = kit.spend([coin], [(FOREIGN, coin[1] - 20_000)])
    b1 = kit.chain.generate_block(FOREIGN, [tx2])
    kit.mine(3, FOREIGN)
    g = kit.rpc("gettransaction", hash_to_hex(tx1.txid()), wallet=w)
    # tx1 spends a wallet coin: a conflicted tx keeps only its send entries (§1.5)
    assert g["confirmations"] == -4 and g["trusted"] is False
    assert {d["category"] for d in g["details"]} == {"send"}
    assert g["walletconflicts"] == [hash_to_hex(tx2.txid())]  # tx2 spends a wallet coin: a wallet tx
    res = kit.rpc("listsinceblock", hash_to_hex(a[2]), wallet=w)
    assert [e["txid"] for e in res["removed"]].count(hash_to_hex(tx1.txid())) >= 1
    assert all(e["confirmations"] == -4 for e in res["removed"] if e["txid"] == hash_to_hex(tx1.txid()))
    assert not [e for e in res["transactions"] if e["txid"] == hash_to_hex(tx1.txid()) and e["category"] == "receive"]
    assert "removed" not in kit.rpc("listsinceblock", hash_to_hex(a[2]), 1, None, False, wallet=w)
    # disconnecting the conflicting block clears the conflict (v26+)
    kit.chain.invalidate(b1.hash())
    g = kit.rpc("gettransaction", hash_to_hex(tx1.txid()), wallet=w)
    assert g["confirmations"] >= 0


def test_coinbase_maturity_orphan_and_abandon(kit):
    w = make_wallet(kit)
    addr = kit.rpc("getnewaddress", wallet=w)
    (blk,) = kit.mine(1, script_of(kit, addr))
    cb = hash_to_hex(kit.chain.block(blk).txs[0].txid())
    g = kit.rpc("gettransaction", cb, wallet=w)
    assert g["generated"] is True and g["amount"] == Decimal("0E-8") and g["details"][0]["category"] == "immature"
    kit.mine(99, FOREIGN)
    assert kit.rpc("gettransaction", cb, wallet=w)["details"][0]["category"] == "immature"
    kit.mine(1, FOREIGN)
    g = kit.rpc("gettransaction", cb, wallet=w)
    assert g["confirmations"] == 101 and g["details"][0]["category"] == "generate"
    assert kit.rpc("getbalances", wallet=w)["mine"]["trusted"] == Decimal("50.00000000")
    kit.chain.invalidate(blk)
    g = kit.rpc("gettransaction", cb, wallet=w)
    assert g["details"][0]["category"] == "orphan" and g["details"][0]["abandoned"] is True
    assert "bip125-replaceable" not in g and g["trusted"] is False   # Core 31: -deprecatedrpc=bip125 only
    kit.chain.reconsider(blk)
    g = kit.rpc("gettransaction", cb, wallet=w)
    assert g["details"][0]["abandoned"] is False and g["confirmations"] == 101


def test_abandon_rules(kit):
    w = make_wallet(kit)
    (coin,) = kit.coinbase_coins(1)
    tx = kit.spend([coin], [(FOREIGN, coin[1] - 10_000)])
    kit.chain.send_transaction(tx)
    txid = hash_to_hex(tx.txid())
    g = kit.rpc("gettransaction", txid, wallet=w)
    assert g["amount"] == Decimal(-coin[1] + 10_000) / 10 ** 8 and g["fee"] == Decimal("-0.00010000")
    assert g["trusted"] is True and g["details"][0]["category"] == "send"
    assert kit.rpc_error("abandontransaction", txid, wallet=w) == (-5, "Transaction not eligible for abandonment")
    assert kit.rpc_error("abandontransaction", "ff" * 32, wallet=w) == (-5, "Invalid or non-wallet transaction id")


def test_restart_catches_up(kit, tmp_path):
    w = make_wallet(kit)
    before = kit.rpc("listsinceblock", wallet=w)
    kit.rpc("unloadwallet", w)
    kit.coinbase_coins(2)
    kit.rpc("loadwallet", w)
    after = kit.rpc("listsinceblock", wallet=w)
    assert len(after["transactions"]) == len(before["transactions"]) + 2
    fresh = "fresh"
    make_wallet(kit, fresh)

    def strip(es):
        return multiset({k: v for k, v in e.items() if k not in ("time", "timereceived")} for e in es)

    assert strip(after["transactions"]) == strip(kit.rpc("listsinceblock", wallet=fresh)["transactions"])


def test_descriptor_rpcs_and_errors(kit):
    w = make_wallet(kit)
    info = kit.rpc("getdescriptorinfo", RECV.split("#")[0])
    assert info["descriptor"] == RECV and info["isrange"] is True and info["hasprivatekeys"] is False
    assert kit.rpc_error("getdescriptorinfo", RECV.split("#")[0] + "#00000000")[1].startswith(
        "Provided checksum '00000000' does not match computed checksum")
    res = kit.rpc("importdescriptors", [{"desc": RECV.split("#")[0], "timestamp": "now"},
                                        {"desc": add_checksum(f"wpkh({TPUB}/0h/*)"), "timestamp": "now"}], wallet=w)
    assert res[0] == {"success": False, "error": {"code": -5, "message": "Missing checksum"}}
    assert res[1]["error"] == {"code": -4, "message": "Cannot expand descriptor. Probably because of hardened "
                                                      "derivations without private keys provided"}
    assert kit.rpc_error("importdescriptors", [{"desc": RECV}], wallet=w) == (
        -3, "Missing required timestamp field for key")
    addrs = kit.rpc("deriveaddresses", RECV, [0, 2])
    assert len(addrs) == 3 and kit.rpc("getaddressinfo", addrs[1], wallet=w)["ismine"] is True
    assert kit.rpc_error("deriveaddresses", RECV) == (-8, "Range must be specified for a ranged descriptor")
    assert kit.rpc_error("createwallet", "x", False)[0] == -4
    assert kit.rpc_error("loadwallet", "w")[0] == -35


def test_rescan_leaves_a_block_reorganised_away_while_it_ran(kit, monkeypatch):
    """A rescan holds no lock between blocks: a reorg can replace a block it has fetched but not yet
    given to the wallet. That block is skipped and the scan goes on from the fork on the new branch,
    so a transaction of the stale block is not recorded as confirmed in it."""
    w = make_wallet(kit)
    coin_a, coin_b = kit.coinbase_coins(2)
    addr = script_of(kit, kit.rpc("getnewaddress", wallet=w))
    t1 = kit.spend([coin_a], [(addr, 100_000_000), (FOREIGN, coin_a[1] - 100_010_000)])
    t2 = kit.spend([coin_b], [(addr, 200_000_000), (FOREIGN, coin_b[1] - 200_010_000)])
    t3 = kit.spend([coin_b], [(addr, 300_000_000), (FOREIGN, coin_b[1] - 300_010_000)])   # t2's double spend
    a = kit.chain.generate_block(FOREIGN, [t1])
    b = kit.chain.generate_block(FOREIGN, [t2])
    height_a = kit.chain.tip()[0] - 1
    real_scan = kit.chain.scan
    replaced = []

    def scan_with_a_reorg(start, stop, hint, should_stop=lambda: False):
        for h, block in real_scan(start, stop, hint, should_stop):
            yield h, block
            if block.hash() == a.hash() and not replaced:
                # b leaves the chain after the scan has read it (its hashes are fixed): b' holds t3
                kit.chain.invalidate(b.hash())
                replaced.append(kit.chain.generate_block(FOREIGN, [t3]))

    monkeypatch.setattr(kit.chain, "scan", scan_with_a_reorg)
    assert kit.rpc("rescanblockchain", height_a, wallet=w) == {"start_height": height_a, "stop_height": height_a + 1}
    assert replaced
    confirmed = {e["txid"]: (e["confirmations"], e.get("blockhash"))
                 for e in kit.rpc("listsinceblock", "", wallet=w)["transactions"]}
    assert confirmed[hash_to_hex(t1.txid())] == (2, hash_to_hex(a.hash()))
    assert confirmed[hash_to_hex(t3.txid())] == (1, hash_to_hex(replaced[0].hash()))
    assert confirmed[hash_to_hex(t2.txid())][0] < 0           # conflicted by t3, never in b


def test_replacement_marks_and_their_reload(kit):
    """A replacement in the built-in mempool: the original is inactive, conflicts with it, is not
    trusted; bumpfee's marks (Core's mapValue) come last and survive unloading the wallet."""
    w = make_wallet(kit)
    (coin,) = kit.coinbase_coins(1)
    addr = kit.rpc("getnewaddress", wallet=w)
    funding = kit.spend([coin], [(script_of(kit, addr), 100_000_000), (FOREIGN, coin[1] - 100_010_000)])
    kit.chain.send_transaction(funding)
    replacement = kit.spend([coin], [(script_of(kit, addr), 100_000_000), (FOREIGN, coin[1] - 100_020_000)])
    kit.chain.send_transaction(replacement)
    old, new = (kit.rpc("gettransaction", hash_to_hex(t.txid()), wallet=w) for t in (funding, replacement))
    assert (old["confirmations"], old["trusted"], old["walletconflicts"], old["mempoolconflicts"]) == \
        (0, False, [hash_to_hex(replacement.txid())], [hash_to_hex(replacement.txid())])
    assert (new["trusted"], new["walletconflicts"], new["mempoolconflicts"]) == \
        (True, [hash_to_hex(funding.txid())], [])
    assert "replaced_by_txid" not in old and "replaces_txid" not in new   # only bumpfee marks them
    kit.manager.resolve(w).mark_replaced(funding.txid(), replacement.txid())
    kit.rpc("unloadwallet", w)
    kit.rpc("loadwallet", w)
    old, new = (kit.rpc("gettransaction", hash_to_hex(t.txid()), wallet=w) for t in (funding, replacement))
    assert old["replaced_by_txid"] == hash_to_hex(replacement.txid()) and list(old)[-4] == "replaced_by_txid"
    assert new["replaces_txid"] == hash_to_hex(funding.txid())
