"""getaddressinfo's object: Core's DescribeAddress (rpc/util.cpp), DescribeWalletAddress and
getaddressinfo (wallet/rpc/addresses.cpp) for a watch-only descriptor wallet.

The wallet describes a script with what its descriptor tells at that child (Core's
GetSolvingProvider): the public key of a key hash, the redeem or witness script of a script hash
(`script`, `hex`, and `embedded` when that script has an address, or `sigsrequired`/`pubkeys` for
a bare multisig). Key metadata (timestamp, hdkeypath...) is shown only where Core's
GetKeyForDestination finds one key: P2PKH, P2WPKH, P2SH-P2WPKH and key-path taproot.
"""
from __future__ import annotations

from typing import Any

from quill.signing.provider import SigningProvider
from quill.tx import script as S
from quill.tx.address import encode_destination
from quill.tx.hashes import ripemd160
from quill.wallet.expand import expand

NO_SEED_ID = "00" * 20   # descriptor wallets have no HD seed id; Core prints zeros


def describe_address(script: bytes, solved: tuple[str, list[bytes]] | None = None) -> dict[str, Any]:
    """Core's DescribeAddress: what the address itself says."""
    kind, sol = solved or S.solver(script)
    if kind == S.PUBKEYHASH:
        return {"isscript": False, "iswitness": False}
    if kind == S.SCRIPTHASH:
        return {"isscript": True, "iswitness": False}
    if kind in (S.WITNESS_V0_KEYHASH, S.WITNESS_V0_SCRIPTHASH, S.WITNESS_V1_TAPROOT):
        return {"isscript": kind != S.WITNESS_V0_KEYHASH, "iswitness": True,
                "witness_version": 1 if kind == S.WITNESS_V1_TAPROOT else 0, "witness_program": sol[0].hex()}
    if kind == S.ANCHOR:
        return {"isscript": True, "iswitness": True}
    if kind == S.WITNESS_UNKNOWN:
        return {"iswitness": True, "witness_version": sol[0][0], "witness_program": sol[1].hex()}
    return {}


def _describe_with_provider(kind: str, sol: list[bytes], provider: SigningProvider, chain: str) -> dict[str, Any]:
    """Core's DescribeWalletAddressVisitor."""
    out: dict[str, Any] = {}
    if kind in (S.PUBKEYHASH, S.WITNESS_V0_KEYHASH):
        pubkey = provider.get_pubkey(sol[0])
        if pubkey is not None:
            out["pubkey"] = pubkey.hex()
            if kind == S.PUBKEYHASH:
                out["iscompressed"] = len(pubkey) == 33
    elif kind in (S.SCRIPTHASH, S.WITNESS_V0_SCRIPTHASH):
        # a witness script is found by its CScriptID, RIPEMD160 of the program (= its HASH160)
        sub = provider.get_script(sol[0] if kind == S.SCRIPTHASH else ripemd160(sol[0]))
        if sub is not None:
            _describe_subscript(sub, provider, chain, out)
    return out


def _describe_subscript(sub: bytes, provider: SigningProvider, chain: str, out: dict[str, Any]) -> None:
    """Core's ProcessSubScript."""
    kind, sol = S.solver(sub)
    out["script"] = kind
    out["hex"] = sub.hex()
    address = encode_destination(sub, chain, (kind, sol))
    if address is not None:
        embedded = describe_address(sub, (kind, sol)) | _describe_with_provider(kind, sol, provider, chain)
        embedded["address"] = address
        embedded["scriptPubKey"] = sub.hex()
        if "pubkey" in embedded:
            out["pubkey"] = embedded["pubkey"]   # getnewaddress()['pubkey'] always works
        out["embedded"] = embedded
    elif kind == S.MULTISIG:
        out["sigsrequired"] = sol[0][0]
        out["pubkeys"] = [key.hex() for key in sol[1:-1]]


def _metadata_key(node: Any) -> Any:
    """The one key Core's GetKeyForDestination finds for the descriptor's script, or None."""
    if node.kind in ("pkh", "wpkh", "tr") and node.sub is None:
        return node.keys[0]
    if node.kind == "sh" and node.sub.kind == "wpkh":
        return node.sub.keys[0]
    return None


def address_info(wallet: Any, script: bytes) -> dict[str, Any]:
    """Core's getaddressinfo result for `script` (one the wallet may or may not own)."""
    owners = wallet.scripts.get(script, [])
    info = wallet.descs[owners[0][0]] if owners else None
    index = owners[0][1] if owners else 0
    address = encode_destination(script, wallet.chain_name)
    solvable = info is not None and info.desc.is_solvable()
    out: dict[str, Any] = {"address": address, "scriptPubKey": script.hex(), "ismine": bool(owners),
                           "solvable": solvable}
    if info is not None and solvable:
        out["desc"] = info.desc.inferred_string(index)
    if info is not None:
        out["parent_desc"] = info.text
    out["iswatchonly"] = False
    kind, sol = S.solver(script)
    out |= describe_address(script, (kind, sol))
    if info is not None:
        provider = SigningProvider()
        expand(info.desc.node, index, provider)
        out |= _describe_with_provider(kind, sol, provider, wallet.chain_name)
    out["ischange"] = wallet.is_change(script) if owners else False
    key = _metadata_key(info.desc.node) if info is not None else None
    if info is not None and key is not None:
        fingerprint, path = key.origin_at(index)
        out["timestamp"] = info.timestamp
        out["hdkeypath"] = "m" + "".join("/%d%s" % (p & 0x7FFFFFFF, "h" if p & 0x80000000 else "") for p in path)
        out["hdseedid"] = NO_SEED_ID
        out["hdmasterfingerprint"] = fingerprint.hex()
    label = wallet.label_of(address) if address else None
    out["labels"] = [] if label is None else [label]
    return out
