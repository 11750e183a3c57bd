"""A replica passes the leader's calls (sendrawtransaction, mining, ...) to the leader
(docs/postgresql.md "Several quilld"): the client gets the leader's answer, the leader's errors
unchanged, sees its transaction on the replica at once, and a clear -9 error at once when no
leader can be reached. Real PostgreSQL and real quilld processes."""
import json
import signal
import socket
import threading
import time

import pytest

from quill.tx.hashes import sha256
from tests.kit.anyone import ANYONE_ADDRESS, ANYONE_SCRIPT
from tests.kit.rpc_daemon import RPCFailure
from tests.wallet_e2e.e2ekit import FOREIGN, Coin, Keys, build_tx
from tests.wallet_pg.test_instances import cluster, database, instances, wrpc  # noqa: F401 (fixtures)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def coinbase(d, height):
    block = d.rpc("getblock", d.rpc("getblockhash", height), 2)
    out = block["tx"][0]["vout"][0]
    return Coin(bytes.fromhex(block["tx"][0]["txid"])[::-1], 0, round(out["value"] * 100_000_000), ANYONE_SCRIPT)


def error_of(d, method, *params):
    with pytest.raises(RPCFailure) as failed:
        d.rpc(method, *params)
    return failed.value.code, failed.value.message


def test_a_replica_passes_the_leaders_calls_to_the_leader(tmp_path, cluster, database):  # noqa: F811
    keys = Keys(sha256(b"pg-forwarding"))
    leader, replica = instances(tmp_path, database, n=2)
    try:
        leader.rpc("createwallet", "w", True, True, None, None, None, True)
        assert all(r["success"] for r in wrpc(leader, "importdescriptors", keys.import_requests()))
        replica.rpc("loadwallet", "w")
        # mining through the replica mines on the leader, and the replica answers the leader's hashes
        hashes = replica.rpc("generatetoaddress", 101, ANYONE_ADDRESS)
        assert len(hashes) == 101 and leader.rpc("getbestblockhash") == hashes[-1]
        assert replica.rpc("getbestblockhash") == hashes[-1] and replica.rpc("getblockcount") == 101
        # a payment to the wallet sent through the replica: the leader's txid, in both mempools,
        # and in the wallet on the replica at once (read your writes)
        address = wrpc(replica, "getnewaddress")
        script = bytes.fromhex(wrpc(replica, "getaddressinfo", address)["scriptPubKey"])
        tx = build_tx([coinbase(leader, 1)], [(script, 1_000_000_000), (FOREIGN, 3_999_990_000)])
        txid = replica.rpc("sendrawtransaction", tx.hex())
        assert txid == tx.txid_hex()
        assert leader.rpc("getrawmempool") == [txid] and replica.rpc("getrawmempool") == [txid]
        assert wrpc(replica, "gettransaction", txid)["confirmations"] == 0
        assert leader.rpc("sendrawtransaction", tx.hex()) == txid       # as the leader answers again
        # a bad transaction: exactly the leader's error (code and message)
        double = build_tx([coinbase(leader, 1)], [(FOREIGN, 4_999_000_000)])
        assert error_of(replica, "sendrawtransaction", double.hex()) == error_of(leader, "sendrawtransaction",
                                                                               double.hex())
        assert error_of(replica, "sendrawtransaction", "00") == error_of(leader, "sendrawtransaction", "00")
        # invalidate and reconsider through the replica
        assert replica.rpc("invalidateblock", hashes[-1]) is None
        assert leader.rpc("getblockcount") == 100 and replica.rpc("getblockcount") == 100
        assert replica.rpc("reconsiderblock", hashes[-1]) is None
        assert leader.rpc("getbestblockhash") == hashes[-1] == replica.rpc("getbestblockhash")
        # the id of the client's request comes back, on 1.x and 2.0
        for version in ("1.0", "2.0"):
            body = json.dumps({"jsonrpc": version, "id": "x-7", "method": "generatetoaddress",
                               "params": [1, ANYONE_ADDRESS]})
            status, raw, _ = replica.post(body)
            reply = json.loads(raw)
            assert status == 200 and reply["id"] == "x-7" and reply["result"] == [leader.rpc("getbestblockhash")]
        # an error's reply, byte for byte and with its HTTP status, as the leader's
        for version in ("1.0", "2.0"):
            body = json.dumps({"jsonrpc": version, "id": 5, "method": "sendrawtransaction", "params": ["00"]})
            assert replica.post(body)[:2] == leader.post(body)[:2]
        # no leader where the store says it answers: Core's -9 at once, and nothing mined
        dbname = database.rsplit("/", 1)[1]
        port = cluster.sql("SELECT port FROM quill_leaders WHERE chain = 'regtest'", db=dbname)[0][0]
        assert port == leader.port
        cluster.sql(f"UPDATE quill_leaders SET port = {free_port()}", db=dbname)
        height = leader.rpc("getblockcount")
        started = time.monotonic()
        assert error_of(replica, "generatetoaddress", 1, ANYONE_ADDRESS) == (-9, (
            "The quilld that leads the regtest chain in the store is not reachable; try again in a moment "
            "(a replica takes the lead within seconds)"))
        assert time.monotonic() - started < 5 and leader.rpc("getblockcount") == height
        # a leader that takes the call and does not answer yet: while the replica waits for it, the
        # call is among the replica's running commands (getrpcinfo), as Core lists a running call
        with socket.socket() as silent:
            silent.bind(("127.0.0.1", 0))
            silent.listen()
            cluster.sql(f"UPDATE quill_leaders SET port = {silent.getsockname()[1]}", db=dbname)
            waiting = threading.Thread(target=lambda: pytest.raises(RPCFailure, replica.rpc, "generatetoaddress",
                                                                    1, ANYONE_ADDRESS))
            waiting.start()
            taken, _ = silent.accept()
            deadline = time.monotonic() + 10
            while "generatetoaddress" not in [c["method"] for c in replica.rpc("getrpcinfo")["active_commands"]]:
                assert time.monotonic() < deadline, replica.rpc("getrpcinfo")
                time.sleep(0.05)
            taken.close()
            waiting.join(timeout=30)
            assert not waiting.is_alive()
        assert [c["method"] for c in replica.rpc("getrpcinfo")["active_commands"]] == ["getrpcinfo"]
        cluster.sql(f"UPDATE quill_leaders SET port = {port}", db=dbname)
        assert len(replica.rpc("generatetoaddress", 1, ANYONE_ADDRESS)) == 1
        # the leader gone: a clear error at once, no hang, until a replica takes the lead
        leader.proc.send_signal(signal.SIGKILL)
        leader.proc.wait()
        started = time.monotonic()
        code, message = None, ""
        try:
            replica.rpc("generatetoaddress", 1, ANYONE_ADDRESS)
        except RPCFailure as e:
            code, message = e.code, e.message
        assert time.monotonic() - started < 5
        if code is not None:            # the replica had not yet taken the lead
            assert code == -9 and "is not reachable" in message
        deadline = time.monotonic() + 30
        while "This quilld now leads" not in replica.debug_log():
            assert time.monotonic() < deadline
            time.sleep(0.05)
        assert len(replica.rpc("generatetoaddress", 1, ANYONE_ADDRESS)) == 1   # now its own
        assert "__quill_replica__" not in replica.debug_log()
    finally:
        for d in (leader, replica):
            d.stop() if d.proc.poll() is None else None


def test_a_leader_that_stops_cleanly_takes_its_row_out_of_quill_leaders(tmp_path, cluster, database):  # noqa: F811
    dbname = database.rsplit("/", 1)[1]

    def rows():
        return cluster.sql("SELECT port FROM quill_leaders WHERE chain = 'regtest'", db=dbname)

    leader, replica = instances(tmp_path, database, n=2)
    try:
        assert rows() == [(leader.port,)]
        leader.stop()
        assert leader.proc.returncode == 0
        # the row went with the clean stop (a replica never sees a leader on a closed port), and the
        # replica that took the lead then wrote its own
        deadline = time.monotonic() + 30
        while "This quilld now leads" not in replica.debug_log():
            assert time.monotonic() < deadline
            assert rows() in ([], [(replica.port,)])
            time.sleep(0.02)
        assert rows() == [(replica.port,)]
        replica.stop()
        assert replica.proc.returncode == 0 and rows() == []
    finally:
        for d in (leader, replica):
            d.stop() if d.proc.poll() is None else None
