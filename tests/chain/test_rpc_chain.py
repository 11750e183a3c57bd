"""The chain RPCs through a real quilld (HTTP JSON-RPC), checked against Core's shapes and errors."""
from decimal import Decimal

import pytest

from quill.chain import miner
from quill.chain.block import Block
from quill.tx.transaction import Transaction
from tests.chain.chain_testkit import OTHER_ADDRESS, OTHER_SCRIPT, spend
from tests.kit.anyone import ANYONE_ADDRESS
from tests.kit.rpc_daemon import QuillDaemon, RPCFailure

COIN = 100_000_000


@pytest.fixture(scope="module")
def node(tmp_path_factory):
    with QuillDaemon(tmp_path_factory.mktemp("chain"), "-deprecatedrpc=bip125") as d:   # to see the RBF signal
        d.rpc("generatetoaddress", 110, ANYONE_ADDRESS)
        d.spent = set()
        yield d


def fail(d, method, *params):
    with pytest.raises(RPCFailure) as e:
        d.rpc(method, *params)
    return e.value.code, e.value.message


def fresh_coinbase(d):
    """The txid of a mature, unspent coinbase output (each test takes its own)."""
    for height in range(1, d.rpc("getblockcount") - 99):
        txid = d.rpc("getblock", d.rpc("getblockhash", height))["tx"][0]
        if txid not in d.spent:
            d.spent.add(txid)
            return bytes.fromhex(txid)[::-1]
    raise AssertionError("no mature coinbase left")


# -- blocks and headers ------------------------------------------------------------------------


def test_getblockchaininfo_shape(node):
    info = node.rpc("getblockchaininfo")
    assert list(info) == ["chain", "blocks", "headers", "bestblockhash", "bits", "target", "difficulty", "time",
                          "mediantime", "verificationprogress", "initialblockdownload", "chainwork",
                          "size_on_disk", "pruned", "warnings"]
    assert info["chain"] == "regtest" and info["blocks"] == info["headers"] == node.rpc("getblockcount")
    assert info["bestblockhash"] == node.rpc("getbestblockhash")
    assert info["bits"] == "207fffff" and info["difficulty"] == Decimal("4.656542373906925E-10")
    assert info["chainwork"] == "%064x" % (2 * (info["blocks"] + 1))
    assert info["initialblockdownload"] is False and info["warnings"] == [] and info["pruned"] is False


def test_getblockhash_and_header(node):
    assert node.rpc("getblockhash", 0) == "0f9188f13cb7b2c71f2a335e3a4fc328bf5beb436012afca590b1a11466e2206"
    assert fail(node, "getblockhash", 10**6) == (-8, "Block height out of range")
    assert fail(node, "getblockhash", -1) == (-8, "Block height out of range")
    h1 = node.rpc("getblockhash", 1)
    header = node.rpc("getblockheader", h1)
    assert list(header) == ["hash", "confirmations", "height", "version", "versionHex", "merkleroot", "time",
                            "mediantime", "nonce", "bits", "target", "difficulty", "chainwork", "nTx",
                            "previousblockhash", "nextblockhash"]
    assert header["height"] == 1 and header["versionHex"] == "20000000"
    assert header["confirmations"] == node.rpc("getblockcount")
    assert header["previousblockhash"] == node.rpc("getblockhash", 0)
    raw = node.rpc("getblockheader", h1, False)
    assert len(raw) == 160
    assert Block.from_bytes(bytes.fromhex(node.rpc("getblock", h1, 0))).header.serialize().hex() == raw
    genesis = node.rpc("getblockheader", node.rpc("getblockhash", 0))
    assert "previousblockhash" not in genesis
    assert fail(node, "getblockheader", "00" * 32) == (-5, "Block not found")
    assert fail(node, "getblockheader", "zz") == (-8, "hash must be of length 64 (not 2, for 'zz')")
    for bad in ("g" * 64, "00 " * 21 + "0"):       # bytes.fromhex would accept the spaces
        assert fail(node, "getblock", bad) == (-8, f"blockhash must be hexadecimal string (not '{bad}')")


def test_getblock_verbosities_and_fees(node):
    tx = spend(fresh_coinbase(node), 0, 50 * COIN, fee=2500)
    node.rpc("sendrawtransaction", tx.hex())
    [block_hash] = node.rpc("generatetoaddress", 1, ANYONE_ADDRESS)
    raw = node.rpc("getblock", block_hash, 0)
    block = Block.from_bytes(bytes.fromhex(raw))
    assert block.hash()[::-1].hex() == block_hash and [t.txid() for t in block.txs][1] == tx.txid()
    one = node.rpc("getblock", block_hash)
    assert one["tx"] == [t.txid_hex() for t in block.txs] and one["nTx"] == 2
    assert list(one)[-5:] == ["strippedsize", "size", "weight", "coinbase_tx", "tx"]     # Core 31's layout
    assert one["coinbase_tx"]["coinbase"] == block.txs[0].vin[0].script_sig.hex()
    assert (one["size"], one["strippedsize"], one["weight"]) == (block.size(), block.stripped_size(), block.weight())
    two = node.rpc("getblock", block_hash, 2)
    cb, spent = two["tx"]
    assert "fee" not in cb and spent["fee"] == Decimal("0.00002500")
    assert list(spent)[-3:] == ["vout", "fee", "hex"] and spent["hex"] == tx.hex()
    assert node.rpc("getblock", block_hash, True)["tx"] == one["tx"]
    three = node.rpc("getblock", block_hash, 3)
    prevout = three["tx"][1]["vin"][0]["prevout"]
    assert list(three["tx"][1]["vin"][0]) == ["txid", "vout", "scriptSig", "txinwitness", "prevout", "sequence"]
    assert prevout["generated"] is True and prevout["value"] == Decimal("50.00000000")
    assert prevout["scriptPubKey"]["address"] == ANYONE_ADDRESS


# -- transactions ----------------------------------------------------------------------------


def test_sendrawtransaction_errors_as_core(node):
    cb = fresh_coinbase(node)
    assert fail(node, "sendrawtransaction", "00") == (-22, "TX decode failed. Make sure the tx has at least one input.")
    tx = spend(cb, 0, 50 * COIN)
    assert node.rpc("sendrawtransaction", tx.hex()) == tx.txid_hex()
    assert node.rpc("sendrawtransaction", tx.hex()) == tx.txid_hex()       # already in the pool: success
    double = spend(cb, 0, 50 * COIN, fee=1000, script=OTHER_SCRIPT)   # no more fee: no replacement
    assert fail(node, "sendrawtransaction", double.hex()) == \
        (-26, f"insufficient fee, rejecting replacement {double.txid_hex()}, not enough additional fees to relay; "
              "0.00 < 0.00000009")
    assert fail(node, "sendrawtransaction", spend(b"\x33" * 32, 0, COIN).hex()) == \
        (-25, "bad-txns-inputs-missingorspent")
    young = node.rpc("getblock", node.rpc("getbestblockhash"))["tx"][0]
    premature = spend(bytes.fromhex(young)[::-1], 0, 50 * COIN)
    assert fail(node, "sendrawtransaction", premature.hex()) == \
        (-26, "bad-txns-premature-spend-of-coinbase, tried to spend coinbase at depth 1")
    greedy = spend(fresh_coinbase(node), 0, 50 * COIN, fee=COIN)
    assert fail(node, "sendrawtransaction", greedy.hex()) == \
        (-25, "Fee exceeds maximum configured by user (e.g. -maxtxfee, maxfeerate)")
    assert node.rpc("sendrawtransaction", greedy.hex(), 0) == greedy.txid_hex()
    assert fail(node, "sendrawtransaction", tx.hex(), "x") == (-3, "Invalid amount")
    node.rpc("generatetoaddress", 1, ANYONE_ADDRESS)
    assert fail(node, "sendrawtransaction", tx.hex()) == (-27, "Transaction outputs already in utxo set")
    assert fail(node, "sendrawtransaction", double.hex()) == (-25, "bad-txns-inputs-missingorspent")


def test_getrawtransaction_mempool_txindex_and_block(node):
    tx = spend(fresh_coinbase(node), 0, 50 * COIN)
    node.rpc("sendrawtransaction", tx.hex())
    assert node.rpc("getrawtransaction", tx.txid_hex()) == tx.hex()
    pooled = node.rpc("getrawtransaction", tx.txid_hex(), 1)
    assert "blockhash" not in pooled and pooled["hex"] == tx.hex() and list(pooled)[0] == "txid"
    [block_hash] = node.rpc("generatetoaddress", 1, ANYONE_ADDRESS)
    mined = node.rpc("getrawtransaction", tx.txid_hex(), True)
    assert list(mined)[-5:] == ["hex", "blockhash", "confirmations", "time", "blocktime"]
    assert mined["blockhash"] == block_hash and mined["confirmations"] == 1
    in_block = node.rpc("getrawtransaction", tx.txid_hex(), 2, block_hash)
    assert list(in_block)[0] == "in_active_chain" and in_block["in_active_chain"] is True
    assert in_block["fee"] == Decimal("0.00001000") and "prevout" in in_block["vin"][0]
    other = node.rpc("getblockhash", 1)
    assert fail(node, "getrawtransaction", tx.txid_hex(), 0, other) == \
        (-5, "No such transaction found in the provided block. Use gettransaction for wallet transactions.")
    assert fail(node, "getrawtransaction", "11" * 32) == \
        (-5, "No such mempool or blockchain transaction. Use gettransaction for wallet transactions.")
    assert fail(node, "getrawtransaction", tx.txid_hex(), 0, "22" * 32) == (-5, "Block hash not found")
    genesis_cb = "4a5e1e4baab89f3a32518a88c31bc87f618f76673e2cc77ab2127b7afdeda33b"
    assert fail(node, "getrawtransaction", genesis_cb)[0] == -5


def test_getrawmempool_and_entry(node):
    parent = spend(fresh_coinbase(node), 0, 50 * COIN, fee=2000)
    child = spend(parent.txid(), 0, parent.vout[0].value, fee=3000, sequence=0xFFFFFFFF)
    node.rpc("sendrawtransaction", parent.hex())
    node.rpc("sendrawtransaction", child.hex())
    assert node.rpc("getrawmempool") == [parent.txid_hex(), child.txid_hex()]
    seq = node.rpc("getrawmempool", False, True)
    assert seq["txids"] == [parent.txid_hex(), child.txid_hex()] and isinstance(seq["mempool_sequence"], int)
    assert fail(node, "getrawmempool", True, True) == (-8, "Verbose results cannot contain mempool sequence values.")
    verbose = node.rpc("getrawmempool", True)
    entry = verbose[child.txid_hex()]
    assert list(entry) == ["vsize", "weight", "time", "height", "descendantcount", "descendantsize",
                           "ancestorcount", "ancestorsize", "wtxid", "fees", "depends", "spentby",
                           "unbroadcast", "bip125-replaceable"]
    assert entry["depends"] == [parent.txid_hex()] and entry["ancestorcount"] == 2
    assert entry["fees"] == {"base": Decimal("0.00003000"), "modified": Decimal("0.00003000"),
                             "ancestor": Decimal("0.00005000"), "descendant": Decimal("0.00003000")}
    assert entry["bip125-replaceable"] is True          # its parent signals
    assert node.rpc("getmempoolentry", parent.txid_hex())["spentby"] == [child.txid_hex()]
    assert fail(node, "getmempoolentry", "44" * 32) == (-5, "Transaction not in mempool")
    node.rpc("generatetoaddress", 1, ANYONE_ADDRESS)
    assert node.rpc("getrawmempool") == []


# -- mining -----------------------------------------------------------------------------------


def test_generatetoaddress_and_generateblock(node):
    assert fail(node, "generatetoaddress", 1, "notanaddress") == (-5, "Error: Invalid address")
    assert fail(node, "generateblock", "nope", []) == (-5, "Error: Invalid address or descriptor")
    assert fail(node, "generateblock", ANYONE_ADDRESS, ["55" * 32]) == (-5, f"Transaction {'55' * 32} not in mempool.")
    assert fail(node, "generateblock", ANYONE_ADDRESS, ["zz"])[0] == -22
    pooled = spend(fresh_coinbase(node), 0, 50 * COIN)
    node.rpc("sendrawtransaction", pooled.hex())
    raw = spend(fresh_coinbase(node), 0, 50 * COIN)
    height = node.rpc("getblockcount")
    out = node.rpc("generateblock", f"addr({OTHER_ADDRESS})", [pooled.txid_hex(), raw.hex()])
    assert list(out) == ["hash"] and node.rpc("getblockcount") == height + 1
    block = node.rpc("getblock", out["hash"], 2)
    assert [t["txid"] for t in block["tx"][1:]] == [pooled.txid_hex(), raw.txid_hex()]
    # generateblock's coinbase claims the subsidy only, as Core's.
    assert block["tx"][0]["vout"][0]["value"] == Decimal("50.00000000")
    assert block["tx"][0]["vout"][0]["scriptPubKey"]["address"] == OTHER_ADDRESS
    code, message = fail(node, "generateblock", ANYONE_ADDRESS, [raw.hex()])
    assert code == -25 and message.startswith("TestBlockValidity failed: bad-txns-inputs-missingorspent")
    assert node.rpc("getblockcount") == height + 1
    unsent = node.rpc("generateblock", ANYONE_ADDRESS, [], False)
    assert list(unsent) == ["hash", "hex"] and node.rpc("getblockcount") == height + 1
    assert node.rpc("submitblock", unsent["hex"]) is None
    assert node.rpc("submitblock", unsent["hex"]) == "duplicate"
    assert node.rpc("getbestblockhash") == unsent["hash"]


def test_submitblock_garbage_and_bad_blocks_store_nothing(node):
    assert fail(node, "submitblock", "00") == (-22, "Block decode failed")
    assert fail(node, "submitblock", "zz") == (-22, "Block decode failed")
    template = node.rpc("generateblock", ANYONE_ADDRESS, [], False)["hex"]
    block = Block.from_bytes(bytes.fromhex(template))
    no_coinbase = Block(block.header, [])
    assert fail(node, "submitblock", no_coinbase.serialize().hex()) == (-22, "Block does not start with a coinbase")
    count = node.rpc("getblockcount")
    block.txs[0].vout[0].value += 1
    miner.add_witness_commitment(block)
    assert miner.grind(block, 0x7FFFFF << 232, 10**6)
    assert node.rpc("submitblock", block.serialize().hex()) == "bad-cb-amount"
    block.header.nonce += 1
    while block.hash()[-1] < 0x80:
        block.header.nonce += 1
    assert node.rpc("submitblock", block.serialize().hex()) == "high-hash"
    assert node.rpc("getblockcount") == count
    assert fail(node, "getblockheader", block.hash()[::-1].hex()) == (-5, "Block not found")


def test_reorg_invalidate_longer_alternative_reconsider(node):
    tx = spend(fresh_coinbase(node), 0, 50 * COIN)
    node.rpc("sendrawtransaction", tx.hex())
    base = node.rpc("getblockcount")
    [old] = node.rpc("generatetoaddress", 1, ANYONE_ADDRESS)
    assert fail(node, "invalidateblock", "00" * 32) == (-5, "Block not found")
    assert node.rpc("invalidateblock", old) is None
    assert node.rpc("getblockcount") == base and node.rpc("getrawmempool") == [tx.txid_hex()]
    # The alternative chain is longer and mines a conflicting spend of the same coin.
    rival = Transaction.from_hex(spend(tx.vin[0].prevout.hash, 0, 50 * COIN, fee=4000, script=OTHER_SCRIPT).hex())
    alt = [node.rpc("generateblock", ANYONE_ADDRESS, [rival.hex()])["hash"]]
    alt += node.rpc("generatetoaddress", 1, ANYONE_ADDRESS)
    assert node.rpc("getrawmempool") == []
    assert node.rpc("reconsiderblock", old) is None
    assert node.rpc("getbestblockhash") == alt[-1]                   # more work stays active
    stale = node.rpc("getblock", old)
    assert stale["confirmations"] == -1 and "nextblockhash" not in stale
    assert node.rpc("getrawtransaction", rival.txid_hex(), True)["blockhash"] == alt[0]
    # Invalidate the alternative: the old branch is the best valid chain again.
    node.rpc("invalidateblock", alt[0])
    assert node.rpc("getbestblockhash") == old
    assert node.rpc("getrawtransaction", tx.txid_hex(), True)["blockhash"] == old
    node.rpc("reconsiderblock", alt[0])
    assert node.rpc("getbestblockhash") == alt[-1]
