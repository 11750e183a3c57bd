"""The signing RPCs' key and previous-output parameters, checked as Core checks them
(core-rpc.md §4.2-§4.5; Core's rpc/rawtransaction_util.cpp ParsePrevouts).

    parse_privkeys(privkeys, chain) -> KeyStore        -5 "Invalid private key"
    parse_prevtxs(prevtxs, keystore, coins)            fills coins {OutPoint: TxOut|None}

Error texts never contain a key: an invalid WIF is reported without its text.
"""
from __future__ import annotations

from typing import Any

from quill.consensus import MAX_MONEY
from quill.rpc.args import amount_from_value, check_object, get_int, get_str, json_type_error, parse_hash_v, parse_hex_v
from quill.rpc.errors import RPC_DESERIALIZATION_ERROR, RPC_INVALID_ADDRESS_OR_KEY, RPC_INVALID_PARAMETER, RPCError
from quill.signing.keystore import Key, KeyStore
from quill.tx import script as S
from quill.tx.address import decode_secret
from quill.tx.transaction import OutPoint, TxOut


def parse_privkeys(privkeys: list, chain: str) -> KeyStore:
    keystore = KeyStore()
    for value in privkeys:
        decoded = decode_secret(get_str(value), chain)
        if decoded is None:
            raise RPCError(RPC_INVALID_ADDRESS_OR_KEY, "Invalid private key")
        keystore.add_key(Key(*decoded))
    return keystore


def _optional_str(obj: dict, name: str) -> str | None:
    value = obj.get(name)
    if value is not None and not isinstance(value, str):
        raise json_type_error(value, "string", name)
    return value


def _is_p2wsh(script: bytes) -> bool:
    wp = S.witness_program(script)
    return wp is not None and wp[0] == 0 and len(wp[1]) == 32


def _add_scripts(entry: dict, script_pubkey: bytes, keystore: KeyStore) -> None:
    """The redeemScript / witnessScript rules of Core's ParsePrevouts."""
    rs = _optional_str(entry, "redeemScript")
    ws = _optional_str(entry, "witnessScript")
    if rs is None and ws is None:
        raise RPCError(RPC_INVALID_PARAMETER, "Missing redeemScript/witnessScript")
    script = parse_hex_v(ws, "witnessScript") if ws is not None else parse_hex_v(rs, "redeemScript")
    keystore.add_script(script)
    # The P2WSH wrapper too, so P2SH-P2WSH works with only the redeemScript given.
    wrapper = S.p2wsh_of(script)
    keystore.add_script(wrapper)
    if ws is not None and rs is not None and ws != rs:
        if parse_hex_v(rs, "redeemScript") != wrapper:
            raise RPCError(RPC_INVALID_PARAMETER, "redeemScript does not correspond to witnessScript")
    if S.is_pay_to_script_hash(script_pubkey):
        matches = script_pubkey in (S.p2sh_of(script), S.p2sh_of(wrapper))
    else:
        matches = script_pubkey == wrapper
    if not matches:
        raise RPCError(RPC_INVALID_PARAMETER, "redeemScript/witnessScript does not match scriptPubKey")


def parse_prevtxs(prevtxs: list | None, keystore: KeyStore, coins: dict[OutPoint, Any]) -> None:
    """Core's ParsePrevouts. coins maps every input's OutPoint to its TxOut (None:
    unknown or spent) and gains the entries given here."""
    for entry in prevtxs or ():
        if not isinstance(entry, dict):
            raise RPCError(RPC_DESERIALIZATION_ERROR,
                           'expected object with {"txid\'","vout","scriptPubKey"}')
        check_object(entry, {"txid": "string", "vout": "number", "scriptPubKey": "string"})
        txid = parse_hash_v(entry["txid"], "txid")
        vout = get_int(entry["vout"])
        if vout < 0:
            raise RPCError(RPC_DESERIALIZATION_ERROR, "vout cannot be negative")
        outpoint = OutPoint(txid, vout)
        script_pubkey = parse_hex_v(entry["scriptPubKey"], "scriptPubKey")
        known = coins.get(outpoint)
        if known is not None and known.script_pubkey != script_pubkey:
            raise RPCError(RPC_DESERIALIZATION_ERROR,
                           "Previous output scriptPubKey mismatch:\n"
                           f"{S.script_to_asm(known.script_pubkey)}\nvs:\n{S.script_to_asm(script_pubkey)}")
        # Without an amount Core stores MAX_MONEY, which later fails a segwit input with "Missing amount".
        value = amount_from_value(entry["amount"]) if "amount" in entry else MAX_MONEY
        coins[outpoint] = TxOut(value, script_pubkey)
        if S.is_pay_to_script_hash(script_pubkey) or _is_p2wsh(script_pubkey):
            _add_scripts(entry, script_pubkey, keystore)
