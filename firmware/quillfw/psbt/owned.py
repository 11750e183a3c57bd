"""The device's own single-key scripts and their addresses.

    script_for(kind, pubkey)      the scriptPubKey of a kind for a compressed key:
        "p2pkh"        OP_DUP OP_HASH160 <hash160> OP_EQUALVERIFY OP_CHECKSIG (BIP44)
        "p2sh-p2wpkh"  OP_HASH160 <hash160(0 <hash160>)> OP_EQUAL (BIP49)
        "p2wpkh"       0 <hash160> (BIP84)
        "p2tr"         1 <BIP86 output key: the BIP341 tweak with no script tree>
    kind_of(script_pubkey)        -> the kind of a script of that shape, or None
    classify(script_pubkey, pubkey) -> the kind that pays to pubkey, or None

Their addresses are quillfw.psbt.address's (imported only while shown).
"""
from quillfw.crypto.hashes import hash160

KINDS = ("p2pkh", "p2sh-p2wpkh", "p2wpkh", "p2tr")
NETWORKS = ("main", "test", "regtest")


def kind_of(script_pubkey):
    n = len(script_pubkey)
    if n == 25 and script_pubkey[:3] == b"\x76\xa9\x14" and script_pubkey[23:] == b"\x88\xac":
        return "p2pkh"
    if n == 23 and script_pubkey[:2] == b"\xa9\x14" and script_pubkey[22] == 0x87:
        return "p2sh-p2wpkh"
    if n == 22 and script_pubkey[:2] == b"\x00\x14":
        return "p2wpkh"
    if n == 34 and script_pubkey[:2] == b"\x51\x20":
        return "p2tr"
    return None


def script_for(kind, pubkey):
    if kind == "p2tr":
        from quillfw.crypto.schnorr import taproot_tweak_pubkey
        return b"\x51\x20" + taproot_tweak_pubkey(pubkey[1:])[1]
    h = hash160(pubkey)
    if kind == "p2pkh":
        return b"\x76\xa9\x14" + h + b"\x88\xac"
    if kind == "p2wpkh":
        return b"\x00\x14" + h
    if kind == "p2sh-p2wpkh":
        return b"\xa9\x14" + hash160(b"\x00\x14" + h) + b"\x87"
    raise ValueError("unknown script type")


def classify(script_pubkey, pubkey):
    kind = kind_of(script_pubkey)
    if kind is not None and script_for(kind, pubkey) == bytes(script_pubkey):
        return kind
    return None
