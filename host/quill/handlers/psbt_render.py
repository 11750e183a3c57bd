"""decodepsbt's answer: a PSBT as Core's rpc/rawtransaction.cpp renders it, key for key."""
from __future__ import annotations

from typing import Any

from quill.amount import Amount
from quill.consensus import MAX_MONEY
from quill.tx.decode import script_to_univ, tx_to_univ
from quill.tx.hashes import hash_to_hex
from quill.tx.psbt import (
    NULL32,
    PSBT,
    KeyOrigin,
    Proprietary,
    PSBTInput,
    PSBTOutput,
    format_hd_keypath,
    sorted_xpubs,
    xpub_base58,
)
from quill.tx.script import script_to_asm

SIGHASH_NAMES = {0x01: "ALL", 0x81: "ALL|ANYONECANPAY", 0x02: "NONE", 0x82: "NONE|ANYONECANPAY",
                 0x03: "SINGLE", 0x83: "SINGLE|ANYONECANPAY"}


def money_range(value: int) -> bool:
    """Core's MoneyRange."""
    return 0 <= value <= MAX_MONEY


def _proprietary(entries: dict[bytes, Proprietary]) -> list[dict[str, Any]]:
    return [{"identifier": p.identifier.hex(), "subtype": p.subtype, "key": p.key.hex(), "value": p.value.hex()}
            for p in (entries[k] for k in sorted(entries))]


def _unknown(entries: dict[bytes, bytes]) -> dict[str, str]:
    return {k.hex(): entries[k].hex() for k in sorted(entries)}


def _keypaths(paths: dict[bytes, KeyOrigin]) -> list[dict[str, Any]]:
    return [{"pubkey": k.hex(), "master_fingerprint": paths[k].fingerprint.hex(),
             "path": format_hd_keypath(paths[k].path)} for k in sorted(paths)]


def _tap_keypaths(paths: dict[bytes, tuple[frozenset[bytes], KeyOrigin]]) -> list[dict[str, Any]]:
    out = []
    for xonly in sorted(paths):
        hashes, origin = paths[xonly]
        out.append({"pubkey": xonly.hex(), "master_fingerprint": origin.fingerprint.hex(),
                    "path": format_hd_keypath(origin.path), "leaf_hashes": [h.hex() for h in sorted(hashes)]})
    return out


def _musig_participants(participants: dict[bytes, list[bytes]]) -> list[dict[str, Any]]:
    return [{"aggregate_pubkey": agg.hex(), "participant_pubkeys": [p.hex() for p in participants[agg]]}
            for agg in sorted(participants)]


def _musig_per_participant(by_agg: dict[tuple[bytes, bytes], dict[bytes, bytes]], name: str) -> list[dict[str, Any]]:
    out = []
    for agg, leaf in sorted(by_agg):
        for part in sorted(by_agg[(agg, leaf)]):
            item = {"participant_pubkey": part.hex(), "aggregate_pubkey": agg.hex()}
            if leaf != NULL32:
                item["leaf_hash"] = leaf.hex()
            item[name] = by_agg[(agg, leaf)][part].hex()
            out.append(item)
    return out


def _script(script: bytes, chain: str) -> dict[str, Any]:
    # ScriptToUniv with its defaults: asm, hex, type (no address, no descriptor).
    return script_to_univ(script, chain, include_hex=True, include_address=False)


def _input(psbt: PSBT, txin: PSBTInput, chain: str) -> tuple[dict[str, Any], int | None]:  # noqa: C901
    """One input's object and the value it spends (None when unknown)."""
    entry: dict[str, Any] = {}
    spent: int | None = None
    if txin.has_witness_utxo():
        assert txin.witness_utxo is not None
        spent = txin.witness_utxo.value
        entry["witness_utxo"] = {"amount": Amount(spent),
                                 "scriptPubKey": script_to_univ(txin.witness_utxo.script_pubkey, chain)}
    if txin.non_witness_utxo is not None:
        spent = txin.non_witness_utxo.vout[txin.prev_out].value
        entry["non_witness_utxo"] = tx_to_univ(txin.non_witness_utxo, chain)
    if txin.partial_sigs:
        entry["partial_signatures"] = {txin.partial_sigs[k][0].hex(): txin.partial_sigs[k][1].hex()
                                       for k in sorted(txin.partial_sigs)}
    if txin.sighash_type is not None:
        entry["sighash"] = SIGHASH_NAMES.get(txin.sighash_type & 0xFF, "")
    if txin.redeem_script:
        entry["redeem_script"] = _script(txin.redeem_script, chain)
    if txin.witness_script:
        entry["witness_script"] = _script(txin.witness_script, chain)
    if txin.hd_keypaths:
        entry["bip32_derivs"] = _keypaths(txin.hd_keypaths)
    if txin.final_script_sig:
        entry["final_scriptSig"] = {"asm": script_to_asm(txin.final_script_sig, True),
                                    "hex": txin.final_script_sig.hex()}
    if txin.final_script_witness:
        entry["final_scriptwitness"] = [w.hex() for w in txin.final_script_witness]
    if txin.ripemd160_preimages or txin.sha256_preimages or txin.hash160_preimages or txin.hash256_preimages:
        for name, preimages in (("ripemd160_preimages", txin.ripemd160_preimages),
                                ("sha256_preimages", txin.sha256_preimages),
                                ("hash160_preimages", txin.hash160_preimages),
                                ("hash256_preimages", txin.hash256_preimages)):
            if preimages:
                entry[name] = {h.hex(): preimages[h].hex() for h in sorted(preimages)}
    if psbt.psbt_version >= 2:
        entry["previous_txid"] = hash_to_hex(txin.prev_txid)
        entry["previous_vout"] = txin.prev_out
        for name, value in (("sequence", txin.sequence), ("time_locktime", txin.time_locktime),
                            ("height_locktime", txin.height_locktime)):
            if value is not None:
                entry[name] = value
    if txin.tap_key_sig:
        entry["taproot_key_path_sig"] = txin.tap_key_sig.hex()
    if txin.tap_script_sigs:
        entry["taproot_script_path_sigs"] = [
            {"pubkey": xonly.hex(), "leaf_hash": leaf.hex(), "sig": txin.tap_script_sigs[(xonly, leaf)].hex()}
            for xonly, leaf in sorted(txin.tap_script_sigs)]
    if txin.tap_scripts:
        entry["taproot_scripts"] = [
            {"script": script.hex(), "leaf_ver": leaf_ver,
             "control_blocks": [cb.hex() for cb in sorted(txin.tap_scripts[(script, leaf_ver)],
                                                          key=lambda c: (len(c), c))]}
            for script, leaf_ver in sorted(txin.tap_scripts)]
    if txin.tap_bip32_paths:
        entry["taproot_bip32_derivs"] = _tap_keypaths(txin.tap_bip32_paths)
    if txin.tap_internal_key != NULL32:
        entry["taproot_internal_key"] = txin.tap_internal_key.hex()
    if txin.tap_merkle_root != NULL32:
        entry["taproot_merkle_root"] = txin.tap_merkle_root.hex()
    if txin.musig2_participants:
        entry["musig2_participant_pubkeys"] = _musig_participants(txin.musig2_participants)
    if txin.musig2_pubnonces:
        entry["musig2_pubnonces"] = _musig_per_participant(txin.musig2_pubnonces, "pubnonce")
    if txin.musig2_partial_sigs:
        entry["musig2_partial_sigs"] = _musig_per_participant(txin.musig2_partial_sigs, "partial_sig")
    if txin.proprietary:
        entry["proprietary"] = _proprietary(txin.proprietary)
    if txin.unknown:
        entry["unknown"] = _unknown(txin.unknown)
    return entry, spent


def _output(psbt: PSBT, out: PSBTOutput, chain: str) -> dict[str, Any]:
    entry: dict[str, Any] = {}
    if out.redeem_script:
        entry["redeem_script"] = _script(out.redeem_script, chain)
    if out.witness_script:
        entry["witness_script"] = _script(out.witness_script, chain)
    if out.hd_keypaths:
        entry["bip32_derivs"] = _keypaths(out.hd_keypaths)
    if psbt.psbt_version >= 2:
        entry["amount"] = Amount(out.amount)
        entry["script"] = script_to_univ(out.script, chain)
    if out.tap_internal_key != NULL32:
        entry["taproot_internal_key"] = out.tap_internal_key.hex()
    if out.tap_tree:
        entry["taproot_tree"] = [{"depth": d, "leaf_ver": v, "script": s.hex()} for d, v, s in out.tap_tree]
    if out.tap_bip32_paths:
        entry["taproot_bip32_derivs"] = _tap_keypaths(out.tap_bip32_paths)
    if out.musig2_participants:
        entry["musig2_participant_pubkeys"] = _musig_participants(out.musig2_participants)
    if out.proprietary:
        entry["proprietary"] = _proprietary(out.proprietary)
    if out.unknown:
        entry["unknown"] = _unknown(out.unknown)
    return entry


def psbt_to_univ(psbt: PSBT, chain: str) -> dict[str, Any]:
    """decodepsbt's result."""
    result: dict[str, Any] = {}
    if psbt.psbt_version < 2:
        tx = psbt.unsigned_tx()
        assert tx is not None
        result["tx"] = tx_to_univ(tx, chain)
    result["global_xpubs"] = [{"xpub": xpub_base58(xpub), "master_fingerprint": origin.fingerprint.hex(),
                               "path": format_hd_keypath(origin.path)} for origin, xpub in sorted_xpubs(psbt)]
    if psbt.psbt_version >= 2:
        result["tx_version"] = psbt.tx_version
        if psbt.fallback_locktime is not None:
            result["fallback_locktime"] = psbt.fallback_locktime
        result["input_count"] = len(psbt.inputs)
        result["output_count"] = len(psbt.outputs)
        if psbt.tx_modifiable is not None:
            result["inputs_modifiable"] = bool(psbt.tx_modifiable & 1)
            result["outputs_modifiable"] = bool(psbt.tx_modifiable & 2)
            result["has_sighash_single"] = bool(psbt.tx_modifiable & 4)
    result["psbt_version"] = psbt.psbt_version
    result["proprietary"] = _proprietary(psbt.proprietary)
    result["unknown"] = _unknown(psbt.unknown)

    total_in, have_all = 0, True
    inputs = []
    for txin in psbt.inputs:
        entry, spent = _input(psbt, txin, chain)
        inputs.append(entry)
        if spent is not None and money_range(spent) and money_range(total_in + spent):
            total_in += spent
        else:
            have_all = False  # Core's "hack to just not show fee later"
    result["inputs"] = inputs

    total_out = 0
    outputs = []
    for out in psbt.outputs:
        outputs.append(_output(psbt, out, chain))
        if money_range(out.amount) and money_range(total_out + out.amount):
            total_out += out.amount
        else:
            have_all = False
    result["outputs"] = outputs
    if have_all:
        result["fee"] = Amount(total_in - total_out)
    return result
