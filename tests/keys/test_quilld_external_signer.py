"""quilld's own external-signer wallets (issue 13, item 5): quilld runs
`-signer="<venv>/bin/quill-signer --device=<pty>"` against quill-emu started with the
BIP39 test mnemonic and the test-only confirmation channel. On quilld's built-in regtest
chain `enumeratesigners` lists the device, `createwallet ... external_signer=true` imports
its descriptors, `getnewaddress` gives the BIP84 address of m/84'/1'/0'/0/0 (Core derives
the expected one from the mnemonic's tprv), the device displays it, and coins mined to it
are spent with `send` and `sendall`: the device shows each spend on its channel, quilld
broadcasts, and the transactions confirm.

The same calls go to the real Bitcoin Core running the same signer: answers, errors and
the signed transaction of one PSBT are compared, by a quilld that follows that Core
(`-chainsource`) so that both wallets see the same coins; quilld bumps a send's fee on its
built-in chain and, following Core, into Core's mempool."""
from __future__ import annotations

import json
import time
from collections.abc import Iterator
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from quill.tx.address import decode_destination, encode_destination
from quill.tx.psbt import KeyOrigin, decode_base64_psbt, encode_base64_psbt
from quill.tx.transaction import TxOut
from tests.keys.emulated import TEST_MNEMONIC, VENV_BIN, EmulatedDevice
from tests.keys.test_core_external_signer import FINGERPRINT, core_address, master_tprv
from tests.keys.test_core_send import PSBT_BOARD, ChannelApprover
from tests.kit.bitcoind import BitcoinD, CoreRPCError
from tests.kit.rpc_daemon import QuillDaemon
from tests.ui.screenkit import prompt_items

# an address of no wallet here: the witness program 0x22 * 20
ELSEWHERE = encode_destination(bytes.fromhex("0014" + "22" * 20), "regtest")
HW = {"wallet_name": "hw", "disable_private_keys": True, "descriptors": True, "external_signer": True}


class Quilld:
    """Named and wallet calls to a QuillDaemon, answering as BitcoinD.rpc does."""

    def __init__(self, daemon: QuillDaemon) -> None:
        self.daemon = daemon

    def rpc(self, method: str, *params: Any, wallet: str | None = None, named: dict[str, Any] | None = None) -> Any:
        body = json.dumps({"jsonrpc": "1.0", "id": "t", "method": method,
                           "params": named if named is not None else list(params)}, default=str)
        status, raw, _ = self.daemon.post(body, path="/" if wallet is None else f"/wallet/{wallet}")
        reply = json.loads(raw, parse_float=Decimal)
        if reply.get("error"):
            raise CoreRPCError(status, reply["error"])
        return reply["result"]


def answer(node: Any, method: str, *params: Any, **kwargs: Any) -> Any:
    """The result, or (code, message) of the error."""
    try:
        return node.rpc(method, *params, **kwargs)
    except CoreRPCError as e:
        return e.code, e.message


@dataclass
class Nodes:
    quilld: Quilld
    core: BitcoinD
    approver: ChannelApprover
    follower: Quilld
    daemon: QuillDaemon
    device: EmulatedDevice


@pytest.fixture(scope="module")
def nodes(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Nodes]:
    work = tmp_path_factory.mktemp("quilld-signer")
    with EmulatedDevice(work / "emu", f"--test-mnemonic={TEST_MNEMONIC}", "--approve=channel",
                        board=PSBT_BOARD) as device:
        signer = f"-signer={VENV_BIN / 'quill-signer'} --device={device.port}"
        with QuillDaemon(work / "quilld", signer) as daemon, BitcoinD(work / "core", signer) as core, \
                QuillDaemon(work / "follower", signer, f"-chainsource={core.url_for_follower}",
                            "-chainpollinterval=50") as following, \
                ChannelApprover(device.datadir) as approver:
            quilld, follower = Quilld(daemon), Quilld(following)
            for node in (quilld, core, follower):
                node.rpc("createwallet", named=HW)
            yield Nodes(quilld, core, approver, follower, daemon, device)


def test_enumeratesigners_and_the_wallet_are_cores(nodes: Nodes) -> None:
    quilld, core = nodes.quilld, nodes.core
    signers = quilld.rpc("enumeratesigners")
    assert signers == {"signers": [{"fingerprint": FINGERPRINT, "name": "quill"}]}
    assert signers == core.rpc("enumeratesigners")
    ours, theirs = (n.rpc("listdescriptors", wallet="hw")["descriptors"] for n in (quilld, core))
    assert len(ours) == 8
    # the same descriptors, active, internal and ranged as Core's (timestamps are each one's clock)
    assert [{k: v for k, v in d.items() if k != "timestamp"} for d in ours] == \
        [{k: v for k, v in d.items() if k != "timestamp"} for d in theirs]
    info, core_info = (n.rpc("getwalletinfo", wallet="hw") for n in (quilld, core))
    assert info["external_signer"] is True and info["blank"] is False
    assert info["flags"] == core_info["flags"] == ["last_hardened_xpub_cached", "disable_private_keys",
                                                   "descriptor_wallet", "external_signer"]
    assert list(info) == [k for k in core_info if k in info]


def test_the_device_shows_the_bip84_address(nodes: Nodes) -> None:
    quilld, core, approver = nodes.quilld, nodes.core, nodes.approver
    address = quilld.rpc("getnewaddress", wallet="hw")
    assert address == core_address(core, f"wpkh({master_tprv(TEST_MNEMONIC)}/84h/1h/0h/0/0)")
    assert quilld.rpc("walletdisplayaddress", address, wallet="hw") == {"address": address}
    assert prompt_items(approver.prompts[-1])[0] == "Address: " + address    # the address screen


def test_quilld_sends_and_sweeps_through_the_device(nodes: Nodes) -> None:
    quilld, approver = nodes.quilld, nodes.approver
    quilld.rpc("generatetoaddress", 1, quilld.rpc("getnewaddress", wallet="hw"))
    to = ELSEWHERE
    quilld.rpc("generatetoaddress", 100, to)
    # quilld has no -fallbackfee (nor fee data on a fresh chain): explicit fee rates, sat/vB
    sent = quilld.rpc("send", {to: Decimal("0.5")}, None, None, 2, wallet="hw")
    assert list(sent) == ["txid", "complete"] and sent["complete"] is True
    assert f": {to} 0.50000000 BTC" in approver.prompts[-1]      # the review's output (issue 26)
    assert quilld.rpc("getrawmempool") == [sent["txid"]]
    # bumpfee: the device signs the replacement, the built-in mempool takes it in place of the send
    bumped = quilld.rpc("bumpfee", sent["txid"], {"fee_rate": 5}, wallet="hw")
    assert list(bumped) == ["txid", "origfee", "fee", "errors"] and bumped["errors"] == []
    assert bumped["fee"] > bumped["origfee"] and f": {to} 0.50000000 BTC" in approver.prompts[-1]
    assert f"Fee: {bumped['fee']:.8f} BTC" in prompt_items(approver.prompts[-1])
    assert quilld.rpc("getrawmempool") == [bumped["txid"]]
    old, new = (quilld.rpc("gettransaction", t, wallet="hw") for t in (sent["txid"], bumped["txid"]))
    assert (old["trusted"], old["walletconflicts"], old["mempoolconflicts"]) == \
        (False, [bumped["txid"]], [bumped["txid"]])
    assert (new["trusted"], new["walletconflicts"], new["mempoolconflicts"]) == (True, [sent["txid"]], [])
    # Core's mapValue entries come after the other fields of WalletTxToJSON
    # (bip125-replaceable, between them, only under -deprecatedrpc=bip125, as Core 31)
    assert list(old)[list(old).index("timereceived"):][:2] == ["timereceived", "replaced_by_txid"]
    assert old["replaced_by_txid"] == bumped["txid"] and new["replaces_txid"] == sent["txid"]
    assert answer(quilld, "bumpfee", sent["txid"], {"fee_rate": 7}, wallet="hw") == \
        (-4, f"Cannot bump transaction {sent['txid']} which was already bumped by transaction {bumped['txid']}")
    quilld.rpc("generatetoaddress", 1, to)
    assert quilld.rpc("gettransaction", bumped["txid"], wallet="hw")["confirmations"] == 1
    assert quilld.rpc("gettransaction", sent["txid"], wallet="hw")["confirmations"] == -1
    # a payment from the change of one still unconfirmed: its bump also pays what the parent lacks
    parent = quilld.rpc("send", {to: Decimal("0.1")}, None, None, 2, wallet="hw")["txid"]
    change = [u for u in quilld.rpc("listunspent", 0, 0, wallet="hw") if u["txid"] == parent][0]
    child = quilld.rpc("send", {to: Decimal("0.2")}, None, None, 2,
                       {"inputs": [{"txid": parent, "vout": change["vout"]}], "add_inputs": False},
                       wallet="hw")["txid"]
    bumped = quilld.rpc("bumpfee", child, {"fee_rate": 10}, wallet="hw")
    entries = {t: quilld.rpc("getmempoolentry", t) for t in (parent, bumped["txid"])}
    lacking = 10 * entries[parent]["vsize"] - entries[parent]["fees"]["base"] * 100_000_000
    own = bumped["fee"] * 100_000_000 - lacking      # at 10 sat/vB of the size estimated before signing
    assert lacking > 0 and 10 * entries[bumped["txid"]]["vsize"] <= own <= 10 * (entries[bumped["txid"]]["vsize"] + 1)
    assert sorted(quilld.rpc("getrawmempool")) == sorted([parent, bumped["txid"]])
    quilld.rpc("generatetoaddress", 1, to)
    before = quilld.rpc("getbalances", wallet="hw")["mine"]["trusted"]
    swept = quilld.rpc("sendall", [to], None, None, 2, wallet="hw")
    assert list(swept) == ["txid", "complete"] and swept["complete"] is True
    quilld.rpc("generatetoaddress", 1, to)
    tx = quilld.rpc("gettransaction", swept["txid"], wallet="hw")
    assert tx["confirmations"] == 1 and tx["amount"] + tx["fee"] == -before
    assert quilld.rpc("getbalances", wallet="hw")["mine"]["trusted"] == 0


def _synced(follower: Quilld, core: BitcoinD) -> None:
    tip = core.rpc("getbestblockhash")
    deadline = time.monotonic() + 30
    while follower.rpc("getbestblockhash") != tip or \
            set(follower.rpc("getrawmempool")) != set(core.rpc("getrawmempool")):
        assert time.monotonic() < deadline, "the follower did not catch up"
        time.sleep(0.05)


def test_the_same_psbt_signs_to_the_same_transaction_and_bumpfee(nodes: Nodes) -> None:
    """quilld following Core: both hold the signer's descriptors and see the same coins."""
    follower, core = nodes.follower, nodes.core
    core.rpc("createwallet", "miner")
    core.rpc("generatetoaddress", 101, core.rpc("getnewaddress", wallet="miner"))
    core.rpc("sendtoaddress", core.rpc("getnewaddress", "", "bech32m", wallet="hw"), 1, wallet="miner")
    core.rpc("sendtoaddress", core.rpc("getnewaddress", "", "p2sh-segwit", wallet="hw"), 1, wallet="miner")
    core.rpc("generatetoaddress", 1, core.rpc("getnewaddress", wallet="miner"))
    _synced(follower, core)
    # signrawtransactionwithwallet signs nothing (Core's signer signs PSBTs only): the same answer
    coins = [{"txid": u["txid"], "vout": u["vout"]} for u in core.rpc("listunspent", wallet="hw")]
    raw = core.rpc("createrawtransaction", coins, {ELSEWHERE: Decimal("1.9")})
    answered = follower.rpc("signrawtransactionwithwallet", raw, wallet="hw")
    assert answered == core.rpc("signrawtransactionwithwallet", raw, wallet="hw")
    assert answered["complete"] is False and len(answered["errors"]) == 2
    funded = core.rpc("walletcreatefundedpsbt", [], {ELSEWHERE: Decimal("1.5")}, wallet="hw")["psbt"]
    ours = follower.rpc("walletprocesspsbt", funded, wallet="hw")
    theirs = core.rpc("walletprocesspsbt", funded, wallet="hw")
    assert ours["complete"] is True and ours == theirs
    # without `sign` nothing reaches the device, as Core
    assert follower.rpc("walletprocesspsbt", funded, False, wallet="hw") == \
        core.rpc("walletprocesspsbt", funded, False, wallet="hw")
    # send, then bumpfee: quilld signs on the device, Core's mempool takes the replacement
    sent = follower.rpc("send", {ELSEWHERE: Decimal("0.5")}, None, None, 2, wallet="hw")
    assert list(sent) == ["txid", "complete"] and sent["complete"] is True
    assert core.rpc("getrawmempool") == [sent["txid"]]
    _synced(follower, core)
    bumped = follower.rpc("bumpfee", sent["txid"], {"fee_rate": 5}, wallet="hw")
    assert list(bumped) == ["txid", "origfee", "fee", "errors"] and bumped["fee"] > bumped["origfee"]
    assert bumped["errors"] == [] and core.rpc("getrawmempool") == [bumped["txid"]]
    core.rpc("generatetoaddress", 1, core.rpc("getnewaddress", wallet="miner"))
    _synced(follower, core)
    assert follower.rpc("gettransaction", bumped["txid"], wallet="hw")["confirmations"] == 1
    assert core.rpc("gettransaction", bumped["txid"], wallet="hw")["confirmations"] == 1


def test_errors_are_cores(nodes: Nodes, tmp_path: Path) -> None:
    quilld, core = nodes.quilld, nodes.core
    address = quilld.rpc("getnewaddress", wallet="hw")
    for node in (quilld, core):
        node.rpc("createwallet", named={"wallet_name": "watch", "disable_private_keys": True})
    same = [
        ("createwallet", (), {"named": {**HW, "wallet_name": "keys", "disable_private_keys": False}}),
        ("walletdisplayaddress", (address,), {"wallet": "watch"}),
        ("walletdisplayaddress", ("bcrt1qnotanaddress",), {"wallet": "hw"}),
        ("sendtoaddress", (address, 1), {"wallet": "hw"}),
        ("sendtoaddress", (address, 1), {"wallet": "watch"}),
        ("sendtoaddress", ("nope", 1), {"wallet": "hw"}),
        ("signrawtransactionwithwallet", (core.rpc("createrawtransaction", [{"txid": "11" * 32, "vout": 0}],
                                                   {address: 1}),), {"wallet": "watch"}),
        ("signrawtransactionwithwallet", ("00",), {"wallet": "hw"}),
    ]
    for method, params, kwargs in same:
        assert answer(quilld, method, *params, **kwargs) == answer(core, method, *params, **kwargs), method
    # a PSBT none of whose inputs is the signer's: Core's EXTERNAL_SIGNER_FAILED
    foreign = core.rpc("createpsbt", [{"txid": "11" * 32, "vout": 0}], {address: 1})
    assert answer(quilld, "walletprocesspsbt", foreign, wallet="hw") == \
        answer(core, "walletprocesspsbt", foreign, wallet="hw") == (-25, "External signer failed to sign")
    # no -signer: Core's words, quilld named where Core names bitcoind
    with QuillDaemon(tmp_path / "plain") as daemon, BitcoinD(tmp_path / "core") as plain_core:
        plain = Quilld(daemon)
        for method, params, kwargs in (("enumeratesigners", (), {}), ("createwallet", (), {"named": HW})):
            code, message = answer(plain, method, *params, **kwargs)
            assert (code, message.replace("quilld", "bitcoind")) == answer(plain_core, method, *params, **kwargs)
        assert plain.rpc("listwallets") == [] and not (daemon.chain_dir / "wallets" / "hw").exists()


def test_no_word_or_private_key_in_any_log(nodes: Nodes) -> None:
    log = nodes.daemon.debug_log() + nodes.device.log()
    assert nodes.approver.prompts, "nothing was signed"
    for secret in ("abandon abandon", "tprv", "xprv"):
        assert secret not in log



# What a signer answers `enumerate` (then `getdescriptors`: an empty object): Core's answers.
ENUMERATE_CASES = [
    {"stdout": '[{"fingerprint": "00000001", "model": "a"}, {"fingerprint": "00000002", "model": ""}]\n'},
    {"stdout": '[{"fingerprint": "00000001", "model": "a"}, {"fingerprint": "00000001", "model": "b"}]\n'},
    {"stdout": '[]\n'},
    {"stdout": '{"invalid json"}\n'},
    {"stdout": '{"fingerprint": "00000001"}\n'},
    {"stdout": '[{"error": "Device is locked", "code": -7}]\n'},
    {"stdout": '[{"error": 7}]\n'},
    {"stdout": '[{"model": "a"}]\n'},
    {"stdout": '[{"fingerprint": "0000001g"}]\n'},
    {"stdout": "", "stderr": "no device here\nsecond line\n", "exit": 3},
]
ONE_SIGNER = {"stdout": '[{"fingerprint": "00000001", "model": "mock"}]\n'}
# What it answers `getdescriptors`
DESCRIPTOR_CASES = [
    {"stdout": '{"receive": ["wpkh(nonsense)"]}\n'},
    {"stdout": '["not an object"]\n'},
    {"stdout": '{"receive": ["raw(00)"], "internal": []}\n'},
    {"stdout": "", "stderr": "locked\n", "exit": 1},
]


def test_a_signers_odd_answers_get_cores_errors(tmp_path: Path) -> None:
    script = tmp_path / "answers.json"
    script.write_text("{}")
    # python -S: no site module, a quicker start for each of the ~60 signer runs
    signer = f"-signer={VENV_BIN / 'python'} -S {Path(__file__).with_name('mock_signer.py')} {script}"
    with QuillDaemon(tmp_path / "quilld", signer) as daemon, BitcoinD(tmp_path / "core", signer) as core:
        quilld = Quilld(daemon)
        for case in ENUMERATE_CASES:
            script.write_text(json.dumps({"enumerate": case}))
            assert answer(quilld, "enumeratesigners") == answer(core, "enumeratesigners"), case
        # createwallet: GetExternalSigner's own refusals, one of Enumerate's, then getdescriptors
        cases = [{"enumerate": ENUMERATE_CASES[n]} for n in (0, 2, 9)] + \
            [{"enumerate": ONE_SIGNER, "getdescriptors": case} for case in DESCRIPTOR_CASES]
        for n, case in enumerate(cases):
            script.write_text(json.dumps(case))
            named = {**HW, "wallet_name": f"w{n}"}
            created = answer(quilld, "createwallet", named=named)
            assert created == answer(core, "createwallet", named=named), case
            if "name" not in created:  # nothing left behind by a failed creation
                assert f"w{n}" not in quilld.rpc("listwallets")
                assert not (daemon.chain_dir / "wallets" / f"w{n}").exists()
        _signing_and_display_errors(quilld, core, script)


MOCK_XPUB = ("[00000001/84h/1h/0h]"
             "tpubD6NzVbkrYhZ4WaWSyoBvQwbpLkojyoTZPRsgXELWz3Popb3qkjcJyJUGLnL4qHHoQvao8ESaAstxYSnhyswJ76uZPStJRJCTKvosUCJZL5B")


def _signing_and_display_errors(quilld: Quilld, core: BitcoinD, script: Path) -> None:
    """A wallet of the mock signer's descriptors; its signtx and displayaddress answers."""
    answers: dict[str, Any] = {"enumerate": ONE_SIGNER, "getdescriptors": {"stdout": json.dumps(
        {"receive": [f"wpkh({MOCK_XPUB}/0/*)"], "internal": [f"wpkh({MOCK_XPUB}/1/*)"]}) + "\n"}}
    script.write_text(json.dumps(answers))
    named = {**HW, "wallet_name": "mock"}
    assert quilld.rpc("createwallet", named=named) == core.rpc("createwallet", named=named)
    address = quilld.rpc("getnewaddress", wallet="mock")
    assert address == core.rpc("getnewaddress", wallet="mock")
    psbt = decode_base64_psbt(core.rpc("createpsbt", [{"txid": "11" * 32, "vout": 0}], {ELSEWHERE: 1}))
    psbt.inputs[0].witness_utxo = TxOut(200_000_000, decode_destination(address, "regtest"))
    psbt.inputs[0].hd_keypaths = {bytes.fromhex("02" + "33" * 32): KeyOrigin(bytes.fromhex("00000001"), (0,))}
    unsigned = encode_base64_psbt(psbt)
    psbt.outputs[0].amount -= 1
    changed = encode_base64_psbt(psbt)
    for signtx in ({"stdout": '{"error": "Refused on the device"}\n'}, {"stdout": '{"psbt": "junk"}\n'},
                   {"stdout": "{}\n"}, {"stdout": "", "stderr": "gone\n", "exit": 2},
                   {"stdout": json.dumps({"psbt": unsigned}) + "\n"}):
        script.write_text(json.dumps({**answers, "signtx": signtx}))
        assert answer(quilld, "walletprocesspsbt", unsigned, wallet="mock") == \
            answer(core, "walletprocesspsbt", unsigned, wallet="mock"), signtx
    # a signer that changes an output is refused (Core 31 takes its PSBT; Core's master checks it)
    script.write_text(json.dumps({**answers, "signtx": {"stdout": json.dumps({"psbt": changed}) + "\n"}}))
    assert answer(quilld, "walletprocesspsbt", unsigned, wallet="mock") == (-25, "External signer failed to sign")
    script.write_text(json.dumps({**answers, "enumerate": {"stdout": "[]\n"}}))
    assert answer(quilld, "walletprocesspsbt", unsigned, wallet="mock") == \
        answer(core, "walletprocesspsbt", unsigned, wallet="mock") == (-25, "External signer not found")
    script.write_text(json.dumps({**answers, "enumerate": {"stdout": '[{"error": "locked"}]\n'}}))
    assert answer(quilld, "walletprocesspsbt", unsigned, wallet="mock") == \
        answer(core, "walletprocesspsbt", unsigned, wallet="mock")
    for display in ({"stdout": '{"address": "wrong"}\n'}, {"stdout": '{"error": "no screen"}\n'},
                    {"stdout": "{}\n"}, {"stdout": "", "stderr": "gone\n", "exit": 2},
                    {"stdout": json.dumps({"address": address}) + "\n"}):
        script.write_text(json.dumps({**answers, "displayaddress": display}))
        assert answer(quilld, "walletdisplayaddress", address, wallet="mock") == \
            answer(core, "walletdisplayaddress", address, wallet="mock"), display
