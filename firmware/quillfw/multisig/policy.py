"""Registering a multisig wallet (protocol/SPEC.md §12): the policy checked
from multisig_register's parameters, its record's body, and what the user is
shown. Loaded for a registration only (quillfw.multisig.registry).

    wallet = from_params(name, script_type, sorted, threshold, signers, network)
        signers: [[fingerprint (4 bytes), origin path (text), xpub (text)], ...]
    encode(wallet) -> bytes          describe(wallet, first_address, own) -> text
    summary(wallet) -> multisig_list's entry
"""
import gc

from quillfw.crypto import secp256k1
from quillfw.multisig.methods import MAX_COSIGNERS, SCRIPT_TYPES
from quillfw.multisig.wallet import NETWORKS, Wallet

MAX_NAME = 16
MAX_ORIGIN_DEPTH = 8
_VERSIONS = (b"\x04\x88\xb2\x1e", b"\x04\x35\x87\xcf", b"\x04\x35\x87\xcf")   # xpub, tpub, tpub


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
    if data[:4] != _VERSIONS[NETWORKS.index(network)]:
        raise ValueError("the extended key is for another network: expected %s"
                         % ("an xpub" if network == "main" else "a tpub"))
    secp256k1.sec_decode(data[45:78])       # on the curve
    return data[4:]


def format_xpub(xpub74, network):
    from quillfw.keys.base58 import b58encode_check
    return b58encode_check(_VERSIONS[NETWORKS.index(network)] + xpub74)


def from_params(name, script_type, is_sorted, threshold, signers, network):
    """The Wallet of multisig_register's parameters; ValueError when they are not a
    policy the device can sign for (whose keys they are is the caller's check)."""
    from quillfw.keys.bip32 import parse_path
    _check_name(name)
    if script_type not in SCRIPT_TYPES:
        raise ValueError("script_type must be one of " + ", ".join(SCRIPT_TYPES))
    if network not in NETWORKS:
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
    return Wallet(name, script_type, bool(is_sorted), threshold, parsed, network)


def encode(wallet):
    """The record's body: type sorted threshold n network len(name) name, then per
    signer fingerprint[4] depth path[4 * depth] xpub74 (Wallet.decode reads it)."""
    name = wallet.name.encode()
    out = bytearray((SCRIPT_TYPES.index(wallet.script_type), 1 if wallet.sorted else 0,
                     wallet.threshold, len(wallet.signers), NETWORKS.index(wallet.network),
                     len(name)))
    out.extend(name)
    for fingerprint, path, xpub74 in wallet.signers:
        out.extend(fingerprint)
        out.append(len(path))
        for index in path:
            out.extend(index.to_bytes(4, "big"))
        out.extend(xpub74)
    return bytes(out)


def describe(wallet, first_address, own):
    """What the user confirms (quillfw.ui.screen.Screen): the wallet's name (the
    host's text, marked), the policy, every cosigner's fingerprint, path and xpub,
    and the first address."""
    from quillfw.keys.bip32 import format_path
    from quillfw.ui.screen import Screen, host
    items = [("Name:", host(wallet.name)),
             ("Policy: %d of %d %s %s" % (wallet.threshold, len(wallet.signers), wallet.script_type,
                                          "sortedmulti" if wallet.sorted else "multi"),)]
    for i, (fingerprint, path, xpub74) in enumerate(wallet.signers):
        items.append(("Cosigner %d of %d%s:" % (i + 1, len(wallet.signers),
                                                " (this device)" if i == own else ""),
                      fingerprint.hex(), format_path(path), format_xpub(xpub74, wallet.network)))
        gc.collect()    # base58's big-int garbage out between the cosigners (heap)
    items.append(("First address:", first_address))
    return Screen("multisig", "Add multisig", items, "Register")


def summary(wallet):
    return {"name": wallet.name, "script_type": wallet.script_type, "sorted": wallet.sorted,
            "threshold": wallet.threshold, "n": len(wallet.signers)}
