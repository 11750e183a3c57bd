"""BIP143 sighash against every example of bips/bip143_examples.json (all
sighashes, preimages and intermediate hashes), plus the signatures Core would
make (the low-R ones) and the BIP143 SINGLE/NONE/ANYONECANPAY rules."""
from quillfw.crypto import ecdsa
from quillfw.sighash.segwit_v0 import preimage, sighash, sighash_tx
from quillfw.sighash.txdigests import TxDigests
from quillfw.sighash.txstream import parse_tx, read_compact_size
from tests.firmware import fwtest


def _examples():
    return fwtest.load_json("bips/bip143_examples.json")["examples"]


def _script_code(prefixed_hex):
    raw = bytes.fromhex(prefixed_hex)
    n, pos = read_compact_size(raw, 0)
    assert pos + n == len(raw)
    return raw[pos:]


def _signed_inputs(example):
    """(input, signature entry) pairs that BIP143 gives a sighash for."""
    for inp in example["inputs"]:
        for sig in inp.get("signatures", ()):
            yield inp, sig


def _tx(example):
    return parse_tx(bytes.fromhex(example.get("unsigned_tx") or example["signed_tx"]))


def _amount(example, inp, sig):
    if "amount_sat" in inp:
        return inp["amount_sat"]
    # example 7 prints only the preimage: the amount sits after the script code
    pre = bytes.fromhex(sig["preimage"])
    n, pos = read_compact_size(pre, 104)
    return int.from_bytes(pre[pos + n:pos + n + 8], "little")


def _script_code_of(inp, sig):
    if "scriptCode" in sig:
        return _script_code(sig["scriptCode"])
    pre = bytes.fromhex(sig["preimage"])
    n, pos = read_compact_size(pre, 104)
    return pre[pos:pos + n]


def test_every_bip143_sighash_preimage_and_intermediate_hash():
    checked = 0
    for ex in _examples():
        version, inputs, outputs, locktime = _tx(ex)
        d = TxDigests.from_tx(version, inputs, outputs, locktime)
        for inp, sig in _signed_inputs(ex):
            i = inp["index"]
            txid, vout, seq = inputs[i]
            single = outputs[i] if i < len(outputs) else None
            args = (d, i, txid, vout, seq, _script_code_of(inp, sig), _amount(ex, inp, sig),
                    sig["hash_type"], single)
            pre = preimage(*args)
            assert pre.hex() == sig["preimage"], ex["name"]
            # the intermediate fields, at their BIP143 positions
            assert pre[4:36].hex() == sig.get("hashPrevouts", pre[4:36].hex())
            assert pre[36:68].hex() == sig.get("hashSequence", pre[36:68].hex())
            assert pre[-40:-8].hex() == sig.get("hashOutputs", pre[-40:-8].hex())
            if "outpoint" in sig:
                assert pre[68:104].hex() == sig["outpoint"]
                assert pre[-52:-44].hex() == sig["amount_le"]
            got = sighash(*args)
            assert got.hex() == sig["sighash"], ex["name"]
            assert sighash_tx(version, inputs, outputs, locktime, i, args[5], args[6],
                              sig["hash_type"]) == got
            checked += 1
    assert checked == 14, checked


def test_legacy_inputs_of_the_bip143_examples():
    # The transcriber's legacy digests for the P2PK inputs: the same tx through
    # the legacy algorithm (a cross-check that both read the tx alike).
    from quillfw.sighash.legacy import sighash_tx as legacy_sighash_tx
    checked = 0
    for ex in _examples():
        version, inputs, outputs, locktime = _tx(ex)
        for inp in ex["inputs"]:
            if "legacy_sighash_derived" in inp:
                got = legacy_sighash_tx(version, inputs, outputs, locktime, inp["index"],
                                        bytes.fromhex(inp["scriptPubKey"]), 1)
                assert got.hex() == inp["legacy_sighash_derived"]
                checked += 1
    assert checked == 2


def _is_low_r(der_hex):
    return der_hex.startswith("30440220")


def test_low_r_bip143_signatures_are_reproduced_as_core_signs():
    reproduced = high_r = 0
    for ex in _examples():
        version, inputs, outputs, locktime = _tx(ex)
        for inp, sig in _signed_inputs(ex):
            key = sig.get("private_key") or inp.get("private_key")
            if key is None:
                continue
            if not _is_low_r(sig["signature"]):
                high_r += 1  # Core grinds these to another (low-R) signature
                continue
            digest = bytes.fromhex(sig["sighash"])
            der = ecdsa.sign(bytes.fromhex(key), digest)
            assert (der + bytes([sig["hash_type"] & 0xFF])).hex() == sig["signature"]
            reproduced += 1
    assert reproduced >= 8 and high_r >= 1, (reproduced, high_r)


def _tx3():
    inputs = [(bytes([7 * i + 1]) * 32, i, 0xFFFFFFF0 + i) for i in range(3)]
    outputs = [(5000 + j, bytes([0x51 + j])) for j in range(2)]
    return 2, inputs, outputs, 99


def test_single_out_of_range_zeroes_hash_outputs_not_the_legacy_one():
    version, inputs, outputs, locktime = _tx3()
    d = TxDigests.from_tx(version, inputs, outputs, locktime)
    txid, vout, seq = inputs[2]
    pre = preimage(d, 2, txid, vout, seq, b"\x51", 7, 3)
    assert pre[-40:-8] == bytes(32)
    assert pre[36:68] == bytes(32)       # hashSequence zero for SINGLE
    assert pre[4:36] != bytes(32)        # hashPrevouts kept without ANYONECANPAY
    assert sighash(d, 2, txid, vout, seq, b"\x51", 7, 3) != b"\x01" + bytes(31)


def test_single_in_range_needs_its_output():
    version, inputs, outputs, locktime = _tx3()
    d = TxDigests.from_tx(version, inputs, outputs, locktime)
    txid, vout, seq = inputs[1]
    with fwtest.raises(ValueError, match="SIGHASH_SINGLE"):
        preimage(d, 1, txid, vout, seq, b"", 7, 3)


def test_none_and_anyonecanpay_zero_their_fields():
    version, inputs, outputs, locktime = _tx3()
    d = TxDigests.from_tx(version, inputs, outputs, locktime)
    txid, vout, seq = inputs[0]
    none = preimage(d, 0, txid, vout, seq, b"", 7, 2)
    assert none[36:68] == bytes(32) and none[-40:-8] == bytes(32)
    acp_all = preimage(d, 0, txid, vout, seq, b"", 7, 0x81)
    assert acp_all[4:36] == bytes(32) and acp_all[36:68] == bytes(32)
    assert acp_all[-40:-8] != bytes(32)
    # nHashType is written whole: 0x181 differs from 0x81 only in its last field
    other = preimage(d, 0, txid, vout, seq, b"", 7, 0x181)
    assert other[:-4] == acp_all[:-4] and other[-4:] == b"\x81\x01\x00\x00"


def test_unfinished_digests_are_refused():
    d = TxDigests(1, 0, spent_outputs=False)
    with fwtest.raises(ValueError, match="not finished"):
        preimage(d, 0, bytes(32), 0, 0, b"", 0, 1)
