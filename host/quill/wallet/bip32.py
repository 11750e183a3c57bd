"""BIP32 extended keys: Base58Check (de)serialization and child derivation.

Point arithmetic is coincurve's (libsecp256k1); HMAC-SHA512 is hashlib's.
Private extended keys are accepted only so that descriptors written with an
xprv parse as Core parses them; they are never stored, logged or echoed.
"""

import hashlib
import hmac

import coincurve

from quill.consensus import SECP256K1_ORDER as ORDER
from quill.tx.address import base58check_decode, base58check_encode, chain_params
from quill.tx.hashes import hash160

HARDENED = 0x80000000


class DerivationError(ValueError):
    """A child key that cannot be derived (hardened step from a public key, or a
    BIP32 'invalid child' with probability 2^-127)."""


def _hmac512(key: bytes, data: bytes) -> bytes:
    return hmac.new(key, data, hashlib.sha512).digest()


def is_valid_pubkey(data: bytes) -> bool:
    try:
        coincurve.PublicKey(data)
    except ValueError:
        return False
    return True


class ExtPubKey:
    __slots__ = ("depth", "parent_fp", "child", "chain_code", "pubkey")

    def __init__(self, depth, parent_fp, child, chain_code, pubkey):
        self.depth = depth
        self.parent_fp = parent_fp
        self.child = child
        self.chain_code = chain_code
        self.pubkey = pubkey  # 33-byte compressed SEC

    def fingerprint(self) -> bytes:
        return hash160(self.pubkey)[:4]

    def derive(self, index: int) -> "ExtPubKey":
        """BIP32 CKDpub: non-hardened children only."""
        if index & HARDENED:
            raise DerivationError("hardened derivation from a public key")
        digest = _hmac512(self.chain_code, self.pubkey + index.to_bytes(4, "big"))
        tweak = int.from_bytes(digest[:32], "big")
        if tweak >= ORDER:
            raise DerivationError("invalid child")
        try:
            child = coincurve.PublicKey(self.pubkey).add(digest[:32]).format(compressed=True)
        except ValueError:
            raise DerivationError("invalid child") from None
        return ExtPubKey(self.depth + 1, self.fingerprint(), index, digest[32:], child)

    def serialize(self, chain) -> str:
        return base58check_encode(chain_params(chain).ext_public + _body(self, self.pubkey))

    def __eq__(self, other):
        return isinstance(other, ExtPubKey) and _body(self, self.pubkey) == _body(other, other.pubkey)

    def __hash__(self):
        return hash(_body(self, self.pubkey))


class ExtPrivKey:
    """An xprv parsed from a descriptor; only ever used to derive and neuter."""

    __slots__ = ("depth", "parent_fp", "child", "chain_code", "_secret", "_pub")

    def __init__(self, depth, parent_fp, child, chain_code, secret):
        self.depth = depth
        self.parent_fp = parent_fp
        self.child = child
        self.chain_code = chain_code
        self._secret = secret
        self._pub = None

    def _pubkey(self) -> bytes:
        if self._pub is None:
            self._pub = coincurve.PrivateKey(self._secret).public_key.format(compressed=True)
        return self._pub

    def __repr__(self):
        return "ExtPrivKey(<secret>)"

    def neuter(self) -> ExtPubKey:
        pub = self._pubkey()
        return ExtPubKey(self.depth, self.parent_fp, self.child, self.chain_code, pub)

    def secret(self) -> bytes:
        """The private key, for the signing device only."""
        return self._secret

    def derive(self, index: int) -> "ExtPrivKey":
        """BIP32 CKDpriv."""
        pub = self._pubkey()
        data = (b"\x00" + self._secret) if index & HARDENED else pub
        digest = _hmac512(self.chain_code, data + index.to_bytes(4, "big"))
        tweak = int.from_bytes(digest[:32], "big")
        k = (tweak + int.from_bytes(self._secret, "big")) % ORDER
        if tweak >= ORDER or k == 0:
            raise DerivationError("invalid child")
        return ExtPrivKey(self.depth + 1, hash160(pub)[:4], index, digest[32:], k.to_bytes(32, "big"))


def _body(key, keydata: bytes) -> bytes:
    return (bytes((key.depth,)) + key.parent_fp + key.child.to_bytes(4, "big")
            + key.chain_code + keydata)


def _split(data: bytes):
    return data[4], data[5:9], int.from_bytes(data[9:13], "big"), data[13:45], data[45:78]


def _header_ok(depth, parent_fp, child) -> bool:
    # A master key (depth 0) has no parent and is child 0 (BIP32 test vector 5).
    return depth != 0 or (parent_fp == b"\x00" * 4 and child == 0)


def decode_ext_pubkey(text: str, chain):
    """Core's DecodeExtPubKey for this chain's version bytes, or None."""
    data = base58check_decode(text, 78)
    if data is None or len(data) != 78 or data[:4] != chain_params(chain).ext_public:
        return None
    depth, parent_fp, child, chain_code, key = _split(data)
    if not _header_ok(depth, parent_fp, child) or key[0] not in (2, 3) or not is_valid_pubkey(key):
        return None
    return ExtPubKey(depth, parent_fp, child, chain_code, key)


def decode_ext_privkey(text: str, chain):
    """Core's DecodeExtKey for this chain's version bytes, or None."""
    data = base58check_decode(text, 78)
    if data is None or len(data) != 78 or data[:4] != chain_params(chain).ext_secret:
        return None
    depth, parent_fp, child, chain_code, key = _split(data)
    if not _header_ok(depth, parent_fp, child) or key[0] != 0:
        return None
    if not 0 < int.from_bytes(key[1:], "big") < ORDER:
        return None
    return ExtPrivKey(depth, parent_fp, child, chain_code, key[1:])


def master_from_seed(seed: bytes) -> ExtPrivKey:
    """BIP32 master key generation (used by tests and the test signer only)."""
    digest = _hmac512(b"Bitcoin seed", seed)
    return ExtPrivKey(0, b"\x00" * 4, 0, digest[32:], digest[:32])


def secret_of(key: ExtPrivKey) -> bytes:
    """The raw secret, for the TEST signer only."""
    return key._secret
