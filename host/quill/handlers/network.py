"""Node-level RPCs that desktop wallets and Electrum servers ask at start-up (Core's
rpc/blockchain.cpp, rpc/net.cpp, rpc/fees.cpp, rpc/mempool.cpp): getdifficulty,
getconnectioncount, estimatesmartfee, estimaterawfee, getmempoolinfo, getnetworkinfo.

Quill has no peers. On the built-in chain it answers as a Core node without peers does, and
its fee estimates are Core's estimator's (quill.chain.fee_estimator) over the built-in chain's
mempool and blocks; following a node (-chainsource), the questions only that node can answer
(its connections, its fee estimates) go to it (see docs/rpc.md).
"""
from __future__ import annotations

import json
from typing import Any

from quill import __version__
from quill.amount import Amount
from quill.chain import pow as chain_pow
from quill.chain.errors import ChainSourceUnavailable, UpstreamRejected
from quill.chain.fee_estimator import HORIZONS, EstimationResult, EstimatorBucket, c_round
from quill.chain.policy import MIN_RELAY_FEE
from quill.handlers.blockchain import chain_of, number
from quill.rpc import univalue
from quill.rpc.args import amount_from_value, get_int, get_real, get_str
from quill.rpc.errors import RPC_INVALID_PARAMETER, RPCError
from quill.rpc.registry import HIDDEN, NUM, STR, Method, Param

MAX_CONF_TARGET = 1008  # Core's fee estimator tracks targets up to 1008 blocks (long horizon)
DEFAULT_RAW_THRESHOLD = 0.95
NO_ESTIMATE = "Insufficient data or no feerate found"
DEFAULT_TX_CONFIRM_TARGET = 6   # Core's -txconfirmtarget: the wallet's target without conf_target
INVALID_ESTIMATE_MODE = 'Invalid estimate_mode parameter, must be one of: "unset", "economical", "conservative"'
FEE_MODES = ("UNSET", "ECONOMICAL", "CONSERVATIVE")
DEFAULT_MAX_MEMPOOL_SIZE_MB = 300
DEFAULT_INCREMENTAL_RELAY_FEE = 100  # sat/kvB
MAX_OP_RETURN_RELAY = 100_000
DEFAULT_CLUSTER_LIMIT = 64
DEFAULT_CLUSTER_SIZE_LIMIT_KVB = 101


def following(ctx: Any) -> bool:
    """True when this node follows another (-chainsource) rather than running its own chain."""
    return not chain_of(ctx).builtin


def forward(ctx: Any, method: str, *params: Any) -> Any:
    """The followed node's own answer to `method`, numbers exactly as it wrote them."""
    return _result(ctx, _ask(ctx, method, params))


# The node's reply to a successful request of _ask: its result is the text between these.
_RESULT_OPEN, _RESULT_CLOSE = b'{"result":', b',"error":null,"id":"quill"}\n'


def forward_raw(ctx: Any, method: str, *params: Any) -> Any:
    """forward, with the node's result handed on as the text it wrote (univalue.RawJSON),
    unread: a large answer (a block) costs a copy rather than a parse and a rendering."""
    raw = _ask(ctx, method, params)
    if raw.startswith(_RESULT_OPEN) and raw.endswith(_RESULT_CLOSE):
        text = raw[len(_RESULT_OPEN):-len(_RESULT_CLOSE)]
        try:
            return univalue.RawJSON(text.decode("utf-8"))
        except UnicodeDecodeError:
            pass
    return _result(ctx, raw)


def _ask(ctx: Any, method: str, params: tuple[Any, ...]) -> bytes:
    """The followed node's reply body to `method`. (The one place that knows how the follower
    reaches its node.)"""
    import urllib.error
    import urllib.request  # here, not at start-up: only a follower asks its node
    rpc = chain_of(ctx).follower.rpc
    body = json.dumps({"jsonrpc": "1.0", "id": "quill", "method": method, "params": list(params)}).encode()
    endpoint = f"http://{rpc.host}:{rpc.port}{rpc.path}"
    request = urllib.request.Request(endpoint, data=body, method="POST",
                                     headers={"Authorization": rpc.auth, "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=rpc.timeout) as reply:
            raw = reply.read()
    except urllib.error.HTTPError as e:
        raw = e.read()
    except (OSError, ValueError) as e:
        raise ChainSourceUnavailable(f"cannot reach {rpc.display}: {e}") from None
    return raw


def _result(ctx: Any, raw: bytes) -> Any:
    """The result of the node's reply `raw`, or its error as UpstreamRejected."""
    rpc = chain_of(ctx).follower.rpc
    try:
        answer = univalue.loads(raw)
    except univalue.JSONParseError:
        raise ChainSourceUnavailable(f"{rpc.display} sent a reply that is not JSON") from None
    error = answer.get("error") if isinstance(answer, dict) else None
    if error:
        raise UpstreamRejected(error.get("code", -1), error.get("message", ""))
    return answer.get("result") if isinstance(answer, dict) else None


def getdifficulty(ctx: Any, args: list[Any]) -> Any:
    chain = chain_of(ctx)
    with chain.lock:
        _, tip_hash = chain.tip()
        info = chain.header_info(tip_hash)
    return number(chain_pow.difficulty(info.bits))


def getconnectioncount(ctx: Any, args: list[Any]) -> Any:
    return forward(ctx, "getconnectioncount") if following(ctx) else 0


def conf_target(value: Any) -> int:
    """Core's ParseConfirmTarget against the estimator's longest horizon."""
    target = get_int(value)
    if target < 1 or target > MAX_CONF_TARGET:
        raise RPCError(RPC_INVALID_PARAMETER, f"Invalid conf_target, must be between 1 and {MAX_CONF_TARGET}")
    return target


def estimate_mode(value: Any) -> str:
    """Core's FeeModeFromString: UNSET, ECONOMICAL or CONSERVATIVE, in any case."""
    mode = get_str(value).upper()
    if mode not in FEE_MODES:
        raise RPCError(RPC_INVALID_PARAMETER, INVALID_ESTIMATE_MODE)
    return mode


def wallet_estimate_request(conf_target_v: Any, estimate_mode_v: Any, replaceable: bool) -> tuple[int, bool]:
    """Core's SetFeeEstimateMode and GetMinimumFeeRate for a wallet: the target (conf_target, else
    -txconfirmtarget) and whether the estimate is conservative (when the transaction does not
    signal replaceability, unless estimate_mode says otherwise)."""
    mode = "UNSET" if estimate_mode_v is None else estimate_mode(estimate_mode_v)
    target = DEFAULT_TX_CONFIRM_TARGET if conf_target_v is None else conf_target(conf_target_v)
    conservative = not replaceable if mode == "UNSET" else mode == "CONSERVATIVE"
    return target, conservative


def smart_fee_rate(ctx: Any, target: int, conservative: bool) -> int:
    """The node's fee estimate as a wallet asks for it (Core's chain().estimateSmartFee): sat/kvB,
    0 for none. The built-in chain's estimator, or the followed node's estimatesmartfee."""
    if following(ctx):
        answer = forward(ctx, "estimatesmartfee", target, "conservative" if conservative else "economical")
        rate = answer.get("feerate") if isinstance(answer, dict) else None
        return 0 if rate is None else amount_from_value(rate)
    return int(chain_of(ctx).fee_estimator.estimate_smart_fee(target, conservative)[0])


def estimatesmartfee(ctx: Any, args: list[Any]) -> Any:
    conf_target_v, estimate_mode_v = args
    target = conf_target(conf_target_v)
    mode = "unset" if estimate_mode_v is None else get_str(estimate_mode_v)
    estimate_mode(mode)
    if following(ctx):
        return forward(ctx, "estimatesmartfee", target, mode)
    rate, blocks = chain_of(ctx).fee_estimator.estimate_smart_fee(target, mode.upper() == "CONSERVATIVE")
    if rate == 0:
        return {"errors": [NO_ESTIMATE], "blocks": blocks}
    # Never below what this mempool accepts (Core: its minimum fee and the min relay fee).
    return {"feerate": Amount(max(rate, MIN_RELAY_FEE)), "blocks": blocks}


def _rounded(x: float) -> univalue.Number:
    """round(x * 100) / 100, as Core writes a bucket's counts."""
    return number(c_round(x * 100.0) / 100.0)


def _bucket_json(bucket: EstimatorBucket) -> dict:
    return {"startrange": number(c_round(bucket.start)), "endrange": number(c_round(bucket.end)),
            "withintarget": _rounded(bucket.within_target), "totalconfirmed": _rounded(bucket.total_confirmed),
            "inmempool": _rounded(bucket.in_mempool), "leftmempool": _rounded(bucket.left_mempool)}


def estimaterawfee(ctx: Any, args: list[Any]) -> Any:
    """Core's hidden estimaterawfee: each horizon tracking the target, with the pass and fail ranges."""
    conf_target_v, threshold_v = args
    target = conf_target(conf_target_v)
    threshold = DEFAULT_RAW_THRESHOLD if threshold_v is None else get_real(threshold_v)
    if threshold < 0 or threshold > 1:
        raise RPCError(RPC_INVALID_PARAMETER, "Invalid threshold")
    if following(ctx):
        return forward(ctx, "estimaterawfee", target, threshold)
    estimator = chain_of(ctx).fee_estimator
    result: dict[str, Any] = {}
    for horizon in HORIZONS:
        if target > estimator.highest_target_tracked(horizon):
            continue
        found = EstimationResult()
        rate = estimator.estimate_raw_fee(target, threshold, horizon, found)
        answer: dict[str, Any] = {}
        if rate != 0:
            answer["feerate"] = Amount(rate)
            answer["decay"] = number(found.decay)
            answer["scale"] = found.scale
            answer["pass"] = _bucket_json(found.passed)
            if found.failed.start != -1:   # -1: every bucket passed
                answer["fail"] = _bucket_json(found.failed)
        else:
            answer["decay"] = number(found.decay)
            answer["scale"] = found.scale
            answer["fail"] = _bucket_json(found.failed)
            answer["errors"] = ["Insufficient data or no feerate found which meets threshold"]
        result[horizon] = answer
    return result


PROTOCOL_VERSION = 70017  # the P2P protocol version of the Core whose RPC Quill answers as
# CLIENT_VERSION of the Core whose RPC Quill answers as (v31.99.0, the reference bitcoind).
# Clients choose which calls to make from it (Specter Desktop creates descriptor wallets only
# from 210000 on, and falls back to legacy importmulti below), so it must be Core's number;
# Quill's own version is in `subversion`.
CORE_CLIENT_VERSION = 319900
NETWORKS = ("ipv4", "ipv6", "onion", "i2p", "cjdns")


def getnetworkinfo(ctx: Any, args: list[Any]) -> Any:
    """The version of the Core whose RPC Quill speaks, Quill's own subversion and services; it
    makes no P2P connection itself, so on the built-in chain it has none and reaches no network,
    and following a node it reports that node's connection counts."""
    connections = {"connections": 0, "connections_in": 0, "connections_out": 0}
    if getattr(ctx.node, "chain", None) is not None and following(ctx):
        upstream_info = forward(ctx, "getnetworkinfo")
        connections = {key: upstream_info.get(key, 0) for key in connections}
    return {
        "version": CORE_CLIENT_VERSION,
        "subversion": f"/Quill:{__version__}/",
        "protocolversion": PROTOCOL_VERSION,
        "localservices": "%016x" % 0,
        "localservicesnames": [],
        "localrelay": False,
        "timeoffset": 0,
        "networkactive": True,
        **connections,
        "networks": [{"name": name, "limited": True, "reachable": False, "proxy": "",
                      "proxy_randomize_credentials": False} for name in NETWORKS],
        "relayfee": Amount(MIN_RELAY_FEE),
        "incrementalfee": Amount(DEFAULT_INCREMENTAL_RELAY_FEE),
        "localaddresses": [],
        "warnings": "" if "warnings" in ctx.node.deprecated_rpc else [],
    }


def getmempoolinfo(ctx: Any, args: list[Any]) -> Any:
    chain = chain_of(ctx)
    with chain.lock:
        entries = list(chain.mempool().entries.values())
    return {
        "loaded": True,
        "size": len(entries),
        "bytes": sum(e.vsize for e in entries),
        # Core reports its allocator's view of the pool; Quill counts the serialized bytes.
        "usage": sum(e.weight for e in entries),
        "total_fee": Amount(sum(e.fee for e in entries)),
        "maxmempool": DEFAULT_MAX_MEMPOOL_SIZE_MB * 1_000_000,
        "mempoolminfee": Amount(MIN_RELAY_FEE),
        "minrelaytxfee": Amount(MIN_RELAY_FEE),
        "incrementalrelayfee": Amount(DEFAULT_INCREMENTAL_RELAY_FEE),
        "unbroadcastcount": sum(1 for e in entries if e.unbroadcast),
        "permitbaremultisig": True,
        "maxdatacarriersize": MAX_OP_RETURN_RELAY,
        "limitclustercount": DEFAULT_CLUSTER_LIMIT,
        "limitclustersize": DEFAULT_CLUSTER_SIZE_LIMIT_KVB * 1000,
        "optimal": True,
    }


METHODS = [
    Method("getdifficulty", "blockchain", getdifficulty),
    Method("getconnectioncount", "network", getconnectioncount),
    Method("estimatesmartfee", "util", estimatesmartfee,
           [Param("conf_target", NUM, required=True), Param("estimate_mode", STR)]),
    Method("estimaterawfee", HIDDEN, estimaterawfee,
           [Param("conf_target", NUM, required=True), Param("threshold", NUM)]),
    Method("getmempoolinfo", "blockchain", getmempoolinfo),
    Method("getnetworkinfo", "network", getnetworkinfo),
]
