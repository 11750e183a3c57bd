"""Several quilld on one PostgreSQL database (issue 29, docs/postgresql.md "Several quilld"): every
one answers RPC for every wallet, clients spread across them see their own writes, the answers
equal one SQLite quilld's given the same blocks, and kill -9 of the leader during block connection
and during a rescan loses nothing acknowledged: another takes over and the wallets equal a fresh
rescan. Real PostgreSQL (tests.kit.postgres, one cluster per process) and real quilld processes."""
import itertools
import signal
import threading
import time

import pytest

from quill.tx.hashes import sha256
from tests.kit import postgres
from tests.kit.rpc_daemon import QuillDaemon, RPCFailure
from tests.wallet_e2e.e2ekit import Keys, multiset, strip_times

AUTH = ("-rpcuser=pg", "-rpcpassword=test")


@pytest.fixture(scope="module")
def cluster():
    return postgres.shared_cluster()


@pytest.fixture
def database(cluster, request):
    name = "i_" + request.node.name.lower()[:40]
    cluster.sql(f'DROP DATABASE IF EXISTS "{name}"')
    return cluster.create_database(name)


def instances(tmp_path, database, n=3):
    """n quilld on `database`: the first leads (started first), the others are replicas."""
    first = QuillDaemon(tmp_path / "i0", *AUTH, f"-store={database}").start()
    return [first] + [QuillDaemon(tmp_path / f"i{k}", *AUTH, f"-store={database}").start() for k in range(1, n)]


def wrpc(d, method, *params, wallet="w"):
    return d.rpc(method, *params, path=f"/wallet/{wallet}")


def copy_blocks(source, target, start):
    """The blocks of `source` from height `start`, submitted to `target`: the same chain on both."""
    for h in range(start, source.rpc("getblockcount") + 1):
        raw = source.rpc("getblock", source.rpc("getblockhash", h), 0)
        assert target.rpc("submitblock", raw) is None


def leader_of(daemons, timeout=30.0):
    """The one of `daemons` that leads: it mines (a replica refuses)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for d in daemons:
            if "This quilld now leads the regtest chain in the store" in d.debug_log():
                return d
        time.sleep(0.05)
    raise TimeoutError("no replica took the lead")


def test_three_instances_answer_as_one_sqlite_quilld_and_see_their_own_writes(tmp_path, database):
    """Each call goes to the next instance in turn (a round-robin client); each write is read back
    at once on another instance; the reads equal a SQLite quilld's that got the same calls and the
    same blocks (a replica passes mining to the leader: tests/wallet_pg/test_forwarding.py); two
    instances handing out addresses of one wallet at once never hand out the same one."""
    keys = Keys(sha256(b"pg-instances"))
    pg = instances(tmp_path, database)
    lite = QuillDaemon(tmp_path / "lite", *AUTH, "-store=sqlite").start()
    turn = itertools.cycle(pg)
    try:
        def both(method, *params, wallet="w"):
            here = next(turn)
            path = "/" if wallet is None else f"/wallet/{wallet}"
            return here, here.rpc(method, *params, path=path), lite.rpc(method, *params, path=path)

        here, mine, theirs = both("createwallet", "w", True, True, wallet=None)
        assert mine == theirs
        for d in pg:        # created on one instance: loaded there only (Core: per process), in the store's list
            assert d.rpc("listwalletdir") == {"wallets": [{"name": "w", "warnings": []}]}
        others = [d for d in pg if d is not here]
        for d in others:
            d.rpc("loadwallet", "w")
        _, mine, theirs = both("importdescriptors", keys.import_requests())
        assert mine == theirs and all(r["success"] for r in mine)
        here, address, theirs = both("getnewaddress", "customer-7")
        assert address == theirs
        for d in pg:                    # read your writes, on every instance at once
            assert wrpc(d, "getaddressinfo", address)["labels"] == ["customer-7"]
        lite.rpc("generatetoaddress", 105, address)
        copy_blocks(lite, pg[0], 1)
        tip = lite.rpc("getbestblockhash")
        for d in pg:                    # the leader's blocks, at once on the replicas
            assert d.rpc("getbestblockhash") == tip
        here, mine, theirs = both("setlabel", address, "customer-8")
        coin = wrpc(lite, "listunspent")[0]
        outpoint = [{"txid": coin["txid"], "vout": coin["vout"]}]
        _, mine, theirs = both("lockunspent", False, outpoint, True)
        assert mine is theirs is True
        for d in pg:
            assert wrpc(d, "listlockunspent") == outpoint
            assert wrpc(d, "listlabels") == ["customer-8"]
        for method, params in [("getbalances", ()), ("listunspent", ()), ("listlockunspent", ()),
                               ("listlabels", ()), ("getaddressesbylabel", ("customer-8",)),
                               ("listtransactions", ("*", 1000)), ("listsinceblock", ()),
                               ("getwalletinfo", ()), ("listdescriptors", ()), ("getaddressinfo", (address,))]:
            for _ in pg:
                _, mine, theirs = both(method, *params)
                if isinstance(mine, list) and all(isinstance(e, dict) for e in mine + theirs):
                    assert strip_times(mine) == strip_times(theirs), method
                elif isinstance(mine, list):
                    assert mine == theirs, method
                elif method == "listsinceblock":
                    assert multiset(mine["transactions"]) == multiset(theirs["transactions"])
                    assert mine["lastblock"] == theirs["lastblock"]
                else:
                    assert {k: v for k, v in mine.items() if k not in ("birthtime", "timestamp")} == \
                        {k: v for k, v in theirs.items() if k not in ("birthtime", "timestamp")}, method
        psbt = wrpc(pg[2], "walletcreatefundedpsbt", [], [{address: 1}], 0, {"lockUnspents": True, "fee_rate": 2})
        held = wrpc(pg[1], "listlockunspent")       # its inputs are locked for the client, on another instance
        assert len(held) >= 2 and outpoint[0] in held and psbt["psbt"]
        # two instances handing out addresses of one wallet at the same moment: all different
        handed: list[str] = []

        def take(d):
            for _ in range(8):
                handed.append(wrpc(d, "getnewaddress"))
        threads = [threading.Thread(target=take, args=(d,)) for d in pg[1:]]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert len(handed) == 16 and len(set(handed)) == 16
    finally:
        for d in (*pg, lite):
            d.stop()


def test_kill_9_of_the_leader_during_block_connection(tmp_path, database):
    """The leader mines while clients read on the replicas; kill -9 of the leader: a replica takes
    the lead within seconds, every acknowledged block is there, the wallet equals a fresh rescan."""
    keys = Keys(sha256(b"pg-kill-blocks"))
    pg = instances(tmp_path, database)
    try:
        leader = pg[0]
        leader.rpc("createwallet", "w", True, True, None, None, None, True)
        assert all(r["success"] for r in wrpc(leader, "importdescriptors", keys.import_requests()))
        for d in pg[1:]:
            d.rpc("loadwallet", "w")
        address = wrpc(pg[1], "getnewaddress", "paid")
        acknowledged: list[str] = []
        stop = threading.Event()

        def mine():
            try:
                while not stop.is_set():
                    acknowledged.extend(leader.rpc("generatetoaddress", 1, address))
            except (RPCFailure, OSError):
                pass
        miner = threading.Thread(target=mine)
        miner.start()
        deadline = time.monotonic() + 30
        while len(acknowledged) < 8 and time.monotonic() < deadline:
            assert pg[2].rpc("getblockcount") >= 0        # replicas keep answering meanwhile
            time.sleep(0.02)
        leader.proc.send_signal(signal.SIGKILL)
        killed_at = time.monotonic()
        leader.proc.wait()
        stop.set()
        miner.join()
        new = leader_of(pg[1:])
        assert time.monotonic() - killed_at < 10
        for d in pg[1:]:
            for h in acknowledged:
                assert d.rpc("getblockheader", h)["confirmations"] >= 1
        new.rpc("generatetoaddress", 1, address)             # the new leader mines and records it
        check_equals_fresh_rescan(new, pg[1:], keys, "w")
    finally:
        for d in pg:
            d.stop()


def test_kill_9_of_the_leader_during_a_rescan(tmp_path, database):
    """kill -9 of the leader while an import rescans: the new leader loads the wallet (loaded at
    start-up, from the settings in the store) and finishes the rescan from where it stopped; the
    label written before is there; the wallet equals a fresh rescan."""
    keys = Keys(sha256(b"pg-kill-rescan"))
    pg = instances(tmp_path, database)
    try:
        leader = pg[0]
        leader.rpc("createwallet", "payer", True, True)
        assert all(r["success"] for r in wrpc(leader, "importdescriptors", keys.import_requests(), wallet="payer"))
        address = wrpc(leader, "getnewaddress", wallet="payer")
        leader.rpc("generatetoaddress", 150, address)
        leader.rpc("createwallet", "w", True, True, None, None, None, True)
        leader.rpc("setlabel", address, "before", path="/wallet/w")
        importing = threading.Thread(target=lambda: _quiet(wrpc, leader, "importdescriptors", keys.import_requests()))
        importing.start()
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            scanning = wrpc(leader, "getwalletinfo")["scanning"]
            if scanning and scanning["progress"] > 0:      # the import committed, blocks being scanned
                break
        leader.proc.send_signal(signal.SIGKILL)
        leader.proc.wait()
        importing.join()
        new = leader_of(pg[1:])
        assert "resuming the rescan interrupted at height" in _wait_log(new, "Rescan of w")
        check_equals_fresh_rescan(new, pg[1:], keys, "w")
        assert wrpc(new, "getaddressinfo", address)["labels"] == ["before"]
    finally:
        for d in pg:
            d.stop()


def _quiet(call, *args):
    try:
        call(*args)
    except (RPCFailure, OSError):       # the connection dies with the process
        pass


def _wait_log(d, text, timeout=30.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        log = d.debug_log()
        if text in log:
            return log
        time.sleep(0.1)
    raise TimeoutError(text)


def unlabelled(since):
    return [{k: v for k, v in e.items() if k != "label"} for e in since["transactions"]]


def check_equals_fresh_rescan(leader, daemons, keys, name):
    """`name`, on every instance of `daemons`, equals a wallet made now from the same descriptors."""
    leader.rpc("createwallet", "fresh", True, True)
    assert all(r["success"] for r in wrpc(leader, "importdescriptors", keys.import_requests(), wallet="fresh"))
    theirs = wrpc(leader, "listsinceblock", "", wallet="fresh")
    balances = wrpc(leader, "getbalances", wallet="fresh")
    for d in daemons:
        if name not in d.rpc("listwallets"):
            d.rpc("loadwallet", name)
        mine = wrpc(d, "listsinceblock", "", wallet=name)
        assert mine["lastblock"] == theirs["lastblock"] == leader.rpc("getbestblockhash")
        assert multiset(unlabelled(mine)) == multiset(unlabelled(theirs))   # the fresh one has no labels
        assert wrpc(d, "getbalances", wallet=name) == balances
