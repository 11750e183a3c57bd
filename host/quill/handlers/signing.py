"""signrawtransactionwithkey: Core's RPC (core-rpc.md §4), the signatures made by
the signing device (quill.signing).

The parameters are checked in Core's order: the transaction, the keys, the chain's coins,
prevtxs (which may correct them), then the sighash type.
"""
from quill.rpc.args import parse_sighash_type
from quill.rpc.errors import RPC_DESERIALIZATION_ERROR, RPCError
from quill.rpc.registry import ARR, DEVICE, STR, STR_HEX, Method, Param
from quill.signing.coins import find_coins
from quill.signing.pipeline import sign_transaction
from quill.tx.decode import TxDecodeError, decode_hex_tx

from .prevtxs import parse_prevtxs, parse_privkeys


def signrawtransactionwithkey(ctx, args):
    hexstring, privkeys, prevtxs, sighashtype = args
    try:
        tx = decode_hex_tx(hexstring, try_no_witness=False)
    except TxDecodeError:
        raise RPCError(RPC_DESERIALIZATION_ERROR,
                       "TX decode failed. Make sure the tx has at least one input.") from None
    keystore = parse_privkeys(privkeys, ctx.node.chain_name)
    coins = find_coins(ctx.node, [txin.prevout for txin in tx.vin])
    parse_prevtxs(prevtxs, keystore, coins)
    hash_type = parse_sighash_type(sighashtype)
    return sign_transaction(ctx.node, tx, keystore, coins, hash_type)


METHODS = [
    Method(
        "signrawtransactionwithkey", "rawtransactions", signrawtransactionwithkey,
        params=[
            Param("hexstring", STR_HEX, required=True),
            Param("privkeys", ARR, required=True),
            Param("prevtxs", ARR, required=False),
            Param("sighashtype", STR, required=False),
        ],
        lane=DEVICE,
    ),
]
