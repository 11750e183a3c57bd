"""Reading a script one operation at a time, as Bitcoin Core's GetScriptOp does
(script/script.cpp). The firmware's legacy sighash and the host's script code
(quill.tx.script) both use this one parser, so host and device read every
script, malformed ones included, identically.
"""
from quillfw.compat import const

OP_PUSHDATA1 = const(0x4C)
OP_PUSHDATA2 = const(0x4D)
OP_PUSHDATA4 = const(0x4E)


def get_op(script, pc):
    """One opcode at pc, as Core's GetScriptOp reads it: (opcode, data_start,
    next_pc). opcode is None when the script is truncated at pc; next_pc is then
    where Core's iterator stopped (past what it read before it found the
    truncation)."""
    end = len(script)
    if pc >= end:
        return None, pc, pc
    opcode = script[pc]
    pc += 1
    if opcode > OP_PUSHDATA4:
        return opcode, pc, pc
    if opcode < OP_PUSHDATA1:
        size = opcode
    else:
        width = 1 if opcode == OP_PUSHDATA1 else 2 if opcode == OP_PUSHDATA2 else 4
        if end - pc < width:
            return None, pc, pc
        size = int.from_bytes(script[pc:pc + width], "little")
        pc += width
    if end - pc < size:
        return None, pc, pc
    return opcode, pc, pc + size
