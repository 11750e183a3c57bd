"""Where the wallets' stores are: the wallet manager asks a catalog to check a name, open, close
and list wallets, and never touches a file or a database itself.

FileCatalog is the default: one SQLite file per wallet, <walletdir>/<name>/wallet.sqlite, as
Core's descriptor wallets, with a lock file so that one process at a time opens a wallet; its
refusals are Core's, in Core's words; the settings (the wallets loaded at start-up) are Core's
settings.json in the chain's data directory. The PostgreSQL catalog (quill.wallet.pg_store.PgCatalog)
keeps every wallet, and the settings, in one database instead.
"""
from __future__ import annotations

import contextlib
import json
import os
from typing import Any, Protocol

from quill.atomic_store import write_file_atomically
from quill.dirlock import try_lock, unlock
from quill.wallet import paths
from quill.wallet import store as st
from quill.wallet.errors import WalletError
from quill.wallet.settings import read_settings

IN_USE = ("Wallet file verification failed. SQLiteDatabase: Unable to obtain an exclusive lock on the database, "
          "is it being used by another instance of Quill?")
DB_FILE = "wallet.sqlite"


class Catalog(Protocol):
    def wallet_path(self, name: str) -> str: ...
    def check_absent(self, name: str) -> None: ...
    def prepare_new(self, name: str) -> Any: ...
    def open(self, name: str, create: bool) -> st.Store: ...
    def discard_new(self, name: str, store: st.Store | None, prepared: Any, failed_write: bool) -> None: ...
    def check_loadable(self, name: str) -> None: ...
    def startup_check(self, name: str) -> bool: ...
    def release(self, name: str, store: st.Store) -> None: ...
    def names(self) -> list[str]: ...
    def read_settings(self) -> dict[str, Any]: ...
    def write_settings(self, settings: dict[str, Any]) -> None: ...
    def close(self) -> None: ...


class FileCatalog:
    """One SQLite file per wallet under `walletdir`, the settings in `settings_path`."""

    def __init__(self, walletdir: str, settings_path: str) -> None:
        self.walletdir = walletdir
        self.settings_path = settings_path
        self.dir_locks: dict[str, int] = {}   # name -> descriptor holding the wallet directory's lock
        os.makedirs(walletdir, exist_ok=True)

    def wallet_path(self, name: str) -> str:
        return paths.wallet_path(self.walletdir, name)

    def db_path(self, name: str) -> str:
        return os.path.join(self.wallet_path(name), DB_FILE)

    def check_absent(self, name: str) -> None:
        """Core's MakeWalletDatabase for a new wallet: its database must not exist yet."""
        if os.path.exists(self.db_path(name)):
            raise WalletError(f"Wallet file verification failed. Failed to create database "
                              f"path '{self.wallet_path(name)}'. Database already exists.")

    def prepare_new(self, name: str) -> bool:
        """The new wallet's directories, made; True when its own folder was made here."""
        location = paths.check_location(self.walletdir, name)
        self.check_absent(name)
        made_dir = not os.path.isdir(location)
        paths.make_directories(location)
        return made_dir

    def open(self, name: str, create: bool) -> st.Store:
        """The wallet's store, its directory locked to this process."""
        try:
            fd = try_lock(os.path.join(self.wallet_path(name), ".walletlock"))
        except OSError:
            if create:
                raise paths.not_writable(self.wallet_path(name)) from None
            raise
        if fd is None:
            raise WalletError(IN_USE)
        self.dir_locks[name] = fd
        try:
            return st.Store(self.db_path(name), create=create)
        except st.StoreError as e:
            self._unlock(name)
            if create:
                raise paths.cannot_open(str(e)) from None
            raise WalletError(f"Wallet loading failed. {e}") from None
        except BaseException:
            self._unlock(name)
            raise

    def discard_new(self, name: str, store: st.Store | None, prepared: Any, failed_write: bool) -> None:
        """Undo a createwallet that failed part way: no file, no lock left behind. A refused write
        (a full disk) leaves nothing, so the name is free once there is room again; Core's own
        refusals of a path leave its folders as Core leaves them."""
        if store is not None:
            store.close()
        self._unlock(name)
        folder = self.wallet_path(name)
        for leftover in (DB_FILE, DB_FILE + "-wal", DB_FILE + "-shm", DB_FILE + "-journal", ".walletlock"):
            with contextlib.suppress(FileNotFoundError):
                os.remove(os.path.join(folder, leftover))
        if prepared and failed_write:
            with contextlib.suppress(OSError):
                os.rmdir(folder)

    def check_loadable(self, name: str) -> None:
        paths.check_loadable(paths.check_location(self.walletdir, name), self.db_path(name))

    def startup_check(self, name: str) -> bool:
        """Core's VerifyWallets for one name settings.json lists: False (with Core's warning
        logged by the caller) when nothing is there, WalletError when it cannot be a wallet."""
        location = paths.check_location(self.walletdir, name)
        if not os.path.lexists(location):
            return False
        paths.check_loadable(location, self.db_path(name))
        return True

    def release(self, name: str, store: st.Store) -> None:
        store.close()
        self._unlock(name)

    def names(self) -> list[str]:
        """listwalletdir: every folder under the wallets directory holding a wallet file."""
        found = []
        for root, _, files in os.walk(self.walletdir):
            if DB_FILE in files:
                found.append(os.path.relpath(root, self.walletdir).replace(os.sep, "/"))
        return ["" if name == "." else name for name in sorted(found)]

    def read_settings(self) -> dict[str, Any]:
        """settings.json ({} when absent); SettingsError, in Core's words, when it is not readable."""
        return read_settings(self.settings_path)

    def write_settings(self, settings: dict[str, Any]) -> None:
        write_file_atomically(self.settings_path, json.dumps(settings, indent=4))

    def close(self) -> None:
        for name in list(self.dir_locks):
            self._unlock(name)

    def _unlock(self, name: str) -> None:
        fd = self.dir_locks.pop(name, None)
        if fd is not None:
            unlock(fd)
