"""Node-level RPCs against the real Bitcoin Core: a quilld on its built-in chain answers as a
Core node without peers or fee data, and a quilld following Core (-chainsource) passes Core's
own answers on for what only Core knows (connections, fee estimates)."""
from __future__ import annotations

import time
from typing import Any

import pytest

from tests.kit.bitcoind import BitcoinD, CoreRPCError
from tests.rpc_daemon import QuillDaemon, RPCFailure

METHODS = ["getdifficulty", "getconnectioncount", "estimatesmartfee", "getmempoolinfo"]
ESTIMATE_CASES = [[6], [1], [1008], [2, "ECONOMICAL"], [3, "conservative"], [0], [1009], [6, "foo"], [-1],
                  ["x"], [6, 7], []]


def answer(node: Any, method: str, *params: Any) -> Any:
    try:
        return ("ok", node.rpc(method, *params))
    except (CoreRPCError, RPCFailure) as e:
        return ("error", e.code, e.message)


@pytest.fixture(scope="module")
def nodes(tmp_path_factory: pytest.TempPathFactory) -> Any:
    with BitcoinD(tmp_path_factory.mktemp("core")) as core:
        builtin = QuillDaemon(tmp_path_factory.mktemp("builtin")).start()
        follower = QuillDaemon(tmp_path_factory.mktemp("follower"), f"-chainsource={core.url_for_follower}",
                               "-chainpollinterval=100").start()
        try:
            deadline = time.monotonic() + 30
            while answer(follower, "getbestblockhash") != ("ok", core.rpc("getbestblockhash")):
                assert time.monotonic() < deadline, "the follower did not reach Core's tip"
                time.sleep(0.1)
            yield core, builtin, follower
        finally:
            follower.stop()
            builtin.stop()


def test_help_is_cores_text(nodes: Any) -> None:
    core, builtin, _ = nodes
    for method in METHODS:
        assert builtin.rpc("help", method) == core.rpc("help", method), method


def test_builtin_chain_answers_as_core_without_peers_or_fee_data(nodes: Any) -> None:
    core, builtin, _ = nodes
    # Both sit at the regtest genesis block with empty mempools.
    assert core.rpc("getblockcount") == builtin.rpc("getblockcount") == 0
    for method in ("getdifficulty", "getconnectioncount", "getmempoolinfo"):
        assert answer(builtin, method) == answer(core, method), method
    for params in ESTIMATE_CASES:
        assert answer(builtin, "estimatesmartfee", *params) == answer(core, "estimatesmartfee", *params), params
    assert answer(builtin, "getdifficulty", 1) == answer(core, "getdifficulty", 1)


def test_follower_passes_on_cores_connections_and_fee_estimates(nodes: Any) -> None:
    core, _, follower = nodes
    for method in ("getdifficulty", "getconnectioncount"):
        assert answer(follower, method) == answer(core, method), method
    for params in ESTIMATE_CASES:
        assert answer(follower, "estimatesmartfee", *params) == answer(core, "estimatesmartfee", *params), params
