"""Specter Desktop 2.1 end to end against a real quilld (issue 12, "Real clients in the suite").

Specter runs in its own virtual environment (tests/clients/specter_env.py), in a subprocess that
drives its own classes (tests/clients/specter_driver.py) exactly as its web pages do: it
connects to quilld as its Bitcoin Core node, creates a single-sig wallet from a BIP84 xpub and
a 2-of-3 multisig wallet (P2WSH sortedmulti, BIP48), and reads back what the chain paid them.
quilld runs its built-in regtest chain; the test pays the wallets from anyone-can-spend coinbase
coins, so every amount it checks is one it chose. PSBTs that Specter builds are read back by
quilld's own decodepsbt and analyzepsbt and checked against the keys and coins behind them; the
devices (embit, in the driver) sign, and Specter combines, finalizes and broadcasts through quilld.
Last, `python -m cryptoadvance.specter server` runs headless on the data folder the driver filled
and its web endpoints are read: UTXO-set figures, fees, and each wallet's history and UTXO exports.
"""
from __future__ import annotations

import csv
import io
import json
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from quill.tx.address import decode_destination
from quill.tx.hashes import hash160, sha256
from quill.wallet.bip32 import ExtPrivKey, master_from_seed
from tests.clients.specter_env import specter_python
from tests.kit.rpc_daemon import QuillDaemon, free_port
from tests.wallet_e2e.e2ekit import COIN, FOREIGN_ADDRESS, Net

DRIVER = Path(__file__).with_name("specter_driver.py")
PREFIX = "SPECTER-DRIVER "
HARDENED = 0x80000000
BIP84 = (84 | HARDENED, 1 | HARDENED, 0 | HARDENED)            # m/84h/1h/0h (testnet coin type)
BIP48_P2WSH = (48 | HARDENED, 1 | HARDENED, 0 | HARDENED, 2 | HARDENED)

# What the chain pays each wallet, in sats, by receive index: (amount, confirmed)
SINGLE_RECEIVES = [(150_000_000, True), (25_000_000, True), (10_000_000, False)]
MULTI_RECEIVES = [(200_000_000, True), (3_000_000, False)]


class Signer:
    """A seed the test holds, and the account xpub Specter is given, with its key origin."""

    def __init__(self, name: str, path: tuple[int, ...]) -> None:
        self.seed = sha256(f"specter12/{name}".encode())
        self.master: ExtPrivKey = master_from_seed(self.seed)
        self.fingerprint = self.master.neuter().fingerprint().hex()
        self.path = path
        account = self.master
        for index in path:
            account = account.derive(index)
        self.account = account.neuter()

    @property
    def origin(self) -> str:
        return "/".join(f"{i & ~HARDENED}h" if i & HARDENED else str(i) for i in self.path)

    @property
    def xpub(self) -> str:
        return f"[{self.fingerprint}/{self.origin}]{self.account.serialize('regtest')}"

    def pubkey(self, branch: int, index: int) -> bytes:
        return self.account.derive(branch).derive(index).pubkey


class Specter:
    """The driver subprocess: one JSON command a line, one answer a line."""

    def __init__(self, python: Path, data_folder: Path) -> None:
        # Specter's logging goes to a file: a pipe nobody reads could fill and stop it
        self.log = data_folder.with_name(data_folder.name + ".log")
        with open(self.log, "w") as log:
            self.data_folder = data_folder
            self.proc = subprocess.Popen([str(python), str(DRIVER), str(data_folder)], stdin=subprocess.PIPE,
                                         stdout=subprocess.PIPE, stderr=log, text=True)

    def call(self, op: str, **args: Any) -> Any:
        """Specter's answer; an exception Specter raised fails the test with its traceback."""
        reply = self.try_call(op, **args)
        if "error" in reply:
            pytest.fail(f"Specter failed in {op}: {reply['error']}\n{reply['traceback']}", pytrace=False)
        return reply["ok"]

    def try_call(self, op: str, **args: Any) -> dict[str, Any]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps({"op": op, **args}) + "\n")
        self.proc.stdin.flush()
        for line in self.proc.stdout:
            if line.startswith(PREFIX):
                return dict(json.loads(line[len(PREFIX):]))
        raise AssertionError(f"Specter's driver exited {self.proc.wait()}: {self.log.read_text()[-3000:]}")

    def close(self) -> None:
        if self.proc.stdin:
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        if self.proc.stdout:
            self.proc.stdout.close()


class Scene:
    """quilld with its chain, Specter connected to it, both wallets created and paid."""

    def __init__(self, net: Net, specter: Specter, connected: dict[str, Any]) -> None:
        self.net = net
        self.node: QuillDaemon = net.node
        self.specter = specter
        self.connected = connected
        self.single_key = Signer("single", BIP84)
        self.multi_keys = [Signer(f"cosigner{i}", BIP48_P2WSH) for i in range(3)]
        self.single = specter.call("create_wallet", name="single", sigs_required=1, key_type="wpkh",
                                   xpubs=[self.single_key.xpub])
        self.multi = specter.call("create_wallet", name="multi", sigs_required=2, key_type="wsh",
                                  xpubs=[k.xpub for k in self.multi_keys])
        self.txids: dict[str, list[str]] = {}
        confirmed, unconfirmed = [], []
        for name, wallet, receives in (("single", self.single, SINGLE_RECEIVES),
                                       ("multi", self.multi, MULTI_RECEIVES)):
            for index, (sats, mined) in enumerate(receives):
                (confirmed if mined else unconfirmed).append((name, wallet["addresses"][index], sats))
        for batch, mine in ((confirmed, True), (unconfirmed, False)):
            for name, address, sats in batch:    # one payment a transaction, each its own history entry
                tx = net.pay([(decode_destination(address, "regtest"), sats)])
                self.txids.setdefault(name, []).append(tx.txid_hex())
            if mine:
                net.mine()

    def wallet_rpc(self, name: str, method: str, *params: Any) -> Any:
        """Ask quilld itself, on the wallet Specter made there."""
        wallet = self.single if name == "single" else self.multi
        return self.node.rpc(method, *params, path=f"/wallet/{wallet['core_wallet']}")


@pytest.fixture(scope="module")
def scene(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Scene]:
    python = specter_python()
    net = Net("built-in", tmp_path_factory)
    specter = Specter(python, tmp_path_factory.mktemp("specter-data"))
    try:
        node = net.node
        connected = specter.call("connect", host="127.0.0.1", port=node.port, user=node.user,
                                 password=node.password)
        yield Scene(net, specter, connected)
    finally:
        specter.close()
        net.close()


def sats(btc: float | str | Decimal) -> int:
    """An amount Specter shows (a float, or text) in satoshis."""
    return int((Decimal(str(btc)) * COIN).quantize(Decimal(1)))


def single_sig_script(signer: Signer, branch: int, index: int) -> bytes:
    return b"\x00\x14" + hash160(signer.pubkey(branch, index))


def multisig_script(signers: list[Signer], branch: int, index: int) -> bytes:
    """BIP67 sortedmulti(2, ...) in P2WSH: the script Specter's descriptor stands for."""
    keys = sorted(s.pubkey(branch, index) for s in signers)
    witness_script = b"\x52" + b"".join(b"\x21" + k for k in keys) + b"\x53\xae"
    return b"\x00\x20" + sha256(witness_script)


def test_specter_connects_to_quilld_as_its_core_node(scene: Scene) -> None:
    info = scene.connected
    assert info["test_rpc"]["tests"] == {"connectable": True, "recent_version": True, "credentials": True,
                                         "wallets": True}, info["test_rpc"]
    assert info["test_rpc"]["err"] == ""
    assert info["is_running"] is True and info["chain"] == "regtest"
    assert info["core_version"] >= 210000          # so Specter makes descriptor wallets
    assert info["blocks"] == scene.node.rpc("getblockcount") - 1   # one block mined after connecting
    assert info["mempool_info"]["loaded"] is True


def test_wallets_are_quilld_descriptor_wallets_with_specters_addresses(scene: Scene) -> None:
    for name, wallet in (("single", scene.single), ("multi", scene.multi)):
        info = scene.wallet_rpc(name, "getwalletinfo")
        assert info["walletname"] == wallet["core_wallet"] and wallet["core_wallet"].endswith(f"/{name}")
        assert info["descriptors"] is True and info["private_keys_enabled"] is False
        for index, address in enumerate(wallet["addresses"]):
            address_info = scene.wallet_rpc(name, "getaddressinfo", address)
            assert address_info["ismine"] is True and address_info["solvable"] is True, address_info
            assert address_info["parent_desc"].split("#")[0] == wallet["recv_descriptor"].split("#")[0]
            expected = (single_sig_script(scene.single_key, 0, index) if name == "single"
                        else multisig_script(scene.multi_keys, 0, index))
            assert decode_destination(address, "regtest") == expected
        change_info = scene.wallet_rpc(name, "getaddressinfo", wallet["change_address"])
        assert change_info["ismine"] is True and change_info["ischange"] is True
        assert change_info["parent_desc"].split("#")[0] == wallet["change_descriptor"].split("#")[0]
    assert scene.single["recv_descriptor"].startswith(f"wpkh([{scene.single_key.fingerprint}/84h/1h/0h]tpub")
    assert scene.multi["recv_descriptor"].startswith("wsh(sortedmulti(2,")


@pytest.mark.parametrize("name", ["single", "multi"])
def test_specter_shows_the_balance(scene: Scene, name: str) -> None:
    receives = SINGLE_RECEIVES if name == "single" else MULTI_RECEIVES
    shown = scene.specter.call("balance", name=name)
    confirmed = sum(s for s, mined in receives if mined)
    pending = sum(s for s, mined in receives if not mined)
    assert sats(shown["balance"]["trusted"]) == confirmed
    assert sats(shown["balance"]["untrusted_pending"]) == pending
    assert Decimal(str(shown["balance"]["immature"])) == 0
    assert sats(shown["amount_total"]) == sats(shown["amount_available"]) \
        == confirmed + pending


@pytest.mark.parametrize("name", ["single", "multi"])
def test_specter_shows_received_transactions_balance_and_utxos(scene: Scene, name: str) -> None:
    receives = SINGLE_RECEIVES if name == "single" else MULTI_RECEIVES
    wallet = scene.single if name == "single" else scene.multi
    report = scene.specter.call("report", name=name)

    by_txid = {tx["txid"]: tx for tx in report["txlist"]}
    assert sorted(by_txid) == sorted(scene.txids[name])
    paid = {address: sats for address, (sats, _) in zip(wallet["addresses"], receives, strict=False)}
    for tx in report["txlist"]:
        assert tx["category"] == "receive", tx
        assert tx["address"] in paid, tx
        assert sats(tx["flow_amount"]) == paid[tx["address"]], tx
        assert (tx["confirmations"] > 0) == dict(zip(wallet["addresses"], [m for _, m in receives],
                                                     strict=False))[tx["address"]], tx

    confirmed = sum(s for s, mined in receives if mined)
    pending = sum(s for s, mined in receives if not mined)
    assert sats(report["balance"]["trusted"]) == confirmed
    assert sats(report["balance"]["untrusted_pending"]) == pending
    assert sats(report["amount_total"]) == confirmed + pending

    utxos = {(u["txid"], u["vout"]): u for u in report["utxo"]}
    assert len(utxos) == len(receives)
    for u in utxos.values():
        assert u["address"] in paid and sats(u["amount"]) == paid[u["address"]], u
    listed = scene.wallet_rpc(name, "listunspent", 0)
    assert sorted(utxos) == sorted((u["txid"], u["vout"]) for u in listed)


def send_checks(scene: Scene, name: str, built: dict[str, Any], amount_sats: int,
                inputs: list[tuple[str, int]] | None) -> None:
    """quilld's decodepsbt and analyzepsbt read Specter's PSBT as the payment it was asked for.
    (walletcreatefundedpsbt makes a BIP370 version 2 PSBT, Core 31's default, and Specter keeps it.)"""
    wallet = scene.single if name == "single" else scene.multi
    signers = [scene.single_key] if name == "single" else scene.multi_keys
    decoded = scene.node.rpc("decodepsbt", built["psbt"])
    assert decoded["psbt_version"] == 2 and decoded["input_count"] == len(decoded["inputs"])
    spent = [(i["previous_txid"], i["previous_vout"]) for i in decoded["inputs"]]
    if inputs is not None:
        assert spent == inputs
    assert all(i["sequence"] < 0xFFFFFFFE for i in decoded["inputs"])      # Specter asks for RBF
    outputs = decoded["outputs"]
    payment = [n for n, o in enumerate(outputs) if o["script"].get("address") == FOREIGN_ADDRESS]
    assert len(payment) == 1 and outputs[payment[0]]["amount"] * COIN == amount_sats
    assert "bip32_derivs" not in outputs[payment[0]]
    change = [n for n in range(len(outputs)) if n != payment[0]]
    assert len(change) == 1
    change_address = outputs[change[0]]["script"]["address"]
    change_info = scene.wallet_rpc(name, "getaddressinfo", change_address)
    assert change_info["ismine"] is True and change_info["ischange"] is True
    assert change_info["parent_desc"].split("#")[0] == wallet["change_descriptor"].split("#")[0]
    change_derivs = outputs[change[0]]["bip32_derivs"]
    assert sorted(d["master_fingerprint"] for d in change_derivs) == sorted(s.fingerprint for s in signers)
    assert {path_of(d["path"])[0] for d in change_derivs} == {1}

    in_sats = sum(i["witness_utxo"]["amount"] * COIN for i in decoded["inputs"])
    out_sats = sum(o["amount"] * COIN for o in outputs)
    assert decoded["fee"] * COIN == in_sats - out_sats > 0
    assert built["fee"] == in_sats - out_sats                 # Specter shows the fee quilld counted
    for psbt_in in decoded["inputs"]:
        derivs = psbt_in["bip32_derivs"]
        assert sorted(d["master_fingerprint"] for d in derivs) == sorted(s.fingerprint for s in signers)
        assert {path_of(d["path"])[0] for d in derivs} == {0}          # coins paid to receive addresses
        if name == "multi":
            assert psbt_in["witness_script"]["type"] == "multisig"
            assert psbt_in["witness_utxo"]["scriptPubKey"]["address"] in wallet["addresses"]
    if name == "multi":   # Specter adds the cosigners' xpubs for the signing devices
        assert sorted(x["master_fingerprint"] for x in decoded["global_xpubs"]) == sorted(
            s.fingerprint for s in signers)

    analyzed = scene.node.rpc("analyzepsbt", built["psbt"])
    assert analyzed["next"] == "signer" and analyzed["fee"] == decoded["fee"]
    for psbt_in, entry in zip(decoded["inputs"], analyzed["inputs"], strict=True):
        assert entry["has_utxo"] is True and entry["is_final"] is False and entry["next"] == "signer"
        by_fingerprint = {s.fingerprint: s for s in signers}
        expected = [hash160(by_fingerprint[d["master_fingerprint"]].pubkey(*path_of(d["path"]))).hex()
                    for d in psbt_in["bip32_derivs"]]
        assert sorted(entry["missing"]["signatures"]) == sorted(expected)
    # Specter asked for 2 sat/vB: it asks quilld again with the rate scaled by its own size estimate
    # (smaller than Core's for multisig), so it shows 2 and quilld's estimate, with the largest
    # signatures, is a little above
    assert abs(Decimal(str(built["fee_rate"])) - 2) <= Decimal("0.05"), built["fee_rate"]
    rate = analyzed["fee"] * COIN / analyzed["estimated_vsize"]
    assert 2 - Decimal("0.05") <= rate < Decimal("2.5"), rate
    assert analyzed["estimated_feerate"] == (analyzed["fee"] * 1000 / analyzed["estimated_vsize"]).quantize(
        Decimal("0.00000001"), rounding="ROUND_DOWN")


def path_of(keypath: str) -> tuple[int, int]:
    *_, branch, index = keypath.split("/")
    return int(branch), int(index)


@pytest.mark.parametrize("name", ["single", "multi"])
def test_specter_builds_a_psbt_from_chosen_coins(scene: Scene, name: str) -> None:
    """Specter's coin control: the coins are given, so walletcreatefundedpsbt funds fixed inputs."""
    report = scene.specter.call("report", name=name)
    coin = max(report["utxo"], key=lambda u: u["amount"])
    amount = 40_000_000
    built = scene.specter.call("createpsbt", name=name, address=FOREIGN_ADDRESS, amount=amount / COIN,
                               fee_rate=2, selected_coins=[{"txid": coin["txid"], "vout": coin["vout"]}])
    send_checks(scene, name, built, amount, [(coin["txid"], coin["vout"])])
    # Specter keeps the PSBT as pending and locks its coins in quilld
    assert built["pending"] == [built["txid"]]
    locked = scene.wallet_rpc(name, "listlockunspent")
    assert {"txid": coin["txid"], "vout": coin["vout"]} in locked
    scene.specter.call("discard_psbts", name=name)
    assert scene.wallet_rpc(name, "listlockunspent") == []


@pytest.mark.parametrize("name", ["single", "multi"])
def test_specter_builds_a_psbt_choosing_the_coins_itself(scene: Scene, name: str) -> None:
    """Specter's plain send: no coins given, so quilld's walletcreatefundedpsbt selects them."""
    amount = 30_000_000
    built = scene.specter.call("createpsbt", name=name, address=FOREIGN_ADDRESS, amount=amount / COIN,
                               fee_rate=2, selected_coins=[])
    send_checks(scene, name, built, amount, None)
    scene.specter.call("discard_psbts", name=name)


class Server:
    """`python -m cryptoadvance.specter server`, headless, on the data folder the driver filled
    (its node, devices and wallets), on a free loopback port; its log goes to a file."""

    def __init__(self, python: Path, data_folder: Path) -> None:
        self.port = free_port()
        self.log = data_folder.with_name(data_folder.name + "-server.log")
        with open(self.log, "w") as log:
            self.proc = subprocess.Popen(
                [str(python), "-m", "cryptoadvance.specter", "server", "--host", "127.0.0.1", "--port",
                 str(self.port), "--specter-data-folder", str(data_folder), "--skiphwiinitialisation",
                 "--no-filelog"], stdout=log, stderr=log)

    def get(self, path: str, timeout: float = 60.0) -> tuple[int, bytes]:
        """GET once the server listens: (status, body)."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.port}{path}", timeout=30) as reply:
                    return reply.status, reply.read()
            except urllib.error.HTTPError as e:
                return e.code, e.read()
            except OSError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    raise AssertionError(f"Specter's server did not answer: {self.log.read_text()[-3000:]}") from None
                time.sleep(0.2)

    def wallets_loaded(self, timeout: float = 60.0) -> dict[str, Any]:
        """The wallets-loading answer once Specter has loaded its wallets (it does so in a thread
        after start-up, and until then sends wallet pages to its about page)."""
        deadline = time.monotonic() + timeout
        while True:
            status, body = self.get("/wallets/wallets_loading/")
            assert status == 200, body[:300]
            loading = json.loads(body)
            if not loading["is_loading"] and (loading["loaded_wallets"] or loading["failed_load_wallets"]):
                return dict(loading)
            assert time.monotonic() < deadline, loading
            time.sleep(0.2)

    def csv(self, path: str) -> list[dict[str, str]]:
        status, body = self.get(path)
        assert status == 200 and body.startswith(b"Date,"), (path, status, body[:300], self.log.read_text()[-3000:])
        return list(csv.DictReader(io.StringIO(body.decode())))

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def failures(log: str) -> list[str]:
    """The lines of Specter's log that say why a list came back short (an RPC it could not make)."""
    return [line for line in log.splitlines() if "ERROR" in line or "Failed" in line][-20:]


def test_specter_server_starts_on_quilld_and_exports_history_and_utxos(scene: Scene) -> None:
    server = Server(specter_python(), scene.specter.data_folder)
    try:
        status, page = server.get("/")
        assert status == 200 and b"<title>Specter</title>" in page
        status, body = server.get("/wallets/get_txout_set_info")      # the node page's UTXO-set figures
        assert status == 200
        shown = json.loads(body, parse_float=Decimal)
        ours = scene.node.rpc("gettxoutsetinfo")
        keys = ("height", "bestblock", "txouts", "total_amount", "hash_serialized_3")
        assert {k: shown[k] for k in keys} == {k: ours[k] for k in keys}
        status, body = server.get("/wallets/fees")       # estimatesmartfee without data: Specter's minimum
        assert status == 200 and json.loads(body)["error_messages"] == []

        loaded = server.wallets_loaded()
        assert sorted(loaded["loaded_wallets"]) == ["multi", "single"] and loaded["failed_load_wallets"] == []
        for name, wallet, receives in (("single", scene.single, SINGLE_RECEIVES),
                                       ("multi", scene.multi, MULTI_RECEIVES)):
            expected = {(wallet["addresses"][i], Decimal(sats) / COIN, mined)
                        for i, (sats, mined) in enumerate(receives)}
            for export in ("transactions.csv", "utxo.csv"):
                rows = server.csv(f"/wallets/wallet/{wallet['alias']}/{export}")
                assert {r["TxID"] for r in rows} == set(scene.txids[name]), (
                    name, export, failures(server.log.read_text()))
                assert {r["Category"] for r in rows} == {"receive"}
                assert {(r["Address"], Decimal(r["Amount (BTC)"]), r["Block Height"] != "Unconfirmed")
                        for r in rows} == expected, (name, export)
    finally:
        server.stop()


@pytest.mark.parametrize("name", ["single", "multi"])
def test_specter_signs_combines_and_broadcasts_a_send(scene: Scene, name: str) -> None:
    """The send to its end: devices sign Specter's PSBT (2 of 3 for the multisig), Specter combines
    and finalizes it on quilld, quilld accepts and relays it, and once mined Specter's history and
    balance show the payment and the change. Runs last: it spends the scene's coins."""
    wallet = scene.single if name == "single" else scene.multi
    signers = [scene.single_key] if name == "single" else scene.multi_keys[:2]
    before = scene.specter.call("report", name=name)
    coin = max(before["utxo"], key=lambda u: u["amount"])
    amount = 50_000_000
    built = scene.specter.call("createpsbt", name=name, address=FOREIGN_ADDRESS, amount=amount / COIN,
                               fee_rate=2, selected_coins=[{"txid": coin["txid"], "vout": coin["vout"]}])
    sent = scene.specter.call("sign_and_send", name=name, txid=built["txid"], seeds=[s.seed.hex() for s in signers])
    assert sent["signatures"] == [1] * len(signers) and sent["complete"] is True
    assert sent["accepted"]["allowed"] is True and sent["accepted"]["txid"] == built["txid"]
    assert sent["sent"] == built["txid"] and sent["pending"] == []
    assert built["txid"] in scene.node.rpc("getrawmempool")
    scene.net.mine()

    after = scene.specter.call("report", name=name)
    send = [tx for tx in after["txlist"] if tx["txid"] == built["txid"]]
    assert len(send) == 1 and send[0]["category"] == "send" and send[0]["confirmations"] == 1, send
    assert sats(send[0]["flow_amount"]) == -(amount + built["fee"]), send
    total_before = sats(before["amount_total"])
    assert sats(after["amount_total"]) == total_before - amount - built["fee"]
    utxos = {(u["txid"], u["vout"]) for u in after["utxo"]}
    assert (coin["txid"], coin["vout"]) not in utxos
    change = [u for u in after["utxo"] if u["txid"] == built["txid"]]
    assert len(change) == 1 and sats(change[0]["amount"]) == \
        sats(coin["amount"]) - amount - built["fee"]
    assert scene.wallet_rpc(name, "getaddressinfo", change[0]["address"])["ischange"] is True
    assert wallet["change_address"] == change[0]["address"]
