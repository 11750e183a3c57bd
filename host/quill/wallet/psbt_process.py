"""walletprocesspsbt's work: Core's CWallet::FillPSBT and DescriptorScriptPubKeyMan::FillPSBT
(wallet/wallet.cpp, wallet/scriptpubkeyman.cpp) for a watch-only descriptor wallet.

1. each input not yet final gets its previous transaction from the wallet;
2. each such input with a UTXO goes through Core's SignPSBTInput with what the wallet's
   descriptors know of its script (redeem and witness scripts, BIP32 origins unless
   bip32derivs=false, the taproot internal key): it is updated, checked against the sighash
   type, and finalized when the signatures it carries complete it;
3. each output the wallet owns gets the same solving data (so that a device sees its change);
4. previous transactions go when every input is segwit v1 (Core's RemoveUnnecessaryTransactions).

The wallet holds no private keys: nothing is signed here. Returns Core's `complete`.
"""
from __future__ import annotations

from typing import Any

from quill.signing.errors import InputsMissing, SighashMismatch
from quill.signing.provider import SigningProvider
from quill.signing.psbt_signer import (
    FAILED,
    SIGHASH_MISMATCH,
    finalize_context,
    input_signed_and_verified,
    is_signed,
    remove_unnecessary_transactions,
    sign_input,
    update_output,
)
from quill.tx.psbt import PSBT, PSBTInput
from quill.wallet.expand import descriptor_provider


def _provider(wallet: Any, script: bytes, hide_origin: bool) -> SigningProvider:
    """Core's GetSigningProvider(script) of every descriptor that owns `script` (an empty one when none)."""
    owners = [(wallet.descs[desc_id].desc.node, index) for desc_id, index in wallet.scripts.get(script, [])]
    return descriptor_provider(owners, hide_origin)


def _spent_script(txin: PSBTInput) -> bytes | None:
    """The script DescriptorScriptPubKeyMan::FillPSBT looks up: the witness UTXO's, else the
    previous transaction's; None when the input has neither. Raises InputsMissing."""
    if txin.has_witness_utxo():
        return txin.witness_utxo.script_pubkey  # type: ignore[union-attr]
    if txin.non_witness_utxo is None:
        return None
    if txin.prev_out >= len(txin.non_witness_utxo.vout):
        raise InputsMissing()
    return txin.non_witness_utxo.vout[txin.prev_out].script_pubkey


def fill_previous_transactions(wallet: Any, psbt: PSBT) -> None:
    """The first step of Core's CWallet::FillPSBT: each unsigned input gets its previous
    transaction from the wallet."""
    for txin in psbt.inputs:
        if is_signed(txin) or txin.non_witness_utxo is not None:
            continue
        row = wallet.store.get_tx(txin.prev_txid)
        if row is not None:
            txin.non_witness_utxo = row.tx


def fill_psbt(wallet: Any, psbt: PSBT, sighash: int | None, bip32derivs: bool, finalize: bool) -> bool:
    """Update `psbt` in place as Core's CWallet::FillPSBT (sign=true, no keys); True when
    every input is signed and verifies. Raises SighashMismatch or InputsMissing."""
    fill_previous_transactions(wallet, psbt)
    ctx = finalize_context(psbt)
    if ctx is None:
        return False
    if wallet.descs:  # Core signs through each descriptor; a wallet without one touches nothing
        for index, txin in enumerate(psbt.inputs):
            if is_signed(txin):
                continue
            script = _spent_script(txin)
            if script is None:
                continue
            provider = _provider(wallet, script, not bip32derivs)
            outcome = sign_input(psbt, index, ctx, sighash, finalize=finalize, provider=provider)
            if outcome == SIGHASH_MISMATCH:
                raise SighashMismatch()
            if outcome == FAILED:
                raise InputsMissing()
        for index, out in enumerate(psbt.outputs):
            if out.script in wallet.scripts:
                update_output(psbt, index, _provider(wallet, out.script, not bip32derivs))
    remove_unnecessary_transactions(psbt)
    return all(input_signed_and_verified(psbt, index, ctx) for index in range(len(psbt.inputs)))
