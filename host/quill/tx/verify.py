"""Verify a transaction's inputs as Bitcoin Core does (signing RPCs, sendrawtransaction).

Signature hashes come from the firmware package (one implementation shared with
the device): quillfw.sighash.legacy, quillfw.sighash.segwit_v0 (BIP143) and
quillfw.sighash.taproot (BIP341/342), fed by one quillfw.sighash.txdigests.TxDigests
per transaction (Core's PrecomputedTransactionData). Signatures are checked
with libsecp256k1 (coincurve) under Core's rules: ECDSA signatures are parsed
with Core's lax DER parser and S is normalized before verifying (strictness is
the interpreter's job, via DERSIG/LOW_S/STRICTENC); Schnorr per BIP340.

API:
    verify_input(tx, input_index, spent_outputs, flags=STANDARD_SCRIPT_VERIFY_FLAGS,
                 precomputed=None) -> (ok: bool, error: ScriptError)
        spent_outputs: one TxOut (value, script_pubkey) per input of tx, in
        order (BIP341 signs all of them). Pass a PrecomputedTransactionData to
        verify several inputs of one transaction without rehashing it.
    verify_transaction(tx, spent_outputs, flags=STANDARD_SCRIPT_VERIFY_FLAGS)
        -> [(ok, error)] one per input
    PrecomputedTransactionData(tx, spent_outputs)
    TransactionSignatureChecker(tx, input_index, amount, precomputed)
        the checker quill.tx.interpreter.verify_script calls
    check_transaction(tx) -> None if Core's CheckTransaction passes, else its
        reject reason ("bad-txns-vin-empty", "bad-txns-inputs-duplicate", ...)
    STANDARD_SCRIPT_VERIFY_FLAGS, MANDATORY_SCRIPT_VERIFY_FLAGS (from script_flags)
`error.message` is Core's ScriptErrorString text (what the signing RPCs'
`errors` entries show, except the two texts signrawtransaction* substitutes).
"""
from coincurve import PublicKey, PublicKeyXOnly
from coincurve.ecdsa import cdata_to_der, deserialize_compact

from quill.consensus import MAX_BLOCK_WEIGHT, MAX_MONEY, WITNESS_SCALE_FACTOR
from quill.consensus import SECP256K1_ORDER as _N
from quillfw.sighash import legacy as sighash_legacy
from quillfw.sighash import segwit_v0 as sighash_segwit_v0
from quillfw.sighash import taproot as sighash_taproot
from quillfw.sighash.txdigests import TxDigests

from .interpreter import (
    LOCKTIME_THRESHOLD,
    SEQUENCE_FINAL,
    SEQUENCE_LOCKTIME_DISABLE_FLAG,
    SEQUENCE_LOCKTIME_MASK,
    SEQUENCE_LOCKTIME_TYPE_FLAG,
    SIGVERSION_BASE,
    SIGVERSION_TAPSCRIPT,
    BaseSignatureChecker,
    parse_der_lax,
    verify_script,
)
from .script import is_valid_pubkey_size
from .script_error import ScriptError
from .script_flags import MANDATORY_SCRIPT_VERIFY_FLAGS, STANDARD_SCRIPT_VERIFY_FLAGS  # noqa: F401

_SIGHASH_SINGLE = 3


class PrecomputedTransactionData:
    """The transaction in the firmware's plain form plus its BIP143/BIP341 digests,
    computed once and shared by every signature check of every input."""

    def __init__(self, tx, spent_outputs):
        if len(spent_outputs) != len(tx.vin):
            raise ValueError("one spent output per input is needed")
        self.inputs = [(i.prevout.hash, i.prevout.n, i.sequence) for i in tx.vin]
        self.outputs = [(o.value, o.script_pubkey) for o in tx.vout]
        self.spent = [(o.value, o.script_pubkey) for o in spent_outputs]
        self.digests = TxDigests.from_tx(tx.version, self.inputs, self.outputs, tx.locktime,
                                         self.spent)


def _verify_ecdsa(pubkey, der_sig, digest):
    """Core's CPubKey::Verify: lax DER, S normalized to the low half, then verify."""
    rs = parse_der_lax(der_sig)
    if rs is None:
        return False
    r, s = rs
    if r == 0 or s == 0:
        return False
    if s > _N // 2:
        s = _N - s
    try:
        key = PublicKey(bytes(pubkey))
    except ValueError:
        return False
    sig = cdata_to_der(deserialize_compact(r.to_bytes(32, "big") + s.to_bytes(32, "big")))
    return key.verify(sig, digest, hasher=None)


class TransactionSignatureChecker(BaseSignatureChecker):
    """Core's GenericTransactionSignatureChecker for input `input_index` of `tx`."""

    def __init__(self, tx, input_index, amount, precomputed):
        self.tx = tx
        self.index = input_index
        self.amount = amount
        self.data = precomputed

    def check_ecdsa_signature(self, sig, pubkey, script_code, sigversion):
        if not is_valid_pubkey_size(pubkey) or not sig:
            return False
        hash_type = sig[-1]
        d = self.data
        if sigversion == SIGVERSION_BASE:
            digest = sighash_legacy.sighash_tx(self.tx.version, d.inputs, d.outputs,
                                               self.tx.locktime, self.index, script_code,
                                               hash_type)
        else:
            txid, vout, sequence = d.inputs[self.index]
            single = d.outputs[self.index] if self.index < len(d.outputs) else None
            digest = sighash_segwit_v0.sighash(d.digests, self.index, txid, vout, sequence,
                                               script_code, self.amount, hash_type, single)
        return _verify_ecdsa(pubkey, sig[:-1], digest)

    def check_schnorr_signature(self, sig, pubkey, sigversion, execdata):
        # Empty signatures never get here in tapscript (they are a clean "false").
        if len(sig) != 64 and len(sig) != 65:
            return ScriptError.SCHNORR_SIG_SIZE
        hash_type = 0
        if len(sig) == 65:
            hash_type = sig[64]
            # An explicit 0x00 would make a second encoding of SIGHASH_DEFAULT.
            if hash_type == 0:
                return ScriptError.SCHNORR_SIG_HASHTYPE
            sig = sig[:64]
        d = self.data
        if hash_type not in sighash_taproot.VALID_HASH_TYPES:
            return ScriptError.SCHNORR_SIG_HASHTYPE
        if hash_type & 3 == _SIGHASH_SINGLE and self.index >= len(d.outputs):
            return ScriptError.SCHNORR_SIG_HASHTYPE
        txid, vout, sequence = d.inputs[self.index]
        amount, spk = d.spent[self.index]
        single = d.outputs[self.index] if self.index < len(d.outputs) else None
        leaf = execdata.tapleaf_hash if sigversion == SIGVERSION_TAPSCRIPT else None
        digest = sighash_taproot.sighash(d.digests, self.index, hash_type,
                                         (txid, vout, sequence, amount, spk), execdata.annex,
                                         single, leaf, 0, execdata.codeseparator_pos)
        try:
            ok = PublicKeyXOnly(bytes(pubkey)).verify(bytes(sig), digest)
        except ValueError:
            ok = False          # not an x coordinate on the curve
        return None if ok else ScriptError.SCHNORR_SIG

    def check_lock_time(self, lock_time):
        """BIP65 against the transaction's nLockTime."""
        tx_lock = self.tx.locktime
        # Heights compare with heights, times with times.
        if (tx_lock < LOCKTIME_THRESHOLD) != (lock_time < LOCKTIME_THRESHOLD):
            return False
        if lock_time > tx_lock:
            return False
        # A final input disables nLockTime, and with it this check.
        return self.tx.vin[self.index].sequence != SEQUENCE_FINAL

    def check_sequence(self, sequence):
        """BIP112 against the input's nSequence (BIP68 relative lock)."""
        tx_sequence = self.tx.vin[self.index].sequence
        # BIP68 only applies from version 2 (nVersion is unsigned in Core now).
        if self.tx.version < 2:
            return False
        if tx_sequence & SEQUENCE_LOCKTIME_DISABLE_FLAG:
            return False
        mask = SEQUENCE_LOCKTIME_TYPE_FLAG | SEQUENCE_LOCKTIME_MASK
        tx_masked = tx_sequence & mask
        masked = sequence & mask
        if (tx_masked < SEQUENCE_LOCKTIME_TYPE_FLAG) != (masked < SEQUENCE_LOCKTIME_TYPE_FLAG):
            return False
        return masked <= tx_masked


def verify_input(tx, input_index, spent_outputs, flags=STANDARD_SCRIPT_VERIFY_FLAGS,
                 precomputed=None):
    """Core's VerifyScript for one input: (ok, ScriptError)."""
    if not 0 <= input_index < len(tx.vin):
        raise ValueError("input index out of range")
    if precomputed is None:
        precomputed = PrecomputedTransactionData(tx, spent_outputs)
    txin = tx.vin[input_index]
    spent = spent_outputs[input_index]
    checker = TransactionSignatureChecker(tx, input_index, spent.value, precomputed)
    return verify_script(txin.script_sig, spent.script_pubkey, txin.witness, flags, checker)


def verify_transaction(tx, spent_outputs, flags=STANDARD_SCRIPT_VERIFY_FLAGS):
    """verify_input for every input, sharing one PrecomputedTransactionData."""
    data = PrecomputedTransactionData(tx, spent_outputs)
    return [verify_input(tx, i, spent_outputs, flags, data) for i in range(len(tx.vin))]


def check_transaction(tx):
    """Core's CheckTransaction (consensus/tx_check.cpp): context-free sanity.

    Returns None when the transaction passes, else Core's reject reason.
    """
    if not tx.vin:
        return "bad-txns-vin-empty"
    if not tx.vout:
        return "bad-txns-vout-empty"
    # Witness excluded: it has not been checked for malleability at this point.
    if len(tx.serialize(with_witness=False)) * WITNESS_SCALE_FACTOR > MAX_BLOCK_WEIGHT:
        return "bad-txns-oversize"
    total = 0
    for out in tx.vout:
        if out.value < 0:
            return "bad-txns-vout-negative"
        if out.value > MAX_MONEY:
            return "bad-txns-vout-toolarge"
        total += out.value
        if total > MAX_MONEY:
            return "bad-txns-txouttotal-toolarge"
    # CVE-2018-17144: spending one outpoint twice in a transaction.
    if len({(i.prevout.hash, i.prevout.n) for i in tx.vin}) != len(tx.vin):
        return "bad-txns-inputs-duplicate"
    if tx.is_coinbase():
        if not 2 <= len(tx.vin[0].script_sig) <= 100:
            return "bad-cb-length"
    else:
        for txin in tx.vin:
            if txin.prevout.is_null():
                return "bad-txns-prevout-null"
    return None
