"""A registered multisig wallet (protocol/SPEC.md §12): its policy, its record
on flash, and its scripts.

    w = Wallet.from_params(name, script_type, sorted, threshold, signers, network)
        signers: [[fingerprint (4 bytes), origin path (text), xpub (text)], ...];
        checks everything but whose keys they are (quillfw.multisig.methods does)
    w.encode() -> bytes, Wallet.decode(body) -> Wallet     the record's body
    w.own(fingerprint, path) -> the signer this device's path names, or -1
    w.script(chain, index, cache) -> the multi/sortedmulti script at <chain>/<index>
    script_pubkey(script_type, script)

The cosigners' keys at /<chain>/<index> are BIP32 public derivations (CKDpub)
of their xpubs; `cache` keeps one derivation of /<chain> per signer for a
session, so each further index costs one point multiplication per cosigner.
Every key is compressed and every path below an xpub is /<0;1>/*: chain 0
receives, chain 1 is change (BIP48, Coldcard and Jade wallets alike).
"""
from quillfw.crypto import secp256k1
from quillfw.crypto.hashes import hash160, hmac_sha512, sha256
from quillfw.multisig.methods import MAX_COSIGNERS, SCRIPT_TYPES

MAX_NAME = 16
MAX_ORIGIN_DEPTH = 8
HARDENED = 0x80000000
_XPUB_SIZE = 74         # a serialized extended key without its version bytes
_NETWORKS = ("main", "test", "regtest")
_VERSIONS = (b"\x04\x88\xb2\x1e", b"\x04\x35\x87\xcf", b"\x04\x35\x87\xcf")   # xpub, tpub, tpub
OP_CHECKMULTISIG = 0xAE


def _op_n(n):
    return 0x50 + n     # OP_1 .. OP_16


def _check_name(name):
    if not 1 <= len(name) <= MAX_NAME:
        raise ValueError("name must be 1 to %d characters" % MAX_NAME)
    for ch in name:
        if ch < " " or ch > "~":
            raise ValueError("name must be printable ASCII")


def parse_xpub(text, network):
    """The 74 bytes after the version of an xpub (main) or tpub (test, regtest)."""
    from quillfw.keys.base58 import b58decode_check
    try:
        data = b58decode_check(text)
    except ValueError:
        raise ValueError("invalid extended public key") from None
    if len(data) != 78 or data[45] not in (2, 3):
        raise ValueError("invalid extended public key")
    if data[:4] != _VERSIONS[_NETWORKS.index(network)]:
        raise ValueError("the extended key is for another network: expected %s"
                         % ("an xpub" if network == "main" else "a tpub"))
    secp256k1.sec_decode(data[45:78])       # on the curve
    return data[4:]


def format_xpub(xpub74, network):
    from quillfw.keys.base58 import b58encode_check
    return b58encode_check(_VERSIONS[_NETWORKS.index(network)] + xpub74)


def ckd_pub(pubkey, chain_code, index):
    """BIP32 CKDpub for a non-hardened index: (child pubkey, child chain code)."""
    digest = hmac_sha512(chain_code, bytes(pubkey) + index.to_bytes(4, "big"))
    tweak = int.from_bytes(digest[:32], "big")
    if tweak >= secp256k1.N:
        raise ValueError("invalid child key, use the next index")
    point = secp256k1.point_add(secp256k1.point_mul_g(tweak), secp256k1.sec_decode(pubkey))
    if point is None:
        raise ValueError("invalid child key, use the next index")
    return secp256k1.sec_encode(point), digest[32:]


def multisig_script(threshold, pubkeys):
    """OP_k <key>... OP_n OP_CHECKMULTISIG (keys of 33 bytes)."""
    out = bytearray(3 + 34 * len(pubkeys))
    out[0] = _op_n(threshold)
    pos = 1
    for key in pubkeys:
        out[pos] = 33
        out[pos + 1:pos + 34] = key
        pos += 34
    out[pos] = _op_n(len(pubkeys))
    out[pos + 1] = OP_CHECKMULTISIG
    return bytes(out)


def script_pubkey(script_type, script):
    if script_type == "p2sh":
        return b"\xa9\x14" + hash160(script) + b"\x87"
    program = b"\x00\x20" + sha256(script)
    if script_type == "p2wsh":
        return program
    return b"\xa9\x14" + hash160(program) + b"\x87"


def _sort(keys):
    # insertion sort: BIP67's lexicographic order of the compressed keys (n <= 15)
    for i in range(1, len(keys)):
        key = keys[i]
        j = i - 1
        while j >= 0 and keys[j] > key:
            keys[j + 1] = keys[j]
            j -= 1
        keys[j + 1] = key
    return keys


class Wallet:
    def __init__(self, name, script_type, is_sorted, threshold, signers, network):
        self.name = name
        self.script_type = script_type
        self.sorted = is_sorted
        self.threshold = threshold
        self.signers = signers      # [(fingerprint 4 bytes, origin path list, xpub74), ...]
        self.network = network

    @classmethod
    def from_params(cls, name, script_type, is_sorted, threshold, signers, network):
        from quillfw.keys.bip32 import parse_path
        _check_name(name)
        if script_type not in SCRIPT_TYPES:
            raise ValueError("script_type must be one of " + ", ".join(SCRIPT_TYPES))
        if network not in _NETWORKS:
            raise ValueError("network must be main, test or regtest")
        if not 1 <= len(signers) <= MAX_COSIGNERS:
            raise ValueError("a wallet has 1 to %d cosigners" % MAX_COSIGNERS)
        if not 1 <= threshold <= len(signers):
            raise ValueError("threshold must be 1 to %d" % len(signers))
        parsed = []
        for i, signer in enumerate(signers):
            if not isinstance(signer, list) or len(signer) != 3:
                raise ValueError("each signer must be [fingerprint, path, xpub]")
            fingerprint, path, xpub = signer
            if not isinstance(fingerprint, bytes) or len(fingerprint) != 4:
                raise ValueError("signer %d: fingerprint must be 4 bytes" % (i + 1))
            if not isinstance(path, str) or not isinstance(xpub, str):
                raise ValueError("signer %d: path and xpub are text" % (i + 1))
            try:
                indices = parse_path(path)
                xpub74 = parse_xpub(xpub, network)
            except ValueError as e:
                raise ValueError("signer %d: %s" % (i + 1, e)) from None
            if len(indices) > MAX_ORIGIN_DEPTH:
                raise ValueError("signer %d: origin path deeper than %d" % (i + 1, MAX_ORIGIN_DEPTH))
            for earlier in parsed:
                if earlier[2][9:] == xpub74[9:]:
                    raise ValueError("signer %d: the same key twice" % (i + 1))
            parsed.append((fingerprint, indices, xpub74))
        return cls(name, script_type, bool(is_sorted), threshold, parsed, network)

    # ---- the record: type sorted threshold n network len(name) name, then per signer
    # ---- fingerprint[4] depth path[4 * depth] xpub74

    def encode(self):
        name = self.name.encode()
        out = bytearray((SCRIPT_TYPES.index(self.script_type), 1 if self.sorted else 0,
                         self.threshold, len(self.signers), _NETWORKS.index(self.network),
                         len(name)))
        out.extend(name)
        for fingerprint, path, xpub74 in self.signers:
            out.extend(fingerprint)
            out.append(len(path))
            for index in path:
                out.extend(index.to_bytes(4, "big"))
            out.extend(xpub74)
        return bytes(out)

    @classmethod
    def decode(cls, body):
        n_name = body[5]
        pos = 6 + n_name
        signers = []
        for _ in range(body[3]):
            fingerprint = bytes(body[pos:pos + 4])
            depth = body[pos + 4]
            pos += 5
            path = [int.from_bytes(body[pos + 4 * i:pos + 4 * i + 4], "big") for i in range(depth)]
            pos += 4 * depth
            signers.append((fingerprint, path, bytes(body[pos:pos + _XPUB_SIZE])))
            pos += _XPUB_SIZE
        if pos != len(body):
            raise ValueError("malformed multisig record")
        return cls(bytes(body[6:6 + n_name]).decode(), SCRIPT_TYPES[body[0]], body[1] == 1,
                   body[2], signers, _NETWORKS[body[4]])

    # ---- what it pays to ----------------------------------------------------------

    def own(self, fingerprint, path):
        """The signer whose origin is path less its last two steps (<0;1>/index)
        and whose fingerprint is this device's, or -1."""
        if len(path) < 2 or path[-2] not in (0, 1) or path[-1] >= HARDENED:
            return -1
        origin = path[:-2]
        for i, signer in enumerate(self.signers):
            if signer[0] == fingerprint and list(signer[1]) == list(origin):
                return i
        return -1

    def script(self, chain, index, cache, own=None):
        """The multisig script at /<chain>/<index>; cache: a dict kept by the caller;
        own: (signer, its key there) when the device derived it from its seed."""
        keys = []
        for i, signer in enumerate(self.signers):
            if own is not None and own[0] == i:
                keys.append(own[1])
                continue
            node = cache.get((self.name, i, chain))
            if node is None:
                xpub74 = signer[2]
                node = ckd_pub(xpub74[41:74], xpub74[9:41], chain)
                cache[(self.name, i, chain)] = node
            keys.append(ckd_pub(node[0], node[1], index)[0])
        if self.sorted:
            _sort(keys)
        return multisig_script(self.threshold, keys)

    def describe(self):
        """The policy as the user confirms it."""
        from quillfw.keys.bip32 import format_path
        lines = ["%d of %d %s %s" % (self.threshold, len(self.signers), self.script_type,
                                     "sortedmulti" if self.sorted else "multi")]
        for i, (fingerprint, path, xpub74) in enumerate(self.signers):
            lines.append("%d: [%s%s] %s" % (i + 1, fingerprint.hex(), format_path(path)[1:],
                                            format_xpub(xpub74, self.network)))
        return "; ".join(lines)

    def summary(self):
        return {"name": self.name, "script_type": self.script_type, "sorted": self.sorted,
                "threshold": self.threshold, "n": len(self.signers)}
