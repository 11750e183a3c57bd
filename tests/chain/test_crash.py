"""kill -9 while quilld connects blocks: the restarted node resumes on a consistent chain."""
import signal
import threading
import time

from tests.kit.anyone import ANYONE_ADDRESS
from tests.kit.rpc_daemon import QuillDaemon, RPCFailure
from tests.kit.stores import open_chain

# Fixed credentials: a killed daemon leaves its stale .cookie behind.
AUTH = ("-rpcuser=crash", "-rpcpassword=test")


def test_kill_9_during_block_connection_then_restart(tmp_path):
    d = QuillDaemon(tmp_path, *AUTH).start()
    errors = []

    def mine():
        try:
            d.rpc("generatetoaddress", 5000, ANYONE_ADDRESS)
        except (RPCFailure, OSError) as e:       # the connection dies with the process
            errors.append(e)

    miner = threading.Thread(target=mine)
    miner.start()
    deadline = time.monotonic() + 30
    seen = 0
    while seen < 150 and time.monotonic() < deadline:
        seen = d.rpc("getblockcount")
    d.proc.send_signal(signal.SIGKILL)
    d.proc.wait()
    miner.join()
    assert errors, "the kill landed after mining finished"
    assert 150 <= seen < 5000

    again = QuillDaemon(tmp_path, *AUTH).start()
    try:
        height = again.rpc("getblockcount")
        assert height >= seen
        # Every active block links to its parent and reports its height.
        tip = again.rpc("getblockheader", again.rpc("getbestblockhash"))
        assert tip["height"] == height and tip["confirmations"] == 1
        for h in (height, height - 1, 1):
            header = again.rpc("getblockheader", again.rpc("getblockhash", h))
            assert header["previousblockhash"] == again.rpc("getblockhash", h - 1)
        again.rpc("generatetoaddress", 1, ANYONE_ADDRESS)
        assert again.rpc("getblockcount") == height + 1
    finally:
        again.stop()
    # The index, the active chain and the UTXO set agree.
    service = open_chain(tmp_path)
    try:
        assert service.tip()[0] == height + 1
        assert service.check_consistency() == []
    finally:
        service.close()
