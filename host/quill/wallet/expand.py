"""Core's Descriptor::Expand and ExpandPrivate: what one child of a parsed descriptor tells a
signer (its scripts by hash, its public keys with their BIP32 origins, its taproot internal key,
and with `private` its secrets), put into a SigningProvider."""
from __future__ import annotations

from typing import Any

from quill.signing.provider import SigningProvider
from quill.tx.psbt import KeyOrigin
from quill.wallet.descriptors import taproot_output_key


def _origin(key: Any, index: int) -> KeyOrigin | None:
    origin = key.origin_at(index)
    return None if origin is None else KeyOrigin(origin[0], tuple(origin[1]))


def expand(node: Any, index: int, provider: SigningProvider, private: bool = False) -> None:
    """Add child `index` of the descriptor whose top node is `node` to `provider`."""
    kind = node.kind
    if kind in ("addr", "raw"):
        return
    if kind == "tr":
        key = node.keys[0]
        internal = key.pubkey(index)
        provider.add_xonly(internal, _origin(key, index))
        provider.add_taproot(taproot_output_key(internal), internal)
    else:
        for key in node.keys:
            provider.add_pubkey(key.pubkey(index), _origin(key, index))
    if kind in ("sh", "wsh"):
        provider.add_script(node.sub.script(index))
    elif kind == "wpkh":
        # Core keeps the P2WPKH script under its P2SH hash too, so that sh(wpkh()) solves.
        provider.add_script(node.script(index))
    if private:
        for key in node.keys:
            secret = key.secret(index)
            if secret is not None:
                provider.add_secret(*secret)
    if node.sub is not None:
        expand(node.sub, index, provider, private)


def descriptor_provider(nodes: list[tuple[Any, int]], hide_origin: bool) -> SigningProvider:
    """The provider of the given (descriptor node, child index) pairs, without secrets."""
    provider = SigningProvider()
    provider.hide_origin = hide_origin
    for node, index in nodes:
        expand(node, index, provider)
    return provider

