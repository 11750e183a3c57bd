"""Who may read the data directory (issue 24): quilld sets Core's umask 077 at start-up, so
under a permissive umask (022) its new files are 0600 and its new directories 0700, as a real
bitcoind's beside it; -sysperms keeps the system's umask; what was there keeps its mode."""
from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.kit.bitcoind import BitcoinD
from tests.kit.rpc_daemon import QuillDaemon

pytestmark = pytest.mark.sqlite_store(
    "the modes of files in the data directory, and three of its roles (the wallet file, chain.sqlite, "
    "settings.json) are files the PostgreSQL store keeps in its database instead")

# What each quilld path is for, and Core's file or directory of the same role
ROLES = [
    ("chain dir", ".", "."),
    ("wallets dir", "wallets", "wallets"),
    ("wallet file", "wallets/w/wallet.sqlite", "wallets/w/wallet.dat"),
    ("wallet dir", "wallets/w", "wallets/w"),
    ("chain store", "chain.sqlite", "blocks/blk00000.dat"),
    ("debug.log", "debug.log", "debug.log"),
    ("settings.json", "settings.json", "settings.json"),
]


@contextmanager
def umask(mask: int) -> Iterator[None]:
    """The daemons started inside inherit `mask`, as from a login shell's umask."""
    old = os.umask(mask)
    try:
        yield
    finally:
        os.umask(old)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def quilld_modes(datadir: Path, *args: str) -> dict[str, int]:
    with umask(0o022):
        daemon = QuillDaemon(datadir, "-rpcuser=u", "-rpcpassword=p", *args).start()
    try:
        # a watch-only wallet loaded at start-up: settings.json is written too
        assert daemon.rpc("createwallet", "w", True, True, "", False, True, True)["name"] == "w"
    finally:
        daemon.stop()
    return {role: mode(daemon.chain_dir / path) for role, path, _ in ROLES}


def test_new_files_are_private_as_cores(tmp_path: Path) -> None:
    quill_dir = tmp_path / "quill"
    quill_dir.mkdir(mode=0o755)
    quill_dir.chmod(0o755)
    quill = quilld_modes(quill_dir)
    core_dir = tmp_path / "core"
    core_dir.mkdir()
    core_dir.chmod(0o755)
    with umask(0o022), BitcoinD(core_dir) as core:
        core.rpc("createwallet", "w", True, True)
    core_chain = core_dir / "regtest"
    core_modes = {role: mode(core_chain / path) for role, _, path in ROLES}
    table = "\n".join(f"{role:14} quilld {quill[role]:04o}   bitcoind {core_modes[role]:04o}" for role, _, _ in ROLES)
    print("modes under umask 022\n" + table)
    assert quill == core_modes, table
    assert all(m == (0o700 if "dir" in role else 0o600) for role, m in quill.items()), table
    # the data directory was there before: both leave its mode alone
    assert mode(quill_dir) == mode(core_dir) == 0o755


def test_sysperms_keeps_the_system_umask(tmp_path: Path) -> None:
    modes = quilld_modes(tmp_path, "-sysperms")
    assert modes == {role: 0o755 if "dir" in role else 0o644 for role, _, _ in ROLES}, modes


def test_files_already_there_keep_their_mode(tmp_path: Path) -> None:
    quilld_modes(tmp_path, "-sysperms")            # made 0644/0755 on purpose
    chain_dir = tmp_path / "regtest"
    log = chain_dir / "debug.log"
    assert mode(log) == 0o644
    with umask(0o022), QuillDaemon(tmp_path, "-rpcuser=u", "-rpcpassword=p") as daemon:
        assert "w" in daemon.rpc("listwallets")   # loaded at start-up (settings.json)
        assert daemon.rpc("createwallet", "new", True, True)["name"] == "new"
    assert mode(log) == 0o644 and mode(chain_dir / "wallets/w/wallet.sqlite") == 0o644
    assert mode(chain_dir) == 0o755
    assert mode(chain_dir / "wallets/new") == 0o700 and mode(chain_dir / "wallets/new/wallet.sqlite") == 0o600
