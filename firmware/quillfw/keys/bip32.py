"""BIP32 hierarchical deterministic keys: the master key from a seed, private
child derivation (CKDpriv), the serialized extended public key, and paths.

    master_node(seed)            -> Node
    parse_path("m/84h/1h/0h")    -> [0x80000054, 0x80000001, 0x80000000]
    format_path(indices)         -> "m/84h/1h/0h"
    Node.child(index)            CKDpriv
    Node.pubkey(), Node.fingerprint(), Node.xpub(version)

Child indices >= 2^31 (hardened) are not small ints on a board (31 bits); they
only ever exist as the 4-byte big-endian serialization and in a path list.
"""
from quillfw.crypto import secp256k1
from quillfw.crypto.hashes import hash160, hmac_sha512

HARDENED = 0x80000000
MAX_DEPTH = 255

# SLIP-132-free version bytes of an extended public key (BIP32)
XPUB = b"\x04\x88\xb2\x1e"   # mainnet
TPUB = b"\x04\x35\x87\xcf"   # every test network
XPRV = b"\x04\x88\xad\xe4"   # only ever used by the tests' vectors


class Node:
    """One BIP32 node: its secret (bytes 32), chain code, depth, parent fingerprint
    and child number (4 bytes each)."""

    def __init__(self, secret, chain_code, depth=0, parent=b"\x00\x00\x00\x00",
                 child_number=b"\x00\x00\x00\x00"):
        self.secret = secret
        self.chain_code = chain_code
        self.depth = depth
        self.parent = parent
        self.child_number = child_number
        self._pubkey = None

    def pubkey(self):
        if self._pubkey is None:
            self._pubkey = secp256k1.pubkey_from_secret(self.secret)
        return self._pubkey

    def fingerprint(self):
        return hash160(self.pubkey())[:4]

    def child(self, index):
        if self.depth >= MAX_DEPTH:
            raise ValueError("derivation path is too deep")
        number = index.to_bytes(4, "big")
        if index >= HARDENED:
            data = b"\x00" + self.secret + number
        else:
            data = self.pubkey() + number
        digest = hmac_sha512(self.chain_code, data)
        tweak = int.from_bytes(digest[:32], "big")
        k = (tweak + int.from_bytes(self.secret, "big")) % secp256k1.N
        if tweak >= secp256k1.N or k == 0:
            # probability below 2^-127; BIP32 says: proceed with the next index
            raise ValueError("invalid child key, use the next index")
        return Node(k.to_bytes(32, "big"), digest[32:], self.depth + 1, self.fingerprint(),
                    number)

    def serialize(self, version, private=False):
        key = (b"\x00" + self.secret) if private else self.pubkey()
        return (version + bytes((self.depth,)) + self.parent + self.child_number
                + self.chain_code + key)

    def xpub(self, version=XPUB):
        from quillfw.keys.base58 import b58encode_check  # signing needs no text: heap
        return b58encode_check(self.serialize(version))


def master_node(seed):
    digest = hmac_sha512(b"Bitcoin seed", seed)
    k = int.from_bytes(digest[:32], "big")
    if k == 0 or k >= secp256k1.N:
        raise ValueError("seed gives an invalid master key")
    return Node(digest[:32], digest[32:])


def parse_path(text):
    """A path as text: "m", "m/0", "m/84h/1'/0H" (h, H and ' mark hardened)."""
    parts = text.split("/")
    if parts[0] != "m":
        raise ValueError("a path starts with m")
    indices = []
    for part in parts[1:]:
        hardened = part[-1:] in ("h", "H", "'")
        digits = part[:-1] if hardened else part
        if not digits or not digits.isdigit() or len(digits) > 10:
            raise ValueError("bad path element")
        value = int(digits)
        if value >= HARDENED:
            raise ValueError("path index out of range")
        indices.append(value + HARDENED if hardened else value)
    if len(indices) > MAX_DEPTH:
        raise ValueError("derivation path is too deep")
    return indices


def format_path(indices):
    parts = ["m"]
    for index in indices:
        parts.append("%dh" % (index - HARDENED) if index >= HARDENED else "%d" % index)
    return "/".join(parts)
