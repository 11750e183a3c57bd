"""Every parameter of every method, given a value of the wrong JSON type, answers exactly as the
real Bitcoin Core does: the same HTTP status, error code and message.

The methods come from quilld's own registry, so a new method is covered the moment it is
registered. Methods Core does not have (Quill's device RPCs) are checked against Core's form.
A few methods need valid earlier arguments before the handler reaches an amount or range:
VALID_ARGS gives them, and the test fails for an AMOUNT/RANGE parameter that has none, so a new
method cannot leave its amounts untested.
"""
from __future__ import annotations

import json

import pytest

from quill.daemon.main import build_registry
from quill.rpc.registry import AMOUNT, ARR, BOOL, NUM, OBJ, RANGE, STR, STR_HEX
from tests.kit.bitcoind import BitcoinD, CoreRPCError
from tests.kit.rpc_daemon import QuillDaemon, RPCFailure

WALLET = "w"

# One value of each wrong kind per declared type (Core's RPCArg::Type).
WRONG = {
    NUM: ["x", True, {}],
    BOOL: ["x", 1, []],
    STR: [1, False, []],
    STR_HEX: [1, True, {}],
    AMOUNT: [True, [], {}, "x", "-1", "0.000000001"],
    ARR: ["x", 1, {}],
    OBJ: ["x", 1, []],
    RANGE: ["x", True, [1], {}],
}

# A transaction that decodes (one input, one output): the arguments before an amount must pass.
_TX = ("0200000001" + "11" * 32 + "00000000" + "00" + "ffffffff" + "01" + "e803000000000000"
       + "160014" + "22" * 20 + "00000000")
# Earlier arguments valid enough that the handler reaches the parameter under test.
VALID_ARGS: dict[str, list] = {
    "sendrawtransaction": [_TX, 0.1, 0],
    "setconfirmationpolicy": ["above", 1],
    "deriveaddresses": ["raw(00)"],
    "testmempoolaccept": [[_TX]],
    "sendtoaddress": ["bcrt1qyg3zyg3zyg3zyg3zyg3zyg3zyg3zyg3zs4w3j0", 1],
}


def _post(call, method: str, params: list, wallet: bool) -> tuple[int | None, str | None]:
    path = f"/wallet/{WALLET}" if wallet else "/"
    try:
        call(method, params, path)
    except (RPCFailure, CoreRPCError) as e:
        return e.code, e.message
    return None, None


@pytest.fixture(scope="module")
def servers(tmp_path_factory):
    core = BitcoinD(tmp_path_factory.mktemp("core")).start()
    quill = QuillDaemon(tmp_path_factory.mktemp("quill")).start()
    try:
        core.rpc("createwallet", WALLET, True, True, "", False, True)
        quill.rpc("createwallet", WALLET, True, True, "", False, True)

        def core_call(method, params, path):
            return core.rpc(method, *params, wallet=WALLET if path != "/" else None)

        def quill_call(method, params, path):
            return quill.rpc(method, *params, path=path)

        core_methods = set()
        for line in core.rpc("help").splitlines():
            if line and not line.startswith("=="):
                core_methods.add(line.split()[0])
        yield core_call, quill_call, core_methods
    finally:
        quill.stop()
        core.stop()


def _cases():
    for method in build_registry().methods.values():
        if method.name in ("stop", "help"):
            continue   # `stop` ends the daemon; help's topic is free text
        for i, param in enumerate(method.params):
            for wrong in WRONG.get(param.type, ()):
                yield pytest.param(method, i, wrong, id=f"{method.name}-{param.name}-{json.dumps(wrong)}")


def _arguments(method, i, wrong) -> list:
    """The call's positional arguments: VALID_ARGS (or null) before `i`, the wrong value at `i`."""
    required = sum(1 for p in method.params if p.required)
    base = list(VALID_ARGS.get(method.name, []))
    args = [base[k] if k < len(base) else None for k in range(max(i + 1, required))]
    args[i] = wrong
    return args


@pytest.mark.parametrize("method, i, wrong", list(_cases()))
def test_wrong_argument_type_answers_as_core(servers, method, i, wrong):
    core_call, quill_call, core_methods = servers
    param = method.params[i]
    if param.type in (AMOUNT, RANGE):
        assert method.name in VALID_ARGS or not any(p.required for p in method.params[:i]), \
            f"{method.name}: give VALID_ARGS so that {param.name} is reached"
    args = _arguments(method, i, wrong)
    quill = _post(quill_call, method.name, args, method.wallet)
    assert quill[0] is not None, f"{method.name} accepted {param.name}={wrong!r}"
    if method.name in core_methods:
        assert quill == _post(core_call, method.name, args, method.wallet)
    elif param.type not in (AMOUNT, RANGE):
        # Quill's own methods: Core's pre-handler type check, in Core's form.
        expected = param.expected_json_type
        assert quill[0] == -3
        assert quill[1].startswith("Wrong type passed:\n{")
        assert f'"Position {i + 1} ({param.name})": "JSON value of type ' in quill[1]
        assert f"is not of expected type {expected}" in quill[1]
