"""protocol/vectors/multisig.json against both codecs, the CDDL schema and the firmware's
multisig methods (CPython): every request and expected reply encodes to the vector's bytes and
validates, and a device restored from the test mnemonic answers the exchange exactly: the
registration (its first address is Bitcoin Core's for the same descriptor), its refusals, a PSBT
that spends the wallet's first output with change back to it, and the refusal once the wallet is
removed. Then what the vectors do not pin: the limits, the record's tag and the locked device."""
from __future__ import annotations

import copy
from typing import Any

import pytest

from quillfw.board.runtime import build_dispatcher
from quillfw.keys import methods as key_methods
from quillfw.multisig.methods import MAX_COSIGNERS, MAX_WALLETS
from quillfw.psbt import methods as psbt_methods
from quillfw.signing.confirm import AUTO
from quillfw.wire.dispatcher import Dispatcher
from quillfw.wire.errors import INVALID_PARAMS, LOCKED, USER_CANCELLED
from tests.keys.test_keys_vectors import Ctx
from tests.keys.test_psbt_vectors import answer_the_exchange, validate
from tests.kit.protocol import assert_vector_messages, from_json, vectors

VECTORS = vectors("multisig")
VAULT = from_json(next(v for v in VECTORS if v["name"] == "multisig_register")["request"])["params"]


@pytest.mark.parametrize("vector", VECTORS, ids=lambda v: v["name"])
def test_multisig_vector_encodes_and_validates(vector: dict[str, Any]) -> None:
    assert_vector_messages(vector, validate)


def _device(approver: Any = AUTO, seed_path: str | None = None) -> tuple[Dispatcher, list[Any]]:
    dispatcher = build_dispatcher("test", approver=approver)
    boot = key_methods.register(dispatcher, seed_path, 10)
    psbt_methods.register(dispatcher, boot)
    return dispatcher, boot


def call(dispatcher: Dispatcher, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    request: dict[str, Any] = {"id": "t", "method": method}
    if params is not None:
        request["params"] = copy.deepcopy(params)   # the device may drop what it has read
    reply = dispatcher.dispatch(Ctx(), request)
    validate(reply)
    return reply


def test_a_device_with_the_test_mnemonic_answers_the_exchange() -> None:
    dispatcher, _ = _device()
    answer_the_exchange(dispatcher, VECTORS)
    info = call(dispatcher, "get_info")["result"]
    assert "multisig" in info["capabilities"] and {"seed", "bip32"} <= set(info["capabilities"])
    assert info["multisig"] == {"script_types": ["p2sh", "p2wsh", "p2sh-p2wsh"],
                                "max_wallets": MAX_WALLETS, "max_cosigners": MAX_COSIGNERS}


def _restored(dispatcher: Dispatcher) -> None:
    restore = from_json(VECTORS[0]["request"])
    assert "result" in dispatcher.dispatch(Ctx(), restore)


def test_the_policy_is_checked_before_the_user_is_asked() -> None:
    dispatcher, _ = _device()
    _restored(dispatcher)
    cases = [
        (dict(VAULT, name=""), "Invalid multisig wallet: name must be 1 to 16 characters"),
        (dict(VAULT, name="x" * 17), "Invalid multisig wallet: name must be 1 to 16 characters"),
        (dict(VAULT, name="caf\u00e9"), "Invalid multisig wallet: name must be printable ASCII"),
        (dict(VAULT, script_type="p2tr"),
         "Invalid multisig wallet: script_type must be one of p2sh, p2wsh, p2sh-p2wsh"),
        (dict(VAULT, threshold=0), "Invalid multisig wallet: threshold must be 1 to 3"),
        (dict(VAULT, network="main"), "Invalid multisig wallet: signer 1: the extended key is for "
                                      "another network: expected an xpub"),
        (dict(VAULT, signers=VAULT["signers"] * 6),
         "Invalid multisig wallet: a wallet has 1 to 10 cosigners"),
        (dict(VAULT, signers=[VAULT["signers"][0], VAULT["signers"][1], VAULT["signers"][1]]),
         "Invalid multisig wallet: signer 3: the same key twice"),
        (dict(VAULT, signers=[VAULT["signers"][0], [b"\x01\x02\x03", "m/1", VAULT["signers"][1][2]]]),
         "Invalid multisig wallet: signer 2: fingerprint must be 4 bytes"),
        (dict(VAULT, signers=[VAULT["signers"][0], [b"\x01\x02\x03\x04", "m/1",
                                                    VAULT["signers"][1][2][:-1] + "x"]]),
         "Invalid multisig wallet: signer 2: invalid extended public key"),
        (dict(VAULT, signers=[VAULT["signers"][0], [b"\x01\x02\x03\x04", "m" + "/1" * 9,
                                                    VAULT["signers"][1][2]]]),
         "Invalid multisig wallet: signer 2: origin path deeper than 8"),
    ]
    for params, message in cases:
        reply = call(dispatcher, "multisig_register", params)
        assert reply["error"]["code"] == INVALID_PARAMS and reply["error"]["message"] == message
    assert call(dispatcher, "multisig_list")["result"] == []


class WaitingCtx(Ctx):
    def awaiting_user(self, waiting: bool = True) -> None:
        pass


class Refuse:
    """An approver that refuses every request and keeps the prompts."""
    name = "refuse"

    def __init__(self) -> None:
        self.prompts: list[str] = []

    def begin(self, prompt: str, now: int) -> None:
        self.prompts.append(prompt)

    def poll(self, now: int) -> str:
        return "refuse"

    def end(self) -> None:
        pass


def test_the_user_sees_the_policy_and_a_refusal_registers_nothing() -> None:
    approver = Refuse()
    dispatcher, _ = _device(approver)
    _restored(dispatcher)
    reply = dispatcher.dispatch(WaitingCtx(), {"id": "t", "method": "multisig_register",
                                               "params": copy.deepcopy(VAULT)})
    assert reply["error"] == {"code": USER_CANCELLED, "message": "Registration refused on the device"}
    prompt = approver.prompts[-1]     # the registration screen's items (quillfw.multisig.policy.describe)
    assert prompt.startswith('Name: "vault"; Policy: 2 of 3 p2wsh sortedmulti; '
                             "Cosigner 1 of 3 (this device): 73c5da0a m/48h/1h/0h/2h tpub")
    assert prompt.endswith("; First address: bcrt1qr3az57pxl8z7q6d9q7v0fmeaphuwe3z0ghvkjr457ch4vqwmtkask29wwr?")
    assert all(signer[2] in prompt for signer in VAULT["signers"])
    assert call(dispatcher, "multisig_list")["result"] == []


def test_slots_run_out_and_records_are_bound_to_the_seed(tmp_path: Any) -> None:
    seed_path = str(tmp_path / "seed.bin")
    dispatcher, boot = _device(seed_path=seed_path)
    _restored(dispatcher)
    for i in range(MAX_WALLETS):
        assert "result" in call(dispatcher, "multisig_register", dict(VAULT, name=f"w{i}"))
    reply = call(dispatcher, "multisig_register", dict(VAULT, name="one-more"))
    assert reply["error"]["message"] == "8 multisig wallets are registered: remove one first"
    assert sorted(p.name for p in tmp_path.glob("quill_ms*.bin")) == [f"quill_ms{i}.bin" for i in range(8)]
    # a record changed on the flash fails its tag: an empty slot, never matched
    record = bytearray((tmp_path / "quill_ms3.bin").read_bytes())
    record[-1] ^= 1
    (tmp_path / "quill_ms3.bin").write_bytes(bytes(record))
    assert {w["name"] for w in call(dispatcher, "multisig_list")["result"]} == \
        {f"w{i}" for i in range(8)} - {"w3"}
    # after a wipe and another seed, the old records are nobody's
    assert "result" in call(dispatcher, "wipe")
    other = copy.deepcopy(from_json(VECTORS[0]["request"]))
    other["params"]["mnemonic"] = "legal winner thank year wave sausage worth useful legal winner thank yellow"
    assert "result" in dispatcher.dispatch(Ctx(), other)
    assert call(dispatcher, "multisig_list")["result"] == []
    assert boot[2][0] is not None


def test_a_locked_device_answers_locked() -> None:
    dispatcher, _ = _device()
    _restored(dispatcher)
    assert "result" in call(dispatcher, "lock")
    for method, params in (("multisig_register", VAULT), ("multisig_list", None),
                           ("multisig_remove", {"name": "vault"})):
        reply = call(dispatcher, method, params)
        assert reply["error"]["code"] == LOCKED and reply["error"]["data"] == "locked", method


@pytest.mark.parametrize("on_flash", [True, False], ids=["flash", "ram"])
def test_wipe_erases_the_registrations_even_for_the_same_seed(tmp_path: Any, on_flash: bool) -> None:
    dispatcher, _ = _device(seed_path=str(tmp_path / "seed.bin") if on_flash else None)
    _restored(dispatcher)
    for name in ("a", "b"):
        assert "result" in call(dispatcher, "multisig_register", dict(VAULT, name=name))
    assert len(call(dispatcher, "multisig_list")["result"]) == 2
    assert "result" in call(dispatcher, "wipe")
    assert list(tmp_path.glob("quill_ms*")) == []
    _restored(dispatcher)        # the very seed that registered them
    assert call(dispatcher, "multisig_list")["result"] == []
    # the last wrong PIN wipes the seed, and the registrations with it
    assert "result" in call(dispatcher, "multisig_register", VAULT)
    assert "result" in call(dispatcher, "lock")
    attempts = call(dispatcher, "get_info")["result"]["keys"]["pin_attempts_left"]
    for _ in range(attempts):
        reply = call(dispatcher, "unlock", {"pin": "0000"})
    assert reply["error"]["data"] == "wiped"
    assert list(tmp_path.glob("quill_ms*")) == []
    _restored(dispatcher)
    assert call(dispatcher, "multisig_list")["result"] == []
