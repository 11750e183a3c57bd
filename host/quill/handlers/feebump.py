"""bumpfee and psbtbumpfee (Core's wallet/rpc/spend.cpp bumpfee_helper). The replacement is
quill.wallet.feebump's, its PSBT filled by the wallet (quill.wallet.psbt_process); bumpfee signs
it through an external-signer wallet's signer and broadcasts it, and answers Core's error for
the other (watch-only) wallets."""
from __future__ import annotations

from typing import Any

from quill.amount import Amount
from quill.chain.mini_miner import BumpFees
from quill.handlers.blockchain import chain_of
from quill.handlers.external_signer import commit, sign_and_extract
from quill.handlers.network import (
    DEFAULT_INCREMENTAL_RELAY_FEE,
    smart_fee_rate,
    wallet_estimate_request,
)
from quill.handlers.psbt import _add_outputs, _psbt_version, chain_lookups
from quill.handlers.wallet import _Locked
from quill.handlers.wallet_funding import _available_coins, _default_change_type, _discard_rate
from quill.rpc.args import amount_from_value, check_object, get_bool, get_int, get_obj, get_str, parse_hash_v
from quill.rpc.errors import (
    RPC_INVALID_ADDRESS_OR_KEY,
    RPC_INVALID_PARAMETER,
    RPC_MISC_ERROR,
    RPC_WALLET_ERROR,
    RPCError,
)
from quill.rpc.registry import OBJ, STR_HEX, Method, Param
from quill.tx.psbt import PSBT, encode_base64_psbt, psbt_from_tx
from quill.tx.transaction import Transaction, TxOut
from quill.wallet import coins, feebump, funding
from quill.wallet.psbt_process import fill_psbt

_CODES = {feebump.INVALID_ADDRESS_OR_KEY: RPC_INVALID_ADDRESS_OR_KEY, feebump.INVALID_PARAMETER: RPC_INVALID_PARAMETER,
          feebump.WALLET_ERROR: RPC_WALLET_ERROR, feebump.MISC_ERROR: RPC_MISC_ERROR}

_OPTION_TYPES: dict[str, str | None] = {
    "confTarget": "number", "conf_target": "number", "fee_rate": None, "replaceable": "bool",
    "estimate_mode": "string", "outputs": None, "original_change_index": "number", "psbt_version": "number",
}


def bumpfee(ctx: Any, args: list[Any]) -> Any:
    """Core's bumpfee: only an external-signer wallet can sign (through its signer, outside the
    wallet's lock); the replacement is psbtbumpfee's, broadcast."""
    with _Locked(ctx) as wallet:
        if not wallet.external_signer:
            raise RPCError(RPC_WALLET_ERROR, "bumpfee is not available with wallets that have private keys "
                                             "disabled. Use psbtbumpfee instead.")
    psbt, bump = _bump(ctx, args)
    _, tx = sign_and_extract(ctx, psbt)
    if tx is None:
        raise RPCError(RPC_WALLET_ERROR, "Transaction incomplete. Try psbtbumpfee instead.")
    commit(ctx, tx)
    with _Locked(ctx) as wallet:
        wallet.mark_replaced(bump.original, tx.txid())
    return {"txid": tx.txid_hex(), "origfee": Amount(bump.old_fee), "fee": Amount(bump.new_fee), "errors": []}


def _fee_rate(options: dict[str, Any]) -> int | None:
    """Core's SetFeeEstimateMode: an explicit fee rate (sat/kvB), or None for the estimate."""
    if options.get("confTarget") is not None and options.get("conf_target") is not None:
        raise RPCError(RPC_INVALID_PARAMETER, "confTarget and conf_target options should not both be set. Use "
                                              "conf_target (confTarget is deprecated).")
    conf_target = options.get("confTarget", options.get("conf_target"))
    mode = options.get("estimate_mode")
    if options.get("fee_rate") is not None:
        if conf_target is not None:
            raise RPCError(RPC_INVALID_PARAMETER, "Cannot specify both conf_target and fee_rate. Please provide "
                           "either a confirmation target in blocks for automatic fee estimation, or an explicit "
                           "fee rate.")
        if mode is not None and get_str(mode) != "unset":
            raise RPCError(RPC_INVALID_PARAMETER, "Cannot specify both estimate_mode and fee_rate")
        return amount_from_value(options["fee_rate"], 3)
    wallet_estimate_request(conf_target, mode, True)      # Core's checks of both
    return None


def _request(ctx: Any, txid: bytes, options: dict[str, Any]) -> feebump.BumpRequest:
    replaceable = True if options.get("replaceable") is None else get_bool(options["replaceable"])
    fee_rate = _fee_rate(options)
    min_fee_rate = 0 if fee_rate is not None else _minimum_fee_rate(ctx, options, replaceable)
    outputs: list[TxOut] = []
    if options.get("outputs") is not None:
        if options["outputs"] == []:
            raise RPCError(RPC_INVALID_PARAMETER, "Invalid parameter, output argument cannot be an empty array")
        temp = Transaction(2, [], [], 0)
        _add_outputs(temp, options["outputs"], ctx.node.chain_name)
        outputs = temp.vout
    change_index = None
    if options.get("original_change_index") is not None:
        change_index = get_int(options["original_change_index"], (0, 0xFFFFFFFF))
    return feebump.BumpRequest(txid, fee_rate, replaceable, outputs, change_index, DEFAULT_INCREMENTAL_RELAY_FEE,
                               None, min_fee_rate=min_fee_rate, discard_rate=_discard_rate(ctx))


def _minimum_fee_rate(ctx: Any, options: dict[str, Any], replaceable: bool) -> int:
    """Core's GetMinimumFeeRate for the replacement: the node's estimate for its target and mode,
    else -fallbackfee's rate (0 when disabled)."""
    target, conservative = wallet_estimate_request(options.get("confTarget", options.get("conf_target")),
                                                   options.get("estimate_mode"), replaceable)
    return smart_fee_rate(ctx, target, conservative) or ctx.node.fallback_fee.fee_rate(0) or 0


def psbtbumpfee(ctx: Any, args: list[Any]) -> Any:
    psbt, bump = _bump(ctx, args)
    return {"psbt": encode_base64_psbt(psbt), "origfee": Amount(bump.old_fee), "fee": Amount(bump.new_fee),
            "errors": []}


def _bump(ctx: Any, args: list[Any]) -> tuple[PSBT, feebump.Bump]:
    """Core's bumpfee_helper up to signing: the replacement's PSBT, filled by the wallet."""
    txid_v, options_v = args
    with _Locked(ctx) as wallet:
        txid = parse_hash_v(txid_v, "txid")
        options = {} if options_v is None else dict(get_obj(options_v))
        check_object(options, _OPTION_TYPES, allow_null=True, strict=True)
        request = _request(ctx, txid, options)
        psbt_version = _psbt_version(options.get("psbt_version"))
        chain = chain_of(ctx)
        _, find_coin = chain_lookups(chain)
        change_type: list[str] = []

        def new_change(recipients: list[TxOut]) -> tuple[bytes, int, str]:
            """Core's ReserveDestination for the change: the next internal address (kept on success)."""
            kind = _default_change_type(wallet, Transaction(2, [], recipients, 0))
            info = wallet.active_descriptor(kind, True)
            if info is None:
                return b"", funding.DUMMY_NESTED_P2WPKH_INPUT_SIZE, f"Error: No {kind} addresses available."
            change_type.append(kind)
            script = info.desc.script(info.next_index)
            try:
                return script, funding.input_vsize(info.desc.node), ""
            except funding.FundingError:
                return script, funding.DUMMY_NESTED_P2WPKH_INPUT_SIZE, ""

        request.new_change = new_change
        # Core's m_min_depth = 1 for the inputs a bump may add
        request.available = lambda tx: _available_coins(ctx, wallet, tx, 1, coins.MAX_DEPTH, False)
        request.bump_fees = BumpFees(chain.mempool())
        height, tip_hash = wallet.tip()
        header = None if tip_hash is None else chain.header_info(tip_hash)
        tip_time = None if header is None else header.time
        with chain.lock:  # re-entrant: the wallet's lock already holds it
            try:
                bump = feebump.create_bump(wallet, request, find_coin, _mempool_children(chain), (height, tip_time))
            except feebump.BumpError as e:
                raise RPCError(_CODES[e.kind], e.message) from None
        if bump.new_change and change_type:
            # Core keeps the reserved change address; its second try (avoid_partial_spends)
            # reserves one more when the first made no change.
            wallet.new_destination(change_type[0], True)
            if not any(wallet.is_mine(o.script_pubkey) and wallet.is_change(o.script_pubkey) for o in bump.tx.vout):
                wallet.new_destination(change_type[0], True)
        psbt = psbt_from_tx(bump.tx, psbt_version)
        fill_psbt(wallet, psbt, None, True, True)
    return psbt, bump


def _mempool_children(chain: Any) -> Any:
    def children(txid: bytes) -> list[bytes]:
        pool = chain.mempool()
        return list(pool.children(txid)) if txid in pool else []
    return children


_PARAMS = [Param("txid", STR_HEX, required=True), Param("options", OBJ)]

METHODS = [
    Method("bumpfee", "wallet", bumpfee, _PARAMS, wallet=True),
    Method("psbtbumpfee", "wallet", psbtbumpfee, _PARAMS, wallet=True),
]
