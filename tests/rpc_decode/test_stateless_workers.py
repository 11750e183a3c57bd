"""Stateless calls answered by worker processes (quill.rpc.stateless, issue 28): the same bytes as
the server's loop answers, for answers, errors in Core's form, batches, notifications and bodies of
every size; a request that is not wholly stateless, or whose worker died, is answered as before."""
import http.client
import json
import os
import signal
import time

import pytest

from quill.daemon.stateless_worker import WorkerNode
from quill.handlers.psbt import createpsbt
from quill.rpc.jsonrpc import CallContext
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
}
RAW = {
    "medium, parse error": b'{"method":"decoderawtransaction","params":["' + MEDIUM.encode() + b'"',
    "medium, duplicate keys": b'{"id":1,"method":"decoderawtransaction","params":["' + MEDIUM.encode()
                              + b'"],"id":2}',
}


def _post(port: int, body: bytes) -> tuple[int, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        import base64
        token = base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
        conn.request("POST", "/", body=body, headers={"Authorization": "Basic " + token})
        reply = conn.getresponse()
        return reply.status, reply.read()
    finally:
        conn.close()


@pytest.fixture(scope="module")
def pair():
    with InProcessServer("main") as loop_only, InProcessServer("main", workers=1) as workers:
        yield loop_only, workers


@pytest.mark.parametrize("name", [*BODIES, *RAW])
def test_worker_answers_byte_for_byte_as_the_loop(pair, name):
    loop_only, workers = pair
    body = RAW[name] if name in RAW else json.dumps(BODIES[name]).encode()
    pool = workers.server.stateless
    before = pool.jobs
    expected = _post(loop_only.port, body)
    assert _post(workers.port, body) == expected
    if name not in ("batch, one not stateless",):  # found not stateless on the loop: never sent
        assert pool.jobs > before, "the worker was not asked"
    if name.startswith("decode") and "bad" not in name and "wrong" not in name and "many" not in name:
        assert expected[0] in (200, 204)


def test_a_dead_workers_calls_are_answered_on_the_loop(pair):
    loop_only, workers = pair
    body = json.dumps(BODIES["decode"]).encode()
    expected = _post(loop_only.port, body)
    pool = workers.server.stateless
    victim = pool.workers[0].proc
    os.kill(victim.pid, signal.SIGKILL)
    victim.wait(10)
    deadline = time.monotonic() + 10
    while pool.workers and time.monotonic() < deadline:   # the loop sees its socket close
        assert _post(workers.port, body) == expected
    assert not pool.workers
    assert _post(workers.port, body) == expected


def _children(pid: int) -> set[int]:
    found: set[int] = set()
    for task in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{task}/children") as f:
            found.update(int(c) for c in f.read().split())
    return found


def test_quilld_starts_its_workers_at_the_first_stateless_call_and_stops_them(tmp_path):
    from tests.kit.rpc_daemon import QuillDaemon
    with QuillDaemon(tmp_path, "-rpcworkers=2") as d:
        assert _children(d.proc.pid) == set()      # none before the first stateless call
        expected = d.post(json.dumps(BODIES["decode"]))[:2]
        deadline = time.monotonic() + 30
        while len(_children(d.proc.pid)) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        workers = _children(d.proc.pid)
        assert len(workers) == 2
        for _ in range(20):
            assert d.post(json.dumps(BODIES["decode"]))[:2] == expected
        with open(f"/proc/{next(iter(workers))}/cmdline", "rb") as f:
            assert b"quill.daemon.stateless_worker" in f.read()
    for pid in workers:
        assert not os.path.exists(f"/proc/{pid}") or open(f"/proc/{pid}/stat").read().split()[2] == "Z"


def test_rpcworkers_0_answers_every_call_on_the_loop(tmp_path):
    from tests.kit.rpc_daemon import QuillDaemon
    with QuillDaemon(tmp_path, "-rpcworkers=0") as d:
        status, body = d.post(json.dumps(BODIES["decode"]))[:2]
        assert status == 200 and json.loads(body)["result"]["vout"][0]["n"] == 0
        time.sleep(0.5)
        assert _children(d.proc.pid) == set()
