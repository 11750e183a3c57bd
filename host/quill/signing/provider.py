"""What output descriptors tell a signer: Core's FlatSigningProvider as Descriptor::Expand and
ExpandPrivate fill it, seen through Core's HidingSigningProvider.

Beside the keys and scripts of KeyStore it knows public keys without their secrets, each key's
BIP32 origin, and each taproot output's internal key (its TaprootSpendData, key path only). With
`hide_origin` (bip32derivs=false) it answers no origin, as Core's HidingSigningProvider. Secrets
stay in memory and go to the signing device only.
"""
from __future__ import annotations

from quill.signing.keystore import Key, KeyStore
from quill.tx.hashes import hash160
from quill.tx.psbt import KeyOrigin


class SigningProvider(KeyStore):
    def __init__(self) -> None:
        super().__init__()
        self.pubkeys: dict[bytes, bytes] = {}
        self.origins: dict[bytes, KeyOrigin] = {}
        self.xonly_origins: dict[bytes, KeyOrigin] = {}
        self.tr_internal_keys: dict[bytes, bytes] = {}
        self.hide_origin = False

    # -- filling (Core's Expand / ExpandPrivate) --

    def add_pubkey(self, pubkey: bytes, origin: KeyOrigin | None) -> None:
        self.pubkeys.setdefault(hash160(pubkey), pubkey)
        if origin is not None:
            self.origins.setdefault(hash160(pubkey), origin)

    def add_xonly(self, xonly: bytes, origin: KeyOrigin | None) -> None:
        for prefix in (b"\x02", b"\x03"):
            self.pubkeys.setdefault(hash160(prefix + xonly), prefix + xonly)
        if origin is not None:
            self.xonly_origins.setdefault(xonly, origin)

    def add_taproot(self, output_key: bytes, internal_key: bytes) -> None:
        self.tr_internal_keys.setdefault(output_key, internal_key)

    def add_secret(self, secret: bytes, compressed: bool) -> None:
        self.add_key(Key(secret, compressed))

    # -- answering (Core's SigningProvider interface) --

    def get_pubkey(self, keyid: bytes) -> bytes | None:
        return super().get_pubkey(keyid) or self.pubkeys.get(keyid)

    def get_key_origin(self, keyid: bytes) -> KeyOrigin | None:
        return None if self.hide_origin else self.origins.get(keyid)

    def get_key_origin_by_xonly(self, xonly: bytes) -> KeyOrigin | None:
        return None if self.hide_origin else self.xonly_origins.get(xonly)

    def get_taproot_internal_key(self, output_key: bytes) -> bytes | None:
        return self.tr_internal_keys.get(output_key)
