"""BIP39: mnemonic words from entropy and back, and the seed from the words.

    mnemonic_from_entropy(entropy)   16..32 bytes (multiple of 4) -> "word word ..."
    entropy_from_mnemonic(text)      the reverse; ValueError on an unknown word,
                                     a wrong word count or a bad checksum
    seed_from_mnemonic(text, passphrase="")   PBKDF2-HMAC-SHA512, 2048 rounds,
                                     salt "mnemonic" + passphrase (64 bytes)

Words are looked up in the English list by binary search over its fixed-width
fields (quillfw.keys.wordlist). Error texts never quote the words.
"""
import hashlib

from quillfw.keys.kdf import pbkdf2_hmac_sha512
from quillfw.keys.wordlist import WORDS

SEED_ROUNDS = 2048
WORD_COUNTS = (12, 15, 18, 21, 24)


def word(index):
    return WORDS[8 * index:8 * index + 8].rstrip().decode()


def word_index(text):
    needle = text.encode()
    if len(needle) > 8:
        return -1
    needle += b" " * (8 - len(needle))
    lo, hi = 0, 2047
    while lo <= hi:
        mid = (lo + hi) // 2
        field = WORDS[8 * mid:8 * mid + 8]
        if field == needle:
            return mid
        if field < needle:
            lo = mid + 1
        else:
            hi = mid - 1
    return -1


def mnemonic_from_entropy(entropy):
    n = len(entropy)
    if n < 16 or n > 32 or n % 4:
        raise ValueError("entropy must be 16 to 32 bytes, a multiple of 4")
    checksum_bits = n // 4
    value = (int.from_bytes(entropy, "big") << checksum_bits) | (
        hashlib.sha256(entropy).digest()[0] >> (8 - checksum_bits))
    count = (n * 8 + checksum_bits) // 11
    words = []
    for i in range(count - 1, -1, -1):
        words.append(word((value >> (11 * i)) & 2047))
    return " ".join(words)


def entropy_from_mnemonic(text):
    words = text.split()
    if len(words) not in WORD_COUNTS:
        raise ValueError("a mnemonic has 12, 15, 18, 21 or 24 words")
    value = 0
    for w in words:
        index = word_index(w)
        if index < 0:
            raise ValueError("mnemonic has a word not in the BIP39 English list")
        value = (value << 11) | index
    checksum_bits = len(words) // 3
    n = (len(words) * 11 - checksum_bits) // 8
    entropy = (value >> checksum_bits).to_bytes(n, "big")
    if value & ((1 << checksum_bits) - 1) != hashlib.sha256(entropy).digest()[0] >> (8 - checksum_bits):
        raise ValueError("mnemonic checksum is wrong")
    return entropy


def normalized(text):
    """Single spaces, lower case: the NFKD of the English list is the text itself."""
    return " ".join(text.lower().split())


def seed_from_mnemonic(text, passphrase="", poll=None):
    """poll: see quillfw.keys.kdf."""
    return pbkdf2_hmac_sha512(normalized(text).encode(), ("mnemonic" + passphrase).encode(),
                              SEED_ROUNDS, poll)
