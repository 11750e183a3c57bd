"""PSBT RPCs against the real Bitcoin Core: the same calls go to a bitcoind and to Quill's RPC
server, and the answers (results, or error code and message) must be equal.

The corpus: Core's own BIP174/BIP370 vectors (../shared/vectors/core-functional/rpc_psbt.json),
PSBTs Core's wallet makes and signs for every address type, and damaged copies of them.
"""
from __future__ import annotations

import base64
import json
import random
from decimal import Decimal
from typing import Any

import pytest

from tests.kit.bitcoind import BitcoinD, CoreRPCError
from tests.kit.toolchains import vectors_dir
from tests.rpc_decode.rpc_harness import InProcessServer

PSBT_METHODS = ["decodepsbt", "combinepsbt", "joinpsbts", "createpsbt", "converttopsbt", "createrawtransaction",
                "finalizepsbt", "analyzepsbt"]


class Quill:
    """Quill's real RPC server, in process, answering as CoreRPCError or a Decimal result."""

    def __init__(self, server: InProcessServer) -> None:
        self.conn = server.connection()

    def rpc(self, method: str, *params: Any) -> Any:
        _, body = self.conn.call_raw(method, json.loads(json.dumps(list(params), default=str)))
        reply = json.loads(body, parse_float=Decimal)
        if reply.get("error"):
            raise CoreRPCError(0, reply["error"])
        return reply["result"]


def answer(node: Any, method: str, *params: Any) -> Any:
    try:
        return ("ok", node.rpc(method, *params))
    except CoreRPCError as e:
        return ("error", e.code, e.message)


@pytest.fixture(scope="module")
def nodes(tmp_path_factory: pytest.TempPathFactory) -> Any:
    with BitcoinD(tmp_path_factory.mktemp("core")) as core:
        server = InProcessServer("regtest").start()
        try:
            yield core, Quill(server)
        finally:
            server.stop()


@pytest.fixture(scope="module")
def vectors() -> dict[str, Any]:
    return json.loads((vectors_dir() / "core-functional" / "rpc_psbt.json").read_text())


@pytest.fixture(scope="module")
def wallet_psbts(nodes: Any) -> list[str]:
    """PSBTs Core's wallet made: funded, then signed, for each address type, plus a 2-of-3 multisig."""
    core, _ = nodes
    core.rpc("createwallet", "w")
    mine = core.rpc("getnewaddress", "", "bech32", wallet="w")
    core.rpc("generatetoaddress", 101, mine)
    psbts = []
    for kind in ("legacy", "p2sh-segwit", "bech32", "bech32m"):
        address = core.rpc("getnewaddress", "", kind, wallet="w")
        core.rpc("sendtoaddress", address, 1, wallet="w")
    keys = [core.rpc("getaddressinfo", core.rpc("getnewaddress", wallet="w"), wallet="w")["pubkey"]
            for _ in range(3)]
    multi = core.rpc("createmultisig", 2, keys, "bech32")["address"]
    core.rpc("sendtoaddress", multi, 1, wallet="w")
    core.rpc("generatetoaddress", 1, mine)
    for kind in ("legacy", "p2sh-segwit", "bech32", "bech32m"):
        dest = core.rpc("getnewaddress", "", kind, wallet="w")
        funded = core.rpc("walletcreatefundedpsbt", [], [{dest: "0.5"}], 0,
                          {"change_type": kind, "fee_rate": 10}, True, wallet="w")["psbt"]
        psbts.append(funded)
        psbts.append(core.rpc("walletprocesspsbt", funded, True, "ALL", True, False, wallet="w")["psbt"])
        psbts.append(core.rpc("walletprocesspsbt", funded, True, "ALL", True, True, wallet="w")["psbt"])
    psbts.append(core.rpc("createpsbt", [{"txid": "11" * 32, "vout": 0}], [{dest: 1}, {"data": "00ff"}], 0, True, 2, 0))
    return psbts


def test_decodepsbt_equals_core_on_the_bip_vectors(nodes: Any, vectors: dict[str, Any]) -> None:
    core, quill = nodes
    cases = vectors["valid"] + vectors["invalid"] + [v[0] for v in vectors["invalid_with_msg"]]
    assert len(cases) > 100
    for psbt in cases:
        assert answer(quill, "decodepsbt", psbt) == answer(core, "decodepsbt", psbt), psbt


def test_decodepsbt_and_combinepsbt_equal_core_on_wallet_psbts(nodes: Any, wallet_psbts: list[str]) -> None:
    core, quill = nodes
    for psbt in wallet_psbts:
        expected = answer(core, "decodepsbt", psbt)
        assert expected[0] == "ok"
        assert answer(quill, "decodepsbt", psbt) == expected
        # combinepsbt of one PSBT is Core's re-serialization: byte for byte.
        assert answer(quill, "combinepsbt", [psbt]) == answer(core, "combinepsbt", [psbt])
    # Combining the unsigned PSBT with each signed copy, and PSBTs of different transactions.
    unsigned, signed, finalized = wallet_psbts[6:9]
    for txs in ([unsigned, signed], [signed, unsigned], [unsigned, finalized, signed], [unsigned, wallet_psbts[0]],
                []):
        assert answer(quill, "combinepsbt", txs) == answer(core, "combinepsbt", txs), txs


def test_damaged_psbts_get_cores_errors(nodes: Any, wallet_psbts: list[str], vectors: dict[str, Any]) -> None:
    core, quill = nodes
    rng = random.Random(12)
    cases = ["", "=", "cHNidP8=", "cHNidP8", "YR==", "YWJ=", "cHNi dP8=", "!!!!", "cHNidP8BAAoCAAAAAAAAAAAAAA=="]
    # an unsigned tx announcing 256 inputs whose first script length is above MAX_SIZE: Core reads
    # the inputs one by one and fails on that length, not on the missing inputs
    tx = bytes.fromhex("02000000" "fd0001") + bytes(36) + bytes.fromhex("feffffff7f") + bytes(50)
    cases.append(base64.b64encode(b"psbt\xff\x01\x00" + bytes((len(tx),)) + tx + b"\x00").decode())
    for psbt in wallet_psbts + vectors["valid"][:20]:
        raw = base64.b64decode(psbt)
        for cut in rng.sample(range(len(raw)), 4):
            cases.append(base64.b64encode(raw[:cut]).decode())
        for _ in range(6):
            damaged = bytearray(raw)
            damaged[rng.randrange(len(raw))] = rng.randrange(256)
            cases.append(base64.b64encode(bytes(damaged)).decode())
        cases.append(base64.b64encode(raw + b"\x00").decode())
    for psbt in cases:
        assert answer(quill, "decodepsbt", psbt) == answer(core, "decodepsbt", psbt), psbt


def _create_cases(address: str) -> list[list[Any]]:
    txid = "ab" * 32
    return [
        [[{"txid": txid, "vout": 0}], [{address: 1}]],
        [[{"txid": txid, "vout": 1, "sequence": 7}], {address: "0.00000001", "data": "deadbeef"}, 500000, False, 1],
        [[{"txid": txid, "vout": 1}], [{"data": "00"}, {address: 2}], 10, False],
        [[{"txid": txid, "vout": 1}], [{address: 2}], 0, False, 3],
        [[], [{address: 2}], 0, True],
        [[{"txid": txid, "vout": 1, "sequence": 4294967295}], [{address: 1}], 0, True],
        [[{"txid": txid, "vout": -1}], [{address: 1}]],
        [[{"txid": txid}], [{address: 1}]],
        [[{"txid": "zz"}], [{address: 1}]],
        [[{"txid": txid, "vout": 0, "sequence": -1}], [{address: 1}]],
        [[{"txid": txid, "vout": 0}], [{address: 1}, {address: 2}]],
        [[{"txid": txid, "vout": 0}], [{"data": "00"}, {"data": "01"}]],
        [[{"txid": txid, "vout": 0}], [{"data": "0g"}]],
        [[{"txid": txid, "vout": 0}], [{"notanaddress": 1}]],
        [[{"txid": txid, "vout": 0}], [{address: -1}]],
        [[{"txid": txid, "vout": 0}], [{address: "1.123456789"}]],
        [[{"txid": txid, "vout": 0}], [{address: 1, "data": "00"}]],
        [[{"txid": txid, "vout": 0}], ["x"]],
        [[{"txid": txid, "vout": 0}], [{address: 1}], -1],
        [[{"txid": txid, "vout": 0}], [{address: 1}], 4294967296],
        [[{"txid": txid, "vout": 0}], [{address: 1}], 0, None, 4],
        [[{"txid": txid, "vout": 0}], [{address: 1}], 0, None, 0],
        [["x"], [{address: 1}]],
        ["x", [{address: 1}]],
    ]


def test_createrawtransaction_and_createpsbt_equal_core(nodes: Any) -> None:
    core, quill = nodes
    address = core.rpc("getnewaddress", wallet="w") if "w" in core.rpc("listwallets") else \
        "bcrt1qw508d6qejxtdg4y5r3zarvary0c5xw7kygt080"
    for params in _create_cases(address):
        assert answer(quill, "createrawtransaction", *params) == answer(core, "createrawtransaction", *params), params
        assert answer(quill, "createpsbt", *params) == answer(core, "createpsbt", *params), params
        for version in (0, 2, 1):
            padded = (params + [None] * 5)[:5] + [version]
            assert answer(quill, "createpsbt", *padded) == answer(core, "createpsbt", *padded), padded


def test_converttopsbt_equals_core(nodes: Any, wallet_psbts: list[str]) -> None:
    core, quill = nodes
    signed_hex = core.rpc("finalizepsbt", wallet_psbts[8])["hex"]
    unsigned_hex = core.rpc("createrawtransaction", [{"txid": "cd" * 32, "vout": 3}], [{"data": "00"}])
    for params in ([unsigned_hex], [unsigned_hex, False, False, 0], [unsigned_hex, None, None, 2],
                   [signed_hex], [signed_hex, True], [signed_hex, True, True, 0], [signed_hex, True, False],
                   ["00"], [unsigned_hex, False, None, 1]):
        assert answer(quill, "converttopsbt", *params) == answer(core, "converttopsbt", *params), params


def _sorted_decode(node: Any, psbt: str) -> Any:
    decoded = node.rpc("decodepsbt", psbt)
    tx = decoded.pop("tx")
    pairs = sorted(zip(tx["vin"], decoded["inputs"], strict=True), key=lambda p: (p[0]["txid"], p[0]["vout"]))
    outs = sorted(((o | {"n": 0}, d) for o, d in zip(tx["vout"], decoded["outputs"], strict=True)),
                  key=lambda p: json.dumps(p, default=str))
    return decoded | {"inputs": pairs, "outputs": outs,
                      "version": tx["version"], "locktime": tx["locktime"]}


def test_joinpsbts_equals_core_up_to_the_shuffle(nodes: Any, wallet_psbts: list[str]) -> None:
    core, quill = nodes
    coins = core.rpc("listunspent", wallet="w")[:2]
    dest = core.rpc("getnewaddress", wallet="w")
    a, b = (core.rpc("walletprocesspsbt", core.rpc("createpsbt", [{"txid": c["txid"], "vout": c["vout"]}],
                                                   [{dest: "0.1"}, {"data": c["txid"][:8]}], 0, True, 2, 0),
                     False, "ALL", True, wallet="w")["psbt"] for c in coins)
    assert core.rpc("decodepsbt", a)["psbt_version"] == 0
    joined = 0
    for txs in ([a, b], [b, a, wallet_psbts[-1]], [a], [a, a], [a, "junk"], [a, wallet_psbts[0]]):
        ours, theirs = answer(quill, "joinpsbts", txs), answer(core, "joinpsbts", txs)
        if theirs[0] == "ok":
            joined += 1
            assert _sorted_decode(quill, ours[1]) == _sorted_decode(core, theirs[1]), txs
        else:
            assert ours == theirs, txs
    assert joined == 2


def test_help_is_cores_text(nodes: Any) -> None:
    core, quill = nodes
    for method in PSBT_METHODS:
        assert quill.rpc("help", method) == core.rpc("help", method), method
        # An arity error answers with the same text.
        assert answer(quill, method) == answer(core, method)


def test_finalizepsbt_equals_core(nodes: Any, wallet_psbts: list[str], vectors: dict[str, Any]) -> None:
    core, quill = nodes
    cases = list(wallet_psbts) + vectors["valid"] + [c["finalize"] for c in vectors["finalizer"]] + ["junk"]
    # Quill does not aggregate MuSig2 partial signatures (Core does): those PSBTs stay unfinalized.
    cases = [p for p in cases if "musig2_partial_sigs" not in json.dumps(answer(core, "decodepsbt", p), default=str)]
    assert len(cases) > 50
    for psbt in cases:
        for extract in ((), (True,), (False,)):
            assert answer(quill, "finalizepsbt", psbt, *extract) == answer(core, "finalizepsbt", psbt, *extract), psbt


def test_analyzepsbt_equals_core(nodes: Any, wallet_psbts: list[str], vectors: dict[str, Any]) -> None:
    core, quill = nodes
    cases = list(wallet_psbts) + vectors["valid"] + [c["finalize"] for c in vectors["finalizer"]] + ["junk"]
    # Quill does not aggregate MuSig2 partial signatures (Core does): those PSBTs are left out.
    cases = [p for p in cases if "musig2" not in json.dumps(answer(core, "decodepsbt", p), default=str)]
    assert len(cases) > 40
    for psbt in cases:
        assert answer(quill, "analyzepsbt", psbt) == answer(core, "analyzepsbt", psbt), psbt
