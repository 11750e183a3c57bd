"""The wallet's part of Core's FillPSBT without signing (wallet/wallet.cpp, DescriptorScriptPubKeyMan
::FillPSBT): previous transactions, witness UTXOs, redeem scripts, BIP32 derivations and taproot
key fields from the watch-only descriptors that own the inputs and outputs."""
from __future__ import annotations

from typing import Any

from quill.tx.psbt import PSBT, KeyOrigin, PSBTInput, PSBTOutput
from quill.tx.script import solver


def _origin(key: Any, index: int) -> KeyOrigin | None:
    origin = key.origin_at(index)
    return None if origin is None else KeyOrigin(origin[0], tuple(origin[1]))


def _solving_data(node: Any, index: int, field: PSBTInput | PSBTOutput, bip32derivs: bool) -> bool:
    """Fill what ProduceSignature learns from the provider; True when a witness spends it."""
    segwit = False
    if node.kind == "sh" and node.sub.kind in ("wpkh", "wsh", "multi", "sortedmulti"):
        field.redeem_script = node.sub.script(index)
        node = node.sub
    if node.kind == "wsh" and node.sub.kind in ("multi", "sortedmulti"):
        field.witness_script = node.sub.script(index)
        node = node.sub
        segwit = True
    if node.kind in ("multi", "sortedmulti"):
        for key in node.keys:
            origin = _origin(key, index)
            if bip32derivs and origin is not None:
                field.hd_keypaths[key.pubkey(index)] = origin
        return segwit
    if node.kind in ("wpkh", "pkh"):
        key = node.keys[0]
        origin = _origin(key, index)
        if bip32derivs and origin is not None:
            field.hd_keypaths[key.pubkey(index)] = origin
        return node.kind == "wpkh"
    if node.kind == "tr" and node.sub is None:
        key = node.keys[0]
        internal = key.pubkey(index)
        field.tap_internal_key = internal
        origin = _origin(key, index)
        if bip32derivs and origin is not None:
            field.tap_bip32_paths[internal] = (frozenset(), origin)
        return True
    return False


def _owner(wallet: Any, script: bytes) -> tuple[Any, int] | None:
    owners = wallet.scripts.get(script, [])
    if not owners:
        return None
    desc_id, index = owners[0]
    return wallet.descs[desc_id].desc.node, index


def fill_psbt(wallet: Any, psbt: PSBT, bip32derivs: bool) -> None:
    for txin in psbt.inputs:
        row = wallet.store.get_tx(txin.prev_txid)
        if row is not None and txin.non_witness_utxo is None:
            txin.non_witness_utxo = row.tx
        utxo = txin.utxo()
        owner = None if utxo is None else _owner(wallet, utxo.script_pubkey)
        if owner is not None and _solving_data(owner[0], owner[1], txin, bip32derivs):
            txin.witness_utxo = utxo
    for out in psbt.outputs:
        owner = _owner(wallet, out.script)
        if owner is not None:
            _solving_data(owner[0], owner[1], out, bip32derivs)
    _drop_non_witness_utxos(psbt)


def _drop_non_witness_utxos(psbt: PSBT) -> None:
    """Core keeps the previous transactions unless every input spends segwit v1 or later."""
    for txin in psbt.inputs:
        if not txin.has_witness_utxo():
            return
        kind, _ = solver(txin.witness_utxo.script_pubkey)  # type: ignore[union-attr]
        if not kind.startswith("witness") or kind == "witness_v0_keyhash" or kind == "witness_v0_scripthash":
            return
    for txin in psbt.inputs:
        txin.non_witness_utxo = None
