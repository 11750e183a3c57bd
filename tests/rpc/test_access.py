"""Who may call: cookie, -rpcuser/-rpcpassword, -rpcauth, -rpcallowip, and
the bounded work queue (core-rpc.md §5.1-5.2)."""
import json
import os
import socket
import stat
import threading
import time

import pytest

from quill.rpc import auth
from quill.tx.address import encode_segwit_address
from tests.kit.rpc_daemon import QuillDaemon
from tests.kit.vectors import load_json


def test_cookie_file_format_and_permissions(tmp_path):
    with QuillDaemon(tmp_path) as d:
        cookie = (d.chain_dir / ".cookie")
        text = cookie.read_text()
        user, password = text.split(":")
        assert user == "__cookie__" and len(password) == 64 and int(password, 16) >= 0
        assert not text.endswith("\n")
        assert stat.S_IMODE(os.stat(cookie).st_mode) == 0o600
        assert d.rpc("uptime") >= 0
    assert not cookie.exists(), "cookie must be removed on clean shutdown"


def test_rpcuser_rpcpassword_replace_the_cookie(tmp_path):
    with QuillDaemon(tmp_path, "-rpcuser=alice", "-rpcpassword=s3cret") as d:
        assert not (d.chain_dir / ".cookie").exists()
        assert d.rpc("echo", "ok") == ["ok"]
        d.password = "wrong"
        status, _, _ = d.post('{"id":1,"method":"uptime"}')
        assert status == 401


def test_rpcauth_vector_from_core():
    case = next(c for c in load_json("../reference/core-rpc-golden.json")["cases"] if c["id"] == "auth/rpcauth-hmac")
    cred = auth.Credential.from_rpcauth(case["config"].split("=", 1)[1])
    good = case["credentials"]
    assert cred.matches(good["user"], good["password"])
    for bad in case["failing_variants"]:
        assert not cred.matches(bad["user"], bad["password"])


def test_rpcauth_through_the_server(tmp_path):
    case = next(c for c in load_json("../reference/core-rpc-golden.json")["cases"] if c["id"] == "auth/rpcauth-hmac")
    with QuillDaemon(tmp_path, "-" + case["config"]) as d:
        assert d.rpc("uptime") >= 0  # the cookie still works beside -rpcauth
        d.user, d.password = case["credentials"]["user"], case["credentials"]["password"]
        assert d.rpc("echo", "rt") == ["rt"]
        for bad in case["failing_variants"]:
            d.user, d.password = bad["user"], bad["password"]
            assert d.post('{"id":1,"method":"uptime"}')[0] == bad["expected_status"]


def test_malformed_rpcauth_stops_startup(tmp_path):
    d = QuillDaemon(tmp_path, "-rpcauth=nodollar:abc", wait=False).start()
    assert d.proc.wait(20) == 1
    assert b"Invalid -rpcauth argument." in d.proc.stderr.read()


def test_allow_list_rules():
    allow = auth.AllowList(["10.1.0.0/16", "192.168.1.7", "172.16.0.0/255.255.0.0"])
    assert allow.allows("127.0.0.1") and allow.allows("127.8.9.10") and allow.allows("::1")
    assert allow.allows("10.1.200.3") and allow.allows("192.168.1.7") and allow.allows("172.16.5.5")
    assert allow.allows("::ffff:10.1.0.9")
    assert not allow.allows("10.2.0.1") and not allow.allows("192.168.1.8") and not allow.allows("8.8.8.8")
    with pytest.raises(auth.AuthConfigError, match="Invalid -rpcallowip subnet specification: nonsense"):
        auth.AllowList(["nonsense"])


def _non_loopback_ipv4():
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.connect(("192.0.2.1", 9))  # no packet is sent: this only picks the source address
            addr = s.getsockname()[0]
    except OSError:
        return None
    return None if addr.startswith("127.") else addr


def test_peer_outside_rpcallowip_gets_403(tmp_path):
    addr = _non_loopback_ipv4()
    if addr is None:
        pytest.skip("this machine has no non-loopback IPv4 address to connect from")
    with QuillDaemon(tmp_path, "-rpcbind=0.0.0.0", "-rpcallowip=203.0.113.0/24") as d:
        with socket.create_connection((addr, d.port), timeout=10) as s:
            s.sendall(b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}")
            reply = s.recv(4096)
        assert reply.startswith(b"HTTP/1.1 403")
        assert reply.split(b"\r\n\r\n", 1)[1] == b""
        assert d.rpc("uptime") >= 0  # loopback is always allowed


def test_full_work_queue_answers_503_then_recovers(tmp_path):
    with QuillDaemon(tmp_path, "-rpcthreads=1", "-rpcworkqueue=1") as d:
        # a batch of many small calls that run on the pool (a body of LARGE_BODY_LIMIT or
        # more would run on its own lane, leaving the pool free)
        address = encode_segwit_address("bcrt", 0, bytes(20))
        slow = json.dumps([{"id": i, "method": "generatetoaddress", "params": [1, address]} for i in range(3000)])
        assert len(slow) < 1 << 20
        results = {}

        def post(name, body):
            results[name] = d.post(body)

        busy = threading.Thread(target=post, args=("slow", slow))
        busy.start()
        time.sleep(0.5)          # the batch now occupies the only worker
        # a call that runs on a worker (echo, being cheap, would run at once on the event loop)
        queued = threading.Thread(target=post, args=("queued", '{"id":1,"method":"getblockcount","params":[]}'))
        queued.start()
        time.sleep(0.3)          # ...and this one waits in the queue of depth 1
        status, body, _ = d.post('{"id":2,"method":"uptime"}')
        busy.join(120)
        queued.join(120)
        assert (status, body) == (503, b"Work queue depth exceeded")
        assert results["slow"][0] == 200 and len(json.loads(results["slow"][1])) == 3000
        assert results["queued"][0] == 200
        assert d.rpc("uptime") >= 0
