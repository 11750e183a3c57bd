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


_RESULT = """\
{                             (json object)
  "hex" : "hex",              (string) The hex-encoded raw transaction with signature(s)
  "complete" : true|false,    (boolean) If the transaction has a complete set of signatures
  "errors" : [                (json array, optional) Script verification errors (if there are any)
    {                         (json object)
      "txid" : "hex",         (string) The hash of the referenced, previous transaction
      "vout" : n,             (numeric) The index of the output to spent and used as input
      "witness" : [           (json array)
        "hex",                (string)
        ...
      ],
      "scriptSig" : "hex",    (string) The hex-encoded signature script
      "sequence" : n,         (numeric) Script sequence number
      "error" : "str"         (string) Verification or signing error related to the input
    },
    ...
  ]
}"""

METHODS = [
    Method(
        "signrawtransactionwithkey", "rawtransactions", signrawtransactionwithkey,
        params=[
            Param("hexstring", STR_HEX, required=True, help="The transaction hex string"),
            Param("privkeys", ARR, required=True,
                  help="The base58-encoded private keys for signing",
                  placeholder='["privatekey",...]'),
            Param("prevtxs", ARR, required=False,
                  help="The previous dependent transaction outputs: "
                       '[{"txid":"hex","vout":n,"scriptPubKey":"hex","redeemScript":"hex",'
                       '"witnessScript":"hex","amount":amount},...]',
                  placeholder='[{"txid":"hex","vout":n,"scriptPubKey":"hex","redeemScript":"hex",'
                              '"witnessScript":"hex","amount":amount},...]'),
            Param("sighashtype", STR, required=False,
                  help='(default="DEFAULT for Taproot, ALL otherwise") The signature hash type. '
                       'Must be one of:\n"DEFAULT"\n"ALL"\n"NONE"\n"SINGLE"\n'
                       '"ALL|ANYONECANPAY"\n"NONE|ANYONECANPAY"\n"SINGLE|ANYONECANPAY"',
                  placeholder='"sighashtype"'),
        ],
        description="Sign inputs for raw transaction (serialized, hex-encoded).\n"
                    "The second argument is an array of base58-encoded private\n"
                    "keys that will be the only keys used to sign the transaction.\n"
                    "The third optional argument (may be null) is an array of previous "
                    "transaction outputs that\nthis transaction depends on but may not yet be "
                    "in the block chain.\n"
                    "Quill: the signatures are made by the signing device (-device); the keys "
                    "go to it for this call only.",
        result=_RESULT,
        examples='> bitcoin-cli signrawtransactionwithkey "myhex" "[\\"key1\\",\\"key2\\"]"\n'
                 '> curl --user myusername --data-binary \'{"jsonrpc": "2.0", "id": "curltest", '
                 '"method": "signrawtransactionwithkey", "params": ["myhex", "[\\"key1\\",\\"key2\\"]"]}\' '
                 '-H \'content-type: application/json\' http://127.0.0.1:8332/',
        lane=DEVICE,
    ),
]
