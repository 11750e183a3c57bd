"""walletcreatefundedpsbt and fundrawtransaction (Core's wallet/rpc/spend.cpp): the given inputs
and, when allowed, more of the wallet's coins chosen as Core chooses them. The funding rules are
quill.wallet.funding (coin selection quill.wallet.coinselection); the PSBT's wallet fields
quill.wallet.psbt_process (the same FillPSBT as walletprocesspsbt)."""
from __future__ import annotations

import random
import time
from typing import Any

from quill.amount import Amount
from quill.bulk import bulk_gc
from quill.chain.mini_miner import BumpFees
from quill.chain.policy import DUST_RELAY_FEE
from quill.handlers.core_help import core_help
from quill.handlers.external_signer import finish_transaction
from quill.handlers.network import MAX_CONF_TARGET, smart_fee_rate, wallet_estimate_request
from quill.handlers.psbt import _psbt_version, chain_lookups, construct_transaction
from quill.handlers.wallet import _Locked, _manager, _view
from quill.rpc.args import (
    INT64,
    amount_from_value,
    check_object,
    get_array,
    get_bool,
    get_int,
    get_obj,
    get_str,
    hex_to_pubkey,
    is_json_int,
    parse_hash_v,
)
from quill.rpc.errors import (
    RPC_DESERIALIZATION_ERROR,
    RPC_INVALID_ADDRESS_OR_KEY,
    RPC_INVALID_PARAMETER,
    RPC_MISC_ERROR,
    RPC_WALLET_ERROR,
    RPC_WALLET_INSUFFICIENT_FUNDS,
    RPCError,
)
from quill.rpc.registry import ANY, ARR, BOOL, NUM, OBJ, STR, STR_HEX, Method, Param
from quill.signing.provider import SigningProvider
from quill.tx.address import AddressError, decode_destination, encode_destination
from quill.tx.decode import TxDecodeError, decode_hex_tx, parse_hex
from quill.tx.hashes import hash_to_hex
from quill.tx.psbt import PSBT, encode_base64_psbt, psbt_from_tx
from quill.tx.script import solver
from quill.tx.transaction import OutPoint, Transaction, TxIn
from quill.wallet import coins, funding, solving
from quill.wallet.balance import is_spent
from quill.wallet.coinselection import MAX_STANDARD_TX_WEIGHT
from quill.wallet.descriptors import BECH32, BECH32M, LEGACY, P2SH_SEGWIT, DescriptorError
from quill.wallet.descriptors import parse as parse_descriptor
from quill.wallet.fallbackfee import FallbackFee
from quill.wallet.feebump import REQUIRED_FEE_RATE
from quill.wallet.psbt_process import fill_psbt

OUTPUT_TYPES = (LEGACY, P2SH_SEGWIT, BECH32, BECH32M)


def _fee_rate(ctx: Any, options: dict[str, Any], replaceable: bool) -> int:
    """sat/kvB from fee_rate (sat/vB) or feeRate (BTC/kvB), with Core's conflicts; else Core's
    GetMinimumFeeRate: the node's estimate for conf_target (at least the required rate), or
    without one -fallbackfee's rate (at least the required one), or Core's error."""
    if options.get("fee_rate") is not None:
        if options.get("feeRate") is not None:
            raise RPCError(RPC_INVALID_PARAMETER, "Cannot specify both fee_rate (sat/vB) and feeRate (BTC/kvB)")
        if options.get("conf_target") is not None:
            raise RPCError(RPC_INVALID_PARAMETER, "Cannot specify both conf_target and fee_rate. Please provide "
                           "either a confirmation target in blocks for automatic fee estimation, or an explicit "
                           "fee rate.")
        return amount_from_value(options["fee_rate"], 3)
    if options.get("feeRate") is not None:
        return amount_from_value(options["feeRate"])
    target, conservative = wallet_estimate_request(options.get("conf_target"), options.get("estimate_mode"),
                                                   replaceable)
    estimate = smart_fee_rate(ctx, target, conservative)
    if estimate:
        # The mempool's minimum fee (zero until a full pool raises it) and the required rate.
        return max(estimate, REQUIRED_FEE_RATE)
    fallback: FallbackFee = ctx.node.fallback_fee
    rate = fallback.fee_rate(REQUIRED_FEE_RATE)
    if rate is not None:
        return rate
    raise RPCError(RPC_WALLET_ERROR, "Fee estimation failed. Fallbackfee is disabled. Wait a few blocks or enable "
                                     "-fallbackfee.")


def _discard_rate(ctx: Any) -> int:
    """Core's GetDiscardRate: the economical estimate at the longest target, at most -discardfee,
    at least the dust relay rate; -discardfee itself when there is no estimate."""
    estimate = smart_fee_rate(ctx, MAX_CONF_TARGET, False)
    rate = funding.DEFAULT_DISCARD_FEE if estimate == 0 else min(estimate, funding.DEFAULT_DISCARD_FEE)
    return max(rate, DUST_RELAY_FEE)


def _subtract_from(options: dict[str, Any], n_outputs: int) -> set[int]:
    chosen: set[int] = set()
    value = options.get("subtractFeeFromOutputs")
    for item in [] if value is None else get_array(value):
        pos = get_int(item)
        if pos in chosen:
            raise RPCError(RPC_INVALID_PARAMETER, f"Invalid parameter 'subtract fee from output', duplicated position: {pos}")
        if pos < 0:
            raise RPCError(RPC_INVALID_PARAMETER, f"Invalid parameter 'subtract fee from output', negative position: {pos}")
        if pos >= n_outputs:
            raise RPCError(RPC_INVALID_PARAMETER, f"Invalid parameter 'subtract fee from output', position too large: {pos}")
        chosen.add(pos)
    return chosen


def _default_change_type(wallet: Any, tx: Transaction) -> str:
    """Core's TransactionChangeType without -changetype: the recipients' kind when the wallet has it."""
    kinds = {solver(o.script_pubkey)[0] for o in tx.vout}
    for kind, output_type in (("witness_v1_taproot", BECH32M), ("witness_v0_keyhash", BECH32),
                              ("scripthash", P2SH_SEGWIT), ("pubkeyhash", LEGACY)):
        if kind in kinds and wallet.active_descriptor(output_type, True) is not None:
            return output_type
    if wallet.active_descriptor(BECH32M, True) is not None:
        return BECH32M
    return BECH32  # -addresstype's default


def _change(wallet: Any, options: dict[str, Any], tx: Transaction,
            chain: str) -> tuple[bytes, int, str | None, str]:
    """The change script (empty when none can be had), the vsize of spending it (Core's
    change_spend_size), the output type whose change address was reserved (None for a
    changeAddress) and why there is no change script."""
    output_type: str | None = None
    if options.get("changeAddress") is not None:
        if options.get("change_type") is not None:
            raise RPCError(RPC_INVALID_PARAMETER, "Cannot specify both change address and address type options")
        try:
            script = decode_destination(get_str(options["changeAddress"]), chain)
        except AddressError:
            raise RPCError(RPC_INVALID_ADDRESS_OR_KEY, "Change address must be a valid bitcoin address") from None
    else:
        if options.get("change_type") is not None:
            output_type = get_str(options["change_type"])
            if output_type not in OUTPUT_TYPES:
                raise RPCError(RPC_INVALID_ADDRESS_OR_KEY, f"Unknown change type '{output_type}'")
        else:
            output_type = _default_change_type(wallet, tx)
        info = wallet.active_descriptor(output_type, True)
        if info is None:
            # Core fails only if the transaction turns out to need change (funding.NO_CHANGE_SCRIPT).
            return b"", funding.DUMMY_NESTED_P2WPKH_INPUT_SIZE, None, f"Error: No {output_type} addresses available."
        # Reserved here; kept (the index moves on) only when the call succeeds, as Core.
        script = info.desc.script(info.next_index)
    owners = wallet.scripts.get(script, [])
    if owners:
        try:
            return script, funding.input_vsize(wallet.descs[owners[0][0]].desc.node), output_type, ""
        except funding.FundingError:
            pass
    return script, funding.DUMMY_NESTED_P2WPKH_INPUT_SIZE, output_type, ""


def _solving_data(options: dict[str, Any], chain: str) -> SigningProvider:
    """Core's solving_data option: public keys, scripts and descriptors for external inputs."""
    data = {} if options.get("solving_data") is None else get_obj(options["solving_data"])
    pubkeys = [hex_to_pubkey(get_str(v)) for v in get_array(data["pubkeys"])] if "pubkeys" in data else []
    scripts = []
    for value in get_array(data["scripts"]) if "scripts" in data else []:
        text = get_str(value)
        script = parse_hex(text)
        if script is None:
            raise RPCError(RPC_INVALID_ADDRESS_OR_KEY, f"'{text}' is not hex")
        scripts.append(script)
    descriptors = []
    for value in get_array(data["descriptors"]) if "descriptors" in data else []:
        text = get_str(value)
        try:
            descriptors.append(parse_descriptor(text, chain, require_checksum=True))
        except DescriptorError as e:
            raise RPCError(RPC_INVALID_PARAMETER, f"Unable to parse descriptor '{text}': {e}") from None
    return solving.solving_provider(pubkeys, scripts, descriptors)


MIN_INPUT_WEIGHT = 165   # Core's GetTransactionInputWeight(CTxIn()): outpoint, sequence, empty scriptSig and witness


def _input_weights(options: dict[str, Any]) -> dict[OutPoint, int]:
    """Core's input_weights option (walletcreatefundedpsbt and send take it from their inputs)."""
    weights: dict[OutPoint, int] = {}
    for item in [] if options.get("input_weights") is None else get_array(options["input_weights"]):
        entry = get_obj(item)
        txid = parse_hash_v(entry.get("txid"), "txid")
        vout = entry.get("vout")
        if not is_json_int(vout):
            raise RPCError(RPC_INVALID_PARAMETER, "Invalid parameter, missing vout key")
        n = get_int(vout)
        if n < 0:
            raise RPCError(RPC_INVALID_PARAMETER, "Invalid parameter, vout cannot be negative")
        weight_v = entry.get("weight")
        if not is_json_int(weight_v):
            raise RPCError(RPC_INVALID_PARAMETER, "Invalid parameter, missing weight key")
        weight = get_int(weight_v, INT64)
        if weight < MIN_INPUT_WEIGHT:
            raise RPCError(RPC_INVALID_PARAMETER, "Invalid parameter, weight cannot be less than 165 (41 bytes (size of "
                           "outpoint + sequence + empty scriptSig) * 4 (witness scaling factor)) + 1 (empty witness)")
        if weight > MAX_STANDARD_TX_WEIGHT:
            raise RPCError(RPC_INVALID_PARAMETER, "Invalid parameter, weight cannot be greater than the maximum "
                           f"standard tx weight of {MAX_STANDARD_TX_WEIGHT}")
        weights[OutPoint(txid, n)] = weight
    return weights


def _weights_from_inputs(inputs: Any, options: dict[str, Any]) -> None:
    """Core's SetOptionsInputWeights: the inputs that carry a weight become options.input_weights."""
    if "input_weights" in options:
        raise RPCError(RPC_INVALID_PARAMETER, "Input weights should be specified in inputs rather than in options.")
    if inputs:
        options["input_weights"] = [item for item in inputs if isinstance(item, dict) and "weight" in item]


def _preset_coins(ctx: Any, wallet: Any, tx: Transaction, provider: SigningProvider,
                  weights: dict[OutPoint, int]) -> list[funding.Coin]:
    """Core's FundTransaction and FetchSelectedInputs: each given input with its output and what
    solves it, the wallet's descriptors first, then the solving data; an input that is not the
    wallet's must be in the UTXO set or the mempool."""
    found = []
    chain = _manager(ctx).chain
    for txin in tx.vin:
        row = wallet.store.get_tx(txin.prevout.hash)
        txout = None
        if row is not None and txin.prevout.n < len(row.tx.vout) \
                and wallet.is_mine(row.tx.vout[txin.prevout.n].script_pubkey):
            txout = row.tx.vout[txin.prevout.n]
        elif chain is not None:
            _, find_coin = chain_lookups(chain)
            txout = find_coin(txin.prevout)
        if txout is None:
            raise RPCError(RPC_WALLET_ERROR, "Unable to find UTXO for external input")
        node = _solving_node(wallet, txout.script_pubkey) or solving.infer_node(txout.script_pubkey, provider)
        found.append(funding.Coin(txout, node, txin.prevout, weight=weights.get(txin.prevout)))
    return found


def _solving_node(wallet: Any, script: bytes) -> Any:
    """The descriptor node that can spend `script` (None if none can): Core's solving provider."""
    for desc_id, _ in wallet.scripts.get(script, []):
        desc = wallet.descs[desc_id].desc
        if desc.is_solvable():
            return desc.node
    return None


def _available_coins(ctx: Any, wallet: Any, tx: Transaction, min_depth: int, max_depth: int,
                     include_unsafe: bool, min_amount: int = 1) -> list[funding.Coin]:
    """Core's AvailableCoins for spending: unlocked, unspent, mature, non-zero coins at the allowed
    depths, minus the pre-selected ones, with what the eligibility filters look at."""
    manager = _manager(ctx)
    view = _view(manager, wallet)
    preset = {txin.prevout for txin in tx.vin}
    found = coins.available_coins(view, coins.CoinFilter(min_depth=min_depth, max_depth=max_depth,
                                                         include_unsafe=include_unsafe, min_amount=min_amount),
                                  wallet.locked_coins)
    pool = None
    out = []
    from_me: dict[bytes, bool] = {}
    nodes: dict[bytes, Any] = {}   # a script paid several times is solved once
    for coin in found:
        if coin.outpoint in preset:
            continue
        txid = coin.outpoint.hash
        if txid not in from_me:
            row = wallet.store.get_tx(txid)
            from_me[txid] = row is not None and wallet.debit(row.tx) > 0
        ancestors = descendants = 0
        if coin.depth == 0:
            pool = manager.chain.mempool() if pool is None else pool
            if txid in pool:
                ancestors = len(pool.ancestors(txid)) + 1
                descendants = len(pool.descendants(txid))
        script = coin.txout.script_pubkey
        if script not in nodes:
            nodes[script] = _solving_node(wallet, script)
        out.append(funding.Coin(coin.txout, nodes[script], coin.outpoint, coin.depth, from_me[txid], ancestors,
                                descendants))
    return out


def _depths(options: dict[str, Any]) -> tuple[int, int]:
    """Core's minconf/maxconf options (coin control's m_min_depth/m_max_depth)."""
    min_depth, max_depth = 0, coins.MAX_DEPTH
    if options.get("minconf") is not None:
        min_depth = get_int(options["minconf"])
        if min_depth < 0:
            raise RPCError(RPC_INVALID_PARAMETER, "Negative minconf")
    if options.get("maxconf") is not None:
        max_depth = get_int(options["maxconf"])
        if max_depth < min_depth:
            raise RPCError(RPC_INVALID_PARAMETER, f"maxconf can't be lower than minconf: {max_depth} < {min_depth}")
    return min_depth, max_depth


def _fund(ctx: Any, wallet: Any, tx: Transaction, options: dict[str, Any], add_inputs_default: bool,
          chain: str) -> funding.Funded:
    """Core's FundTransaction, then CreateTransaction's second try avoiding partial spends (kept
    when its fee is no higher). The coins, their groups and the algorithms' working lists are
    tens of thousands of short-lived objects: the cyclic collector waits (quill.bulk)."""
    with bulk_gc():
        return _fund_unpaused(ctx, wallet, tx, options, add_inputs_default, chain)


def _fund_unpaused(ctx: Any, wallet: Any, tx: Transaction, options: dict[str, Any], add_inputs_default: bool,
                   chain: str) -> funding.Funded:
    add_inputs = add_inputs_default if options.get("add_inputs") is None else get_bool(options["add_inputs"])
    change_pos = -1 if options.get("changePosition") is None else get_int(options["changePosition"])
    if change_pos != -1 and not 0 <= change_pos <= len(tx.vout):
        raise RPCError(RPC_INVALID_PARAMETER, "changePosition out of bounds")
    include_unsafe = options.get("include_unsafe") is not None and get_bool(options["include_unsafe"])
    replaceable = True if options.get("replaceable") is None else get_bool(options["replaceable"])
    subtract = _subtract_from(options, len(tx.vout))
    min_depth, max_depth = _depths(options)
    rate = _fee_rate(ctx, options, replaceable)
    max_tx_weight = None if options.get("max_tx_weight") is None else get_int(options["max_tx_weight"])
    if not tx.vout:
        raise RPCError(RPC_INVALID_PARAMETER, "TX must have at least one output")
    provider = _solving_data(options, chain)
    weights = _input_weights(options)
    change_script, change_spend, reserved, no_change = _change(wallet, options, tx, chain)
    preset = _preset_coins(ctx, wallet, tx, provider, weights)
    available = _available_coins(ctx, wallet, tx, min_depth, max_depth, include_unsafe) if add_inputs else []
    rules = funding.FundingRules(
        rate, subtract, change_script, change_spend, change_pos, no_change, add_inputs, available,
        include_unsafe=include_unsafe, max_tx_weight=max_tx_weight,
        new_input_sequence=funding.MAX_BIP125_RBF_SEQUENCE if replaceable else funding.SEQUENCE_NONFINAL,
        bump_fees=BumpFees(_manager(ctx).chain.mempool()), discard_rate=_discard_rate(ctx))
    try:
        funded = funding.fund(tx, preset, rules)
    except funding.FundingError as e:
        raise RPCError(RPC_WALLET_ERROR, str(e)) from None
    if reserved is not None:
        # Core's KeepDestination: a successful call uses up the change address, change or not.
        wallet.new_destination(reserved, True)
    if funded.fee > 0:
        rules.avoid_partial_spends = True
        if funded.change_pos == -1 and reserved is not None:
            # The second try reserves a change address of its own when the first made none (kept
            # if that try succeeds).
            info = wallet.active_descriptor(reserved, True)
            rules.change_script = info.desc.script(info.next_index)
        elif funded.change_pos != -1:
            rules.change_script = funded.tx.vout[funded.change_pos].script_pubkey
        try:
            grouped = funding.fund(tx, preset, rules)
        except funding.FundingError:
            grouped = None
        if grouped is not None and funded.change_pos == -1 and reserved is not None:
            wallet.new_destination(reserved, True)
        if grouped is not None and grouped.fee <= funded.fee:
            funded = grouped
    if options.get("lockUnspents") is not None and get_bool(options["lockUnspents"]):
        for txin in funded.tx.vin:
            wallet.locked_coins.lock(txin.prevout, False)
    return funded


# Core's FundTransaction option check (RPCTypeCheckObj, strict; None: checked later).
_OPTION_TYPES: dict[str, str | None] = {
    "add_inputs": "bool", "include_unsafe": "bool", "add_to_wallet": "bool", "changeAddress": "string",
    "change_address": "string", "changePosition": "number", "change_position": "number", "change_type": "string",
    "includeWatching": "bool", "include_watching": "bool", "inputs": "array", "lockUnspents": "bool",
    "lock_unspents": "bool", "locktime": "number", "fee_rate": None, "feeRate": None, "psbt": "bool",
    "solving_data": "object", "subtractFeeFromOutputs": "array", "subtract_fee_from_outputs": "array",
    "replaceable": "bool", "conf_target": "number", "estimate_mode": "string", "minconf": "number",
    "maxconf": "number", "input_weights": "array", "max_tx_weight": "number",
}
# Core reads each snake_case spelling first, then the camelCase one.
_ALIASES = {"changeAddress": "change_address", "changePosition": "change_position",
            "lockUnspents": "lock_unspents", "subtractFeeFromOutputs": "subtract_fee_from_outputs"}


def _options(value: Any) -> dict[str, Any]:
    options = {} if value is None else dict(get_obj(value))
    check_object(options, _OPTION_TYPES, allow_null=True, strict=True)
    for camel, snake in _ALIASES.items():
        if options.get(snake) is not None:
            options[camel] = options[snake]
    return options


def walletcreatefundedpsbt(ctx: Any, args: list[Any]) -> Any:
    inputs, outputs, locktime, options_v, bip32derivs_v, version, psbt_version_v = args
    if inputs is not None and not isinstance(inputs, list):
        # Core 31 answers a non-array `inputs` with its usage text (checked against it).
        raise RPCError(RPC_MISC_ERROR, core_help("walletcreatefundedpsbt"))
    raw_options = {} if options_v is None else get_obj(options_v)
    # Core reads `replaceable` (get_bool) and builds the transaction before checking the options.
    replaceable = raw_options.get("replaceable")
    chain = ctx.node.chain_name
    tx = construct_transaction([inputs, outputs, locktime, None if replaceable is None else get_bool(replaceable),
                                version], chain)
    options = _options(options_v)
    _weights_from_inputs(inputs, options)
    psbt_version = _psbt_version(psbt_version_v)
    bip32derivs = True if bip32derivs_v is None else get_bool(bip32derivs_v)
    with _Locked(ctx) as wallet:
        funded = _fund(ctx, wallet, tx, options, not tx.vin, chain)
        psbt = psbt_from_tx(funded.tx, psbt_version)
        fill_psbt(wallet, psbt, None, bip32derivs, True)
    return {"psbt": encode_base64_psbt(psbt), "fee": Amount(funded.fee), "changepos": funded.change_pos}


def fundrawtransaction(ctx: Any, args: list[Any]) -> Any:
    hexstring, options_v, iswitness_v = args
    options = {} if options_v is None or isinstance(options_v, bool) else _options(options_v)
    if iswitness_v is None:
        try_witness = try_no_witness = True
    else:
        try_witness = get_bool(iswitness_v)
        try_no_witness = not try_witness
    try:
        tx = decode_hex_tx(get_str(hexstring), try_no_witness, try_witness)
    except TxDecodeError:
        raise RPCError(RPC_DESERIALIZATION_ERROR, "TX decode failed") from None
    with _Locked(ctx) as wallet:
        funded = _fund(ctx, wallet, tx, options, True, ctx.node.chain_name)
    return {"hex": funded.tx.hex(), "fee": Amount(funded.fee), "changepos": funded.change_pos}


def _fee_instructions(conf_target: Any, estimate_mode: Any, fee_rate: Any, options: dict[str, Any]) -> None:
    """Core's InterpretFeeEstimationInstructions: send's fee arguments, or the same in options."""
    if "conf_target" in options or "estimate_mode" in options:
        if conf_target is not None or estimate_mode is not None:
            raise RPCError(RPC_INVALID_PARAMETER, "Pass conf_target and estimate_mode either as arguments or in the "
                                                  "options object, but not both")
    else:
        options["conf_target"], options["estimate_mode"] = conf_target, estimate_mode
    if "fee_rate" in options:
        if fee_rate is not None:
            raise RPCError(RPC_INVALID_PARAMETER, "Pass the fee_rate either as an argument, or in the options object, "
                                                  "but not both")
    else:
        options["fee_rate"] = fee_rate
    if options["conf_target"] is not None and (options["estimate_mode"] is None
                                               or get_str(options["estimate_mode"]) == "unset"):
        raise RPCError(RPC_INVALID_PARAMETER, "Specify estimate_mode")


# Core's PreventOutdatedOptions: send takes only the snake_case spellings.
_OUTDATED = (("feeRate", "Use fee_rate (sat/vB) instead of feeRate"),
             ("changeAddress", "Use change_address instead of changeAddress"),
             ("changePosition", "Use change_position instead of changePosition"),
             ("includeWatching", "Use include_watching instead of includeWatching"),
             ("lockUnspents", "Use lock_unspents instead of lockUnspents"),
             ("subtractFeeFromOutputs", "Use subtract_fee_from_outputs instead of subtractFeeFromOutputs"))


def send(ctx: Any, args: list[Any]) -> Any:
    """Core's send: fund, then an external-signer wallet signs and broadcasts; the others hand
    back the PSBT to sign (complete false), with nothing broadcast or stored."""
    outputs, conf_target, estimate_mode, fee_rate, options_v, version = args
    options = {} if options_v is None else dict(get_obj(options_v))
    _fee_instructions(conf_target, estimate_mode, fee_rate, options)
    for key, message in _OUTDATED:
        if key in options:
            raise RPCError(RPC_INVALID_PARAMETER, message)
    replaceable = options.get("replaceable")
    chain = ctx.node.chain_name
    tx = construct_transaction([options.get("inputs"), outputs, options.get("locktime"),
                                None if replaceable is None else get_bool(replaceable), version], chain)
    options = _options(options)
    _weights_from_inputs(options.get("inputs"), options)
    with _Locked(ctx) as wallet:
        psbt = _prepared(ctx, wallet, _fund(ctx, wallet, tx, options, not tx.vin, chain).tx, options)
        external = wallet.external_signer
    return _finish(ctx, psbt, external, options)


def _finish(ctx: Any, psbt: PSBT, external: bool, options: dict[str, Any]) -> Any:
    """Core's FinishTransaction: an external-signer wallet signs and broadcasts (outside the
    wallet's lock, while the signer waits for its user); the others hand back the PSBT to sign."""
    if external:
        return finish_transaction(ctx, psbt, options)
    return {"psbt": encode_base64_psbt(psbt), "complete": False}


def _prepared(ctx: Any, wallet: Any, tx: Transaction, options: dict[str, Any]) -> PSBT:
    """Core's FinishTransaction up to signing: a locktime against fee sniping unless one was
    given, then the PSBT filled with the wallet's data (FillPSBT with sign=false)."""
    if options.get("locktime") is None and all(
            txin.sequence in (funding.SEQUENCE_NONFINAL, funding.MAX_BIP125_RBF_SEQUENCE) for txin in tx.vin):
        manager = _manager(ctx)
        height, tip_hash = wallet.tip()
        funding.discourage_fee_sniping(tx, random.Random(), height, manager.chain.entry(tip_hash).header.time,
                                       int(time.time()), manager.chain.is_initial_block_download())
    psbt = psbt_from_tx(tx, _psbt_version(None))
    fill_psbt(wallet, psbt, None, True, True)
    return psbt


def _sweep_inputs(ctx: Any, wallet: Any, tx: Transaction, options: dict[str, Any], rate: int,
                  rbf: bool) -> tuple[list[Any], int]:
    """sendall's inputs (the given ones, else every available coin), their solving nodes and total."""
    send_max = options.get("send_max") is not None and get_bool(options["send_max"])
    if options.get("inputs") is not None:
        if options.get("send_max") is not None:
            raise RPCError(RPC_INVALID_PARAMETER, "Cannot combine send_max with specific inputs.")
        if options.get("minconf") is not None or options.get("maxconf") is not None:
            raise RPCError(RPC_INVALID_PARAMETER, "Cannot combine minconf or maxconf with specific inputs.")
        nodes, total = [], 0
        view = _view(_manager(ctx), wallet)
        for txin in tx.vin:
            where = f"{hash_to_hex(txin.prevout.hash)}:{txin.prevout.n}"
            if is_spent(view, txin.prevout.hash, txin.prevout.n):
                raise RPCError(RPC_INVALID_PARAMETER, f"Input not available. UTXO ({where}) was already spent.")
            row = wallet.store.get_tx(txin.prevout.hash)
            if row is None or txin.prevout.n >= len(row.tx.vout) or not wallet.is_mine(
                    row.tx.vout[txin.prevout.n].script_pubkey):
                raise RPCError(RPC_INVALID_PARAMETER, f"Input not found. UTXO ({where}) is not part of wallet.")
            txout = row.tx.vout[txin.prevout.n]
            nodes.append(_solving_node(wallet, txout.script_pubkey))
            total += txout.value
        return nodes, total
    min_depth, max_depth = 0, coins.MAX_DEPTH
    if options.get("minconf") is not None:
        min_depth = get_int(options["minconf"])
        if min_depth < 0:
            raise RPCError(RPC_INVALID_PARAMETER, f"Invalid minconf (minconf cannot be negative): {min_depth}")
    if options.get("maxconf") is not None:
        max_depth = get_int(options["maxconf"])
        if max_depth < min_depth:
            raise RPCError(RPC_INVALID_PARAMETER, f"maxconf can't be lower than minconf: {max_depth} < {min_depth}")
    nodes, total = [], 0
    sequence = funding.MAX_BIP125_RBF_SEQUENCE if rbf else funding.SEQUENCE_NONFINAL
    for coin in _available_coins(ctx, wallet, tx, min_depth, max_depth, False, min_amount=0):
        if send_max and funding.fee_for(rate, coin.input_bytes()) > coin.txout.value:
            continue
        tx.vin.append(TxIn(coin.outpoint, b"", sequence))
        nodes.append(coin.node)
        total += coin.txout.value
    return nodes, total


def sendall(ctx: Any, args: list[Any]) -> Any:
    """Core's sendall: every available coin (or the given ones) to the recipients, the remainder
    shared by those without an amount; signed and broadcast as send's."""
    recipients, conf_target, estimate_mode, fee_rate, options_v = args
    options = {} if options_v is None else dict(get_obj(options_v))
    _fee_instructions(conf_target, estimate_mode, fee_rate, options)
    pairs: list[Any] = []
    without_amount: list[str] = []
    for recipient in get_array(recipients):
        if isinstance(recipient, str):
            pairs.append({recipient: 0})
            without_amount.append(recipient)
        else:
            pairs.append(recipient)
    if not without_amount:
        raise RPCError(RPC_INVALID_PARAMETER, "Must provide at least one address without a specified amount")
    rbf = True if options.get("replaceable") is None else get_bool(options["replaceable"])
    rate = _fee_rate(ctx, options, rbf)
    chain = ctx.node.chain_name
    tx = construct_transaction([options.get("inputs"), pairs, options.get("locktime"), rbf, None], chain)
    targets = {decode_destination(a, chain) for a in without_amount}
    remainder_to = [n for n, out in enumerate(tx.vout) if out.script_pubkey in targets]
    with _Locked(ctx) as wallet:
        nodes, total = _sweep_inputs(ctx, wallet, tx, options, rate, rbf)
        if any(node is None for node in nodes):
            raise RPCError(RPC_WALLET_ERROR, "Unable to determine the size of the transaction, the wallet contains "
                                             "unsolvable descriptors")
        try:
            bump_fee = BumpFees(_manager(ctx).chain.mempool()).combined([i.prevout for i in tx.vin], rate)
            funding.sweep(tx, nodes, total, remainder_to, rate, bump_fee,
                          options.get("send_max") is not None and get_bool(options["send_max"]))
        except funding.SweepError as e:
            code = {"funds": RPC_WALLET_INSUFFICIENT_FUNDS, "parameter": RPC_INVALID_PARAMETER}.get(e.kind,
                                                                                                   RPC_WALLET_ERROR)
            message = str(e)
            if "{}" in message:
                bad = next(o for n, o in enumerate(tx.vout) if n not in remainder_to
                           and o.value < funding.dust_threshold(o, funding.DUST_RELAY_TX_FEE))
                message = message.format(encode_destination(bad.script_pubkey, chain))
            raise RPCError(code, message) from None
        if options.get("lock_unspents") is not None and get_bool(options["lock_unspents"]):
            for txin in tx.vin:
                wallet.locked_coins.lock(txin.prevout, False)
        psbt = _prepared(ctx, wallet, tx, options)
        external = wallet.external_signer
    return _finish(ctx, psbt, external, options)


def _m(name: str, category: str, handler: Any, params: list[Param]) -> Method:
    return Method(name, category, handler, params, wallet=True)


METHODS = [
    _m("walletcreatefundedpsbt", "wallet", walletcreatefundedpsbt,
       [Param("inputs", ANY), Param("outputs", ANY, required=True), Param("locktime", NUM), Param("options", OBJ),
        Param("bip32derivs", BOOL), Param("version", NUM), Param("psbt_version", NUM)]),
    _m("fundrawtransaction", "rawtransactions", fundrawtransaction,
       [Param("hexstring", STR_HEX, required=True), Param("options", ANY), Param("iswitness", BOOL)]),
    _m("sendall", "wallet", sendall,
       [Param("recipients", ARR, required=True), Param("conf_target", NUM), Param("estimate_mode", STR),
        Param("fee_rate", ANY), Param("options", OBJ)]),
    _m("send", "wallet", send,
       [Param("outputs", ANY, required=True), Param("conf_target", NUM), Param("estimate_mode", STR),
        Param("fee_rate", ANY), Param("options", OBJ), Param("version", NUM)]),
]

