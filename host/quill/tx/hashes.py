"""Hash functions used by transactions, scripts and addresses.

Hashes are kept in internal byte order everywhere; Core prints txids and block
hashes byte-reversed (uint256::GetHex), which `hash_to_hex` reproduces.
"""
import hashlib

_sha256 = hashlib.sha256


def sha256(data) -> bytes:
    return _sha256(data).digest()


def sha256d(data) -> bytes:
    """Bitcoin's Hash(): SHA256(SHA256(data))."""
    return _sha256(_sha256(data).digest()).digest()


def ripemd160(data) -> bytes:
    return hashlib.new("ripemd160", data).digest()


def hash160(data) -> bytes:
    """RIPEMD160(SHA256(data)), as used by P2PKH/P2SH and BIP173 v0 key hashes."""
    return ripemd160(_sha256(data).digest())


def hash_to_hex(h: bytes) -> str:
    """Display form of an internal-order 32-byte hash (Core's uint256::GetHex)."""
    return h[::-1].hex()


def hex_to_hash(s: str) -> bytes:
    """Internal-order bytes of a display-form hash; ValueError if not 64 hex chars."""
    if len(s) != 64:
        raise ValueError("hash must be 64 hex characters")
    return bytes.fromhex(s)[::-1]
