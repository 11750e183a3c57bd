"""Helpers that read Core's script/transaction test vectors the way Core's unit tests do.

parse_script(text)      Core's ParseScript (core_read.cpp): the short notation of
                        script_tests.json and of tx_valid/tx_invalid prevouts.
script_test_case(row)   one script_tests.json row -> ScriptCase (spending tx with
                        its crediting output, flags, expected ScriptError), built
                        like BuildCreditingTransaction / BuildSpendingTransaction
                        and with the #SCRIPT# / #CONTROLBLOCK# / #TAPROOTOUTPUT#
                        placeholders filled in.
tx_test_case(row)       one tx_valid/tx_invalid row -> (tx, spent TxOuts, flags text).
"""
from decimal import Decimal

from quill.tx.hashes import hex_to_hash
from quill.tx.interpreter import encode_script_num, tapleaf_hash
from quill.tx.opcodes import MAX_OPCODE, OP_NAMES
from quill.tx.script import push_data
from quill.tx.script_error import ScriptError
from quill.tx.script_flags import SCRIPT_VERIFY_CLEANSTACK, SCRIPT_VERIFY_P2SH, SCRIPT_VERIFY_WITNESS, parse_flags
from quill.tx.transaction import OutPoint, Transaction, TxIn, TxOut
from quillfw.crypto.schnorr import taproot_tweak_pubkey

OP_RESERVED = 0x50
OP_NOP = 0x61
TAPROOT_LEAF_TAPSCRIPT = 0xC0
# x-only public key of secret 1 (Core's keys.key0), the internal key of the test trees.
INTERNAL_KEY = bytes.fromhex("79be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798")


def _op_names():
    names = {}
    for op in range(MAX_OPCODE + 1):
        if op < OP_NOP and op != OP_RESERVED:
            continue
        name = OP_NAMES[op]
        if name == "OP_UNKNOWN":
            continue
        names[name] = op
        if name.startswith("OP_"):
            names[name[3:]] = op
    return names


_OPS = _op_names()


def _is_decimal(w):
    body = w[1:] if w.startswith("-") and len(w) > 1 else w
    return body.isdigit() and body.isascii()


def _push_int(n):
    """CScript << int64: OP_N for -1 and 0..16, else a minimal number push."""
    if n == -1 or 1 <= n <= 16:
        return bytes((n + 0x50,))
    if n == 0:
        return b"\x00"
    return push_data(encode_script_num(n))


def parse_script(text: str) -> bytes:
    out = bytearray()
    for w in text.replace("\t", " ").replace("\n", " ").split(" "):
        if not w:
            continue
        if _is_decimal(w):
            n = int(w)
            if not -0xFFFFFFFF <= n <= 0xFFFFFFFF:
                raise ValueError("script parse error: decimal numeric value only allowed in "
                                 "the range -0xFFFFFFFF...0xFFFFFFFF")
            out += _push_int(n)
        elif w.startswith("0x") and len(w) > 2 and len(w) % 2 == 0:
            out += bytes.fromhex(w[2:])
        elif len(w) >= 2 and w[0] == "'" and w[-1] == "'":
            out += push_data(w[1:-1].encode())
        elif w in _OPS:
            out.append(_OPS[w])
        else:
            raise ValueError("script parse error: '%s'" % w)
    return bytes(out)


class ScriptCase:
    def __init__(self, script_sig, script_pubkey, witness, amount, flags, expected, comment):
        self.script_sig = script_sig
        self.script_pubkey = script_pubkey
        self.witness = witness
        self.amount = amount
        self.flags = flags
        self.expected = expected
        self.comment = comment
        self.credit = TxOut(amount, script_pubkey)
        self.tx = spending_tx(script_sig, witness, crediting_tx(script_pubkey, amount))


def crediting_tx(script_pubkey, amount):
    """Core's BuildCreditingTransaction."""
    return Transaction(1, [TxIn(OutPoint(), b"\x00\x00", 0xFFFFFFFF)],
                       [TxOut(amount, script_pubkey)], 0)


def spending_tx(script_sig, witness, credit):
    """Core's BuildSpendingTransaction: spends output 0 of `credit`."""
    return Transaction(1, [TxIn(OutPoint(credit.txid(), 0), script_sig, 0xFFFFFFFF, witness)],
                       [TxOut(credit.vout[0].value, b"")], 0)


def _control_block(script):
    """One-leaf tree (depth 0, leaf version 0xc0) over INTERNAL_KEY: (control, output key)."""
    odd, output_key = taproot_tweak_pubkey(INTERNAL_KEY,
                                           tapleaf_hash(TAPROOT_LEAF_TAPSCRIPT, script))
    return bytes((TAPROOT_LEAF_TAPSCRIPT | int(odd),)) + INTERNAL_KEY, output_key


def script_test_case(row) -> ScriptCase:
    pos = 0
    witness = []
    amount = 0
    output_key = None
    if isinstance(row[0], list):
        for item in row[0][:-1]:
            if item.startswith("#SCRIPT#"):
                witness.append(parse_script(item[len("#SCRIPT#"):]))
            elif item == "#CONTROLBLOCK#":
                control, output_key = _control_block(witness[-1])
                witness.append(control)
            else:
                witness.append(bytes.fromhex(item))
        # BTC as a JSON number; exact, never through a float.
        amount = int(Decimal(str(row[0][-1])) * 100_000_000)
        pos = 1
    script_sig = parse_script(row[pos])
    spk_text = row[pos + 1]
    if spk_text == "0x51 0x20 #TAPROOTOUTPUT#":
        script_pubkey = b"\x51\x20" + output_key
    else:
        script_pubkey = parse_script(spk_text)
    flags = parse_flags(row[pos + 2])
    if flags & SCRIPT_VERIFY_CLEANSTACK:
        # As Core's DoTest: CLEANSTACK is only defined together with these.
        flags |= SCRIPT_VERIFY_P2SH | SCRIPT_VERIFY_WITNESS
    expected = ScriptError.from_test_name(row[pos + 3])
    comment = " ".join(str(c) for c in row[pos + 4:])
    return ScriptCase(script_sig, script_pubkey, witness, amount, flags, expected, comment)


def script_test_rows(rows):
    """The test rows of script_tests.json (1-element rows are comments)."""
    return [r for r in rows if len(r) > 1]


def tx_test_rows(rows):
    """The test rows of tx_valid/tx_invalid.json (rows not starting with a list are comments)."""
    return [r for r in rows if isinstance(r[0], list)]


def tx_test_case(row):
    """(tx, spent outputs in input order, flags text); unknown prevouts are an error."""
    prevouts = {}
    for p in row[0]:
        n = p[1] & 0xFFFFFFFF   # -1 is the coinbase index
        amount = p[3] if len(p) > 3 else 0
        prevouts[(hex_to_hash(p[0]), n)] = TxOut(amount, parse_script(p[2]))
    tx = Transaction.from_hex(row[1])
    spent = [prevouts[(i.prevout.hash, i.prevout.n)] for i in tx.vin]
    return tx, spent, row[2]
