"""Segwit v0 signature hash, BIP143 (Core's SignatureHash for
SigVersion::WITNESS_V0).

Preimage, field by field (BIP143 "Specification"), then double SHA-256:
   1. nVersion      4 bytes LE
   2. hashPrevouts  SHA256d(all outpoints), or 32 zero bytes with ANYONECANPAY
   3. hashSequence  SHA256d(all nSequence), or zero with ANYONECANPAY, SINGLE or NONE
   4. outpoint      32-byte txid || 4-byte LE vout of the signed input
   5. scriptCode    compact-size length || script code, exactly as given
                    (the interpreter removes what precedes the last executed
                    OP_CODESEPARATOR; there is no FindAndDelete in v0)
   6. amount        8 bytes LE, the value of the spent output
   7. nSequence     4 bytes LE, of the signed input
   8. hashOutputs   SHA256d(all outputs) unless SINGLE or NONE; with SINGLE,
                    SHA256d(output[input_index]) if it exists, else 32 zero
                    bytes (not legacy's uint256 ONE quirk)
   9. nLockTime     4 bytes LE
  10. nHashType     4 bytes LE (the full 32-bit value; base type = & 0x1f)

API (digests in natural byte order, the 32 bytes ECDSA signs):
    d = TxDigests(...) fed with every input and output (quillfw.sighash.txdigests)
    preimage(d, input_index, txid, vout, nSequence, script_code, amount,
             nHashType, single_output=None) -> bytes
    sighash(... same arguments ...) -> 32 bytes = SHA256d(preimage)
        single_output: (amount, script_pubkey) of output[input_index], needed
        for SIGHASH_SINGLE when that output exists; ignored otherwise
    sighash_tx(nVersion, inputs, outputs, nLockTime, input_index, script_code,
               amount, nHashType) -> 32 bytes     whole-transaction form:
        inputs [(txid, vout, nSequence)], outputs [(amount, script_pubkey)]
"""
import hashlib

from quillfw.consensus import SIGHASH_ANYONECANPAY, SIGHASH_NONE, SIGHASH_SINGLE
from quillfw.crypto.hashes import sha256
from quillfw.sighash.txdigests import TxDigests
from quillfw.sighash.txstream import compact_size, hash_txout, i64le, outpoint, u32le

_ZERO32 = bytes(32)


def _fields(d, input_index, txid, vout, nSequence, script_code, amount, nHashType,
            single_output):
    """The preimage's fields in order (the script code as given: never copied)."""
    d.check_finished()
    if not 0 <= input_index < d.n_inputs:
        raise ValueError("input index out of range")
    base = nHashType & 0x1F
    anyonecanpay = nHashType & SIGHASH_ANYONECANPAY
    some_outputs = base == SIGHASH_SINGLE or base == SIGHASH_NONE

    hashPrevouts = _ZERO32 if anyonecanpay else sha256(d.sha_prevouts)
    hashSequence = _ZERO32 if anyonecanpay or some_outputs else sha256(d.sha_sequences)
    if not some_outputs:
        hashOutputs = sha256(d.sha_outputs)
    elif base == SIGHASH_SINGLE and input_index < d.n_outputs:
        if single_output is None:
            raise ValueError("SIGHASH_SINGLE needs the output at the input's index")
        single = hashlib.sha256()
        hash_txout(single, single_output[0], single_output[1])
        hashOutputs = sha256(single.digest())
    else:
        hashOutputs = _ZERO32

    return (
        u32le(d.nVersion),
        hashPrevouts,
        hashSequence,
        outpoint(txid, vout),
        compact_size(len(script_code)), script_code,
        i64le(amount),
        u32le(nSequence),
        hashOutputs,
        u32le(d.nLockTime),
        u32le(nHashType),
    )


def preimage(d, input_index, txid, vout, nSequence, script_code, amount, nHashType,
             single_output=None):
    return b"".join(bytes(f) for f in _fields(d, input_index, txid, vout, nSequence,
                                              script_code, amount, nHashType, single_output))


def sighash(d, input_index, txid, vout, nSequence, script_code, amount, nHashType,
            single_output=None):
    # streamed into the hash: a script code of thousands of bytes is not copied
    h = hashlib.sha256()
    for field in _fields(d, input_index, txid, vout, nSequence, script_code, amount,
                         nHashType, single_output):
        h.update(field)
    return sha256(h.digest())


def sighash_tx(nVersion, inputs, outputs, nLockTime, input_index, script_code, amount,
               nHashType):
    d = TxDigests.from_tx(nVersion, inputs, outputs, nLockTime)
    if not 0 <= input_index < len(inputs):
        raise ValueError("input index out of range")
    txid, vout, nSequence = inputs[input_index]
    single = outputs[input_index] if input_index < len(outputs) else None
    return sighash(d, input_index, txid, vout, nSequence, script_code, amount, nHashType,
                   single)
