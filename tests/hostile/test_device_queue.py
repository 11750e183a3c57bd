"""Device work off the RPC workers (issue 15): 64 signing calls wait for the device
(the first one for its user's confirmation) in the device's own bounded queue,
each with its place visible in getrpcinfo and getdeviceinfo, while other calls
keep their latency; one more than the queue holds is refused with Core's 503;
every waiting call gets its answer."""
from __future__ import annotations

import http.client
import json
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from quill.emulator.asker import write_answer
from tests.hostile.netkit import basic, post
from tests.kit import boards
from tests.kit.rpc_daemon import QuillDaemon
from tests.signing.signkit import keys, p2wpkh, prevtx, unsigned_tx, wait_for

KEY = keys(1515, 1)[0]
SIGNERS = 64
DEPTH = 64       # -rpcworkqueue: calls waiting for the device, besides the one at it
DECODE_HEX = ("0200000001" + "11" * 32 + "00000000" + "00" + "fdffffff" + "01" + "e803000000000000"
              + "160014" + "22" * 20 + "00000000")


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[QuillDaemon]:
    with QuillDaemon(tmp_path_factory.mktemp("devq"), "-device=emulator",
                     f"-emuboard={boards.ready(boards.SMALLEST_BOARD)}", "-emuapprove=channel",
                     "-emuconfirmtimeout=120000", "-rpcuser=u", "-rpcpassword=p", "-rpcthreads=4",
                     f"-rpcworkqueue={DEPTH}") as d:
        yield d


def sign_body(seed: int) -> bytes:
    tx = unsigned_tx(1, 1, seed=seed)
    entries = [prevtx(tx, 0, p2wpkh(KEY.pubkey), 50_000)]
    return json.dumps({"id": seed, "method": "signrawtransactionwithkey",
                       "params": [tx.hex(), [KEY.wif], entries]}).encode()


def waiting(daemon: QuillDaemon) -> list[dict[str, Any]]:
    return [c for c in daemon.rpc("getrpcinfo")["active_commands"] if "device_queue_position" in c]


def test_64_waiting_signers_do_not_slow_other_calls(daemon: QuillDaemon) -> None:
    auth = basic("u", "p")
    channel = daemon.chain_dir / "emulator"
    daemon.rpc("getdeviceinfo")          # the emulator is up before the signers come
    replies: dict[int, tuple[int, bytes]] = {}

    def signer(seed: int) -> None:
        replies[seed] = post(daemon.port, sign_body(seed), auth, timeout=300)

    threads = [threading.Thread(target=signer, args=(seed,)) for seed in range(SIGNERS)]
    for t in threads:
        t.start()
    assert wait_for(lambda: (channel / "confirm-request").exists(), 30), "the device did not ask"
    assert wait_for(lambda: len(waiting(daemon)) == SIGNERS - 1, 30)

    # each waiting call knows its place: 1..63 in getrpcinfo, 0..63 in getdeviceinfo
    assert sorted(c["device_queue_position"] for c in waiting(daemon)) == list(range(1, SIGNERS))
    info = daemon.rpc("getdeviceinfo")
    assert info["state"] == "awaiting_user"
    assert [q["position"] for q in info["queue"]] == list(range(SIGNERS))
    assert {q["method"] for q in info["queue"]} == {"signrawtransactionwithkey"}

    # other calls keep their latency: decode inline, getblockcount on a worker
    conn = http.client.HTTPConnection("127.0.0.1", daemon.port, timeout=10)
    latencies = []
    for i in range(300):
        method, params = ("decoderawtransaction", [DECODE_HEX]) if i % 3 else ("getblockcount", [])
        started = time.perf_counter()
        conn.request("POST", "/", json.dumps({"id": i, "method": method, "params": params}),
                     {"Authorization": auth})
        response = conn.getresponse()
        assert response.status == 200, response.read()
        response.read()
        latencies.append(time.perf_counter() - started)
    conn.close()
    latencies.sort()
    p99 = latencies[int(len(latencies) * 0.99)]
    print(f"decoderawtransaction/getblockcount with {SIGNERS} signers waiting: "
          f"p50 {latencies[len(latencies) // 2] * 1000:.1f} ms, p99 {p99 * 1000:.1f} ms")
    assert p99 < 0.050

    # the queue holds DEPTH waiting calls: one more is accepted, the next refused as Core's work queue
    extra = threading.Thread(target=signer, args=(SIGNERS,))
    extra.start()
    assert wait_for(lambda: len(waiting(daemon)) == DEPTH, 10)
    assert post(daemon.port, sign_body(SIGNERS + 1), auth) == (503, b"Work queue depth exceeded")
    threads.append(extra)

    # the user refuses each in turn: every waiting call gets its answer
    answered = 0
    deadline = time.monotonic() + 120
    while any(t.is_alive() for t in threads) and time.monotonic() < deadline:
        if (channel / "confirm-request").exists() and not (channel / "confirm-answer").exists():
            write_answer(channel, "refuse")
            answered += 1
        time.sleep(0.005)
    for t in threads:
        t.join(1)
    assert len(replies) == SIGNERS + 1
    for status, body in replies.values():
        assert status == 500
        assert json.loads(body)["error"] == {"code": -4, "message": "Signing refused on the device"}
    assert waiting(daemon) == [] and daemon.rpc("getdeviceinfo")["queue"] == []
