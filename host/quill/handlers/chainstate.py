"""Chain-state RPCs client libraries and Electrum servers call (Core's rpc/blockchain.cpp,
rpc/mining.cpp, rpc/mempool.cpp): getchaintips, getmininginfo, getindexinfo, gettxout,
gettxspendingprevout, testmempoolaccept, scantxoutset, getblockfilter, gettxoutsetinfo, getblockstats.

Answers come from Quill's own block index, mempool and spender index (-txospenderindex,
quill.chain.spender_index). Following a node (-chainsource), what Quill does not keep is asked of
that node: `gettxout`, `scantxoutset` and `testmempoolaccept` (the follower keeps no UTXO set),
`gettxspendingprevout` (its mempool and spender index), `getindexinfo` (the indexes whose calls pass
through) and `getmininginfo` (its mining settings and the next block's difficulty rules).
"""
from __future__ import annotations

import threading
import weakref
from typing import Any

from quill.amount import Amount, format_amount
from quill.chain import pow as chain_pow
from quill.chain import utxo_stats
from quill.chain.blockfilter import FilterIndex
from quill.chain.mempool import MEMPOOL_HEIGHT
from quill.chain.params import block_subsidy
from quill.chain.policy import DEFAULT_MAX_RAW_TX_FEE_RATE, fee_for
from quill.chain.rules import Invalid
from quill.chain.tips import chain_tips, network_hash_ps
from quill.consensus import MAX_MONEY
from quill.handlers.blockchain import chain_of, number
from quill.handlers.network import following, forward
from quill.rpc.args import (
    UINT32,
    check_object,
    fee_rate_from_value,
    get_array,
    get_bool,
    get_int,
    get_obj,
    get_str,
    is_json_int,
    parse_descriptor_range,
    parse_hash_v,
)
from quill.rpc.errors import (
    RPC_DESERIALIZATION_ERROR,
    RPC_INTERNAL_ERROR,
    RPC_INVALID_ADDRESS_OR_KEY,
    RPC_INVALID_PARAMETER,
    RPC_MISC_ERROR,
    RPCError,
)
from quill.rpc.registry import AMOUNT, ANY, ARR, BOOL, NUM, OBJ, STR, STR_HEX, Method, Param
from quill.tx import script as S
from quill.tx.decode import TxDecodeError, decode_hex_tx, script_to_univ
from quill.tx.hashes import hash_to_hex
from quill.tx.serialize import compact_size
from quill.tx.transaction import OutPoint
from quill.wallet.descriptors import DerivationError, DescriptorError
from quill.wallet.descriptors import parse as parse_descriptor

BLOCK_MIN_TX_FEE = 1  # sat/kvB: Core's DEFAULT_BLOCK_MIN_TX_FEE


def _target_hex(bits: int) -> str:
    return "%064x" % chain_pow.compact_to_target(bits)[0]


def _difficulty(bits: int) -> Any:
    return number(chain_pow.difficulty(bits))


def getchaintips(ctx: Any, args: list[Any]) -> Any:
    chain = chain_of(ctx)
    with chain.lock:
        tips = chain_tips(chain.block_index())
    return [{"height": t.height, "hash": hash_to_hex(t.hash), "branchlen": t.branchlen, "status": t.status}
            for t in tips]


def getmininginfo(ctx: Any, args: list[Any]) -> Any:
    if following(ctx):
        return forward(ctx, "getmininginfo")
    chain = chain_of(ctx)
    with chain.lock:
        index = chain.block_index()
        tip = index.tip
        hashps = network_hash_ps(index)
        pooled = len(chain.mempool())
    bits = tip.header.bits  # regtest: no retargeting, the next block has the tip's bits
    return {
        "blocks": tip.height,
        "bits": "%08x" % bits,
        "difficulty": _difficulty(bits),
        "target": _target_hex(bits),
        "networkhashps": number(hashps),
        "pooledtx": pooled,
        "blockmintxfee": Amount(BLOCK_MIN_TX_FEE),
        "chain": ctx.node.chain_name,
        "next": {"height": tip.height + 1, "bits": "%08x" % bits, "difficulty": _difficulty(bits),
                 "target": _target_hex(bits)},
        "warnings": "" if "warnings" in ctx.node.deprecated_rpc else [],
    }


def getindexinfo(ctx: Any, args: list[Any]) -> Any:
    name = "" if args[0] is None else get_str(args[0])
    chain = chain_of(ctx)
    result: dict[str, Any] = {}
    if not chain.builtin:
        # The indexes whose calls a follower answers through its node, as the node reports them.
        upstream = forward(ctx, "getindexinfo")
        return {index_name: state for index_name, state in upstream.items()
                if index_name in PASSED_THROUGH_INDEXES and name in ("", index_name)}
    height, _ = chain.tip()
    # Quill's indexes, in Core's order: every transaction, the spenders (-txospenderindex)
    # and BIP158 basic filters (made when asked for).
    states: dict[str, tuple[bool, int] | None] = {
        "txindex": (True, height), SPENDER_INDEX: chain.spender_index_progress(),
        BASIC_FILTER_INDEX: (True, height)}
    for index_name, state in states.items():
        if state is not None and name in ("", index_name):
            result[index_name] = {"synced": state[0], "best_block_height": state[1]}
    return result


def gettxout(ctx: Any, args: list[Any]) -> Any:
    txid_v, n_v, include_mempool_v = args
    txid = parse_hash_v(txid_v, "txid")
    n = get_int(n_v, UINT32)
    include_mempool = True if include_mempool_v is None else get_bool(include_mempool_v)
    if following(ctx):
        return forward(ctx, "gettxout", hash_to_hex(txid), n, include_mempool)
    chain = chain_of(ctx)
    outpoint = OutPoint(txid, n)
    with chain.lock:
        height, tip_hash = chain.tip()
        pool = chain.mempool()
        if include_mempool:
            if pool.spender(outpoint) is not None:
                return None
            coin = pool.coin(outpoint) or chain.coin(outpoint)
        else:
            coin = chain.coin(outpoint)
    if coin is None:
        return None
    return {
        "bestblock": hash_to_hex(tip_hash),
        "confirmations": 0 if coin.height == MEMPOOL_HEIGHT else height - coin.height + 1,
        "value": Amount(coin.value),
        "scriptPubKey": script_to_univ(coin.script_pubkey, ctx.node.chain_name),
        "coinbase": bool(coin.coinbase),
    }


def gettxspendingprevout(ctx: Any, args: list[Any]) -> Any:
    outputs = get_array(args[0])
    if not outputs:
        raise RPCError(RPC_INVALID_PARAMETER, "Invalid parameter, outputs are missing")
    options = {} if args[1] is None else get_obj(args[1])
    check_object(options, {"mempool_only": "bool", "return_spending_tx": "bool"}, allow_null=True, strict=True)
    chain = chain_of(ctx)
    requests = []
    for item in outputs:
        obj = get_obj(item)
        check_object(obj, {"txid": "string", "vout": "number"}, allow_null=False, strict=True)
        txid = parse_hash_v(obj["txid"], "txid")
        n = get_int(obj["vout"])
        if n < 0:
            raise RPCError(RPC_INVALID_PARAMETER, "Invalid parameter, vout cannot be negative")
        requests.append((OutPoint(txid, n), obj))
    if not chain.builtin:
        # The node's mempool and its spender index answer (Quill's copy of the mempool may lag).
        asked = {k: get_bool(v) for k, v in options.items() if v is not None}
        return forward(ctx, "gettxspendingprevout",
                       [{"txid": obj["txid"], "vout": o.n} for o, obj in requests], asked)  # echoed as given
    # Core's default: the mempool only when there is no spender index
    indexed = chain.spender_index_progress() is not None
    mempool_only = get_bool(options["mempool_only"]) if options.get("mempool_only") is not None else not indexed
    return_tx = bool(options.get("return_spending_tx"))
    # Core's order: the outputs the mempool answers (all of them, mempool only), then the rest as
    # the spender index answers them, each group in the order asked.
    result, rest = [], []
    with chain.lock:
        pool = chain.mempool()
        for outpoint, obj in requests:
            entry = dict(obj)
            spender = pool.spender(outpoint)
            if spender is not None:
                entry["spendingtxid"] = hash_to_hex(spender)
                if return_tx:
                    entry["spendingtx"] = pool.get(spender).tx.hex()
            elif not mempool_only:
                rest.append((outpoint, entry))
                continue
            result.append(entry)
        if not rest:
            return result
        confirmed = chain.confirmed_spenders([outpoint for outpoint, _ in rest], return_tx)
    if confirmed is None:
        raise RPCError(RPC_MISC_ERROR, "Mempool lacks a relevant spend, and txospenderindex is unavailable.")
    for (_, entry), found in zip(rest, confirmed, strict=True):
        if found is not None:
            spending, block_hash = found
            if return_tx:
                entry["spendingtxid"] = spending.txid_hex()
                entry["spendingtx"] = spending.hex()
            else:
                entry["spendingtxid"] = hash_to_hex(spending)
            entry["blockhash"] = hash_to_hex(block_hash)
        result.append(entry)
    return result


class _ScanReserver:
    """Core's CoinsViewScanReserver: one scantxoutset at a time; `abort` stops it."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.running = False
        self.abort = False

    def reserve(self) -> bool:
        with self.lock:
            if self.running:
                return False
            self.running, self.abort = True, False
            return True

    def release(self) -> None:
        with self.lock:
            self.running = False


_SCAN = _ScanReserver()
DEFAULT_SCAN_RANGE = (0, 1000)


def descriptor_object(scanobject: Any, chain_name: str) -> tuple[Any, str, int, int]:
    """Core's EvalDescriptorStringOrObject up to the expansion: (the parsed descriptor, its
    text, the first and last child to expand)."""
    low, high = DEFAULT_SCAN_RANGE
    if isinstance(scanobject, str):
        text = scanobject
    elif isinstance(scanobject, dict):
        if scanobject.get("desc") is None:
            raise RPCError(RPC_INVALID_PARAMETER, "Descriptor needs to be provided in scan object")
        text = get_str(scanobject["desc"])
        if scanobject.get("range") is not None:
            low, high = parse_descriptor_range(scanobject["range"])
    else:
        raise RPCError(RPC_INVALID_PARAMETER, "Scan object needs to be either a string or an object")
    try:
        desc = parse_descriptor(text, chain_name)
    except DescriptorError as e:
        raise RPCError(RPC_INVALID_ADDRESS_OR_KEY, str(e)) from None
    if not desc.is_range():
        low = high = 0
    return desc, text, low, high


def cannot_derive(text: str) -> RPCError:
    return RPCError(RPC_INVALID_ADDRESS_OR_KEY, f"Cannot derive script without private keys: '{text}'")


def _scan_scripts(scanobject: Any, chain_name: str) -> list[tuple[bytes, str]]:
    """Core's EvalDescriptorStringOrObject: each script of the descriptor with its inferred text."""
    desc, text, low, high = descriptor_object(scanobject, chain_name)
    out = []
    for i in range(low, high + 1):
        try:
            out.append((desc.script(i), desc.inferred_string(i)))
        except DerivationError:
            raise cannot_derive(text) from None
    return out


def scantxoutset(ctx: Any, args: list[Any]) -> Any:
    action = get_str(args[0])
    if action == "status":
        return {"progress": 0} if _SCAN.running else None
    if action == "abort":
        if not _SCAN.running:
            return False
        _SCAN.abort = True
        return True
    if action != "start":
        raise RPCError(RPC_INVALID_PARAMETER, f"Invalid action '{action}'")
    if following(ctx):
        # A follower keeps no UTXO set: the followed node scans its own.
        return forward(ctx, "scantxoutset", action, *([] if args[1] is None else [args[1]]))
    if not _SCAN.reserve():
        raise RPCError(RPC_INVALID_PARAMETER, 'Scan already in progress, use action "abort" or "status"')
    try:
        if args[1] is None:
            raise RPCError(RPC_MISC_ERROR, "scanobjects argument is required for the start action")
        descriptors: dict[bytes, str] = {}
        for scanobject in get_array(args[1]):
            for script, text in _scan_scripts(scanobject, ctx.node.chain_name):
                descriptors.setdefault(script, text)
        chain = chain_of(ctx)
        with chain.lock:
            success, count, found = chain.scan_utxos(set(descriptors), lambda: _SCAN.abort)
            height, tip_hash = chain.tip()
            index = chain.block_index()
            unspents = []
            for txid, n, coin in found:
                unspents.append({
                    "txid": hash_to_hex(txid), "vout": n, "scriptPubKey": coin.script_pubkey.hex(),
                    "desc": descriptors[coin.script_pubkey], "amount": Amount(coin.value),
                    "coinbase": coin.coinbase, "height": coin.height,
                    "blockhash": hash_to_hex(index.active[coin.height].hash),
                    "confirmations": height - coin.height + 1})
        return {"success": success, "txouts": count, "height": height, "bestblock": hash_to_hex(tip_hash),
                "unspents": unspents, "total_amount": Amount(sum(c.value for _, _, c in found))}
    finally:
        _SCAN.release()


PER_UTXO_OVERHEAD = 36 + 4    # sizeof(COutPoint) + sizeof(uint32_t)
MAX_BLOCK_SERIALIZED_SIZE = 4_000_000


def _block_by_hash_or_height(chain: Any, value: Any) -> bytes:
    """Core's ParseHashOrHeight: the block hash."""
    if is_json_int(value):
        height = get_int(value)
        if height < 0:
            raise RPCError(RPC_INVALID_PARAMETER, f"Target block height {height} is negative")
        tip, _ = chain.tip()
        if height > tip:
            raise RPCError(RPC_INVALID_PARAMETER, f"Target block height {height} after current tip {tip}")
        return bytes(chain.block_hash(height))
    block_hash = parse_hash_v(value, "hash_or_height")
    if chain.header_info(block_hash) is None:
        raise RPCError(RPC_INVALID_ADDRESS_OR_KEY, "Block not found")
    return block_hash


def _truncated_median(values: list[int]) -> int:
    if not values:
        return 0
    values = sorted(values)
    mid = len(values) // 2
    return values[mid] if len(values) % 2 else (values[mid - 1] + values[mid]) // 2


def _percentiles_by_weight(scores: list[tuple[int, int]], total_weight: int) -> list[int]:
    """Core's CalculatePercentilesByWeight: the 10/25/50/75/90th percentile fee rates by weight."""
    result = [0] * 5
    if not scores:
        return result
    scores = sorted(scores)
    marks = (total_weight / 10.0, total_weight / 4.0, total_weight / 2.0, (total_weight * 3.0) / 4.0,
             (total_weight * 9.0) / 10.0)
    index, cumulative = 0, 0
    for rate, weight in scores:
        cumulative += weight
        while index < 5 and cumulative >= marks[index]:
            result[index] = rate
            index += 1
    for i in range(index, 5):
        result[i] = scores[-1][0]
    return result


def _cdiv(a: int, b: int) -> int:
    """C++ integer division (toward zero)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def _block_stats(block: Any, spent: list[Any], height: int, info: Any, subsidy: int) -> dict[str, Any]:  # noqa: C901
    """Core's getblockstats, every statistic."""
    s = {"ins": 0, "outs": 0, "total_out": 0, "totalfee": 0, "maxfee": 0, "maxfeerate": 0, "minfee": MAX_MONEY,
         "minfeerate": MAX_MONEY, "maxtxsize": 0, "mintxsize": MAX_BLOCK_SERIALIZED_SIZE, "total_size": 0,
         "total_weight": 0, "swtxs": 0, "swtotal_size": 0, "swtotal_weight": 0, "utxos": 0,
         "utxo_size_inc": 0, "utxo_size_inc_actual": 0}
    fees, feerates, sizes = [], [], []
    spent_at = 0
    for tx in block.txs:
        s["outs"] += len(tx.vout)
        tx_out = 0
        for out in tx.vout:
            tx_out += out.value
            size = len(out.serialize()) + PER_UTXO_OVERHEAD
            s["utxo_size_inc"] += size
            if height == 0 or S.is_unspendable(out.script_pubkey):
                continue
            s["utxos"] += 1
            s["utxo_size_inc_actual"] += size
        if tx.is_coinbase():
            continue
        s["ins"] += len(tx.vin)
        s["total_out"] += tx_out
        tx_size, weight = tx.size(), tx.weight()
        sizes.append(tx_size)
        s["maxtxsize"] = max(s["maxtxsize"], tx_size)
        s["mintxsize"] = min(s["mintxsize"], tx_size)
        s["total_size"] += tx_size
        s["total_weight"] += weight
        if tx.has_witness():
            s["swtxs"] += 1
            s["swtotal_size"] += tx_size
            s["swtotal_weight"] += weight
        coins = spent[spent_at:spent_at + len(tx.vin)]
        spent_at += len(tx.vin)
        tx_in = 0
        for coin in coins:
            tx_in += coin.value
            size = 8 + len(compact_size(len(coin.script_pubkey))) + len(coin.script_pubkey) + PER_UTXO_OVERHEAD
            s["utxo_size_inc"] -= size
            s["utxo_size_inc_actual"] -= size
        fee = tx_in - tx_out
        fees.append(fee)
        s["maxfee"], s["minfee"], s["totalfee"] = max(s["maxfee"], fee), min(s["minfee"], fee), s["totalfee"] + fee
        rate = _cdiv(fee * 4, weight) if weight else 0
        feerates.append((rate, weight))
        s["maxfeerate"], s["minfeerate"] = max(s["maxfeerate"], rate), min(s["minfeerate"], rate)
    n = len(block.txs)
    total_weight = s["total_weight"]
    return {
        "avgfee": _cdiv(s["totalfee"], n - 1) if n > 1 else 0,
        "avgfeerate": _cdiv(s["totalfee"] * 4, total_weight) if total_weight else 0,
        "avgtxsize": _cdiv(s["total_size"], n - 1) if n > 1 else 0,
        "blockhash": hash_to_hex(block.hash()),
        "feerate_percentiles": _percentiles_by_weight(feerates, total_weight),
        "height": height, "ins": s["ins"], "maxfee": s["maxfee"], "maxfeerate": s["maxfeerate"],
        "maxtxsize": s["maxtxsize"], "medianfee": _truncated_median(fees), "mediantime": info.mediantime,
        "mediantxsize": _truncated_median(sizes),
        "minfee": 0 if s["minfee"] == MAX_MONEY else s["minfee"],
        "minfeerate": 0 if s["minfeerate"] == MAX_MONEY else s["minfeerate"],
        "mintxsize": 0 if s["mintxsize"] == MAX_BLOCK_SERIALIZED_SIZE else s["mintxsize"],
        "outs": s["outs"], "subsidy": subsidy, "swtotal_size": s["swtotal_size"],
        "swtotal_weight": s["swtotal_weight"], "swtxs": s["swtxs"], "time": info.time, "total_out": s["total_out"],
        "total_size": s["total_size"], "total_weight": total_weight, "totalfee": s["totalfee"], "txs": n,
        "utxo_increase": s["outs"] - s["ins"], "utxo_size_inc": s["utxo_size_inc"],
        "utxo_increase_actual": s["utxos"] - s["ins"], "utxo_size_inc_actual": s["utxo_size_inc_actual"],
    }


def getblockstats(ctx: Any, args: list[Any]) -> Any:
    if following(ctx):
        # A follower keeps neither blocks nor their spent outputs.
        return forward(ctx, "getblockstats", *([args[0]] if args[1] is None else args))
    chain = chain_of(ctx)
    with chain.lock:
        block_hash = _block_by_hash_or_height(chain, args[0])
        wanted = sorted({get_str(v) for v in get_array(args[1])}, key=str.encode) if args[1] is not None else []
        info = chain.header_info(block_hash)
        block = chain.block(block_hash)
        spent = chain.block_undo(block_hash) or []
        stats = _block_stats(block, spent, info.height, info, block_subsidy(info.height, chain.params))
    if not wanted:
        return stats
    out = {}
    for name in wanted:
        if name not in stats:
            raise RPCError(RPC_INVALID_PARAMETER, f"Invalid selected statistic '{name}'")
        out[name] = stats[name]
    return out


HASH_TYPES = (utxo_stats.HASH_SERIALIZED, utxo_stats.MUHASH, utxo_stats.NONE)


def gettxoutsetinfo(ctx: Any, args: list[Any]) -> Any:
    hash_type = utxo_stats.HASH_SERIALIZED if args[0] is None else get_str(args[0])
    if hash_type not in HASH_TYPES:
        raise RPCError(RPC_INVALID_PARAMETER, f"'{hash_type}' is not a valid hash_type")
    if args[2] is not None:
        get_bool(args[2])
    if following(ctx):   # with a block (hash or height): the node's coinstatsindex answers, or its error
        return forward(ctx, "gettxoutsetinfo", hash_type, *([args[1], args[2]] if args[1] is not None else []))
    if args[1] is not None:
        raise RPCError(RPC_INVALID_PARAMETER, "Querying specific block heights requires coinstatsindex")
    chain = chain_of(ctx)
    stats, height, tip_hash = chain.utxo_stats(hash_type)
    out: dict[str, Any] = {"height": height, "bestblock": hash_to_hex(tip_hash), "txouts": stats.txouts,
                           "bogosize": stats.bogosize}
    if stats.digest is not None:
        out["hash_serialized_3" if hash_type == utxo_stats.HASH_SERIALIZED else "muhash"] = hash_to_hex(stats.digest)
    out["total_amount"] = Amount(stats.total_amount)
    out["transactions"] = stats.transactions
    out["disk_size"] = chain.size_on_disk()  # Quill's chain file, where Core reports its coins database
    return out


BASIC_FILTER = "basic"
BASIC_FILTER_INDEX = "basic block filter index"
SPENDER_INDEX = "txospenderindex"
# A follower answers these indexes' calls through its node (getrawtransaction without a block,
# gettxspendingprevout, getblockfilter), so getindexinfo reports the node's.
PASSED_THROUGH_INDEXES = ("txindex", SPENDER_INDEX, BASIC_FILTER_INDEX)
_FILTER_INDEXES: weakref.WeakKeyDictionary[Any, FilterIndex] = weakref.WeakKeyDictionary()


def getblockfilter(ctx: Any, args: list[Any]) -> Any:
    block_hash = parse_hash_v(args[0], "blockhash")
    filter_type = BASIC_FILTER if args[1] is None else get_str(args[1])
    if filter_type != BASIC_FILTER:
        raise RPCError(RPC_INVALID_ADDRESS_OR_KEY, "Unknown filtertype")
    if following(ctx):
        return forward(ctx, "getblockfilter", hash_to_hex(block_hash), filter_type)
    chain = chain_of(ctx)
    with chain.lock:
        info = chain.header_info(block_hash)
        if info is None:
            raise RPCError(RPC_INVALID_ADDRESS_OR_KEY, "Block not found")
        if not info.in_active_chain:
            raise RPCError(RPC_INTERNAL_ERROR,
                           "Filter not found. This error is unexpected and indicates index corruption.")
        index = _FILTER_INDEXES.setdefault(chain, FilterIndex(chain))
        return {"filter": index.filter_of(block_hash).hex(), "header": hash_to_hex(index.header_of(info.height))}


MAX_PACKAGE_COUNT = 25


def testmempoolaccept(ctx: Any, args: list[Any]) -> Any:
    raw_txs = get_array(args[0])
    if not 1 <= len(raw_txs) <= MAX_PACKAGE_COUNT:
        raise RPCError(RPC_INVALID_PARAMETER,
                       f"Array must contain between 1 and {MAX_PACKAGE_COUNT} transactions.")
    max_rate = DEFAULT_MAX_RAW_TX_FEE_RATE if args[1] is None else fee_rate_from_value(args[1])
    if following(ctx):
        # A follower keeps no UTXO set to test against: the node answers, packages included.
        return forward(ctx, "testmempoolaccept", [get_str(raw) for raw in raw_txs], format_amount(max_rate))
    txs = []
    for raw in raw_txs:
        text = get_str(raw)
        try:
            txs.append(decode_hex_tx(text))
        except TxDecodeError:
            raise RPCError(RPC_DESERIALIZATION_ERROR,
                           f"TX decode failed: {text} Make sure the tx has at least one input.") from None
    if len(txs) > 1:
        # Core validates several transactions as one package (BIP331 rules); Quill does not.
        raise RPCError(RPC_INVALID_PARAMETER, "Quill tests one transaction at a time (no package validation)")
    tx = txs[0]
    result: dict[str, Any] = {"txid": tx.txid_hex(), "wtxid": tx.wtxid_hex()}
    chain = chain_of(ctx)
    try:
        entry = chain.test_accept(tx)
    except Invalid as e:
        result["allowed"] = False
        if e.missing_inputs:
            result["reject-reason"] = "missing-inputs"
        else:
            result["reject-reason"] = e.reason
            result["reject-details"] = str(e)
        return [result]
    max_fee = fee_for(max_rate, entry.vsize)
    if max_fee and entry.fee > max_fee:
        result["allowed"] = False
        result["reject-reason"] = "max-fee-exceeded"
        return [result]
    result["allowed"] = True
    result["vsize"] = entry.vsize
    result["fees"] = {"base": Amount(entry.fee), "effective-feerate": Amount(entry.fee * 1000 // entry.vsize),
                      "effective-includes": [tx.wtxid_hex()]}
    return [result]


METHODS = [
    Method("getchaintips", "blockchain", getchaintips),
    Method("getmininginfo", "mining", getmininginfo),
    Method("getindexinfo", "util", getindexinfo, [Param("index_name", STR)]),
    Method("gettxout", "blockchain", gettxout,
           [Param("txid", STR_HEX, required=True), Param("n", NUM, required=True), Param("include_mempool", BOOL)]),
    Method("gettxspendingprevout", "blockchain", gettxspendingprevout,
           [Param("outputs", ARR, required=True), Param("options", OBJ)]),
    Method("getblockstats", "blockchain", getblockstats, [Param("hash_or_height", ANY, required=True),
                                                          Param("stats", ARR)]),
    Method("gettxoutsetinfo", "blockchain", gettxoutsetinfo,
           [Param("hash_type", STR), Param("hash_or_height", ANY), Param("use_index", BOOL)]),
    Method("getblockfilter", "blockchain", getblockfilter, [Param("blockhash", STR_HEX, required=True),
                                                            Param("filtertype", STR)]),
    Method("scantxoutset", "blockchain", scantxoutset, [Param("action", STR, required=True),
                                                        Param("scanobjects", ARR)]),
    Method("testmempoolaccept", "rawtransactions", testmempoolaccept,
           [Param("rawtxs", ARR, required=True), Param("maxfeerate", AMOUNT)]),
]
