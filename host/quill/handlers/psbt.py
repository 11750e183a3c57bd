"""PSBT and raw-transaction construction RPCs that need no chain or wallet (Core's
rpc/rawtransaction.cpp): decodepsbt, combinepsbt, joinpsbts, createpsbt, converttopsbt,
createrawtransaction, finalizepsbt, analyzepsbt, utxoupdatepsbt. The PSBT itself is quill.tx.psbt; this module parses parameters and
maps its errors to Core's."""
from __future__ import annotations

import random
from typing import Any

from quill.amount import Amount
from quill.handlers.blockchain import chain_of
from quill.handlers.network import following, forward
from quill.handlers.psbt_render import psbt_to_univ
from quill.rpc.args import (
    INT64,
    UINT32,
    amount_from_value,
    get_array,
    get_bool,
    get_int,
    get_obj,
    get_str,
    parse_hash_v,
    parse_hex_v,
)
from quill.rpc.errors import RPC_DESERIALIZATION_ERROR, RPC_INVALID_ADDRESS_OR_KEY, RPC_INVALID_PARAMETER, RPCError
from quill.rpc.registry import ANY, ARR, BOOL, NUM, STR, STR_HEX, Method, Param
from quill.signing.psbt_signer import analyze_psbt, extract_transaction, update_from_chain
from quill.tx.address import AddressError, decode_destination
from quill.tx.decode import TxDecodeError, decode_hex_tx
from quill.tx.hashes import hash_to_hex
from quill.tx.psbt import (
    PSBT,
    PSBTError,
    add_input,
    add_output,
    combine_psbts,
    decode_base64_psbt,
    encode_base64_psbt,
    psbt_from_tx,
)
from quill.tx.script import push_data
from quill.tx.transaction import OutPoint, Transaction, TxIn, TxOut

SEQUENCE_FINAL = 0xFFFFFFFF
MAX_SEQUENCE_NONFINAL = SEQUENCE_FINAL - 1
MAX_BIP125_RBF_SEQUENCE = SEQUENCE_FINAL - 2
LOCKTIME_MAX = 0xFFFFFFFF
TX_MIN_STANDARD_VERSION, TX_MAX_STANDARD_VERSION = 1, 3
DEFAULT_RAWTX_VERSION = 2
OP_RETURN = b"\x6a"


def decode_psbt_arg(value: str) -> PSBT:
    """Core's DecodeBase64PSBT failure as the RPCs report it."""
    try:
        return decode_base64_psbt(value)
    except PSBTError as e:
        raise RPCError(RPC_DESERIALIZATION_ERROR, f"TX decode failed {e}") from None


# -- ConstructTransaction (Core's rpc/rawtransaction_util.cpp) --------------------------------


def _add_inputs(tx: Transaction, inputs_in: Any, rbf: bool | None) -> None:
    for item in [] if inputs_in is None else get_array(inputs_in):
        obj = get_obj(item)
        txid = parse_hash_v(obj.get("txid"), "txid")
        vout_v = obj.get("vout")
        if vout_v is None or isinstance(vout_v, (bool, str, list, dict)):
            raise RPCError(RPC_INVALID_PARAMETER, "Invalid parameter, missing vout key")
        n = get_int(vout_v)
        if n < 0:
            raise RPCError(RPC_INVALID_PARAMETER, "Invalid parameter, vout cannot be negative")
        if rbf is None or rbf:
            sequence = MAX_BIP125_RBF_SEQUENCE
        elif tx.locktime:
            sequence = MAX_SEQUENCE_NONFINAL
        else:
            sequence = SEQUENCE_FINAL
        seq_v = obj.get("sequence")
        if seq_v is not None and not isinstance(seq_v, (bool, str, list, dict)):
            seq = get_int(seq_v, INT64)
            if not 0 <= seq <= SEQUENCE_FINAL:
                raise RPCError(RPC_INVALID_PARAMETER, "Invalid parameter, sequence number is out of range")
            sequence = seq
        tx.vin.append(TxIn(OutPoint(txid, n), b"", sequence, []))


def _normalize_outputs(outputs_in: Any) -> list[tuple[str, Any]]:
    """NormalizeOutputs: an object, or an array of one-key objects, as (key, value) pairs.
    UniValue keeps a repeated key twice, so duplicates reach the checks below."""
    if outputs_in is None:
        raise RPCError(RPC_INVALID_PARAMETER, "Invalid parameter, output argument must be non-null")
    if isinstance(outputs_in, dict):
        return list(_pairs(outputs_in))
    pairs: list[tuple[str, Any]] = []
    for output in get_array(outputs_in):
        if not isinstance(output, dict):
            raise RPCError(RPC_INVALID_PARAMETER, "Invalid parameter, key-value pair not an object as expected")
        if len(output) != 1:
            raise RPCError(RPC_INVALID_PARAMETER, "Invalid parameter, key-value pair must contain exactly one key")
        pairs += _pairs(output)
    return pairs


def _pairs(obj: dict[str, Any]) -> list[tuple[str, Any]]:
    # UniValue keeps a repeated key twice (lookups find the first value); the request
    # parser keeps the first and lists the repeats.
    repeated = getattr(obj, "duplicate_keys", None) or []
    return list(obj.items()) + [(key, obj[key]) for key in repeated]


def _add_outputs(tx: Transaction, outputs_in: Any, chain: str) -> None:
    seen: set[bytes] = set()
    has_data = False
    for name, value in _normalize_outputs(outputs_in):
        if name == "data":
            if has_data:
                raise RPCError(RPC_INVALID_PARAMETER, "Invalid parameter, duplicate key: data")
            has_data = True
            text = value if isinstance(value, str) else getattr(value, "text", "")
            tx.vout.append(TxOut(0, OP_RETURN + push_data(parse_hex_v(text, "Data"))))
            continue
        try:
            script: bytes | None = decode_destination(name, chain)
        except AddressError:
            script = None
        amount = amount_from_value(value)
        if script is None:
            raise RPCError(RPC_INVALID_ADDRESS_OR_KEY, f"Invalid Bitcoin address: {name}")
        if script in seen:
            raise RPCError(RPC_INVALID_PARAMETER, f"Invalid parameter, duplicated address: {name}")
        seen.add(script)
        tx.vout.append(TxOut(amount, script))


def construct_transaction(args: list[Any], chain: str) -> Transaction:
    """Core's ConstructTransaction from (inputs, outputs, locktime, replaceable, version)."""
    inputs, outputs, locktime_v, replaceable, version_v = args[:5]
    rbf = None if replaceable is None else get_bool(replaceable)
    tx = Transaction(DEFAULT_RAWTX_VERSION, [], [], 0)
    if locktime_v is not None:
        locktime = get_int(locktime_v, INT64)
        if not 0 <= locktime <= LOCKTIME_MAX:
            raise RPCError(RPC_INVALID_PARAMETER, "Invalid parameter, locktime out of range")
        tx.locktime = locktime
    version = DEFAULT_RAWTX_VERSION if version_v is None else get_int(version_v, UINT32)
    if not TX_MIN_STANDARD_VERSION <= version <= TX_MAX_STANDARD_VERSION:
        raise RPCError(RPC_INVALID_PARAMETER, f"Invalid parameter, version out of range"
                                              f"({TX_MIN_STANDARD_VERSION}~{TX_MAX_STANDARD_VERSION})")
    tx.version = version
    _add_inputs(tx, inputs, rbf)
    _add_outputs(tx, outputs, chain)
    if rbf and tx.vin and not any(i.sequence <= MAX_BIP125_RBF_SEQUENCE for i in tx.vin):
        raise RPCError(RPC_INVALID_PARAMETER,
                       "Invalid parameter combination: Sequence number(s) contradict replaceable option")
    return tx


def _psbt_version(value: Any) -> int:
    version = 2 if value is None else get_int(value, UINT32)
    if version not in (0, 2):
        raise RPCError(RPC_INVALID_PARAMETER, "The PSBT version can only be 2 or 0")
    return version


# -- handlers ---------------------------------------------------------------------------------


def decodepsbt(ctx: Any, args: list[Any]) -> Any:
    return psbt_to_univ(decode_psbt_arg(args[0]), ctx.node.chain_name)


def combinepsbt(ctx: Any, args: list[Any]) -> Any:
    txs = get_array(args[0])
    if not txs:
        raise RPCError(RPC_INVALID_PARAMETER, "Parameter 'txs' cannot be empty")
    psbts = [decode_psbt_arg(get_str(t)) for t in txs]
    merged = combine_psbts(psbts)
    if merged is None:
        raise RPCError(RPC_INVALID_PARAMETER, "PSBTs not compatible (different transactions)")
    return encode_base64_psbt(merged)


def joinpsbts(ctx: Any, args: list[Any]) -> Any:
    txs = get_array(args[0])
    if len(txs) <= 1:
        raise RPCError(RPC_INVALID_PARAMETER, "At least two PSBTs are required to join PSBTs.")
    psbts: list[PSBT] = []
    best_version, best_locktime = 1, 0xFFFFFFFF
    for text in txs:
        psbt = decode_psbt_arg(get_str(text))
        psbts.append(psbt)
        if psbt.psbt_version != 0:
            raise RPCError(RPC_INVALID_PARAMETER, "joinpsbts only operates on version 0 PSBTs")
        best_version = max(best_version, psbt.tx_version)
        best_locktime = min(best_locktime, psbt.fallback_locktime or 0)
    blank = Transaction(best_version, [], [], best_locktime)
    merged = psbt_from_tx(blank, 0)
    for psbt in psbts:
        for txin in psbt.inputs:
            if not add_input(merged, txin):
                raise RPCError(RPC_INVALID_PARAMETER,
                               f"Input {hash_to_hex(txin.prev_txid)}:{txin.prev_out} exists in multiple PSBTs")
        for out in psbt.outputs:
            add_output(merged, out)
        for origin, xpubs in psbt.xpubs.items():
            merged.xpubs.setdefault(origin, set()).update(xpubs)
        for key, value in psbt.unknown.items():
            merged.unknown.setdefault(key, value)
    # Core shuffles inputs and outputs so that the join does not reveal who brought which;
    # its shuffled copy keeps the unknowns but not the xpubs.
    rng = random.SystemRandom()
    shuffled = psbt_from_tx(blank, 0)
    shuffled.inputs = rng.sample(merged.inputs, len(merged.inputs))
    shuffled.outputs = rng.sample(merged.outputs, len(merged.outputs))
    shuffled.unknown = dict(merged.unknown)
    return encode_base64_psbt(shuffled)


def createpsbt(ctx: Any, args: list[Any]) -> Any:
    tx = construct_transaction(args, ctx.node.chain_name)
    return encode_base64_psbt(psbt_from_tx(tx, _psbt_version(args[5])))


def converttopsbt(ctx: Any, args: list[Any]) -> Any:
    hexstring, permitsigdata_v, iswitness_v, psbt_version_v = args
    permitsigdata = False if permitsigdata_v is None else get_bool(permitsigdata_v)
    if iswitness_v is None:
        try_witness = try_no_witness = True
    else:
        iswitness = get_bool(iswitness_v)
        try_witness, try_no_witness = iswitness, not iswitness
    try:
        tx = decode_hex_tx(hexstring, try_no_witness, try_witness)
    except TxDecodeError:
        raise RPCError(RPC_DESERIALIZATION_ERROR, "TX decode failed") from None
    for txin in tx.vin:
        if (txin.script_sig or txin.witness) and not permitsigdata:
            raise RPCError(RPC_DESERIALIZATION_ERROR, "Inputs must not have scriptSigs and scriptWitnesses")
        txin.script_sig = b""
        txin.witness = []
    return encode_base64_psbt(psbt_from_tx(tx, _psbt_version(psbt_version_v)))


def finalizepsbt(ctx: Any, args: list[Any]) -> Any:
    psbt = decode_psbt_arg(args[0])
    extract = True if args[1] is None else get_bool(args[1])
    tx = extract_transaction(psbt)
    if tx is not None and extract:
        return {"hex": tx.hex(), "complete": True}
    return {"psbt": encode_base64_psbt(psbt), "complete": tx is not None}


def chain_lookups(chain: Any) -> tuple[Any, Any]:
    """Core's ProcessPSBT lookups: a previous transaction (txindex, then mempool) and a coin
    (mempool, then UTXO set). Call them holding `chain.lock`."""

    def find_tx(txid: bytes) -> Any:
        found = chain.get_transaction(txid)
        return None if found is None else found[0]

    def find_coin(outpoint: Any) -> Any:
        coin = chain.mempool().coin(outpoint) or chain.coin(outpoint)
        return None if coin is None else TxOut(coin.value, coin.script_pubkey)

    return find_tx, find_coin


def utxoupdatepsbt(ctx: Any, args: list[Any]) -> Any:
    text, descriptors = args
    if following(ctx):
        # The followed node keeps the UTXO set and transaction index Quill does not.
        return forward(ctx, "utxoupdatepsbt", text, *([] if descriptors is None else [descriptors]))
    psbt = decode_psbt_arg(text)
    if descriptors is not None and get_array(descriptors):
        raise RPCError(RPC_INVALID_PARAMETER, "Quill's utxoupdatepsbt takes no descriptors on the built-in chain")
    chain = chain_of(ctx)
    find_tx, find_coin = chain_lookups(chain)
    with chain.lock:
        update_from_chain(psbt, find_tx, find_coin)
    return encode_base64_psbt(psbt)


def analyzepsbt(ctx: Any, args: list[Any]) -> Any:
    analysis = analyze_psbt(decode_psbt_arg(args[0]))
    result: dict[str, Any] = {}
    inputs = []
    for item in analysis.inputs:
        entry: dict[str, Any] = {"has_utxo": item.has_utxo, "is_final": item.is_final, "next": item.next}
        missing: dict[str, Any] = {}
        if item.missing_pubkeys:
            missing["pubkeys"] = [k.hex() for k in item.missing_pubkeys]
        if item.missing_redeem_script is not None:
            missing["redeemscript"] = item.missing_redeem_script.hex()
        if item.missing_witness_script is not None:
            missing["witnessscript"] = item.missing_witness_script.hex()
        if item.missing_sigs:
            missing["signatures"] = [k.hex() for k in item.missing_sigs]
        if missing:
            entry["missing"] = missing
        inputs.append(entry)
    if inputs:
        result["inputs"] = inputs
    if analysis.estimated_vsize is not None:
        result["estimated_vsize"] = analysis.estimated_vsize
    if analysis.estimated_feerate is not None:
        result["estimated_feerate"] = Amount(analysis.estimated_feerate)
    if analysis.fee is not None:
        result["fee"] = Amount(analysis.fee)
    result["next"] = analysis.next
    if analysis.error:
        result["error"] = analysis.error
    return result


def createrawtransaction(ctx: Any, args: list[Any]) -> Any:
    return construct_transaction(args, ctx.node.chain_name).hex()


_CREATE_PARAMS = [
    Param("inputs", ARR, required=True),
    Param("outputs", ANY, required=True),  # an array, or an object (Core skips its type check)
    Param("locktime", NUM),
    Param("replaceable", BOOL),
    Param("version", NUM),
]

METHODS = [
    Method("decodepsbt", "rawtransactions", decodepsbt, [Param("psbt", STR, required=True)], stateless=True,
           float_free=True),
    Method("combinepsbt", "rawtransactions", combinepsbt, [Param("txs", ARR, required=True)], stateless=True),
    Method("joinpsbts", "rawtransactions", joinpsbts, [Param("txs", ARR, required=True)], stateless=True),
    Method("createpsbt", "rawtransactions", createpsbt, [*_CREATE_PARAMS, Param("psbt_version", NUM)],
           stateless=True),
    Method("converttopsbt", "rawtransactions", converttopsbt,
           [Param("hexstring", STR_HEX, required=True), Param("permitsigdata", BOOL), Param("iswitness", BOOL),
            Param("psbt_version", NUM)], stateless=True),
    Method("finalizepsbt", "rawtransactions", finalizepsbt,
           [Param("psbt", STR, required=True), Param("extract", BOOL)], stateless=True),
    Method("utxoupdatepsbt", "rawtransactions", utxoupdatepsbt, [Param("psbt", STR, required=True),
                                                                 Param("descriptors", ARR)]),
    Method("analyzepsbt", "rawtransactions", analyzepsbt, [Param("psbt", STR, required=True)], stateless=True,
           float_free=True),
    Method("createrawtransaction", "rawtransactions", createrawtransaction, _CREATE_PARAMS, stateless=True),
]
