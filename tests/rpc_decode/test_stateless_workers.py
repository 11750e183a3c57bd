"""-rpcworkers processes (quill.rpc.stateless, issue 28 item 4): they serve the daemon's listening
sockets beside it and answer, byte for byte as the daemon alone, stateless calls themselves and
every other request through the main process (answers, errors in Core's form, batches,
notifications, bodies of every size, wrong credentials); a killed worker is replaced, and none is
left after the daemon stops. Each test checks which process holds the connection it uses."""
import base64
import http.client
import json
import os
import signal
import threading
import time

import pytest

from quill.daemon.stateless_worker import WorkerNode
from quill.handlers.psbt import createpsbt
from quill.rpc.jsonrpc import CallContext
from quill.rpc.registry import INLINE, Method
from quill.rpc.stateless import ConnectionCounts
from quill.tx.transaction import OutPoint, Transaction, TxIn, TxOut
from tests.rpc_decode.rpc_harness import PASSWORD, USER, InProcessServer


def _tx_hex(n_in: int) -> str:
    sig = bytes.fromhex("30440220" + "5a" * 32 + "0220" + "3c" * 32 + "01")
    vin = [TxIn(OutPoint(i.to_bytes(4, "little") * 8, i % 3), b"", 0xFFFFFFFD,
                [sig, b"\x02" + i.to_bytes(4, "big") * 8]) for i in range(n_in)]
    vout = [TxOut(10_000, b"\x00\x14" + bytes(20)), TxOut(5_000, b"\x51\x20" + bytes(range(32)))]
    return Transaction(2, vin, vout, 0).serialize().hex()


SMALL = _tx_hex(1)
MEDIUM = _tx_hex(120)   # a body above the loop's inline limit (16 KiB): parsed by the worker
CREATE = [[{"txid": "11" * 32, "vout": 0}, {"txid": "22" * 32, "vout": 1}],
          [{"bc1qqqqsyqcyq5rqwzqfpg9scrgwpugpzysn4v0345": "0.1"}, {"data": "00ff"}]]
PSBT = createpsbt(CallContext(node=WorkerNode("main", [])), [*CREATE, None, None, None, None])

BODIES = {
    "decode": {"jsonrpc": "1.0", "id": 1, "method": "decoderawtransaction", "params": [SMALL]},
    "decode, medium body": {"jsonrpc": "1.0", "id": "m", "method": "decoderawtransaction", "params": [MEDIUM]},
    "decode, named": {"jsonrpc": "2.0", "id": 7, "method": "decoderawtransaction",
                      "params": {"hexstring": SMALL, "iswitness": True}},
    "decode, bad hex": {"id": 2, "method": "decoderawtransaction", "params": ["zz"]},
    "decode, wrong type": {"id": 3, "method": "decoderawtransaction", "params": [1, "x"]},
    "decode, too many": {"id": 4, "method": "decoderawtransaction", "params": [SMALL, True, 3]},
    "decode, no id 1.0": {"method": "decoderawtransaction", "params": [SMALL]},
    "decode, notification": {"jsonrpc": "2.0", "method": "decoderawtransaction", "params": [SMALL]},
    "decodescript": {"id": 5, "method": "decodescript", "params": ["5121" + "02" * 33 + "51ae"]},
    "createpsbt": {"id": 10, "method": "createpsbt", "params": CREATE},
    "decodepsbt": {"id": 6, "method": "decodepsbt", "params": [PSBT]},
    "analyzepsbt": {"id": 8, "method": "analyzepsbt", "params": [PSBT]},
    "decodepsbt, bad": {"id": 9, "method": "decodepsbt", "params": ["cHNidP8="]},
    "batch": [{"id": 1, "method": "decoderawtransaction", "params": [SMALL]},
              {"id": 2, "method": "decodescript", "params": ["00"]},
              {"jsonrpc": "2.0", "method": "decodescript", "params": ["51"]}],
    "batch, notifications only": [{"jsonrpc": "2.0", "method": "decodescript", "params": ["51"]}],
    "batch, one not stateless": [{"id": 1, "method": "decoderawtransaction", "params": [SMALL]},
                                 {"id": 2, "method": "help", "params": ["decodescript"]}],
    "medium, not stateless": [{"id": 1, "method": "decoderawtransaction", "params": [MEDIUM]},
                              {"id": 2, "method": "nosuchmethod"}],
    "help, not stateless": {"id": 11, "method": "help", "params": ["getrpcinfo"]},
    "unknown method": {"id": 12, "method": "nosuchmethod", "params": []},
    "large, not stateless": [{"id": 1, "method": "decodescript", "params": ["51" * (600 * 1024)]},
                             {"id": 2, "method": "help", "params": ["decodescript"]}],
}
RAW = {
    "medium, parse error": b'{"method":"decoderawtransaction","params":["' + MEDIUM.encode() + b'"',
    "medium, duplicate keys": b'{"id":1,"method":"decoderawtransaction","params":["' + MEDIUM.encode()
                              + b'"],"id":2}',
    "bad json": b'{"method":"decodescript",',
    "empty batch": b"[]",
}


def _token(password: str = PASSWORD) -> str:
    return "Basic " + base64.b64encode(f"{USER}:{password}".encode()).decode()


def _inode_of_server_end(server_port: int, client_port: int) -> str | None:
    """The inode of the server's socket for the connection from `client_port` (/proc/net/tcp)."""
    with open("/proc/net/tcp") as f:
        for line in f.readlines()[1:]:
            fields = line.split()
            local, remote = fields[1].split(":"), fields[2].split(":")
            if int(local[1], 16) == server_port and int(remote[1], 16) == client_port:
                return fields[9]
    return None


def _holder(pids, server_port: int, conn: http.client.HTTPConnection) -> int | None:
    """Which of `pids` holds the server's end of `conn` (connected, a request answered)."""
    inode = _inode_of_server_end(server_port, conn.sock.getsockname()[1])
    for pid in pids:
        for fd in os.listdir(f"/proc/{pid}/fd"):
            try:
                if os.readlink(f"/proc/{pid}/fd/{fd}") == f"socket:[{inode}]":
                    return pid
            except OSError:
                continue
    return None


def _ask(conn: http.client.HTTPConnection, body: bytes, password: str = PASSWORD) -> tuple[int, bytes]:
    conn.request("POST", "/", body=body, headers={"Authorization": _token(password)})
    reply = conn.getresponse()
    return reply.status, reply.read()


def _worker_connection(server: InProcessServer) -> tuple[http.client.HTTPConnection, int]:
    """A keep-alive connection that a worker process accepted (the kernel chooses: try until one)."""
    workers = {w.proc.pid for w in server.server.workers.workers}
    for _ in range(400):
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=60)
        _ask(conn, b'{"id":0,"method":"decodescript","params":["51"]}')
        holder = _holder([*workers, os.getpid()], server.port, conn)
        assert holder is not None, "no process holds the connection"
        if holder in workers:
            return conn, holder
        conn.close()
    raise AssertionError("no worker accepted any of 400 connections")


def _post(port: int, body: bytes) -> tuple[int, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        return _ask(conn, body)
    finally:
        conn.close()


@pytest.fixture(scope="module")
def pair():
    with InProcessServer("main") as loop_only, InProcessServer("main", workers=2) as workers:
        yield loop_only, workers


@pytest.fixture(scope="module")
def on_worker(pair):
    conn, pid = _worker_connection(pair[1])
    yield conn, pid
    conn.close()


@pytest.mark.parametrize("name", [*BODIES, *RAW])
def test_a_worker_answers_byte_for_byte_as_the_daemon_alone(pair, on_worker, name):
    loop_only, workers = pair
    conn, pid = on_worker
    body = RAW[name] if name in RAW else json.dumps(BODIES[name]).encode()
    expected = _post(loop_only.port, body)
    assert _ask(conn, body) == expected
    assert _holder([pid], workers.port, conn) == pid  # still the worker's connection
    if name.startswith("decode") and "bad" not in name and "wrong" not in name and "many" not in name:
        assert expected[0] in (200, 204)


def _minor_faults(pid: int) -> int:
    with open(f"/proc/{pid}/stat") as f:
        return int(f.read().rsplit(")", 1)[1].split()[7])  # field 10, minflt


def test_a_worker_reuses_the_heap_a_large_request_freed(pair, on_worker):
    """A worker sets the daemon's malloc thresholds (daemon.main.tune_process): with glibc's
    defaults each 500-input decode grew the heap and trimmed it after, ~130 fresh pages a time."""
    conn, pid = on_worker
    body = json.dumps({"id": 1, "method": "decoderawtransaction", "params": [_tx_hex(500)]}).encode()
    for _ in range(3):
        assert _ask(conn, body)[0] == 200
    before = _minor_faults(pid)
    for _ in range(10):
        assert _ask(conn, body)[0] == 200
    assert (_minor_faults(pid) - before) / 10 < 30
    assert _holder([pid], pair[1].port, conn) == pid


def _threads(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/task"))


def test_a_worker_runs_its_larger_bodies_on_one_thread(pair):
    """stateless.WORKER_THREADS, not -rpcthreads: a worker's calls never wait, so more threads under
    its one interpreter lock would only switch. Eight clients decoding medium bodies at once on a
    new worker start one thread in it."""
    body = json.dumps(BODIES["decode, medium body"]).encode()
    expected = _post(pair[0].port, body)
    with InProcessServer("main", workers=1) as server:
        conn, pid = _worker_connection(server)
        conns = [conn, *(http.client.HTTPConnection("127.0.0.1", server.port, timeout=60) for _ in range(7))]
        try:
            before = _threads(pid)
            for _ in range(5):
                answers: list[tuple[int, bytes]] = []
                threads = [threading.Thread(target=lambda c=c, out=answers: out.append(_ask(c, body))) for c in conns]
                for t in threads:
                    t.start()
                for t in threads:
                    t.join()
                assert answers == [expected] * len(conns)
            assert {_holder([pid, os.getpid()], server.port, c) for c in conns} == {pid}
            assert _threads(pid) - before == 1
        finally:
            for c in conns:
                c.close()


def test_one_connection_mixes_stateless_calls_and_the_main_process_s(pair, on_worker):
    loop_only, workers = pair
    conn, pid = on_worker
    script = json.dumps(BODIES["decodescript"]).encode()
    decoded = _ask(conn, script)
    assert decoded[0] == 200 and json.loads(decoded[1])["result"]["type"] == "multisig"
    status, body = _ask(conn, b'{"id":1,"method":"getrpcinfo","params":[]}')
    assert status == 200
    # run by the main process: its active commands (a worker's own calls are not listed there)
    assert [c["method"] for c in json.loads(body)["result"]["active_commands"]] == ["getrpcinfo"]
    assert _ask(conn, b'{"id":2,"method":"help","params":["decodescript"]}') == \
        _post(loop_only.port, b'{"id":2,"method":"help","params":["decodescript"]}')
    assert _ask(conn, script) == decoded
    assert _holder([pid], workers.port, conn) == pid


def test_a_call_on_a_worker_is_relayed_in_its_wallet_and_user(pair, on_worker):
    _, workers = pair
    conn, pid = on_worker
    if workers.registry.get("echocontext") is None:
        workers.registry.add([Method("echocontext", "test", lambda ctx, params: [ctx.wallet_name, ctx.user],
                                     lane=INLINE)])
    body = b'{"id":1,"method":"echocontext","params":[]}'
    for path, wallet in (("/", None), ("/wallet/w1", "w1"), ("/wallet/with%20space", "with space")):
        conn.request("POST", path, body=body, headers={"Authorization": _token()})
        reply = conn.getresponse()
        assert reply.status == 200
        assert json.loads(reply.read())["result"] == [wallet, USER]
    assert _holder([pid], workers.port, conn) == pid


def test_the_workers_share_new_connections_evenly(pair):
    _, workers = pair
    pids = [w.proc.pid for w in workers.server.workers.workers]
    conns = [http.client.HTTPConnection("127.0.0.1", workers.port, timeout=60) for _ in range(8)]
    try:
        for conn in conns:
            conn.connect()
        for conn in conns:
            assert _ask(conn, b'{"id":0,"method":"decodescript","params":["51"]}')[0] == 200
        holders = [_holder(pids, workers.port, conn) for conn in conns]
        assert None not in holders
        assert all(holders.count(pid) >= 2 for pid in pids), holders
    finally:
        for conn in conns:
            conn.close()


def test_only_a_worker_with_the_fewest_connections_accepts():
    counts = ConnectionCounts.create(3)
    try:
        workers = [ConnectionCounts(counts.fd, 3, i) for i in range(3)]  # each maps the same memory
        assert all(w.least() for w in workers)  # none serves yet: all GONE
        workers[0].publish(0)
        workers[1].publish(0)
        assert workers[0].least() and workers[1].least()
        assert not workers[2].least()  # GONE until it serves (and once it has gone)
        workers[0].publish(1)
        assert not workers[0].least() and workers[1].least()
        workers[1].publish(1)
        workers[2].publish(0)
        assert [w.least() for w in workers] == [False, False, True]
        counts.publish(ConnectionCounts.GONE, 2)  # the main process, for a worker that died
        assert [w.least() for w in workers] == [True, True, False]
    finally:
        os.close(counts.fd)


def test_a_worker_stops_when_the_daemon_dies(tmp_path):
    from tests.kit.rpc_daemon import QuillDaemon
    with QuillDaemon(tmp_path, "-rpcworkers=1") as d:
        deadline = time.monotonic() + 30
        while not _children(d.proc.pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        (worker,) = _children(d.proc.pid)
        os.kill(d.proc.pid, signal.SIGKILL)
        d.proc.wait(10)
        deadline = time.monotonic() + 15
        while os.path.exists(f"/proc/{worker}") and time.monotonic() < deadline:
            with open(f"/proc/{worker}/stat") as f:
                if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                    break
            time.sleep(0.05)
        else:
            if os.path.exists(f"/proc/{worker}"):
                os.kill(worker, signal.SIGKILL)
                raise AssertionError("the worker outlived its daemon")


def test_wrong_credentials_on_a_worker_wait_in_the_main_process_s_line(pair):
    _, workers = pair
    delay = workers.server.auth_failure_delay
    conns = [_worker_connection(workers)[0] for _ in range(2)]
    results: list[tuple[int, bytes]] = []

    def guess(conn: http.client.HTTPConnection) -> None:
        results.append(_ask(conn, b'{"id":1,"method":"decodescript","params":["51"]}', password="wrong"))

    started = time.monotonic()
    threads = [threading.Thread(target=guess, args=(c,)) for c in conns]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    elapsed = time.monotonic() - started
    assert results == [(401, b""), (401, b"")]
    assert elapsed >= 2 * delay * 0.9, "the two guesses were not serialised"
    for conn in conns:  # the right password still passes on the same connections
        assert _ask(conn, b'{"id":1,"method":"decodescript","params":["51"]}')[0] == 200
        conn.close()


def test_a_killed_worker_drops_its_connections_and_is_replaced():
    with InProcessServer("main", workers=1) as server:
        conn, pid = _worker_connection(server)
        body = json.dumps(BODIES["decode"]).encode()
        expected = _ask(conn, body)
        os.kill(pid, signal.SIGKILL)
        with pytest.raises((ConnectionError, http.client.HTTPException)):
            _ask(conn, body)
        conn.close()
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            pids = {w.proc.pid for w in server.server.workers.workers}
            if pids and pid not in pids and server.server.workers.ready == 1:
                break
            assert _post(server.port, body) == expected  # the main process serves meanwhile
            time.sleep(0.05)
        else:
            raise AssertionError("no worker replaced the killed one")
        assert _worker_connection(server)[1] != pid
        new = server.server.workers.workers[0].proc
    assert new.poll() is not None, "a worker outlived the server's stop"


def _children(pid: int) -> set[int]:
    found: set[int] = set()
    for task in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{task}/children") as f:
            found.update(int(c) for c in f.read().split())
    return found


def test_quilld_serves_with_its_workers_and_leaves_none_after_it_stops(tmp_path):
    from tests.kit.rpc_daemon import QuillDaemon
    with QuillDaemon(tmp_path, "-rpcworkers=2") as d:
        deadline = time.monotonic() + 30
        while len(_children(d.proc.pid)) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        workers = _children(d.proc.pid)
        assert len(workers) == 2
        for pid in workers:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                assert b"quill.daemon.stateless_worker" in f.read()
        expected = d.post(json.dumps(BODIES["decode"]))[:2]
        assert expected[0] == 200
        holders: set[int | None] = set()
        deadline = time.monotonic() + 30
        # new connections each, until a worker (serving once it has started) accepts one
        while not holders & workers and time.monotonic() < deadline:
            conn = http.client.HTTPConnection("127.0.0.1", d.port, timeout=60)
            conn.request("POST", "/", body=json.dumps(BODIES["decode"]),
                         headers={"Authorization": d.auth_header()})
            reply = conn.getresponse()
            assert (reply.status, reply.read()) == expected
            holders.add(_holder([*workers, d.proc.pid], d.port, conn))
            conn.close()
        assert holders & workers, "no worker served any connection"
        assert d.rpc("getrpcinfo")["active_commands"][0]["method"] == "getrpcinfo"
    for pid in workers:
        assert not os.path.exists(f"/proc/{pid}") or open(f"/proc/{pid}/stat").read().split()[2] == "Z"


def test_rpcworkers_0_answers_every_call_on_the_loop(tmp_path):
    from tests.kit.rpc_daemon import QuillDaemon
    with QuillDaemon(tmp_path, "-rpcworkers=0") as d:
        status, body = d.post(json.dumps(BODIES["decode"]))[:2]
        assert status == 200 and json.loads(body)["result"]["vout"][0]["n"] == 0
        time.sleep(0.5)
        assert _children(d.proc.pid) == set()
