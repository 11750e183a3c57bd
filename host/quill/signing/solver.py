"""Core's script/sign.cpp for one input: DataFromTransaction, SignStep and
ProduceSignature, with the signatures coming from a creator.

The host never signs. A creator answers "give me the signature of key K over
this script code": PlanningCreator answers with a placeholder and records the
request for the device; DeviceResultCreator answers with the device's
signature for the same request. Both passes take identical decisions (the
placeholder is never verified), so the second pass builds exactly the stack
Core builds.

    data_from_transaction(tx, index, spent, checker) -> SignatureData
    produce_signature(keystore, creator, script_pubkey, sigdata, checker) -> complete
    SignRequest(input_index, algorithm, key, script_code, tweak)
"""
from quill.consensus import MAX_MONEY, SIGHASH_ALL, SIGHASH_DEFAULT
from quill.tx import script as S
from quill.tx.hashes import hash160
from quill.tx.interpreter import (
    SIGVERSION_BASE,
    SIGVERSION_WITNESS_V0,
    BaseSignatureChecker,
    eval_script,
    verify_script,
)
from quill.tx.script import push_data
from quill.tx.script_flags import SCRIPT_VERIFY_STRICTENC, STANDARD_SCRIPT_VERIFY_FLAGS
from quillfw.crypto.hashes import ripemd160

LEGACY = "legacy"
SEGWIT_V0 = "segwit_v0"
TAPROOT = "taproot"

# Untweaked: Core's output-key path. BIP86: the key tweaked with an empty script tree.
TWEAK_NONE = "none"
TWEAK_BIP86 = "bip86"

class SignatureData:
    """Core's SignatureData, the parts signrawtransactionwithkey uses."""

    def __init__(self, script_sig=b"", witness=()):
        self.script_sig = script_sig
        self.witness = list(witness)
        self.complete = False
        self.witness_stage = False            # Core's sigdata.witness
        self.signatures = {}                  # hash160(pubkey) -> (pubkey, signature)
        self.redeem_script = None
        self.witness_script = None
        self.taproot_key_path_sig = b""
        # What a signer lacked (Core's missing_* fields; analyzepsbt reports them).
        self.misc_pubkeys = {}                # hash160(pubkey) -> pubkey known from key origins
        self.missing_pubkeys = []
        self.missing_sigs = []
        self.missing_redeem_script = None
        self.missing_witness_script = None
        # What a provider with descriptors adds (Core's misc_pubkeys with their origins,
        # tr_spenddata.internal_key and taproot_misc_pubkeys); PSBTs keep them.
        self.origins = {}                     # hash160(pubkey) -> (pubkey, KeyOrigin)
        self.tap_internal_key = b""
        self.tap_origins = {}                 # x-only key -> (leaf hashes, KeyOrigin)

class SignRequest:
    """One signature the device makes: what the session's sign request needs."""
    __slots__ = ("input_index", "algorithm", "key", "script_code", "tweak")

    def __init__(self, input_index, algorithm, key, script_code=b"", tweak=TWEAK_NONE):
        self.input_index = input_index
        self.algorithm = algorithm
        self.key = key
        self.script_code = script_code
        self.tweak = tweak

    def ident(self):
        return (self.input_index, self.algorithm, self.key.pubkey, self.script_code, self.tweak)

class _Creator:
    """Core's MutableTransactionSignatureCreator decisions, minus the signing."""

    def __init__(self, input_index, amount, hash_type, taproot_ready, bip86_keys):
        self.input_index = input_index
        self.amount = amount
        self.hash_type = hash_type
        self.taproot_ready = taproot_ready
        self.bip86_keys = bip86_keys          # tweaked x-only output key -> Key

    def create_sig(self, keystore, keyid, script_code, sigversion):
        key = keystore.get_key(keyid)
        if key is None:
            return None
        if sigversion == SIGVERSION_WITNESS_V0 and (not key.compressed
                                                   or not 0 <= self.amount <= MAX_MONEY):
            return None
        algorithm = SEGWIT_V0 if sigversion == SIGVERSION_WITNESS_V0 else LEGACY
        return self.signature(SignRequest(self.input_index, algorithm, key, script_code))

    def create_taproot_key_path_sig(self, keystore, output_key):
        if not self.taproot_ready:
            return None
        key = keystore.get_key_by_xonly(output_key)
        request = None
        if key is not None:
            request = SignRequest(self.input_index, TAPROOT, key)
        elif output_key in self.bip86_keys:
            request = SignRequest(self.input_index, TAPROOT, self.bip86_keys[output_key],
                                  tweak=TWEAK_BIP86)
        return None if request is None else self.signature(request)

    def signature(self, request):
        raise NotImplementedError

class PlanningCreator(_Creator):
    """Records what the device must sign; answers with a placeholder."""

    def __init__(self, *args):
        super().__init__(*args)
        self.requests = []

    def signature(self, request):
        self.requests.append(request)
        return b"\x00" * 72

class DeviceResultCreator(_Creator):
    """Answers with the signatures the device returned, by request."""

    def __init__(self, signatures, *args):
        super().__init__(*args)
        self.signatures = signatures

    def signature(self, request):
        return self.signatures[request.ident()]

def ecdsa_hash_type(hash_type):
    """BASE/WITNESS_V0 have no SIGHASH_DEFAULT: it signs as ALL."""
    return SIGHASH_ALL if hash_type == SIGHASH_DEFAULT else hash_type

class SignatureExtractorChecker(BaseSignatureChecker):
    """Core's SignatureExtractorChecker: remembers every ECDSA signature that verifies.
    Schnorr checks fail: Core's extraction checker has no precomputed BIP341 data."""

    def __init__(self, sigdata, checker):
        self.sigdata = sigdata
        self.checker = checker

    def check_ecdsa_signature(self, sig, pubkey, script_code, sigversion):
        if self.checker.check_ecdsa_signature(sig, pubkey, script_code, sigversion):
            self.sigdata.signatures.setdefault(hash160(pubkey), (bytes(pubkey), bytes(sig)))
            return True
        return False

    def check_lock_time(self, lock_time):
        return self.checker.check_lock_time(lock_time)

    def check_sequence(self, sequence):
        return self.checker.check_sequence(sequence)

def _script_stack(script_sig):
    """Core's Stacks: the scriptSig's pushes, evaluated with STRICTENC and no checker."""
    stack = []
    eval_script(stack, script_sig, SCRIPT_VERIFY_STRICTENC, BaseSignatureChecker(), SIGVERSION_BASE)
    return stack

def data_from_transaction(txin, spent, checker):
    """Core's DataFromTransaction: what the input already carries (complete, or
    signatures and scripts to reuse). checker: a transaction checker for it."""
    data = SignatureData(txin.script_sig, txin.witness)
    extractor = SignatureExtractorChecker(data, checker)
    ok, _ = verify_script(txin.script_sig, spent.script_pubkey, txin.witness,
                          STANDARD_SCRIPT_VERIFY_FLAGS, extractor)
    if ok:
        data.complete = True
        return data
    script_stack = _script_stack(txin.script_sig)
    witness_stack = list(txin.witness)
    kind, solutions = S.solver(spent.script_pubkey)
    sigversion = SIGVERSION_BASE
    next_script = spent.script_pubkey
    if kind == S.SCRIPTHASH and script_stack and script_stack[-1]:
        next_script = data.redeem_script = bytes(script_stack.pop())
        kind, solutions = S.solver(next_script)
    if kind == S.WITNESS_V0_SCRIPTHASH and witness_stack and witness_stack[-1]:
        next_script = data.witness_script = bytes(witness_stack.pop())
        kind, solutions = S.solver(next_script)
        script_stack, witness_stack = witness_stack, []
        sigversion = SIGVERSION_WITNESS_V0
    if kind == S.MULTISIG and script_stack:
        # Match signatures to keys in script order, each after the last match.
        pubkeys = solutions[1:-1]
        last_success = 0
        for sig in script_stack:
            for i in range(last_success, len(pubkeys)):
                pubkey = pubkeys[i]
                if (hash160(pubkey) in data.signatures
                        or extractor.check_ecdsa_signature(sig, pubkey, next_script, sigversion)):
                    last_success = i + 1
                    break
    return data

# -- SignStep / ProduceSignature ---------------------------------------------------------------

def _get_script(keystore, sigdata, scriptid):
    script = keystore.get_script(scriptid)
    if script is not None:
        return script
    for known in (sigdata.redeem_script, sigdata.witness_script):
        if known is not None and hash160(known) == scriptid:
            return known
    return None

def _get_pubkey(keystore, sigdata, keyid):
    if keyid in sigdata.signatures:
        return sigdata.signatures[keyid][0]
    if keyid in sigdata.misc_pubkeys:
        return sigdata.misc_pubkeys[keyid]
    return keystore.get_pubkey(keyid)

def _key_origin(keystore, keyid):
    """Core's GetKeyOrigin; a plain KeyStore (signrawtransactionwithkey's keys) knows none."""
    lookup = getattr(keystore, "get_key_origin", None)
    return None if lookup is None else lookup(keyid)

def _taproot_spend_data(keystore, sigdata, output_key):
    """Core's SignTaproot before signing: the output's internal key and its origin."""
    lookup = getattr(keystore, "get_taproot_internal_key", None)
    internal = None if lookup is None else lookup(output_key)
    if internal is not None:
        sigdata.tap_internal_key = internal
    if sigdata.tap_internal_key:
        origin = keystore.get_key_origin_by_xonly(sigdata.tap_internal_key) if lookup is not None else None
        if origin is not None:
            sigdata.tap_origins.setdefault(sigdata.tap_internal_key, (frozenset(), origin))

def _create_sig(creator, sigdata, keystore, pubkey, script_code, sigversion):
    """Core's CreateSig: an extracted signature for the key first, else a new one."""
    keyid = hash160(pubkey)
    if keyid in sigdata.signatures:
        return sigdata.signatures[keyid][1]
    origin = _key_origin(keystore, keyid)
    if origin is not None:
        sigdata.origins.setdefault(keyid, (pubkey, origin))
    sig = creator.create_sig(keystore, keyid, script_code, sigversion)
    if sig is not None:
        sigdata.signatures[keyid] = (pubkey, sig)
    else:
        sigdata.missing_sigs.append(keyid)
    return sig

def _sign_step(keystore, creator, script_pubkey, sigversion, sigdata):  # noqa: C901 (Core's SignStep)
    """Core's SignStep: (solved, stack, type)."""
    kind, solutions = S.solver(script_pubkey)
    ret = []
    if kind in (S.NONSTANDARD, S.NULL_DATA, S.WITNESS_UNKNOWN):
        return False, ret, kind
    if kind == S.ANCHOR:
        return True, ret, kind
    if kind == S.PUBKEY:
        sig = _create_sig(creator, sigdata, keystore, solutions[0], script_pubkey, sigversion)
        if sig is None:
            return False, ret, kind
        return True, [sig], kind
    if kind == S.PUBKEYHASH:
        pubkey = _get_pubkey(keystore, sigdata, solutions[0])
        if pubkey is None:
            sigdata.missing_pubkeys.append(solutions[0])
            return False, ret, kind
        sig = _create_sig(creator, sigdata, keystore, pubkey, script_pubkey, sigversion)
        if sig is None:
            return False, ret, kind
        return True, [sig, pubkey], kind
    if kind == S.SCRIPTHASH:
        script = _get_script(keystore, sigdata, solutions[0])
        if script is None:
            sigdata.missing_redeem_script = solutions[0]
            return False, ret, kind
        return True, [script], kind
    if kind == S.MULTISIG:
        required = solutions[0][0]
        ret.append(b"")                        # CHECKMULTISIG's extra pop
        for pubkey in solutions[1:-1]:
            # Every key is asked, even beyond m (Core keeps all signatures for PSBT).
            sig = _create_sig(creator, sigdata, keystore, pubkey, script_pubkey, sigversion)
            if sig is not None and len(ret) < required + 1:
                ret.append(sig)
        ok = len(ret) == required + 1
        # Core's padding loop grows the stack and the counter together.
        i = 0
        while i + len(ret) < required + 1:
            ret.append(b"")
            i += 1
        return ok, ret, kind
    if kind == S.WITNESS_V0_KEYHASH:
        return True, [solutions[0]], kind
    if kind == S.WITNESS_V0_SCRIPTHASH:
        # hash160(script) = RIPEMD160(SHA256(script)) = RIPEMD160(program)
        script = _get_script(keystore, sigdata, ripemd160(solutions[0]))
        if script is None:
            sigdata.missing_witness_script = solutions[0]
            return False, ret, kind
        return True, [script], kind
    if kind == S.WITNESS_V1_TAPROOT:
        _taproot_spend_data(keystore, sigdata, solutions[0])
        if not sigdata.taproot_key_path_sig:
            sig = creator.create_taproot_key_path_sig(keystore, solutions[0])
            if sig is not None:
                sigdata.taproot_key_path_sig = sig
        if sigdata.taproot_key_path_sig:
            return True, [sigdata.taproot_key_path_sig], kind
        return False, ret, kind
    return False, ret, kind

def push_all(values):
    """Core's PushAll: the stack as a scriptSig of minimal pushes."""
    out = []
    for v in values:
        if len(v) == 0:
            out.append(b"\x00")
        elif len(v) == 1 and 1 <= v[0] <= 16:
            out.append(bytes((0x50 + v[0],)))
        elif len(v) == 1 and v[0] == 0x81:
            out.append(b"\x4f")
        else:
            out.append(push_data(bytes(v)))
    return b"".join(out)

def produce_signature(keystore, creator, script_pubkey, sigdata, checker=None):
    """Core's ProduceSignature; updates sigdata.script_sig/witness. checker: verify
    the result (the final pass) or None (planning)."""
    if sigdata.complete:
        return True
    solved, result, kind = _sign_step(keystore, creator, script_pubkey, SIGVERSION_BASE, sigdata)
    p2sh = False
    subscript = b""
    if solved and kind == S.SCRIPTHASH:
        subscript = sigdata.redeem_script = result[0]
        solved, result, kind = _sign_step(keystore, creator, subscript, SIGVERSION_BASE, sigdata)
        solved = solved and kind != S.SCRIPTHASH
        p2sh = True
    if solved and kind == S.WITNESS_V0_KEYHASH:
        solved, result, _ = _sign_step(keystore, creator, S.p2pkh(result[0]), SIGVERSION_WITNESS_V0,
                                       sigdata)
        sigdata.witness = result
        sigdata.witness_stage = True
        result = []
    elif solved and kind == S.WITNESS_V0_SCRIPTHASH:
        witness_script = sigdata.witness_script = result[0]
        solved, result, sub = _sign_step(keystore, creator, witness_script, SIGVERSION_WITNESS_V0,
                                         sigdata)
        solved = solved and sub not in (S.SCRIPTHASH, S.WITNESS_V0_SCRIPTHASH,
                                        S.WITNESS_V0_KEYHASH)
        # (Core v26+ then tries a miniscript satisfier when nothing was produced;
        # Quill has none, see the signing README.)
        sigdata.witness = result + [witness_script]
        sigdata.witness_stage = True
        result = []
    elif kind == S.WITNESS_V1_TAPROOT and not p2sh:
        sigdata.witness_stage = True
        if solved:
            sigdata.witness = result
        result = []
    elif solved and kind == S.WITNESS_UNKNOWN:
        sigdata.witness_stage = True
    if not sigdata.witness_stage:
        sigdata.witness = []
    if p2sh:
        result = result + [subscript]
    sigdata.script_sig = push_all(result)
    if checker is None:
        return False
    # Core tests the solution only when there is one (solved && VerifyScript(...)).
    sigdata.complete = solved and verify_script(sigdata.script_sig, script_pubkey, sigdata.witness,
                                                STANDARD_SCRIPT_VERIFY_FLAGS, checker)[0]
    return sigdata.complete

