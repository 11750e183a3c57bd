"""Wallet names the file system refuses (issue 24): createwallet and loadwallet answer what a
real bitcoind answers for the same name, code and message, never a Python exception (the
issue saw RecursionError, FileExistsError and FileNotFoundError). Paths in messages are
compared with each daemon's own wallets directory written as <walletdir>."""
from __future__ import annotations

import re
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.kit.bitcoind import BitcoinD, CoreRPCError
from tests.kit.rpc_daemon import QuillDaemon, RPCFailure

pytestmark = pytest.mark.sqlite_store(
    "wallet names the file system refuses; in PostgreSQL a wallet is a catalog row and a schema, "
    "with no path to refuse")

DEEP = "/".join(["a"] * 2000)   # 3,999 bytes: more levels than std::filesystem makes at once
LEVELS = "/".join(["f"] * 1000)  # made, but a path longer than SQLite opens
LONG = "/".join(["b1000"] * 1000)  # 5,999 bytes: a path the system cannot name


class Side:
    def __init__(self, walletdir: Path, call: Callable[..., Any], failure: type[Exception]) -> None:
        self.walletdir = walletdir
        self.call = call
        self.failure = failure

    def answer(self, method: str, name: str) -> tuple[int | None, str]:
        params = (name, True, True) if method == "createwallet" else (name,)
        try:
            return 0, repr(self.call(method, *params))
        except self.failure as e:
            code, message = e.code, e.message  # type: ignore[attr-defined]
            return code, message.replace(str(self.walletdir), "<walletdir>")


@pytest.fixture(scope="module")
def sides(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Side, Side]]:
    root = tmp_path_factory.mktemp("paths")
    with BitcoinD(root / "core") as core, QuillDaemon(root / "quill", "-rpcuser=u", "-rpcpassword=p") as quill:
        core_dir = root / "core" / "regtest" / "wallets"
        quill_dir = quill.chain_dir / "wallets"
        for walletdir in (core_dir, quill_dir):
            (walletdir / "plainfile").write_bytes(b"not a wallet")
        (root / "plain-abs").write_bytes(b"not a wallet either")
        yield Side(core_dir, core.rpc, CoreRPCError), Side(quill_dir, quill.rpc, RPCFailure)
    # a thousand levels of directories: deeper than shutil.rmtree (pytest's clean-up) recurses
    subprocess.run(["rm", "-rf", str(root)], check=True)


def names(root: Path) -> list[str]:
    return ["plainfile", str(root / "plain-abs"), "/proc/self", "/proc/self/fd", DEEP, LEVELS, LONG,
            "x" * 300, "ok/" + "y" * 256, "wallets/../../x", "a/./b", "./x", "a/..", "../up", ".", ".."]


@pytest.mark.parametrize("method", ["createwallet", "loadwallet"])
@pytest.mark.parametrize("index", range(16))
def test_refused_names_answer_as_core(sides: tuple[Side, Side], method: str, index: int) -> None:
    core, quill = sides
    name = names(core.walletdir.parents[2])[index]
    expected = core.answer(method, name)
    got = quill.answer(method, name)
    shown = name if len(name) < 60 else name[:40] + "..."
    assert expected[0] not in (0, None), f"Core accepted {shown}: the case tests nothing"
    assert got == expected, f"{method} {shown}"
    assert not re.search(r"\b[A-Z]\w*(Error|Exception)\b", got[1]), got


def test_nothing_was_made_for_a_refused_name(sides: tuple[Side, Side]) -> None:
    _, quill = sides
    quill.answer("createwallet", DEEP)
    assert not (quill.walletdir / "a").exists()
    assert quill.call("listwallets") == []
