"""Taproot signature hash, BIP341 "Common signature message" with the BIP342
script-path extension (Core's SignatureHashSchnorr).

sighash = hash_TapSighash(0x00 || SigMsg(hash_type, ext_flag) || ext), the
message fields in BIP341 order:
  hash_type (1)
  nVersion (4), nLockTime (4)
  unless ANYONECANPAY: sha_prevouts, sha_amounts, sha_scriptpubkeys, sha_sequences
  unless NONE or SINGLE: sha_outputs
  spend_type (1) = ext_flag * 2 + annex_present
  with ANYONECANPAY: outpoint (36), amount (8), scriptPubKey (compact size + script),
                     nSequence (4) of the signed input
  otherwise:         input_index (4)
  with an annex:     sha_annex = SHA256(compact_size(len(annex)) || annex)
  with SINGLE:       sha_single_output = SHA256(output[input_index] as CTxOut)
  script path (ext_flag 1, BIP342): tapleaf_hash (32), key_version (1),
                     codesep_pos (4, 0xffffffff when no OP_CODESEPARATOR ran)
Valid hash types: 0x00 (SIGHASH_DEFAULT), 0x01-0x03, 0x81-0x83; any other is
refused, as is SINGLE without an output at input_index (both make Core's
signature check fail).

API:
    d = TxDigests(..., spent_outputs=True) fed with every input (with its spent
        amount and scriptPubKey) and output (quillfw.sighash.txdigests)
    sig_msg(d, input_index, hash_type, spent=None, annex=None,
            single_output=None, leaf_hash=None, key_version=0,
            codesep_pos=0xFFFFFFFF) -> bytes   the hashed message, epoch included
    sighash(... same arguments ...) -> 32 bytes  hash_TapSighash of it
        spent: (txid, vout, nSequence, amount, script_pubkey) of the signed
               input; required with ANYONECANPAY, ignored otherwise
        annex: bytes starting with 0x50 (the annex as in the witness), or None
        single_output: (amount, script_pubkey) of output[input_index] for SINGLE
        leaf_hash: 32-byte tapleaf hash for a script-path spend, None for key path
    sighash_tx(nVersion, inputs, outputs, nLockTime, spent_outputs, input_index,
               hash_type, annex=None, leaf_hash=None, key_version=0,
               codesep_pos=0xFFFFFFFF) -> 32 bytes   whole-transaction form:
        inputs [(txid, vout, nSequence)], outputs [(amount, script_pubkey)],
        spent_outputs [(amount, script_pubkey)] one per input
The message streams into one SHA-256 object; sig_msg only collects the same
bytes for inspection.
"""
import hashlib

from quillfw.consensus import SIGHASH_ANYONECANPAY, SIGHASH_NONE, SIGHASH_SINGLE
from quillfw.crypto.hashes import sha256, tagged_hasher
from quillfw.sighash.txdigests import TxDigests
from quillfw.sighash.txstream import compact_size, hash_txout, i64le, outpoint, u32le

VALID_HASH_TYPES = (0x00, 0x01, 0x02, 0x03, 0x81, 0x82, 0x83)
ANNEX_TAG = 0x50


class _Collector:
    def __init__(self):
        self.data = bytearray()

    def update(self, b):
        self.data.extend(b)


def _write_sig_msg(w, d, input_index, hash_type, spent, annex, single_output,
                   leaf_hash, key_version, codesep_pos):
    d.check_finished()
    if d.sha_amounts is None:
        raise ValueError("taproot needs every spent output's amount and scriptPubKey")
    if hash_type not in VALID_HASH_TYPES:
        raise ValueError("invalid taproot hash type")
    if not 0 <= input_index < d.n_inputs:
        raise ValueError("input index out of range")
    output_type = hash_type & 3          # SIGHASH_DEFAULT signs like ALL
    anyonecanpay = hash_type & SIGHASH_ANYONECANPAY
    if output_type == SIGHASH_SINGLE and input_index >= d.n_outputs:
        raise ValueError("SIGHASH_SINGLE without a matching output")
    if annex is not None and (len(annex) == 0 or annex[0] != ANNEX_TAG):
        raise ValueError("an annex starts with 0x50")
    ext_flag = 0 if leaf_hash is None else 1

    w.update(b"\x00")                    # epoch
    w.update(bytes((hash_type,)))
    w.update(u32le(d.nVersion))
    w.update(u32le(d.nLockTime))
    if not anyonecanpay:
        w.update(d.sha_prevouts)
        w.update(d.sha_amounts)
        w.update(d.sha_scriptpubkeys)
        w.update(d.sha_sequences)
    if output_type != SIGHASH_NONE and output_type != SIGHASH_SINGLE:
        w.update(d.sha_outputs)
    spend_type = ext_flag * 2 + (0 if annex is None else 1)
    w.update(bytes((spend_type,)))
    if anyonecanpay:
        if spent is None:
            raise ValueError("ANYONECANPAY needs the signed input and its spent output")
        txid, vout, nSequence, amount, script_pubkey = spent
        w.update(outpoint(txid, vout))
        w.update(i64le(amount))
        w.update(compact_size(len(script_pubkey)))
        w.update(script_pubkey)
        w.update(u32le(nSequence))
    else:
        w.update(u32le(input_index))
    if annex is not None:
        w.update(sha256(compact_size(len(annex)) + bytes(annex)))   # sha_annex
    if output_type == SIGHASH_SINGLE:
        if single_output is None:
            raise ValueError("SIGHASH_SINGLE needs the output at the input's index")
        single = hashlib.sha256()
        hash_txout(single, single_output[0], single_output[1])
        w.update(single.digest())                                     # sha_single_output
    if ext_flag:
        if len(leaf_hash) != 32:
            raise ValueError("tapleaf hash must be 32 bytes")
        w.update(leaf_hash)                                           # tapleaf_hash
        w.update(bytes((key_version,)))                               # key_version
        w.update(u32le(codesep_pos))                                  # codesep_pos


def sig_msg(d, input_index, hash_type, spent=None, annex=None, single_output=None,
            leaf_hash=None, key_version=0, codesep_pos=0xFFFFFFFF):
    w = _Collector()
    _write_sig_msg(w, d, input_index, hash_type, spent, annex, single_output,
                   leaf_hash, key_version, codesep_pos)
    return bytes(w.data)


def sighash(d, input_index, hash_type, spent=None, annex=None, single_output=None,
            leaf_hash=None, key_version=0, codesep_pos=0xFFFFFFFF):
    h = tagged_hasher("TapSighash")
    _write_sig_msg(h, d, input_index, hash_type, spent, annex, single_output,
                   leaf_hash, key_version, codesep_pos)
    return h.digest()


def sighash_tx(nVersion, inputs, outputs, nLockTime, spent_outputs, input_index, hash_type,
               annex=None, leaf_hash=None, key_version=0, codesep_pos=0xFFFFFFFF):
    d = TxDigests.from_tx(nVersion, inputs, outputs, nLockTime, spent_outputs)
    if not 0 <= input_index < len(inputs):
        raise ValueError("input index out of range")
    txid, vout, nSequence = inputs[input_index]
    amount, script_pubkey = spent_outputs[input_index]
    single = outputs[input_index] if input_index < len(outputs) else None
    return sighash(d, input_index, hash_type, (txid, vout, nSequence, amount, script_pubkey),
                   annex, single, leaf_hash, key_version, codesep_pos)
