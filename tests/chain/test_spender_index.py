"""The spender index's life on the built-in chain (quill.chain.spender_index): built in the
background when the option is turned on for an existing chain, reported unsynced at its height while
it catches up, left alone by block connects until then, resumed where it stopped after a restart,
rewound over blocks a reorg made stale, and equal at the end to the spends of the active chain."""
from __future__ import annotations

import time
from pathlib import Path

from quill.chain import spender_index
from quill.chain.service import ChainService
from tests.chain.chain_testkit import OTHER_SCRIPT, spend
from tests.kit.anyone import ANYONE_SCRIPT
from tests.kit.stores import open_chain


def mine(chain: ChainService, blocks: int = 1) -> list[bytes]:
    return list(chain.generate(ANYONE_SCRIPT, blocks, 10**6))


def with_spends(chain: ChainService, blocks: int) -> None:
    """`blocks` blocks each confirming a spend of a mature coinbase and a spend of that spend."""
    for _ in range(blocks):
        height = chain.tip()[0]
        coinbase = chain.block(chain.block_hash(height - 100)).txs[0]
        first = spend(coinbase.txid(), 0, coinbase.vout[0].value, outputs=2)
        chain.send_transaction(first)
        chain.send_transaction(spend(first.txid(), 1, first.vout[1].value))
        mine(chain)


def expected_rows(chain: ChainService) -> set[tuple[bytes, int, bytes, bytes]]:
    """Every spend of the active chain as (spent txid, n, spending txid, block hash)."""
    rows = set()
    for height in range(chain.tip()[0] + 1):
        block_hash = chain.block_hash(height)
        for tx in chain.block(block_hash).txs[1:]:
            rows |= {(i.prevout.hash, i.prevout.n, tx.txid(), block_hash) for i in tx.vin}
    return rows


def index_rows(chain: ChainService) -> set[tuple[bytes, int, bytes, bytes]]:
    with chain.lock:
        return {(bytes(a), n, bytes(b), bytes(c)) for a, n, b, c in
                chain.state.store.db.execute("SELECT txid, n, spender, block FROM txospender")}


def wait_synced(chain: ChainService) -> None:
    deadline = time.monotonic() + 60
    while chain.spender_index_progress() != (True, chain.tip()[0]):
        assert time.monotonic() < deadline, chain.spender_index_progress()
        time.sleep(0.01)


def steps(chain: ChainService, n: int) -> bool:
    with chain.lock, chain.state.store.transaction():
        return spender_index.step(chain.state, n)


def test_an_index_turned_on_later_catches_up_reports_its_height_and_resumes(tmp_path: Path) -> None:
    d = str(tmp_path / "regtest")
    chain = ChainService("regtest", d).start()
    mine(chain, 101)
    with_spends(chain, 12)
    assert chain.spender_index_progress() is None
    tip = chain.tip()[0]
    # the sync, by hand: genesis, then one block per step
    chain.state.spender_index = chain.spender_index = True
    assert steps(chain, 50) is False
    assert chain.spender_index_progress() == (False, 49)
    # unsynced, it answers nothing (gettxspendingprevout: "txospenderindex is unavailable")
    assert chain.confirmed_spenders([chain.block(chain.block_hash(tip)).txs[1].vin[0].prevout], False) is None
    # a block connected meanwhile leaves the unsynced index alone (Core: BlockConnected before m_synced)
    with_spends(chain, 1)
    assert chain.spender_index_progress() == (False, 49)
    assert steps(chain, 10) is False and chain.spender_index_progress() == (False, 59)
    chain.close()
    # a restart resumes from height 59 in the background
    chain = ChainService("regtest", d, spender_index=True).start()
    try:
        wait_synced(chain)
        assert chain.spender_index_progress() == (True, tip + 1)
        assert index_rows(chain) == expected_rows(chain) and len(index_rows(chain)) == 26
        last = chain.block(chain.block_hash(tip)).txs[1]
        assert chain.confirmed_spenders([last.vin[0].prevout], True) == [(last, chain.block_hash(tip))]
        # synced: each connect and disconnect moves it in the same transaction
        with_spends(chain, 2)
        assert chain.spender_index_progress() == (True, tip + 3) and index_rows(chain) == expected_rows(chain)
        assert chain.invalidate(chain.block_hash(tip + 2))
        assert chain.spender_index_progress() == (True, tip + 1) and index_rows(chain) == expected_rows(chain)
    finally:
        chain.close()


def test_an_index_left_behind_on_a_stale_branch_rewinds_to_the_fork(tmp_path: Path) -> None:
    d = str(tmp_path / "regtest")
    chain = ChainService("regtest", d, spender_index=True).start()
    mine(chain, 101)
    with_spends(chain, 6)
    wait_synced(chain)
    stale = chain.tip()
    chain.close()
    # without the option, a reorg: the last three blocks are replaced by a longer branch
    chain = ChainService("regtest", d).start()
    assert chain.invalidate(chain.block_hash(stale[0] - 2))
    assert len(chain.mempool_txs()) >= 4        # their spends, confirmed again in another block
    chain.generate(OTHER_SCRIPT, 1, 10**6)
    mine(chain, 3)
    chain.close()
    chain = ChainService("regtest", d, spender_index=True).start()
    try:
        wait_synced(chain)
        rows = index_rows(chain)
        assert rows == expected_rows(chain)
        assert not any(block == stale[1] for *_, block in rows)
    finally:
        chain.close()


def test_kill_9_while_the_index_catches_up_then_restart(tmp_path: Path) -> None:
    """quilld -txospenderindex on a chain built without it, killed while the index catches up (just
    before its second batch commits): the restarted node resumes from the last batch it committed
    and ends equal to the chain's spends."""
    import subprocess
    import sys

    from tests.kit.rpc_daemon import QuillDaemon
    auth = ("-rpcuser=crash", "-rpcpassword=test", "-txospenderindex")
    chain = open_chain(tmp_path)
    mine(chain, 101)
    spends = 2 * spender_index.BATCH + 50 - 101
    with_spends(chain, spends)
    tip = chain.tip()[0]
    chain.close()
    killed = QuillDaemon(tmp_path, *auth, wait=False)
    died = subprocess.run([sys.executable, "-m", "tests.chain.index_killed_quilld", *killed.args],
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=120)
    assert died.returncode == -9
    again = QuillDaemon(tmp_path, *auth).start()
    try:
        deadline = time.monotonic() + 60
        while not again.rpc("getindexinfo", "txospenderindex")["txospenderindex"]["synced"]:
            assert time.monotonic() < deadline
            time.sleep(0.05)
        assert again.rpc("getindexinfo", "txospenderindex") == {
            "txospenderindex": {"synced": True, "best_block_height": tip}}
        first_batch_end = spender_index.BATCH - 1
        assert f"Syncing txospenderindex with block chain from height {first_batch_end}\n" in again.debug_log()
    finally:
        again.stop()
    chain = open_chain(tmp_path)
    try:
        assert index_rows(chain) == expected_rows(chain) and len(index_rows(chain)) == 2 * spends
    finally:
        chain.close()
