"""Raw transaction RPCs that need no chain state: decoderawtransaction and decodescript
(Core's rpc/rawtransaction.cpp; behaviour per core-rpc.md §2-§3)."""

from quill.rpc.errors import RPC_DESERIALIZATION_ERROR, RPC_INVALID_PARAMETER, RPCError
from quill.rpc.registry import BOOL, INLINE, STR_HEX, Method, Param
from quill.tx.decode import TxDecodeError, decode_hex_tx, decode_script_univ, parse_hex, tx_to_univ


def _deprecated_addresses(ctx) -> bool:
    return "addresses" in ctx.node.deprecated_rpc


def decoderawtransaction(ctx, args):
    hexstring, iswitness = args
    # iswitness absent: Core's heuristic tries both readings; true/false picks one.
    try_witness = iswitness is None or iswitness
    try_no_witness = iswitness is None or not iswitness
    try:
        tx = decode_hex_tx(hexstring, try_no_witness, try_witness)
    except TxDecodeError:
        raise RPCError(RPC_DESERIALIZATION_ERROR, "TX decode failed") from None
    return tx_to_univ(tx, ctx.node.chain_name, deprecated_addresses=_deprecated_addresses(ctx))


def decodescript(ctx, args):
    hexstring = args[0]
    if hexstring:
        script = parse_hex(hexstring)
        if script is None:
            raise RPCError(RPC_INVALID_PARAMETER,
                           f"argument must be hexadecimal string (not '{hexstring}')")
    else:
        script = b""  # an empty script is valid
    return decode_script_univ(script, ctx.node.chain_name,
                              deprecated_addresses=_deprecated_addresses(ctx))


METHODS = [
    Method(
        "decoderawtransaction", "rawtransactions", decoderawtransaction,
        params=[
            Param("hexstring", STR_HEX, required=True),
            Param("iswitness", BOOL, required=False),
        ],
        lane=INLINE,
        stateless=True,
        float_free=True,
    ),
    Method(
        "decodescript", "rawtransactions", decodescript,
        params=[Param("hexstring", STR_HEX, required=True)],
        lane=INLINE,
        stateless=True,
        float_free=True,
    ),
]
