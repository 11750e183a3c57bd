"""The transaction codec: wire format corner cases, CompactSize, sizes, hashes, caching, streams."""
import io

import pytest

from quill.tx.decode import TxDecodeError, check_tx_scripts_sanity, decode_hex_tx, parse_hex
from quill.tx.hashes import hash_to_hex, hex_to_hash
from quill.tx.serialize import MAX_SIZE, BufferReader, DeserializationError, StreamReader, compact_size
from quill.tx.transaction import OutPoint, Transaction, TxIn, TxOut
from tests.kit.vectors import load_json

P2WPKH = bytes.fromhex("0014") + bytes(range(20))
PREV = bytes(range(32))


def _segwit_tx():
    return Transaction(2, [TxIn(OutPoint(PREV, 1), b"", 0xFFFFFFFD, [b"\x30" * 71, b"\x02" * 33])],
                       [TxOut(1000, P2WPKH), TxOut(2000, P2WPKH)], 0)


# -- CompactSize ------------------------------------------------------------------

@pytest.mark.parametrize("n, enc", [(0, "00"), (252, "fc"), (253, "fdfd00"), (0xFFFF, "fdffff"),
                                    (0x10000, "fe00000100"), (MAX_SIZE, "fe00000002")])
def test_compact_size_round_trip(n, enc):
    assert compact_size(n).hex() == enc
    assert BufferReader(bytes.fromhex(enc)).compact_size() == n
    assert StreamReader(io.BytesIO(bytes.fromhex(enc))).compact_size() == n


@pytest.mark.parametrize("enc", ["fdfc00", "fe ffff0000", "ff ffffffff00000000", "fe01000002"])
def test_compact_size_non_canonical_or_too_large(enc):
    data = bytes.fromhex(enc.replace(" ", ""))
    with pytest.raises(DeserializationError):
        BufferReader(data).compact_size()
    with pytest.raises(DeserializationError):
        StreamReader(io.BytesIO(data)).compact_size()


def test_truncated_compact_size():
    for enc in ("", "fd", "fd00", "fe000000", "ff00000000000000"):
        with pytest.raises(DeserializationError):
            BufferReader(bytes.fromhex(enc)).compact_size()


# -- wire format --------------------------------------------------------------------

def test_segwit_round_trip_and_sizes():
    tx = _segwit_tx()
    raw = tx.serialize()
    assert raw[4:6] == b"\x00\x01"
    back = Transaction.from_bytes(raw)
    assert back == tx
    assert back.serialize() == raw
    nowit = tx.serialize(with_witness=False)
    assert len(nowit) < len(raw)
    assert tx.size() == len(raw)
    assert tx.weight() == 3 * len(nowit) + len(raw)
    assert tx.vsize() == (tx.weight() + 3) // 4
    assert tx.txid() != tx.wtxid()
    assert Transaction.from_bytes(nowit).txid() == tx.txid()
    assert tx.txid_hex() == hash_to_hex(tx.txid()) and hex_to_hash(tx.txid_hex()) == tx.txid()


def test_bip143_signed_transactions_decode():
    data = load_json("bips/bip143_examples.json")
    for ex in data["examples"]:
        tx = decode_hex_tx(ex["signed_tx"])
        assert tx.serialize().hex() == ex["signed_tx"]
        assert tx.has_witness()
        unsigned = decode_hex_tx(ex.get("unsigned_tx") or ex["unsigned_tx_derived"])
        assert [i.prevout for i in unsigned.vin] == [i.prevout for i in tx.vin]


def test_stream_reading_leaves_following_bytes():
    tx = _segwit_tx()
    stream = io.BytesIO(tx.serialize() + b"\xaa\xbb")
    assert Transaction.read_from(stream) == tx
    assert stream.read() == b"\xaa\xbb"
    out = io.BytesIO()
    tx.write_to(out)
    assert out.getvalue() == tx.serialize()
    # A transaction read from a stream computes its serializations itself.
    assert Transaction.read_from(io.BytesIO(tx.serialize())).txid() == tx.txid()


def test_zero_inputs_extended_reads_no_outputs():
    # 0 inputs then flag byte 0: extended reading has no outputs; legacy reads vout count 0.
    tx = Transaction.from_bytes(bytes.fromhex("01000000" "00" "00" "00000000"))
    assert tx.vin == [] and tx.vout == []


def test_zero_inputs_one_output_needs_legacy_reading():
    raw = bytes.fromhex("02000000" "00" "01" "0000000000000000" "00" "00000000")
    with pytest.raises(DeserializationError, match="Superfluous"):
        Transaction.from_bytes(raw)
    tx = Transaction.from_bytes(raw, allow_witness=False)
    assert len(tx.vout) == 1
    assert decode_hex_tx(raw.hex()).serialize() == raw


def test_unknown_flags_rejected():
    tx = _segwit_tx()
    raw = bytearray(tx.serialize())
    raw[5] = 0x03
    with pytest.raises(DeserializationError, match="Unknown transaction optional data"):
        Transaction.from_bytes(bytes(raw))
    raw[5] = 0x02
    with pytest.raises(DeserializationError):
        Transaction.from_bytes(bytes(raw))


def test_superfluous_witness_rejected():
    tx = _segwit_tx()
    tx.vin[0].witness = []
    raw = bytearray(tx.serialize())
    # Splice an all-empty witness section into a BIP144 frame.
    framed = raw[:4] + b"\x00\x01" + raw[4:-4] + b"\x00" + raw[-4:]
    with pytest.raises(DeserializationError, match="Superfluous witness record"):
        Transaction.from_bytes(bytes(framed))


def test_trailing_bytes_rejected():
    raw = _segwit_tx().serialize()
    with pytest.raises(DeserializationError):
        Transaction.from_bytes(raw + b"\x00")
    with pytest.raises(TxDecodeError):
        decode_hex_tx((raw + b"\x00").hex())


def test_hostile_counts_fail_fast():
    # 2^25 inputs announced in a few bytes: the first input that does not fit ends it (as in Core),
    # nothing is allocated for the count.
    raw = bytes.fromhex("01000000" "fe00000002") + bytes(40)
    with pytest.raises(DeserializationError, match="end of data"):
        Transaction.from_bytes(raw)
    with pytest.raises(DeserializationError):
        Transaction.read_from(io.BytesIO(raw))
    script_len = bytes.fromhex("01000000" "01") + PREV + b"\0\0\0\0" + bytes.fromhex("fe00000002")
    with pytest.raises(DeserializationError):
        Transaction.from_bytes(script_len + bytes(10))
    # more inputs announced than there are bytes, the first one's script length above MAX_SIZE:
    # that length is the error, as Core reads it (decodepsbt shows Core's message)
    too_long = bytes.fromhex("01000000" "fd0001") + PREV + b"\0\0\0\0" + bytes.fromhex("feffffff7f") + bytes(10)
    with pytest.raises(DeserializationError, match="size too large"):
        Transaction.from_bytes(too_long)


def test_output_value_is_signed():
    tx = Transaction(1, [TxIn(OutPoint(PREV, 0))], [TxOut(-1, b"")], 0)
    assert Transaction.from_bytes(tx.serialize()).vout[0].value == -1


def test_version_and_locktime_unsigned():
    tx = Transaction.from_bytes(bytes.fromhex("ffffffff" "00" "00" "ffffffff"))
    assert tx.version == 0xFFFFFFFF and tx.locktime == 0xFFFFFFFF


def test_coinbase_detection():
    cb = Transaction(1, [TxIn(OutPoint(), b"\x03abc")], [TxOut(50, P2WPKH)])
    assert cb.is_coinbase()
    cb.vin[0].prevout.n = 0
    assert not cb.is_coinbase()


def test_cache_follows_mutation():
    raw = _segwit_tx().serialize()
    tx = Transaction.from_bytes(raw)
    txid = tx.txid()
    tx.vin[0].witness.append(b"\x01")
    assert tx.serialize() != raw and tx.txid() == txid and tx.wtxid() != Transaction.from_bytes(raw).wtxid()
    tx.vin[0].witness.pop()
    tx.vout[1].value += 1
    assert tx.txid() != txid
    tx.vout[1].value -= 1
    assert tx.serialize() == raw and tx.txid() == txid
    tx.vin[0].script_sig = b"\x51"
    assert tx.serialize() != raw


def test_parse_hex_is_core_ishex():
    assert parse_hex("00ff") == b"\x00\xff"
    for bad in ("", "0", "0g", "00 ff", " 00", "00\n", "０0"):
        assert parse_hex(bad) is None, bad


def test_sanity_check():
    tx = Transaction(1, [TxIn(OutPoint(PREV, 0), b"\xba")], [TxOut(0, b"\x51")])
    assert not check_tx_scripts_sanity(tx)            # OP_CHECKSIGADD counts as invalid
    tx.vin[0].script_sig = b"\x4d\x09\x02" + bytes(521)
    assert not check_tx_scripts_sanity(tx)            # push over 520 bytes
    tx.vin[0].script_sig = b"\x51"
    assert check_tx_scripts_sanity(tx)
    tx.vout[0].script_pubkey = b"\x02\xee"
    assert not check_tx_scripts_sanity(tx)            # truncated push
    cb = Transaction(1, [TxIn(OutPoint(), b"\xff" * 3)], [TxOut(0, b"")])
    assert check_tx_scripts_sanity(cb)                # coinbase scriptSig is not checked


def _tx_rows(name):
    return [r for r in load_json(f"core/{name}.json") if isinstance(r[0], list)]


@pytest.mark.parametrize("name, count", [("tx_valid", 121), ("tx_invalid", 93)])
def test_core_tx_vectors_decode_and_reserialize(name, count):
    rows = _tx_rows(name)
    assert len(rows) == count
    for prevouts, hexstring, flags in rows:
        tx = decode_hex_tx(hexstring)
        assert tx.serialize().hex() == hexstring, (name, flags)
        assert Transaction.from_bytes(tx.serialize(), allow_witness=True).txid() == tx.txid() \
            or not tx.vin
        for prev in prevouts:
            assert len(prev[0]) == 64  # the prevouts name outpoints in display order
