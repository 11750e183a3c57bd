"""-store=postgresql://... on a real PostgreSQL server (tests.kit.postgres): the wallets'
layout, their versioned migrations, wallets held by several processes at once, and start-up refusals
that are clear and never show the password. The wallet suite itself also runs on PostgreSQL
(QUILL_TEST_STORE=postgresql, tests/run_suite.py); these are what only this store has."""
import time

import pytest

from quill.tx.hashes import sha256
from tests.kit import postgres
from tests.kit.anyone import ANYONE_ADDRESS
from tests.kit.rpc_daemon import QuillDaemon, RPCFailure
from tests.wallet_e2e.e2ekit import Keys

AUTH = ("-rpcuser=pg", "-rpcpassword=test")
PASSWORD = "pw-not-in-logs"       # the password role's (tests.kit.postgres)


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


def test_a_writer_that_loses_its_connection_stops_and_a_replica_takes_over(tmp_path, cluster, database):
    """The server ends the leader's session (as a network cut or a server restart would): the
    leader shuts down within seconds (its lock is gone, another may lead), the replica, which
    answered all along, leads: it mines."""
    from quill.chain.pg_store import CHAIN_LOCK_CLASS
    db = database.rsplit("/", 1)[1]
    a = QuillDaemon(tmp_path / "a", *AUTH, f"-store={database}").start()
    b = QuillDaemon(tmp_path / "b", *AUTH, f"-store={database}").start()
    try:
        a.rpc("createwallet", "w", True, True, None, None, None, True)
        tip = a.rpc("generatetoaddress", 2, ANYONE_ADDRESS)[-1]
        assert b.rpc("getbestblockhash") == tip
        cluster.sql("SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype='advisory' AND granted "
                    f"AND classid={CHAIN_LOCK_CLASS} AND database=(SELECT oid FROM pg_database WHERE datname='{db}')",
                    db=db)
        assert a.proc.wait(timeout=20) == 1
        assert "Lost the connection to the PostgreSQL store" in a.debug_log()
        deadline = time.monotonic() + 20
        while "now leads the regtest chain" not in b.debug_log():
            assert time.monotonic() < deadline
            time.sleep(0.05)
        assert b.rpc("getbestblockhash") == tip and b.rpc("listwallets") == ["w"]
        assert len(b.rpc("generatetoaddress", 1, ANYONE_ADDRESS)) == 1
    finally:
        a.stop()
        b.stop()


def test_every_process_may_hold_a_wallet_and_writes_follow_each_other(tmp_path, database):
    """No process holds a wallet alone any more (docs/postgresql.md): another process opens it while
    the daemon has it loaded, writes a label, and the daemon answers it at once (read your writes);
    unload and load again work meanwhile."""
    from quill.wallet.pg_store import PgCatalog
    keys = Keys(sha256(b"pg-holders"))
    with QuillDaemon(tmp_path, *AUTH, f"-store={database}") as d:
        d.rpc("createwallet", "w", True, True)
        assert all(r["success"] for r in wrpc(d, "importdescriptors", keys.import_requests()))
        address = wrpc(d, "getnewaddress")
        other = PgCatalog(database, "regtest")
        try:
            store = other.open("w", create=False)
            with store.batch():
                store.db.execute("INSERT INTO addrbook(address, label, purpose) VALUES(?, ?, ?) ON CONFLICT(address)"
                                 " DO UPDATE SET label=excluded.label", (address, "from-elsewhere", "receive"))
            assert wrpc(d, "getaddressinfo", address)["labels"] == ["from-elsewhere"]
            d.rpc("unloadwallet", "w")
            assert d.rpc("loadwallet", "w") == {"name": "w"}
            other.release("w", store)
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
