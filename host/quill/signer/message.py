"""Bitcoin Core's signed messages (signmessage / verifymessage, the legacy format BIP129 and
HWI's signmessage use), signed on the device (protocol/SPEC.md §11 `sign_message`).

    sign_message(client, path, text, chain) -> base64 of the 65-byte compact signature

The device signs Core's message digest with the key at `path` and answers r || s; the header
byte's recovery id is found here, where the key is known (the device's xpub at `path`).
"""
from __future__ import annotations

import base64

import coincurve

from quill.device import hwkeys
from quill.tx.hashes import sha256d
from quill.tx.serialize import compact_size
from quill.wallet.bip32 import decode_ext_pubkey
from quillfw.psbt.methods import MAX_SIGNED_MESSAGE, MESSAGE_MAGIC  # the device signs the same digest

_COMPRESSED_P2PKH = 31      # the compact signature's header: 27 + 4 (compressed key) + recovery id


class MessageError(ValueError):
    """A message that cannot be signed, or a signature that is not the key's (the message says why)."""


def message_digest(text: str) -> bytes:
    """Bitcoin Core's MessageHash: the digest signmessage signs."""
    data = text.encode()
    return sha256d(MESSAGE_MAGIC + compact_size(len(data)) + data)


def compact_signature(rs: bytes, digest: bytes, pubkey: bytes) -> bytes:
    """The 65-byte signmessage signature: the header whose recovery id gives back `pubkey`."""
    for recid in range(4):
        try:
            recovered = coincurve.PublicKey.from_signature_and_message(rs + bytes((recid,)), digest, hasher=None)
        except ValueError:
            continue
        if recovered.format(compressed=True) == pubkey:
            return bytes((_COMPRESSED_P2PKH + recid,)) + rs
    raise MessageError("The device's signature is not by the key at the path asked")


def sign_message(client: hwkeys.DeviceCaller, path: str, text: str, chain: str) -> str:
    if len(text.encode()) > MAX_SIGNED_MESSAGE:
        raise MessageError(f"The message is longer than {MAX_SIGNED_MESSAGE} bytes")
    key = decode_ext_pubkey(hwkeys.get_xpub(client, path, chain)[0], chain)
    if key is None:
        raise MessageError("The device answered an extended key of another chain")
    rs = bytes(client.call("sign_message", {"path": path, "message": text.encode()}, awaits_user=True)["signature"])
    return base64.b64encode(compact_signature(rs, message_digest(text), bytes(key.pubkey))).decode()
