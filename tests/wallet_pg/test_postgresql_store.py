"""-store=postgresql://... on a real PostgreSQL server (tests.kit.postgres): the wallets'
layout, their versioned migrations, one holder per wallet across daemons, and start-up refusals
that are clear and never show the password. The wallet suite itself also runs on PostgreSQL
(QUILL_TEST_STORE=postgresql, tests/run_suite.py); these are what only this store has."""
import signal
import threading
import time

import pytest

from quill.tx.hashes import sha256
from tests.kit import postgres
from tests.kit.anyone import ANYONE_ADDRESS
from tests.kit.rpc_daemon import QuillDaemon, RPCFailure
from tests.wallet_e2e.e2ekit import Keys, multiset

AUTH = ("-rpcuser=pg", "-rpcpassword=test")
PASSWORD = "pw-not-in-logs"       # the password role's (tests.kit.postgres)
IN_USE = ("Wallet file verification failed. SQLiteDatabase: Unable to obtain an exclusive lock on the database, "
          "is it being used by another instance of Quill?")


@pytest.fixture(scope="module")
def cluster():
    return postgres.shared_cluster()


@pytest.fixture
def database(cluster, request):
    name = "t_" + request.node.name.lower().replace("[", "_").replace("]", "")[:40]
    cluster.sql(f'DROP DATABASE IF EXISTS "{name}"')
    return cluster.create_database(name)


def wrpc(d, method, *params, wallet="w"):
    return d.rpc(method, *params, path=f"/wallet/{wallet}")


def test_the_wallets_live_in_the_database(tmp_path, cluster, database):
    """createwallet, importdescriptors and a label made by one daemon; another, on another data
    directory and the same database, lists and loads the same wallet. Its rows are in its own
    schema, bytes as BYTEA."""
    db = database.rsplit("/", 1)[1]
    keys = Keys(sha256(b"pg-store"))
    with QuillDaemon(tmp_path / "a", *AUTH, f"-store={database}") as d:
        d.rpc("createwallet", "w", True, True)
        assert all(r["success"] for r in wrpc(d, "importdescriptors", keys.import_requests()))
        address = wrpc(d, "getnewaddress", "customer-7")
        before = wrpc(d, "listdescriptors")
    wallet_id = cluster.sql("SELECT id FROM quill_wallets WHERE chain='regtest' AND name='w'", db=db)[0][0]
    types = dict(cluster.sql("SELECT column_name, data_type FROM information_schema.columns "
                             f"WHERE table_schema='wallet_{wallet_id}' AND table_name='txs'", db=db))
    assert types["txid"] == "bytea" and types["seq"] == "bigint"
    with QuillDaemon(tmp_path / "b", *AUTH, f"-store={database}") as d:
        assert d.rpc("listwalletdir") == {"wallets": [{"name": "w", "warnings": []}]}
        assert d.rpc("listwallets") == []
        d.rpc("loadwallet", "w")
        assert wrpc(d, "listlabels") == ["customer-7"]
        assert wrpc(d, "getaddressinfo", address)["labels"] == ["customer-7"]
        assert wrpc(d, "listdescriptors") == before


def test_restart_on_the_same_data_directory_equals_before(tmp_path, database):
    keys = Keys(sha256(b"pg-restart"))
    args = (*AUTH, f"-store={database}")
    with QuillDaemon(tmp_path, *args) as d:
        d.rpc("createwallet", "w", True, True, None, None, None, True)
        assert all(r["success"] for r in wrpc(d, "importdescriptors", keys.import_requests()))
        address = wrpc(d, "getnewaddress", "customer-7")
        d.rpc("generatetoaddress", 101, address)
        coin = wrpc(d, "listunspent")[0]
        assert wrpc(d, "lockunspent", False, [{"txid": coin["txid"], "vout": coin["vout"]}], True)
        before = {m: wrpc(d, m) for m in ("getbalances", "listlabels", "listlockunspent", "listunspent")}
        before["listtransactions"] = wrpc(d, "listtransactions", "*", 1000)
        assert before["listlockunspent"] and len(before["listtransactions"]) == 101
    with QuillDaemon(tmp_path, *args) as d:
        assert d.rpc("listwallets") == ["w"]     # load_on_startup
        after = {m: wrpc(d, m) for m in ("getbalances", "listlabels", "listlockunspent", "listunspent")}
        after["listtransactions"] = wrpc(d, "listtransactions", "*", 1000)
    assert after == before


def ready_one(daemons, timeout=60.0):
    """The one of `daemons` that took over (answers RPC); the others still wait."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for d in daemons:
            assert d.proc.poll() is None, d.proc.stderr.read().decode()
            try:
                d.wait_ready(timeout=0.05)
                return d
            except TimeoutError:
                pass
    raise TimeoutError("no stand-by took over")


def test_three_daemons_a_stand_by_takes_over_from_a_killed_leader(tmp_path, database):
    """Three quilld on one database: the first writes the chain and serves, the others wait. kill -9
    of the one serving while it connects blocks to a wallet: another takes over within seconds, every
    block it acknowledged is there, and the wallet (loaded at start-up, from the settings in the
    store) equals a fresh rescan of its descriptors. Twice, so that the last one serves in the end."""
    keys = Keys(sha256(b"pg-failover"))
    daemons = [QuillDaemon(tmp_path / "a", *AUTH, f"-store={database}").start()]
    try:
        leader = daemons[0]
        leader.rpc("createwallet", "w", True, True, None, None, None, True)    # load_on_startup
        assert all(r["success"] for r in wrpc(leader, "importdescriptors", keys.import_requests()))
        address = wrpc(leader, "getnewaddress")
        daemons += [QuillDaemon(tmp_path / name, *AUTH, f"-store={database}", wait=False).start() for name in "bc"]
        time.sleep(1)
        assert all(d.proc.poll() is None for d in daemons[1:])
        for d in daemons[1:]:       # a stand-by serves nothing
            with pytest.raises(OSError):
                d.rpc("getblockcount", timeout=2)
        acknowledged: list[str] = []
        for round_ in range(2):
            stop = threading.Event()

            def mine(d=leader, stop=stop):
                try:
                    while not stop.is_set():
                        acknowledged.extend(d.rpc("generatetoaddress", 1, address))
                except (RPCFailure, OSError):       # the connection dies with the process
                    pass
            miner = threading.Thread(target=mine)
            miner.start()
            deadline = time.monotonic() + 30
            while len(acknowledged) < 5 * (round_ + 1) and time.monotonic() < deadline:
                time.sleep(0.01)
            leader.proc.send_signal(signal.SIGKILL)
            killed_at = time.monotonic()
            leader.proc.wait()
            stop.set()
            miner.join()
            waiting = [d for d in daemons if d.proc.poll() is None]
            leader = ready_one(waiting)
            takeover = time.monotonic() - killed_at
            assert takeover < 10, takeover
            for h in acknowledged:
                assert leader.rpc("getblockheader", h)["confirmations"] >= 1
            assert leader.rpc("listwallets") == ["w"]
            fresh = f"fresh{round_}"
            leader.rpc("createwallet", fresh, True, True)
            assert all(r["success"] for r in wrpc(leader, "importdescriptors", keys.import_requests(), wallet=fresh))
            mine_, theirs = wrpc(leader, "listsinceblock", ""), wrpc(leader, "listsinceblock", "", wallet=fresh)
            assert mine_["lastblock"] == theirs["lastblock"] == leader.rpc("getbestblockhash")
            assert multiset(mine_["transactions"]) == multiset(theirs["transactions"])
            assert len(mine_["transactions"]) >= len(acknowledged)
            assert wrpc(leader, "getbalances") == wrpc(leader, "getbalances", wallet=fresh)
            leader.rpc("unloadwallet", fresh)
    finally:
        for d in daemons:
            d.stop()


def test_a_writer_that_loses_its_connection_stops_and_a_stand_by_takes_over(tmp_path, cluster, database):
    """The server ends the writer's session (as a network cut or a server restart would): the
    writer shuts down within seconds (its lock is gone, another may write), the stand-by serves."""
    from quill.chain.pg_store import CHAIN_LOCK_CLASS
    db = database.rsplit("/", 1)[1]
    a = QuillDaemon(tmp_path / "a", *AUTH, f"-store={database}").start()
    b = QuillDaemon(tmp_path / "b", *AUTH, f"-store={database}", wait=False).start()
    try:
        a.rpc("createwallet", "w", True, True, None, None, None, True)
        tip = a.rpc("generatetoaddress", 2, ANYONE_ADDRESS)[-1]
        cluster.sql("SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype='advisory' AND granted "
                    f"AND classid={CHAIN_LOCK_CLASS} AND database=(SELECT oid FROM pg_database WHERE datname='{db}')",
                    db=db)
        assert a.proc.wait(timeout=20) == 1
        assert "Lost the connection to the PostgreSQL store" in a.debug_log()
        assert ready_one([b]) is b
        assert b.rpc("getbestblockhash") == tip and b.rpc("listwallets") == ["w"]
    finally:
        a.stop()
        b.stop()


def test_a_wallet_is_held_by_one_process_at_a_time(tmp_path, database):
    """The advisory lock on a loaded wallet: another process (here the in-process catalog, as a
    second quilld would) cannot load it until the daemon unloads it."""
    from quill.wallet.errors import WalletError
    from quill.wallet.pg_store import PgCatalog
    with QuillDaemon(tmp_path, *AUTH, f"-store={database}") as d:
        d.rpc("createwallet", "w", True, True)
        other = PgCatalog(database, "regtest")
        try:
            with pytest.raises(WalletError) as refused:
                other.open("w", create=False)
            assert refused.value.message == IN_USE
            d.rpc("unloadwallet", "w")
            store = other.open("w", create=False)
            with pytest.raises(RPCFailure) as held:
                d.rpc("loadwallet", "w")
            assert held.value.message == IN_USE
            other.release("w", store)
            assert d.rpc("loadwallet", "w") == {"name": "w"}
        finally:
            other.close()


def test_an_old_schema_is_migrated_on_load(tmp_path, cluster, database):
    """A wallet at schema version 1 (no indexes, no tx_values) reaches the current version."""
    db = database.rsplit("/", 1)[1]
    with QuillDaemon(tmp_path, *AUTH, f"-store={database}") as d:
        d.rpc("createwallet", "w", True, True)
        d.rpc("unloadwallet", "w")
        wallet_id = cluster.sql("SELECT id FROM quill_wallets WHERE name='w'", db=db)[0][0]
        schema = f"wallet_{wallet_id}"
        cluster.sql(f"DROP TABLE {schema}.tx_values; DROP INDEX {schema}.txs_by_height, {schema}.txs_unconfirmed, "
                    f"{schema}.spends_by_txid; UPDATE {schema}.meta SET int_value=1 WHERE key='schema_version'", db=db)
        d.rpc("loadwallet", "w")
        assert cluster.sql(f"SELECT int_value FROM {schema}.meta WHERE key='schema_version'", db=db) == [(3,)]
        assert cluster.sql(f"SELECT to_regclass('{schema}.tx_values') IS NOT NULL", db=db) == [(True,)]
        cluster.sql(f"UPDATE {schema}.meta SET int_value=99 WHERE key='schema_version'", db=db)
        d.rpc("unloadwallet", "w")
        with pytest.raises(RPCFailure) as newer:
            d.rpc("loadwallet", "w")
        assert "wallet schema version 99 is newer than this software (3)" in newer.value.message


def refused_start(tmp_path, store):
    d = QuillDaemon(tmp_path, *AUTH, f"-store={store}", wait=False)
    d.start()
    _, err = d.proc.communicate(timeout=60)
    return d.proc.returncode, err.decode(), d.debug_log()


@pytest.mark.parametrize("case", ["unknown-scheme", "no-database", "unreachable", "wrong-password",
                                  "no-such-database"])
def test_a_bad_store_is_refused_at_start_clearly(tmp_path, cluster, case):
    secret = "s3cret-Pa55"
    store = {
        "unknown-scheme": f"mysql://quill:{secret}@127.0.0.1/db",
        "no-database": f"postgresql://quill:{secret}@127.0.0.1:{cluster.port}",
        "unreachable": f"postgresql://quill:{secret}@127.0.0.1:1/db",
        "wrong-password": f"postgresql://{postgres.PASSWORD_ROLE}:{secret}@127.0.0.1:{cluster.port}/postgres",
        "no-such-database": f"postgresql://quill:{secret}@127.0.0.1:{cluster.port}/absent",
    }[case]
    code, err, log = refused_start(tmp_path, store)
    assert code == 1
    assert err.startswith("Error: ") and "Traceback" not in err, err
    assert secret not in err and secret not in log
    expected = {"unknown-scheme": "unknown store", "no-database": "names no database",
                "unreachable": "cannot connect", "wrong-password": "password authentication failed",
                "no-such-database": 'database "absent" does not exist'}[case]
    assert expected in err, err


def test_a_password_in_the_url_works_and_is_never_logged(tmp_path, cluster):
    store = f"postgresql://{postgres.PASSWORD_ROLE}:{PASSWORD}@127.0.0.1:{cluster.port}/postgres"
    cluster.sql("DROP DATABASE IF EXISTS pwdb")
    cluster.sql(f"CREATE DATABASE pwdb OWNER {postgres.PASSWORD_ROLE}")
    store = store.rsplit("/", 1)[0] + "/pwdb"
    with QuillDaemon(tmp_path, *AUTH, "-debug=1", f"-store={store}") as d:
        d.rpc("createwallet", "w", True, True)
        assert d.rpc("listwalletdir")["wallets"] == [{"name": "w", "warnings": []}]
        with pytest.raises(RPCFailure) as missing:
            d.rpc("loadwallet", "nope")
        assert PASSWORD not in missing.value.message
        log = d.debug_log()
    assert "postgresql://quill_pw:***@127.0.0.1" in log and PASSWORD not in log


def test_the_password_may_come_from_a_pgpass_file(tmp_path, cluster, monkeypatch):
    """libpq's password file: the URL names no password; a wrong one in the file is refused."""
    cluster.sql("DROP DATABASE IF EXISTS passfiledb")
    cluster.sql(f"CREATE DATABASE passfiledb OWNER {postgres.PASSWORD_ROLE}")
    store = f"postgresql://{postgres.PASSWORD_ROLE}@127.0.0.1:{cluster.port}/passfiledb"
    passfile = tmp_path / "pgpass"
    monkeypatch.setenv("PGPASSFILE", str(passfile))
    passfile.write_text(f"127.0.0.1:{cluster.port}:passfiledb:{postgres.PASSWORD_ROLE}:wrong-one\n")
    passfile.chmod(0o600)
    code, err, _ = refused_start(tmp_path / "refused", store)
    assert code == 1 and "password authentication failed" in err and "wrong-one" not in err
    passfile.write_text(f"127.0.0.1:{cluster.port}:passfiledb:{postgres.PASSWORD_ROLE}:{PASSWORD}\n")
    with QuillDaemon(tmp_path / "ok", *AUTH, f"-store={store}") as d:
        assert d.rpc("createwallet", "w", True, True) == {"name": "w"}
