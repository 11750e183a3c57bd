"""BIP39 on the device (quillfw.keys.bip39), under CPython and MicroPython,
against the vectors BIP39 points to (trezor/python-mnemonic's vectors.json in
../shared/vectors/bips): entropy <-> words for every English vector; the seed
(passphrase "TREZOR") and its BIP32 master xprv for every vector under CPython
and for two under MicroPython, where one PBKDF2 of 2048 rounds of pure-Python
SHA-512 takes seconds."""
from quillfw.keys import bip32, bip39
from tests.firmware import fwtest


def _vectors():
    return fwtest.load_json("bips/bip39_vectors_trezor.json")["english"]


def test_words_from_entropy_and_back():
    for entropy, words, _seed, _xprv in _vectors():
        assert bip39.mnemonic_from_entropy(bytes.fromhex(entropy)) == words
        assert bip39.entropy_from_mnemonic(words).hex() == entropy


def test_seed_and_master_key():
    vectors = _vectors()
    if fwtest.IS_MICROPYTHON:
        vectors = vectors[:1] + vectors[-1:]
    for _entropy, words, seed, xprv in vectors:
        got = bip39.seed_from_mnemonic(words, "TREZOR")
        assert got.hex() == seed
        node = bip32.master_node(got)
        assert _xprv(node) == xprv


def _xprv(node):
    from quillfw.keys.base58 import b58encode_check
    return b58encode_check(node.serialize(bip32.XPRV, private=True))


def test_the_test_mnemonic_has_fingerprint_73c5da0a():
    seed = bip39.seed_from_mnemonic("abandon " * 11 + "about")
    assert bip32.master_node(seed).fingerprint().hex() == "73c5da0a"


def test_bad_mnemonics_are_refused_without_quoting_them():
    good = "abandon " * 11 + "about"
    cases = [
        ("abandon " * 12, "checksum"),                       # checksum of all-zero words
        ("abandon " * 11, "12, 15, 18, 21 or 24"),            # 11 words
        ("abandon " * 10 + "zzzz about", "not in the BIP39"),  # unknown word
        ("abandon " * 11 + "abou", "not in the BIP39"),
    ]
    for text, why in cases:
        with fwtest.raises(ValueError, why) as r:
            bip39.entropy_from_mnemonic(text)
        assert "abandon" not in str(r.value)
    assert len(bip39.entropy_from_mnemonic(good)) == 16


def test_word_lookup_covers_the_list_ends():
    assert bip39.word(0) == "abandon" and bip39.word(2047) == "zoo"
    assert bip39.word_index("abandon") == 0 and bip39.word_index("zoo") == 2047
    assert bip39.word_index("zoom") == -1 and bip39.word_index("abandonment") == -1
    assert bip39.word_index("") == -1


def test_normalized_spacing_and_case():
    assert bip39.normalized("  Abandon\tABOUT \n") == "abandon about"
