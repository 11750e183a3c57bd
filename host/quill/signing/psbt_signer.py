"""PSBT roles (BIP174): the Updater and Signer as Core's ProcessPSBT and SignPSBTInput run them,
the Finalizer and Extractor (Core's FinalizePSBT / FinalizeAndExtractPSBT) and the analysis of
what a PSBT still needs (Core's AnalyzePSBT).

The host never signs: a signature comes from a creator (quill.signing.solver), by default one that
makes none, so that finalizing uses only the signatures already in the PSBT, as Core's signer
with a provider that holds no key; descriptorprocesspsbt's creators plan and then answer with the
device's signatures (psbt_device.py). What output descriptors know (scripts, key origins, taproot
internal keys) comes from a provider (provider.py). Final inputs must pass script verification
with the standard flags.

    complete = finalize_psbt(psbt)             # fills final_script_sig/witness where complete
    tx = extract_transaction(psbt)             # the signed transaction, or None if incomplete
    analysis = analyze_psbt(psbt)              # per input: has a UTXO, final, next role, missing
    fill_utxos(psbt, find_tx, find_coin, provider); sign_and_update(psbt, provider, sighash, finalize)

Taproot script paths are finalized for pk(K) leaves; other tapscripts (Core satisfies any
miniscript) are left unfinalized, and so are inputs whose key-path signature would be the
aggregate of MuSig2 partial signatures (Core aggregates them).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from quill.consensus import MAX_MONEY
from quill.signing.errors import SighashMismatch
from quill.signing.solver import SignatureData, produce_signature
from quill.tx import script as S
from quill.tx.hashes import hash160
from quill.tx.interpreter import BaseSignatureChecker, tapleaf_hash, verify_script
from quill.tx.psbt import NULL32, PSBT, PSBTInput, PSBTOutput
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
    """The unsigned transaction and its precomputed hashes, shared by every input. The hashes are
    made when a signature is first checked: an analysis or a signer that meets only unsigned
    inputs never needs them."""

    def __init__(self, psbt: PSBT, tx: Transaction, placeholders: bool = False,
                 shares: _Context | None = None) -> None:
        """`shares`: another context on the same transaction and spent outputs whose hashes serve
        (analyzepsbt's size estimate reuses its analysis'), instead of hashing them again."""
        self.tx = tx
        # Placeholder signing runs without precomputed data (Core's txdata=nullptr): taproot
        # signatures cannot be checked then.
        self.placeholders = placeholders
        spent = [checked_utxo(i)[0] for i in psbt.inputs]
        self.have_all = all(o is not None for o in spent) and not placeholders
        self._spent = [o if o is not None else TxOut(0, b"") for o in spent]
        self._shares = shares
        self._precomputed: PrecomputedTransactionData | None = None

    @property
    def precomputed(self) -> PrecomputedTransactionData:
        if self._shares is not None:
            return self._shares.precomputed
        if self._precomputed is None:
            self._precomputed = PrecomputedTransactionData(self.tx, self._spent)
        return self._precomputed

    def checker(self, index: int, amount: int) -> TransactionSignatureChecker:
        cls = TransactionSignatureChecker if self.have_all else _MissingSpentOutputs
        return cls(self.tx, index, amount, self.precomputed)

    def deferred_checker(self, index: int, amount: int) -> Any:
        """checker(index, amount), made when the script interpreter first asks it something."""
        return _DeferredChecker(lambda: self.checker(index, amount))


class _DeferredChecker:
    __slots__ = ("_make", "_made")

    def __init__(self, make: Callable[[], TransactionSignatureChecker]) -> None:
        self._make = make
        self._made: TransactionSignatureChecker | None = None

    def __getattr__(self, name: str) -> Any:
        if self._made is None:
            self._made = self._make()
        return getattr(self._made, name)


def _signed_and_verified(txin: PSBTInput, index: int, ctx: _Context) -> bool:
    """Core's PSBTInputSignedAndVerified."""
    utxo, _ = checked_utxo(txin)
    if utxo is None:
        return False
    if not txin.final_script_sig and not txin.final_script_witness and _needs_a_witness(utxo.script_pubkey):
        return False   # what VerifyScript answers for an unsigned segwit input, without running it
    ok, _ = verify_script(txin.final_script_sig, utxo.script_pubkey, txin.final_script_witness,
                          STANDARD_SCRIPT_VERIFY_FLAGS, ctx.checker(index, utxo.value))
    return bool(ok)


def _needs_a_witness(script: bytes) -> bool:
    """A version 0 witness program (BIP141: an empty witness fails it at any length) or a taproot
    output (BIP341: an empty witness fails); not the other version 1 programs (pay-to-anchor
    succeeds with none)."""
    program = S.witness_program(script)
    return program is not None and (program[0] == 0 or (program[0] == 1 and len(program[1]) == 32))


def finalize_context(psbt: PSBT) -> _Context | None:
    """Core's PrecomputePSBTData for the PSBT as it is now; None when its transaction is unknown."""
    tx = psbt.unsigned_tx()
    return None if tx is None else _Context(psbt, tx)


def input_signed_and_verified(psbt: PSBT, index: int, ctx: _Context) -> bool:
    """Core's PSBTInputSignedAndVerified with the precomputed data in `ctx`."""
    return _signed_and_verified(psbt.inputs[index], index, ctx)


def _sighash_mismatch(txin: PSBTInput, sighash: int) -> bool:
    """Every signature already present must use the sighash type being finalized."""
    if not (txin.partial_sigs or txin.tap_key_sig or txin.tap_script_sigs):
        return False   # none present (an unsigned input)
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


class _DummyCreator:
    """Core's DUMMY_SIGNATURE_CREATOR: a well-formed placeholder for any key (size estimation)."""

    def create_sig(self, keystore: Any, keyid: bytes, script_code: bytes, sigversion: Any) -> bytes:
        # 0x30 len 0x02 r 0x02 s, then SIGHASH_ALL: 71 bytes (Core's DummySignatureCreator(32, 32)).
        r_len, s_len = 32, 32
        sig = bytearray(r_len + s_len + 7)
        sig[0], sig[1], sig[2], sig[3], sig[4] = 0x30, r_len + s_len + 4, 0x02, r_len, 0x01
        sig[4 + r_len], sig[5 + r_len], sig[6 + r_len] = 0x02, s_len, 0x01
        sig[6 + r_len + s_len] = SIGHASH_ALL
        return bytes(sig)

    def create_taproot_key_path_sig(self, keystore: Any, output_key: bytes) -> bytes:
        return bytes(64)


class _AcceptAll(BaseSignatureChecker):
    """Core's DUMMY_CHECKER: every signature and lock passes."""

    def check_ecdsa_signature(self, sig: Any, pubkey: Any, script_code: Any, sigversion: Any) -> bool:
        return True

    def check_schnorr_signature(self, sig: Any, pubkey: Any, sigversion: Any, execdata: Any) -> Any:
        return None

    def check_lock_time(self, lock_time: Any) -> bool:
        return True

    def check_sequence(self, sequence: Any) -> bool:
        return True


def _sigdata_of(txin: PSBTInput) -> SignatureData:
    """Core's PSBTInput::FillSignatureData."""
    sigdata = SignatureData(txin.final_script_sig, txin.final_script_witness)
    if txin.final_script_sig or txin.final_script_witness:
        sigdata.complete = True
        return sigdata
    sigdata.signatures = dict(txin.partial_sigs)
    sigdata.redeem_script = txin.redeem_script or None
    sigdata.witness_script = txin.witness_script or None
    sigdata.taproot_key_path_sig = txin.tap_key_sig
    sigdata.misc_pubkeys = {hash160(pubkey): pubkey for pubkey in txin.hd_keypaths}
    if txin.tap_internal_key != NULL32:
        sigdata.tap_internal_key = txin.tap_internal_key
    sigdata.tap_origins = dict(txin.tap_bip32_paths)
    return sigdata


def _store_sigdata(txin: PSBTInput, sigdata: SignatureData) -> None:
    """Core's PSBTInput::FromSignatureData."""
    if sigdata.complete:
        txin.partial_sigs = {}
        txin.hd_keypaths = {}
        txin.redeem_script = b""
        txin.witness_script = b""
        if sigdata.script_sig:
            txin.final_script_sig = sigdata.script_sig
        if sigdata.witness:
            txin.final_script_witness = list(sigdata.witness)
        return
    for keyid, pair in sigdata.signatures.items():
        txin.partial_sigs.setdefault(keyid, pair)
    if not txin.redeem_script and sigdata.redeem_script:
        txin.redeem_script = sigdata.redeem_script
    if not txin.witness_script and sigdata.witness_script:
        txin.witness_script = sigdata.witness_script
    _store_provided(txin, sigdata)
    if not txin.tap_key_sig and sigdata.taproot_key_path_sig:
        txin.tap_key_sig = sigdata.taproot_key_path_sig


def _store_provided(field: PSBTInput | PSBTOutput, sigdata: SignatureData) -> None:
    """What a descriptor provider taught the signer: key origins and the taproot internal key
    (Core's FromSignatureData, both for inputs and outputs)."""
    for pubkey, origin in sigdata.origins.values():
        field.hd_keypaths.setdefault(pubkey, origin)
    if sigdata.tap_internal_key:
        field.tap_internal_key = sigdata.tap_internal_key
    for xonly, leaf_origin in sigdata.tap_origins.items():
        field.tap_bip32_paths.setdefault(xonly, leaf_origin)


OK, INCOMPLETE, FAILED, SIGHASH_MISMATCH = "ok", "incomplete", "failed", "sighash mismatch"


class _NoSignatures:
    """A creator that signs nothing: the keys are elsewhere (finalizing, analysing, updating;
    Core's UpdatePSBTOutput runs the signer without secrets)."""

    def create_sig(self, keystore: Any, keyid: bytes, script_code: bytes, sigversion: Any) -> None:
        return None

    def create_taproot_key_path_sig(self, keystore: Any, output_key: bytes) -> None:
        return None


def _no_signatures(index: int, amount: int, sighash: int, taproot_ready: bool) -> Any:
    return _NoSignatures()


def sign_input(psbt: PSBT, index: int, ctx: _Context, sighash_option: int | None,  # noqa: C901 - SignPSBTInput
               out: SignatureData | None = None, finalize: bool = True, provider: Any = None,
               creator: Callable[[int, int, int, bool], Any] = _no_signatures, unverified: bool = False) -> str:
    """Core's SignPSBTInput. `provider` (default: none) is what descriptors tell the signer
    (quill.signing.provider); `creator(index, amount, sighash, taproot_ready)` answers for each
    signature (default: none, the keys being elsewhere). A `ctx.placeholders` context is Core's
    txdata=nullptr: placeholder signatures for every key (size estimation). Returns OK,
    INCOMPLETE, FAILED (a missing input) or SIGHASH_MISMATCH; `out` receives what was missing.
    `unverified`: the caller has just found the input not signed and verified with `ctx`, the
    check Core's SignPSBTInput starts with (it would give the same answer)."""
    txin = psbt.inputs[index]
    if not unverified and _signed_and_verified(txin, index, ctx):
        return OK
    sigdata = _sigdata_of(txin)
    utxo, require_witness_sig = checked_utxo(txin)
    if utxo is None:
        return FAILED
    taproot = _is_taproot(utxo.script_pubkey)
    sighash = sighash_option if sighash_option is not None else (SIGHASH_DEFAULT if taproot else SIGHASH_ALL)
    if txin.sighash_type is not None and txin.sighash_type != sighash:
        return SIGHASH_MISMATCH
    if taproot and sighash != SIGHASH_DEFAULT or not taproot and sighash not in (SIGHASH_DEFAULT, SIGHASH_ALL):
        txin.sighash_type = sighash
    if _sighash_mismatch(txin, sighash):
        return SIGHASH_MISMATCH
    keys = _NoKeys() if provider is None else provider
    if ctx.placeholders:
        complete = produce_signature(_NoKeys(), _DummyCreator(), utxo.script_pubkey, sigdata, _AcceptAll())
    else:
        checker = ctx.deferred_checker(index, utxo.value)
        complete = produce_signature(keys, creator(index, utxo.value, sighash, ctx.have_all),
                                     utxo.script_pubkey, sigdata, checker)
        if taproot and not complete and not txin.tap_key_sig:
            complete = _finalize_script_path(txin, utxo.script_pubkey, sigdata, checker)
    if require_witness_sig and not sigdata.witness_stage:
        return INCOMPLETE
    if not finalize and sigdata.complete:
        sigdata.complete = False  # keep the signatures, write no final scriptSig/witness
    _store_sigdata(txin, sigdata)
    if sigdata.witness_stage:
        txin.witness_utxo = utxo
    if out is not None:
        out.missing_pubkeys = sigdata.missing_pubkeys
        out.missing_sigs = sigdata.missing_sigs
        out.missing_redeem_script = sigdata.missing_redeem_script
        out.missing_witness_script = sigdata.missing_witness_script
    return OK if complete else INCOMPLETE


def finalize_psbt(psbt: PSBT) -> bool:
    """Core's FinalizePSBT: finalize every input that can be; True when all are."""
    tx = psbt.unsigned_tx()
    if tx is None:
        return False
    ctx = _Context(psbt, tx)
    complete = True
    for index, txin in enumerate(psbt.inputs):
        complete &= sign_input(psbt, index, ctx, txin.sighash_type) == OK
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


# -- the analysis (Core's node/psbt.cpp AnalyzePSBT) --------------------------------------------

CREATOR, UPDATER, SIGNER, FINALIZER, EXTRACTOR = "creator", "updater", "signer", "finalizer", "extractor"
_ROLE_ORDER = (CREATOR, UPDATER, SIGNER, FINALIZER, EXTRACTOR)


@dataclass
class InputAnalysis:
    has_utxo: bool = True
    is_final: bool = True
    next: str = EXTRACTOR
    missing_pubkeys: list[bytes] = field(default_factory=list)
    missing_sigs: list[bytes] = field(default_factory=list)
    missing_redeem_script: bytes | None = None
    missing_witness_script: bytes | None = None


@dataclass
class Analysis:
    inputs: list[InputAnalysis] = field(default_factory=list)
    estimated_vsize: int | None = None
    estimated_feerate: int | None = None   # sat/kvB
    fee: int | None = None
    next: str = EXTRACTOR
    error: str = ""


def _invalid(message: str) -> Analysis:
    return Analysis(next=CREATOR, error=message)


def _analyze_input(psbt: PSBT, index: int, ctx: _Context, item: InputAnalysis) -> tuple[TxOut | None, str]:
    """One input's state; (its UTXO, an error that makes the whole PSBT invalid or "")."""
    txin = psbt.inputs[index]
    utxo, _ = checked_utxo(txin)
    if utxo is None:
        if txin.non_witness_utxo is not None and txin.prev_out >= len(txin.non_witness_utxo.vout):
            return None, f"PSBT is not valid. Input {index} specifies invalid prevout"
        item.has_utxo = item.is_final = False
        item.next = UPDATER
    elif S.is_unspendable(utxo.script_pubkey):
        return utxo, f"PSBT is not valid. Input {index} spends unspendable output"
    if not _signed_and_verified(txin, index, ctx):
        item.is_final = False
        missing = SignatureData()
        if sign_input(psbt, index, ctx, None, missing, unverified=True) == OK:
            item.next = FINALIZER
        else:
            item.missing_pubkeys = missing.missing_pubkeys
            item.missing_sigs = missing.missing_sigs
            item.missing_redeem_script = missing.missing_redeem_script
            item.missing_witness_script = missing.missing_witness_script
            only_sigs = (not item.missing_pubkeys and item.missing_redeem_script is None
                         and item.missing_witness_script is None and item.missing_sigs)
            item.next = SIGNER if only_sigs else UPDATER
    elif utxo is None:
        item.is_final = False
    return utxo, ""


def analyze_psbt(psbt: PSBT) -> Analysis:
    """Core's AnalyzePSBT: what each input has and lacks, the next role, and (with every UTXO
    known) the fee and the size and fee rate once signed. Core analyzes its own copy: `psbt` is
    consumed (the size estimate signs placeholders into it), so a caller that keeps its PSBT
    passes a copy; analyzepsbt passes the one it has just decoded."""
    tx = psbt.unsigned_tx()
    if tx is None:
        return _invalid("PSBT cannot be made into a valid transaction")
    ctx = _Context(psbt, tx)
    result = Analysis()
    calc_fee, in_amt = True, 0
    for index in range(len(psbt.inputs)):
        item = InputAnalysis()
        result.inputs.append(item)
        utxo, error = _analyze_input(psbt, index, ctx, item)
        if error:
            return _invalid(error)
        if utxo is None:
            calc_fee = False
        elif not (0 <= utxo.value <= MAX_MONEY and 0 <= in_amt + utxo.value <= MAX_MONEY):
            return _invalid(f"PSBT is not valid. Input {index} has invalid value")
        else:
            in_amt += utxo.value
    result.next = min((i.next for i in result.inputs), key=_ROLE_ORDER.index, default=EXTRACTOR)
    if not calc_fee:
        return result
    out_amt = 0
    for out in psbt.outputs:
        if not (0 <= out_amt <= MAX_MONEY and 0 <= out.amount <= MAX_MONEY and out_amt + out.amount <= MAX_MONEY):
            return _invalid("PSBT is not valid. Output amount invalid")
        out_amt += out.amount
    result.fee = in_amt - out_amt
    signed = _placeholder_signed(psbt, tx, ctx)
    if signed is not None:
        result.estimated_vsize = signed.vsize()
        result.estimated_feerate = result.fee * 1000 // result.estimated_vsize
    return result


def _placeholder_signed(psbt: PSBT, tx: Transaction, analysed: _Context) -> Transaction | None:
    """The transaction with every input signed by placeholders, or None if one cannot be. The
    analysis' hashes serve: the same transaction, the same spent outputs."""
    ctx = _Context(psbt, tx, placeholders=True, shares=analysed)
    for index, (txin, psbt_in) in enumerate(zip(tx.vin, psbt.inputs, strict=True)):
        if sign_input(psbt, index, ctx, None) != OK or checked_utxo(psbt_in)[0] is None:
            return None
        txin.script_sig = psbt_in.final_script_sig
        txin.witness = list(psbt_in.final_script_witness)
    return tx


# -- the Updater and Signer (Core's ProcessPSBT: utxoupdatepsbt, descriptorprocesspsbt) ----------


def update_from_chain(psbt: PSBT, find_tx: Any, find_coin: Any) -> None:
    """Core's ProcessPSBT with no descriptors (utxoupdatepsbt). Raises SighashMismatch."""
    fill_utxos(psbt, find_tx, find_coin, None)
    sign_and_update(psbt, None, None, finalize=False)


def fill_utxos(psbt: PSBT, find_tx: Any, find_coin: Any, provider: Any) -> None:
    """Core's ProcessPSBT, its first half: each input's previous transaction (txindex or
    mempool, `find_tx(txid)`), else its coin (`find_coin(outpoint)`) for a segwit output
    (a P2SH one when `provider` knows its redeem script)."""
    keys = _NoKeys() if provider is None else provider
    missing = []
    for txin in psbt.inputs:
        if txin.non_witness_utxo is not None:
            continue
        prev = find_tx(txin.prev_txid)
        if prev is not None:
            txin.non_witness_utxo = prev
        else:
            missing.append(txin)
    for txin in missing:
        coin = find_coin(txin.outpoint)
        if coin is not None and _is_segwit_output(keys, coin.script_pubkey):
            txin.witness_utxo = coin


def sign_and_update(psbt: PSBT, provider: Any, sighash: int | None, finalize: bool,
                    creator: Callable[[int, int, int, bool], Any] = _no_signatures) -> None:
    """Core's ProcessPSBT, its second half: each input not yet final signed with `provider`
    (scripts, key origins, keys; None: nothing) and `creator`, each output given what the
    provider knows of it, and previous transactions dropped when every input is segwit v1.
    Raises SighashMismatch."""
    ctx = finalize_context(psbt)
    if ctx is None:
        return
    keys = _NoKeys() if provider is None else provider
    for index, txin in enumerate(psbt.inputs):
        if is_signed(txin):
            continue
        if sign_input(psbt, index, ctx, sighash, finalize=finalize, provider=keys,
                      creator=creator) == SIGHASH_MISMATCH:
            raise SighashMismatch()
    if provider is not None:
        for index in range(len(psbt.outputs)):
            update_output(psbt, index, provider)
    remove_unnecessary_transactions(psbt)


def is_signed(txin: PSBTInput) -> bool:
    """Core's PSBTInputSigned: the input has its final scriptSig or witness."""
    return bool(txin.final_script_sig or txin.final_script_witness)


def _is_segwit_output(provider: Any, script: bytes) -> bool:
    """Core's IsSegWitOutput: a witness program, or P2SH of one the provider knows."""
    if S.witness_program(script) is not None:
        return True
    kind, solutions = S.solver(script)
    if kind != S.SCRIPTHASH:
        return False
    redeem = provider.get_script(solutions[0])
    return redeem is not None and S.witness_program(redeem) is not None


def update_output(psbt: PSBT, index: int, provider: Any) -> None:
    """Core's UpdatePSBTOutput: a would-be spend of the output fills its redeem and witness
    scripts, key origins and taproot internal key from the provider."""
    out = psbt.outputs[index]
    sigdata = SignatureData()
    sigdata.redeem_script = out.redeem_script or None
    sigdata.witness_script = out.witness_script or None
    sigdata.misc_pubkeys = {hash160(pubkey): pubkey for pubkey in out.hd_keypaths}
    if out.tap_internal_key != NULL32:
        sigdata.tap_internal_key = out.tap_internal_key
    sigdata.tap_origins = dict(out.tap_bip32_paths)
    produce_signature(provider, _NoSignatures(), out.script, sigdata)
    if not out.redeem_script and sigdata.redeem_script:
        out.redeem_script = sigdata.redeem_script
    if not out.witness_script and sigdata.witness_script:
        out.witness_script = sigdata.witness_script
    _store_provided(out, sigdata)


def remove_unnecessary_transactions(psbt: PSBT) -> None:
    """Core's RemoveUnnecessaryTransactions: full previous transactions go when every input
    is a segwit v1 output signed without ANYONECANPAY (BIP341 signs every spent output)."""
    for txin in psbt.inputs:
        utxo = txin.witness_utxo if txin.has_witness_utxo() else None
        program = None if utxo is None else S.witness_program(utxo.script_pubkey)
        if program is None or program[0] == 0:
            return
        if txin.sighash_type is not None and txin.sighash_type & 0x80:
            return
    for txin in psbt.inputs:
        txin.non_witness_utxo = None
