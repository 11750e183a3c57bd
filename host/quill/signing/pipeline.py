"""signrawtransactionwithkey end to end (core-rpc.md §4; Core's SignTransaction in
script/sign.cpp and rpc/rawtransaction_util.cpp):

    sign_transaction(node, tx, keystore, coins, hash_type, stats=None) -> result

1. the handler checks the parameters as Core does, in Core's order (handlers/signing.py), with
   each input's coin from the node's chain (coins.py) or prevtxs;
2. what each input already carries (solver.data_from_transaction);
3. a planning pass of Core's ProduceSignature that lists the signatures to make;
4. one device session that makes them (device_session.py) - the host never signs;
5. Core's ProduceSignature again with the device's signatures, then Core's
   verification with the standard flags, the `errors` entries and `complete`.

Result key order is Core's: hex, complete, errors (only when there are errors).
"""
import logging
import time

from coincurve import PublicKeyXOnly

from quill.amount import format_amount
from quill.consensus import MAX_MONEY, SIGHASH_SINGLE
from quill.device.errors import DeviceError, DeviceRestarted, DeviceUnavailable
from quill.device.hwkeys import device_network
from quill.device.manager import NO_DEVICE
from quill.tx import script as S
from quill.tx.hashes import hash_to_hex
from quill.tx.interpreter import verify_script
from quill.tx.script_error import ScriptError
from quill.tx.script_flags import STANDARD_SCRIPT_VERIFY_FLAGS
from quill.tx.transaction import TxOut
from quill.tx.verify import PrecomputedTransactionData, TransactionSignatureChecker
from quillfw.crypto.schnorr import taproot_tweak

from .device_session import check_device, sign_on_device
from .errors import MissingAmount
from .solver import DeviceResultCreator, PlanningCreator, data_from_transaction, produce_signature

log = logging.getLogger("quill.signing")

INPUT_NOT_FOUND = "Input not found or already spent"
MISSING_AMOUNT = "Missing amount"


class _MissingSpentOutputs(TransactionSignatureChecker):
    """Core's checker when some coin is unknown: BIP341 hashing lacks data, which
    Core reports as a bad hash type once the signature's size passed."""

    def check_schnorr_signature(self, sig, pubkey, sigversion, execdata):
        if len(sig) not in (64, 65):
            return ScriptError.SCHNORR_SIG_SIZE
        return ScriptError.SCHNORR_SIG_HASHTYPE


def _device_script_type(script_pubkey, redeem_script):
    """The name get_info's script_types uses for an input."""
    kind, _ = S.solver(script_pubkey)
    if kind == S.SCRIPTHASH and redeem_script is not None:
        inner, _ = S.solver(redeem_script)
        return {S.WITNESS_V0_KEYHASH: "p2sh-p2wpkh",
                S.WITNESS_V0_SCRIPTHASH: "p2sh-p2wsh"}.get(inner, "p2sh")
    return {S.PUBKEY: "p2pk", S.PUBKEYHASH: "p2pkh", S.MULTISIG: "p2ms", S.SCRIPTHASH: "p2sh",
            S.WITNESS_V0_KEYHASH: "p2wpkh", S.WITNESS_V0_SCRIPTHASH: "p2wsh",
            S.WITNESS_V1_TAPROOT: "p2tr"}.get(kind, kind)


def _bip86_keys(keystore, spent):
    """Output key -> Key for each compressed key tweaked with an empty script tree
    (BIP86), computed only when some input is a taproot output."""
    if not any(o is not None and S.solver(o.script_pubkey)[0] == S.WITNESS_V1_TAPROOT
               for o in spent):
        return {}
    keys = {}
    for key in keystore.keys.values():
        if key.compressed:
            xonly = key.pubkey[1:]
            tweaked = PublicKeyXOnly(xonly)
            tweaked.tweak_add(taproot_tweak(xonly))
            keys.setdefault(tweaked.format(), key)
    return keys


def _error_entry(txin, message):
    return {"txid": hash_to_hex(txin.prevout.hash), "vout": txin.prevout.n,
            "witness": [w.hex() for w in txin.witness], "scriptSig": txin.script_sig.hex(),
            "sequence": txin.sequence, "error": message}


def _verify_error(err):
    if err == ScriptError.INVALID_STACK_OPERATION:
        return "Unable to sign input, invalid stack size (possibly missing key)"
    if err == ScriptError.SIG_NULLFAIL:
        return "CHECK(MULTI)SIG failing with non-zero signature (possibly need more signatures)"
    return err.message


class _Transaction:
    """One call's transaction, coins and per-input checkers."""

    def __init__(self, tx, coins, keystore, hash_type):
        self.tx = tx
        self.keystore = keystore
        self.hash_type = hash_type
        self.spent = [coins.get(txin.prevout) for txin in tx.vin]
        self.taproot_ready = all(o is not None for o in self.spent)
        placeholders = [o if o is not None else TxOut(0, b"") for o in self.spent]
        self.precomputed = PrecomputedTransactionData(tx, placeholders)
        self.bip86 = _bip86_keys(keystore, self.spent)
        self.skip_single = (hash_type & 0x1F) == SIGHASH_SINGLE

    def checker(self, i):
        cls = TransactionSignatureChecker if self.taproot_ready else _MissingSpentOutputs
        return cls(self.tx, i, self.spent[i].value, self.precomputed)

    def signable(self, i):
        """Core signs only inputs with a coin, and SIGHASH_SINGLE only with an output."""
        return self.spent[i] is not None and not (self.skip_single and i >= len(self.tx.vout))

    def creator_args(self, i):
        return (i, self.spent[i].value, self.hash_type, self.taproot_ready, self.bip86)


def _plan(t):
    """The signatures the device must make, and each input's device script type."""
    requests, script_types = [], {}
    for i, txin in enumerate(t.tx.vin):
        if not t.signable(i):
            continue
        sigdata = data_from_transaction(txin, t.spent[i], t.checker(i))
        creator = PlanningCreator(*t.creator_args(i))
        produce_signature(t.keystore, creator, t.spent[i].script_pubkey, sigdata)
        script_types[i] = _device_script_type(t.spent[i].script_pubkey, sigdata.redeem_script)
        requests += creator.requests
    unique = {}
    for r in requests:
        unique.setdefault(r.ident(), r)      # multisig asks once per key, not per pass
    return list(unique.values()), script_types


def _device_signatures(node, t, requests, script_types, stats):
    device = getattr(node, "device", None)
    if device is None or not getattr(device, "configured", True):
        raise DeviceUnavailable(NO_DEVICE)
    for attempt in (1, 2):
        try:
            info = device.info()
            check_device(info, t.tx, requests, script_types, t.hash_type, t.spent)
            return sign_on_device(device.client(), info, t.tx, t.spent, requests, t.hash_type, stats,
                                  device_network(node.chain_name))
        except DeviceRestarted as e:
            _refresh_info(device)
            # a restart between two calls refused this call's sign_begin: sign with the new boot
            if not e.before_session or attempt == 2:
                device.note_lost(e)     # a pool makes the call again on another device
                raise
        except DeviceUnavailable as e:  # vanished, unreachable, no answer: nothing was returned
            device.note_lost(e)
            raise
    raise AssertionError("unreachable")


def _refresh_info(device):
    """After a restart the cached get_info is the previous boot's: read it again
    (or leave it to the next call when the device is not back yet)."""
    try:
        device.info(refresh=True)
    except (DeviceError, DeviceUnavailable):
        device.forget_info()


def _finish(t, signatures):
    """Core's SignTransaction loop with the device's signatures: {index: error}."""
    errors = {}
    for i, txin in enumerate(t.tx.vin):
        spent = t.spent[i]
        if spent is None:
            errors[i] = INPUT_NOT_FOUND
            continue
        checker = t.checker(i)
        sigdata = data_from_transaction(txin, spent, checker)
        if t.signable(i):
            creator = DeviceResultCreator(signatures, *t.creator_args(i))
            produce_signature(t.keystore, creator, spent.script_pubkey, sigdata, checker)
        txin.script_sig = bytes(sigdata.script_sig)
        txin.witness = [bytes(w) for w in sigdata.witness]
        if spent.value == MAX_MONEY and txin.witness:
            errors[i] = MISSING_AMOUNT
            continue
        if not sigdata.complete:
            ok, err = verify_script(txin.script_sig, spent.script_pubkey, txin.witness,
                                    STANDARD_SCRIPT_VERIFY_FLAGS, checker)
            if not ok:
                errors[i] = _verify_error(err)
    return errors


def _missing_amount(spent):
    """Core's exception for a segwit input whose prevtxs entry had no amount."""
    return MissingAmount(f"Missing amount for CTxOut(nValue={format_amount(spent.value)}, "
                         f"scriptPubKey={spent.script_pubkey.hex()[:30]})")


def sign_transaction(node, tx, keystore, coins, hash_type, stats=None):
    """Sign `tx` (its inputs' coins in `coins`, {OutPoint: TxOut or None}) with the keys in
    `keystore`, every signature made on the device; Core's result object."""
    started = time.monotonic()
    stats = {} if stats is None else stats
    t = _Transaction(tx, coins, keystore, hash_type)
    requests, script_types = _plan(t)
    signatures = {}
    if requests:
        signatures = _device_signatures(node, t, requests, script_types, stats)
    errors = _finish(t, signatures)

    for i in sorted(errors):
        if errors[i] == MISSING_AMOUNT:
            raise _missing_amount(t.spent[i])
    result = {"hex": tx.hex(), "complete": not errors}
    if errors:
        result["errors"] = [_error_entry(tx.vin[i], errors[i]) for i in sorted(errors)]
    stats.update(inputs=len(tx.vin), signatures=len(requests))
    # (-debug=signing) what the device link carried; never keys
    log.debug("signrawtransactionwithkey: %d inputs, %d device signatures, %d messages, "
              "%d bytes to the device, complete=%s, %.3f s", len(tx.vin), len(requests),
              stats.get("messages", 0), stats.get("bytes_sent", 0), not errors,
              time.monotonic() - started)
    return result


class _Session:
    """What a device session needs of a transaction (a PSBT's unsigned one, for instance)."""

    def __init__(self, tx, spent, hash_type):
        self.tx = tx
        self.spent = spent
        self.hash_type = hash_type


def plan_keys(keystore, spent):
    """The BIP86 output keys the keystore's keys can sign for (PlanningCreator's last argument)."""
    return _bip86_keys(keystore, spent)


def device_signatures(node, tx, spent, requests, redeem_scripts, hash_type, stats=None):
    """signrawtransactionwithkey's device step for any signer of `tx` (a PSBT's too):
    {request.ident(): signature} for `requests`, made in one session on the device.
    redeem_scripts: {input index: its redeem script or None}, to name each input's script type."""
    script_types = {i: _device_script_type(spent[i].script_pubkey, redeem_scripts.get(i))
                    for i in {r.input_index for r in requests}}
    return _device_signatures(node, _Session(tx, spent, hash_type), requests, script_types,
                              {} if stats is None else stats)
