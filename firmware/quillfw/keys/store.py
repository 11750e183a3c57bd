"""The seed on flash, encrypted under a key derived from the PIN.

File layout (all integers big-endian):

    magic "QSEED1" | rounds u32 | max_attempts u8 | failures u8 | has_pin u8
    | salt[16] | nonce[16] | ciphertext[64] | tag[32]

key = PBKDF2-HMAC-SHA256(PIN, salt, rounds), sized per board (the slow KDF);
the 64-byte BIP32 seed is XORed with HMAC-SHA256(key, "enc" | nonce | i) for
i = 0, 1, and tag = HMAC-SHA256(HMAC-SHA256(key, "mac"), everything before the
failure counter | has_pin | salt | nonce | ciphertext). A wrong PIN fails the tag.

The failure counter is written *before* a PIN is tried and cleared after it
succeeded, so cutting the power mid-try still counts the try; the seed is
wiped (overwritten, then removed) when max_attempts tries in a row failed.
With path None the file lives in RAM (an emulator without a state directory).
"""
import os

from quillfw.compat import forget
from quillfw.crypto.hashes import hmac_sha256

MAGIC = b"QSEED1"
SEED_SIZE = 64
_HEADER = len(MAGIC) + 4 + 1 + 1 + 1
_SIZE = _HEADER + 16 + 16 + SEED_SIZE + 32
_FAILURES = len(MAGIC) + 5   # offset of the failure counter


class WrongPin(Exception):
    def __init__(self, attempts_left):
        super().__init__("wrong PIN")
        self.attempts_left = attempts_left


def _pin_key(pin, salt, rounds, poll):
    from quillfw.keys.kdf import pbkdf2_hmac_sha256
    key = pbkdf2_hmac_sha256(pin.encode(), salt, rounds, poll)
    forget("quillfw.keys.kdf")   # only set-up and unlock need it
    return key


def _keystream_xor(key, nonce, data):
    stream = hmac_sha256(key, b"enc" + nonce + b"\x00") + hmac_sha256(key, b"enc" + nonce + b"\x01")
    return (int.from_bytes(data, "big") ^ int.from_bytes(stream, "big")).to_bytes(SEED_SIZE, "big")


def _tag(key, record):
    mac_key = hmac_sha256(key, b"mac")
    return hmac_sha256(mac_key, record[:_FAILURES] + record[_FAILURES + 1:_SIZE - 32])


class SeedStore:
    def __init__(self, path=None, ram=None):
        """ram: with path None, a one-item list that holds the record, kept by the
        caller (this module is forgotten between requests)."""
        self.path = path
        self._ram_box = ram if ram is not None else [None]

    @property
    def _ram(self):
        return self._ram_box[0]

    # ---- the record -------------------------------------------------------------

    def _read(self):
        if self.path is None:
            return self._ram
        try:
            with open(self.path, "rb") as f:
                record = f.read()
        except OSError:
            return None
        if len(record) != _SIZE or record[:len(MAGIC)] != MAGIC:
            return None
        return record

    def _write(self, record):
        if self.path is None:
            self._ram_box[0] = bytes(record)
            return
        tmp = self.path + ".tmp"
        with open(tmp, "wb") as f:
            f.write(record)
        os.rename(tmp, self.path)

    def exists(self):
        return self._read() is not None

    def status(self):
        """(has_pin, max_attempts, failures) of the stored seed, or None."""
        record = self._read()
        if record is None:
            return None
        return record[_HEADER - 1] == 1, record[_FAILURES - 1], record[_FAILURES]

    # ---- writing, unlocking, wiping -----------------------------------------------

    def save(self, seed, pin, rounds, max_attempts, poll=None):
        salt = os.urandom(16)
        nonce = os.urandom(16)
        key = _pin_key(pin, salt, rounds, poll)
        record = bytearray(MAGIC + rounds.to_bytes(4, "big")
                           + bytes((max_attempts, 0, 1 if pin else 0)) + salt + nonce
                           + _keystream_xor(key, nonce, seed) + bytes(32))
        record[_SIZE - 32:] = _tag(key, record)
        self._write(record)

    def unlock(self, pin, poll=None):
        """The seed (bytearray, to be wiped by its holder); WrongPin, or None when
        there is no seed (also after the last wrong try wiped it)."""
        record = self._read()
        if record is None:
            return None
        record = bytearray(record)
        rounds = int.from_bytes(record[len(MAGIC):len(MAGIC) + 4], "big")
        max_attempts = record[_FAILURES - 1]
        record[_FAILURES] += 1
        self._write(record)                    # count the try before making it
        start = _HEADER
        salt = bytes(record[start:start + 16])
        nonce = bytes(record[start + 16:start + 32])
        key = _pin_key(pin, salt, rounds, poll)
        if _tag(key, record) != bytes(record[_SIZE - 32:]):
            if record[_FAILURES] >= max_attempts:
                self.wipe()
                raise WrongPin(0)
            raise WrongPin(max_attempts - record[_FAILURES])
        record[_FAILURES] = 0
        self._write(record)
        return bytearray(_keystream_xor(key, nonce, bytes(record[start + 32:start + 32 + SEED_SIZE])))

    def wipe(self):
        if self.path is None:
            self._ram_box[0] = None
            return
        try:
            with open(self.path, "wb") as f:
                f.write(bytes(_SIZE))
            os.remove(self.path)
        except OSError:
            pass
