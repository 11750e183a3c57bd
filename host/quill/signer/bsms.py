"""BIP129 (Bitcoin Secure Multisig Setup) records, without encryption (TOKEN 00).

    key_record(client, fingerprint, chain, path, label)   round 1, the Signer's key record:
        BSMS 1.0
        00
        [<fingerprint>/<path>]<xpub>
        <label, 80 characters at most>
        <SIG: the first four lines signed by the key of the third, Bitcoin Core's signmessage
         (legacy) format: base64 of a 65-byte compact signature (quill.signer.message)>
    read_descriptor_record(text) -> (descriptor with /<0;1>/*, first address)   round 2's input
    check_descriptor_record(client, fingerprint, chain, wallet, address)        round 2's checks

Round 2, as BIP129 has the Signer check a descriptor record before it keeps it: the version is
"BSMS 1.0"; the descriptor (a template whose keys end /** with the restrictions /0/*,/1/*, or
keys already ending /<0;1>/* or /0/*) is one the device registers; the device's own key is in
it exactly (fingerprint, path and the xpub the device derives there, not the fingerprint alone);
the first address is the descriptor's /0/0. quill.signer.commands then registers it on the
device (quill.device.multisig), which shows the policy and the first address to its user.
"""
from __future__ import annotations

from quill.device import hwkeys
from quill.device.multisig import Registration
from quill.signer.message import MessageError, sign_message
from quill.tx.address import encode_destination
from quill.wallet.descriptors import DescriptorError, check_checksum, parse

VERSION = "BSMS 1.0"
NO_ENCRYPTION = "00"
MAX_LABEL = 80
PATH_RESTRICTIONS = "/0/*,/1/*"


class BsmsError(ValueError):
    """A record that cannot be made or is not accepted (the message says why)."""


def key_record(client: hwkeys.DeviceCaller, fingerprint: str, chain: str, path: str, label: str) -> str:
    if len(label) > MAX_LABEL or "\n" in label or "\r" in label:
        raise BsmsError(f"The key's description must be one line of {MAX_LABEL} characters at most")
    xpub = hwkeys.get_xpub(client, path, chain)[0]
    text = "\n".join((VERSION, NO_ENCRYPTION, f"[{fingerprint}{path[1:]}]{xpub}", label))
    try:
        signature = sign_message(client, path, text, chain)
    except MessageError as e:
        raise BsmsError(str(e)) from None
    return text + "\n" + signature + "\n"


def read_descriptor_record(text: str) -> tuple[str, str]:
    """(descriptor with /<0;1>/*, first address) of a round-2 descriptor record."""
    lines = [line.strip() for line in text.strip().splitlines()]
    if len(lines) != 4:
        raise BsmsError("A BSMS descriptor record has four lines: version, descriptor, "
                        "path restrictions, first address")
    version, descriptor, restrictions, address = lines
    if version != VERSION:
        raise BsmsError(f"Unsupported BSMS version: {version}")
    try:
        body = check_checksum(descriptor, False)
    except DescriptorError as e:
        raise BsmsError(str(e)) from None
    if "/**" in body:
        if restrictions.replace(" ", "") != PATH_RESTRICTIONS:
            raise BsmsError(f"Unsupported path restrictions: {restrictions} (the device derives "
                            f"{PATH_RESTRICTIONS})")
        body = body.replace("/**", "/<0;1>/*")
    elif restrictions != "No path restrictions" and restrictions.replace(" ", "") != PATH_RESTRICTIONS:
        raise BsmsError(f"Unsupported path restrictions: {restrictions}")
    return body, address


def first_address(body: str, chain: str) -> str:
    """The descriptor's first receive address (/0/0): what a descriptor record's fourth line says."""
    return str(encode_destination(parse(body.replace("/<0;1>/*", "/0/*"), chain).script(0), chain))


def check_descriptor_record(client: hwkeys.DeviceCaller, fingerprint: str, chain: str,
                            wallet: Registration, body: str, address: str) -> None:
    ours = [(path, xpub) for fp, path, xpub in wallet.signers if fp.hex() == fingerprint]
    if not ours:
        raise BsmsError("The descriptor has no key of this device")
    for path, xpub in ours:
        if hwkeys.get_xpub(client, path, chain)[0] != xpub:
            raise BsmsError(f"The key at {path} is not this device's (its fingerprint only is)")
    first = first_address(body, chain)
    if first != address:
        raise BsmsError(f"The record's first address {address} is not the descriptor's ({first})")
