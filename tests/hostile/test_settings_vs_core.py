"""settings.json read as Core reads it (issue 24): a file that is not JSON, not an object, with a
repeated key, a `wallet` value of the wrong type, or a wallet name or path Core refuses, stops
start-up with Core's message, compared with a real bitcoind given the same file; a string names
one wallet (not one per character); a wallet that is not there is skipped with Core's warning."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.kit.bitcoind import BitcoinD
from tests.kit.rpc_daemon import QuillDaemon

pytestmark = pytest.mark.sqlite_store(
    "settings.json as Core reads it; with -store=postgresql the settings are the quill_settings "
    "table (docs/postgresql.md), and no file is read")

REFUSED = [
    "not json",
    "",
    "[1,2]",
    '{"wallet":[1]}',
    '{"wallet":1}',
    '{"wallet":[true]}',
    '{"wallet":{"a":1}}',
    '{"wallet":[["w"]]}',
    '{"wallet":"w","wallet":"x"}',
    '{"wallet":["wallets/../../x"]}',
    '{"wallet":["./w"]}',
    '{"wallet":"w1"}',   # w1 is a directory without a wallet in it
]


def prepare(datadir: Path, settings: str) -> Path:
    chain_dir = datadir / "regtest"
    (chain_dir / "wallets" / "w1").mkdir(parents=True)
    (chain_dir / "settings.json").write_text(settings)
    return datadir


def core_refusal(datadir: Path) -> str:
    with pytest.raises(RuntimeError) as refused:
        BitcoinD(datadir).start()
    return str(refused.value).split(": ", 1)[1].strip().replace(str(datadir), "<datadir>")


def quill_refusal(datadir: Path) -> str:
    daemon = QuillDaemon(datadir, "-rpcuser=u", "-rpcpassword=p", wait=False).start()
    try:
        assert daemon.proc.wait(60) == 1
        return daemon.proc.stderr.read().decode().strip().replace(str(datadir), "<datadir>")
    finally:
        daemon.stop()
        daemon.proc.stderr.close()


@pytest.mark.parametrize("settings", REFUSED)
def test_a_bad_settings_file_refuses_start_up_as_core(tmp_path: Path, settings: str) -> None:
    expected = core_refusal(prepare(tmp_path / "core", settings))
    assert expected.startswith("Error: ")
    got = quill_refusal(prepare(tmp_path / "quill", settings))
    assert got == expected
    assert (tmp_path / "quill" / "regtest" / "settings.json").read_text() == settings   # left as it was


def test_a_string_names_one_wallet_and_a_missing_one_is_skipped(tmp_path: Path) -> None:
    quill_dir, core_dir = tmp_path / "quill", tmp_path / "core"
    with QuillDaemon(quill_dir, "-rpcuser=u", "-rpcpassword=p") as quill:
        quill.rpc("createwallet", "w1", True, True)
    with BitcoinD(core_dir) as core:
        core.rpc("createwallet", "w1", True, True)
    settings = json.dumps({"wallet": "w1"})
    warnings = []
    for datadir in (quill_dir, core_dir):
        (datadir / "regtest" / "settings.json").write_text(settings)
    with QuillDaemon(quill_dir, "-rpcuser=u", "-rpcpassword=p") as quill, BitcoinD(core_dir) as core:
        assert quill.rpc("listwallets") == core.rpc("listwallets") == ["w1"]
        assert quill.rpc("getwalletinfo", path="/wallet/w1")["walletname"] == "w1"
    for datadir in (quill_dir, core_dir):
        (datadir / "regtest" / "settings.json").write_text(json.dumps({"wallet": ["nosuch"]}))
    with QuillDaemon(quill_dir, "-rpcuser=u", "-rpcpassword=p") as quill, BitcoinD(core_dir) as core:
        assert quill.rpc("listwallets") == core.rpc("listwallets") == []
        for datadir in (quill_dir, core_dir):
            log = (datadir / "regtest" / "debug.log").read_text()
            line = next(li for li in log.splitlines() if "Skipping -wallet path" in li)
            warnings.append(line.split(" ", 1)[1].replace(str(datadir), "<datadir>"))
    assert warnings[0] == warnings[1]
