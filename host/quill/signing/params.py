"""signrawtransactionwithkey's parameters, checked as Core checks them
(core-rpc.md §4.2-§4.5; Core's rpc/rawtransaction.cpp and rawtransaction_util.cpp).

    parse_privkeys(privkeys, chain) -> KeyStore        -5 "Invalid private key"
    parse_prevtxs(prevtxs, keystore, coins)            fills coins {OutPoint: TxOut|None}
    parse_sighash_type(value) -> int                   -8 "'x' is not a valid sighash parameter."

Error texts never contain a key: an invalid WIF is reported without its text.
"""
from coincurve import PrivateKey

from quill.errors import (
    RPC_DESERIALIZATION_ERROR,
    RPC_INVALID_ADDRESS_OR_KEY,
    RPC_INVALID_PARAMETER,
    RPC_MISC_ERROR,
    RPC_TYPE_ERROR,
    RPCError,
)
from quill.handlers.rawtransactions_chain import amount_from_value
from quill.rpc.univalue import Number, type_name
from quill.tx.address import decode_secret
from quill.tx.decode import parse_hex
from quill.tx.hashes import hash160, hex_to_hash, sha256
from quill.tx.script import is_pay_to_script_hash, script_to_asm, witness_program
from quill.tx.transaction import OutPoint, TxOut

MAX_MONEY = 21_000_000 * 100_000_000

SIGHASH_DEFAULT = 0x00
SIGHASH_ALL = 0x01
SIGHASH_NONE = 0x02
SIGHASH_SINGLE = 0x03
SIGHASH_ANYONECANPAY = 0x80

# Core's ParseSighashString: exact, case-sensitive names.
SIGHASH_BY_NAME = {"DEFAULT": 0x00, "ALL": 0x01, "NONE": 0x02, "SINGLE": 0x03,
                   "ALL|ANYONECANPAY": 0x81, "NONE|ANYONECANPAY": 0x82,
                   "SINGLE|ANYONECANPAY": 0x83}


class Key:
    """One WIF key: the secret goes to the device only, the public key solves scripts."""
    __slots__ = ("secret", "compressed", "pubkey")

    def __init__(self, secret, compressed):
        self.secret = secret
        self.compressed = compressed
        self.pubkey = PrivateKey(secret).public_key.format(compressed)

    def __repr__(self):  # never the secret
        return f"Key(pubkey={self.pubkey.hex()})"


class KeyStore:
    """Core's FlatSigningProvider as signrawtransactionwithkey fills it (v28+):
    keys and public keys by hash160(pubkey), scripts by hash160(script)."""

    def __init__(self):
        self.keys = {}
        self.scripts = {}

    def add_key(self, key):
        self.keys.setdefault(hash160(key.pubkey), key)   # emplace: the first one stays

    def add_script(self, script):
        self.scripts.setdefault(hash160(script), script)

    def get_key(self, keyid):
        return self.keys.get(keyid)

    def get_pubkey(self, keyid):
        key = self.keys.get(keyid)
        return None if key is None else key.pubkey

    def get_script(self, scriptid):
        return self.scripts.get(scriptid)

    def get_key_by_xonly(self, xonly):
        """Core's GetKeyByXOnly: the key whose compressed public key is 02/03 || xonly."""
        for prefix in (b"\x02", b"\x03"):
            key = self.keys.get(hash160(prefix + xonly))
            if key is not None:
                return key
        return None


def _json_type_error(value, expected, field=None):
    where = f" for field {field}" if field else ""
    return RPCError(RPC_TYPE_ERROR,
                    f"JSON value of type {type_name(value)}{where} is not of expected type {expected}")


def parse_privkeys(privkeys, chain) -> KeyStore:
    keystore = KeyStore()
    for value in privkeys:
        if not isinstance(value, str):
            raise _json_type_error(value, "string")
        decoded = decode_secret(value, chain)
        if decoded is None:
            raise RPCError(RPC_INVALID_ADDRESS_OR_KEY, "Invalid private key")
        keystore.add_key(Key(*decoded))
    return keystore


def _check_fields(obj, fields):
    """Core's RPCTypeCheckObj: fields in byte-wise sorted order, none null or missing."""
    for name in sorted(fields, key=lambda n: n.encode()):
        expected = fields[name]
        if name not in obj or obj[name] is None:
            raise RPCError(RPC_TYPE_ERROR, f"Missing {name}")
        value = obj[name]
        ok = isinstance(value, str) if expected == "string" else (
            isinstance(value, (int, Number)) and not isinstance(value, bool))
        if not ok:
            raise _json_type_error(value, expected, name)


def _parse_hash(value, name):
    """Core's ParseHashV (the caller checked it is a string)."""
    if len(value) != 64:
        raise RPCError(RPC_INVALID_PARAMETER, f"{name} must be of length 64 (not {len(value)}, for '{value}')")
    if parse_hex(value) is None:
        raise RPCError(RPC_INVALID_PARAMETER, f"{name} must be hexadecimal string (not '{value}')")
    return hex_to_hash(value)


def _parse_hex(value, name):
    """Core's ParseHexV: a non-string reads as ""; empty or non-hex is refused."""
    data = parse_hex(value) if isinstance(value, str) else None
    if data is None:
        shown = value if isinstance(value, str) else ""
        raise RPCError(RPC_INVALID_PARAMETER, f"{name} must be hexadecimal string (not '{shown}')")
    return data


def _get_int32(value):
    """UniValue getInt<int>: an integer literal that fits in 32 signed bits."""
    text = value.text if isinstance(value, Number) else str(value)
    digits = text[1:] if text.startswith("-") else text
    if not digits.isdigit() or not -2**31 <= int(text) < 2**31:
        raise RPCError(RPC_MISC_ERROR, "JSON integer out of range")
    return int(text)


def p2wsh_script(script):
    return b"\x00\x20" + sha256(script)


def p2sh_script(script):
    return b"\xa9\x14" + hash160(script) + b"\x87"


def _is_p2wsh(script):
    wp = witness_program(script)
    return wp is not None and wp[0] == 0 and len(wp[1]) == 32


def _optional_str(obj, name):
    value = obj.get(name)
    if value is not None and not isinstance(value, str):
        raise _json_type_error(value, "string", name)
    return value


def _add_scripts(entry, script_pubkey, keystore):
    """The redeemScript / witnessScript rules of Core's ParsePrevouts."""
    is_p2sh = is_pay_to_script_hash(script_pubkey)
    rs = _optional_str(entry, "redeemScript")
    ws = _optional_str(entry, "witnessScript")
    if rs is None and ws is None:
        raise RPCError(RPC_INVALID_PARAMETER, "Missing redeemScript/witnessScript")
    script = _parse_hex(ws, "witnessScript") if ws is not None else _parse_hex(rs, "redeemScript")
    keystore.add_script(script)
    # The P2WSH wrapper too, so P2SH-P2WSH works with only the redeemScript given.
    wrapper = p2wsh_script(script)
    keystore.add_script(wrapper)
    if ws is not None and rs is not None and ws != rs:
        if _parse_hex(rs, "redeemScript") != wrapper:
            raise RPCError(RPC_INVALID_PARAMETER, "redeemScript does not correspond to witnessScript")
    if is_p2sh:
        matches = script_pubkey in (p2sh_script(script), p2sh_script(wrapper))
    else:
        matches = script_pubkey == wrapper
    if not matches:
        raise RPCError(RPC_INVALID_PARAMETER, "redeemScript/witnessScript does not match scriptPubKey")


def parse_prevtxs(prevtxs, keystore, coins):
    """Core's ParsePrevouts. coins maps every input's OutPoint to its TxOut (None:
    unknown or spent) and gains the entries given here."""
    for entry in prevtxs or ():
        if not isinstance(entry, dict):
            raise RPCError(RPC_DESERIALIZATION_ERROR,
                           'expected object with {"txid\'","vout","scriptPubKey"}')
        _check_fields(entry, {"txid": "string", "vout": "number", "scriptPubKey": "string"})
        txid = _parse_hash(entry["txid"], "txid")
        vout = _get_int32(entry["vout"])
        if vout < 0:
            raise RPCError(RPC_DESERIALIZATION_ERROR, "vout cannot be negative")
        outpoint = OutPoint(txid, vout)
        script_pubkey = _parse_hex(entry["scriptPubKey"], "scriptPubKey")
        known = coins.get(outpoint)
        if known is not None and known.script_pubkey != script_pubkey:
            raise RPCError(RPC_DESERIALIZATION_ERROR,
                           "Previous output scriptPubKey mismatch:\n"
                           f"{script_to_asm(known.script_pubkey)}\nvs:\n{script_to_asm(script_pubkey)}")
        value = amount_from_value(entry["amount"]) if "amount" in entry else MAX_MONEY
        coins[outpoint] = TxOut(value, script_pubkey)
        if is_pay_to_script_hash(script_pubkey) or _is_p2wsh(script_pubkey):
            _add_scripts(entry, script_pubkey, keystore)


def parse_sighash_type(value) -> int:
    if value is None:
        return SIGHASH_DEFAULT
    if value not in SIGHASH_BY_NAME:
        raise RPCError(RPC_INVALID_PARAMETER, f"'{value}' is not a valid sighash parameter.")
    return SIGHASH_BY_NAME[value]
