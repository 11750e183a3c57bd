"""Legacy (pre-segwit) signature hash: Bitcoin Core's SignatureHash for
SigVersion::BASE (CTransactionSignatureSerializer), byte for byte.

The preimage is the transaction re-serialized with these changes, followed by
nHashType as 4 bytes little-endian, and the digest is double SHA-256:
  * the signed input's scriptSig is the scriptCode with every OP_CODESEPARATOR
    opcode removed; the other inputs' scriptSigs are empty;
  * base type = nHashType & 0x1f: 2 is SIGHASH_NONE, 3 is SIGHASH_SINGLE and
    anything else behaves like SIGHASH_ALL; SIGHASH_ANYONECANPAY = 0x80;
  * NONE: no outputs; NONE and SINGLE: the other inputs' nSequence is 0;
  * SINGLE: outputs 0..input_index, those before it blanked to value -1 and an
    empty script (Core's CTxOut());
  * ANYONECANPAY: only the signed input;
  * SINGLE with input_index >= number of outputs: Core's consensus quirk, the
    "digest" is uint256 ONE (bytes 01 00 .. 00), no hashing involved.
FindAndDelete of the signature is the script interpreter's job: pass the
script code it produced. nHashType is the full 32-bit value (signed or not).

API (digests are 32 bytes in natural order, what ECDSA signs; Core's
sighash.json prints them reversed):
    h = LegacyHasher(nVersion, n_inputs, n_outputs, nLockTime, input_index,
                     script_code, nHashType)
    h.add_input(txid, vout, nSequence)     every input, in order
    h.add_output(amount, script_pubkey)    every output, in order
    h.digest() -> 32 bytes
    sighash_tx(nVersion, inputs, outputs, nLockTime, input_index, script_code,
               nHashType) -> 32 bytes      the same on whole lists:
        inputs [(txid, vout, nSequence)], outputs [(amount, script_pubkey)]
The script-op parser (Core's GetScriptOp) is quillfw.script.get_op; the hash
types are quillfw.consensus's.
State is one SHA-256 object and counters: memory does not grow with the
transaction, so a device streams it once per legacy input.
"""
import hashlib

from quillfw.compat import const
from quillfw.consensus import SIGHASH_ANYONECANPAY, SIGHASH_NONE, SIGHASH_SINGLE
from quillfw.script import get_op
from quillfw.sighash.txstream import compact_size, hash_txout, i64le, outpoint, u32le

OP_CODESEPARATOR = const(0xAB)

# uint256::ONE as stored by Core: little-endian 1.
ONE = b"\x01" + bytes(31)

_BLANKED_OUTPUT = i64le(-1) + b"\x00"  # CTxOut(): nValue -1, empty scriptPubKey


def _write_script_code(h, script):
    """Core's SerializeScriptCode: the length counts only the removed
    separators, while the bytes written stop where a truncated push stops
    the opcode walk; both quirks are consensus for malformed scripts."""
    separators = 0
    pc = 0
    while True:
        opcode, _, pc = get_op(script, pc)
        if opcode is None:
            break
        if opcode == OP_CODESEPARATOR:
            separators += 1
    h.update(compact_size(len(script) - separators))
    start = pc = 0
    view = memoryview(script)   # its slices copy nothing
    while True:
        opcode, _, pc = get_op(script, pc)
        if opcode is None:
            break
        if opcode == OP_CODESEPARATOR:
            h.update(view[start:pc - 1])
            start = pc
    if start != len(script):
        h.update(view[start:pc])


class LegacyHasher:
    def __init__(self, nVersion, n_inputs, n_outputs, nLockTime, input_index,
                 script_code, nHashType):
        if not 0 <= input_index < n_inputs:
            raise ValueError("input index out of range")
        base = nHashType & 0x1F
        self._none = base == SIGHASH_NONE
        self._single = base == SIGHASH_SINGLE
        self._anyonecanpay = bool(nHashType & SIGHASH_ANYONECANPAY)
        self._n_inputs = n_inputs
        self._n_outputs = n_outputs
        self._nLockTime = nLockTime
        self._nHashType = nHashType
        self._nIn = input_index
        self._script_code = script_code
        self._inputs_seen = 0
        self._outputs_seen = 0
        self._h = hashlib.sha256()
        self._h.update(u32le(nVersion))
        self._h.update(compact_size(1 if self._anyonecanpay else n_inputs))

    def add_input(self, txid, vout, nSequence):
        i = self._inputs_seen
        if i >= self._n_inputs:
            raise ValueError("more inputs than declared")
        self._inputs_seen = i + 1
        if not self._anyonecanpay or i == self._nIn:
            h = self._h
            h.update(outpoint(txid, vout))
            if i == self._nIn:
                _write_script_code(h, self._script_code)
            else:
                h.update(b"\x00")
            if i != self._nIn and (self._none or self._single):
                nSequence = 0
            h.update(u32le(nSequence))
        if self._inputs_seen == self._n_inputs:
            if self._none:
                n = 0
            elif self._single:
                n = self._nIn + 1
            else:
                n = self._n_outputs
            self._h.update(compact_size(n))

    def add_output(self, amount, script_pubkey):
        j = self._outputs_seen
        if self._inputs_seen != self._n_inputs:
            raise ValueError("output before the last input")
        if j >= self._n_outputs:
            raise ValueError("more outputs than declared")
        self._outputs_seen = j + 1
        if self._none or (self._single and j > self._nIn):
            return
        if self._single and j < self._nIn:
            self._h.update(_BLANKED_OUTPUT)
        else:
            hash_txout(self._h, amount, script_pubkey)

    def digest(self):
        if self._inputs_seen != self._n_inputs or self._outputs_seen != self._n_outputs:
            raise ValueError("transaction incomplete")
        if self._single and self._nIn >= self._n_outputs:
            return ONE
        self._h.update(u32le(self._nLockTime))
        self._h.update(u32le(self._nHashType))
        return hashlib.sha256(self._h.digest()).digest()


def sighash_tx(nVersion, inputs, outputs, nLockTime, input_index, script_code, nHashType):
    h = LegacyHasher(nVersion, len(inputs), len(outputs), nLockTime, input_index,
                     script_code, nHashType)
    for txid, vout, nSequence in inputs:
        h.add_input(txid, vout, nSequence)
    for amount, script_pubkey in outputs:
        h.add_output(amount, script_pubkey)
    return h.digest()
