"""One wallet's SQLite file: schema, migrations and the queries the wallet needs.

WAL journal, synchronous=FULL: every chain event (block connected/disconnected,
mempool change) is one `with store.batch():` transaction that also records the
wallet's last processed block, so after a crash the file holds the state after
some whole event and the wallet resumes from the block it names.

listsinceblock reads only what changed since a block: a wallet tx's
`block_height` is the height of the block that confirms it or, for a conflicted
tx, of the block that conflicts it (Core's depth rule, core-wallet.md §2.3), and
unconfirmed txs sit in a partial index; both queries are indexed.
"""

import sqlite3
import threading

from quill.atomic_store import Transactions, writing
from quill.tx.hashes import sha256d

SCHEMA_VERSION = 3

# Wallet tx states (core-wallet.md §4.1). MEMPOOL is stored as such but reset to
# INACTIVE on load, as Core saves mempool txs as inactive.
INACTIVE, CONFIRMED, MEMPOOL, CONFLICTED = 0, 1, 2, 3

_SCHEMA_V1 = """
CREATE TABLE meta(key TEXT PRIMARY KEY, value);
CREATE TABLE descriptors(id INTEGER PRIMARY KEY, desc TEXT NOT NULL UNIQUE, timestamp INTEGER NOT NULL,
    range_start INTEGER NOT NULL, range_end INTEGER NOT NULL, next_index INTEGER NOT NULL,
    active INTEGER NOT NULL, internal INTEGER NOT NULL, output_type TEXT);
CREATE TABLE scripts(script BLOB NOT NULL, desc_id INTEGER NOT NULL, idx INTEGER NOT NULL,
    PRIMARY KEY(script, desc_id));
CREATE TABLE addrbook(address TEXT PRIMARY KEY, label TEXT, purpose TEXT);
CREATE TABLE txs(txid BLOB PRIMARY KEY, seq INTEGER NOT NULL UNIQUE, raw BLOB NOT NULL,
    coinbase INTEGER NOT NULL, state INTEGER NOT NULL, abandoned INTEGER NOT NULL,
    block_hash BLOB, block_height INTEGER, block_index INTEGER, block_time INTEGER,
    time_received INTEGER NOT NULL, time_smart INTEGER NOT NULL);
CREATE TABLE txouts(txid BLOB NOT NULL, n INTEGER NOT NULL, value INTEGER NOT NULL, script BLOB NOT NULL,
    PRIMARY KEY(txid, n));
CREATE TABLE spends(prev_txid BLOB NOT NULL, prev_n INTEGER NOT NULL, txid BLOB NOT NULL,
    PRIMARY KEY(prev_txid, prev_n, txid));
"""

# v2: the indexes that make listsinceblock(<recent block>) independent of the wallet's size.
_SCHEMA_V2 = """
CREATE INDEX txs_by_height ON txs(block_height);
CREATE INDEX txs_unconfirmed ON txs(state) WHERE state IN (0, 2);
CREATE INDEX spends_by_txid ON spends(txid);
"""

# v3: Core's CWalletTx::mapValue, the strings a wallet keeps beside a transaction (replaced_by_txid,
# replaces_txid). A value may be stored before its transaction reaches the wallet.
_SCHEMA_V3 = """
CREATE TABLE tx_values(txid BLOB NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL, PRIMARY KEY(txid, key));
"""

MIGRATIONS = {1: _SCHEMA_V1, 2: _SCHEMA_V2, 3: _SCHEMA_V3}

TX_COLUMNS = ("txid, seq, raw, coinbase, state, abandoned, block_hash, block_height, block_index, "
              "block_time, time_received, time_smart")


class StoreError(Exception):
    pass


class TxRow:
    """A wallet tx as stored; `raw` is parsed once per wallet, on first use, and the decoded
    transaction (with its txid and wtxid cached) is kept in `decoded`, the store's cache."""
    __slots__ = ("txid", "seq", "raw", "coinbase", "state", "abandoned", "block_hash",
                 "block_height", "block_index", "block_time", "time_received", "time_smart", "_decoded")

    def __init__(self, row, decoded=None):
        (self.txid, self.seq, self.raw, self.coinbase, self.state, self.abandoned, self.block_hash,
         self.block_height, self.block_index, self.block_time, self.time_received, self.time_smart) = row
        self.coinbase = bool(self.coinbase)
        self.abandoned = bool(self.abandoned)
        self._decoded = {} if decoded is None else decoded

    def wtxid(self) -> bytes:
        """Core's GetWitnessHash: `raw` is the transaction as serialized with its witness (as
        BIP144 hashes it), so its double SHA-256, without the decoded transaction's state check."""
        return sha256d(self.raw)

    @property
    def tx(self):
        tx = self._decoded.get(self.txid)
        if tx is None:
            from quill.tx.transaction import Transaction
            from quill.wallet.stored_tx import stored
            tx = self._decoded[self.txid] = stored(Transaction.from_bytes(self.raw))
        return tx


class Store:
    """One wallet's SQLite file. The queries are shared with quill.wallet.pg_store.PgStore, which
    runs them over PostgreSQL (quill.postgres.translate); what differs between the two engines is
    in the class attributes and the few methods PgStore writes its own way."""

    MIGRATIONS = MIGRATIONS
    LEAST, GREATEST = "MIN", "MAX"      # the two-argument minimum and maximum

    def __init__(self, path: str, create: bool):
        uri = f"file:{path}?mode={'rwc' if create else 'rw'}"
        try:
            db = sqlite3.connect(uri, uri=True, check_same_thread=False, isolation_level=None)
        except sqlite3.Error as e:
            raise StoreError(str(e)) from None
        self._attach(db, path)
        try:
            with writing(path):
                self.db.execute("PRAGMA journal_mode=WAL")
                self.db.execute("PRAGMA synchronous=FULL")
                self.db.execute("PRAGMA foreign_keys=OFF")
                self._migrate()
        except BaseException:
            self.db.close()
            raise

    def _attach(self, db, path: str) -> None:
        self.db = db
        self.path = path
        self.lock = threading.RLock()
        self.decoded: dict = {}      # txid -> Transaction: wallet txs are immutable once stored
        # Txids whose row, outputs or spends were written (committed or not) since the wallet's
        # cached credit last looked (quill.wallet.credit); the spender and the spent both, for a spend.
        self.touched: set = set()
        # One atomic transaction; nested batches join the outer one. All-or-nothing,
        # memory included: the wallet sets batch.resync.
        self.batch = Transactions(db, path, self.lock)

    def close(self):
        with self.lock:
            self.db.close()

    # -- schema ----------------------------------------------------------

    def _version(self) -> int:
        has_meta = self.db.execute(
            "SELECT 1 FROM sqlite_master WHERE type='table' AND name='meta'").fetchone()
        if not has_meta:
            return 0
        row = self.db.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
        return int(row[0]) if row else 0

    def _migrate(self):
        version = self._version()
        if version > SCHEMA_VERSION:
            raise StoreError(f"wallet schema version {version} is newer than this software ({SCHEMA_VERSION})")
        with self.batch():
            for v in range(version + 1, SCHEMA_VERSION + 1):
                # statement by statement: executescript() would COMMIT mid-migration
                for stmt in self.MIGRATIONS[v].strip().split(";"):
                    if stmt.strip():
                        self.db.execute(stmt)
                self.set_meta("schema_version", v)

    # -- transactions ----------------------------------------------------

    def changes(self) -> int:
        """Rows written since the file was opened: tells whether a step changed the wallet."""
        return self.db.total_changes

    # -- meta ------------------------------------------------------------

    def get_meta(self, key, default=None):
        row = self.db.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return default if row is None else row[0]

    def set_meta(self, key, value):
        self.db.execute("INSERT INTO meta(key, value) VALUES(?, ?) ON CONFLICT(key) DO UPDATE SET value=excluded.value",
                        (key, value))

    def delete_meta(self, key):
        self.db.execute("DELETE FROM meta WHERE key=?", (key,))

    # -- descriptors and scripts -------------------------------------------

    def descriptors(self):
        return self.db.execute(
            'SELECT id, "desc", timestamp, range_start, range_end, next_index, active, internal, output_type '
            "FROM descriptors ORDER BY id").fetchall()

    def descriptor_by_text(self, text):
        return self.db.execute('SELECT id FROM descriptors WHERE "desc"=?', (text,)).fetchone()

    def upsert_descriptor(self, text, timestamp, range_start, range_end, next_index, active, internal,
                          output_type) -> int:
        row = self.descriptor_by_text(text)
        if row is None:
            return self.db.execute(
                'INSERT INTO descriptors("desc", timestamp, range_start, range_end, next_index, active, internal,'
                " output_type) VALUES(?,?,?,?,?,?,?,?) RETURNING id",
                (text, timestamp, range_start, range_end, next_index, int(active), int(internal),
                 output_type)).fetchone()[0]
        least, greatest = self.LEAST, self.GREATEST
        self.db.execute(
            f"UPDATE descriptors SET timestamp=?, range_start={least}(range_start, ?),"
            f" range_end={greatest}(range_end, ?), next_index={greatest}(next_index, ?), active=?, internal=?"
            " WHERE id=?",
            (timestamp, range_start, range_end, next_index, int(active), int(internal), row[0]))
        return row[0]

    def deactivate(self, output_type, internal, keep_id):
        self.db.execute("UPDATE descriptors SET active=0 WHERE output_type=? AND internal=? AND id<>?",
                        (output_type, int(internal), keep_id))

    def set_range(self, desc_id, range_end, next_index):
        self.db.execute("UPDATE descriptors SET range_end=?, next_index=? WHERE id=?",
                        (range_end, next_index, desc_id))

    def add_scripts(self, rows):
        self.db.executemany("INSERT INTO scripts(script, desc_id, idx) VALUES(?,?,?) ON CONFLICT DO NOTHING", rows)

    def all_scripts(self):
        return self.db.execute("SELECT script, desc_id, idx FROM scripts")

    # -- address book ------------------------------------------------------

    def addrbook(self):
        return self.db.execute("SELECT address, label, purpose FROM addrbook").fetchall()

    def set_address(self, address, label, purpose):
        self.db.execute("INSERT INTO addrbook(address, label, purpose) VALUES(?,?,?) ON CONFLICT(address)"
                        " DO UPDATE SET label=excluded.label, purpose=excluded.purpose", (address, label, purpose))

    # -- wallet transactions -----------------------------------------------

    def get_tx(self, txid):
        row = self.db.execute(f"SELECT {TX_COLUMNS} FROM txs WHERE txid=?", (txid,)).fetchone()
        return None if row is None else TxRow(row, self.decoded)

    def has_tx(self, txid) -> bool:
        return self.db.execute("SELECT 1 FROM txs WHERE txid=?", (txid,)).fetchone() is not None

    def next_seq(self) -> int:
        row = self.db.execute("SELECT MAX(seq) FROM txs").fetchone()
        return 1 if row[0] is None else row[0] + 1

    def last_inserted(self, limit=16):
        return [TxRow(r, self.decoded) for r in self.db.execute(
            f"SELECT {TX_COLUMNS} FROM txs ORDER BY seq DESC LIMIT ?", (limit,))]

    def insert_tx(self, txid, seq, raw, coinbase, time_received, time_smart):
        self.touched.add(txid)
        self.db.execute(
            "INSERT INTO txs(txid, seq, raw, coinbase, state, abandoned, time_received, time_smart)"
            " VALUES(?,?,?,?,?,0,?,?)", (txid, seq, raw, int(coinbase), INACTIVE, time_received, time_smart))

    def set_state(self, txid, state, abandoned=False, block_hash=None, block_height=None,
                  block_index=None, block_time=None):
        self.touched.add(txid)
        self.db.execute(
            "UPDATE txs SET state=?, abandoned=?, block_hash=?, block_height=?, block_index=?, block_time=?"
            " WHERE txid=?",
            (state, int(abandoned), block_hash, block_height, block_index, block_time, txid))

    def txs_changed_since(self, height):
        """Txs confirmed or conflicted above `height`, plus every unconfirmed one."""
        rows = self.db.execute(f"SELECT {TX_COLUMNS} FROM txs WHERE block_height > ?", (height,)).fetchall()
        rows += self.db.execute(f"SELECT {TX_COLUMNS} FROM txs WHERE state IN (0, 2)").fetchall()
        return [TxRow(r, self.decoded) for r in rows]

    def all_txs(self):
        return [TxRow(r, self.decoded) for r in self.db.execute(f"SELECT {TX_COLUMNS} FROM txs ORDER BY seq")]

    def txs_in_states(self, states):
        marks = ",".join("?" * len(states))
        return [TxRow(r, self.decoded) for r in self.db.execute(
            f"SELECT {TX_COLUMNS} FROM txs WHERE state IN ({marks})", tuple(states))]

    def all_tx_values(self):
        return self.db.execute("SELECT txid, key, value FROM tx_values").fetchall()

    def set_tx_value(self, txid, key, value):
        self.db.execute("INSERT INTO tx_values(txid, key, value) VALUES(?,?,?) ON CONFLICT(txid, key)"
                        " DO UPDATE SET value=excluded.value", (txid, key, value))

    # -- outputs and spends --------------------------------------------------

    def add_txout(self, txid, n, value, script):
        self.touched.add(txid)
        self.db.execute("INSERT INTO txouts(txid, n, value, script) VALUES(?,?,?,?) ON CONFLICT DO NOTHING",
                        (txid, n, value, script))

    def txout(self, txid, n):
        return self.db.execute("SELECT value, script FROM txouts WHERE txid=? AND n=?", (txid, n)).fetchone()

    def all_txouts(self):
        return self.db.execute("SELECT txid, n, value, script FROM txouts")

    def add_spend(self, prev_txid, prev_n, txid):
        self.touched.update((prev_txid, txid))
        self.db.execute("INSERT INTO spends(prev_txid, prev_n, txid) VALUES(?,?,?) ON CONFLICT DO NOTHING",
                        (prev_txid, prev_n, txid))

    def spenders(self, prev_txid, prev_n):
        return [r[0] for r in self.db.execute(
            "SELECT txid FROM spends WHERE prev_txid=? AND prev_n=?", (prev_txid, prev_n))]

    def children(self, txid):
        """Wallet txs spending any output of `txid` (its in-wallet children)."""
        return [r[0] for r in self.db.execute(
            "SELECT DISTINCT s.txid FROM spends s JOIN txs t ON t.txid = s.txid WHERE s.prev_txid=?", (txid,))]

    def all_spends(self):
        return self.db.execute("SELECT prev_txid, prev_n, txid FROM spends")
