"""BIP341 sighash against core/bip341_wallet_vectors.json keyPathSpending: the
five tx digests, sigMsg and sigHash of all 7 inputs and their signatures with
aux = 32 zero bytes; plus hash-type validation, annex and script-path layout."""
from quillfw.crypto import schnorr
from quillfw.sighash.taproot import sig_msg, sighash, sighash_tx
from quillfw.sighash.txdigests import TxDigests
from quillfw.sighash.txstream import parse_tx
from tests.firmware import fwtest


def _case():
    return fwtest.load_json("core/bip341_wallet_vectors.json")["keyPathSpending"][0]


def _tx(case):
    version, inputs, outputs, locktime = parse_tx(bytes.fromhex(case["given"]["rawUnsignedTx"]))
    spent = [(u["amountSats"], bytes.fromhex(u["scriptPubKey"]))
             for u in case["given"]["utxosSpent"]]
    return version, inputs, outputs, locktime, spent


def _args(inputs, outputs, spent, i):
    txid, vout, seq = inputs[i]
    return (txid, vout, seq) + spent[i], (outputs[i] if i < len(outputs) else None)


def test_tx_digests_match_the_intermediary_hashes():
    case = _case()
    version, inputs, outputs, locktime, spent = _tx(case)
    d = TxDigests.from_tx(version, inputs, outputs, locktime, spent)
    want = case["intermediary"]
    assert d.sha_prevouts.hex() == want["hashPrevouts"]
    assert d.sha_amounts.hex() == want["hashAmounts"]
    assert d.sha_scriptpubkeys.hex() == want["hashScriptPubkeys"]
    assert d.sha_sequences.hex() == want["hashSequences"]
    assert d.sha_outputs.hex() == want["hashOutputs"]


def test_all_seven_key_path_inputs_sigmsg_sighash_and_signature():
    case = _case()
    version, inputs, outputs, locktime, spent = _tx(case)
    d = TxDigests.from_tx(version, inputs, outputs, locktime, spent)
    assert len(case["inputSpending"]) == 7
    for item in case["inputSpending"]:
        given, inter = item["given"], item["intermediary"]
        i, hash_type = given["txinIndex"], given["hashType"]
        this, single = _args(inputs, outputs, spent, i)
        assert sig_msg(d, i, hash_type, this, None, single).hex() == inter["sigMsg"]
        digest = sighash(d, i, hash_type, this, None, single)
        assert digest.hex() == inter["sigHash"]
        assert sighash_tx(version, inputs, outputs, locktime, spent, i, hash_type) == digest
        merkle_root = given["merkleRoot"]
        tweaked = schnorr.taproot_tweak_secret(
            bytes.fromhex(given["internalPrivkey"]),
            None if merkle_root is None else bytes.fromhex(merkle_root))
        assert tweaked.hex() == inter["tweakedPrivkey"]
        sig = schnorr.sign(tweaked, digest, bytes(32))
        if hash_type != 0:
            sig += bytes((hash_type,))
        assert [sig.hex()] == item["expected"]["witness"]


def _tx2():
    inputs = [(bytes([3 * i + 2]) * 32, i, 0xFFFFFFFD) for i in range(2)]
    outputs = [(700, b"\x6a")]
    spent = [(10000 + i, b"\x51\x20" + bytes([i]) * 32) for i in range(2)]
    return 2, inputs, outputs, 0, spent


def test_invalid_hash_types_and_single_without_output_are_refused():
    version, inputs, outputs, locktime, spent = _tx2()
    d = TxDigests.from_tx(version, inputs, outputs, locktime, spent)
    for bad in (0x04, 0x80, 0x84, 0x20, 0xFF, 0x101):
        with fwtest.raises(ValueError, match="hash type"):
            sighash(d, 0, bad)
    with fwtest.raises(ValueError, match="SIGHASH_SINGLE"):
        sighash(d, 1, 3)
    with fwtest.raises(ValueError, match="ANYONECANPAY"):
        sighash(d, 0, 0x81)


def test_spent_outputs_are_required():
    version, inputs, outputs, locktime, _ = _tx2()
    d = TxDigests.from_tx(version, inputs, outputs, locktime)
    with fwtest.raises(ValueError, match="spent output"):
        sighash(d, 0, 0)


def test_annex_and_script_path_fields():
    version, inputs, outputs, locktime, spent = _tx2()
    d = TxDigests.from_tx(version, inputs, outputs, locktime, spent)
    plain = sig_msg(d, 1, 0)
    annex = b"\x50\x01\x02"
    with_annex = sig_msg(d, 1, 0, annex=annex)
    from quillfw.crypto.hashes import sha256
    # spend_type bit 0 set, then sha_annex = SHA256(compact_size || annex) appended
    assert with_annex[:-32] == plain[:-5] + b"\x01" + plain[-4:]
    assert with_annex[-32:] == sha256(b"\x03" + annex)
    with fwtest.raises(ValueError, match="0x50"):
        sig_msg(d, 1, 0, annex=b"\x51")
    leaf = bytes(range(32))
    script = sig_msg(d, 1, 0, leaf_hash=leaf, codesep_pos=7)
    assert script[len(plain) - 5] == 2                   # spend_type = ext_flag * 2
    assert script[-37:] == leaf + b"\x00" + b"\x07\x00\x00\x00"
    both = sig_msg(d, 1, 0, annex=annex, leaf_hash=leaf)
    assert both[len(plain) - 5] == 3
    assert both[-69:-37] == sha256(b"\x03" + annex)
    assert both[-4:] == b"\xff\xff\xff\xff"              # no OP_CODESEPARATOR executed


def test_sighash_is_the_tagged_hash_of_the_collected_message():
    from quillfw.crypto.hashes import tagged_hash
    version, inputs, outputs, locktime, spent = _tx2()
    d = TxDigests.from_tx(version, inputs, outputs, locktime, spent)
    this = inputs[0] + spent[0]
    for hash_type in (0, 1, 2, 3, 0x81, 0x82, 0x83):
        msg = sig_msg(d, 0, hash_type, this, b"\x50", outputs[0])
        assert sighash(d, 0, hash_type, this, b"\x50", outputs[0]) == tagged_hash("TapSighash", msg)
