"""A multisig descriptor as the device registers it (quill.device.multisig):
`quill-signer register --desc DESC [--desc DESC] --name NAME`.

Bitcoin Core's external-signer protocol has no registration command (HWI-style
tools register out of band, as Jade's register_multisig or Coldcard's wallet
file import); this is Quill's. Accepted, with xpubs (tpubs off mainnet) that
carry their key origins:

    sh(multi(...)), wsh(multi(...)), sh(wsh(multi(...))), and sortedmulti
    keys ending /<0;1>/* (BIP389), or /0/* (the wallet's change then is /1/*),
    or two descriptors, /0/* and /1/*, as a Core wallet lists them
"""
from __future__ import annotations

from quill.device.multisig import Registration
from quill.wallet.descriptors import DescriptorError, check_checksum, parse

_SCRIPT_TYPES = {("sh", None): "p2sh", ("wsh", None): "p2wsh", ("sh", "wsh"): "p2sh-p2wsh"}


class RegistrationError(ValueError):
    """A descriptor the device cannot register (the message says why)."""


def _receive_form(desc: str) -> str:
    """The descriptor body with its keys at /0/* (checksum checked and dropped)."""
    try:
        body = check_checksum(desc.strip(), False)
    except DescriptorError as e:
        raise RegistrationError(str(e)) from None
    return body.replace("/<0;1>/*", "/0/*")


def registration(descs: list[str], name: str, chain: str, network: str) -> Registration:
    if not 1 <= len(descs) <= 2:
        raise RegistrationError("Give one descriptor (/<0;1>/* or /0/*) or two (/0/* and /1/*)")
    body = _receive_form(descs[0])
    if len(descs) == 2 and _receive_form(descs[1]).replace("/1/*", "/0/*") != body:
        raise RegistrationError("The second descriptor must be the first one's change (/1/*)")
    try:
        parsed = parse(body, chain)
    except DescriptorError as e:
        raise RegistrationError(f"Invalid descriptor: {e}") from None
    node = parsed.node
    inner = node.sub.kind if node.sub is not None and node.sub.kind == "wsh" else None
    multi = node.sub.sub if inner else node.sub
    script_type = _SCRIPT_TYPES.get((node.kind, inner))
    if script_type is None or multi is None or multi.kind not in ("multi", "sortedmulti"):
        raise RegistrationError("Only sh(multi), wsh(multi), sh(wsh(multi)) and their "
                                "sortedmulti are registered")
    signers: list[tuple[bytes, str, str]] = []
    for i, key in enumerate(multi.keys, 1):
        if key.ext is None or key.origin is None:
            raise RegistrationError(f"Key {i} must be an xpub with its origin [fingerprint/path]")
        if key.ext_priv is not None:
            raise RegistrationError(f"Key {i} is a private key: register xpubs only")
        if key.path != [0] or key.wildcard != "unhardened":
            raise RegistrationError(f"Key {i} must end with /<0;1>/* or /0/*")
        fingerprint, path = key.origin
        signers.append((fingerprint, "m" + "".join(
            f"/{p & 0x7FFFFFFF}h" if p & 0x80000000 else f"/{p}" for p in path),
            key.ext.serialize(chain)))
    return Registration(name, script_type, multi.kind == "sortedmulti", multi.threshold, signers,
                        network)
