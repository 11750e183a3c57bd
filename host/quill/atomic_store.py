"""What the chain's and the wallets' stores (SQLite, or PostgreSQL through quill.postgres) share:
one all-or-nothing transaction, the cause of a write that did not reach the disk, and Core's
free-space check.

All-or-nothing covers memory too. A store's owner (the chain state, a wallet) keeps indexes in
memory that it changes while its transaction runs. When the transaction does not commit, the
store rolls back and calls the owner's `resync`, which rebuilds those indexes from the file, so
that memory is exactly what the disk holds. Only the owner's own refusals (a block found invalid,
which it undoes itself) skip the resync: any other exception may have left memory half changed.

A write that fails for lack of space or an I/O error becomes StoreWriteFailed, which names the
file and the cause. When even the rollback or the resync fails, nothing in memory can be trusted
any more: StoreUntrusted, on which the daemon shuts down (Core's AbortNode).
"""
from __future__ import annotations

import contextlib
import errno
import logging
import os
import shutil
import sqlite3
import threading
from collections.abc import Callable, Iterator

_log = logging.getLogger("quill.store")

# Core's CheckDiskSpace: the free space a data directory must keep (util/fs_helpers.cpp).
MIN_DISK_SPACE = 52428800
DISK_SPACE_TOO_LOW = "Disk space is too low!"
DISK_IO_ERROR = "Disk I/O error."

_SQLITE_IOERR = 10
_SQLITE_FULL = 13
_PG_DISK_FULL = "53100"     # PostgreSQL's SQLSTATE disk_full


class RolledBack(Exception):
    """Raised by a store's owner inside a transaction to discard it, having undone memory itself
    (a dry run: Core's TestBlockValidity)."""


class StoreWriteFailed(Exception):
    """A write did not reach the disk; the store rolled back and memory was rebuilt from it."""

    def __init__(self, path: str, cause: str) -> None:
        self.path = path
        self.cause = cause
        super().__init__(self.message)

    @property
    def message(self) -> str:
        return f"{self.cause} Could not write {self.path}; nothing was changed."


class DiskSpaceTooLow(StoreWriteFailed):
    """Refused before writing: the disk would fall below Core's minimum of free space."""

    def __init__(self, path: str) -> None:
        super().__init__(path, DISK_SPACE_TOO_LOW)

    @property
    def message(self) -> str:
        return f"{DISK_SPACE_TOO_LOW} ({os.path.dirname(self.path) or self.path} has less than 50 MiB free)"


class StoreUntrusted(StoreWriteFailed):
    """A failed write could not be undone in memory: the daemon must stop."""

    @property
    def message(self) -> str:
        return f"{self.cause} {self.path} could not be read back after a failed write: shutting down."


# Tests only: called with the store's path just before each commit (and each settings file's
# rename). A raise there is a commit that did not happen: tests/durability injects a full disk,
# an I/O error or kill -9 at the N-th.
fault_injection: Callable[[str], None] | None = None

_abort_handlers: list[Callable[[str], None]] = []


def before_commit(path: str) -> None:
    """Where a store is about to commit (fault_injection's hook; nothing outside the tests)."""
    if fault_injection is not None:
        fault_injection(path)


def on_abort(handler: Callable[[str], None]) -> None:
    """The daemon's clean shutdown, for abort_node."""
    _abort_handlers.append(handler)


def abort_node(message: str) -> None:
    """Core's AbortNode: what is in memory can no longer be trusted to match the disk, so the
    daemon stops cleanly, with the reason in debug.log; the next start opens from the disk."""
    _log.error("%s", message)
    for handler in list(_abort_handlers):
        handler(message)


def write_failure_cause(error: BaseException) -> str | None:
    """DISK_SPACE_TOO_LOW or DISK_IO_ERROR for an exception that means the disk refused a
    write, None for any other."""
    code = getattr(error, "sqlite_errorcode", None)
    if isinstance(error, sqlite3.Error) and code is not None:
        if code & 0xFF == _SQLITE_FULL:
            return DISK_SPACE_TOO_LOW
        if code & 0xFF == _SQLITE_IOERR:
            return DISK_IO_ERROR
        return None
    if getattr(error, "sqlstate", None) == _PG_DISK_FULL:    # the PostgreSQL store's (quill.postgres)
        return DISK_SPACE_TOO_LOW
    if isinstance(error, OSError):
        if error.errno in (errno.ENOSPC, errno.EDQUOT):
            return DISK_SPACE_TOO_LOW
        if error.errno == errno.EIO:
            return DISK_IO_ERROR
    return None


def write_file_atomically(path: str, text: str) -> None:
    """Replace `path` with `text` whole or not at all (a temporary file, fsync, rename); a write
    the disk refuses leaves the old file and no temporary one, and raises StoreWriteFailed."""
    tmp = path + ".new"
    try:
        with open(tmp, "w") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        before_commit(path)
        os.replace(tmp, path)
    except OSError as e:
        with contextlib.suppress(OSError):
            os.remove(tmp)
        cause = write_failure_cause(e)
        if cause is None:
            raise
        raise StoreWriteFailed(path, cause) from e


@contextlib.contextmanager
def writing(path: str) -> Iterator[None]:
    """Writes outside a transaction (opening a new file, its schema): a refusal of the disk
    becomes StoreWriteFailed naming `path`."""
    try:
        yield
    except (sqlite3.Error, OSError) as e:
        cause = write_failure_cause(e)
        if cause is None:
            raise
        raise StoreWriteFailed(path, cause) from e


def free_space(path: str) -> int:
    return shutil.disk_usage(path).free


def check_disk_space(directory: str, additional: int = 0) -> bool:
    """Core's CheckDiskSpace: at least 50 MiB would be left after writing `additional` bytes."""
    return free_space(directory) >= MIN_DISK_SPACE + additional


class Transactions:
    """Nested all-or-nothing transactions over one SQLite connection (autocommit mode).

    `with transactions():` begins one, or joins the one running; the outermost commits. The
    connection must be opened with isolation_level=None so that nothing commits behind its back.
    """

    def __init__(self, db: sqlite3.Connection, path: str, lock: threading.RLock | None = None) -> None:
        self.db = db
        self.path = path
        self.lock = lock if lock is not None else threading.RLock()
        self.depth = 0
        self._resyncing = False
        self.untrusted: StoreUntrusted | None = None    # once set, no transaction begins again
        # Set by the store's owner: note what a transaction starts from, and rebuild memory from
        # the file after a rollback.
        self.on_begin: Callable[[], None] = lambda: None
        self.resync: Callable[[], None] = lambda: None
        # The owner's refusals, which it undoes in memory itself.
        self.handled: tuple[type[BaseException], ...] = (RolledBack,)

    @contextlib.contextmanager
    def __call__(self) -> Iterator[None]:
        with self.lock:
            if self.depth:
                self.depth += 1
                try:
                    yield
                finally:
                    self.depth -= 1
                return
            self._begin()
            self.on_begin()
            self.depth = 1
            try:
                yield
                before_commit(self.path)
                self.db.execute("COMMIT")
            except BaseException as e:
                self.depth = 0
                self._undo(e)
                failure = self._as_write_failure(e)
                if failure is e:
                    raise
                raise failure from e
            self.depth = 0

    def _begin(self) -> None:
        if self.untrusted is not None:
            raise self.untrusted
        try:
            self.db.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as e:
            failure = self._as_write_failure(e)
            if failure is e:
                raise
            raise failure from e

    def _undo(self, error: BaseException) -> None:
        """Roll back what the file holds, then bring memory to the same state."""
        cause = write_failure_cause(error) or type(error).__name__
        try:
            if self.db.in_transaction:
                self.db.execute("ROLLBACK")
        except Exception as e:
            raise self._untrusted(cause) from e
        if isinstance(error, self.handled):
            return
        if self._resyncing:     # a transaction of the resync itself failed
            raise self._untrusted(cause) from error
        self._resyncing = True
        try:
            self.resync()
        except Exception as e:
            raise self._untrusted(cause) from e
        finally:
            self._resyncing = False

    def _untrusted(self, cause: str) -> StoreUntrusted:
        self.untrusted = StoreUntrusted(self.path, cause)
        abort_node(self.untrusted.message)
        return self.untrusted

    def _as_write_failure(self, error: BaseException) -> BaseException:
        if isinstance(error, StoreWriteFailed):
            return error
        cause = write_failure_cause(error)
        return error if cause is None else StoreWriteFailed(self.path, cause)
