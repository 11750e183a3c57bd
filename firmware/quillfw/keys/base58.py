"""Base58Check (Bitcoin's address and extended-key text encoding)."""
from quillfw.crypto.hashes import sha256d

ALPHABET = b"123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"


def b58encode_check(payload):
    data = bytes(payload) + sha256d(payload)[:4]
    value = int.from_bytes(data, "big")
    zeros = 0
    for byte in data:
        if byte:
            break
        zeros += 1
    # filled from the end: MicroPython has neither [::-1] nor bytearray.reverse
    out = bytearray(zeros + len(data) * 138 // 100 + 1)
    pos = len(out)
    while value:
        value, digit = divmod(value, 58)
        pos -= 1
        out[pos] = ALPHABET[digit]
    for _ in range(zeros):
        pos -= 1
        out[pos] = ALPHABET[0]
    return bytes(out[pos:]).decode()


def b58decode_check(text):
    value = 0
    for ch in text.encode():
        digit = ALPHABET.find(bytes((ch,)))
        if digit < 0:
            raise ValueError("invalid base58 character")
        value = value * 58 + digit
    zeros = 0
    for ch in text.encode():
        if ch != ALPHABET[0]:
            break
        zeros += 1
    out = bytearray(len(text))
    pos = len(out)
    while value:
        pos -= 1
        out[pos] = value & 0xFF
        value >>= 8
    data = bytes(zeros) + bytes(out[pos:])
    if len(data) < 4 or sha256d(data[:-4])[:4] != data[-4:]:
        raise ValueError("invalid base58 checksum")
    return data[:-4]
