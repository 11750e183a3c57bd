"""Which command-line arguments quill-cli sends as JSON rather than strings:
bitcoin-cli's vRPCConvertParams (src/rpc/client.cpp) for the methods Quill
serves. Every argument not listed here is sent as a JSON string.
"""

from quill.rpc import univalue

# (method, position, name)
CONVERT_PARAMS = [
    ("echojson", 0, "arg0"), ("echojson", 1, "arg1"), ("echojson", 2, "arg2"), ("echojson", 3, "arg3"),
    ("echojson", 4, "arg4"), ("echojson", 5, "arg5"), ("echojson", 6, "arg6"), ("echojson", 7, "arg7"),
    ("echojson", 8, "arg8"), ("echojson", 9, "arg9"),
    ("decoderawtransaction", 1, "iswitness"),
    ("signrawtransactionwithkey", 1, "privkeys"),
    ("signrawtransactionwithkey", 2, "prevtxs"),
    ("generatetoaddress", 0, "nblocks"),
    ("generatetoaddress", 2, "maxtries"),
    ("generateblock", 1, "transactions"),
    ("generateblock", 2, "submit"),
    ("getblockhash", 0, "height"),
    ("getblock", 1, "verbosity"),
    ("getblock", 1, "verbose"),
    ("getblockheader", 1, "verbose"),
    ("getrawtransaction", 1, "verbosity"),
    ("getrawtransaction", 1, "verbose"),
    ("getrawmempool", 0, "verbose"),
    ("getrawmempool", 1, "mempool_sequence"),
    ("sendrawtransaction", 1, "maxfeerate"),
    ("sendrawtransaction", 2, "maxburnamount"),
    ("gettransaction", 1, "include_watchonly"),
    ("gettransaction", 2, "verbose"),
    ("listsinceblock", 1, "target_confirmations"),
    ("listsinceblock", 2, "include_watchonly"),
    ("listsinceblock", 3, "include_removed"),
    ("listsinceblock", 4, "include_change"),
    ("listtransactions", 1, "count"),
    ("listtransactions", 2, "skip"),
    ("listtransactions", 3, "include_watchonly"),
    ("createwallet", 1, "disable_private_keys"),
    ("createwallet", 2, "blank"),
    ("createwallet", 4, "avoid_reuse"),
    ("createwallet", 5, "descriptors"),
    ("createwallet", 6, "load_on_startup"),
    ("createwallet", 7, "external_signer"),
    ("loadwallet", 1, "load_on_startup"),
    ("unloadwallet", 1, "load_on_startup"),
    ("importdescriptors", 0, "requests"),
    ("listdescriptors", 0, "private"),
    ("deriveaddresses", 1, "range"),
    ("rescanblockchain", 0, "start_height"),
    ("rescanblockchain", 1, "stop_height"),
    ("getbalances", 0, "avoid_reuse"),
    ("setconfirmationpolicy", 1, "amount"),
    ("signercommand", 0, "args"),
]

_BY_POSITION = {(m, i) for m, i, _ in CONVERT_PARAMS}
_BY_NAME = {(m, n) for m, _, n in CONVERT_PARAMS}


class ConversionError(ValueError):
    pass


def _parse_json(text: str):
    try:
        return univalue.loads(text)
    except univalue.JSONParseError:
        raise ConversionError(f"Error parsing JSON: {text}") from None


def positional(method: str, args):
    return [_parse_json(a) if (method, i) in _BY_POSITION else a for i, a in enumerate(args)]


def named(method: str, args) -> dict:
    """`name=value` arguments; ones without `=` become the positional `args` list."""
    out: dict = {}
    extra: list = []
    for arg in args:
        name, sep, value = arg.partition("=")
        if not sep:
            extra.append(_parse_json(arg) if (method, len(extra)) in _BY_POSITION else arg)
            continue
        # A later value overwrites an earlier one, as bitcoin-cli does for scripts merging options.
        out[name] = _parse_json(value) if (method, name) in _BY_NAME else value
    if extra:
        out["args"] = extra
    return out
