"""A registered multisig wallet (protocol/SPEC.md §12) as signing needs it:
its record read back, and its scripts. (Registering one, checking it and
showing it is quillfw.multisig.policy's: signing leaves that code out of RAM.)

    w = Wallet.decode(body)             the record's body (quillfw.multisig.policy.encode)
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
from quillfw.multisig.methods import SCRIPT_TYPES

HARDENED = 0x80000000
XPUB_SIZE = 74          # a serialized extended key without its version bytes
NETWORKS = ("main", "test", "regtest")
OP_CHECKMULTISIG = 0xAE


def _op_n(n):
    return 0x50 + n     # OP_1 .. OP_16


def ckd_pub(pubkey, chain_code, index):
    """BIP32 CKDpub for a non-hardened index: (child pubkey, child chain code)."""
    digest = hmac_sha512(chain_code, bytes(pubkey) + index.to_bytes(4, "big"))
    tweak = int.from_bytes(digest[:32], "big")
    if tweak >= secp256k1.N:
        raise ValueError("invalid child key, use the next index")
    if secp256k1.NATIVE is not None:    # libsecp256k1 where deployed: faster, less garbage
        xy = secp256k1.NATIVE.pubkey(digest[:32])
        tweak_g = (int.from_bytes(xy[:32], "big"), int.from_bytes(xy[32:], "big"))
    else:
        tweak_g = secp256k1.point_mul_g(tweak)
    point = secp256k1.point_add(tweak_g, secp256k1.sec_decode(pubkey))
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
    # insertion sort: BIP67's lexicographic order of the compressed keys (n <= 10)
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
            signers.append((fingerprint, path, bytes(body[pos:pos + XPUB_SIZE])))
            pos += XPUB_SIZE
        if pos != len(body):
            raise ValueError("malformed multisig record")
        return cls(bytes(body[6:6 + n_name]).decode(), SCRIPT_TYPES[body[0]], body[1] == 1,
                   body[2], signers, NETWORKS[body[4]])

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

