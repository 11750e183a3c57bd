"""One board, every wallet (issue 25): quilld holds the emulated device (-device=<pty>, no
-signer) and lends it. quill-signer's commands answer the same through --device (before quilld
opens the port) and through --bridge=URL (quilld's signercommand RPC); then quilld's own
signrawtransactionwithkey, quilld's own external-signer wallet (the device itself, no -signer)
and a real `bitcoind -signer="quill-signer --bridge=URL"` wallet all sign with that one device,
at the same time, and their transactions confirm. Nothing but quilld opens the port."""
from __future__ import annotations

import hashlib
import json
import subprocess
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from quill.tx.address import encode_destination
from quill.tx.psbt import encode_base64_psbt
from quill.tx.transaction import OutPoint, Transaction, TxIn, TxOut
from quillfw.keys import bip32
from tests.keys.emulated import TEST_MNEMONIC, VENV_BIN, EmulatedDevice, process_command_lines
from tests.keys.p2wpkh_psbt import p2wpkh_psbt
from tests.keys.test_core_external_signer import FINGERPRINT, core_address, master_tprv
from tests.keys.test_quilld_external_signer import ELSEWHERE, HW, Quilld
from tests.kit.bitcoind import BitcoinD
from tests.kit.rpc_daemon import QuillDaemon
from tests.signing.signkit import keys, p2wpkh

USER, PASSWORD = "bridge", "lent"
KEY = keys(2525, 1)[0]


def _device_pubkey(*path: int) -> str:
    """The test mnemonic's key at path (hardened steps as given), computed here."""
    node = bip32.master_node(hashlib.pbkdf2_hmac("sha512", TEST_MNEMONIC.encode(), b"mnemonic", 2048))
    for index in path:
        node = node.child(index)
    return bytes(node.pubkey()).hex()


H = bip32.HARDENED
SH_WPKH_KEY = _device_pubkey(49 | H, 1 | H, H, 1, 2)


def signer(where: str, *args: str, stdin: str | None = None) -> tuple[int, Any]:
    proc = subprocess.run([str(VENV_BIN / "quill-signer"), where, *args], capture_output=True, text=True,
                          input=stdin, timeout=180)
    try:
        return proc.returncode, json.loads(proc.stdout)
    except ValueError:
        return proc.returncode, proc.stdout


# every command, as a user (or Core) runs it; "regtest" given or taken from quilld
COMMANDS: dict[str, list[str]] = {
    "enumerate": ["enumerate"],
    "getdescriptors": ["--chain=regtest", "getdescriptors", "--account", "1"],
    "getxpub": ["--chain=regtest", "getxpub", "m/84h/1h/0h"],
    "getxpub-apostrophe": ["--chain=regtest", "getxpub", "m/48'/1'/0'/2'"],
    "displayaddress-path": ["--chain=regtest", "displayaddress", "--path", "m/86h/1h/0h/0/3", "--addr-type", "tap"],
    "displayaddress-desc": ["--chain=regtest", f"--fingerprint={FINGERPRINT}", "displayaddress", "--desc",
                            f"sh(wpkh([73c5da0a/49h/1h/0h/1/2]{SH_WPKH_KEY}))"],
    "getkeypool": ["--chain=regtest", "getkeypool", "--all", "0", "20"],
    "getkeypool-path": ["--chain=regtest", "getkeypool", "--nokeypool", "--internal", "--path", "m/84h/1h/5h/1/*",
                        "3", "9"],
    "signtx": ["--chain=regtest", "signtx", encode_base64_psbt(p2wpkh_psbt(2))],
    "signmessage": ["--chain=regtest", "signmessage", "Quill signs this", "m/44h/1h/0h/0/0"],
    "export-coldcard": ["--chain=regtest", "export", "--format=coldcard"],
    "export-descriptors": ["--chain=regtest", "export", "--format=descriptors", "--account", "2"],
    "export-bsms": ["--chain=regtest", "export", "--format=bsms", "--label", "Quill shared"],
    "setchain": ["setchain", "regtest"],
    "bad-path": ["--chain=regtest", "getxpub", "m/84x"],
    "wrong-fingerprint": ["--chain=regtest", "--fingerprint=00000000", "getxpub", "m"],
}


@dataclass
class Board:
    device: EmulatedDevice
    daemon: QuillDaemon
    quilld: Quilld
    core: BitcoinD
    url: str
    direct: dict[str, tuple[int, Any]]


@pytest.fixture(scope="module")
def board(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Board]:
    work = tmp_path_factory.mktemp("bridge")
    with EmulatedDevice(work / "emu", f"--test-mnemonic={TEST_MNEMONIC}") as device:
        # quill-signer --device answers first: once quilld runs, the port is quilld's
        direct = {name: signer(f"--device={device.port}", *argv) for name, argv in COMMANDS.items()}
        with QuillDaemon(work / "quilld", f"-device={device.port}", f"-rpcuser={USER}",
                         f"-rpcpassword={PASSWORD}") as daemon:
            url = f"http://{USER}:{PASSWORD}@127.0.0.1:{daemon.port}"
            with BitcoinD(work / "core", f"-signer={VENV_BIN / 'quill-signer'} --bridge={url}") as core:
                yield Board(device, daemon, Quilld(daemon), core, url, direct)


@pytest.mark.parametrize("name", list(COMMANDS))
def test_each_command_answers_the_same_through_the_bridge(board: Board, name: str) -> None:
    bridged = signer(f"--bridge={board.url}", *COMMANDS[name])
    assert bridged == board.direct[name]
    status, answer = bridged
    if name in ("bad-path", "wrong-fingerprint"):
        assert status == 1 and answer["code"] in (-8, -6)
    else:
        assert status == 0, answer


def test_answers_are_hwis(board: Board) -> None:
    answers = {name: answer for name, (_, answer) in board.direct.items()}
    tprv = master_tprv(TEST_MNEMONIC)
    core = board.core
    assert answers["enumerate"][0]["fingerprint"] == FINGERPRINT
    xpub = answers["getxpub"]["xpub"]
    assert list(answers["getxpub"]) == ["xpub"] and xpub.startswith("tpub")
    assert core_address(core, f"wpkh({xpub}/0/7)") == core_address(core, f"wpkh({tprv}/84h/1h/0h/0/7)")
    assert answers["displayaddress-path"] == {"address": core_address(core, f"tr({tprv}/86h/1h/0h/0/3)")}
    assert answers["displayaddress-desc"] == {"address": core_address(core, f"sh(wpkh({tprv}/49h/1h/0h/1/2))")}
    pool = answers["getkeypool"]
    assert [(e["desc"].split("(")[0], e["internal"]) for e in pool] == [
        (kind, internal) for kind in ("pkh", "wpkh", "sh", "tr") for internal in (False, True)]
    assert all(e["range"] == [0, 20] and e["timestamp"] == "now" and e["keypool"] and e["active"]
               and e["watchonly"] for e in pool)
    # Core imports them as they are, and derives the device's addresses from them
    core.rpc("createwallet", named={"wallet_name": "pool", "disable_private_keys": True, "blank": True})
    assert all(r["success"] for r in core.rpc("importdescriptors", pool, wallet="pool"))
    assert core.rpc("getnewaddress", "", "bech32", wallet="pool") == core_address(core, f"wpkh({tprv}/84h/1h/0h/0/0)")
    # signmessage: Core's verifymessage takes it for the P2PKH address of the key
    legacy = core_address(core, f"pkh({tprv}/44h/1h/0h/0/0)")
    assert core.rpc("verifymessage", legacy, answers["signmessage"]["signature"], "Quill signs this") is True
    (entry,) = answers["getkeypool-path"]
    assert entry["desc"].startswith(f"wpkh([{FINGERPRINT}/84h/1h/5h]tpub") and "/1/*)#" in entry["desc"]
    assert (entry["range"], entry["internal"], entry["keypool"], entry["active"]) == ([3, 9], True, False, False)


def test_the_bridge_default_chain_is_quillds(board: Board) -> None:
    # no --chain: quilld's regtest, so a tpub (quill-signer --device alone would say main)
    assert signer(f"--bridge={board.url}", "getxpub", "m/84h/1h/0h") == board.direct["getxpub"]
    status, answer = signer(f"--bridge={board.url}", "getxpub", "m/84h/1h/0h")
    assert answer["xpub"].startswith("tpub")


def test_signtx_reads_and_writes_psbt_files(board: Board, tmp_path: Path) -> None:
    binary, text = tmp_path / "in.psbt", tmp_path / "in.txt"
    psbt = p2wpkh_psbt(2)
    from quill.tx.psbt import decode_base64_psbt, encode_psbt
    binary.write_bytes(encode_psbt(psbt))
    text.write_text(encode_base64_psbt(psbt) + "\n")
    expected = board.direct["signtx"][1]["psbt"]
    for source, out in ((binary, tmp_path / "signed.psbt"), (text, tmp_path / "signed.txt")):
        status, answer = signer(f"--bridge={board.url}", "--chain=regtest", "signtx", "--in", str(source),
                                "--out", str(out))
        assert (status, answer) == (0, {"psbt": expected})
        written = out.read_bytes()
        if source is binary:
            assert written.startswith(b"psbt\xff") and encode_psbt(decode_base64_psbt(expected)) == written
        else:
            assert written.decode().strip() == expected
    # Core finalizes the device's PSBT
    assert board.core.rpc("finalizepsbt", expected)["complete"] is True


def test_quilld_lists_its_own_device_as_the_signer(board: Board) -> None:
    assert board.quilld.rpc("enumeratesigners") == {"signers": [{"fingerprint": FINGERPRINT, "name": "quill"}]}
    assert board.core.rpc("enumeratesigners") == {"signers": [{"fingerprint": FINGERPRINT, "name": "quill"}]}
    help_text = board.quilld.rpc("help", "signercommand")
    assert help_text.startswith('signercommand ["arg",...]') and "quill-signer --bridge" in help_text


def _interleaved(*calls: Any) -> list[Any]:
    results: list[Any] = [None] * len(calls)

    def run(i: int) -> None:
        try:
            results[i] = calls[i]()
        except Exception as e:   # noqa: BLE001 - reported by the assertion below
            results[i] = e
    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(calls))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(600)
    assert not any(isinstance(r, Exception) for r in results), results
    return results


def test_one_board_signs_for_quilld_its_wallet_and_core_at_once(board: Board) -> None:
    quilld, core = board.quilld, board.core
    # quilld's external-signer wallet, from the device it holds; Core's, through the bridge
    quilld.rpc("createwallet", named=HW)
    core.rpc("createwallet", named=HW)
    ours, theirs = (n.rpc("listdescriptors", wallet="hw")["descriptors"] for n in (quilld, core))
    assert [d["desc"] for d in ours] == [d["desc"] for d in theirs] and len(ours) == 8
    hw_address = quilld.rpc("getnewaddress", wallet="hw")
    assert hw_address == core.rpc("getnewaddress", wallet="hw")
    assert quilld.rpc("walletdisplayaddress", hw_address, wallet="hw") == {"address": hw_address}
    # coins: quilld's built-in chain to its wallet and to KEY; Core's chain to Core's wallet
    key_address = encode_destination(p2wpkh(KEY.pubkey), "regtest")
    quilld.rpc("generatetoaddress", 1, hw_address)
    key_block = quilld.rpc("generatetoaddress", 1, key_address)[0]
    quilld.rpc("generatetoaddress", 100, ELSEWHERE)
    core.rpc("generatetoaddress", 101, core.rpc("getnewaddress", wallet="hw"))
    coinbase = quilld.rpc("getblock", key_block, 2)["tx"][0]
    spend = Transaction(2, [TxIn(OutPoint(bytes.fromhex(coinbase["txid"])[::-1], 0), b"", 0xFFFFFFFD)],
                        [TxOut(int(Decimal(str(coinbase["vout"][0]["value"])) * 100_000_000) - 1_000,
                               bytes.fromhex("0014" + "22" * 20))], 0)
    raw, sent, core_sent, xpub = _interleaved(
        lambda: quilld.rpc("signrawtransactionwithkey", spend.hex(), [KEY.wif]),
        lambda: quilld.rpc("send", {ELSEWHERE: Decimal("0.5")}, None, None, 2, wallet="hw"),
        lambda: core.rpc("send", {core.rpc("getnewaddress", wallet="hw"): Decimal("0.5")}, wallet="hw"),
        lambda: signer(f"--bridge={board.url}", "getxpub", "m/84h/1h/0h"))
    assert raw["complete"] is True and sent["complete"] is True and core_sent["complete"] is True
    assert xpub == board.direct["getxpub"]
    txid = quilld.rpc("sendrawtransaction", raw["hex"])
    assert sorted(quilld.rpc("getrawmempool")) == sorted([txid, sent["txid"]])
    quilld.rpc("generatetoaddress", 1, ELSEWHERE)
    core.rpc("generatetoaddress", 1, core.rpc("getnewaddress", wallet="hw"))
    assert quilld.rpc("gettransaction", sent["txid"], wallet="hw")["confirmations"] == 1
    assert quilld.rpc("getrawtransaction", txid, True)["confirmations"] == 1
    assert core.rpc("gettransaction", core_sent["txid"], wallet="hw")["confirmations"] == 1
    # bumpfee and sendall through the lent device too
    again = quilld.rpc("send", {ELSEWHERE: Decimal("0.3")}, None, None, 2, wallet="hw")
    bumped = quilld.rpc("bumpfee", again["txid"], {"fee_rate": 6}, wallet="hw")
    assert bumped["errors"] == [] and quilld.rpc("getrawmempool") == [bumped["txid"]]
    quilld.rpc("generatetoaddress", 1, ELSEWHERE)
    funded = quilld.rpc("walletcreatefundedpsbt", [], {ELSEWHERE: Decimal("0.2")}, 0, {"fee_rate": 2}, wallet="hw")
    processed = quilld.rpc("walletprocesspsbt", funded["psbt"], wallet="hw")
    assert processed["complete"] is True
    quilld.rpc("sendrawtransaction", processed["hex"])
    quilld.rpc("generatetoaddress", 1, ELSEWHERE)
    swept = quilld.rpc("sendall", [ELSEWHERE], None, None, 3, wallet="hw")
    quilld.rpc("generatetoaddress", 1, ELSEWHERE)
    assert quilld.rpc("gettransaction", swept["txid"], wallet="hw")["confirmations"] == 1
    assert quilld.rpc("getbalances", wallet="hw")["mine"]["trusted"] == 0
    # only quilld has the device's port open; Core's signer is quill-signer --bridge
    holders = [line for line in process_command_lines() if board.device.port in line]
    assert holders and all("quilld" in line or "quill.daemon" in line or "-device=" in line for line in holders)
    assert not any("quill-signer" in line for line in holders)


def test_a_signer_command_that_fails_is_hwis_error(board: Board) -> None:
    status, answer = signer(f"--bridge={board.url}", "--chain=regtest", "signtx", "cHNidP8=")
    assert status == 1 and answer["code"] == -8 and answer["error"].startswith("TX decode failed")
    wrong = f"--bridge=http://{USER}:nope@127.0.0.1:{board.daemon.port}"
    status, answer = signer(wrong, "enumerate")
    assert status == 1 and answer == {"error": "quilld refused the bridge's credentials", "code": -6}


def test_bridge_alone_finds_the_local_quilld_by_its_cookie(tmp_path: Path) -> None:
    with EmulatedDevice(tmp_path / "emu", f"--test-mnemonic={TEST_MNEMONIC}") as device:
        daemon = QuillDaemon(tmp_path / "quilld", f"-device={device.port}")
        # quill-cli's way: the port from quill.conf, the cookie from the chain's directory
        (tmp_path / "quilld" / "quill.conf").write_text(f"[regtest]\nrpcport={daemon.port}\n")
        with daemon:
            for chain in (["--chain=regtest"], []):
                status, answer = signer(f"--datadir={tmp_path / 'quilld'}", "--bridge", *chain,
                                        "getxpub", "m/84h/1h/0h")
                assert status == 0 and answer["xpub"].startswith("tpub"), answer
            status, answer = signer("--bridge", f"--datadir={tmp_path / 'quilld'}", "--chain=signet", "enumerate")
            assert status == 1 and answer["code"] == -6 and "credentials" in answer["error"]


def test_a_device_without_a_seed_lends_no_signer(tmp_path: Path) -> None:
    with EmulatedDevice(tmp_path / "emu") as device, \
            QuillDaemon(tmp_path / "quilld", f"-device={device.port}") as daemon:
        quilld = Quilld(daemon)
        assert quilld.rpc("enumeratesigners") == {"signers": []}
        with pytest.raises(Exception) as refused:
            quilld.rpc("createwallet", named=HW)
        assert "No external signers found" in str(refused.value)
    # no device and no -signer: Core's answer
    with QuillDaemon(tmp_path / "bare") as bare:
        with pytest.raises(Exception) as refused:
            Quilld(bare).rpc("enumeratesigners")
        assert "restart quilld with -signer=<cmd>" in str(refused.value)


def test_signercommand_checks_its_arguments(board: Board) -> None:
    quilld = board.quilld
    with pytest.raises(Exception) as refused:
        quilld.rpc("signercommand", ["getxpub", 7])
    assert "args must be an array of strings" in str(refused.value)
    # quill-signer's own refusals come back as its answer, never as a traceback or an exit
    answer = quilld.rpc("signercommand", ["--chain=regtest", "reboot"])
    assert answer["code"] == -8 and "invalid choice: 'reboot'" in answer["error"]
    answer = quilld.rpc("signercommand", ["signtx", "--in", "/etc/passwd"])
    assert answer["code"] == -8 and "unrecognized arguments: --in" in answer["error"]
    assert quilld.rpc("signercommand", ["getxpub", "m/84h/1h/0h"]) == board.direct["getxpub"][1]
    # help's example, as written
    done = board.daemon.cli(f"-rpcuser={USER}", f"-rpcpassword={PASSWORD}", "signercommand",
                            '["getxpub", "m/84h/1h/0h"]')
    assert done.returncode == 0 and json.loads(done.stdout) == board.direct["getxpub"][1], done.stderr
