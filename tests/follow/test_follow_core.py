"""quilld following the real Bitcoin Core (-chainsource), trusting it: headers first, blocks fetched only
for the wallets, a wallet born mid-chain scanned with block filters (scanblocks) and without, every
answer equal to a watch-only Core wallet holding the same descriptors; kill -9 during a sync and
during a rescan resumes to the same answers; the mempool is polled (mempool_sequence).

The chain (corekit.CoreChain) is built once: 250 blocks, two transactions or more in each block after
110, mixed address types, block times 10 minutes apart; the wallet is born at height 180.
The 20,000-block run of the same assertions is tests/bench/bench_follow.py.
"""
from __future__ import annotations

import signal
import threading
import time

import pytest

from tests.follow.corekit import CoreChain, Reference, SourceGate, answers_of, strip, wait_for
from tests.kit.bitcoind import BitcoinD
from tests.kit.rpc_daemon import QuillDaemon, RPCFailure
from tests.kit.stores import chain_rows, wallet_meta

HEIGHT = 250
BIRTH = 180


def quill_call(daemon: QuillDaemon, wallet: str = "w"):
    return lambda method, *params: daemon.rpc(method, *params, path=f"/wallet/{wallet}")


@pytest.fixture(scope="module")
def net(tmp_path_factory):
    core = BitcoinD(tmp_path_factory.mktemp("core"), "-blockfilterindex=1", "-rest=1").start()
    chain = CoreChain(core)
    started = time.monotonic()
    chain.build(HEIGHT)
    birthday = chain.time_of(BIRTH)
    descriptors = chain.watched_descriptors(birthday)
    ref = Reference(chain, descriptors)
    wait_for(lambda: core.rpc("getindexinfo")["basic block filter index"]["synced"], what="Core's filter index")
    print(f"chain of {HEIGHT} blocks built in {time.monotonic() - started:.1f} s")
    try:
        yield chain, descriptors, ref, tmp_path_factory
    finally:
        core.stop()


def follow(tmp_path_factory, url: str, name: str) -> QuillDaemon:
    return QuillDaemon(tmp_path_factory.mktemp(name), f"-chainsource={url}", "-chainpollinterval=100").start()


def synced_to(daemon: QuillDaemon, chain: CoreChain):
    best = chain.node.call("getbestblockhash")
    return lambda: daemon.rpc("getbestblockhash") == best


def create_wallet(daemon: QuillDaemon) -> None:
    """The watch-only wallet "w", loaded at start-up (the kill tests restart quilld). Its empty
    passphrase means no encryption, and Core's createwallet warns so."""
    assert daemon.rpc("createwallet", "w", True, True, "", False, True, True) == {
        "name": "w", "warnings": ["Empty string given as passphrase, wallet will not be encrypted."]}


def scan_and_compare(daemon: QuillDaemon, chain: CoreChain, descriptors, ref: Reference) -> float:
    wait_for(synced_to(daemon, chain), what="the follower")
    info = daemon.rpc("getblockchaininfo")
    assert info["blocks"] == info["headers"] == chain.height
    assert info["verificationprogress"] == 1
    create_wallet(daemon)
    started = time.monotonic()
    result = quill_call(daemon)("importdescriptors", descriptors)
    took = time.monotonic() - started
    assert all(r["success"] for r in result), result
    mine, theirs = answers_of(quill_call(daemon)), ref.answers()
    only_mine, only_core = mine[0] - theirs[0], theirs[0] - mine[0]
    assert not only_mine and not only_core, (sorted(only_mine)[:3], sorted(only_core)[:3], len(only_mine),
                                              len(only_core))
    assert mine[1:] == theirs[1:]        # removed, lastblock, every gettransaction
    assert len(theirs[3]) > 50           # the scenario really has wallet transactions
    return took


def test_follows_core_and_scans_a_birthday_with_filters(net):
    chain, descriptors, ref, tmp = net
    q = follow(tmp, chain.core.url_for_follower, "filters")
    try:
        scan_and_compare(q, chain, descriptors, ref)
        log = q.debug_log()
        assert "block filters available" in log
        # headers and no raw block were stored: the follower's file holds only headers
        assert chain_rows(q, "SELECT COUNT(*), SUM(LENGTH(raw)) FROM blocks") == [(HEIGHT + 1, 0)]
        assert chain_rows(q, "SELECT COUNT(*) FROM utxo") == [(0,)]
        # fewer blocks than the birthday range were fetched: the log line of the rescan says how many
        assert "Rescan of w" in log
    finally:
        q.stop()


def test_quill_matches_the_filters_itself_where_the_node_has_no_scanblocks(net):
    """A node with filters but without scanblocks (Core before v25): Quill fetches the filters
    (getblockfilter) and matches them itself (quill.chain.blockfilter.FilterQuery)."""
    chain, descriptors, ref, tmp = net
    gate = SourceGate(chain.core)
    gate.refused.add("scanblocks")
    q = follow(tmp, gate.url, "ownfilters")
    try:
        scan_and_compare(q, chain, descriptors, ref)
        assert "matching its filters here" in q.debug_log()
        assert gate.served["getblockfilter"] >= HEIGHT - BIRTH
        assert 0 < gate.served["getblock"] < HEIGHT - 100   # blocks before the birthday are not read
    finally:
        q.stop()
        gate.close()


def test_scans_without_filters_and_a_kill_during_the_rescan_resumes(net):
    chain, descriptors, ref, tmp = net
    core = chain.core
    core.stop()
    core.args = [a for a in core.args if a != "-blockfilterindex=1"]
    core.start()
    for name in ("miner", "hot", "w"):
        core.rpc("loadwallet", name)
    gate = SourceGate(core)
    q = follow(tmp, gate.url, "nofilters")
    try:
        wait_for(synced_to(q, chain), what="the follower")
        create_wallet(q)
        gate.hold_after(20)
        failed: list[Exception] = []
        importer = threading.Thread(target=lambda: _import_expecting_a_kill(q, descriptors, failed))
        importer.start()
        wait_for(gate.holding, what="the rescan to reach the gate")
        next_height = wallet_meta(q, "w", "rescan_next")
        assert BIRTH - 20 < next_height < HEIGHT
        q.proc.send_signal(signal.SIGKILL)
        q.proc.wait()
        gate.release()
        importer.join()
        q.start()
        wait_for(synced_to(q, chain), what="the follower after the restart")
        assert "resuming the rescan interrupted at height" in q.debug_log()
        assert "no block filter index" in q.debug_log()
        mine, theirs = answers_of(quill_call(q)), ref.answers()
        assert mine == theirs
        # a running rescanblockchain holds no lock: getwalletinfo shows its progress as Core's does
        # (duration, progress), and abortrescan stops it, the rescan answering as Core's
        gate.hold_after(10)
        outcome: list[Exception] = []
        rescanner = threading.Thread(target=lambda: _rescan(q, outcome))
        rescanner.start()
        wait_for(gate.holding, what="the rescan to reach the gate")
        wait_for(lambda: quill_call(q)("getwalletinfo")["scanning"]["progress"] > 0, what="the rescan's progress")
        scanning = quill_call(q)("getwalletinfo")["scanning"]
        assert list(scanning) == ["duration", "progress"]
        assert isinstance(scanning["duration"], int) and scanning["duration"] >= 0
        assert 0 < scanning["progress"] < 0.5          # held after 10 of the ~250 blocks
        with pytest.raises(RPCFailure) as busy:
            quill_call(q)("rescanblockchain", 0)
        assert (busy.value.code, busy.value.message) == (
            -4, "Wallet is currently rescanning. Abort existing rescan or wait.")
        assert quill_call(q)("abortrescan") is True
        assert quill_call(q)("abortrescan") is False       # already stopping
        gate.release()
        rescanner.join()
        assert [(e.code, e.message) for e in outcome] == [(-1, "Rescan aborted by user.")]
        assert quill_call(q)("abortrescan") is False
        assert quill_call(q)("getwalletinfo")["scanning"] is False
        assert answers_of(quill_call(q)) == theirs
    finally:
        q.stop()
        gate.close()


def _rescan(q: QuillDaemon, outcome: list[Exception]) -> None:
    try:
        quill_call(q)("rescanblockchain", 0)
    except RPCFailure as e:
        outcome.append(e)


def _import_expecting_a_kill(q: QuillDaemon, descriptors, failed: list[Exception]) -> None:
    try:
        quill_call(q)("importdescriptors", descriptors)
    except Exception as e:      # the daemon dies under the call
        failed.append(e)


def test_kill_during_sync_resumes_and_the_mempool_is_polled(net):
    chain, descriptors, ref, tmp = net
    gate = SourceGate(chain.core)
    q = follow(tmp, gate.url, "sync")
    try:
        wait_for(synced_to(q, chain), what="the follower")
        create_wallet(q)
        assert all(r["success"] for r in quill_call(q)("importdescriptors", descriptors))
        # the chain grows while quilld is held at the gate after 5 of the new blocks, then killed
        gate.hold_after(5)
        chain.extend(30)
        wait_for(gate.holding, what="the follower to fetch new blocks")
        reached = wallet_meta(q, "w", "tip_height")
        assert HEIGHT < reached < chain.height          # killed in the middle of the new blocks
        info = q.rpc("getblockchaininfo")                 # progress while the blocks are on their way
        assert HEIGHT <= info["blocks"] < info["headers"] <= chain.height
        assert 0 < info["verificationprogress"] < 1
        assert "Headers: height=" in q.debug_log()
        q.proc.send_signal(signal.SIGKILL)
        q.proc.wait()
        gate.release()
        q.start()
        wait_for(synced_to(q, chain), what="the follower after the restart")
        assert answers_of(quill_call(q)) == ref.answers()
        # the mempool: a payment to the wallet is seen by polling, then its replacement with the conflict
        hot = chain.hot
        paid = hot.call("sendtoaddress", hot.call("getnewaddress", "", "bech32"), 0.3, "", "", False, True)
        wait_for(lambda: q.rpc("getrawmempool") == chain.node.call("getrawmempool"), what="the mempool")
        assert quill_call(q)("gettransaction", paid)["confirmations"] == 0
        bumped = hot.call("bumpfee", paid)["txid"]
        wait_for(lambda: bumped in q.rpc("getrawmempool"), what="the replacement")
        wait_for(lambda: paid not in q.rpc("getrawmempool"), what="the replaced tx to leave")
        chain.node.call("syncwithvalidationinterfacequeue")           # Core's wallet is notified asynchronously
        for txid in (paid, bumped):
            assert strip(quill_call(q)("gettransaction", txid)) == strip(ref.call("gettransaction", txid))
        assert quill_call(q)("gettransaction", bumped)["walletconflicts"] == [paid]
        chain.node.call("generatetoaddress", 1, "bcrt1qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqq3xueyj")
        wait_for(synced_to(q, chain), what="the follower")
        assert answers_of(quill_call(q)) == ref.answers()
    finally:
        q.stop()
        gate.close()
