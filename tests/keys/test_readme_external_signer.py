"""The README's external-signer recipe (section "Keys on the device, and Bitcoin Core's
external signer"), run as written: its shell block, line by line, from the repository's
root, with quill-emu at its defaults (no heap flag, no board flag) and a real bitcoind.

As a user runs it: the lines that start a program that keeps running (quill-emu,
bitcoind) run in the background, as in their own terminal; `<address>` is what
`getnewaddress` printed. What this harness adds, and only this: `bitcoind` and
`bitcoin-cli` on PATH are Core's, pointed at a fresh data directory and free ports
(bitcoin-cli waits for the node, as a user waits for it to start), and the port file
is in this test's folder instead of /tmp (tests run side by side)."""
from __future__ import annotations

import json
import re
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from quill.device.client import DeviceClient
from quill.emulator import models
from tests.kit.bitcoind import free_port
from tests.kit.toolchains import bitcoind_path

ROOT = Path(__file__).resolve().parents[2]
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LONG_RUNNING = ("quill-emu", "bitcoind", "quilld")
PORT_FILE = "/tmp/quill.port"


def recipe() -> list[str]:
    """The shell block that starts quill-emu with --port-file and Core with its signer."""
    for document in DOCUMENTS:
        if not document.exists():
            continue
        for block in re.findall(r"```sh\n(.*?)```", document.read_text(), re.S):
            if "quill-emu --port-file=" in block and "bitcoind -regtest -signer=" in block:
                return [line for line in block.splitlines() if line.strip()]
    raise AssertionError("the external-signer recipe is in no document")


def _wrappers(folder: Path, core_dir: Path) -> Path:
    """bitcoind and bitcoin-cli on PATH: Core's, on core_dir and free ports."""
    real = bitcoind_path()
    rpcport, port = free_port(), free_port()
    common = f'-datadir="{core_dir}" -rpcport={rpcport}'
    folder.mkdir()
    scripts = {
        "bitcoind": f'exec "{real}" {common} -port={port} -listen=0 -printtoconsole=0 "$@"',
        "bitcoin-cli": f'exec "{real.parent / "bitcoin-cli"}" {common} -rpcwait -rpcwaittimeout=120 "$@"',
    }
    for name, line in scripts.items():
        (folder / name).write_text("#!/bin/sh\n" + line + "\n")
        (folder / name).chmod(0o755)
    core_dir.mkdir()
    return folder


class Terminal:
    """Runs the recipe's lines in bash from the repository's root."""

    def __init__(self, work: Path) -> None:
        self.work = work
        self.env = {"PATH": f"{_wrappers(work / 'bin', work / 'core')}:/usr/bin:/bin",
                    "HOME": str(work), "LANG": "C.UTF-8"}
        self.background: list[subprocess.Popen[bytes]] = []
        self.port_file = work / "quill.port"
        self.address = ""

    def text(self, line: str) -> str:
        line = line.replace(PORT_FILE, str(self.port_file))
        if "<address>" in line:
            assert self.address, "a line uses <address> before getnewaddress printed one"
            line = line.replace("<address>", self.address)
        return line

    def run(self, line: str) -> str:
        command = self.text(line)
        program = Path(command.split()[0]).name
        if program in LONG_RUNNING:
            log = open(self.work / f"{program}.log", "ab")
            self.background.append(subprocess.Popen(["bash", "-c", f"exec {command}"], cwd=ROOT, env=self.env,
                                                    stdout=log, stderr=log))
            log.close()
            if program == "quill-emu":
                self._wait_for_port()
            return ""
        proc = subprocess.run(["bash", "-c", command], cwd=ROOT, env=self.env, capture_output=True,
                              text=True, timeout=600)
        assert proc.returncode == 0, f"{line}\n{proc.stdout}{proc.stderr}"
        if "getnewaddress" in line:
            self.address = proc.stdout.strip()
        return proc.stdout

    def _wait_for_port(self) -> None:
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline:
            if self.port_file.exists() and self.port_file.read_text().strip():
                return
            assert self.background[-1].poll() is None, (self.work / "quill-emu.log").read_text()
            time.sleep(0.1)
        raise AssertionError("quill-emu wrote no port file")

    def close(self) -> None:
        subprocess.run(["bash", "-c", "bitcoin-cli -rpcwaittimeout=5 stop"], env=self.env, capture_output=True,
                       timeout=60)
        for proc in reversed(self.background):
            if proc.poll() is None:
                proc.terminate()
            try:
                proc.wait(60)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def _first_receive_address() -> str:
    """m/84h/1h/0h/0/0 of the recipe's mnemonic, derived by embit."""
    from embit import bip32, bip39, script
    from embit.networks import NETWORKS
    seed = bip39.mnemonic_to_seed("abandon " * 11 + "about")
    key = bip32.HDKey.from_seed(seed).derive("m/84h/1h/0h/0/0")
    return str(script.p2wpkh(key.key).address(NETWORKS["regtest"]))


@pytest.fixture
def terminal(tmp_path: Path) -> Iterator[Terminal]:
    bitcoind_path()    # skips here, fails in CI, without Core
    term = Terminal(tmp_path)
    try:
        yield term
    finally:
        term.close()


def test_the_readme_external_signer_recipe_runs_as_written(terminal: Terminal) -> None:
    lines = recipe()
    assert lines[0].startswith(".venv/bin/quill-emu --port-file=") and "--heapsize" not in lines[0]
    outputs = [terminal.run(line) for line in lines]
    # quill-emu at its defaults modelled the Pico, and answered the key methods
    with DeviceClient(terminal.port_file.read_text().strip()) as client:
        info = client.get_info()
    assert info["board"] == models.DEFAULT_BOARD == "rpi_pico"
    assert 0 < info["heap_free"] < models.load("rpi_pico").heap
    assert info["keys"]["fingerprint"].hex() == "73c5da0a"
    by_command = dict(zip(lines, outputs, strict=True))
    signers = json.loads(next(out for line, out in by_command.items() if "enumeratesigners" in line))
    assert [s["fingerprint"] for s in signers["signers"]] == ["73c5da0a"]
    assert terminal.address == _first_receive_address()      # m/84h/1h/0h/0/0 of the mnemonic
    shown = json.loads(next(out for line, out in by_command.items() if "walletdisplayaddress" in line))
    assert shown == {"address": terminal.address}
    sent = json.loads(next(out for line, out in by_command.items() if " send " in line))
    assert sent["complete"] is True
    entry = subprocess.run(["bash", "-c", f"bitcoin-cli -regtest getmempoolentry {sent['txid']}"],
                           env=terminal.env, capture_output=True, text=True, timeout=60)
    assert entry.returncode == 0, entry.stderr        # broadcast: the signed spend is in Core's mempool
