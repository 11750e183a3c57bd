"""Bitcoin Core's script interpreter (script/interpreter.cpp): EvalScript and VerifyScript.

Consensus and policy rules follow Core exactly, including the error each failure
reports (quill.tx.script_error.ScriptError). Rules by source:
  * legacy Script: opcodes, disabled opcodes (CVE-2010-5137), limits (script
    10000 bytes, push 520 bytes, 201 counted opcodes, stack + altstack 1000),
    CScriptNum (4-byte operands, 5 bytes for locktimes), FindAndDelete of
    signatures from the scriptCode, OP_CODESEPARATOR, the CHECKMULTISIG dummy;
  * BIP16 P2SH, BIP65 CHECKLOCKTIMEVERIFY, BIP112 CHECKSEQUENCEVERIFY, BIP66
    strict DER, BIP146 LOW_S/NULLFAIL, BIP147 NULLDUMMY;
  * BIP141/143 witness v0 (P2WPKH, P2WSH), BIP341 taproot key and script path
    spends (control blocks, annex), BIP342 tapscript (OP_CHECKSIGADD,
    OP_SUCCESSx, validation weight budget, empty-pubkey and minimal-IF rules);
  * policy flags: STRICTENC, SIGPUSHONLY, MINIMALDATA, MINIMALIF, CLEANSTACK,
    WITNESS_PUBKEYTYPE, CONST_SCRIPTCODE and the DISCOURAGE_* upgrade hooks.

Signatures, locktimes and sequences are checked through a checker object, as in
Core (BaseSignatureChecker): quill.tx.verify.TransactionSignatureChecker checks
them against a transaction. This module needs no transaction of its own.

API:
    verify_script(script_sig, script_pubkey, witness, flags, checker)
        -> (ok: bool, error: ScriptError)           Core's VerifyScript
    eval_script(stack, script, flags, checker, sigversion=SIGVERSION_BASE,
                execdata=None) -> (ok, error)       Core's EvalScript; `stack`
        (a list of bytes, top last) is updated in place
    BaseSignatureChecker     every check fails (for scripts without a tx)
    SIGVERSION_BASE, SIGVERSION_WITNESS_V0, SIGVERSION_TAPROOT, SIGVERSION_TAPSCRIPT
    ExecutionData            per-input tapscript state handed to the checker
    cast_to_bool(bytes), script_num(bytes, require_minimal, max_size=4),
    encode_script_num(int), push_data(bytes) (CScript() << bytes)
Flags are quill.tx.script_flags bits; invalid combinations raise ValueError
(Core asserts). Scripts and witness items are untrusted bytes: every failure
is a ScriptError value, never an exception.
"""
import hashlib

from coincurve import PublicKeyXOnly

from quill.consensus import SECP256K1_ORDER as _N
from quillfw.crypto.hashes import tagged_hash

from .hashes import hash160, sha256, sha256d
from .opcodes import OP_SUCCESS
from .script import (
    MAX_PUBKEYS_PER_MULTISIG,
    MAX_SCRIPT_ELEMENT_SIZE,
    MAX_SCRIPT_SIZE,
    get_op,
    is_minimal_push,
    is_pay_to_script_hash,
    is_push_only,
    is_valid_signature_encoding,
    p2pkh,
    push_data,
    witness_program,
)
from .script_error import ScriptError as E
from .script_flags import (
    SCRIPT_VERIFY_CHECKLOCKTIMEVERIFY,
    SCRIPT_VERIFY_CHECKSEQUENCEVERIFY,
    SCRIPT_VERIFY_CLEANSTACK,
    SCRIPT_VERIFY_CONST_SCRIPTCODE,
    SCRIPT_VERIFY_DERSIG,
    SCRIPT_VERIFY_DISCOURAGE_OP_SUCCESS,
    SCRIPT_VERIFY_DISCOURAGE_UPGRADABLE_NOPS,
    SCRIPT_VERIFY_DISCOURAGE_UPGRADABLE_PUBKEYTYPE,
    SCRIPT_VERIFY_DISCOURAGE_UPGRADABLE_TAPROOT_VERSION,
    SCRIPT_VERIFY_DISCOURAGE_UPGRADABLE_WITNESS_PROGRAM,
    SCRIPT_VERIFY_LOW_S,
    SCRIPT_VERIFY_MINIMALDATA,
    SCRIPT_VERIFY_MINIMALIF,
    SCRIPT_VERIFY_NULLDUMMY,
    SCRIPT_VERIFY_NULLFAIL,
    SCRIPT_VERIFY_P2SH,
    SCRIPT_VERIFY_SIGPUSHONLY,
    SCRIPT_VERIFY_STRICTENC,
    SCRIPT_VERIFY_TAPROOT,
    SCRIPT_VERIFY_WITNESS,
    SCRIPT_VERIFY_WITNESS_PUBKEYTYPE,
    check_flag_combination,
)

SIGVERSION_BASE = 0
SIGVERSION_WITNESS_V0 = 1
SIGVERSION_TAPROOT = 2
SIGVERSION_TAPSCRIPT = 3

MAX_OPS_PER_SCRIPT = 201
MAX_STACK_SIZE = 1000
LOCKTIME_THRESHOLD = 500000000
SEQUENCE_FINAL = 0xFFFFFFFF
SEQUENCE_LOCKTIME_DISABLE_FLAG = 1 << 31
SEQUENCE_LOCKTIME_TYPE_FLAG = 1 << 22
SEQUENCE_LOCKTIME_MASK = 0x0000FFFF

# BIP341/342
ANNEX_TAG = 0x50
TAPROOT_LEAF_MASK = 0xFE
TAPROOT_LEAF_TAPSCRIPT = 0xC0
TAPROOT_CONTROL_BASE_SIZE = 33
TAPROOT_CONTROL_NODE_SIZE = 32
TAPROOT_CONTROL_MAX_NODE_COUNT = 128
TAPROOT_CONTROL_MAX_SIZE = TAPROOT_CONTROL_BASE_SIZE + TAPROOT_CONTROL_NODE_SIZE * TAPROOT_CONTROL_MAX_NODE_COUNT
VALIDATION_WEIGHT_PER_SIGOP_PASSED = 50
VALIDATION_WEIGHT_OFFSET = 50

# Opcodes, named as in Core's script.h.
OP_0, OP_PUSHDATA4, OP_1NEGATE, OP_1, OP_16 = 0x00, 0x4E, 0x4F, 0x51, 0x60
OP_NOP, OP_IF, OP_NOTIF, OP_ELSE, OP_ENDIF, OP_VERIFY, OP_RETURN = 0x61, 0x63, 0x64, 0x67, 0x68, 0x69, 0x6A
OP_TOALTSTACK, OP_FROMALTSTACK, OP_2DROP, OP_2DUP, OP_3DUP, OP_2OVER, OP_2ROT, OP_2SWAP = range(0x6B, 0x73)
OP_IFDUP, OP_DEPTH, OP_DROP, OP_DUP, OP_NIP, OP_OVER, OP_PICK, OP_ROLL = range(0x73, 0x7B)
OP_ROT, OP_SWAP, OP_TUCK = 0x7B, 0x7C, 0x7D
OP_SIZE, OP_EQUAL, OP_EQUALVERIFY = 0x82, 0x87, 0x88
OP_1ADD, OP_1SUB, OP_NEGATE, OP_ABS, OP_NOT, OP_0NOTEQUAL = 0x8B, 0x8C, 0x8F, 0x90, 0x91, 0x92
OP_ADD, OP_SUB = 0x93, 0x94
OP_BOOLAND, OP_BOOLOR, OP_NUMEQUAL, OP_NUMEQUALVERIFY, OP_NUMNOTEQUAL = range(0x9A, 0x9F)
OP_LESSTHAN, OP_GREATERTHAN, OP_LESSTHANOREQUAL, OP_GREATERTHANOREQUAL = range(0x9F, 0xA3)
OP_MIN, OP_MAX, OP_WITHIN = 0xA3, 0xA4, 0xA5
OP_RIPEMD160, OP_SHA1, OP_SHA256, OP_HASH160, OP_HASH256 = range(0xA6, 0xAB)
OP_CODESEPARATOR, OP_CHECKSIG, OP_CHECKSIGVERIFY = 0xAB, 0xAC, 0xAD
OP_CHECKMULTISIG, OP_CHECKMULTISIGVERIFY = 0xAE, 0xAF
OP_NOP1, OP_CHECKLOCKTIMEVERIFY, OP_CHECKSEQUENCEVERIFY, OP_NOP10 = 0xB0, 0xB1, 0xB2, 0xB9
OP_CHECKSIGADD = 0xBA

# Disabled since 2010 (CVE-2010-5137): fail even in an unexecuted branch.
_DISABLED = frozenset([0x7E, 0x7F, 0x80, 0x81,          # CAT SUBSTR LEFT RIGHT
                       0x83, 0x84, 0x85, 0x86,          # INVERT AND OR XOR
                       0x8D, 0x8E, 0x95, 0x96, 0x97,    # 2MUL 2DIV MUL DIV MOD
                       0x98, 0x99])                     # LSHIFT RSHIFT
_UPGRADABLE_NOPS = frozenset([OP_NOP1, *range(0xB3, OP_NOP10 + 1)])
_UNARY_NUM = frozenset([OP_1ADD, OP_1SUB, OP_NEGATE, OP_ABS, OP_NOT, OP_0NOTEQUAL])
_BINARY_NUM = frozenset([OP_ADD, OP_SUB, OP_BOOLAND, OP_BOOLOR, OP_NUMEQUAL, OP_NUMEQUALVERIFY,
                         OP_NUMNOTEQUAL, OP_LESSTHAN, OP_GREATERTHAN, OP_LESSTHANOREQUAL,
                         OP_GREATERTHANOREQUAL, OP_MIN, OP_MAX])

TRUE = b"\x01"
FALSE = b""


class ScriptFailure(Exception):
    """Internal: aborts evaluation with a ScriptError (the public API returns values)."""

    def __init__(self, error):
        super().__init__(error.name)
        self.error = error


class ExecutionData:
    """Core's ScriptExecutionData: what a taproot spend's signature checks need."""
    __slots__ = ("annex", "tapleaf_hash", "codeseparator_pos", "validation_weight_left")

    def __init__(self):
        self.annex = None                # the annex (0x50...) when present
        self.tapleaf_hash = None         # set for script path spends
        self.codeseparator_pos = 0xFFFFFFFF
        self.validation_weight_left = None


class BaseSignatureChecker:
    """Core's BaseSignatureChecker: no transaction, so every check fails."""

    def check_ecdsa_signature(self, sig, pubkey, script_code, sigversion) -> bool:
        return False

    def check_schnorr_signature(self, sig, pubkey, sigversion, execdata):
        """Return None if valid, else the ScriptError (Core sets serror here)."""
        return E.SCHNORR_SIG

    def check_lock_time(self, lock_time) -> bool:
        return False

    def check_sequence(self, sequence) -> bool:
        return False


# -- values ----------------------------------------------------------------------

def cast_to_bool(v) -> bool:
    """Core's CastToBool: any non-zero byte, except a lone sign bit at the end (-0)."""
    for i in range(len(v)):
        if v[i]:
            return not (i == len(v) - 1 and v[i] == 0x80)
    return False


def script_num(data, require_minimal, max_size=4) -> int:
    """CScriptNum(data, fRequireMinimal, nMaxNumSize): little-endian sign-magnitude."""
    n = len(data)
    if n > max_size:
        raise ScriptFailure(E.SCRIPTNUM)
    if not n:
        return 0
    # Minimal: the top byte (sign bit aside) is non-zero, unless it only makes
    # room for the sign bit of the byte below (e.g. 0xff00 = 255). Rejects -0.
    if require_minimal and not data[-1] & 0x7F and (n == 1 or not data[-2] & 0x80):
        raise ScriptFailure(E.SCRIPTNUM)
    v = int.from_bytes(data, "little")
    if data[-1] & 0x80:
        return -(v & ~(0x80 << (8 * (n - 1))))
    return v


def encode_script_num(v: int) -> bytes:
    """CScriptNum::serialize: minimal little-endian sign-magnitude, 0 is empty."""
    if v == 0:
        return b""
    neg = v < 0
    a = -v if neg else v
    out = bytearray()
    while a:
        out.append(a & 0xFF)
        a >>= 8
    if out[-1] & 0x80:
        out.append(0x80 if neg else 0)
    elif neg:
        out[-1] |= 0x80
    return bytes(out)


def find_and_delete(script: bytes, pattern: bytes):
    """Core's FindAndDelete: remove `pattern` where it starts at an opcode boundary.

    Returns (new script, number of deletions). Matches are only tried at the
    positions where an opcode starts, and repeatedly at the same position.
    """
    if not pattern:
        return script, 0
    found = 0
    out = []
    plen = len(pattern)
    end = len(script)
    pc = pc2 = 0
    while True:
        out.append(script[pc2:pc])
        while end - pc >= plen and script.startswith(pattern, pc):
            pc += plen
            found += 1
        pc2 = pc
        r = get_op(script, pc)
        if r is None:
            break
        pc = r[2]
    if not found:
        return script, 0
    out.append(script[pc2:])
    return b"".join(out), found


# -- encodings (Core's CheckSignatureEncoding / CheckPubKeyEncoding) -----------------

_HALF_N = _N // 2


def parse_der_lax(sig):
    """Core's ecdsa_signature_parse_der_lax (pubkey.cpp): (r, s), or None.

    Accepts BER-ish encodings that pre-BIP66 consensus allowed; a component
    too large for the curve order parses as (0, 0), an invalid signature.
    """
    n = len(sig)
    pos = 0
    if pos == n or sig[pos] != 0x30:
        return None
    pos += 1
    if pos == n:
        return None
    lenbyte = sig[pos]
    pos += 1
    if lenbyte & 0x80:
        lenbyte -= 0x80
        if lenbyte > n - pos:
            return None
        pos += lenbyte
    values = []
    for _ in range(2):
        if pos == n or sig[pos] != 0x02:
            return None
        pos += 1
        if pos == n:
            return None
        lenbyte = sig[pos]
        pos += 1
        if lenbyte & 0x80:
            lenbyte -= 0x80
            if lenbyte > n - pos:
                return None
            while lenbyte > 0 and sig[pos] == 0:
                pos += 1
                lenbyte -= 1
            if lenbyte >= 4:
                return None
            vlen = 0
            while lenbyte > 0:
                vlen = (vlen << 8) + sig[pos]
                pos += 1
                lenbyte -= 1
        else:
            vlen = lenbyte
        if vlen > n - pos:
            return None
        values.append(sig[pos:pos + vlen])
        pos += vlen
    ints = []
    for v in values:
        v = v.lstrip(b"\x00")
        if len(v) > 32:
            return 0, 0
        ints.append(int.from_bytes(v, "big"))
    r, s = ints
    if r >= _N or s >= _N:
        return 0, 0
    return r, s


def is_low_der_signature(sig) -> bool:
    """Core's IsLowDERSignature body after the DER check: S <= n/2."""
    rs = parse_der_lax(sig[:-1])
    return rs is not None and rs[1] <= _HALF_N


def _check_signature_encoding(sig, flags):
    # An empty signature is the compact way to fail a CHECK(MULTI)SIG on purpose.
    if not sig:
        return
    if flags & (SCRIPT_VERIFY_DERSIG | SCRIPT_VERIFY_LOW_S | SCRIPT_VERIFY_STRICTENC):
        if not is_valid_signature_encoding(sig):
            raise ScriptFailure(E.SIG_DER)
    if flags & SCRIPT_VERIFY_LOW_S and not is_low_der_signature(sig):
        raise ScriptFailure(E.SIG_HIGH_S)
    if flags & SCRIPT_VERIFY_STRICTENC:
        base = sig[-1] & ~0x80
        if base < 1 or base > 3:
            raise ScriptFailure(E.SIG_HASHTYPE)


def _is_compressed_or_uncompressed_pubkey(key) -> bool:
    n = len(key)
    if n < 33:
        return False
    if key[0] == 0x04:
        return n == 65
    if key[0] in (0x02, 0x03):
        return n == 33
    return False


def _check_pubkey_encoding(key, flags, sigversion):
    if flags & SCRIPT_VERIFY_STRICTENC and not _is_compressed_or_uncompressed_pubkey(key):
        raise ScriptFailure(E.PUBKEYTYPE)
    # BIP143 policy: only compressed keys in segwit v0.
    if (flags & SCRIPT_VERIFY_WITNESS_PUBKEYTYPE and sigversion == SIGVERSION_WITNESS_V0
            and not (len(key) == 33 and key[0] in (0x02, 0x03))):
        raise ScriptFailure(E.WITNESS_PUBKEYTYPE)


# -- signature opcodes ----------------------------------------------------------

def _checksig_pre_tapscript(sig, pubkey, script_code, flags, checker, sigversion) -> bool:
    """Core's EvalChecksigPreTapscript; script_code starts at the last OP_CODESEPARATOR."""
    if sigversion == SIGVERSION_BASE:
        # Legacy scriptCode never contains the signature itself.
        script_code, found = find_and_delete(script_code, push_data(sig))
        if found and flags & SCRIPT_VERIFY_CONST_SCRIPTCODE:
            raise ScriptFailure(E.SIG_FINDANDDELETE)
    _check_signature_encoding(sig, flags)
    _check_pubkey_encoding(pubkey, flags, sigversion)
    ok = checker.check_ecdsa_signature(sig, pubkey, script_code, sigversion)
    if not ok and flags & SCRIPT_VERIFY_NULLFAIL and sig:
        raise ScriptFailure(E.SIG_NULLFAIL)
    return ok


def _checksig_tapscript(sig, pubkey, flags, checker, execdata) -> bool:
    """Core's EvalChecksigTapscript (BIP342). The order of the rules is consensus."""
    success = bool(sig)
    if success:
        # Every attempted signature spends budget, even with an unknown key type.
        execdata.validation_weight_left -= VALIDATION_WEIGHT_PER_SIGOP_PASSED
        if execdata.validation_weight_left < 0:
            raise ScriptFailure(E.TAPSCRIPT_VALIDATION_WEIGHT)
    if not pubkey:
        raise ScriptFailure(E.TAPSCRIPT_EMPTY_PUBKEY)
    if len(pubkey) == 32:
        if success:
            err = checker.check_schnorr_signature(sig, pubkey, SIGVERSION_TAPSCRIPT, execdata)
            if err is not None:
                raise ScriptFailure(err)
    elif flags & SCRIPT_VERIFY_DISCOURAGE_UPGRADABLE_PUBKEYTYPE:
        raise ScriptFailure(E.DISCOURAGE_UPGRADABLE_PUBKEYTYPE)
    return success


def _checkmultisig(stack, script_code, flags, checker, sigversion, require_minimal, op_count):
    """OP_CHECKMULTISIG: ([sig ...] n_sigs [pubkey ...] n_keys -- bool). Returns
    (success, new op count). Arguments are read from the top of the stack."""
    i = 1
    if len(stack) < i:
        raise ScriptFailure(E.INVALID_STACK_OPERATION)
    n_keys = script_num(stack[-i], require_minimal)
    if n_keys < 0 or n_keys > MAX_PUBKEYS_PER_MULTISIG:
        raise ScriptFailure(E.PUBKEY_COUNT)
    op_count += n_keys
    if op_count > MAX_OPS_PER_SCRIPT:
        raise ScriptFailure(E.OP_COUNT)
    i += 1
    ikey = i
    # ikey2: how many items from the top are not signatures (for the NULLFAIL cleanup).
    ikey2 = n_keys + 2
    i += n_keys
    if len(stack) < i:
        raise ScriptFailure(E.INVALID_STACK_OPERATION)
    n_sigs = script_num(stack[-i], require_minimal)
    if n_sigs < 0 or n_sigs > n_keys:
        raise ScriptFailure(E.SIG_COUNT)
    i += 1
    isig = i
    i += n_sigs
    if len(stack) < i:
        raise ScriptFailure(E.INVALID_STACK_OPERATION)

    if sigversion == SIGVERSION_BASE:
        for k in range(n_sigs):
            script_code, found = find_and_delete(script_code, push_data(stack[-isig - k]))
            if found and flags & SCRIPT_VERIFY_CONST_SCRIPTCODE:
                raise ScriptFailure(E.SIG_FINDANDDELETE)

    success = True
    while success and n_sigs > 0:
        sig = stack[-isig]
        key = stack[-ikey]
        # Encoding is checked pair by pair, so with STRICTENC the order in which
        # keys and signatures are tried is observable (Core's tests rely on it).
        _check_signature_encoding(sig, flags)
        _check_pubkey_encoding(key, flags, sigversion)
        if checker.check_ecdsa_signature(sig, key, script_code, sigversion):
            isig += 1
            n_sigs -= 1
        ikey += 1
        n_keys -= 1
        # More signatures left than keys: too many failed already.
        if n_sigs > n_keys:
            success = False

    while i > 1:
        i -= 1
        if not success and flags & SCRIPT_VERIFY_NULLFAIL and not ikey2 and stack[-1]:
            raise ScriptFailure(E.SIG_NULLFAIL)
        if ikey2 > 0:
            ikey2 -= 1
        stack.pop()
    # The historical extra item CHECKMULTISIG consumes (BIP147 makes it empty).
    if not stack:
        raise ScriptFailure(E.INVALID_STACK_OPERATION)
    if flags & SCRIPT_VERIFY_NULLDUMMY and stack[-1]:
        raise ScriptFailure(E.SIG_NULLDUMMY)
    stack.pop()
    return success, op_count


# -- EvalScript -----------------------------------------------------------------

def _hash(op, v):
    if op == OP_RIPEMD160:
        return hashlib.new("ripemd160", v).digest()
    if op == OP_SHA1:
        return hashlib.sha1(v).digest()
    if op == OP_SHA256:
        return sha256(v)
    if op == OP_HASH160:
        return hash160(v)
    return sha256d(v)


def _numeric_binary(op, a, b):
    if op == OP_ADD:
        return a + b
    if op == OP_SUB:
        return a - b
    if op == OP_BOOLAND:
        return int(a != 0 and b != 0)
    if op == OP_BOOLOR:
        return int(a != 0 or b != 0)
    if op in (OP_NUMEQUAL, OP_NUMEQUALVERIFY):
        return int(a == b)
    if op == OP_NUMNOTEQUAL:
        return int(a != b)
    if op == OP_LESSTHAN:
        return int(a < b)
    if op == OP_GREATERTHAN:
        return int(a > b)
    if op == OP_LESSTHANOREQUAL:
        return int(a <= b)
    if op == OP_GREATERTHANOREQUAL:
        return int(a >= b)
    if op == OP_MIN:
        return min(a, b)
    return max(a, b)


def _numeric_unary(op, a):
    if op == OP_1ADD:
        return a + 1
    if op == OP_1SUB:
        return a - 1
    if op == OP_NEGATE:
        return -a
    if op == OP_ABS:
        return abs(a)
    if op == OP_NOT:
        return int(a == 0)
    return int(a != 0)


def _need(stack, n):
    if len(stack) < n:
        raise ScriptFailure(E.INVALID_STACK_OPERATION)


def _eval(stack, script, flags, checker, sigversion, execdata):  # noqa: C901 (Core's EvalScript, one switch)
    """Core's EvalScript, raising ScriptFailure."""
    legacy_limits = sigversion in (SIGVERSION_BASE, SIGVERSION_WITNESS_V0)
    if legacy_limits and len(script) > MAX_SCRIPT_SIZE:
        raise ScriptFailure(E.SCRIPT_SIZE)
    require_minimal = bool(flags & SCRIPT_VERIFY_MINIMALDATA)
    altstack = []
    vf_exec = []          # one entry per open IF; executing iff no False entry
    false_count = 0
    op_count = 0
    begin_code_hash = 0   # the scriptCode starts after the last executed OP_CODESEPARATOR
    opcode_pos = 0
    execdata.codeseparator_pos = 0xFFFFFFFF
    end = len(script)
    pc = 0
    while pc < end:
        executing = false_count == 0
        r = get_op(script, pc)
        if r is None:
            raise ScriptFailure(E.BAD_OPCODE)
        op, data, pc = r
        if data is not None and len(data) > MAX_SCRIPT_ELEMENT_SIZE:
            raise ScriptFailure(E.PUSH_SIZE)
        # OP_RESERVED (0x50) and the pushes do not count towards the limit.
        if legacy_limits and op > OP_16:
            op_count += 1
            if op_count > MAX_OPS_PER_SCRIPT:
                raise ScriptFailure(E.OP_COUNT)
        if op in _DISABLED:
            raise ScriptFailure(E.DISABLED_OPCODE)
        if (op == OP_CODESEPARATOR and sigversion == SIGVERSION_BASE
                and flags & SCRIPT_VERIFY_CONST_SCRIPTCODE):
            raise ScriptFailure(E.OP_CODESEPARATOR)

        if executing and op <= OP_PUSHDATA4:
            if require_minimal and not is_minimal_push(data, op):
                raise ScriptFailure(E.MINIMALDATA)
            stack.append(data)
        elif executing or OP_IF <= op <= OP_ENDIF:
            if op == OP_1NEGATE or OP_1 <= op <= OP_16:
                stack.append(encode_script_num(op - (OP_1 - 1)))
            elif op == OP_NOP:
                pass
            elif op == OP_CHECKLOCKTIMEVERIFY:
                # BIP65; without the flag a plain OP_NOP2 (never "discouraged", as
                # in Core since the flags became backward compatible).
                if flags & SCRIPT_VERIFY_CHECKLOCKTIMEVERIFY:
                    _need(stack, 1)
                    # 5 bytes: locktimes reach 2^32 - 1, beyond 4-byte script numbers.
                    lock_time = script_num(stack[-1], require_minimal, 5)
                    if lock_time < 0:
                        raise ScriptFailure(E.NEGATIVE_LOCKTIME)
                    if not checker.check_lock_time(lock_time):
                        raise ScriptFailure(E.UNSATISFIED_LOCKTIME)
            elif op == OP_CHECKSEQUENCEVERIFY:
                # BIP112; without the flag it is OP_NOP3.
                if flags & SCRIPT_VERIFY_CHECKSEQUENCEVERIFY:
                    _need(stack, 1)
                    sequence = script_num(stack[-1], require_minimal, 5)
                    if sequence < 0:
                        raise ScriptFailure(E.NEGATIVE_LOCKTIME)
                    # With the disable flag set the operand means "no relative lock".
                    if not sequence & SEQUENCE_LOCKTIME_DISABLE_FLAG:
                        if not checker.check_sequence(sequence):
                            raise ScriptFailure(E.UNSATISFIED_LOCKTIME)
            elif op in _UPGRADABLE_NOPS:
                if flags & SCRIPT_VERIFY_DISCOURAGE_UPGRADABLE_NOPS:
                    raise ScriptFailure(E.DISCOURAGE_UPGRADABLE_NOPS)
            elif op == OP_IF or op == OP_NOTIF:
                value = False
                if executing:
                    # Current Core reports a missing condition as a stack error
                    # (older releases said UNBALANCED_CONDITIONAL).
                    _need(stack, 1)
                    top = stack[-1]
                    minimal = len(top) == 0 or (len(top) == 1 and top[0] == 1)
                    # Consensus in tapscript, policy (MINIMALIF) in witness v0.
                    if sigversion == SIGVERSION_TAPSCRIPT and not minimal:
                        raise ScriptFailure(E.TAPSCRIPT_MINIMALIF)
                    if (sigversion == SIGVERSION_WITNESS_V0 and flags & SCRIPT_VERIFY_MINIMALIF
                            and not minimal):
                        raise ScriptFailure(E.MINIMALIF)
                    value = cast_to_bool(top)
                    if op == OP_NOTIF:
                        value = not value
                    stack.pop()
                vf_exec.append(value)
                if not value:
                    false_count += 1
            elif op == OP_ELSE:
                if not vf_exec:
                    raise ScriptFailure(E.UNBALANCED_CONDITIONAL)
                flipped = not vf_exec[-1]
                vf_exec[-1] = flipped
                false_count += -1 if flipped else 1
            elif op == OP_ENDIF:
                if not vf_exec:
                    raise ScriptFailure(E.UNBALANCED_CONDITIONAL)
                if not vf_exec.pop():
                    false_count -= 1
            elif op == OP_VERIFY:
                _need(stack, 1)
                if not cast_to_bool(stack[-1]):
                    raise ScriptFailure(E.VERIFY)
                stack.pop()
            elif op == OP_RETURN:
                raise ScriptFailure(E.OP_RETURN)

            # Stack operations
            elif op == OP_TOALTSTACK:
                _need(stack, 1)
                altstack.append(stack.pop())
            elif op == OP_FROMALTSTACK:
                if not altstack:
                    raise ScriptFailure(E.INVALID_ALTSTACK_OPERATION)
                stack.append(altstack.pop())
            elif op == OP_2DROP:
                _need(stack, 2)
                del stack[-2:]
            elif op == OP_2DUP:
                _need(stack, 2)
                stack.extend(stack[-2:])
            elif op == OP_3DUP:
                _need(stack, 3)
                stack.extend(stack[-3:])
            elif op == OP_2OVER:
                _need(stack, 4)
                stack.extend(stack[-4:-2])
            elif op == OP_2ROT:
                _need(stack, 6)
                moved = stack[-6:-4]
                del stack[-6:-4]
                stack.extend(moved)
            elif op == OP_2SWAP:
                _need(stack, 4)
                stack[-4:] = stack[-2:] + stack[-4:-2]
            elif op == OP_IFDUP:
                _need(stack, 1)
                if cast_to_bool(stack[-1]):
                    stack.append(stack[-1])
            elif op == OP_DEPTH:
                stack.append(encode_script_num(len(stack)))
            elif op == OP_DROP:
                _need(stack, 1)
                stack.pop()
            elif op == OP_DUP:
                _need(stack, 1)
                stack.append(stack[-1])
            elif op == OP_NIP:
                _need(stack, 2)
                del stack[-2]
            elif op == OP_OVER:
                _need(stack, 2)
                stack.append(stack[-2])
            elif op == OP_PICK or op == OP_ROLL:
                _need(stack, 2)
                n = script_num(stack[-1], require_minimal)
                stack.pop()
                if n < 0 or n >= len(stack):
                    raise ScriptFailure(E.INVALID_STACK_OPERATION)
                v = stack[-n - 1]
                if op == OP_ROLL:
                    del stack[-n - 1]
                stack.append(v)
            elif op == OP_ROT:
                _need(stack, 3)
                stack.append(stack.pop(-3))
            elif op == OP_SWAP:
                _need(stack, 2)
                stack[-2], stack[-1] = stack[-1], stack[-2]
            elif op == OP_TUCK:
                _need(stack, 2)
                stack.insert(-2, stack[-1])
            elif op == OP_SIZE:
                _need(stack, 1)
                stack.append(encode_script_num(len(stack[-1])))

            # Bitwise logic
            elif op == OP_EQUAL or op == OP_EQUALVERIFY:
                _need(stack, 2)
                equal = stack.pop() == stack.pop()
                stack.append(TRUE if equal else FALSE)
                if op == OP_EQUALVERIFY:
                    if not equal:
                        raise ScriptFailure(E.EQUALVERIFY)
                    stack.pop()

            # Numeric
            elif op in _UNARY_NUM:
                _need(stack, 1)
                v = _numeric_unary(op, script_num(stack[-1], require_minimal))
                stack[-1] = encode_script_num(v)
            elif op in _BINARY_NUM:
                _need(stack, 2)
                a = script_num(stack[-2], require_minimal)
                b = script_num(stack[-1], require_minimal)
                del stack[-2:]
                stack.append(encode_script_num(_numeric_binary(op, a, b)))
                if op == OP_NUMEQUALVERIFY:
                    if not cast_to_bool(stack[-1]):
                        raise ScriptFailure(E.NUMEQUALVERIFY)
                    stack.pop()
            elif op == OP_WITHIN:
                _need(stack, 3)
                x = script_num(stack[-3], require_minimal)
                lo = script_num(stack[-2], require_minimal)
                hi = script_num(stack[-1], require_minimal)
                del stack[-3:]
                stack.append(TRUE if lo <= x < hi else FALSE)

            # Crypto
            elif OP_RIPEMD160 <= op <= OP_HASH256:
                _need(stack, 1)
                stack[-1] = _hash(op, stack[-1])
            elif op == OP_CODESEPARATOR:
                begin_code_hash = pc
                execdata.codeseparator_pos = opcode_pos
            elif op == OP_CHECKSIG or op == OP_CHECKSIGVERIFY:
                _need(stack, 2)
                sig, key = stack[-2], stack[-1]
                if sigversion == SIGVERSION_TAPSCRIPT:
                    ok = _checksig_tapscript(sig, key, flags, checker, execdata)
                else:
                    ok = _checksig_pre_tapscript(sig, key, script[begin_code_hash:], flags,
                                                 checker, sigversion)
                del stack[-2:]
                stack.append(TRUE if ok else FALSE)
                if op == OP_CHECKSIGVERIFY:
                    if not ok:
                        raise ScriptFailure(E.CHECKSIGVERIFY)
                    stack.pop()
            elif op == OP_CHECKSIGADD:
                # BIP342 only; an unknown opcode before tapscript.
                if sigversion != SIGVERSION_TAPSCRIPT:
                    raise ScriptFailure(E.BAD_OPCODE)
                _need(stack, 3)
                sig = stack[-3]
                num = script_num(stack[-2], require_minimal)
                ok = _checksig_tapscript(sig, stack[-1], flags, checker, execdata)
                del stack[-3:]
                stack.append(encode_script_num(num + (1 if ok else 0)))
            elif op == OP_CHECKMULTISIG or op == OP_CHECKMULTISIGVERIFY:
                if sigversion == SIGVERSION_TAPSCRIPT:
                    raise ScriptFailure(E.TAPSCRIPT_CHECKMULTISIG)
                ok, op_count = _checkmultisig(stack, script[begin_code_hash:], flags, checker,
                                              sigversion, require_minimal, op_count)
                stack.append(TRUE if ok else FALSE)
                if op == OP_CHECKMULTISIGVERIFY:
                    if not ok:
                        raise ScriptFailure(E.CHECKMULTISIGVERIFY)
                    stack.pop()
            else:
                raise ScriptFailure(E.BAD_OPCODE)

        if len(stack) + len(altstack) > MAX_STACK_SIZE:
            raise ScriptFailure(E.STACK_SIZE)
        opcode_pos += 1
    if vf_exec:
        raise ScriptFailure(E.UNBALANCED_CONDITIONAL)


def eval_script(stack, script, flags, checker, sigversion=SIGVERSION_BASE, execdata=None):
    """Core's EvalScript: (ok, error); `stack` is updated in place."""
    try:
        _eval(stack, script, flags, checker, sigversion,
              ExecutionData() if execdata is None else execdata)
    except ScriptFailure as f:
        return False, f.error
    return True, E.OK


# -- witness programs -------------------------------------------------------------

def _execute_witness_script(stack, script, flags, sigversion, checker, execdata):
    """Core's ExecuteWitnessScript: the witness stack runs the script, then must
    leave exactly one true item (an implicit CLEANSTACK)."""
    if sigversion == SIGVERSION_TAPSCRIPT:
        # An OP_SUCCESSx anywhere (even unreachable) makes the spend valid, before
        # any other rule, stack limits included (BIP342).
        pc = 0
        while pc < len(script):
            r = get_op(script, pc)
            if r is None:
                raise ScriptFailure(E.BAD_OPCODE)
            if r[0] in OP_SUCCESS:
                if flags & SCRIPT_VERIFY_DISCOURAGE_OP_SUCCESS:
                    raise ScriptFailure(E.DISCOURAGE_OP_SUCCESS)
                return
            pc = r[2]
        if len(stack) > MAX_STACK_SIZE:
            raise ScriptFailure(E.STACK_SIZE)
    for item in stack:
        if len(item) > MAX_SCRIPT_ELEMENT_SIZE:
            raise ScriptFailure(E.PUSH_SIZE)
    _eval(stack, script, flags, checker, sigversion, execdata)
    if len(stack) != 1:
        raise ScriptFailure(E.CLEANSTACK)
    if not cast_to_bool(stack[-1]):
        raise ScriptFailure(E.EVAL_FALSE)


def _compact_size_len(n):
    return 1 if n < 0xFD else 3 if n <= 0xFFFF else 5 if n <= 0xFFFFFFFF else 9


def _serialized_witness_size(witness):
    """GetSerializeSize of the witness stack, which sets the BIP342 sigop budget."""
    return _compact_size_len(len(witness)) + sum(_compact_size_len(len(w)) + len(w)
                                                  for w in witness)


def tapleaf_hash(leaf_version, script):
    """BIP341: hash_TapLeaf(leaf_version || compact_size(len(script)) || script)."""
    n = len(script)
    size = (bytes((n,)) if n < 0xFD else b"\xfd" + n.to_bytes(2, "little") if n <= 0xFFFF
            else b"\xfe" + n.to_bytes(4, "little"))
    return tagged_hash("TapLeaf", bytes((leaf_version,)) + size + script)


def taproot_merkle_root(control, leaf_hash):
    """BIP341: fold the control block's path into the root, smaller hash first."""
    k = leaf_hash
    for pos in range(TAPROOT_CONTROL_BASE_SIZE, len(control), TAPROOT_CONTROL_NODE_SIZE):
        node = control[pos:pos + TAPROOT_CONTROL_NODE_SIZE]
        k = tagged_hash("TapBranch", k + node if k < node else node + k)
    return k


def _verify_taproot_commitment(control, program, leaf_hash):
    """Core's VerifyTaprootCommitment: the output key is the internal key tweaked
    with the Merkle root, with the parity the control block claims."""
    merkle_root = taproot_merkle_root(control, leaf_hash)
    internal = control[1:TAPROOT_CONTROL_BASE_SIZE]
    try:
        q = PublicKeyXOnly(bytes(internal))
        q.tweak_add(tagged_hash("TapTweak", bytes(internal) + merkle_root))
    except ValueError:
        # Internal key not on the curve, or a tweak >= n: no valid commitment.
        return False
    return q.format() == bytes(program) and q.parity == bool(control[0] & 1)


def _verify_witness_program(witness, version, program, flags, checker, is_p2sh):
    """Core's VerifyWitnessProgram."""
    stack = list(witness)
    execdata = ExecutionData()
    if version == 0:
        if len(program) == 32:
            # BIP141 P2WSH: the last item is the script, committed to by SHA256.
            if not stack:
                raise ScriptFailure(E.WITNESS_PROGRAM_WITNESS_EMPTY)
            script = stack.pop()
            if sha256(script) != program:
                raise ScriptFailure(E.WITNESS_PROGRAM_MISMATCH)
            _execute_witness_script(stack, script, flags, SIGVERSION_WITNESS_V0, checker, execdata)
        elif len(program) == 20:
            # BIP141 P2WPKH: exactly <sig> <pubkey>, run through the implied P2PKH script.
            if len(stack) != 2:
                raise ScriptFailure(E.WITNESS_PROGRAM_MISMATCH)
            script = p2pkh(program)   # BIP143: P2WPKH's scriptCode
            _execute_witness_script(stack, script, flags, SIGVERSION_WITNESS_V0, checker, execdata)
        else:
            raise ScriptFailure(E.WITNESS_PROGRAM_WRONG_LENGTH)
    elif version == 1 and len(program) == 32 and not is_p2sh:
        # BIP341 taproot.
        if not flags & SCRIPT_VERIFY_TAPROOT:
            return
        if not stack:
            raise ScriptFailure(E.WITNESS_PROGRAM_WITNESS_EMPTY)
        if len(stack) >= 2 and stack[-1] and stack[-1][0] == ANNEX_TAG:
            execdata.annex = stack.pop()
        if len(stack) == 1:
            # Key path: the single item is a signature for the output key.
            err = checker.check_schnorr_signature(stack[0], program, SIGVERSION_TAPROOT, execdata)
            if err is not None:
                raise ScriptFailure(err)
            return
        # Script path: ... <script> <control block>.
        control = stack.pop()
        script = stack.pop()
        if (len(control) < TAPROOT_CONTROL_BASE_SIZE or len(control) > TAPROOT_CONTROL_MAX_SIZE
                or (len(control) - TAPROOT_CONTROL_BASE_SIZE) % TAPROOT_CONTROL_NODE_SIZE):
            raise ScriptFailure(E.TAPROOT_WRONG_CONTROL_SIZE)
        leaf_version = control[0] & TAPROOT_LEAF_MASK
        execdata.tapleaf_hash = tapleaf_hash(leaf_version, script)
        if not _verify_taproot_commitment(control, program, execdata.tapleaf_hash):
            raise ScriptFailure(E.WITNESS_PROGRAM_MISMATCH)
        if leaf_version == TAPROOT_LEAF_TAPSCRIPT:
            # BIP342 budget: 50 per signature, from the whole witness's size + 50.
            execdata.validation_weight_left = (_serialized_witness_size(witness)
                                               + VALIDATION_WEIGHT_OFFSET)
            _execute_witness_script(stack, script, flags, SIGVERSION_TAPSCRIPT, checker, execdata)
            return
        if flags & SCRIPT_VERIFY_DISCOURAGE_UPGRADABLE_TAPROOT_VERSION:
            raise ScriptFailure(E.DISCOURAGE_UPGRADABLE_TAPROOT_VERSION)
    elif not is_p2sh and version == 1 and program == b"\x4e\x73":
        # Pay-to-anchor (BIP-less policy output): anyone can spend, not "upgradable".
        return
    elif flags & SCRIPT_VERIFY_DISCOURAGE_UPGRADABLE_WITNESS_PROGRAM:
        raise ScriptFailure(E.DISCOURAGE_UPGRADABLE_WITNESS_PROGRAM)
    # Other versions and sizes are anyone-can-spend, for future soft forks.


# -- VerifyScript -----------------------------------------------------------------

def _verify(script_sig, script_pubkey, witness, flags, checker):
    if flags & SCRIPT_VERIFY_SIGPUSHONLY and not is_push_only(script_sig):
        raise ScriptFailure(E.SIG_PUSHONLY)
    # scriptSig and scriptPubKey run one after the other on the same stack,
    # never concatenated (CVE-2010-5141).
    stack = []
    _eval(stack, script_sig, flags, checker, SIGVERSION_BASE, ExecutionData())
    stack_copy = list(stack) if flags & SCRIPT_VERIFY_P2SH else None
    _eval(stack, script_pubkey, flags, checker, SIGVERSION_BASE, ExecutionData())
    if not stack or not cast_to_bool(stack[-1]):
        raise ScriptFailure(E.EVAL_FALSE)

    had_witness = False
    if flags & SCRIPT_VERIFY_WITNESS:
        wp = witness_program(script_pubkey)
        if wp is not None:
            had_witness = True
            # Exactly empty, or the scriptSig would be malleable.
            if script_sig:
                raise ScriptFailure(E.WITNESS_MALLEATED)
            _verify_witness_program(witness, wp[0], wp[1], flags, checker, False)
            # The stack is not clean for witness programs; CLEANSTACK must not see it.
            del stack[1:]

    if flags & SCRIPT_VERIFY_P2SH and is_pay_to_script_hash(script_pubkey):
        # BIP16: the scriptSig pushes the redeem script and its arguments.
        if not is_push_only(script_sig):
            raise ScriptFailure(E.SIG_PUSHONLY)
        stack = stack_copy
        redeem_script = stack.pop()
        _eval(stack, redeem_script, flags, checker, SIGVERSION_BASE, ExecutionData())
        if not stack or not cast_to_bool(stack[-1]):
            raise ScriptFailure(E.EVAL_FALSE)
        if flags & SCRIPT_VERIFY_WITNESS:
            wp = witness_program(redeem_script)
            if wp is not None:
                had_witness = True
                # Exactly one push of the redeem script, or it would be malleable.
                if script_sig != push_data(redeem_script):
                    raise ScriptFailure(E.WITNESS_MALLEATED_P2SH)
                _verify_witness_program(witness, wp[0], wp[1], flags, checker, True)
                del stack[1:]

    # After P2SH and witness evaluation: the scriptSig of a P2SH spend leaves items
    # behind until the redeem script has consumed them.
    if flags & SCRIPT_VERIFY_CLEANSTACK and len(stack) != 1:
        raise ScriptFailure(E.CLEANSTACK)
    if flags & SCRIPT_VERIFY_WITNESS and not had_witness and witness:
        raise ScriptFailure(E.WITNESS_UNEXPECTED)


def verify_script(script_sig, script_pubkey, witness, flags, checker):
    """Core's VerifyScript: (True, OK) or (False, the ScriptError)."""
    check_flag_combination(flags)
    try:
        _verify(bytes(script_sig), bytes(script_pubkey), [bytes(w) for w in witness or ()],
                flags, checker)
    except ScriptFailure as f:
        return False, f.error
    return True, E.OK
