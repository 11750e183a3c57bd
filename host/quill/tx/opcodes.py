"""Script opcodes and their names as Core's GetOpName (script/script.cpp) prints them."""

OP_0 = 0x00
OP_PUSHDATA1 = 0x4C
OP_PUSHDATA2 = 0x4D
OP_PUSHDATA4 = 0x4E
OP_1NEGATE = 0x4F
OP_RESERVED = 0x50
OP_1 = 0x51
OP_16 = 0x60
OP_VER = 0x62
OP_RETURN = 0x6A
OP_CAT = 0x7E
OP_RIGHT = 0x81
OP_INVERT = 0x83
OP_XOR = 0x86
OP_EQUAL = 0x87
OP_EQUALVERIFY = 0x88
OP_RESERVED1 = 0x89
OP_RESERVED2 = 0x8A
OP_2MUL = 0x8D
OP_2DIV = 0x8E
OP_MUL = 0x95
OP_RSHIFT = 0x99
OP_DUP = 0x76
OP_HASH160 = 0xA9
OP_CHECKSIG = 0xAC
OP_CHECKMULTISIG = 0xAE
OP_NOP10 = 0xB9
OP_CHECKSIGADD = 0xBA
OP_INVALIDOPCODE = 0xFF

# Core's MAX_OPCODE: opcodes above it make HasValidOps() false.
MAX_OPCODE = OP_NOP10

_NAMED = {
    0x4F: "-1", 0x50: "OP_RESERVED",
    0x61: "OP_NOP", 0x62: "OP_VER", 0x63: "OP_IF", 0x64: "OP_NOTIF", 0x65: "OP_VERIF",
    0x66: "OP_VERNOTIF", 0x67: "OP_ELSE", 0x68: "OP_ENDIF", 0x69: "OP_VERIFY", 0x6A: "OP_RETURN",
    0x6B: "OP_TOALTSTACK", 0x6C: "OP_FROMALTSTACK", 0x6D: "OP_2DROP", 0x6E: "OP_2DUP",
    0x6F: "OP_3DUP", 0x70: "OP_2OVER", 0x71: "OP_2ROT", 0x72: "OP_2SWAP", 0x73: "OP_IFDUP",
    0x74: "OP_DEPTH", 0x75: "OP_DROP", 0x76: "OP_DUP", 0x77: "OP_NIP", 0x78: "OP_OVER",
    0x79: "OP_PICK", 0x7A: "OP_ROLL", 0x7B: "OP_ROT", 0x7C: "OP_SWAP", 0x7D: "OP_TUCK",
    0x7E: "OP_CAT", 0x7F: "OP_SUBSTR", 0x80: "OP_LEFT", 0x81: "OP_RIGHT", 0x82: "OP_SIZE",
    0x83: "OP_INVERT", 0x84: "OP_AND", 0x85: "OP_OR", 0x86: "OP_XOR", 0x87: "OP_EQUAL",
    0x88: "OP_EQUALVERIFY", 0x89: "OP_RESERVED1", 0x8A: "OP_RESERVED2", 0x8B: "OP_1ADD",
    0x8C: "OP_1SUB", 0x8D: "OP_2MUL", 0x8E: "OP_2DIV", 0x8F: "OP_NEGATE", 0x90: "OP_ABS",
    0x91: "OP_NOT", 0x92: "OP_0NOTEQUAL", 0x93: "OP_ADD", 0x94: "OP_SUB", 0x95: "OP_MUL",
    0x96: "OP_DIV", 0x97: "OP_MOD", 0x98: "OP_LSHIFT", 0x99: "OP_RSHIFT", 0x9A: "OP_BOOLAND",
    0x9B: "OP_BOOLOR", 0x9C: "OP_NUMEQUAL", 0x9D: "OP_NUMEQUALVERIFY", 0x9E: "OP_NUMNOTEQUAL",
    0x9F: "OP_LESSTHAN", 0xA0: "OP_GREATERTHAN", 0xA1: "OP_LESSTHANOREQUAL",
    0xA2: "OP_GREATERTHANOREQUAL", 0xA3: "OP_MIN", 0xA4: "OP_MAX", 0xA5: "OP_WITHIN",
    0xA6: "OP_RIPEMD160", 0xA7: "OP_SHA1", 0xA8: "OP_SHA256", 0xA9: "OP_HASH160",
    0xAA: "OP_HASH256", 0xAB: "OP_CODESEPARATOR", 0xAC: "OP_CHECKSIG",
    0xAD: "OP_CHECKSIGVERIFY", 0xAE: "OP_CHECKMULTISIG", 0xAF: "OP_CHECKMULTISIGVERIFY",
    0xB0: "OP_NOP1", 0xB1: "OP_CHECKLOCKTIMEVERIFY", 0xB2: "OP_CHECKSEQUENCEVERIFY",
    0xB3: "OP_NOP4", 0xB4: "OP_NOP5", 0xB5: "OP_NOP6", 0xB6: "OP_NOP7", 0xB7: "OP_NOP8",
    0xB8: "OP_NOP9", 0xB9: "OP_NOP10", 0xBA: "OP_CHECKSIGADD", 0xFF: "OP_INVALIDOPCODE",
}


def _name(op: int) -> str:
    if op == OP_0:
        return "0"
    if op <= OP_PUSHDATA4:
        return "OP_PUSHDATA1" if op == OP_PUSHDATA1 else "OP_PUSHDATA2" if op == OP_PUSHDATA2 \
            else "OP_PUSHDATA4" if op == OP_PUSHDATA4 else "OP_UNKNOWN"
    if OP_1 <= op <= OP_16:
        return str(op - OP_1 + 1)
    return _NAMED.get(op, "OP_UNKNOWN")


# GetOpName for every byte value.
OP_NAMES = tuple(_name(op) for op in range(256))

# BIP342 OP_SUCCESSx opcodes (Core's IsOpSuccess).
OP_SUCCESS = frozenset([80, 98, *range(126, 130), *range(131, 135), 137, 138, 141, 142,
                        *range(149, 154), *range(187, 255)])
