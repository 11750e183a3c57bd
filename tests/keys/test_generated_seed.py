"""The emulated device makes its own seed at its first start (quill-emu --seed=generate,
the default of quilld -device=emulator, so `make start` has a hardware wallet) and keeps
it in its data directory's emulated flash across restarts. The words never leave the
device: every byte on the link, both ways, and every log is searched for BIP39 words,
and a control run (seed_generate, which answers its words on the link) shows the search
finds them when they are there."""
from __future__ import annotations

import re
from pathlib import Path

import pytest
import serial

from quill.device import client as client_module
from quill.device.client import DeviceClient
from quillfw.keys import bip39
from quillfw.keys.store import SeedStore
from tests.keys.emulated import DEFAULT_BOARD, EmulatedDevice, process_command_lines
from tests.kit.rpc_daemon import QuillDaemon
from tests.signing.signkit import keys, p2wpkh, prevtx, unsigned_tx


def word_runs(data: bytes, words: frozenset[str], length: int = 3) -> list[str]:
    """Every run of at least `length` BIP39 words in a row (separated by single spaces) in data."""
    text = data.decode("latin-1")
    runs = []
    for match in re.finditer(r"[a-z]+(?: [a-z]+)+", text):
        tokens = match.group(0).split(" ")
        run: list[str] = []
        for token in tokens + [""]:
            if token in words:
                run.append(token)
                continue
            if len(run) >= length:
                runs.append(" ".join(run))
            run = []
    return runs


class Recording:
    """A pyserial port that keeps every byte read and written."""

    def __init__(self, port: serial.Serial, record: bytearray) -> None:
        self._port = port
        self._record = record

    def read(self, size: int = 1) -> bytes:
        data = self._port.read(size)
        self._record += data
        return data

    def write(self, data: bytes) -> int | None:
        self._record += data
        return self._port.write(data)

    def __getattr__(self, name: str) -> object:
        return getattr(self._port, name)


@pytest.fixture
def link(monkeypatch: pytest.MonkeyPatch) -> bytearray:
    record = bytearray()
    real = serial.serial_for_url
    monkeypatch.setattr(client_module.serial, "serial_for_url",
                        lambda *a, **k: Recording(real(*a, **k), record))
    return record


@pytest.fixture(scope="module")
def bip39_words() -> frozenset[str]:
    words = frozenset(bip39.word(i) for i in range(2048))
    assert len(words) == 2048 and {"abandon", "zoo"} <= words
    return words


def _seed(path: Path) -> bytes:
    """The stored seed, read as the firmware reads it (no PIN)."""
    seed = SeedStore(str(path)).unlock("")
    assert seed is not None
    return bytes(seed)


def test_the_device_makes_its_seed_once_and_keeps_it(tmp_path: Path, link: bytearray,
                                                     bip39_words: frozenset[str]) -> None:
    xpubs, logs = [], []
    for run in range(2):
        device = EmulatedDevice(tmp_path / "emu", "--seed=generate", board=DEFAULT_BOARD)
        with device, DeviceClient(device.port) as client:
            info = client.get_info()
            assert info["keys"]["state"] == "unlocked" and info["keys"]["pin_set"] is False
            xpubs.append(client.call("get_xpub", {"path": "m/84h/1h/0h", "network": "test"}))
            assert not any("--seed" in line and "micropython" in line for line in process_command_lines())
        logs.append(device.log())
        if run == 0:
            first_seed = _seed(device.datadir / "seed.bin")
    assert xpubs[0] == xpubs[1]                           # the same seed after the restart
    assert _seed(device.datadir / "seed.bin") == first_seed
    log = device.log()
    assert log.count("generated a new seed on the device") == 1
    captured = bytes(link) + log.encode()
    assert len(link) > 1000 and xpubs[0]["xpub"].encode() in bytes(link)   # the link was recorded
    assert word_runs(captured, bip39_words) == []
    assert first_seed not in captured and first_seed.hex().encode() not in captured


def test_the_search_finds_words_that_cross_the_link(tmp_path: Path, link: bytearray,
                                                    bip39_words: frozenset[str]) -> None:
    """The control: a device without a display answers seed_generate with its words (it has
    nowhere else to show them), and the same search finds them."""
    device = EmulatedDevice(tmp_path / "emu", "--display=none", board=DEFAULT_BOARD)
    with device, DeviceClient(device.port) as client:
        answer = client.call("seed_generate", {"words": 12, "pin": "8642"}, timeout=300)
    runs = word_runs(bytes(link), bip39_words)
    # the words, but the last (CBOR puts the next key's text right after it, no space)
    assert len(runs) == 1 and runs[0] in answer["mnemonic"] and len(runs[0].split()) >= 11


def test_quilld_device_emulator_provisions_its_device_and_still_signs_with_keys(
        tmp_path: Path, bip39_words: frozenset[str]) -> None:
    key = keys(4242, 1)[0]
    tx = unsigned_tx(1, 1, seed=5)
    entries = [prevtx(tx, 0, p2wpkh(key.pubkey), 50_000)]
    seeds = []
    for _ in range(2):
        with QuillDaemon(tmp_path, "-device=emulator", "-printtoconsole", "-debug=1") as node:
            info = node.rpc("getdeviceinfo")
            assert info["board"] == DEFAULT_BOARD
            assert info["keys"]["state"] == "unlocked" and info["keys"]["pin_set"] is False
            signed = node.rpc("signrawtransactionwithkey", tx.hex(), [key.wif], entries)
            assert signed["complete"] is True
        seeds.append(_seed(node.chain_dir / "emulator" / "seed.bin"))
    assert seeds[0] == seeds[1]                           # kept across quilld's restart
    logs = b"".join(p.read_bytes() for p in node.chain_dir.rglob("*.log"))
    assert b"generated a new seed on the device" in logs
    assert word_runs(logs, bip39_words) == []
    assert seeds[0] not in logs and seeds[0].hex().encode() not in logs
