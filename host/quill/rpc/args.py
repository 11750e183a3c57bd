"""Core's RPC argument helpers, in one place (Core's rpc/util.cpp, univalue's getters, core_read.cpp).

Every handler reads its parameters through these, so every method answers a wrong argument with
Core's code and text (v25+). The dispatcher has already checked each top-level parameter's JSON
type against its declared type (RPCHelpMan::HandleRequest); these helpers check what that cannot:
nested fields, ANY/AMOUNT/RANGE parameters, integer ranges, hex and hash contents.
"""
from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation
from typing import Any

from coincurve import PublicKey

from quill.consensus import COIN, MAX_MONEY
from quill.rpc.errors import (
    RPC_INVALID_ADDRESS_OR_KEY,
    RPC_INVALID_PARAMETER,
    RPC_MISC_ERROR,
    RPC_TYPE_ERROR,
    RPC_WALLET_INVALID_LABEL_NAME,
    RPCError,
)
from quill.rpc.univalue import Number, type_name
from quill.tx.decode import parse_hex

INT32 = (-2 ** 31, 2 ** 31 - 1)
INT64 = (-2 ** 63, 2 ** 63 - 1)
UINT32 = (0, 2 ** 32 - 1)
UINT64 = (0, 2 ** 64 - 1)

_FIXED_POINT = re.compile(r"-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?")

# Core's ParseSighashString: exact, case-sensitive names.
SIGHASH_BY_NAME = {"DEFAULT": 0x00, "ALL": 0x01, "NONE": 0x02, "SINGLE": 0x03,
                   "ALL|ANYONECANPAY": 0x81, "NONE|ANYONECANPAY": 0x82,
                   "SINGLE|ANYONECANPAY": 0x83}


def json_type_error(value: Any, expected: str, field: str | None = None) -> RPCError:
    """UniValue's type error: 'JSON value of type string [for field x] is not of expected type number'."""
    where = f" for field {field}" if field else ""
    return RPCError(RPC_TYPE_ERROR, f"JSON value of type {type_name(value)}{where} is not of expected type {expected}")


def is_json_int(value: Any) -> bool:
    """A JSON number (an integer literal or not); bools are not numbers."""
    return isinstance(value, (Number, int)) and not isinstance(value, bool)


# -- UniValue getters --------------------------------------------------------------------


def get_int(value: Any, bounds: tuple[int, int] = INT32) -> int:
    """UniValue::getInt<T>: a JSON number written as an integer that fits T."""
    if not is_json_int(value):
        raise json_type_error(value, "number")
    if isinstance(value, Number):
        if not value.is_integer():
            raise RPCError(RPC_MISC_ERROR, "JSON integer out of range")
        value = int(value)
    if not bounds[0] <= value <= bounds[1]:
        raise RPCError(RPC_MISC_ERROR, "JSON integer out of range")
    return int(value)


def get_real(value: Any) -> float:
    """UniValue::get_real: a JSON number as a double; one no double holds is Core's range error."""
    if not is_json_int(value):
        raise json_type_error(value, "number")
    number = float(value.text if isinstance(value, Number) else value)
    if number in (float("inf"), float("-inf")):
        raise RPCError(RPC_MISC_ERROR, "JSON double out of range")
    return number


def get_bool(value: Any) -> bool:
    """UniValue::get_bool."""
    if not isinstance(value, bool):
        raise json_type_error(value, "bool")
    return value


def get_str(value: Any) -> str:
    """UniValue::get_str."""
    if not isinstance(value, str):
        raise json_type_error(value, "string")
    return value


def get_array(value: Any) -> list:
    """UniValue::get_array."""
    if not isinstance(value, list):
        raise json_type_error(value, "array")
    return value


def get_obj(value: Any) -> dict:
    """UniValue::get_obj."""
    if not isinstance(value, dict):
        raise json_type_error(value, "object")
    return value


def optional(value: Any, getter: Any, default: Any) -> Any:
    """`getter(value)`, or `default` when the argument is absent or null."""
    return default if value is None else getter(value)


def check_object(obj: dict, expected: dict[str, str | None], *, allow_null: bool = False,
                 strict: bool = False) -> None:
    """Core's RPCTypeCheckObj(o, typesExpected, fAllowNull, fStrict): the expected fields in
    byte-wise sorted order (a std::map), each present and not null ('Missing x') unless
    `allow_null`, each of its JSON type (None: any type); `strict` refuses any other key."""
    for name in sorted(expected, key=lambda n: n.encode()):
        value = obj.get(name)
        if value is None and not allow_null:
            raise RPCError(RPC_TYPE_ERROR, f"Missing {name}")
        wanted = expected[name]
        if value is not None and wanted is not None and type_name(value) != wanted:
            raise json_type_error(value, wanted, name)
    if strict:
        for name in obj:
            if name not in expected:
                raise RPCError(RPC_TYPE_ERROR, f"Unexpected key {name}")


# -- Core's rpc/util.cpp ----------------------------------------------------------------


def parse_hash_v(value: Any, name: str) -> bytes:
    """Core's ParseHashV: 64 hex digits (display order) -> the hash in internal byte order."""
    text = get_str(value)
    if len(text) != 64:
        raise RPCError(RPC_INVALID_PARAMETER, f"{name} must be of length 64 (not {len(text)}, for '{text}')")
    data = parse_hex(text)
    if data is None:
        raise RPCError(RPC_INVALID_PARAMETER, f"{name} must be hexadecimal string (not '{text}')")
    return data[::-1]


def parse_hex_v(value: Any, name: str) -> bytes:
    """Core's ParseHexV: non-empty hex digits of even length; a non-string reads as ""."""
    text = value if isinstance(value, str) else ""
    data = parse_hex(text)
    if data is None:
        raise RPCError(RPC_INVALID_PARAMETER, f"{name} must be hexadecimal string (not '{text}')")
    return data


def hex_to_pubkey(text: str) -> bytes:
    """Core's HexToPubKey: a valid compressed (33-byte) or uncompressed (65-byte) public key in hex."""
    data = parse_hex(text)
    if data is None:
        raise RPCError(RPC_INVALID_ADDRESS_OR_KEY, f'Pubkey "{text}" must be a hex string')
    if len(text) not in (66, 130):
        raise RPCError(RPC_INVALID_ADDRESS_OR_KEY, f'Pubkey "{text}" must have a length of either 33 or 65 bytes')
    try:
        PublicKey(data)
    except ValueError:
        raise RPCError(RPC_INVALID_ADDRESS_OR_KEY, f'Pubkey "{text}" must be cryptographically valid.') from None
    return data


def amount_from_value(value: Any, decimals: int = 8) -> int:
    """Core's AmountFromValue: a JSON number or string with at most `decimals` decimals, in satoshis."""
    if isinstance(value, bool) or not isinstance(value, (Number, int, str)):
        raise RPCError(RPC_TYPE_ERROR, "Amount is not a number or string")
    text = value.text if isinstance(value, Number) else str(value)
    if not _FIXED_POINT.fullmatch(text):
        raise RPCError(RPC_TYPE_ERROR, "Invalid amount")
    try:
        scaled = Decimal(text).scaleb(decimals)
    except InvalidOperation:
        raise RPCError(RPC_TYPE_ERROR, "Invalid amount") from None
    if scaled != scaled.to_integral_value() or abs(scaled) > 10 ** 18 - 1:
        raise RPCError(RPC_TYPE_ERROR, "Invalid amount")
    sats = int(scaled)
    if not 0 <= sats <= MAX_MONEY:
        raise RPCError(RPC_TYPE_ERROR, "Amount out of range")
    return sats


def fee_rate_from_value(value: Any) -> int:
    """Core's ParseFeeRate: a BTC/kvB amount -> sat/kvB, below 1 BTC/kvB."""
    rate = amount_from_value(value)
    if rate >= COIN:
        raise RPCError(RPC_INVALID_PARAMETER, "Fee rates larger than or equal to 1BTC/kvB are not accepted")
    return rate


def parse_verbosity(value: Any, default: int, allow_bool: bool = True) -> int:
    """Core's ParseVerbosity: an integer, or (where allowed) a bool meaning 0/1."""
    if value is None:
        return default
    if isinstance(value, bool):
        if not allow_bool:
            raise RPCError(RPC_TYPE_ERROR, "Verbosity was boolean but only integer allowed")
        return int(value)
    return get_int(value)


def parse_descriptor_range(value: Any) -> tuple[int, int]:
    """Core's ParseDescriptorRange: `end` or `[begin, end]`, inclusive."""
    if is_json_int(value):
        low, high = 0, get_int(value, INT64)
    elif isinstance(value, list) and len(value) == 2 and all(is_json_int(v) for v in value):
        low, high = get_int(value[0], INT64), get_int(value[1], INT64)
        if low > high:
            raise RPCError(RPC_INVALID_PARAMETER, "Range specified as [begin,end] must not have begin after end")
    else:
        raise RPCError(RPC_INVALID_PARAMETER, "Range must be specified as end or as [begin,end]")
    if low < 0:
        raise RPCError(RPC_INVALID_PARAMETER, "Range should be greater or equal than 0")
    if high >> 31:
        raise RPCError(RPC_INVALID_PARAMETER, "End of range is too high")
    if high >= low + 1000000:
        raise RPCError(RPC_INVALID_PARAMETER, "Range is too large")
    return low, high


def parse_sighash_type(value: Any) -> int:
    """Core's ParseSighashString: absent or null is SIGHASH_DEFAULT."""
    if value is None:
        return SIGHASH_BY_NAME["DEFAULT"]
    if not isinstance(value, str) or value not in SIGHASH_BY_NAME:
        shown = value if isinstance(value, str) else ""
        raise RPCError(RPC_INVALID_PARAMETER, f"'{shown}' is not a valid sighash parameter.")
    return SIGHASH_BY_NAME[value]


# -- wallet/rpc/util.cpp -----------------------------------------------------------------


def label_from_value(value: Any) -> str:
    """Core's LabelFromValue: null is the default label "", "*" is refused."""
    if value is None:
        return ""
    label = get_str(value)
    if label == "*":
        raise RPCError(RPC_WALLET_INVALID_LABEL_NAME, "Invalid label name")
    return label
