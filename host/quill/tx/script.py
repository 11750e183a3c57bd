"""Script parsing and classification as Core does it (script/script.cpp, script/solver.cpp).

`get_op` is Core's GetOp; `script_to_asm` is core_io's ScriptToAsmStr;
`solver` is Solver() and returns Core's TxoutType name with its solutions.
"""
from quillfw.script import get_op as _get_script_op

from .hashes import hash160, sha256
from .opcodes import (
    MAX_OPCODE,
    OP_0,
    OP_1,
    OP_1NEGATE,
    OP_16,
    OP_CHECKMULTISIG,
    OP_CHECKSIGADD,
    OP_NAMES,
    OP_PUSHDATA1,
    OP_PUSHDATA2,
    OP_PUSHDATA4,
    OP_RETURN,
    OP_SUCCESS,
)

MAX_SCRIPT_SIZE = 10000
MAX_SCRIPT_ELEMENT_SIZE = 520
MAX_PUBKEYS_PER_MULTISIG = 20

# Output types, spelled as GetTxnOutputType prints them.
NONSTANDARD = "nonstandard"
ANCHOR = "anchor"
PUBKEY = "pubkey"
PUBKEYHASH = "pubkeyhash"
SCRIPTHASH = "scripthash"
MULTISIG = "multisig"
NULL_DATA = "nulldata"
WITNESS_V0_KEYHASH = "witness_v0_keyhash"
WITNESS_V0_SCRIPTHASH = "witness_v0_scripthash"
WITNESS_V1_TAPROOT = "witness_v1_taproot"
WITNESS_UNKNOWN = "witness_unknown"

SIGHASH_NAMES = {0x01: "ALL", 0x02: "NONE", 0x03: "SINGLE", 0x81: "ALL|ANYONECANPAY",
                 0x82: "NONE|ANYONECANPAY", 0x83: "SINGLE|ANYONECANPAY"}


def get_op(script: bytes, pc: int):
    """Core's GetOp at `pc`: (opcode, push data or None, next pc), or None if a push runs off the end.

    The parsing rule itself is the firmware's (quillfw.script.get_op,
    Core's GetScriptOp), so host and device read scripts identically.
    """
    op, start, next_pc = _get_script_op(script, pc)
    if op is None:
        return None
    return op, (script[start:next_pc] if op <= OP_PUSHDATA4 else None), next_pc


def push_data(data: bytes) -> bytes:
    """CScript() << data: the shortest push of exactly these bytes (no OP_N)."""
    n = len(data)
    if n < 0x4C:
        return bytes((n,)) + data
    if n <= 0xFF:
        return b"\x4c" + bytes((n,)) + data
    if n <= 0xFFFF:
        return b"\x4d" + n.to_bytes(2, "little") + data
    return b"\x4e" + n.to_bytes(4, "little") + data


# -- output script templates (Core's GetScriptForDestination, BIP16/141/341) ------------


def p2pkh(keyhash: bytes) -> bytes:
    """OP_DUP OP_HASH160 <20-byte key hash> OP_EQUALVERIFY OP_CHECKSIG."""
    return b"\x76\xa9\x14" + keyhash + b"\x88\xac"


def p2sh(script_hash: bytes) -> bytes:
    """BIP16: OP_HASH160 <20-byte script hash> OP_EQUAL."""
    return b"\xa9\x14" + script_hash + b"\x87"


def p2wpkh(keyhash: bytes) -> bytes:
    """BIP141 P2WPKH: OP_0 <20-byte key hash>."""
    return b"\x00\x14" + keyhash


def p2wsh(script_hash: bytes) -> bytes:
    """BIP141 P2WSH: OP_0 <32-byte SHA256 of the witness script>."""
    return b"\x00\x20" + script_hash


def p2tr(output_key: bytes) -> bytes:
    """BIP341: OP_1 <32-byte x-only output key>."""
    return b"\x51\x20" + output_key


def p2sh_of(script: bytes) -> bytes:
    """The P2SH output paying to `script` (HASH160 of it)."""
    return p2sh(hash160(script))


def p2wsh_of(script: bytes) -> bytes:
    """The P2WSH output paying to witness script `script` (SHA256 of it)."""
    return p2wsh(sha256(script))


def iter_ops(script: bytes):
    """Yield (opcode, data) for each operation; stops with ValueError at a truncated push."""
    pc = 0
    end = len(script)
    while pc < end:
        r = get_op(script, pc)
        if r is None:
            raise ValueError("truncated push")
        op, data, pc = r
        yield op, data


def decode_script_num(data: bytes) -> int:
    """CScriptNum value of little-endian sign-magnitude bytes (no minimality check)."""
    if not data:
        return 0
    v = int.from_bytes(data, "little")
    if data[-1] & 0x80:
        return -(v & ~(0x80 << (8 * (len(data) - 1))))
    return v


def is_minimal_push(data: bytes, op: int) -> bool:
    """Core's CheckMinimalPush."""
    n = len(data)
    if n == 0:
        return op == OP_0
    if n == 1 and 1 <= data[0] <= 16:
        return op == OP_1 + data[0] - 1
    if n == 1 and data[0] == 0x81:
        return op == OP_1NEGATE
    if n <= 75:
        return op == n
    if n <= 255:
        return op == OP_PUSHDATA1
    if n <= 65535:
        return op == OP_PUSHDATA2
    return True


def is_valid_signature_encoding(sig: bytes) -> bool:
    """BIP66 strict DER signature followed by one hash-type byte (Core's IsValidSignatureEncoding)."""
    n = len(sig)
    if n < 9 or n > 73:
        return False
    if sig[0] != 0x30 or sig[1] != n - 3:
        return False
    len_r = sig[3]
    if 5 + len_r >= n:
        return False
    len_s = sig[5 + len_r]
    if len_r + len_s + 7 != n:
        return False
    if sig[2] != 0x02 or len_r == 0 or sig[4] & 0x80:
        return False
    if len_r > 1 and sig[4] == 0x00 and not sig[5] & 0x80:
        return False
    if sig[len_r + 4] != 0x02 or len_s == 0 or sig[len_r + 6] & 0x80:
        return False
    if len_s > 1 and sig[len_r + 6] == 0x00 and not sig[len_r + 7] & 0x80:
        return False
    return True


def is_unspendable(script: bytes) -> bool:
    return (len(script) > 0 and script[0] == OP_RETURN) or len(script) > MAX_SCRIPT_SIZE


def script_to_asm(script: bytes, attempt_sighash_decode: bool = False) -> str:
    """Core's ScriptToAsmStr (core_io.cpp)."""
    out = []
    pc = 0
    end = len(script)
    names = OP_NAMES
    decode_sighash = attempt_sighash_decode and not is_unspendable(script)
    while pc < end:
        r = get_op(script, pc)
        if r is None:
            out.append("[error]")
            break
        op, data, pc = r
        if data is None:
            out.append(names[op])
        elif len(data) <= 4:
            out.append(str(decode_script_num(data)))
        elif decode_sighash and is_valid_signature_encoding(data) and data[-1] in SIGHASH_NAMES:
            # Only data that looks like a signature is shown with its decoded hash type.
            out.append(data[:-1].hex() + "[" + SIGHASH_NAMES[data[-1]] + "]")
        else:
            out.append(data.hex())
    return " ".join(out)


def has_valid_ops(script: bytes) -> bool:
    """Core's CScript::HasValidOps: parses, every opcode <= OP_NOP10, every push <= 520 bytes."""
    # Walks the script inline (no get_op call per operation): it runs on every
    # script of every transaction that DecodeHexTx considers.
    pc = 0
    end = len(script)
    while pc < end:
        op = script[pc]
        pc += 1
        if op < OP_PUSHDATA1:
            pc += op
        elif op <= OP_PUSHDATA4:
            width = 1 if op == OP_PUSHDATA1 else 2 if op == OP_PUSHDATA2 else 4
            if pc + width > end:
                return False
            n = int.from_bytes(script[pc:pc + width], "little")
            if n > MAX_SCRIPT_ELEMENT_SIZE:
                return False
            pc += width + n
        elif op > MAX_OPCODE:
            return False
    return pc == end


def is_push_only(script: bytes, pc: int = 0) -> bool:
    """Core's IsPushOnly from `pc`: every operation parses and is <= OP_16."""
    end = len(script)
    while pc < end:
        r = get_op(script, pc)
        if r is None or r[0] > OP_16:
            return False
        pc = r[2]
    return True


def has_op_success_or_checksigadd(script: bytes) -> bool:
    """True if the script contains OP_CHECKSIGADD or a BIP342 OP_SUCCESSx (script must parse)."""
    for op, _ in iter_ops(script):
        if op == OP_CHECKSIGADD or op in OP_SUCCESS:
            return True
    return False


def pubkey_len_for_prefix(first: int) -> int:
    """CPubKey::GetLen: expected size of a key starting with `first`, 0 if none."""
    if first in (2, 3):
        return 33
    if first in (4, 6, 7):
        return 65
    return 0


def is_valid_pubkey_size(data: bytes) -> bool:
    """CPubKey::ValidSize (no curve check)."""
    return bool(data) and pubkey_len_for_prefix(data[0]) == len(data)


def witness_program(script: bytes):
    """(version, program) if the script is a witness program (BIP141), else None."""
    n = len(script)
    if n < 4 or n > 42:
        return None
    first = script[0]
    if first != OP_0 and not OP_1 <= first <= OP_16:
        return None
    if script[1] + 2 != n:
        return None
    return (0 if first == OP_0 else first - OP_1 + 1), script[2:]


def is_pay_to_script_hash(script: bytes) -> bool:
    return len(script) == 23 and script[0] == 0xA9 and script[1] == 0x14 and script[22] == 0x87


def is_pay_to_anchor(script: bytes) -> bool:
    return script == b"\x51\x02\x4e\x73"


def _script_number(op, data, lo, hi):
    """Core's GetScriptNumber: OP_1..OP_16 or a minimal push of a small number, within [lo, hi]."""
    if OP_1 <= op <= OP_16:
        count = op - OP_1 + 1
    elif OP_0 < op <= OP_PUSHDATA4:
        if not is_minimal_push(data, op) or len(data) > 4:
            return None
        # CScriptNum with fRequireMinimal: no superfluous top byte.
        if data and (data[-1] & 0x7F) == 0 and (len(data) == 1 or not data[-2] & 0x80):
            return None
        count = decode_script_num(data)
    else:
        return None
    return count if lo <= count <= hi else None


def _match_multisig(script):
    if not script or script[-1] != OP_CHECKMULTISIG:
        return None
    r = get_op(script, 0)
    if r is None:
        return None
    op, data, pc = r
    required = _script_number(op, data, 1, MAX_PUBKEYS_PER_MULTISIG)
    if required is None:
        return None
    keys = []
    while True:
        r = get_op(script, pc)
        if r is None:
            return None  # GetOp failed: Core then sees OP_INVALIDOPCODE, not a number
        op, data, pc = r
        if data is None or not is_valid_pubkey_size(data):
            break
        keys.append(data)
    num_keys = _script_number(op, data, required, MAX_PUBKEYS_PER_MULTISIG)
    if num_keys is None or len(keys) != num_keys or pc + 1 != len(script):
        return None
    return required, keys


def solver(script: bytes):
    """Core's Solver: (type name, solutions list)."""
    if is_pay_to_script_hash(script):
        return SCRIPTHASH, [script[2:22]]
    wp = witness_program(script)
    if wp is not None:
        version, program = wp
        if version == 0 and len(program) == 20:
            return WITNESS_V0_KEYHASH, [program]
        if version == 0 and len(program) == 32:
            return WITNESS_V0_SCRIPTHASH, [program]
        if version == 1 and len(program) == 32:
            return WITNESS_V1_TAPROOT, [program]
        if is_pay_to_anchor(script):
            return ANCHOR, []
        if version != 0:
            return WITNESS_UNKNOWN, [bytes((version,)), program]
        return NONSTANDARD, []
    if script and script[0] == OP_RETURN and is_push_only(script, 1):
        return NULL_DATA, []
    n = len(script)
    if (n == 67 or n == 35) and script[0] == n - 2 and script[-1] == 0xAC:
        key = script[1:-1]
        if is_valid_pubkey_size(key):
            return PUBKEY, [key]
    if (n == 25 and script[0] == 0x76 and script[1] == 0xA9 and script[2] == 0x14
            and script[23] == 0x88 and script[24] == 0xAC):
        return PUBKEYHASH, [script[3:23]]
    ms = _match_multisig(script)
    if ms is not None:
        required, keys = ms
        return MULTISIG, [bytes((required,))] + keys + [bytes((len(keys),))]
    return NONSTANDARD, []
