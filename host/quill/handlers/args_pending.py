"""TEMPORARY: Core's argument helpers until the lead's quill.rpc.args lands on main.

Same names and behaviour as quill.rpc.args will have; each forwards to the one copy
that exists today. When rpc/args.py is on main, import from it and delete this file.
"""
from __future__ import annotations

import re
from typing import Any

from quill.errors import RPC_INVALID_PARAMETER, RPC_TYPE_ERROR, RPCError
from quill.handlers import blockchain, rawtransactions_chain, wallet
from quill.rpc import univalue

_HEX = re.compile("[0-9a-fA-F]*")
INT32 = (-2 ** 31, 2 ** 31 - 1)
UINT32 = (0, 2 ** 32 - 1)
INT64 = (-2 ** 63, 2 ** 63 - 1)


def get_int(value: Any, bounds: tuple[int, int] = INT32) -> int:
    return int(wallet.get_int(value, bounds))


def get_bool(value: Any) -> bool:
    return bool(wallet.get_bool(value))


def get_str(value: Any) -> str:
    return str(wallet.get_str(value))


def get_array(value: Any) -> list[Any]:
    if not isinstance(value, list):
        raise RPCError(RPC_TYPE_ERROR, f"JSON value of type {univalue.type_name(value)} is not of expected type array")
    return value


def get_obj(value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise RPCError(RPC_TYPE_ERROR, f"JSON value of type {univalue.type_name(value)} is not of expected type object")
    return value


def parse_hash_v(value: Any, name: str) -> bytes:
    return bytes(blockchain.parse_hash(get_str(value), name))


def parse_hex_v(value: Any, name: str) -> bytes:
    """Core's ParseHexV: a non-empty, even-length hex string (a non-string counts as '')."""
    text = value if isinstance(value, str) else ""
    if text and len(text) % 2 == 0 and _HEX.fullmatch(text):
        return bytes.fromhex(text)
    raise RPCError(RPC_INVALID_PARAMETER, f"{name} must be hexadecimal string (not '{text}')")


def amount_from_value(value: Any) -> int:
    return int(rawtransactions_chain.amount_from_value(value))
