"""The PSBT Finalizer and Extractor (BIP174), as Core's FinalizePSBT / FinalizeAndExtractPSBT.

Finalizing signs nothing: Core runs its signer with a provider that holds no key, so only
the signatures already in the PSBT build each input's final scriptSig and witness, and the
result must pass script verification with the standard flags.

    complete = finalize_psbt(psbt)             # fills final_script_sig/witness where complete
    tx = extract_transaction(psbt)             # the signed transaction, or None if incomplete

Taproot script paths are finalized for pk(K) leaves; other tapscripts (Core satisfies any
miniscript) are left unfinalized, and so are inputs whose key-path signature would be the
aggregate of MuSig2 partial signatures (Core aggregates them).
"""
from __future__ import annotations

from typing import Any

from quill.signing.solver import PlanningCreator, SignatureData, produce_signature
from quill.tx import script as S
from quill.tx.interpreter import tapleaf_hash, verify_script
from quill.tx.psbt import PSBT, PSBTInput
from quill.tx.script_error import ScriptError
from quill.tx.script_flags import STANDARD_SCRIPT_VERIFY_FLAGS
from quill.tx.serialize import compact_size
from quill.tx.transaction import Transaction, TxOut
from quill.tx.verify import PrecomputedTransactionData, TransactionSignatureChecker

TAPROOT_LEAF_TAPSCRIPT = 0xC0
OP_CHECKSIG = 0xAC
SIGHASH_DEFAULT = 0x00
SIGHASH_ALL = 0x01


class _NoKeys:
    """Core's DUMMY_SIGNING_PROVIDER: knows no key and no script."""

    def get_key(self, keyid: bytes) -> None:
        return None

    def get_pubkey(self, keyid: bytes) -> None:
        return None

    def get_script(self, scriptid: bytes) -> None:
        return None

    def get_key_by_xonly(self, xonly: bytes) -> None:
        return None


class _MissingSpentOutputs(TransactionSignatureChecker):
    """Core's checker when a spent output is unknown: BIP341 hashing fails (MissingDataBehavior::FAIL)."""

    def check_schnorr_signature(self, sig: bytes, pubkey: bytes, sigversion: Any, execdata: Any) -> Any:
        return ScriptError.SCHNORR_SIG_HASHTYPE


def checked_utxo(txin: PSBTInput) -> tuple[TxOut | None, bool]:
    """Core's UTXO choice in SignPSBTInput: (the spent output or None, whether it came from a
    witness UTXO, which then requires a witness signature)."""
    if txin.non_witness_utxo is not None:
        prev = txin.non_witness_utxo
        if txin.prev_out >= len(prev.vout) or prev.txid() != txin.prev_txid:
            return None, False
        return prev.vout[txin.prev_out], False
    if txin.has_witness_utxo():
        return txin.witness_utxo, True
    return None, False


def _is_taproot(script: bytes) -> bool:
    return S.solver(script)[0] == S.WITNESS_V1_TAPROOT


class _Context:
    """The unsigned transaction and its precomputed hashes, shared by every input."""

    def __init__(self, psbt: PSBT, tx: Transaction) -> None:
        self.tx = tx
        spent = [checked_utxo(i)[0] for i in psbt.inputs]
        self.have_all = all(o is not None for o in spent)
        self.precomputed = PrecomputedTransactionData(tx, [o if o is not None else TxOut(0, b"") for o in spent])

    def checker(self, index: int, amount: int) -> TransactionSignatureChecker:
        cls = TransactionSignatureChecker if self.have_all else _MissingSpentOutputs
        return cls(self.tx, index, amount, self.precomputed)


def _signed_and_verified(txin: PSBTInput, index: int, ctx: _Context) -> bool:
    """Core's PSBTInputSignedAndVerified."""
    utxo, _ = checked_utxo(txin)
    if utxo is None:
        return False
    ok, _ = verify_script(txin.final_script_sig, utxo.script_pubkey, txin.final_script_witness,
                          STANDARD_SCRIPT_VERIFY_FLAGS, ctx.checker(index, utxo.value))
    return bool(ok)


def _sighash_mismatch(txin: PSBTInput, sighash: int) -> bool:
    """Every signature already present must use the sighash type being finalized."""
    script_sigs = list(txin.tap_script_sigs.values())
    if sighash == SIGHASH_DEFAULT:
        return (bool(txin.tap_key_sig) and len(txin.tap_key_sig) != 64) or any(len(s) != 64 for s in script_sigs)
    if txin.tap_key_sig and (len(txin.tap_key_sig) != 65 or txin.tap_key_sig[-1] != sighash):
        return True
    if any(len(s) != 65 or s[-1] != sighash for s in script_sigs):
        return True
    return any(sig[-1] != sighash for _, sig in txin.partial_sigs.values())


def _leaf_stack(txin: PSBTInput, script: bytes, leaf_ver: int) -> list[bytes] | None:
    """The satisfaction of one tapscript leaf from the signatures present: a pk(K) leaf
    (<K> OP_CHECKSIG) only, as Core's miniscript satisfier answers it."""
    if leaf_ver != TAPROOT_LEAF_TAPSCRIPT or len(script) != 34 or script[0] != 0x20 or script[33] != OP_CHECKSIG:
        return None
    sig = txin.tap_script_sigs.get((script[1:33], tapleaf_hash(leaf_ver, script)))
    return None if sig is None else [sig]


def _stack_size(stack: list[bytes]) -> int:
    return len(compact_size(len(stack))) + sum(len(compact_size(len(w))) + len(w) for w in stack)


def _finalize_script_path(txin: PSBTInput, script_pubkey: bytes, sigdata: SignatureData,
                          checker: TransactionSignatureChecker) -> bool:
    """Core's SignTaproot script-path branch: the smallest satisfied leaf, with its shortest
    control block, then script verification."""
    sigdata.witness_stage = True
    best: list[bytes] | None = None
    for script, leaf_ver in sorted(txin.tap_scripts):
        stack = _leaf_stack(txin, script, leaf_ver)
        if stack is None:
            continue
        control = min(txin.tap_scripts[(script, leaf_ver)], key=lambda c: (len(c), c))
        stack = stack + [script, control]
        if best is None or _stack_size(best) > _stack_size(stack):
            best = stack
    if best is None:
        return False
    ok, _ = verify_script(b"", script_pubkey, best, STANDARD_SCRIPT_VERIFY_FLAGS, checker)
    if ok:
        sigdata.script_sig, sigdata.witness, sigdata.complete = b"", best, True
    return bool(ok)


def _finalize_input(psbt: PSBT, index: int, ctx: _Context) -> bool:  # noqa: C901 - Core's SignPSBTInput
    """Core's SignPSBTInput with no keys and finalize=true: True when the input is complete."""
    txin = psbt.inputs[index]
    if _signed_and_verified(txin, index, ctx):
        return True
    sigdata = SignatureData(txin.final_script_sig, txin.final_script_witness)
    if txin.final_script_sig or txin.final_script_witness:
        sigdata.complete = True
    else:
        sigdata.signatures = dict(txin.partial_sigs)
        sigdata.redeem_script = txin.redeem_script or None
        sigdata.witness_script = txin.witness_script or None
        sigdata.taproot_key_path_sig = txin.tap_key_sig
    utxo, require_witness_sig = checked_utxo(txin)
    if utxo is None:
        return False
    taproot = _is_taproot(utxo.script_pubkey)
    sighash = txin.sighash_type if txin.sighash_type is not None else (SIGHASH_DEFAULT if taproot else SIGHASH_ALL)
    if _sighash_mismatch(txin, sighash):
        return False
    checker = ctx.checker(index, utxo.value)
    if taproot and not sigdata.complete and not txin.tap_key_sig:
        complete = _finalize_script_path(txin, utxo.script_pubkey, sigdata, checker)
    else:
        creator = PlanningCreator(index, utxo.value, sighash, ctx.have_all, {})
        complete = produce_signature(_NoKeys(), creator, utxo.script_pubkey, sigdata, checker)
    if require_witness_sig and not sigdata.witness_stage:
        return False
    if sigdata.complete:
        txin.partial_sigs = {}
        txin.hd_keypaths = {}
        txin.redeem_script = b""
        txin.witness_script = b""
        if sigdata.script_sig:
            txin.final_script_sig = sigdata.script_sig
        if sigdata.witness:
            txin.final_script_witness = list(sigdata.witness)
    else:
        if not txin.redeem_script and sigdata.redeem_script:
            txin.redeem_script = sigdata.redeem_script
        if not txin.witness_script and sigdata.witness_script:
            txin.witness_script = sigdata.witness_script
    if sigdata.witness_stage:
        txin.witness_utxo = utxo
    return bool(complete)


def finalize_psbt(psbt: PSBT) -> bool:
    """Core's FinalizePSBT: finalize every input that can be; True when all are."""
    tx = psbt.unsigned_tx()
    if tx is None:
        return False
    ctx = _Context(psbt, tx)
    complete = True
    for index in range(len(psbt.inputs)):
        complete &= _finalize_input(psbt, index, ctx)
    return complete


def extract_transaction(psbt: PSBT) -> Transaction | None:
    """Core's FinalizeAndExtractPSBT: the network transaction, or None when not complete."""
    if not finalize_psbt(psbt):
        return None
    tx = psbt.unsigned_tx()
    if tx is None:
        return None
    for txin, psbt_in in zip(tx.vin, psbt.inputs, strict=True):
        txin.script_sig = psbt_in.final_script_sig
        txin.witness = list(psbt_in.final_script_witness)
    return tx
