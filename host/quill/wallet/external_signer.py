"""An external-signer wallet's two steps of its own (Core's CWallet::SetupDescriptorScriptPubKeyMans
for WALLET_FLAG_EXTERNAL_SIGNER, and ExternalSignerScriptPubKeyMan::FillPSBT with sign=true):
the descriptors the signer hands over, and signing a PSBT through it. Running the signer is
quill.extsigner's; here it is a callable."""
from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from quill.signing.psbt_signer import (
    finalize_context,
    finalize_psbt,
    input_signed_and_verified,
    is_signed,
    remove_unnecessary_transactions,
)
from quill.tx.psbt import PSBT
from quill.wallet.descriptors import Descriptor, DescriptorError, parse
from quill.wallet.errors import WalletSetupFailed

_WHERE = "SetupDescriptorScriptPubKeyMans"


def signer_descriptors(result: Any, chain_name: str) -> list[tuple[Descriptor, bool]]:
    """The (descriptor, internal) pairs of a signer's `getdescriptors` answer, receive ones
    first, in the signer's order; descriptors of no known output type are left out, as Core."""
    if not isinstance(result, dict):
        raise WalletSetupFailed(f"{_WHERE}: Unexpected result")
    out: list[tuple[Descriptor, bool]] = []
    for internal in (False, True):
        values = result.get("internal" if internal else "receive")
        if not isinstance(values, list):  # each list is required (checked against Core 31)
            raise WalletSetupFailed(f"{_WHERE}: Unexpected result")
        for value in values:
            text = value if isinstance(value, str) else json.dumps(value)  # UniValue's getValStr
            try:
                desc = parse(text, chain_name, require_checksum=False)
            except DescriptorError as e:
                raise WalletSetupFailed(f'{_WHERE}: Invalid descriptor "{text}" ({e})') from None
            if desc.output_type() is not None:
                out.append((desc, internal))
    return out


def sign_externally(psbt: PSBT, sign: Callable[[PSBT], PSBT], finalize: bool) -> tuple[PSBT, bool]:
    """The rest of CWallet::FillPSBT(sign=true) for an external-signer wallet: the signer signs
    unless every input already is, the inputs are finalized where they can be, previous
    transactions go where only segwit v1 spends; True when every input is signed and verifies."""
    if not all(is_signed(txin) for txin in psbt.inputs):
        psbt = sign(psbt)
        if finalize:
            finalize_psbt(psbt)
    remove_unnecessary_transactions(psbt)
    ctx = finalize_context(psbt)
    complete = ctx is not None and all(input_signed_and_verified(psbt, i, ctx) for i in range(len(psbt.inputs)))
    return psbt, complete
