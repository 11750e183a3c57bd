"""Legacy sighash (Core's SignatureHash, SigVersion::BASE) against Core's
sighash.json (all 500 rows) and the quirks the file does not reach."""
from quillfw.script import get_op
from quillfw.sighash import legacy as sighash_legacy
from quillfw.sighash.legacy import LegacyHasher, sighash_tx
from quillfw.sighash.txstream import parse_tx
from tests.firmware import fwtest


def _reversed(b):
    return bytes(b[i] for i in range(len(b) - 1, -1, -1))


def _rows():
    return [r for r in fwtest.load_json("core/sighash.json") if len(r) == 5]


def test_all_core_sighash_json_rows():
    rows = _rows()
    assert len(rows) == 500
    bad = []
    for n, (raw, script, index, hash_type, expected) in enumerate(rows):
        version, inputs, outputs, locktime = parse_tx(bytes.fromhex(raw))
        got = sighash_tx(version, inputs, outputs, locktime, index,
                         bytes.fromhex(script), hash_type)
        if _reversed(got).hex() != expected:
            bad.append(n)
    assert not bad, "rows differ from Core: %r" % bad[:20]


def test_streamed_hasher_is_the_same_code_as_the_whole_tx_function():
    # Feed a row piece by piece, as a device receives it, for every hash type.
    raw, script, index, _, _ = _rows()[7]
    version, inputs, outputs, locktime = parse_tx(bytes.fromhex(raw))
    for hash_type in (1, 2, 3, 0x81, 0x82, 0x83, 0, -1):
        h = LegacyHasher(version, len(inputs), len(outputs), locktime, index,
                         bytes.fromhex(script), hash_type)
        for txid, vout, seq in inputs:
            h.add_input(txid, vout, seq)
        for amount, spk in outputs:
            h.add_output(amount, spk)
        assert h.digest() == sighash_tx(version, inputs, outputs, locktime, index,
                                        bytes.fromhex(script), hash_type)


def _small_tx(n_inputs, n_outputs):
    inputs = [(bytes([i + 1]) * 32, i, 0xFFFFFFFE - i) for i in range(n_inputs)]
    outputs = [(1000 * (j + 1), b"\x51" * (j + 1)) for j in range(n_outputs)]
    return 2, inputs, outputs, 0


def test_single_without_matching_output_is_uint256_one():
    version, inputs, outputs, locktime = _small_tx(3, 1)
    for hash_type in (3, 0x83):
        got = sighash_tx(version, inputs, outputs, locktime, 2, b"\x51", hash_type)
        # Core returns uint256::ONE; its bytes are 01 00 .. 00 (embit has it reversed)
        assert got == b"\x01" + bytes(31)
    assert sighash_tx(version, inputs, outputs, locktime, 0, b"\x51", 3) != sighash_legacy.ONE


def test_single_blanks_earlier_outputs_to_minus_one():
    # The serialization of SINGLE for input 1 must contain CTxOut() = ff*8 || 00
    # for output 0 (embit writes a 4-byte value here).
    version, inputs, outputs, locktime = _small_tx(2, 2)

    class Tap:
        def __init__(self):
            self.data = bytearray()

        def update(self, b):
            self.data.extend(b)

    h = LegacyHasher(version, 2, 2, locktime, 1, b"\x51", 3)
    tap = Tap()
    h._h = tap
    for txid, vout, seq in inputs:
        h.add_input(txid, vout, seq)
    for amount, spk in outputs:
        h.add_output(amount, spk)
    data = bytes(tap.data)
    blanked = b"\x02" + b"\xff" * 8 + b"\x00"
    assert blanked in data
    # the other input's nSequence is zeroed, the signed one kept
    assert (0xFFFFFFFE).to_bytes(4, "little") not in data
    assert (0xFFFFFFFD).to_bytes(4, "little") in data


def test_codeseparators_removed_but_not_inside_pushes():
    version, inputs, outputs, locktime = _small_tx(1, 1)
    with_sep = bytes.fromhex("ab51ab02abab52ab")  # SEP 1 SEP PUSH(abab) 2 SEP
    without = bytes.fromhex("5102abab52")
    assert (sighash_tx(version, inputs, outputs, locktime, 0, with_sep, 1)
            == sighash_tx(version, inputs, outputs, locktime, 0, without, 1))


def test_get_op_reads_pushes_and_stops_on_truncation():
    script = bytes.fromhex("4c02aabb4d0100cc4e01000000dd76")
    ops = []
    pc = 0
    while True:
        op, start, pc = get_op(script, pc)
        if op is None:
            break
        ops.append((op, script[start:pc]))
    assert ops == [(0x4C, b"\xaa\xbb"), (0x4D, b"\xcc"), (0x4E, b"\xdd"), (0x76, b"")]
    assert get_op(b"\x05\xaa", 0) == (None, 1, 1)
    assert get_op(b"\x4d\x01", 0) == (None, 1, 1)


def test_stream_order_and_counts_are_enforced():
    version, inputs, outputs, locktime = _small_tx(2, 1)
    with fwtest.raises(ValueError, match="input index"):
        LegacyHasher(version, 2, 1, locktime, 2, b"", 1)
    h = LegacyHasher(version, 2, 1, locktime, 0, b"", 1)
    with fwtest.raises(ValueError, match="output before"):
        h.add_output(1, b"")
    h.add_input(*inputs[0])
    h.add_input(*inputs[1])
    with fwtest.raises(ValueError, match="more inputs"):
        h.add_input(*inputs[1])
    with fwtest.raises(ValueError, match="incomplete"):
        h.digest()
    h.add_output(*outputs[0])
    with fwtest.raises(ValueError, match="more outputs"):
        h.add_output(*outputs[0])
    assert len(h.digest()) == 32
