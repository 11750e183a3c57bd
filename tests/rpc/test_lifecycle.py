"""Start-up errors, shutdown by signal or `stop`, and the logging rule."""
import json
import signal
import subprocess
import threading
import time

import pytest

from tests.kit.rpc_daemon import VENV_BIN, QuillDaemon


@pytest.mark.parametrize("args,message", [
    (["-frobnicate"], "Error: Error parsing command line arguments: Invalid parameter -frobnicate"),
    (["-regtest", "-signet"],
     "Error: Invalid combination of -regtest, -signet, -testnet, -testnet4 and -chain. Can use at most one."),
    (["stray"], "Error: Command line contains unexpected token 'stray'"),
    # Core's words, on every chain but regtest (checked with the real bitcoind 31.99)
    (["-acceptstalefeeestimates"], "Error: acceptstalefeeestimates is not supported on main chain."),
    (["-signet", "-acceptstalefeeestimates=1"], "Error: acceptstalefeeestimates is not supported on signet chain."),
])
def test_bad_options_exit_1_with_a_clear_error(tmp_path, args, message):
    proc = subprocess.run([str(VENV_BIN / "quilld"), f"-datadir={tmp_path}", *args],
                          capture_output=True, text=True, timeout=30)
    assert proc.returncode == 1
    assert message in proc.stderr
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_signal_finishes_in_flight_requests_and_exits_0(tmp_path, sig):
    d = QuillDaemon(tmp_path).start()
    batch = json.dumps([{"id": i, "method": "echo", "params": [i]} for i in range(60000)])
    result = {}
    t = threading.Thread(target=lambda: result.setdefault("reply", d.post(batch)))
    t.start()
    time.sleep(0.4)
    d.proc.send_signal(sig)
    t.join(60)
    assert d.proc.wait(30) == 0
    status, body, _ = result["reply"]
    assert status == 200 and len(json.loads(body)) == 60000
    assert not (d.chain_dir / ".cookie").exists()
    assert "Shutdown: done" in d.debug_log()


def test_stop_rpc(tmp_path):
    d = QuillDaemon(tmp_path).start()
    assert d.rpc("stop") == "Quill stopping"
    assert d.proc.wait(30) == 0
    assert not (d.chain_dir / ".cookie").exists()


def test_no_password_or_key_in_debug_log(tmp_path):
    password = "Pa55-word-that-must-not-leak"
    wif = "cVt4o7BGAig1UXywgGSmARhxMdzP5qvQsxKkSsc1XEkw3tDTQFpy"  # a recognisable regtest key
    with QuillDaemon(tmp_path, "-rpcuser=u", f"-rpcpassword={password}", "-debug=all",
                     "-deprecatedrpc=addresses") as d:
        d.rpc("echo", wif, {"privkeys": [wif]})
        d.post(json.dumps({"id": 1, "method": "nosuch", "params": [wif]}))
        d.post(json.dumps({"id": 1, "method": "help", "params": [wif, wif]}))
        d.post(json.dumps({"id": 1, "method": wif}))
        good = d.password
        d.password = password + "x"
        d.post('{"id":1,"method":"uptime"}')
        d.password = good
        log = d.debug_log()
    assert "method=echo" in log  # debug logging was on and saw the calls
    assert password not in log and wif not in log
