"""Core-exact JSON for transactions and scripts (core_io.cpp: DecodeHexTx, TxToUniv, ScriptToUniv).

Renderers are plain functions returning dicts whose insertion order is Core's
key order; amounts are quill.amount.Amount. They are shared by
decoderawtransaction, decodescript and (later) gettransaction's `decoded`,
getrawtransaction and getblock.
"""
from typing import Sequence

from quill.amount import Amount

from . import script as S
from .address import encode_destination, pkh_address, script_hash_address
from .descriptor import infer_descriptor, known_witness_script
from .hashes import hash160, hash_to_hex, sha256d
from .serialize import DeserializationError
from .transaction import Transaction, TxIn, TxOut


class TxDecodeError(DeserializationError):
    """DecodeHexTx failed: not hex, or no accepted decoding consumed all bytes."""


# -- DecodeHexTx (core-rpc.md §2.2) ---------------------------------------------------


def parse_hex(hexstr: str):
    """Core's IsHex + ParseHex: bytes, or None unless non-empty, even-length, all hex digits."""
    if not hexstr or len(hexstr) & 1:
        return None
    try:
        data = bytes.fromhex(hexstr)
    except ValueError:
        return None
    # bytes.fromhex skips whitespace between bytes; IsHex does not.
    return data if len(data) * 2 == len(hexstr) else None


def check_tx_scripts_sanity(tx: Transaction) -> bool:
    """Core's CheckTxScriptsSanity: scripts parse, use opcodes <= OP_NOP10, pushes <= 520, size <= 10000."""
    # typed views of the vectors: compiled, the scripts are read as native fields
    vin: Sequence[TxIn] = tx.vin
    vout: Sequence[TxOut] = tx.vout
    if not tx.is_coinbase():
        for txin in vin:
            s = txin.script_sig
            if len(s) > S.MAX_SCRIPT_SIZE or not S.has_valid_ops(s):
                return False
    for txout in vout:
        s = txout.script_pubkey
        if len(s) > S.MAX_SCRIPT_SIZE or not S.has_valid_ops(s):
            return False
    return True


def _attempt(data, allow_witness):
    try:
        return Transaction.from_bytes(data, allow_witness)
    except DeserializationError:
        return None


def decode_tx(data: bytes, try_no_witness: bool = True, try_witness: bool = True) -> Transaction:
    """Core's DecodeTx: choose between the extended and the legacy reading of `data`."""
    extended = _attempt(data, True) if try_witness else None
    if extended is not None and check_tx_scripts_sanity(extended):
        return extended
    legacy = _attempt(data, False) if try_no_witness else None
    if legacy is not None and check_tx_scripts_sanity(legacy):
        return legacy
    if extended is not None:
        return extended
    if legacy is not None:
        return legacy
    raise TxDecodeError("TX decode failed")


def decode_hex_tx(hexstr: str, try_no_witness: bool = True, try_witness: bool = True) -> Transaction:
    """Core's DecodeHexTx; raises TxDecodeError."""
    data = parse_hex(hexstr)
    if data is None:
        raise TxDecodeError("TX decode failed")
    return decode_tx(data, try_no_witness, try_witness)


# -- ScriptToUniv / TxToUniv -------------------------------------------------------------


def _deprecated_addresses(kind, solutions, address, chain):
    """`addresses`, `reqSigs` as Core v22 appended them under -deprecatedrpc=addresses, or None."""
    if kind == S.MULTISIG:
        return [pkh_address(k, chain) for k in solutions[1:-1]], solutions[0][0]
    if kind in (S.NONSTANDARD, S.NULL_DATA, S.PUBKEY) or address is None:
        return None
    return [address], 1


# ScriptToAsmStr of the templates the solver recognises byte for byte, around their one push (a
# hash or a witness program, longer than 4 bytes: printed in hex).
_ASM_TEMPLATES = {
    S.WITNESS_V0_KEYHASH: "0 %s",
    S.WITNESS_V0_SCRIPTHASH: "0 %s",
    S.WITNESS_V1_TAPROOT: "1 %s",
    S.PUBKEYHASH: "OP_DUP OP_HASH160 %s OP_EQUALVERIFY OP_CHECKSIG",
    S.SCRIPTHASH: "OP_HASH160 %s OP_EQUAL",
}


def script_to_univ(script: bytes, chain, include_hex: bool = True, include_address: bool = True,
                   deprecated_addresses: bool = False, known_scripts=None) -> dict:
    """Core's ScriptToUniv: asm, desc, hex, address, type (each as the flags allow)."""
    solved = S.solver(script)
    kind, solutions = solved
    # ExtractDestination; the RPC never prints an address for P2PK.
    address = encode_destination(script, chain, solved) if kind != S.PUBKEY else None
    template = _ASM_TEMPLATES.get(kind)
    out = {"asm": template % solutions[0].hex() if template is not None else S.script_to_asm(script)}
    if include_address:
        out["desc"] = infer_descriptor(script, chain, known_scripts, solved, address)
    if include_hex:
        out["hex"] = script.hex()
    if include_address and address is not None:
        out["address"] = address
    out["type"] = kind
    if deprecated_addresses:
        extra = _deprecated_addresses(kind, solutions, address, chain)
        if extra is not None:
            out["addresses"], out["reqSigs"] = extra
    return out


def tx_to_univ(tx: Transaction, chain, include_hex: bool = False, block_hash: bytes | None = None,
               is_change=None, deprecated_addresses: bool = False) -> dict:
    """Core's TxToUniv (verbosity SHOW_DETAILS, no undo data).

    `block_hash` (internal order) adds `blockhash`; `is_change(txout)` adds
    `"ischange": true` to the outputs it accepts (gettransaction's decoded).
    """
    wit, nowit = tx.serialized_forms()
    weight = len(nowit) * 3 + len(wit)
    # the hashes of the forms in hand (txid() and wtxid() would each check the forms again, input by input)
    txid = sha256d(nowit)
    entry = {
        "txid": hash_to_hex(txid),
        "hash": hash_to_hex(txid if wit is nowit else sha256d(wit)),
        "version": tx.version,
        "size": len(wit),
        "vsize": (weight + 3) // 4,
        "weight": weight,
        "locktime": tx.locktime,
    }
    coinbase = tx.is_coinbase()
    tx_vin: Sequence[TxIn] = tx.vin  # typed views: compiled, native field reads
    tx_vout: Sequence[TxOut] = tx.vout
    vin = []
    item: dict[str, object]
    for txin in tx_vin:
        if coinbase:
            item = {"coinbase": txin.script_sig.hex()}
        else:
            s = txin.script_sig
            item = {"txid": txin.prevout.hash[::-1].hex(), "vout": txin.prevout.n,
                    "scriptSig": {"asm": S.script_to_asm(s, True), "hex": s.hex()}}
        if txin.witness:
            item["txinwitness"] = [w.hex() for w in txin.witness]
        item["sequence"] = txin.sequence
        vin.append(item)
    entry["vin"] = vin
    vout = []
    for n, txout in enumerate(tx_vout):
        item = {"value": Amount(txout.value), "n": n,
                "scriptPubKey": script_to_univ(txout.script_pubkey, chain,
                                               deprecated_addresses=deprecated_addresses)}
        if is_change is not None and is_change(txout):
            item["ischange"] = True
        vout.append(item)
    entry["vout"] = vout
    if block_hash is not None:
        entry["blockhash"] = hash_to_hex(block_hash)
    if include_hex:
        entry["hex"] = wit.hex()
    return entry


# -- decodescript ------------------------------------------------------------------------

_NOT_WRAPPABLE = (S.NULL_DATA, S.SCRIPTHASH, S.WITNESS_UNKNOWN, S.WITNESS_V1_TAPROOT, S.ANCHOR)


def _can_wrap(script, kind):
    if kind in _NOT_WRAPPABLE:
        return False
    if len(script) > S.MAX_SCRIPT_SIZE or not S.has_valid_ops(script):
        return False
    return not S.has_op_success_or_checksigadd(script)


def _can_wrap_p2wsh(kind, solutions):
    if kind in (S.MULTISIG, S.PUBKEY):
        # Uncompressed keys cannot be used with segwit checksigs.
        return all(len(s) == 1 or len(s) == 33 for s in solutions)
    return kind in (S.NONSTANDARD, S.PUBKEYHASH)


def decode_script_univ(script: bytes, chain, deprecated_addresses: bool = False) -> dict:
    """The decodescript result (rpc/rawtransaction.cpp): ScriptToUniv plus p2sh and segwit wrappers."""
    r = script_to_univ(script, chain, include_hex=False,
                       deprecated_addresses=deprecated_addresses)
    kind, solutions = S.solver(script)
    if not _can_wrap(script, kind):
        return r
    r["p2sh"] = script_hash_address(script, chain)
    if not _can_wrap_p2wsh(kind, solutions):
        return r
    known = None
    if kind == S.PUBKEY:
        segwit = S.p2wpkh(hash160(solutions[0]))
    elif kind == S.PUBKEYHASH:
        segwit = S.p2wpkh(solutions[0])
    else:
        # Scripts not fit for P2WPKH are wrapped in P2WSH, with the script known to the inference.
        segwit = S.p2wsh_of(script)
        known = known_witness_script(script)
    sr = script_to_univ(segwit, chain, include_hex=True, known_scripts=known,
                        deprecated_addresses=deprecated_addresses)
    sr["p2sh-segwit"] = script_hash_address(segwit, chain)
    r["segwit"] = sr
    return r
