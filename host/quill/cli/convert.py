"""Which command-line arguments quill-cli sends as JSON rather than strings:
bitcoin-cli's vRPCConvertParams (src/rpc/client.cpp) for the methods Quill
serves. Every argument not listed here is sent as a JSON string.

tests/rpc/test_cli_convert.py derives the same table from the real bitcoin-cli
(by what it sends for each of quilld's methods) and compares.
"""

from typing import Any

from quill.rpc import univalue

# method -> "position name, ..." for its positional parameters that are JSON.
# Two names at one position are a parameter and its alias, as in Core's table.
_POSITIONAL = {
    "bumpfee": "1 options",
    "combinepsbt": "0 txs",
    "converttopsbt": "1 permitsigdata, 2 iswitness, 3 psbt_version",
    "createpsbt": "0 inputs, 1 outputs, 2 locktime, 3 replaceable, 4 version, 5 psbt_version",
    "createrawtransaction": "0 inputs, 1 outputs, 2 locktime, 3 replaceable, 4 version",
    "createwallet": "1 disable_private_keys, 2 blank, 4 avoid_reuse, 5 descriptors, 6 load_on_startup, "
                    "7 external_signer",
    "decoderawtransaction": "1 iswitness",
    "deriveaddresses": "1 range",
    "descriptorprocesspsbt": "1 descriptors, 3 bip32derivs, 4 finalize",
    "echojson": "0 arg0, 1 arg1, 2 arg2, 3 arg3, 4 arg4, 5 arg5, 6 arg6, 7 arg7, 8 arg8, 9 arg9",
    "estimaterawfee": "0 conf_target, 1 threshold",
    "estimatesmartfee": "0 conf_target",
    "finalizepsbt": "1 extract",
    "fundrawtransaction": "1 options, 2 iswitness",
    "generateblock": "1 transactions, 2 submit",
    "generatetoaddress": "0 nblocks, 2 maxtries",
    "getbalance": "1 minconf, 2 include_watchonly, 3 avoid_reuse",
    "getblock": "1 verbosity, 1 verbose",
    "getblockhash": "0 height",
    "getblockheader": "1 verbose",
    "getblockstats": "0 hash_or_height, 1 stats",
    "getrawmempool": "0 verbose, 1 mempool_sequence",
    "getrawtransaction": "1 verbosity, 1 verbose",
    "getreceivedbyaddress": "1 minconf, 2 include_immature_coinbase",
    "getreceivedbylabel": "1 minconf, 2 include_immature_coinbase",
    "gettransaction": "1 include_watchonly, 2 verbose",
    "gettxout": "1 n, 2 include_mempool",
    "gettxoutsetinfo": "1 hash_or_height, 2 use_index",
    "gettxspendingprevout": "0 outputs, 1 options",
    "importdescriptors": "0 requests",
    "joinpsbts": "0 txs",
    "keypoolrefill": "0 newsize",
    "listdescriptors": "0 private",
    "listreceivedbyaddress": "0 minconf, 1 include_empty, 2 include_watchonly, 4 include_immature_coinbase",
    "listreceivedbylabel": "0 minconf, 1 include_empty, 2 include_watchonly, 3 include_immature_coinbase",
    "listsinceblock": "1 target_confirmations, 2 include_watchonly, 3 include_removed, 4 include_change",
    "listtransactions": "1 count, 2 skip, 3 include_watchonly",
    "listunspent": "0 minconf, 1 maxconf, 2 addresses, 3 include_unsafe, 4 query_options",
    "loadwallet": "1 load_on_startup",
    "lockunspent": "0 unlock, 1 transactions, 2 persistent",
    "psbtbumpfee": "1 options",
    "rescanblockchain": "0 start_height, 1 stop_height",
    "scantxoutset": "1 scanobjects",
    "send": "0 outputs, 1 conf_target, 3 fee_rate, 4 options, 5 version",
    "sendall": "0 recipients, 1 conf_target, 3 fee_rate, 4 options",
    "sendrawtransaction": "1 maxfeerate, 2 maxburnamount",
    "sendtoaddress": "1 amount, 4 subtractfeefromamount, 5 replaceable, 6 conf_target, 8 avoid_reuse, "
                     "9 fee_rate, 10 verbose",
    "setconfirmationpolicy": "1 amount",  # Quill's own method
    "signercommand": "0 args",  # Quill's own method
    "signrawtransactionwithkey": "1 privkeys, 2 prevtxs",
    "signrawtransactionwithwallet": "1 prevtxs",
    "stop": "0 wait",
    "testmempoolaccept": "0 rawtxs, 1 maxfeerate",
    "unloadwallet": "1 load_on_startup",
    "utxoupdatepsbt": "1 descriptors",
    "walletcreatefundedpsbt": "0 inputs, 1 outputs, 2 locktime, 3 options, 4 bip32derivs, 5 version, 6 psbt_version",
    "walletprocesspsbt": "1 sign, 3 bip32derivs, 4 finalize",
}

# method -> options that may also be given as top-level named arguments (Core's index -1 entries).
_NAMED_ONLY = {
    "bumpfee": "conf_target fee_rate original_change_index outputs replaceable",
    "fundrawtransaction": "add_inputs changePosition conf_target feeRate fee_rate includeWatching include_unsafe "
                          "input_weights lockUnspents max_tx_weight maxconf minconf replaceable solving_data "
                          "subtractFeeFromOutputs",
    "gettxspendingprevout": "mempool_only return_spending_tx",
    "listunspent": "include_immature_coinbase maximumAmount maximumCount minimumAmount minimumSumAmount",
    "psbtbumpfee": "conf_target fee_rate original_change_index outputs psbt_version replaceable",
    "send": "add_inputs add_to_wallet change_position include_unsafe include_watching inputs lock_unspents locktime "
            "max_tx_weight maxconf minconf psbt replaceable solving_data subtract_fee_from_outputs",
    "walletcreatefundedpsbt": "add_inputs changePosition conf_target feeRate fee_rate includeWatching include_unsafe "
                              "lockUnspents max_tx_weight maxconf minconf replaceable solving_data "
                              "subtractFeeFromOutputs",
    "sendall": "add_to_wallet include_watching inputs lock_unspents locktime maxconf minconf psbt replaceable "
               "send_max solving_data version",
}

# With -named, an argument `a=b` is taken as a positional value rather than the parameter `a` when it is
# not one of the method's parameter names and the next positional parameter is a string that may hold
# `=` (a base64 PSBT, a label, a wallet name). method -> its parameters in order, such strings marked `=`.
_POSITIONAL_WITH_EQUALS = {
    "analyzepsbt": "psbt=",
    "createwallet": "wallet_name= disable_private_keys blank passphrase= avoid_reuse descriptors load_on_startup "
                    "external_signer",
    "decodepsbt": "psbt=",
    "descriptorprocesspsbt": "psbt= descriptors sighashtype= bip32derivs finalize",
    "finalizepsbt": "psbt= extract",
    "getaddressesbylabel": "label=",
    "getnewaddress": "label= address_type=",
    "getreceivedbylabel": "label= minconf include_immature_coinbase",
    "listsinceblock": "blockhash= target_confirmations include_watchonly include_removed include_change label=",
    "listtransactions": "label= count skip include_watchonly",
    "loadwallet": "filename= load_on_startup",
    "sendtoaddress": "address= amount comment= comment_to= subtractfeefromamount replaceable conf_target "
                     "estimate_mode= avoid_reuse fee_rate verbose",
    "setlabel": "address label=",
    "unloadwallet": "wallet_name= load_on_startup",
    "utxoupdatepsbt": "psbt= descriptors",
    "walletprocesspsbt": "psbt= sign sighashtype= bip32derivs finalize",
}

# Parameters that take a block hash or a height: JSON when it parses, the string otherwise (Core's also_string).
_ALSO_STRING = {("getblockstats", "hash_or_height"), ("gettxoutsetinfo", "hash_or_height")}


def _entries() -> list[tuple[str, int, str]]:
    out = []
    for method, spec in _POSITIONAL.items():
        for item in spec.split(","):
            position, name = item.split()
            out.append((method, int(position), name))
    for method, names in _NAMED_ONLY.items():
        out += [(method, -1, name) for name in names.split()]
    return out


# (method, position, name); position -1: by name only
CONVERT_PARAMS = _entries()

_BY_POSITION = {(m, i): n for m, i, n in CONVERT_PARAMS if i >= 0}
_BY_NAME = {(m, n) for m, _, n in CONVERT_PARAMS}


def _parameters(spec: str) -> tuple[frozenset[str], frozenset[int]]:
    """(the parameter names, the positions of strings that may hold `=`) of one _POSITIONAL_WITH_EQUALS entry."""
    words = spec.split()
    return frozenset(w.rstrip("=") for w in words), frozenset(i for i, w in enumerate(words) if w.endswith("="))


_EQUALS_SLOTS = {method: _parameters(spec) for method, spec in _POSITIONAL_WITH_EQUALS.items()}


def _is_positional(method: str, name: str, position: int) -> bool:
    """Whether -named's `name=...` is the value of the next positional parameter (see _POSITIONAL_WITH_EQUALS)."""
    names, slots = _EQUALS_SLOTS.get(method, (frozenset(), frozenset()))
    return position in slots and name not in names


class ConversionError(ValueError):
    pass


def _parse_json(text: str) -> Any:
    try:
        return univalue.loads(text)
    except univalue.JSONParseError:
        raise ConversionError(f"Error parsing JSON: {text}") from None


def _convert(method: str, name: str, text: str) -> Any:
    if (method, name) in _ALSO_STRING:
        try:
            return univalue.loads(text)
        except univalue.JSONParseError:
            return text
    return _parse_json(text)


def _positional_value(method: str, position: int, text: str) -> Any:
    name = _BY_POSITION.get((method, position))
    return text if name is None else _convert(method, name, text)


def positional(method: str, args: list[str]) -> list[Any]:
    return [_positional_value(method, i, a) for i, a in enumerate(args)]


def named(method: str, args: list[str]) -> dict[str, Any]:
    """`name=value` arguments; the others (see _is_positional) become the positional `args` list."""
    out: dict[str, Any] = {}
    extra: list[Any] = []
    for arg in args:
        name, sep, value = arg.partition("=")
        if not sep or _is_positional(method, name, len(extra)):
            extra.append(_positional_value(method, len(extra), arg))
            continue
        # A later value overwrites an earlier one, as bitcoin-cli does for scripts merging options.
        out[name] = _convert(method, name, value) if (method, name) in _BY_NAME else value
    if extra:
        out["args"] = extra
    return out
