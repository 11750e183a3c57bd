"""What a test daemon's store holds, read directly, on either backend: its chain.sqlite and
wallet.sqlite files by default, the data directory's PostgreSQL database under
QUILL_TEST_STORE=postgresql (tests.kit.postgres), so a test that looks behind quilld's answers
(a follower storing headers only, a rescan's progress) checks the same thing on both stores.

The statements are written once, in what both engines read alike (`?` placeholders are rewritten
for PostgreSQL as the stores rewrite theirs, quill.postgres.translate).
"""
from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from quill import postgres as pg
from tests.kit import postgres


def _pg_rows(datadir: Path, schema: str, sql: str, params: tuple) -> list[tuple]:
    import psycopg
    with psycopg.connect(postgres.store_url_for(datadir), autocommit=True) as conn:
        conn.execute(f"SET search_path TO {schema}")
        return [tuple(row) for row in conn.execute(pg.translate(sql), params or None).fetchall()]


def _sqlite_rows(path: Path, sql: str, params: tuple) -> list[tuple]:
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return db.execute(sql, params).fetchall()
    finally:
        db.close()


def chain_rows(daemon: Any, sql: str, *params: Any) -> list[tuple]:
    """`sql`'s rows in the daemon's chain store (its tables: blocks, utxo, mempool, ...)."""
    if postgres.wanted():
        return _pg_rows(daemon.datadir, f"chain_{daemon.chain}", sql, params)
    return _sqlite_rows(daemon.chain_dir / "chain.sqlite", sql, params)


def wallet_meta(daemon: Any, wallet: str, key: str) -> Any:
    """The value of `key` in wallet `wallet`'s meta table (rescan_next, tip_height, ...); None
    when absent."""
    if postgres.wanted():
        with_id = _pg_rows(daemon.datadir, "public", "SELECT id FROM quill_wallets WHERE chain = ? AND name = ?",
                           (daemon.chain, wallet))
        assert with_id, f"no wallet {wallet!r} in the store"
        rows = _pg_rows(daemon.datadir, f"wallet_{with_id[0][0]}",
                        "SELECT int_value, text_value FROM meta WHERE key = ?", (key,))
        if not rows:
            return None
        return rows[0][0] if rows[0][0] is not None else rows[0][1]
    rows = _sqlite_rows(daemon.chain_dir / "wallets" / wallet / "wallet.sqlite",
                        "SELECT value FROM meta WHERE key = ?", (key,))
    return rows[0][0] if rows else None


def open_chain(datadir: Path, chain: str = "regtest") -> Any:
    """The chain a test quilld on `datadir` keeps, opened in this process (started; close it
    before the daemon starts again): <datadir>/<chain>/chain.sqlite, or the chain's schema in the
    data directory's database under QUILL_TEST_STORE=postgresql."""
    from quill.chain.service import ChainService
    store_factory = None
    if postgres.wanted():
        from quill.chain.pg_store import PgChainStore
        url = postgres.store_url_for(datadir)
        store_factory = lambda: PgChainStore(url, chain)  # noqa: E731
    return ChainService(chain, str(Path(datadir) / chain), store_factory=store_factory).start()
