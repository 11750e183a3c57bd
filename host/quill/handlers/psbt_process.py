"""walletprocesspsbt (Core's wallet/rpc/spend.cpp) and descriptorprocesspsbt (Core's
rpc/rawtransaction.cpp): parameters in Core's order, the work in quill.wallet.psbt_process
(the watch-only wallet's FillPSBT) and quill.signing (ProcessPSBT; private keys given to
descriptorprocesspsbt sign on the device, as signrawtransactionwithkey's do)."""
from __future__ import annotations

import copy
from typing import Any

from quill.handlers.blockchain import chain_of
from quill.handlers.chainstate import cannot_derive, descriptor_object
from quill.handlers.external_signer import signer_of
from quill.handlers.psbt import chain_lookups, decode_psbt_arg
from quill.handlers.wallet import _Locked
from quill.rpc.args import get_array, get_bool, parse_sighash_type
from quill.rpc.registry import ARR, BOOL, DEVICE, STR, Method, Param
from quill.signing.provider import SigningProvider
from quill.signing.psbt_device import sign_psbt
from quill.signing.psbt_signer import extract_transaction, fill_utxos, is_signed
from quill.tx.psbt import PSBT, encode_base64_psbt
from quill.wallet.descriptors import DerivationError
from quill.wallet.expand import expand
from quill.wallet.external_signer import sign_externally
from quill.wallet.psbt_process import fill_previous_transactions, fill_psbt


def _flag(value: Any) -> bool:
    """Core's `isNull() ? true : get_bool()`."""
    return True if value is None else get_bool(value)


def _sighash(value: Any) -> int | None:
    """Core's ParseSighashString: null stays unset (each input's default then applies)."""
    return None if value is None else parse_sighash_type(value)


def _result(psbt: PSBT, complete: bool) -> dict[str, Any]:
    result: dict[str, Any] = {"psbt": encode_base64_psbt(psbt), "complete": complete}
    if complete:
        tx = extract_transaction(copy.deepcopy(psbt))
        if tx is not None:
            result["hex"] = tx.hex()
    return result


def walletprocesspsbt(ctx: Any, args: list[Any]) -> Any:
    text, sign_v, sighash_v, bip32derivs_v, finalize_v = args
    with _Locked(ctx) as wallet:
        psbt = decode_psbt_arg(text)
        sighash = _sighash(sighash_v)
        sign = _flag(sign_v)  # without a signer the watch-only wallet has no key to sign with
        bip32derivs = _flag(bip32derivs_v)
        finalize = _flag(finalize_v)
        external = sign and wallet.external_signer
        if external:
            # an external signer's FillPSBT(sign=true) hands the PSBT as it is to the signer
            fill_previous_transactions(wallet, psbt)
        else:
            complete = fill_psbt(wallet, psbt, sighash, bip32derivs, finalize)
    if external:  # outside the wallet's lock: the signer waits for its user
        psbt, complete = sign_externally(psbt, signer_of(ctx), finalize)
    return _result(psbt, complete)


def _provider(descriptors: Any, chain_name: str) -> SigningProvider:
    """Core's EvalDescriptorStringOrObject(expand_priv=true) for each descriptor."""
    provider = SigningProvider()
    for item in get_array(descriptors):
        desc, text, low, high = descriptor_object(item, chain_name)
        for index in range(low, high + 1):
            try:
                desc.script(index)
            except DerivationError:
                # Core quotes the descriptor as given; Quill never echoes private keys.
                raise cannot_derive(desc.to_string() if desc.has_private_keys() else text) from None
            expand(desc.node, index, provider, private=True)
    return provider


def descriptorprocesspsbt(ctx: Any, args: list[Any]) -> Any:
    text, descriptors, sighash_v, bip32derivs_v, finalize_v = args
    provider = _provider(descriptors, ctx.node.chain_name)
    sighash = _sighash(sighash_v)
    provider.hide_origin = not _flag(bip32derivs_v)
    finalize = _flag(finalize_v)
    psbt = decode_psbt_arg(text)
    chain = chain_of(ctx)
    find_tx, find_coin = chain_lookups(chain)
    with chain.lock:
        fill_utxos(psbt, find_tx, find_coin, provider)
    sign_psbt(ctx.node, psbt, provider, sighash, finalize)
    return _result(psbt, all(is_signed(txin) for txin in psbt.inputs))


_SIGHASH = Param("sighashtype", STR)
_TAIL = [Param("bip32derivs", BOOL), Param("finalize", BOOL)]

METHODS = [
    Method("walletprocesspsbt", "wallet", walletprocesspsbt,
           [Param("psbt", STR, required=True), Param("sign", BOOL), _SIGHASH, *_TAIL],
           wallet=True),
    # It may sign on the device: it waits in the device's queue as signrawtransactionwithkey does.
    Method("descriptorprocesspsbt", "rawtransactions", descriptorprocesspsbt,
           [Param("psbt", STR, required=True), Param("descriptors", ARR, required=True), _SIGHASH, *_TAIL], lane=DEVICE),
]
