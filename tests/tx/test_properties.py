"""Property tests: well-formed transactions round-trip; hostile input only ever yields Core's -22."""
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from quill.handlers.rawtransactions import decoderawtransaction, decodescript
from quill.rpc import univalue
from quill.rpc.errors import RPC_DESERIALIZATION_ERROR, RPCError
from quill.tx.transaction import OutPoint, Transaction, TxIn, TxOut
from tests.kit.txcases import make_ctx

u32 = st.integers(0, 0xFFFFFFFF)
scripts = st.binary(max_size=80) | st.sampled_from([
    b"", bytes.fromhex("0014") + bytes(20), bytes.fromhex("76a914") + bytes(20) + b"\x88\xac",
    b"\x6a\x4c\x02ab", b"\x4e\xff\xff\xff\xff"])
witness = st.lists(st.binary(max_size=40), max_size=4)
txin = st.builds(TxIn, st.builds(OutPoint, st.binary(min_size=32, max_size=32), u32), scripts, u32, witness)
txout = st.builds(TxOut, st.integers(-2 ** 63, 2 ** 63 - 1), scripts)
transactions = st.builds(Transaction, u32, st.lists(txin, min_size=1, max_size=4),
                         st.lists(txout, max_size=4), u32)

SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
CTX = make_ctx()
# Fuzzing seed: a segwit transaction with a signature-bearing scriptSig and outputs of several types.
SIG = bytes.fromhex("30440220" + "01" * 32 + "0220" + "02" * 32 + "01")
SEED = Transaction(2, [
    TxIn(OutPoint(b"\x11" * 32, 0), b"\x6a\x00" + bytes([len(SIG)]) + SIG + b"\x21\x02" + b"\xaa" * 32,
         0xFFFFFFFD, []),
    TxIn(OutPoint(b"\x22" * 32, 1), b"", 0xFFFFFFFF, [b"\x30" * 71, b"\x03" + b"\x55" * 32]),
], [
    TxOut(1000, b"\x00\x14" + b"\x33" * 20),
    TxOut(0, b"\x6a\x02\x4e\x73"),
    TxOut(1, b"\x51\x20" + b"\x44" * 32),
    TxOut(2, b"\x52\x21\x02" + b"\x66" * 32 + b"\x21\x03" + b"\x77" * 32 + b"\x52\xae"),
], 0).serialize()


@SETTINGS
@given(transactions)
def test_well_formed_transactions_round_trip(tx):
    raw = tx.serialize()
    back = Transaction.from_bytes(raw)
    assert back == tx
    assert back.serialize() == raw
    assert back.txid() == tx.txid() and back.wtxid() == tx.wtxid()
    assert back.weight() == 3 * len(tx.serialize(with_witness=False)) + len(raw)
    if not tx.has_witness():
        assert Transaction.from_bytes(raw, allow_witness=False) == tx
    univalue.dumps(decoderawtransaction(CTX, [raw.hex(), True]))


def _decode_never_fails_otherwise(hexstring, iswitness=None):
    try:
        result = decoderawtransaction(CTX, [hexstring, iswitness])
    except RPCError as e:
        assert (e.code, e.message) == (RPC_DESERIALIZATION_ERROR, "TX decode failed")
        return None
    univalue.dumps(result)
    return result


@SETTINGS
@given(st.binary(max_size=300), st.sampled_from([None, True, False]))
def test_random_bytes_only_give_core_error(data, iswitness):
    _decode_never_fails_otherwise(data.hex(), iswitness)


@SETTINGS
@given(st.lists(st.tuples(st.integers(0, len(SEED) - 1), st.integers(0, 255)), min_size=1, max_size=6),
       st.integers(0, len(SEED)), st.binary(max_size=8))
def test_mutated_transactions_only_give_core_error(edits, cut, tail):
    data = bytearray(SEED)
    for pos, value in edits:
        data[pos] = value
    _decode_never_fails_otherwise((bytes(data[:cut]) + tail).hex())


@SETTINGS
@given(st.text(max_size=40))
def test_non_hex_text_gives_core_error(text):
    _decode_never_fails_otherwise(text)


@SETTINGS
@given(st.binary(max_size=120))
def test_decodescript_accepts_any_script(data):
    univalue.dumps(decodescript(make_ctx("regtest"), [data.hex()]))


def _has_valid_ops_by_get_op(script):
    from quill.tx.script import get_op
    pc = 0
    while pc < len(script):
        r = get_op(script, pc)
        if r is None or r[0] > 0xB9 or (r[1] is not None and len(r[1]) > 520):
            return False
        pc = r[2]
    return True


@SETTINGS
@given(st.binary(max_size=60) | st.builds(lambda n, tail: bytes([0x4D]) + n.to_bytes(2, "little") + tail,
                                          st.integers(0, 600), st.binary(max_size=600)))
def test_has_valid_ops_agrees_with_get_op_walk(script):
    from quill.tx.script import has_valid_ops
    assert has_valid_ops(script) == _has_valid_ops_by_get_op(script)


@SETTINGS
@given(st.binary(max_size=64))
def test_bytes_to_5bit_is_convert_bits(data):
    from quill.tx.address import bytes_to_5bit, convert_bits
    assert bytes_to_5bit(data) == convert_bits(data, 8, 5, True)


@SETTINGS
@given(st.text(alphabet="0123456789()[],'/*abcdefgh@:$%{}IJKLMNOPQRSTUVWXYZ&+-.;<=>?!^_|~"
                        "ijklmnopqrstuvwxyzABCDEFGH`#\"\\ ",
               max_size=80))
def test_descriptor_checksum_matches_bip380_reference(desc):
    from quill.tx.descriptor import descriptor_checksum
    assert descriptor_checksum(desc) == _reference_descsum(desc)


def _reference_descsum(s):
    # BIP380's reference algorithm, written out as the BIP gives it.
    charset = ("0123456789()[],'/*abcdefgh@:$%{}IJKLMNOPQRSTUVWXYZ&+-.;<=>?!^_|~"
               "ijklmnopqrstuvwxyzABCDEFGH`#\"\\ ")
    gen = [0xF5DEE51989, 0xA9FDCA3312, 0x1BAB10E32D, 0x3706B1677A, 0x644D626FFD]

    def polymod(symbols):
        chk = 1
        for value in symbols:
            top = chk >> 35
            chk = (chk & 0x7FFFFFFFF) << 5 ^ value
            for i in range(5):
                chk ^= gen[i] if ((top >> i) & 1) else 0
        return chk

    groups, symbols = [], []
    for c in s:
        v = charset.find(c)
        symbols.append(v & 31)
        groups.append(v >> 5)
        if len(groups) == 3:
            symbols.append(groups[0] * 9 + groups[1] * 3 + groups[2])
            groups = []
    if len(groups) == 1:
        symbols.append(groups[0])
    elif len(groups) == 2:
        symbols.append(groups[0] * 3 + groups[1])
    checksum = polymod(symbols + [0] * 8) ^ 1
    return "".join("qpzry9x8gf2tvdw0s3jn54khce6mua7l"[(checksum >> (5 * (7 - i))) & 31] for i in range(8))
