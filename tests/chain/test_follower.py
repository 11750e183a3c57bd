"""-chainsource: a quilld following another quilld through its JSON-RPC, reorgs and mempool included."""
import time

import pytest

from tests.chain.chain_testkit import spend
from tests.kit.anyone import ANYONE_ADDRESS
from tests.kit.rpc_daemon import QuillDaemon, RPCFailure

COIN = 100_000_000
UPSTREAM_AUTH = ("-rpcuser=up", "-rpcpassword=stream")


def wait_for(predicate, timeout=20.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    raise AssertionError("the follower did not catch up")


def in_sync(up, down):
    def check():
        try:
            return down.rpc("getbestblockhash") == up.rpc("getbestblockhash")
        except RPCFailure:
            return False       # no chain yet: the genesis block is still on its way
    return check


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    up = QuillDaemon(tmp_path_factory.mktemp("upstream"), *UPSTREAM_AUTH).start()
    source = f"-chainsource=http://up:stream@127.0.0.1:{up.port}"
    down = QuillDaemon(tmp_path_factory.mktemp("follower"), source, "-chainpollinterval=100").start()
    try:
        up.rpc("generatetoaddress", 101, ANYONE_ADDRESS)
        wait_for(in_sync(up, down))
        yield up, down
    finally:
        down.stop()
        up.stop()


def coinbase(d, height):
    return bytes.fromhex(d.rpc("getblock", d.rpc("getblockhash", height))["tx"][0])[::-1]


def test_follows_blocks_and_mempool(pair):
    up, down = pair
    assert down.rpc("getblockcount") == up.rpc("getblockcount") == 101
    assert down.rpc("getblock", up.rpc("getblockhash", 50), 0) == up.rpc("getblock", up.rpc("getblockhash", 50), 0)
    tx = spend(coinbase(up, 1), 0, 50 * COIN)
    up.rpc("sendrawtransaction", tx.hex())
    wait_for(lambda: down.rpc("getrawmempool") == [tx.txid_hex()])
    up.rpc("generatetoaddress", 1, ANYONE_ADDRESS)
    wait_for(in_sync(up, down))
    assert down.rpc("getrawmempool") == []
    assert down.rpc("getrawtransaction", tx.txid_hex(), True)["confirmations"] == 1


def test_follows_an_upstream_reorg(pair):
    up, down = pair
    tx = spend(coinbase(up, 2), 0, 50 * COIN)
    up.rpc("sendrawtransaction", tx.hex())
    old = up.rpc("generatetoaddress", 2, ANYONE_ADDRESS)
    wait_for(in_sync(up, down))
    assert down.rpc("getrawtransaction", tx.txid_hex(), True)["blockhash"] == old[0]
    # Upstream drops both blocks (the tx returns to its mempool) and mines a longer branch without it.
    up.rpc("invalidateblock", old[0])
    new = [up.rpc("generateblock", ANYONE_ADDRESS, [])["hash"] for _ in range(3)]
    wait_for(in_sync(up, down))
    assert down.rpc("getbestblockhash") == new[-1]
    assert down.rpc("getblockheader", old[1])["confirmations"] == -1
    wait_for(lambda: down.rpc("getrawmempool") == [tx.txid_hex()])
    # A reorg to LESS work upstream is followed too: the upstream node decides.
    up.rpc("invalidateblock", new[1])
    wait_for(in_sync(up, down))
    assert down.rpc("getblockcount") == up.rpc("getblockcount")


def test_transactions_are_relayed_and_mining_is_refused(pair):
    up, down = pair
    tx = spend(coinbase(up, 3), 0, 50 * COIN)
    assert down.rpc("sendrawtransaction", tx.hex()) == tx.txid_hex()
    assert tx.txid_hex() in up.rpc("getrawmempool")
    with pytest.raises(RPCFailure) as e:
        down.rpc("sendrawtransaction", spend(b"\x66" * 32, 0, COIN).hex())
    assert (e.value.code, e.value.message) == (-25, "bad-txns-inputs-missingorspent")
    with pytest.raises(RPCFailure) as e:
        down.rpc("generatetoaddress", 1, ANYONE_ADDRESS)
    assert e.value.code == -1 and "not available while following -chainsource" in e.value.message
