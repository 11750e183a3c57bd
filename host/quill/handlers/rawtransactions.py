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


_SCRIPT_PUBKEY_RESULT = """\
      "scriptPubKey" : {               (json object)
        "asm" : "str",                 (string) Disassembly of the output script
        "desc" : "str",                (string) Inferred descriptor for the output
        "hex" : "hex",                 (string) The raw output script bytes, hex-encoded
        "address" : "str",             (string, optional) The Bitcoin address (only if a well-defined address exists)
        "type" : "str"                 (string) The type (one of: nonstandard, anchor, pubkey, pubkeyhash, scripthash, multisig, nulldata, witness_v0_scripthash, witness_v0_keyhash, witness_v1_taproot, witness_unknown)
      }"""

_DECODERAWTRANSACTION_RESULT = """\
{                             (json object)
  "txid" : "hex",             (string) The transaction id
  "hash" : "hex",             (string) The transaction hash (differs from txid for witness transactions)
  "size" : n,                 (numeric) The serialized transaction size
  "vsize" : n,                (numeric) The virtual transaction size (differs from size for witness transactions)
  "weight" : n,               (numeric) The transaction's weight (between vsize*4-3 and vsize*4)
  "version" : n,              (numeric) The version
  "locktime" : xxx,           (numeric) The lock time
  "vin" : [                   (json array)
    {                         (json object)
      "coinbase" : "hex",     (string, optional) The coinbase value (only if coinbase transaction)
      "txid" : "hex",         (string, optional) The transaction id (if not coinbase transaction)
      "vout" : n,             (numeric, optional) The output number (if not coinbase transaction)
      "scriptSig" : {         (json object, optional) The script (if not coinbase transaction)
        "asm" : "str",        (string) Disassembly of the signature script
        "hex" : "hex"         (string) The raw signature script bytes, hex-encoded
      },
      "txinwitness" : [       (json array, optional)
        "hex",                (string) hex-encoded witness data (if any)
        ...
      ],
      "sequence" : n          (numeric) The script sequence number
    },
    ...
  ],
  "vout" : [                  (json array)
    {                         (json object)
      "value" : n,            (numeric) The value in BTC
      "n" : n,                (numeric) index
""" + _SCRIPT_PUBKEY_RESULT + """
    },
    ...
  ]
}"""

_DECODESCRIPT_RESULT = """\
{                             (json object)
  "asm" : "str",              (string) Disassembly of the script
  "desc" : "str",             (string) Inferred descriptor for the script
  "address" : "str",          (string, optional) The Bitcoin address (only if a well-defined address exists)
  "type" : "str",             (string) The output type (e.g. nonstandard, anchor, pubkey, pubkeyhash, scripthash, multisig, nulldata, witness_v0_scripthash, witness_v0_keyhash, witness_v1_taproot, witness_unknown)
  "p2sh" : "str",             (string, optional) address of P2SH script wrapping this redeem script (not returned for types that should not be wrapped)
  "segwit" : {                (json object, optional) Result of a witness output script wrapping this redeem script (not returned for types that should not be wrapped)
    "asm" : "str",            (string) String representation of the script public key
    "hex" : "hex",            (string) Hex string of the script public key
    "type" : "str",           (string) The type of the output script (e.g. witness_v0_keyhash or witness_v0_scripthash)
    "address" : "str",        (string, optional) The Bitcoin address (only if a well-defined address exists)
    "desc" : "str",           (string) Inferred descriptor for the script
    "p2sh-segwit" : "str"     (string) address of the P2SH script wrapping this witness redeem script
  }
}"""

METHODS = [
    Method(
        "decoderawtransaction", "rawtransactions", decoderawtransaction,
        params=[
            Param("hexstring", STR_HEX, required=True, help="The transaction hex string"),
            Param("iswitness", BOOL, required=False,
                  help="(default=depends on heuristic tests) Whether the transaction hex is a "
                       "serialized witness transaction.\n"
                       "If iswitness is not present, heuristic tests will be used in decoding.\n"
                       "If true, only witness deserialization will be tried.\n"
                       "If false, only non-witness deserialization will be tried.\n"
                       "This boolean should reflect whether the transaction has inputs\n"
                       "(e.g. fully valid, or on-chain transactions), if known by the caller."),
        ],
        description="Return a JSON object representing the serialized, hex-encoded transaction.",
        result=_DECODERAWTRANSACTION_RESULT,
        examples='> bitcoin-cli decoderawtransaction "hexstring"\n'
                 '> curl --user myusername --data-binary \'{"jsonrpc": "2.0", "id": "curltest", '
                 '"method": "decoderawtransaction", "params": ["hexstring"]}\' '
                 '-H \'content-type: application/json\' http://127.0.0.1:8332/',
        lane=INLINE,
    ),
    Method(
        "decodescript", "rawtransactions", decodescript,
        params=[Param("hexstring", STR_HEX, required=True, help="the hex-encoded script")],
        description="Decode a hex-encoded script.",
        result=_DECODESCRIPT_RESULT,
        examples='> bitcoin-cli decodescript "hexstring"\n'
                 '> curl --user myusername --data-binary \'{"jsonrpc": "2.0", "id": "curltest", '
                 '"method": "decodescript", "params": ["hexstring"]}\' '
                 '-H \'content-type: application/json\' http://127.0.0.1:8332/',
        lane=INLINE,
    ),
]
