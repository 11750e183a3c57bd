"""An instance reads again only what another instance changed in a wallet (docs/postgresql.md
"Several quilld"): each commit records the tables it wrote (quill_changes), and an instance whose
memory is behind reads those tables' memory again, not the whole wallet. After writes interleaved
over three quilld (addresses, labels, coin locks, a second descriptor's import and rescan, blocks
paying the wallet, a spend), every instance answers as the others do and as a quilld that loads the
wallet afresh, and the instances' logs (-debug=wallet) show partial reads only. Real PostgreSQL
and real quilld processes."""
from quill.tx.hashes import sha256
from tests.kit.anyone import ANYONE_ADDRESS
from tests.kit.rpc_daemon import QuillDaemon
from tests.wallet_e2e.e2ekit import FOREIGN, Coin, Keys, build_tx, multiset, strip_times
from tests.wallet_pg.test_instances import AUTH, cluster, database, wrpc  # noqa: F401 (fixtures)

READ_AGAIN = "Wallet w changed by another quilld: "


def snapshot(d):
    """What the wallet answers on `d`, times left out (each instance received the same transactions
    at its own time)."""
    labels = wrpc(d, "listlabels")
    info = wrpc(d, "getwalletinfo")
    return {
        "balances": wrpc(d, "getbalances"),
        "unspent": wrpc(d, "listunspent", 0),
        "locked": sorted(wrpc(d, "listlockunspent"), key=lambda o: (o["txid"], o["vout"])),
        "labels": labels,
        "by label": {label: wrpc(d, "getaddressesbylabel", label) for label in labels},
        "transactions": strip_times(wrpc(d, "listtransactions", "*", 1000)),
        "since": multiset(wrpc(d, "listsinceblock")["transactions"]),
        "descriptors": wrpc(d, "listdescriptors"),
        "info": {k: v for k, v in info.items() if k not in ("scanning", "birthtime")},
    }


def test_interleaved_writes_leave_every_instance_equal_to_a_fresh_load(tmp_path, database):  # noqa: F811
    keys, other = Keys(sha256(b"pg-incremental")), Keys(sha256(b"pg-incremental-2"))
    pg = [QuillDaemon(tmp_path / f"i{k}", *AUTH, f"-store={database}", "-debug=wallet").start() for k in range(3)]
    fresh = None
    try:
        pg[0].rpc("createwallet", "w", True, True, None, None, None, True)
        for d in pg[1:]:
            d.rpc("loadwallet", "w")

        def all_equal():
            first = snapshot(pg[0])
            for d in pg[1:]:
                assert snapshot(d) == first
            return first

        assert all(r["success"] for r in wrpc(pg[1], "importdescriptors", keys.import_requests()))
        all_equal()
        paid = wrpc(pg[2], "getnewaddress", "customer-1")
        wrpc(pg[0], "getnewaddress", "customer-2")
        all_equal()
        assert len(pg[1].rpc("generatetoaddress", 101, paid)) == 101       # passed to the leader
        pg[1].rpc("generatetoaddress", 3, ANYONE_ADDRESS)
        all_equal()
        wrpc(pg[2], "setlabel", paid, "customer-7")
        state = all_equal()
        coins = sorted(state["unspent"], key=lambda c: (c["txid"], c["vout"]))
        assert len(coins) == 4
        assert wrpc(pg[0], "lockunspent", False, [{"txid": coins[0]["txid"], "vout": coins[0]["vout"]}], True)
        all_equal()
        # a spend of one coin, to someone else and back to the wallet's change, sent through a replica
        spent = coins[1]
        coin = Coin(bytes.fromhex(spent["txid"])[::-1], spent["vout"], round(spent["amount"] * 100_000_000),
                    bytes.fromhex(spent["scriptPubKey"]))
        change = bytes.fromhex(wrpc(pg[0], "getaddressinfo", wrpc(pg[0], "getrawchangeaddress"))["scriptPubKey"])
        tx = build_tx([coin], [(FOREIGN, 100_000_000), (change, coin.value - 100_010_000)], keys)
        assert pg[2].rpc("sendrawtransaction", tx.hex()) == tx.txid_hex()
        all_equal()
        pg[0].rpc("generatetoaddress", 1, ANYONE_ADDRESS)
        all_equal()
        # a second descriptor, imported with a rescan on one instance
        request = [{"desc": other.receive, "timestamp": 0, "range": [0, 5]}]
        assert wrpc(pg[1], "importdescriptors", request)[0]["success"]
        all_equal()
        assert wrpc(pg[2], "lockunspent", True, [{"txid": coins[0]["txid"], "vout": coins[0]["vout"]}])
        wrpc(pg[0], "setlabel", paid, "customer-8")
        state = all_equal()
        assert state["labels"] == ["customer-2", "customer-8"] and state["locked"] == []
        assert len(state["descriptors"]["descriptors"]) == 3
        # a quilld that reads the wallet whole, at load, answers the same
        fresh = QuillDaemon(tmp_path / "fresh", *AUTH, f"-store={database}").start()
        assert fresh.rpc("listwallets") == ["w"]        # loaded at start (load_on_startup)
        assert snapshot(fresh) == state
        # each instance read again only what the others changed: never the whole wallet
        reads = [line.split(READ_AGAIN, 1)[1] for d in pg for line in d.debug_log().splitlines() if READ_AGAIN in line]
        assert reads and "everything read again" not in reads
        assert "addrbook read again" in reads           # a label: the address book alone
        assert any("txs" in r and "txouts" in r for r in reads)      # blocks paying the wallet
    finally:
        for d in [*pg, fresh]:
            if d is not None and d.proc.poll() is None:
                d.stop()


def test_the_change_log_names_the_tables_written_and_none_once_it_is_trimmed(cluster, database):  # noqa: F811
    """Two processes' connections to one wallet (two catalogs): the other's commits are named by the
    tables they wrote; once the log no longer holds each commit since a connection's version (it
    keeps the last CHANGES_KEPT), it answers None: read everything again."""
    from quill.wallet.pg_store import PgCatalog, read_version
    writer_catalog, reader_catalog = PgCatalog(database, "regtest"), PgCatalog(database, "regtest")
    writer = writer_catalog.open("w", True)
    reader = reader_catalog.open("w", False)
    try:
        known = reader.db.known_version
        with writer.batch():
            writer.set_address("bcrt1qexample", "customer", "receive")
        with writer.batch():
            writer.set_meta("tip_height", 7)
            writer.insert_tx(b"\x01" * 32, writer.next_seq(), b"\x00" * 60, False, 1, 1)
        with writer.batch():        # a transaction that changed nothing is no version
            writer.get_meta("tip_height")
        newest = read_version(reader.db.conn, reader.db.version_key)
        assert newest == known + 2
        assert reader.db.tables_changed(newest) == {"addrbook", "meta", "txs"}
        assert reader.db.tables_changed(known + 1) == {"addrbook"}
        for k in range(3):
            with writer.batch():
                writer.set_meta("tip_height", 8 + k)
        newest = read_version(reader.db.conn, reader.db.version_key)
        assert reader.db.tables_changed(newest) == {"addrbook", "meta", "txs"}
        # as after CHANGES_KEPT more commits: the oldest entries trimmed, the last one kept
        cluster.sql(f"DELETE FROM quill_changes WHERE v < {newest}", db=database.rsplit("/", 1)[1])
        assert reader.db.tables_changed(newest) is None
        reader.db.known_version = newest - 1
        assert reader.db.tables_changed(newest) == {"meta"}
    finally:
        writer.close()
        reader.close()
        writer_catalog.close()
        reader_catalog.close()
