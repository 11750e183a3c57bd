"""Signing a PSBT with keys given to one call (descriptorprocesspsbt's private descriptors),
every signature made on the device as signrawtransactionwithkey makes them (pipeline.py):

1. a planning pass of Core's ProcessPSBT signing on a copy of the PSBT, whose creator records
   each signature the keys can make (placeholders; the copy is dropped);
2. one device session that makes them;
3. the same pass on the PSBT itself, the creator answering with the device's signatures: the
   inputs get their partial signatures (or taproot key-path signatures) and, when complete and
   `finalize`, their final scriptSig and witness.

Without keys, or when the keys sign nothing, the device is not asked.
"""
from __future__ import annotations

import copy
from typing import Any

from quill.consensus import SIGHASH_DEFAULT
from quill.signing.pipeline import device_signatures, plan_keys
from quill.signing.provider import SigningProvider
from quill.signing.psbt_signer import checked_utxo, sign_and_update
from quill.signing.solver import DeviceResultCreator, PlanningCreator, SignRequest
from quill.tx.psbt import PSBT


def sign_psbt(node: Any, psbt: PSBT, provider: SigningProvider, sighash: int | None, finalize: bool) -> None:
    """Core's ProcessPSBT signing half with `provider`'s keys on the device. Raises
    SighashMismatch, or the device's and the signing pipeline's errors."""
    tx = psbt.unsigned_tx()
    if tx is None or not provider.keys:
        sign_and_update(psbt, provider, sighash, finalize)
        return
    spent = [checked_utxo(txin)[0] for txin in psbt.inputs]
    bip86 = plan_keys(provider, spent)
    planners: list[PlanningCreator] = []

    def planning(index: int, amount: int, hash_type: int, taproot_ready: bool) -> PlanningCreator:
        planner = PlanningCreator(index, amount, hash_type, taproot_ready, bip86)
        planners.append(planner)
        return planner

    plan = copy.deepcopy(psbt)
    sign_and_update(plan, provider, sighash, finalize, planning)
    requests: dict[Any, SignRequest] = {}
    for planner in planners:
        for request in planner.requests:
            requests.setdefault(request.ident(), request)   # multisig asks once per key
    if not requests:
        sign_and_update(psbt, provider, sighash, finalize)
        return
    redeem_scripts = {i: plan.inputs[i].redeem_script or None for i in range(len(plan.inputs))}
    session_hash = SIGHASH_DEFAULT if sighash is None else sighash
    signatures = device_signatures(node, tx, spent, list(requests.values()), redeem_scripts, session_hash)

    def device(index: int, amount: int, hash_type: int, taproot_ready: bool) -> DeviceResultCreator:
        return DeviceResultCreator(signatures, index, amount, hash_type, taproot_ready, bip86)

    sign_and_update(psbt, provider, sighash, finalize, device)
