"""PostgreSQL behind quilld's stores (-store=postgresql://user@host:port/dbname, docs/postgresql.md):
the URL checked, a connection opened with a clear error, and a connection that runs the SQLite
stores' SQL.

The stores write their SQL once, in the subset both engines read the same way (ON CONFLICT,
RETURNING); what remains is spelling, which `translate` rewrites: `?` placeholders become
`%s`, SQLite's `BEGIN IMMEDIATE` a plain `BEGIN`. What differs in kind (column types, the meta
table) each PostgreSQL store writes by hand.

psycopg is imported only here, and only when a PostgreSQL store is chosen: the SQLite default
never needs it. No message from this module holds the password: the URL's is cut out of every
error, and -store is a sensitive option (never logged).
"""
from __future__ import annotations

import functools
import re
import threading
from collections.abc import Iterable
from typing import Any
from urllib.parse import unquote, urlsplit

SCHEMES = ("postgresql", "postgres")


class StoreConfigError(Exception):
    """-store cannot be used: a bad URL, psycopg missing, the server unreachable or refusing."""


def check_url(url: str) -> None:
    """A libpq URL naming a database: postgresql://user[:password]@host[:port]/dbname."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        raise StoreConfigError(f"-store: invalid URL {redact(url)!r}") from None
    if parts.scheme not in SCHEMES:
        raise StoreConfigError(f"-store: unknown store {redact(url)!r} (sqlite, or postgresql://user@host:port/dbname)")
    if not parts.path.strip("/"):
        raise StoreConfigError(f"-store: {redact(url)!r} names no database (postgresql://user@host:port/dbname)")
    if port == 0:
        raise StoreConfigError(f"-store: invalid port in {redact(url)!r}")


def _password(url: str) -> str | None:
    try:
        password = urlsplit(url).password
    except ValueError:
        return None
    return unquote(password) if password else None


def redact(url: str, text: str | None = None) -> str:
    """`text` (the URL itself by default) with the URL's password replaced by ***."""
    if text is None:
        text = url
    try:
        raw = urlsplit(url).password
    except ValueError:
        raw = None
    for secret in {raw, _password(url)}:
        if secret:
            text = text.replace(secret, "***")
    return text


def connect(url: str) -> Any:
    """A psycopg connection in autocommit mode (each store issues its own BEGIN and COMMIT);
    StoreConfigError, with the server's reason and without the password, when it fails."""
    check_url(url)
    try:
        import psycopg
    except ImportError:
        raise StoreConfigError("-store=postgresql:// needs psycopg 3: pip install 'psycopg[binary]' "
                               "(or install quill with its postgresql extra)") from None
    try:
        return psycopg.connect(url, autocommit=True, connect_timeout=10, application_name="quilld")
    except psycopg.Error as e:
        reason = " ".join(str(e).split())
        raise StoreConfigError(f"cannot connect to the PostgreSQL store {redact(url)}: {redact(url, reason)}") from None


@functools.lru_cache(maxsize=512)
def translate(sql: str) -> str:
    """SQLite's spelling of a store statement, as PostgreSQL reads it."""
    if sql == "BEGIN IMMEDIATE":
        return "BEGIN"
    return re.sub(r"\?", "%s", sql)


class Connection:
    """The part of sqlite3.Connection the stores use (execute, executemany, total_changes,
    in_transaction, close), over one psycopg connection. One thread at a time: the store's
    lock serialises its users, as it does for SQLite."""

    def __init__(self, conn: Any) -> None:
        self.conn = conn
        self.total_changes = 0
        self.lock = threading.RLock()

    def execute(self, sql: str, params: Iterable[Any] = ()) -> Any:
        with self.lock:
            cur = self.conn.execute(translate(sql), tuple(params) or None)
            if cur.rowcount > 0 and not sql.startswith("SELECT"):   # a SELECT's rowcount is its rows
                self.total_changes += cur.rowcount
            return cur

    def executemany(self, sql: str, rows: Iterable[Iterable[Any]]) -> Any:
        with self.lock:
            cur = self.conn.cursor()
            cur.executemany(translate(sql), [tuple(r) for r in rows])
            if cur.rowcount > 0:
                self.total_changes += cur.rowcount
            return cur

    @property
    def in_transaction(self) -> bool:
        from psycopg.pq import TransactionStatus
        return bool(self.conn.info.transaction_status != TransactionStatus.IDLE)

    def close(self) -> None:
        self.conn.close()
