"""getblock while following the real Bitcoin Core (-chainsource): at every verbosity the answer is the
node's, byte for byte (`fee` and `prevout` included, which need the undo data only the node keeps),
asked once and asked again (the second answer comes from quilld's rendered bodies), and again after
the chain has grown (confirmations and nextblockhash move, the bodies do not).
"""
from __future__ import annotations

import json

import pytest

from tests.follow.corekit import CoreChain, wait_for
from tests.kit.bitcoind import BitcoinD, follower

HEIGHT = 120


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    core = BitcoinD(tmp_path_factory.mktemp("core")).start()
    try:
        chain = CoreChain(core)
        chain.build(HEIGHT, txs_per_block=3)
        with follower(core, tmp_path_factory.mktemp("follow")) as quill:
            wait_for(lambda: quill.rpc("getbestblockhash") == core.rpc("getbestblockhash"), what="the follower")
            yield core, chain, quill
    finally:
        core.stop()


def both(core: BitcoinD, quill, method: str, *params: object) -> tuple[tuple[int, bytes], tuple[int, bytes]]:
    """(status, body) of the same request to Core and to quilld."""
    body = json.dumps({"jsonrpc": "1.0", "id": "g", "method": method, "params": list(params)}).encode()
    status, _, theirs = core.rpc_raw(body)
    mine_status, mine, _ = quill.post(body)
    return (mine_status, mine), (status, theirs)


def test_getblock_is_the_nodes_answer_at_every_verbosity(pair):
    core, chain, quill = pair
    heights = (0, 1, HEIGHT - 5, HEIGHT - 1, HEIGHT)
    hashes = [core.rpc("getblockhash", h) for h in heights]
    with_fee = core.rpc("getblock", hashes[-1], 2)
    assert len(with_fee["tx"]) > 1 and "fee" in with_fee["tx"][1]   # the block has spends: fee shows
    for _ in range(2):        # the second time from the rendered bodies
        for h in hashes:
            for verbosity in (0, 1, 2, 3, True, False):
                mine, theirs = both(core, quill, "getblock", h, verbosity)
                assert mine == theirs, (h, verbosity)
            mine, theirs = both(core, quill, "getblock", h)
            assert mine == theirs, h


def test_getblock_after_the_chain_grows_and_for_unknown_blocks(pair):
    core, chain, quill = pair
    hashes = [core.rpc("getblockhash", h) for h in (HEIGHT - 1, HEIGHT)]
    for h in hashes:
        both(core, quill, "getblock", h, 2)
    chain.extend(2)
    wait_for(lambda: quill.rpc("getbestblockhash") == core.rpc("getbestblockhash"), what="the follower")
    for h in hashes + [core.rpc("getbestblockhash")]:
        for verbosity in (1, 2, 3):
            mine, theirs = both(core, quill, "getblock", h, verbosity)
            assert mine == theirs, (h, verbosity)
            assert b'"confirmations":' in mine[1]
    mine, theirs = both(core, quill, "getblock", "00" * 32, 2)
    assert mine == theirs and b"Block not found" in mine[1]


def test_getblock_in_a_batch_is_the_nodes_answer(pair):
    """Inside a batch the node's text is read back and written with the other replies: same bytes."""
    core, chain, quill = pair
    tip = core.rpc("getbestblockhash")
    batch = json.dumps([{"jsonrpc": "1.0", "id": i, "method": "getblock", "params": [tip, v]}
                        for i, v in enumerate((0, 1, 2, 3))]
                       + [{"jsonrpc": "2.0", "id": 9, "method": "getblockcount", "params": []}]).encode()
    status, _, theirs = core.rpc_raw(batch)
    mine_status, mine, _ = quill.post(batch)
    assert (mine_status, mine) == (status, theirs)
    assert b'"fee":' in mine
