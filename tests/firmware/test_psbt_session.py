"""PSBT signing with the device's own keys (quillfw.psbt), under CPython and
MicroPython: a P2WPKH input proven by its previous transaction is signed with
the key at its path, change is recognised, and what the BIP174 attacks need is
refused (a previous transaction that is not the outpoint's, an amount that
differs from it, a segwit v0 input without it, change or inputs that are not
the device's keys, a locked device)."""
import hashlib

from quillfw.crypto import ecdsa
from quillfw.keys import bip32
from quillfw.psbt import owned
from quillfw.psbt.address import address
from quillfw.psbt.prevtx import PrevTx
from quillfw.psbt.session import PsbtSession
from quillfw.sighash import segwit_v0
from quillfw.sighash.txstream import compact_size, u32le
from quillfw.sighash.txstream import txout as ser_txout
from quillfw.signing.session import SessionError
from tests.firmware import fwtest

SEED = bytes(range(16))           # BIP32 test vector 1's seed
H = bip32.HARDENED
SPEND = "m/84h/1h/0h/0/0"
CHANGE = "m/84h/1h/0h/1/0"
AMOUNT = 100000
OTHER = b"\x00\x14" + bytes(20)   # someone else's P2WPKH


_PUBKEYS = {}


def _pubkey(path):
    # each derivation costs point multiplications: seconds on the Cortex-M0+ target
    if path not in _PUBKEYS:
        node = bip32.master_node(SEED)
        for index in bip32.parse_path(path):
            node = node.child(index)
        _PUBKEYS[path] = node.pubkey()
    return _PUBKEYS[path]


def _prev_tx(script_pubkey, amount, vout=1):
    outs = [ser_txout(7, b"\x51")] * vout + [ser_txout(amount, script_pubkey)]
    raw = (u32le(2) + b"\x01" + bytes(32) + u32le(0) + b"\x01\x51" + u32le(0xFFFFFFFF)
           + compact_size(len(outs)) + b"".join(outs) + u32le(0))
    return raw, hashlib.sha256(hashlib.sha256(raw).digest()).digest()


def _boot(locked=False):
    return [None, None, [None if locked else bytearray(SEED), None], None, []]   # quillfw.keys.methods.register's state


def _session(spk, amount=AMOUNT, prev=True, prev_amount=None, txid=None, locked=False):
    s = PsbtSession(_boot(locked))
    s.begin(2, 0, 1, 2, "regtest")
    raw, real_txid = _prev_tx(spk, AMOUNT if prev_amount is None else prev_amount)
    if prev:
        s.prev_tx(1, raw[:11], True)
        s.prev_tx(1, raw[11:], False)
    txid = real_txid if txid is None else txid
    txin = [txid, 1, 0xFFFFFFFD, amount, spk]
    token = s.add_input(*txin)
    return s, txin, token


def _expect(code, step, *args):
    try:
        step(*args)
    except SessionError as e:
        assert e.code == code, e.code
        return e.message
    raise AssertionError("no error, expected " + code)


def test_prev_tx_parser_gives_txid_and_output_in_any_pieces():
    raw, txid = _prev_tx(b"\x00\x14" + bytes(range(20)), 12345, vout=2)
    for step in (1, 3, 64, len(raw)):
        p = PrevTx(2)
        for i in range(0, len(raw), step):
            p.feed(raw[i:i + step])
        got_txid, out_hash = p.finish()
        assert got_txid == txid
        assert out_hash == hashlib.sha256(ser_txout(12345, b"\x00\x14" + bytes(range(20)))).digest()
    p = PrevTx(5)                     # it has outputs 0..2 only
    p.feed(raw)
    with fwtest.raises(ValueError):
        p.finish()
    p = PrevTx(0)
    p.feed(raw[:-1])
    with fwtest.raises(ValueError):
        p.finish()
    with fwtest.raises(ValueError):   # BIP144's marker: the witness must be stripped
        PrevTx(0).feed(u32le(2) + b"\x00\x01")


def test_p2wpkh_input_signed_and_change_recognised():
    pub = _pubkey(SPEND)
    spk = owned.script_for("p2wpkh", pub)
    s, txin, token = _session(spk)
    s.add_output(60000, OTHER)
    change_spk = owned.script_for("p2wpkh", _pubkey(CHANGE))
    s.add_output(39000, change_spk, CHANGE)
    # what the user reviews: the PSBT methods count the same outputs into the confirmation
    from quillfw.signing.confirm import Confirmation
    from quillfw.ui.screens import review
    conf = Confirmation(display=({}, "a panel"))    # a device with a display keeps the record
    conf.reset("regtest")
    conf.count(AMOUNT, False, spk, sequence=0xFFFFFFFD)
    conf.count(60000, True, OTHER)
    conf.count(39000, True, change_spk, True)
    lines = review(conf).lines()
    assert lines[1] == "Output 1 of 2: %s 0.00060000 BTC" % address(OTHER, "regtest")
    assert lines[2] == "Change 2 of 2: %s 0.00039000 BTC" % address(change_spk, "regtest")
    assert lines[3] == "Fee: 0.00001000 BTC" and not any("Warning" in line for line in lines)
    assert review(conf, 0x83).lines()[-1] == \
        "Warning: outputs not committed (sighash 0x83, SIGHASH_SINGLE|ANYONECANPAY)"
    sig = s.sign(0, txin, token, SPEND, 1)
    digest = segwit_v0.sighash_tx(2, [(txin[0], 1, 0xFFFFFFFD)], [(60000, OTHER), (39000, change_spk)],
                                  0, 0, owned.script_for("p2pkh", pub), AMOUNT, 1)
    assert sig[-1] == 1 and ecdsa.verify(pub, digest, sig[:-1])
    s.end()


def test_previous_transaction_of_another_outpoint_is_refused():
    spk = owned.script_for("p2wpkh", _pubkey(SPEND))
    message = _expect("prev_tx", _session, spk, AMOUNT, True, None, bytes(32))
    assert "txid" in message


def test_amount_differing_from_the_previous_output_is_refused():
    spk = owned.script_for("p2wpkh", _pubkey(SPEND))
    message = _expect("prev_tx", _session, spk, AMOUNT - 1)
    assert "amount" in message


def test_segwit_v0_input_without_previous_transaction_is_not_signed():
    spk = owned.script_for("p2wpkh", _pubkey(SPEND))
    s, txin, token = _session(spk, prev=False)
    s.add_output(60000, OTHER)
    s.add_output(39000, OTHER)
    _expect("unproven", s.sign, 0, txin, token, SPEND, 1)


def test_input_or_change_not_of_this_devices_key_is_refused():
    spk = owned.script_for("p2wpkh", _pubkey(SPEND))
    s, txin, token = _session(spk)
    _expect("not_own", s.add_output, 60000, OTHER, CHANGE)
    s, txin, token = _session(spk)
    s.add_output(60000, OTHER)
    s.add_output(39000, OTHER)
    _expect("not_own", s.sign, 0, txin, token, "m/84h/1h/0h/0/1", 1)


def test_locked_device_signs_nothing():
    spk = owned.script_for("p2wpkh", _pubkey(SPEND))
    s, txin, token = _session(spk, locked=True)
    s.add_output(60000, OTHER)
    s.add_output(39000, OTHER)
    _expect("locked", s.sign, 0, txin, token, SPEND, 1)


def test_addresses_of_the_four_kinds():
    # BIP173/BIP350 and Base58Check encodings of known scripts
    assert address(bytes.fromhex("0014751e76e8199196d454941c45d1b3a323f1433bd6"), "main") \
        == "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4"
    assert address(bytes.fromhex("5120" + "79be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798"),
                         "main") == "bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqzk5jj0"
    assert address(b"\x76\xa9\x14" + bytes(20) + b"\x88\xac", "main") == "1111111111111111111114oLvT2"
    assert address(b"\x6a", "main") is None
    pub = _pubkey(SPEND)
    for kind in owned.KINDS:
        assert owned.classify(owned.script_for(kind, pub), pub) == kind
        assert owned.classify(owned.script_for(kind, pub), _pubkey(CHANGE)) is None


def test_the_spent_output_cannot_change_between_pieces():
    spk = owned.script_for("p2wpkh", _pubkey(SPEND))
    s = PsbtSession(_boot())
    s.begin(2, 0, 1, 1, "regtest")
    raw, _ = _prev_tx(spk, AMOUNT)
    s.prev_tx(0, raw[:11], True)
    _expect("prev_tx", s.prev_tx, 1, raw[11:], False)
