"""signrawtransactionwithwallet (Core's wallet/rpc/spend.cpp): Core's SignTransaction with
what the wallet's descriptors know of each spent script (redeem and witness scripts, public
keys). Quill's wallets hold no private keys and Core's external-signer wallets do not sign
here either (their signer signs PSBTs only), so nothing is signed: the answer is Core's,
the transaction with the scripts the wallet can fill in, `complete` and each input's error."""
from __future__ import annotations

from typing import Any

from quill.handlers.prevtxs import parse_prevtxs
from quill.handlers.wallet import _Locked
from quill.rpc.args import parse_sighash_type
from quill.rpc.errors import RPC_DESERIALIZATION_ERROR, RPCError
from quill.rpc.registry import ARR, STR, STR_HEX, Method, Param
from quill.signing.coins import find_coins
from quill.signing.keystore import KeyStore
from quill.signing.pipeline import sign_transaction
from quill.tx.decode import TxDecodeError, decode_hex_tx
from quill.wallet.expand import descriptor_provider


def signrawtransactionwithwallet(ctx: Any, args: list[Any]) -> Any:
    hexstring, prevtxs, sighashtype = args
    with _Locked(ctx) as wallet:
        try:
            tx = decode_hex_tx(hexstring, try_no_witness=False)
        except TxDecodeError:
            raise RPCError(RPC_DESERIALIZATION_ERROR,
                           "TX decode failed. Make sure the tx has at least one input.") from None
        coins = find_coins(ctx.node, [txin.prevout for txin in tx.vin])
        parse_prevtxs(prevtxs, KeyStore(), coins)  # Core's ParsePrevouts(..., nullptr, ...): no scripts kept
        hash_type = parse_sighash_type(sighashtype)
        if not wallet.descs:  # Core signs through each descriptor: none, no attempt and no errors
            return {"hex": tx.hex(), "complete": False}
        owners = [(wallet.descs[desc_id].desc.node, index) for coin in coins.values() if coin is not None
                  for desc_id, index in wallet.scripts.get(coin.script_pubkey, [])]
        return sign_transaction(ctx.node, tx, descriptor_provider(owners, False), coins, hash_type)


METHODS = [
    Method("signrawtransactionwithwallet", "wallet", signrawtransactionwithwallet, [
        Param("hexstring", STR_HEX, required=True), Param("prevtxs", ARR), Param("sighashtype", STR)],
        wallet=True),
]
