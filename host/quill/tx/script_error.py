"""Core's ScriptError (script/script_error.h) and ScriptErrorString (script_error.cpp).

Members carry Core's enum names without the SCRIPT_ERR_ prefix. script_tests.json
spells two of them differently (NULLFAIL for SIG_NULLFAIL, UNKNOWN_ERROR for
UNKNOWN); `ScriptError.from_test_name(name)` accepts that spelling and
`err.test_name` gives the script_tests.json spelling and `err.message` Core's human text,
e.g. for the `errors` entries of the signing RPCs. SCRIPTNUM is Core's newer split of UNKNOWN for failed script
number decoding (overflow or non-minimal encoding).
"""
import enum


class ScriptError(enum.Enum):
    OK = "No error"
    UNKNOWN = "unknown error"
    EVAL_FALSE = "Script evaluated without error but finished with a false/empty top stack element"
    OP_RETURN = "OP_RETURN was encountered"
    # Max sizes
    SCRIPT_SIZE = "Script is too big"
    PUSH_SIZE = "Push value size limit exceeded"
    OP_COUNT = "Operation limit exceeded"
    STACK_SIZE = "Stack size limit exceeded"
    SIG_COUNT = "Signature count negative or greater than pubkey count"
    PUBKEY_COUNT = "Pubkey count negative or limit exceeded"
    # Failed verify operations
    VERIFY = "Script failed an OP_VERIFY operation"
    EQUALVERIFY = "Script failed an OP_EQUALVERIFY operation"
    CHECKMULTISIGVERIFY = "Script failed an OP_CHECKMULTISIGVERIFY operation"
    CHECKSIGVERIFY = "Script failed an OP_CHECKSIGVERIFY operation"
    NUMEQUALVERIFY = "Script failed an OP_NUMEQUALVERIFY operation"
    # Logical/format/canonical errors
    BAD_OPCODE = "Opcode missing or not understood"
    DISABLED_OPCODE = "Attempted to use a disabled opcode"
    INVALID_STACK_OPERATION = "Operation not valid with the current stack size"
    INVALID_ALTSTACK_OPERATION = "Operation not valid with the current altstack size"
    UNBALANCED_CONDITIONAL = "Invalid OP_IF construction"
    # CHECKLOCKTIMEVERIFY and CHECKSEQUENCEVERIFY
    NEGATIVE_LOCKTIME = "Negative locktime"
    UNSATISFIED_LOCKTIME = "Locktime requirement not satisfied"
    # Malleability
    SIG_HASHTYPE = "Signature hash type missing or not understood"
    SIG_DER = "Non-canonical DER signature"
    MINIMALDATA = "Data push larger than necessary"
    SIG_PUSHONLY = "Only push operators allowed in signatures"
    SIG_HIGH_S = "Non-canonical signature: S value is unnecessarily high"
    SIG_NULLDUMMY = "Dummy CHECKMULTISIG argument must be zero"
    PUBKEYTYPE = "Public key is neither compressed or uncompressed"
    CLEANSTACK = "Stack size must be exactly one after execution"
    MINIMALIF = "OP_IF/NOTIF argument must be minimal"
    SIG_NULLFAIL = "Signature must be zero for failed CHECK(MULTI)SIG operation"
    # Softfork safeness
    DISCOURAGE_UPGRADABLE_NOPS = "NOPx reserved for soft-fork upgrades"
    DISCOURAGE_UPGRADABLE_WITNESS_PROGRAM = "Witness version reserved for soft-fork upgrades"
    DISCOURAGE_UPGRADABLE_TAPROOT_VERSION = "Taproot version reserved for soft-fork upgrades"
    DISCOURAGE_OP_SUCCESS = "OP_SUCCESSx reserved for soft-fork upgrades"
    DISCOURAGE_UPGRADABLE_PUBKEYTYPE = "Public key version reserved for soft-fork upgrades"
    # Segregated witness
    WITNESS_PROGRAM_WRONG_LENGTH = "Witness program has incorrect length"
    WITNESS_PROGRAM_WITNESS_EMPTY = "Witness program was passed an empty witness"
    WITNESS_PROGRAM_MISMATCH = "Witness program hash mismatch"
    WITNESS_MALLEATED = "Witness requires empty scriptSig"
    WITNESS_MALLEATED_P2SH = "Witness requires only-redeemscript scriptSig"
    WITNESS_UNEXPECTED = "Witness provided for non-witness script"
    WITNESS_PUBKEYTYPE = "Using non-compressed keys in segwit"
    # Taproot
    SCHNORR_SIG_SIZE = "Invalid Schnorr signature size"
    SCHNORR_SIG_HASHTYPE = "Invalid Schnorr signature hash type"
    SCHNORR_SIG = "Invalid Schnorr signature"
    TAPROOT_WRONG_CONTROL_SIZE = "Invalid Taproot control block size"
    TAPSCRIPT_VALIDATION_WEIGHT = "Too much signature validation relative to witness weight"
    TAPSCRIPT_CHECKMULTISIG = "OP_CHECKMULTISIG(VERIFY) is not available in tapscript"
    TAPSCRIPT_MINIMALIF = "OP_IF/NOTIF argument must be minimal in tapscript"
    TAPSCRIPT_EMPTY_PUBKEY = "Empty public key in tapscript"
    # Constant scriptCode
    OP_CODESEPARATOR = "Using OP_CODESEPARATOR in non-witness script"
    SIG_FINDANDDELETE = "Signature is found in scriptCode"
    # Script number decoding (CScriptNum overflow or non-minimal encoding)
    SCRIPTNUM = "Script number overflowed or is non-minimally encoded"

    @property
    def message(self) -> str:
        """Core's ScriptErrorString."""
        return self.value

    @property
    def test_name(self) -> str:
        """The name script_tests.json / Core's script_tests.cpp uses."""
        return _TEST_NAMES.get(self, self.name)

    @classmethod
    def from_test_name(cls, name: str) -> "ScriptError":
        """The member script_tests.json calls `name`; KeyError if none."""
        return _BY_TEST_NAME.get(name) or cls[name]

    def __str__(self):
        return self.value


_TEST_NAMES = {ScriptError.SIG_NULLFAIL: "NULLFAIL", ScriptError.UNKNOWN: "UNKNOWN_ERROR"}
_BY_TEST_NAME = {name: err for err, name in _TEST_NAMES.items()}
