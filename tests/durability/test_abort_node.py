"""Core's AbortNode: a wallet that cannot record a block it was given has fallen behind the chain;
quilld writes nothing above that hole, shuts down cleanly with the reason in debug.log and exits
with failure, and the next start resumes the wallet from its last recorded block."""
import subprocess
import sys

from quill.atomic_store import DISK_SPACE_TOO_LOW
from quill.tx.hashes import sha256
from tests.kit.rpc_daemon import QuillDaemon
from tests.wallet_e2e.e2ekit import Keys, multiset

AUTH = ("-rpcuser=abort", "-rpcpassword=node")
REPO_ROOT = __file__.rsplit("/tests/", 1)[0]


class FaultyDaemon(QuillDaemon):
    """quilld run through tests.durability.faulty_quilld."""

    def start(self):
        self.proc = subprocess.Popen([sys.executable, "-m", "tests.durability.faulty_quilld", *self.args],
                                     cwd=REPO_ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        self.wait_ready()
        return self


def test_a_wallet_that_misses_a_block_stops_the_node(tmp_path):
    keys = Keys(sha256(b"abort"))
    d = FaultyDaemon(tmp_path, *AUTH).start()
    d.rpc("createwallet", "w", True, True, None, None, None, True)
    assert all(r["success"] for r in d.rpc("importdescriptors", keys.import_requests(), path="/wallet/w"))
    address = d.rpc("getnewaddress", path="/wallet/w")
    d.rpc("generatetoaddress", 3, address)

    (tmp_path / "fail-next-wallet-commit").touch()
    mined = d.rpc("generatetoaddress", 1, address)      # the chain has it: acknowledged
    assert d.proc.wait(30) == 1
    log = d.debug_log()
    assert f"{DISK_SPACE_TOO_LOW} Wallet 'w' could not record a chain event: shutting down" in log
    assert "Shutdown: done" in log and "Traceback" not in log

    again = QuillDaemon(tmp_path, *AUTH).start()
    try:
        assert again.rpc("getbestblockhash") == mined[0]
        assert again.rpc("getwalletinfo", path="/wallet/w")["walletname"] == "w"
        mine = again.rpc("listsinceblock", "", path="/wallet/w")
        assert mine["lastblock"] == mined[0]
        again.rpc("createwallet", "fresh", True, True)
        assert all(r["success"] for r in again.rpc("importdescriptors", keys.import_requests(), path="/wallet/fresh"))
        fresh = again.rpc("listsinceblock", "", path="/wallet/fresh")
        assert len(mine["transactions"]) == 4
        assert multiset(mine["transactions"]) == multiset(fresh["transactions"])
    finally:
        again.stop()
