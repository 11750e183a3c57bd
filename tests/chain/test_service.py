"""ChainService in process: block rules, mempool rules, reorgs, notifications, restart, migration."""
import sqlite3

import pytest

from quill.chain import miner, store
from quill.chain.params import COIN, COINBASE_MATURITY
from quill.chain.rules import Invalid
from quill.chain.service import ChainService
from quill.tx.transaction import OutPoint
from tests.chain.chain_testkit import OTHER_SCRIPT, Recorder, spend
from tests.kit.anyone import ANYONE_SCRIPT


def coinbase_txid(chain, height):
    return chain.block(chain.block_hash(height)).txs[0].txid()


def mature(chain, blocks=COINBASE_MATURITY + 1):
    return chain.generate(ANYONE_SCRIPT, blocks, 10**6)


# -- blocks ----------------------------------------------------------------------------------


def test_generated_blocks_follow_core_template(chain):
    hashes = mature(chain, 3)
    assert chain.tip() == (3, hashes[-1])
    block = chain.block(hashes[1])
    coinbase = block.txs[0]
    assert block.header.version == 0x20000000 and block.header.bits == 0x207FFFFF
    assert coinbase.vin[0].script_sig.hex() == "5200"          # <height 2> OP_0
    assert coinbase.locktime == 1 and coinbase.vin[0].sequence == 0xFFFFFFFE
    assert coinbase.vout[0].value == 50 * COIN and coinbase.vout[0].script_pubkey == ANYONE_SCRIPT
    assert coinbase.vout[1].script_pubkey.startswith(b"\x6a\x24\xaa\x21\xa9\xed")
    times = [chain.header_info(h).time for h in hashes]
    for h in hashes:       # each block is later than the median time past of its parent
        info = chain.header_info(h)
        assert info.time > chain.header_info(info.prev_hash).mediantime
    assert times == sorted(times)
    assert chain.check_consistency() == []


def _next_block(chain, txs=(), fees=0):
    block = miner.new_block(chain.state, ANYONE_SCRIPT, list(txs), fees, chain.clock())
    miner.grind(block, chain.params.pow_limit, 10**6)
    return block


def _regrind(chain, block, commit=True, fix_merkle=True):
    if commit:
        miner.add_witness_commitment(block)
    elif fix_merkle:
        block.header.merkle_root = miner.merkle.block_merkle_root(block.txs)[0]
    block.header.nonce = 0
    miner.grind(block, chain.params.pow_limit, 10**6)
    return block


@pytest.mark.parametrize("breakage,reason", [
    ("merkle", "bad-txnmrklroot"),
    ("pow", "high-hash"),
    ("bits", "bad-diffbits"),
    ("time", "time-too-old"),
    ("height", "bad-cb-height"),
    ("amount", "bad-cb-amount"),
    ("prev", "prev-blk-not-found"),
    ("version", "bad-version(0x00000001)"),
    ("witness", "bad-witness-merkle-match"),
    ("nocoinbase", "bad-cb-missing"),
    ("missing-input", "bad-txns-inputs-missingorspent"),
])
def test_bad_blocks_are_rejected_with_core_reasons_and_not_stored(chain, breakage, reason):
    mature(chain, 2)
    block = _next_block(chain)
    cb = block.txs[0]
    if breakage == "merkle":
        block.header.merkle_root = bytes(32)
        _regrind(chain, block, commit=False, fix_merkle=False)
    elif breakage == "pow":
        while block.hash()[-1] < 0x80:       # find a nonce whose hash is above the regtest target
            block.header.nonce += 1
    elif breakage == "bits":
        block.header.bits = 0x207FFFFE
        _regrind(chain, block, commit=False)
    elif breakage == "time":
        block.header.time = chain.header_info(chain.tip()[1]).mediantime
        _regrind(chain, block, commit=False)
    elif breakage == "height":
        cb.vin[0].script_sig = b"\x55\x00"
        _regrind(chain, block)
    elif breakage == "amount":
        cb.vout[0].value += 1
        _regrind(chain, block)
    elif breakage == "prev":
        block.header.prev_hash = bytes(32)
        _regrind(chain, block, commit=False)
    elif breakage == "version":
        block.header.version = 1
        _regrind(chain, block, commit=False)
    elif breakage == "witness":
        cb.vout[1].script_pubkey = cb.vout[1].script_pubkey[:6] + bytes(32)
        _regrind(chain, block, commit=False)
    elif breakage == "nocoinbase":
        block.txs = [spend(bytes(32), 5, 10**6)]
        _regrind(chain, block, commit=False)
    elif breakage == "missing-input":
        block.txs.append(spend(b"\x11" * 32, 0, 10**6))
        _regrind(chain, block)
    tip = chain.tip()
    assert chain.submit_block(block) == reason
    assert chain.tip() == tip
    assert chain.header_info(block.hash()) is None
    assert chain.check_consistency() == []


def test_submitblock_duplicate_inconclusive_and_first_seen(chain):
    mature(chain, 1)
    block = _next_block(chain)
    sibling = _next_block(chain)
    sibling.txs[0].vout[0].script_pubkey = OTHER_SCRIPT
    _regrind(chain, sibling)
    assert chain.submit_block(block) is None
    assert chain.submit_block(block) == "duplicate"
    # Equal work, seen later: stored, not activated.
    assert chain.submit_block(sibling) == "inconclusive"
    assert chain.tip() == (2, block.hash())
    info = chain.header_info(sibling.hash())
    assert (info.height, info.in_active_chain, info.confirmations) == (2, False, -1)
    assert chain.find_fork(sibling.hash()) == 1
    chain.invalidate(block.hash())
    assert chain.tip() == (2, sibling.hash())
    assert chain.submit_block(block) == "duplicate-invalid"
    # Reconsidered, the first-seen block wins the tie again.
    chain.reconsider(block.hash())
    assert chain.tip() == (2, block.hash())
    assert chain.check_consistency() == []


# -- mempool ---------------------------------------------------------------------------------


def test_double_spend_missing_inputs_and_already_in_pool(chain):
    mature(chain)
    cb = coinbase_txid(chain, 1)
    tx = spend(cb, 0, 50 * COIN)
    entry = chain.send_transaction(tx)
    assert entry.fee == 1000 and chain.mempool_txs() == [tx]
    with pytest.raises(Invalid) as e:
        chain.send_transaction(spend(cb, 0, 50 * COIN, fee=1005))   # 5 sat more: not its own relay fee
    assert str(e.value) == (f"insufficient fee, rejecting replacement {spend(cb, 0, 50 * COIN, fee=1005).txid_hex()}, "
                            "not enough additional fees to relay; 0.00000005 < 0.0000001")
    with pytest.raises(Invalid) as e:
        chain.send_transaction(tx)
    assert str(e.value) == "txn-already-in-mempool"
    with pytest.raises(Invalid) as e:
        chain.send_transaction(spend(b"\x22" * 32, 0, COIN))
    assert str(e.value) == "bad-txns-inputs-missingorspent" and e.value.missing_inputs


def test_coinbase_maturity(chain):
    mature(chain, COINBASE_MATURITY)               # tip at 100: coinbase 1 is at depth 100 next block
    with pytest.raises(Invalid) as e:
        chain.send_transaction(spend(coinbase_txid(chain, 2), 0, 50 * COIN))
    assert str(e.value) == "bad-txns-premature-spend-of-coinbase, tried to spend coinbase at depth 99"
    chain.send_transaction(spend(coinbase_txid(chain, 1), 0, 50 * COIN))
    # The same spend mined directly in a block is refused by the block rules too.
    block = _next_block(chain, [spend(coinbase_txid(chain, 2), 0, 50 * COIN)])
    assert chain.submit_block(block) == "bad-txns-premature-spend-of-coinbase"


@pytest.mark.parametrize("mutate,reason", [
    (lambda tx: setattr(tx.vout[0], "value", 100), "dust, tx with dust output must be 0-fee"),
    (lambda tx: setattr(tx, "version", 4), "version"),
    (lambda tx: setattr(tx.vout[0], "value", 51 * COIN), "bad-txns-in-belowout, value in (50.00) < value out (51.00)"),
    (lambda tx: setattr(tx.vout[0], "value", 50 * COIN), "min relay fee not met, 0 < 10"),  # 94 vB at 0.1 sat/vB
    (lambda tx: setattr(tx.vin[0], "witness", [b"\x00"]),
     "block-script-verify-flag-failed (Witness program hash mismatch)"),
    (lambda tx: setattr(tx, "locktime", 500), "non-final"),
])
def test_mempool_policy_and_script_rejections(chain, mutate, reason):
    mature(chain)
    tx = spend(coinbase_txid(chain, 1), 0, 50 * COIN, sequence=0xFFFFFFFE)
    mutate(tx)
    with pytest.raises(Invalid) as e:
        chain.send_transaction(tx)
    assert str(e.value) == reason
    assert chain.mempool_txs() == []


def test_block_removes_mined_and_conflicting_transactions_in_order(chain):
    mature(chain)
    rec = Recorder()
    chain.subscribe(rec)
    a = spend(coinbase_txid(chain, 1), 0, 50 * COIN)
    child = spend(a.txid(), 0, a.vout[0].value)
    chain.send_transaction(a)
    chain.send_transaction(child)
    assert rec.take() == [("added", a.txid()), ("added", child.txid())]
    # A block spending the same coin differently evicts a and its child as conflicts.
    rival = spend(coinbase_txid(chain, 1), 0, 50 * COIN, fee=5000, script=OTHER_SCRIPT)
    block = chain.generate_block(ANYONE_SCRIPT, [rival])
    assert rec.take() == [("removed", child.txid(), "conflict"), ("removed", a.txid(), "conflict"),
                          ("connected", 102, block.hash())]
    assert chain.mempool_txs() == []
    assert chain.get_transaction(rival.txid()) == (rival, block.hash())


def test_reorg_returns_transactions_to_the_pool_and_notifies_in_order(chain):
    mature(chain)
    rec = Recorder()
    chain.subscribe(rec)
    tx = spend(coinbase_txid(chain, 1), 0, 50 * COIN)
    chain.send_transaction(tx)
    [mined] = chain.generate(ANYONE_SCRIPT, 1, 10**6)
    assert rec.take() == [("added", tx.txid()), ("removed", tx.txid(), "block"), ("connected", 102, mined)]
    assert chain.get_transaction(tx.txid()) == (tx, mined)

    chain.invalidate(mined)
    assert rec.take() == [("disconnected", 102, mined), ("added", tx.txid())]
    assert chain.tip()[0] == 101 and chain.mempool_txs() == [tx]
    info = chain.header_info(mined)
    assert (info.in_active_chain, info.confirmations, info.failed) == (False, -1, True)

    # An alternative branch, two blocks long, without the transaction.
    alt = [chain.generate_block(ANYONE_SCRIPT, []).hash() for _ in range(2)]
    assert rec.take() == [("connected", 102, alt[0]), ("connected", 103, alt[1])]
    chain.reconsider(mined)
    assert chain.tip() == (103, alt[1]) and rec.take() == []      # less work: no reorg back

    # The old branch grows longer than the new one: reorg back, the tx is mined again.
    chain.invalidate(alt[0])
    rec.take()
    assert chain.tip() == (102, mined)
    assert chain.mempool_txs() == []
    assert chain.find_fork(alt[1]) == 101
    assert chain.check_consistency() == []


def test_disconnecting_a_block_forgets_outputs_created_and_spent_in_it(chain):
    """Core's DisconnectBlock undoes a block's transactions last to first: an output that a later
    transaction of the same block spent is not put back in the UTXO set (it once was, and quilld
    then took a double spend of it into its mempool after a reorg)."""
    mature(chain)
    parent = spend(coinbase_txid(chain, 1), 0, 50 * COIN, outputs=2)
    child = spend(parent.txid(), 1, parent.vout[1].value)
    chain.send_transaction(parent)
    chain.send_transaction(child)
    [mined] = chain.generate(ANYONE_SCRIPT, 1, 10**6)
    assert chain.coin(OutPoint(parent.txid(), 1)) is None
    chain.invalidate(mined)
    assert chain.mempool_txs() == [parent, child]
    for n in (0, 1):
        assert chain.coin(OutPoint(parent.txid(), n)) is None          # created by a pool transaction
    assert chain.coin(OutPoint(coinbase_txid(chain, 1), 0)) is not None
    # the same two mined again on a new branch: a spend of the spent output is refused
    chain.generate(OTHER_SCRIPT, 2, 10**6)
    with pytest.raises(Invalid, match="bad-txns-inputs-missingorspent"):
        chain.send_transaction(spend(parent.txid(), 1, parent.vout[1].value, fee=5000))
    assert chain.check_consistency() == []


def test_reorg_drops_spends_of_disconnected_coinbases(chain):
    hashes = mature(chain)
    rec = Recorder()
    chain.subscribe(rec)
    tx = spend(coinbase_txid(chain, 1), 0, 50 * COIN)
    chain.send_transaction(tx)
    # Disconnecting block 1 removes the coinbase the pool transaction spends.
    chain.invalidate(hashes[0])
    assert chain.tip()[0] == 0 and chain.mempool_txs() == []
    assert ("removed", tx.txid(), "reorg") in rec.take()
    chain.reconsider(hashes[0])
    assert chain.tip() == (101, hashes[-1])
    assert chain.check_consistency() == []


def test_restart_resumes_chain_and_mempool(tmp_path):
    d = str(tmp_path / "regtest")
    first = ChainService("regtest", d).start()
    mature(first)
    tx = spend(coinbase_txid(first, 1), 0, 50 * COIN)
    first.send_transaction(tx)
    tip = first.tip()
    first.close()
    again = ChainService("regtest", d).start()
    try:
        assert again.tip() == tip
        assert again.mempool_txs() == [tx]
        assert again.check_consistency() == []
    finally:
        again.close()


def test_replacement_events_store_and_refusals_leave_nothing(tmp_path):
    d = str(tmp_path / "regtest")
    chain = ChainService("regtest", d).start()
    mature(chain)
    cb = coinbase_txid(chain, 1)
    parent = spend(cb, 0, 50 * COIN, outputs=2)
    child = spend(parent.txid(), 0, 25 * COIN - 500, fee=5000)
    for tx in (parent, child):
        chain.send_transaction(tx)
    rec = Recorder()
    chain.subscribe(rec)
    sequence = chain.mempool().sequence
    rows = chain.store.mempool_rows()
    # Refused (rule 3: less than the 6000 sat of parent and child): no event, pool and store unchanged.
    with pytest.raises(Invalid, match="less fees than conflicting txs; 0.00005 < 0.00006"):
        chain.send_transaction(spend(cb, 0, 50 * COIN, fee=5000, script=OTHER_SCRIPT))
    with pytest.raises(Invalid, match="less fees"):
        chain.test_accept(spend(cb, 0, 50 * COIN, fee=5000, script=OTHER_SCRIPT))
    assert rec.take() == [] and chain.mempool().sequence == sequence and chain.store.mempool_rows() == rows
    assert chain.mempool_txs() == [parent, child]
    # testmempoolaccept of a good replacement keeps nothing either.
    replacement = spend(cb, 0, 50 * COIN, fee=9000, script=OTHER_SCRIPT)
    assert chain.test_accept(replacement).fee == 9000
    assert rec.take() == [] and chain.mempool_txs() == [parent, child]
    # Accepted: the child, then the parent leave with reason "replaced", then the replacement enters.
    chain.send_transaction(replacement)
    assert rec.take() == [("removed", child.txid(), "replaced"), ("removed", parent.txid(), "replaced"),
                          ("added", replacement.txid())]
    assert chain.mempool_txs() == [replacement] and chain.mempool().sequence == sequence + 3
    chain.close()
    again = ChainService("regtest", d).start()
    try:
        assert again.mempool_txs() == [replacement]
    finally:
        again.close()


def test_schema_migration_from_version_1(tmp_path):
    path = tmp_path / store.FILENAME
    db = sqlite3.connect(path)
    db.executescript(store.MIGRATIONS[0])
    db.execute("CREATE TABLE schema_version(version INTEGER NOT NULL)")
    db.execute("INSERT INTO schema_version VALUES (1)")
    db.commit()
    db.close()
    s = store.ChainStore(str(tmp_path))
    try:
        assert s.schema_version() == store.SCHEMA_VERSION == 4
        assert s.mempool_rows() == []
        assert s.spender(bytes(32), 0) is None     # the spender index's table (3)
        assert s.block_txids(bytes(32)) is None    # the blocks' txids (4)
    finally:
        s.close()


def test_newer_schema_is_refused(tmp_path):
    s = store.ChainStore(str(tmp_path))
    s.db.execute("UPDATE schema_version SET version = 99")
    s.close()
    with pytest.raises(store.StoreError, match="newer"):
        store.ChainStore(str(tmp_path))


def test_utxo_lookup_for_wallet_fees(chain):
    mature(chain)
    coin = chain.coin(OutPoint(coinbase_txid(chain, 1), 0))
    assert (coin.value, coin.script_pubkey, coin.height, coin.coinbase) == (50 * COIN, ANYONE_SCRIPT, 1, True)
    assert chain.coin(OutPoint(coinbase_txid(chain, 1), 1)) is None       # OP_RETURN commitment: never a coin


def test_restart_activates_a_stored_chain_with_more_work(tmp_path):
    """A crash between storing a better branch and connecting it: the next start
    moves to the most-work chain, as Core's ActivateBestChain at start-up."""
    rival_maker = ChainService("regtest", str(tmp_path / "rival")).start()
    rival_hashes = rival_maker.generate(OTHER_SCRIPT, 2, 10**6)
    rival_blocks = [rival_maker.block(h) for h in rival_hashes]
    rival_maker.close()

    d = str(tmp_path / "regtest")
    chain = ChainService("regtest", d).start()
    [ours] = chain.generate(ANYONE_SCRIPT, 1, 10**6)
    for block in rival_blocks:  # stored, not connected: the state a crash mid-reorg leaves
        chain.state.process_block(block, follow=True)
    assert chain.tip() == (1, ours)
    chain.close()

    again = ChainService("regtest", d).start()
    try:
        assert again.tip() == (2, rival_hashes[1])
        assert again.header_info(ours).confirmations == -1
        assert again.check_consistency() == []
    finally:
        again.close()


def test_generate_remaking_an_invalidated_block_is_not_accepted(tmp_path):
    """With the clock standing still, the block mined after invalidateblock is the very block it
    dropped: Core's ProcessNewBlock refuses it (duplicate-invalid, generate's "ProcessNewBlock,
    block not accepted"), nothing changes; a different block is mined as usual."""
    chain = ChainService("regtest", str(tmp_path / "regtest"), clock=lambda: 1_700_000_000).start()
    try:
        mature(chain, 3)
        tip_height, tip = chain.tip()
        assert chain.invalidate(tip)
        with pytest.raises(Invalid, match="duplicate-invalid"):
            chain.generate(ANYONE_SCRIPT, 1, 10**6)
        assert chain.tip()[0] == tip_height - 1 and chain.check_consistency() == []
        (other,) = chain.generate(OTHER_SCRIPT, 1, 10**6)
        assert chain.tip() == (tip_height, other)
    finally:
        chain.close()
