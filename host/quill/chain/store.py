"""SQLite storage of the chain: block index and data, UTXO set, undo data, txindex, the mempool,
the spender index.

One file, <chain_datadir>/chain.sqlite, in WAL mode. Each block connect or
disconnect is ONE SQLite transaction (`with store.transaction():`) covering
the tip, the UTXO changes, the undo record and the txindex, so a process
killed at any instant restarts on a consistent chain. The schema carries a
version; MIGRATIONS lists the steps from an empty file to the current one.

With -store=postgresql:// the same tables live in the PostgreSQL store (PgChainStore,
quill.chain.pg_store); the queries here are written once, in what both engines read alike.
"""
import os
import sqlite3

from quill.atomic_store import Transactions

from .coins import Coin

FILENAME = "chain.sqlite"

MIGRATIONS = [
    # 1: block index with data, active tip, UTXO set, undo data, txindex
    """
    CREATE TABLE blocks(hash BLOB PRIMARY KEY, prev BLOB NOT NULL, height INTEGER NOT NULL,
                        header BLOB NOT NULL, n_tx INTEGER NOT NULL, raw BLOB NOT NULL,
                        status INTEGER NOT NULL, seq INTEGER NOT NULL) WITHOUT ROWID;
    CREATE TABLE meta(key TEXT PRIMARY KEY, value BLOB NOT NULL) WITHOUT ROWID;
    CREATE TABLE utxo(txid BLOB NOT NULL, n INTEGER NOT NULL, value INTEGER NOT NULL, script BLOB NOT NULL,
                      height INTEGER NOT NULL, coinbase INTEGER NOT NULL, PRIMARY KEY(txid, n)) WITHOUT ROWID;
    CREATE TABLE undo(hash BLOB PRIMARY KEY, data BLOB NOT NULL) WITHOUT ROWID;
    CREATE TABLE txindex(txid BLOB PRIMARY KEY, block BLOB NOT NULL) WITHOUT ROWID;
    """,
    # 2: the mempool survives a restart (Core's mempool.dat)
    """
    CREATE TABLE mempool(seq INTEGER PRIMARY KEY AUTOINCREMENT, txid BLOB UNIQUE NOT NULL,
                         raw BLOB NOT NULL, time INTEGER NOT NULL);
    """,
    # 3: the spender index (Core's -txospenderindex): who spends each output, in which block;
    # meta "txospenderindex" holds the hash of the last block it covers
    """
    CREATE TABLE txospender(txid BLOB NOT NULL, n INTEGER NOT NULL, spender BLOB NOT NULL,
                            block BLOB NOT NULL, PRIMARY KEY(txid, n)) WITHOUT ROWID;
    """,
    # 4: each stored block's txids (32 bytes each, in block order) and stripped size, written with
    # the block: getblock at verbosity 1 reads them instead of walking the block (blocks stored
    # before this version have none, and are walked)
    """
    CREATE TABLE block_txids(hash BLOB PRIMARY KEY, txids BLOB NOT NULL,
                             stripped_size INTEGER NOT NULL) WITHOUT ROWID;
    """,
]
SCHEMA_VERSION = len(MIGRATIONS)


class StoreError(Exception):
    pass


class ChainStore:
    MIGRATIONS = MIGRATIONS
    on_local_disk = True      # Core's free-space check applies (not to a PostgreSQL store)
    read_only = False         # a replica's view of a PostgreSQL store: the leader writes the mempool

    def __init__(self, chain_datadir: str):
        os.makedirs(chain_datadir, exist_ok=True)
        path = os.path.join(chain_datadir, FILENAME)
        # Autocommit mode: transactions are explicit, one per chain change.
        db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        db.execute("PRAGMA journal_mode=WAL")
        # NORMAL is atomic and consistent across a killed process in WAL mode.
        db.execute("PRAGMA synchronous=NORMAL")
        self._attach(db, path)
        self.migrate()

    def _attach(self, db, path: str) -> None:
        self.db = db
        self.path = path
        # All-or-nothing, memory included: the chain state sets transaction.resync.
        self.transaction = Transactions(db, path)

    # -- schema -----------------------------------------------------------------

    def schema_version(self) -> int:
        self.db.execute("CREATE TABLE IF NOT EXISTS schema_version(version INTEGER NOT NULL)")
        row = self.db.execute("SELECT version FROM schema_version").fetchone()
        return row[0] if row else 0

    def migrate(self) -> None:
        with self.transaction():
            version = self.schema_version()
            if version > SCHEMA_VERSION:
                raise StoreError(f"{self.path} has schema version {version}, newer than this Quill ({SCHEMA_VERSION})")
            for step in range(version, SCHEMA_VERSION):
                for statement in self.MIGRATIONS[step].split(";"):
                    if statement.strip():
                        self.db.execute(statement)
            self.db.execute("DELETE FROM schema_version")
            self.db.execute("INSERT INTO schema_version VALUES (?)", (SCHEMA_VERSION,))

    def close(self) -> None:
        self.db.close()

    def size_on_disk(self) -> int:
        return sum(os.path.getsize(p) for p in (self.path, self.path + "-wal") if os.path.exists(p))

    # -- meta -------------------------------------------------------------------

    def get_meta(self, key: str):
        row = self.db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def set_meta(self, key: str, value: bytes) -> None:
        self.db.execute("INSERT INTO meta VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                        (key, value))

    # -- blocks -----------------------------------------------------------------

    def add_block(self, hash_, prev, height, header, n_tx, raw, status, seq) -> None:
        self.db.execute("INSERT INTO blocks VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                        (hash_, prev, height, header, n_tx, raw, status, seq))

    def add_block_txids(self, hash_, txids: list[bytes], stripped_size: int) -> None:
        self.db.execute("INSERT INTO block_txids VALUES (?, ?, ?) ON CONFLICT(hash) DO UPDATE SET "
                        "txids = excluded.txids, stripped_size = excluded.stripped_size",
                        (hash_, b"".join(txids), stripped_size))

    def block_txids(self, hash_) -> tuple[list[bytes], int] | None:
        """(txids in block order, stripped size) of a stored block, or None (stored before schema 4)."""
        row = self.db.execute("SELECT txids, stripped_size FROM block_txids WHERE hash = ?", (hash_,)).fetchone()
        if row is None:
            return None
        data = row[0]
        return [data[i:i + 32] for i in range(0, len(data), 32)], row[1]

    def set_status(self, hash_, status) -> None:
        self.db.execute("UPDATE blocks SET status = ? WHERE hash = ?", (status, hash_))

    def block_rows(self):
        """(hash, prev, height, header, n_tx, status, seq) of every stored block, parents first."""
        return self.db.execute("SELECT hash, prev, height, header, n_tx, status, seq FROM blocks "
                               "ORDER BY height, seq").fetchall()

    def block_raw(self, hash_):
        row = self.db.execute("SELECT raw FROM blocks WHERE hash = ?", (hash_,)).fetchone()
        return row[0] if row else None

    # -- UTXO set and undo ------------------------------------------------------

    def get_coin(self, txid: bytes, n: int):
        row = self.db.execute("SELECT value, script, height, coinbase FROM utxo WHERE txid = ? AND n = ?",
                              (txid, n)).fetchone()
        return Coin(row[0], row[1], row[2], bool(row[3])) if row else None

    def has_outputs(self, txid: bytes) -> bool:
        return self.db.execute("SELECT 1 FROM utxo WHERE txid = ? LIMIT 1", (txid,)).fetchone() is not None

    def add_coins(self, rows) -> None:
        """rows: (txid, n, value, script, height, coinbase)."""
        self.db.executemany("INSERT INTO utxo VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(txid, n) DO UPDATE SET "
                            "value = excluded.value, script = excluded.script, height = excluded.height, "
                            "coinbase = excluded.coinbase", rows)

    def spend_coins(self, keys) -> None:
        self.db.executemany("DELETE FROM utxo WHERE txid = ? AND n = ?", keys)

    def iter_coins(self):
        """Every unspent output as (txid, n, Coin), in outpoint order."""
        for txid, n, value, script, height, coinbase in self.db.execute(
                "SELECT txid, n, value, script, height, coinbase FROM utxo ORDER BY txid, n"):
            yield bytes(txid), n, Coin(value, bytes(script), height, bool(coinbase))

    def utxo_count(self) -> int:
        return self.db.execute("SELECT COUNT(*) FROM utxo").fetchone()[0]

    def put_undo(self, hash_, data: bytes) -> None:
        self.db.execute("INSERT INTO undo VALUES (?, ?) ON CONFLICT(hash) DO UPDATE SET data = excluded.data",
                        (hash_, data))

    def get_undo(self, hash_):
        row = self.db.execute("SELECT data FROM undo WHERE hash = ?", (hash_,)).fetchone()
        return row[0] if row else None

    def delete_undo(self, hash_) -> None:
        self.db.execute("DELETE FROM undo WHERE hash = ?", (hash_,))

    # -- txindex ----------------------------------------------------------------

    def index_txs(self, txids, block_hash) -> None:
        self.db.executemany("INSERT INTO txindex VALUES (?, ?) ON CONFLICT(txid) DO UPDATE SET block = excluded.block",
                            [(t, block_hash) for t in txids])

    def tx_block(self, txid):
        row = self.db.execute("SELECT block FROM txindex WHERE txid = ?", (txid,)).fetchone()
        return row[0] if row else None

    # -- mempool ----------------------------------------------------------------

    # -- spender index (quill.chain.spender_index) -------------------------------

    def add_spenders(self, rows: list[tuple[bytes, int, bytes, bytes]]) -> None:
        """rows: (spent txid, n, spending txid, block hash)."""
        self.db.executemany("INSERT INTO txospender VALUES (?, ?, ?, ?) ON CONFLICT(txid, n) DO UPDATE SET "
                            "spender = excluded.spender, block = excluded.block", rows)

    def remove_spenders(self, keys: list[tuple[bytes, int]]) -> None:
        self.db.executemany("DELETE FROM txospender WHERE txid = ? AND n = ?", keys)

    def spender(self, txid: bytes, n: int) -> tuple[bytes, bytes] | None:
        """(spending txid, block hash) of the indexed spend of (txid, n), or None."""
        row = self.db.execute("SELECT spender, block FROM txospender WHERE txid = ? AND n = ?", (txid, n)).fetchone()
        return (bytes(row[0]), bytes(row[1])) if row else None

    def mempool_add(self, txid, raw, time) -> None:
        if self.read_only:
            return
        # a replaced row goes to the end, as SQLite's INSERT OR REPLACE put it
        self.db.execute("DELETE FROM mempool WHERE txid = ?", (txid,))
        self.db.execute("INSERT INTO mempool(txid, raw, time) VALUES (?, ?, ?)", (txid, raw, time))

    def mempool_remove(self, txids) -> None:
        if self.read_only:
            return
        self.db.executemany("DELETE FROM mempool WHERE txid = ?", [(t,) for t in txids])

    def mempool_rows(self):
        return self.db.execute("SELECT raw, time FROM mempool ORDER BY seq").fetchall()
