"""Solving data for coins the wallet cannot solve by itself: Core's `solving_data` option of
walletcreatefundedpsbt, fundrawtransaction and send (wallet/rpc/spend.cpp, FundTransaction) and
the InferDescriptor(script, provider) that turns it into a descriptor whose maximum
satisfaction sizes the input (script/descriptor.cpp, InferScript).

    provider = solving_provider(pubkeys, scripts, parsed_descriptors)
    node = infer_node(script_pubkey, provider)     # None: the coin stays unsolvable

The nodes are quill.wallet.descriptors nodes (constant keys), which quill.wallet.funding sizes;
`rawtr` stands for a taproot output whose internal key is unknown (spent by its key path).
"""
from __future__ import annotations

from quill.signing.provider import SigningProvider
from quill.tx import script as S
from quill.tx.address import encode_destination
from quill.tx.descriptor import is_valid_xonly
from quill.tx.hashes import hash160, ripemd160
from quill.wallet.descriptors import P2SH, P2WPKH, P2WSH, TOP, Descriptor, Key, Node
from quill.wallet.expand import expand


def solving_provider(pubkeys: list[bytes], scripts: list[bytes], descriptors: list[Descriptor]) -> SigningProvider:
    """Core's m_external_provider: each public key (and its P2WPKH script, for sh(wpkh())), each
    script, and child 0 of each descriptor. A script alone solves sh() and wsh() but not sh(wsh())
    (Core 31 keeps no P2WSH script for it; checked against it)."""
    provider = SigningProvider()
    for pubkey in pubkeys:
        provider.add_pubkey(pubkey, None)
        provider.add_script(S.p2wpkh(hash160(pubkey)))
    for script in scripts:
        provider.add_script(script)
    for desc in descriptors:
        expand(desc.node, 0, provider)
    return provider


def _key(pubkey: bytes) -> Key:
    key = Key()
    key.const = pubkey
    return key


def _infer_pubkey(pubkey: bytes, ctx: str) -> Key | None:
    """Core's InferPubkey: segwit v0 takes compressed keys only."""
    if len(pubkey) != 33 and ctx in (P2WPKH, P2WSH):
        return None
    return _key(pubkey)


def _infer(script: bytes, ctx: str, provider: SigningProvider) -> Node | None:  # noqa: C901 (one case per type)
    kind, data = S.solver(script)
    if kind == S.PUBKEY:
        key = _infer_pubkey(data[0], ctx)
        if key is not None:
            return Node("pk", [key])
    if kind == S.PUBKEYHASH:
        pubkey = provider.get_pubkey(data[0])
        key = None if pubkey is None else _infer_pubkey(pubkey, ctx)
        if key is not None:
            return Node("pkh", [key])
    if kind == S.WITNESS_V0_KEYHASH and ctx in (TOP, P2SH):
        pubkey = provider.get_pubkey(data[0])
        key = None if pubkey is None else _infer_pubkey(pubkey, P2WPKH)
        if key is not None:
            return Node("wpkh", [key])
    if kind == S.MULTISIG:
        keys = [_infer_pubkey(k, ctx) for k in data[1:-1]]
        if None not in keys:
            return Node("multi", keys, threshold=data[0][0])
    if kind == S.SCRIPTHASH and ctx == TOP:
        sub_script = provider.get_script(data[0])
        sub = None if sub_script is None else _infer(sub_script, P2SH, provider)
        if sub is not None:
            return Node("sh", sub=sub)
    if kind == S.WITNESS_V0_SCRIPTHASH and ctx in (TOP, P2SH):
        # Core's CScriptID{RIPEMD160(program)}: the witness script's hash160
        sub_script = provider.get_script(ripemd160(data[0]))
        sub = None if sub_script is None else _infer(sub_script, P2WSH, provider)
        if sub is not None:
            return Node("wsh", sub=sub)
    if kind == S.WITNESS_V1_TAPROOT and ctx == TOP:
        internal = provider.get_taproot_internal_key(data[0])
        if internal is not None:
            return Node("tr", [_key(internal)])
        if is_valid_xonly(data[0]):
            return Node("rawtr", [_key(data[0])])
    return None


def infer_node(script: bytes, provider: SigningProvider) -> Node | None:
    """Core's InferDescriptor(script, provider): a solvable node, else addr() (which sizes nothing but
    tells whether the input is segwit), else None (Core's raw())."""
    node = _infer(script, TOP, provider)
    if node is None and encode_destination(script, "main") is not None:  # any chain: only whether it has one
        node = Node("addr", data=script)
    return node
