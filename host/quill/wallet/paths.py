"""Where a wallet lives: its path checked and its directories made as Core's wallet code does
(MakeWalletDatabase, MakeDatabase and the SQLite database's TryCreateDirectories), each
failure told in Core's words rather than as a Python exception.

The name itself was checked first (quill.wallet.names); here the file system has its say.
"""
from __future__ import annotations

import errno
import os
import stat

from quill.wallet.errors import WalletError, WalletNotFound

VERIFY_FAILED = "Wallet file verification failed. "
BAD_PATH = ("Invalid -wallet path '{name}'. -wallet path should point to a directory where wallet.dat and "
            "database/log.?????????? files can be stored, a location where such a directory could be created, "
            "or (for backwards compatibility) the name of an existing data file in -walletdir (\"{walletdir}\")")
# lstat errors that mean "nothing there" to std::filesystem::symlink_status
_ABSENT = (errno.ENOENT, errno.ENOTDIR)
# libstdc++'s create_directories makes at most this many missing levels ("File name too long" beyond)
MAX_MISSING_LEVELS = 1000


class PathTooLong(WalletError):
    """The system cannot name the wallet's path: Core's uncaught filesystem_error, whose RPC
    code depends on the call (createwallet: RPC_MISC_ERROR, loadwallet: RPC_WALLET_ERROR)."""


def wallet_path(walletdir: str, name: str) -> str:
    """Core's AbsPathJoin(GetWalletDir(), name): an absolute name stands for itself."""
    return os.path.join(walletdir, name) if name else walletdir


def check_location(walletdir: str, name: str) -> str:
    """The wallet's path, when it is a directory (or a symlink to one), a place where one may be
    made, or (as Core keeps for old wallet files) a plain file named directly in the wallets
    directory; WalletError with Core's "Invalid -wallet path" otherwise."""
    path = wallet_path(walletdir, name)
    try:
        mode = os.lstat(path).st_mode
    except OSError as e:
        if e.errno in _ABSENT:
            return path
        if e.errno == errno.ENAMETOOLONG:
            raise PathTooLong(f"filesystem error: symlink_status: {e.strerror} [{path}]") from None
        raise WalletError(f"{VERIFY_FAILED}Failed to access database path '{path}': {e.strerror}") from None
    if stat.S_ISDIR(mode) or (stat.S_ISLNK(mode) and os.path.isdir(path)) \
            or (stat.S_ISREG(mode) and "/" not in name):
        return path
    raise WalletError(VERIFY_FAILED + BAD_PATH.format(name=name, walletdir=walletdir))


def check_loadable(path: str, db_path: str) -> None:
    """Core's MakeDatabase for an existing wallet: the path must exist and hold a wallet database."""
    if not os.path.lexists(path):
        raise WalletNotFound(f"{VERIFY_FAILED}Failed to load database path '{path}'. Path does not exist.")
    if not os.path.isfile(db_path):
        raise WalletNotFound(f"{VERIFY_FAILED}Failed to load database path '{path}'. "
                             "Data is not in recognized format.")


def make_directories(path: str) -> None:
    """std::filesystem::create_directories(path) as Core calls it for a new wallet, made one
    level at a time (no recursion, however many components the name has). A path the system
    cannot name at all is refused before anything is made."""
    try:
        if stat.S_ISDIR(os.stat(path).st_mode):
            return
    except OSError as e:
        if e.errno not in _ABSENT:
            raise WalletError(f"{VERIFY_FAILED}filesystem error: status: {e.strerror} [{path}]") from None
    missing = []
    at = path
    while at and not os.path.isdir(at):
        if os.path.lexists(at):
            _cannot_create(path, errno.ENOTDIR)   # a file where a directory must be
        missing.append(at)
        if len(missing) > MAX_MISSING_LEVELS:
            _cannot_create(path, errno.ENAMETOOLONG)
        parent = os.path.dirname(at)
        if parent == at:
            break
        at = parent
    for directory in reversed(missing):
        try:
            os.mkdir(directory)
        except FileExistsError:
            if not os.path.isdir(directory):
                _cannot_create(path, errno.ENOTDIR)
        except OSError as e:
            _status_after_failure(directory, path)
            _cannot_create(path, e.errno or errno.EIO)


def _status_after_failure(directory: str, path: str) -> None:
    """libstdc++ looks at a directory it failed to make: an error there (a component too long
    for the file system, now that its parent exists) is what Core reports."""
    try:
        os.stat(directory)
    except OSError as e:
        if e.errno not in _ABSENT:
            raise WalletError(f"{VERIFY_FAILED}filesystem error: status: {e.strerror} [{path}]") from None


def _cannot_create(path: str, code: int) -> None:
    # the text of libstdc++'s filesystem_error, as Core passes it on
    raise WalletError(f"{VERIFY_FAILED}filesystem error: cannot create directories: {os.strerror(code)} [{path}]")


def cannot_open(reason: str) -> WalletError:
    """Core's SQLiteDatabase refusal when SQLite cannot open the new wallet's file."""
    return WalletError(f"{VERIFY_FAILED}SQLiteDatabase: Failed to open database: {reason}\n")


def not_writable(directory: str) -> WalletError:
    """Core's SQLiteDatabase refusal when the wallet's directory takes no new file."""
    return WalletError(f"{VERIFY_FAILED}SQLiteDatabase: Failed to open database in directory '{directory}': "
                       "directory is not writable")
