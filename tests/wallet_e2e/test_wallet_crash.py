"""kill -9 of quilld at random points while it connects blocks to a wallet and while it
reorganises; after the restart the wallet lists exactly what a fresh rescan of the same
descriptors lists (core-wallet.md §4.1: resume from the last processed block)."""
import random
import signal
import threading
import time

from quill.tx.hashes import sha256
from tests.kit.anyone import ANYONE_ADDRESS, ANYONE_SCRIPT
from tests.kit.rpc_daemon import QuillDaemon, RPCFailure
from tests.wallet_e2e.e2ekit import COIN, FEE, FOREIGN_ADDRESS, Coin, Keys, build_tx, multiset

# Fixed credentials: a killed daemon leaves its stale .cookie behind.
AUTH = ("-rpcuser=crash", "-rpcpassword=test")
ITERATIONS = 10   # tests/durability kills at every commit point; these add kills at random instants
CONNECT_BLOCKS = 60
REORG_OLD, REORG_NEW = 25, 35       # the wallet's branch is the longer one: it wins the reorg


class Crasher:
    def __init__(self, datadir):
        self.datadir = datadir
        self.keys = Keys(sha256(b"crash"))
        self.d = QuillDaemon(datadir, *AUTH).start()
        self.d.rpc("createwallet", "w", True, True, None, None, None, True)   # load_on_startup
        assert all(r["success"] for r in self.wrpc("importdescriptors", self.keys.import_requests()))
        self.address = self.wrpc("getnewaddress")
        hashes = self.d.rpc("generatetoaddress", 2 * ITERATIONS, ANYONE_ADDRESS)
        self.d.rpc("generatetoaddress", 100, FOREIGN_ADDRESS)
        self.faucet = [Coin(bytes.fromhex(self.d.rpc("getblock", h)["tx"][0])[::-1], 0, 50 * COIN, ANYONE_SCRIPT)
                       for h in hashes]
        self.fresh = 0

    def wrpc(self, method, *params, wallet="w"):
        return self.d.rpc(method, *params, path=f"/wallet/{wallet}")

    def pay_wallet(self):
        """A mempool payment to the wallet, so the blocks mined next carry a non-coinbase wallet tx."""
        coin = self.faucet.pop(0)
        script = bytes.fromhex(self.wrpc("getaddressinfo", self.wrpc("getnewaddress"))["scriptPubKey"])
        tx = build_tx([coin], [(script, COIN), (ANYONE_SCRIPT, coin.value - COIN - FEE)])
        self.d.rpc("sendrawtransaction", tx.hex())

    def prepare(self, mode):
        """-> (the call to interrupt, the call that completes it after a restart)."""
        self.pay_wallet()
        if mode == "connect":
            return ("generatetoaddress", CONNECT_BLOCKS, self.address), None
        old = self.d.rpc("generatetoaddress", REORG_NEW, self.address)
        self.d.rpc("invalidateblock", old[0])          # the wallet's coinbases are orphaned...
        self.d.rpc("generatetoaddress", REORG_OLD, FOREIGN_ADDRESS)
        return ("reconsiderblock", old[0]), ("reconsiderblock", old[0])   # ...until this reorg

    def run_and_kill(self, call, delay):
        """Start `call`, kill -9 after `delay` s; -> True when the kill landed during the call."""
        outcome = []

        def worker():
            try:
                self.d.rpc(*call)
                outcome.append("done")
            except (RPCFailure, OSError):                # the connection dies with the process
                outcome.append("killed")
        thread = threading.Thread(target=worker)
        thread.start()
        time.sleep(delay)
        self.d.proc.send_signal(signal.SIGKILL)
        self.d.proc.wait()
        thread.join()
        return outcome == ["killed"]

    def restart(self):
        self.d = QuillDaemon(self.datadir, *AUTH).start()

    def compare_with_fresh_rescan(self):
        self.fresh += 1
        name = f"fresh{self.fresh}"
        self.d.rpc("createwallet", name, True, True)
        assert all(r["success"] for r in self.wrpc("importdescriptors", self.keys.import_requests(), wallet=name))
        try:
            mine, fresh = self.wrpc("listsinceblock", ""), self.wrpc("listsinceblock", "", wallet=name)
            assert mine["lastblock"] == fresh["lastblock"] == self.d.rpc("getbestblockhash")
            assert multiset(mine["transactions"]) == multiset(fresh["transactions"])
            assert self.wrpc("getbalances") == self.wrpc("getbalances", wallet=name)
            return len(mine["transactions"])
        finally:
            self.d.rpc("unloadwallet", name)


def timed(crasher, call):
    t = time.monotonic()
    crasher.d.rpc(*call)
    return time.monotonic() - t


def test_kill_9_during_block_connection_and_reorg(tmp_path):
    rng = random.Random(20240607)
    c = Crasher(tmp_path)
    try:
        # How long each operation takes here: the kill points are drawn inside that window.
        duration = {mode: timed(c, c.prepare(mode)[0]) for mode in ("connect", "reorg")}
        landed = 0
        for i in range(ITERATIONS):
            mode = ("connect", "reorg")[i % 2]
            call, complete = c.prepare(mode)
            landed += c.run_and_kill(call, rng.uniform(0.05, 1.0) * duration[mode])
            c.restart()
            if complete:
                c.d.rpc(*complete)
            n = c.compare_with_fresh_rescan()
        assert n > ITERATIONS
        # Most kills must land inside the operation, or the test proves little.
        assert landed >= ITERATIONS // 2, (landed, duration)
    finally:
        c.d.stop()
