"""The firmware carries BIP39's English word list as data (quillfw.keys.wordlist);
it must be the standard's list, word for word."""
from quillfw.keys import bip39
from tests.kit.vectors import vector_path


def test_firmware_word_list_is_bip39_english():
    words = vector_path("bips/bip39_english.txt").read_text().split()
    assert len(words) == 2048
    assert [bip39.word(i) for i in range(2048)] == words
    assert all(bip39.word_index(w) == i for i, w in enumerate(words))
