"""Hostile wallet names (issue 15): checked as Core checks them before any file
is made, with Core's -4/-8 errors; nothing reaches the client as an internal
error, and listwallets keeps answering."""
from __future__ import annotations

import json
import os
from collections.abc import Iterator

import pytest

from tests.hostile.netkit import basic, post
from tests.kit.rpc_daemon import QuillDaemon

RELATIVE = ("Wallet file verification failed. Wallet name given as a relative path cannot begin with ./ or ../, "
            "for wallets not in the walletdir, please use an absolute path.")


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[QuillDaemon]:
    with QuillDaemon(tmp_path_factory.mktemp("names"), "-rpcuser=u", "-rpcpassword=p") as d:
        yield d


def create(daemon: QuillDaemon, name_json: bytes) -> tuple[int, dict]:
    status, raw = post(daemon.port, b'{"id":1,"method":"createwallet","params":[' + name_json + b",true]}",
                       basic("u", "p"))
    return status, json.loads(raw.decode("utf-8", "surrogateescape"))


def made(daemon: QuillDaemon) -> tuple[object, list[str] | None]:
    """The wallets the store lists, and the wallets directory's entries (SQLite's; PostgreSQL has none)."""
    walletdir = daemon.chain_dir / "wallets"
    return daemon.rpc("listwalletdir"), sorted(os.listdir(walletdir)) if walletdir.exists() else None


@pytest.mark.parametrize("name_json,code,message", [
    (b'"\\ud800"', -32700, "Parse error"),
    (b'"a\\udfffb"', -32700, "Parse error"),
    (b'"\xf5\x80\x80\x80"', -4, "Wallet file verification failed. Wallet name is not valid UTF-8"),
    (b'"a\\u0000b"', -4, "Wallet file verification failed. Wallet name cannot contain a NUL character"),
    (b'"../up"', -4, RELATIVE),
    (b'"."', -4, RELATIVE),
    (b'".."', -4, RELATIVE),
    (b'"a/../../b"', -4, "Wallet file verification failed. Wallet name given as a path must be normalized"),
    (b'""', -8, "Wallet name cannot be empty"),
])
def test_bad_names_get_core_errors(daemon: QuillDaemon, name_json: bytes, code: int, message: str) -> None:
    before = made(daemon)
    status, reply = create(daemon, name_json)
    assert reply["error"] == {"code": code, "message": message}
    assert status == 500
    assert made(daemon) == before   # nothing was made
    assert isinstance(daemon.rpc("listwallets"), list)


def test_odd_but_valid_names_work_and_list(daemon: QuillDaemon) -> None:
    names = ["sub/dir", "\u00e9t\u00e9", "\U0001f600", " spaced ", "x" * 255]
    for name in names:
        status, reply = create(daemon, json.dumps(name).encode())
        assert (status, reply["result"]) == (200, {"name": name}), reply
    assert set(names) <= set(daemon.rpc("listwallets"))


@pytest.mark.sqlite_store("a stray entry in the wallets directory, which the PostgreSQL store does not have")
def test_a_bad_directory_entry_does_not_break_listing(daemon: QuillDaemon) -> None:
    os.mkdir(os.fsencode(daemon.chain_dir / "wallets") + b"/bad\xffname")
    for _ in range(3):
        assert isinstance(daemon.rpc("listwallets"), list)
    status, reply = create(daemon, b'"after"')
    assert status == 200 and reply["result"] == {"name": "after"}
