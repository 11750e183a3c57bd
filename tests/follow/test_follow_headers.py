"""kill -9 in the middle of the headers-first sync (4,100 headers: batches of 2,000, held before the second):
the restart keeps the headers stored so far, finishes, and a wallet born late in the chain then
answers exactly as Core's watch-only wallet with the same descriptors."""
from __future__ import annotations

import signal

from quill.tx.hashes import sha256
from tests.follow.corekit import Reference, SourceGate, SubmittedChain, answers_of, wait_for
from tests.kit.bitcoind import BitcoinD
from tests.kit.rpc_daemon import QuillDaemon
from tests.kit.stores import chain_rows
from tests.wallet_e2e.e2ekit import Keys

HEIGHT = 4100


def test_kill_during_the_header_sync_resumes(tmp_path):
    core = BitcoinD(tmp_path / "core").start()
    gate = SourceGate(core)
    q = None
    try:
        chain = SubmittedChain(core, Keys(sha256(b"headers")), wallet_every=10)
        chain.build(HEIGHT)
        descriptors = chain.keys.import_requests(chain.time_of(3000))
        ref = Reference(chain, descriptors)
        gate.hold_after(2000, method="getblockheader")      # the second batch of headers waits
        q = QuillDaemon(tmp_path / "quill", f"-chainsource={gate.url}", "-chainpollinterval=100").start()
        wait_for(gate.holding, what="the second batch of headers")
        stored = chain_rows(q, "SELECT COUNT(*) FROM blocks")[0][0]
        assert stored == 2000                                  # heights 0-1999: the first batch whole, no more
        q.proc.send_signal(signal.SIGKILL)
        q.proc.wait()
        gate.release()
        q.start()
        best = core.rpc("getbestblockhash")
        wait_for(lambda: q.rpc("getbestblockhash") == best, what="the follower after the restart")
        info = q.rpc("getblockchaininfo")
        assert info["blocks"] == info["headers"] == HEIGHT
        assert "Headers: height=" in q.debug_log()
        assert q.rpc("createwallet", "w", True, True) == {"name": "w"}
        call = lambda method, *params: q.rpc(method, *params, path="/wallet/w")  # noqa: E731
        assert all(r["success"] for r in call("importdescriptors", descriptors))
        theirs = ref.answers()
        assert len(theirs[3]) > 50
        assert answers_of(call) == theirs
    finally:
        if q is not None:
            q.stop()
        gate.close()
        core.stop()
