"""The keys a signing call was given: Core's FlatSigningProvider as signrawtransactionwithkey fills it.

The secrets go to the device only; the host uses the public keys to solve scripts.
"""
from __future__ import annotations

from coincurve import PrivateKey

from quill.tx.hashes import hash160


class Key:
    """One WIF key: the secret goes to the device only, the public key solves scripts."""
    __slots__ = ("secret", "compressed", "pubkey")

    def __init__(self, secret: bytes, compressed: bool) -> None:
        self.secret = secret
        self.compressed = compressed
        self.pubkey: bytes = PrivateKey(secret).public_key.format(compressed)

    def __repr__(self) -> str:  # never the secret
        return f"Key(pubkey={self.pubkey.hex()})"


class KeyStore:
    """Keys and public keys by hash160(pubkey), scripts by hash160(script) (Core v28+)."""

    def __init__(self) -> None:
        self.keys: dict[bytes, Key] = {}
        self.scripts: dict[bytes, bytes] = {}

    def add_key(self, key: Key) -> None:
        self.keys.setdefault(hash160(key.pubkey), key)   # emplace: the first one stays

    def add_script(self, script: bytes) -> None:
        self.scripts.setdefault(hash160(script), script)

    def get_key(self, keyid: bytes) -> Key | None:
        return self.keys.get(keyid)

    def get_pubkey(self, keyid: bytes) -> bytes | None:
        key = self.keys.get(keyid)
        return None if key is None else key.pubkey

    def get_script(self, scriptid: bytes) -> bytes | None:
        return self.scripts.get(scriptid)

    def get_key_by_xonly(self, xonly: bytes) -> Key | None:
        """Core's GetKeyByXOnly: the key whose compressed public key is 02/03 || xonly."""
        for prefix in (b"\x02", b"\x03"):
            key = self.keys.get(hash160(prefix + xonly))
            if key is not None:
                return key
        return None
