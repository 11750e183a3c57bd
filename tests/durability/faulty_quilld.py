"""quilld with one injected fault (tests only): while the file `<datadir>/fail-next-wallet-commit`
exists, the next commit of a wallet fails as on a full disk, and the file is removed: SQLite's
SQLITE_FULL for a wallet.sqlite file, PostgreSQL's disk_full (SQLSTATE 53100) for a wallet in
-store=postgresql.

    python -m tests.durability.faulty_quilld <quilld options>
"""
import os
import sqlite3
import sys

from quill import atomic_store
from quill.daemon.main import main

SQLITE_FULL = 13


def arm(datadir: str) -> None:
    flag = os.path.join(datadir, "fail-next-wallet-commit")

    def fail_next_wallet_commit(path: str) -> None:
        in_postgresql = path.startswith("PostgreSQL wallet '")     # quill.wallet.pg_store's name of a wallet
        if (path.endswith("wallet.sqlite") or in_postgresql) and os.path.exists(flag):
            os.remove(flag)
            if in_postgresql:
                import psycopg.errors
                raise psycopg.errors.DiskFull("could not extend file: No space left on device (injected)")
            error = sqlite3.OperationalError("database or disk is full")
            error.sqlite_errorcode = SQLITE_FULL
            raise error
    atomic_store.fault_injection = fail_next_wallet_commit


if __name__ == "__main__":
    datadir = next(a.split("=", 1)[1] for a in sys.argv[1:] if a.startswith("-datadir="))
    arm(datadir)
    sys.exit(main(sys.argv[1:]))
