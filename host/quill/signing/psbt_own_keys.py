"""Sign a PSBT with the device's own keys (protocol/SPEC.md §11): what an
external signer's `signtx` does.

    signed = sign_psbt_with_device(client, info, psbt, fingerprint, network, stats=None)

The inputs the device signs are those with a BIP32 derivation from its master
fingerprint, in one of the single-key forms it knows: P2PKH, P2SH-P2WPKH,
P2WPKH (`hd_keypaths`) and the BIP86 taproot key path (`tap_bip32_paths` of the
internal key with no leaves and no merkle root), and the P2SH, P2WSH and
P2SH-P2WSH multisig inputs whose script holds its key (`multisig: true`: the
device signs them only for a wallet registered on it, SPEC §12). Inputs already final, or
another signer's, are left alone. Outputs with a derivation from the same
fingerprint are sent with their path: the device checks they are its own
(change) and leaves them out of what the user confirms.

The exchange: psbt_begin; every input, each preceded by its previous
transaction (BIP174's non_witness_utxo, witness stripped) when the PSBT has
one; every output; one psbt_sign per signature (a P2PKH signature streams the
transaction again); psbt_end. Signatures go into the PSBT as Core's signer
puts them: `partial_sigs` for ECDSA, `tap_key_sig` for taproot. Any failure
sends psbt_abort and raises; the PSBT is then unchanged.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from quill.consensus import SIGHASH_ALL, SIGHASH_SINGLE
from quill.device.errors import DeviceError, DeviceRestarted, DeviceUnavailable
from quill.tx import script as S
from quill.tx.hashes import hash160
from quill.tx.psbt import NULL32, PSBT, KeyOrigin, PSBTInput, PSBTOutput, format_hd_keypath

from .device_session import _Driver, batch_bytes, restarted
from .errors import DeviceCannotSign

SIGHASH_DEFAULT = 0x00
METHODS = ("psbt_begin", "psbt_prev_tx", "psbt_add_inputs", "psbt_add_outputs", "psbt_sign",
           "psbt_legacy_finish", "psbt_end", "psbt_abort")
# previous-transaction bytes per psbt_prev_tx, well inside max_message_size with the envelope
_PREV_TX_ROOM = 256


class PsbtSigningError(Exception):
    """The PSBT cannot be signed as given (a clear message; nothing was signed)."""


@dataclass
class _Signing:
    index: int
    path: str
    pubkey: bytes       # 33 bytes (ECDSA) or the 32-byte x-only internal key (taproot)
    taproot: bool
    hash_type: int
    multisig: bool = False  # a registered multisig wallet's input (SPEC §12)


def _path(origin: KeyOrigin) -> str:
    return format_hd_keypath(origin.path)


def _is_final(txin: PSBTInput) -> bool:
    return bool(txin.final_script_sig or txin.final_script_witness)


def _single_key_form(txin: PSBTInput, script_pubkey: bytes) -> bool:
    kind, _ = S.solver(script_pubkey)
    if kind in (S.PUBKEYHASH, S.WITNESS_V0_KEYHASH):
        return True
    return kind == S.SCRIPTHASH and S.solver(txin.redeem_script)[0] == S.WITNESS_V0_KEYHASH


def _multisig_script(txin: PSBTInput, script_pubkey: bytes) -> bytes | None:
    """The multi/sortedmulti script a P2SH, P2WSH or P2SH-P2WSH input spends, if it is one."""
    kind, _ = S.solver(script_pubkey)
    if kind == S.WITNESS_V0_SCRIPTHASH or (
            kind == S.SCRIPTHASH and S.solver(txin.redeem_script)[0] == S.WITNESS_V0_SCRIPTHASH):
        script = txin.witness_script
    elif kind == S.SCRIPTHASH:
        script = txin.redeem_script
    else:
        return None
    return script if script and S.solver(script)[0] == S.MULTISIG else None


def _our_multisig_signing(index: int, txin: PSBTInput, script: bytes,
                          fingerprint: bytes) -> _Signing | None:
    for pubkey, origin in sorted(txin.hd_keypaths.items()):
        if origin.fingerprint == fingerprint and len(pubkey) == 33 and pubkey in script:
            hash_type = SIGHASH_ALL if txin.sighash_type is None else txin.sighash_type
            return _Signing(index, _path(origin), pubkey, False, hash_type, multisig=True)
    return None


def _our_signing(index: int, txin: PSBTInput, script_pubkey: bytes,
                 fingerprint: bytes) -> _Signing | None:
    if _is_final(txin):
        return None
    if S.solver(script_pubkey)[0] == S.WITNESS_V1_TAPROOT:
        internal = txin.tap_internal_key
        found = txin.tap_bip32_paths.get(internal)
        if (internal != NULL32 and txin.tap_merkle_root == NULL32 and found is not None
                and not found[0] and found[1].fingerprint == fingerprint):
            hash_type = SIGHASH_DEFAULT if txin.sighash_type is None else txin.sighash_type
            return _Signing(index, _path(found[1]), internal, True, hash_type)
        return None
    multisig = _multisig_script(txin, script_pubkey)
    if multisig is not None:
        return _our_multisig_signing(index, txin, multisig, fingerprint)
    if not _single_key_form(txin, script_pubkey):
        return None
    for pubkey, origin in sorted(txin.hd_keypaths.items()):
        if origin.fingerprint == fingerprint and len(pubkey) == 33:
            hash_type = SIGHASH_ALL if txin.sighash_type is None else txin.sighash_type
            return _Signing(index, _path(origin), pubkey, False, hash_type)
    return None


def _change_path(out: PSBTOutput, fingerprint: bytes) -> str | None:
    for _, origin in sorted(out.hd_keypaths.items()):
        if origin.fingerprint == fingerprint:
            return _path(origin)
    internal = out.tap_internal_key
    found = out.tap_bip32_paths.get(internal)
    if internal != NULL32 and not out.tap_tree and found is not None and not found[0] \
            and found[1].fingerprint == fingerprint:
        return _path(found[1])
    return None


def signing_plan(psbt: PSBT, fingerprint: bytes) -> list[_Signing]:
    """The inputs the device with this fingerprint signs, with their paths."""
    plan = []
    for i, txin in enumerate(psbt.inputs):
        utxo = txin.utxo()
        if utxo is None:
            continue
        signing = _our_signing(i, txin, utxo.script_pubkey, fingerprint)
        if signing is not None:
            plan.append(signing)
    return plan


def check_device(info: dict[str, Any]) -> None:
    missing = sorted(set(METHODS) - set(info.get("methods", ())))
    if missing:
        raise DeviceCannotSign(f"Device cannot sign PSBTs: it lacks the methods {', '.join(missing)}")


def _input_items(psbt: PSBT) -> list[list[Any]]:
    items = []
    for i, txin in enumerate(psbt.inputs):
        utxo = txin.utxo()
        if utxo is None:
            raise PsbtSigningError(f"Input {i} has no UTXO: the device needs every spent output")
        if txin.non_witness_utxo is not None and txin.has_witness_utxo() and txin.witness_utxo != utxo:
            raise PsbtSigningError(f"Input {i}'s witness UTXO differs from its previous "
                                   "transaction's output")
        sequence = 0xFFFFFFFF if txin.sequence is None else txin.sequence
        items.append([txin.prev_txid, txin.prev_out, sequence, utxo.value, utxo.script_pubkey])
    return items


def _stream_inputs(driver: Any, psbt: PSBT, items: list[list[Any]], first_pass: bool) -> list[bytes]:
    """Every input, each after its previous transaction in the first pass."""
    tokens: list[bytes] = []
    pending: list[list[Any]] = []

    def flush() -> None:
        for batch in driver.batches(pending):
            tokens.extend(driver.call("psbt_add_inputs", {"inputs": batch}))
        pending.clear()

    for txin, item in zip(psbt.inputs, items, strict=True):
        if first_pass and txin.non_witness_utxo is not None:
            flush()
            raw = txin.non_witness_utxo.serialize(with_witness=False)
            room = max(64, driver.batch_size - _PREV_TX_ROOM)
            for start in range(0, len(raw), room):
                params: dict[str, Any] = {"vout": txin.prev_out, "data": raw[start:start + room]}
                if start + room < len(raw):
                    params["more"] = True
                driver.call("psbt_prev_tx", params)
        pending.append(item)
    flush()
    return tokens


def _stream_outputs(driver: Any, items: list[list[Any]]) -> list[bytes]:
    tokens: list[bytes] = []
    for batch in driver.batches(items):
        tokens.extend(driver.call("psbt_add_outputs", {"outputs": batch}))
    return tokens


def sign_psbt_with_device(client: Any, info: dict[str, Any], psbt: PSBT, fingerprint: bytes,
                          network: str, stats: dict[str, int] | None = None) -> int:
    """Add the device's signatures to psbt; returns how many it made."""
    plan = signing_plan(psbt, fingerprint)
    if not plan:
        return 0
    check_device(info)
    tx = psbt.unsigned_tx()
    if tx is None:
        raise PsbtSigningError("PSBT's inputs require conflicting locktimes")
    inputs = _input_items(psbt)
    outputs: list[list[Any]] = []
    for out in psbt.outputs:
        path = _change_path(out, fingerprint)
        outputs.append([out.amount, out.script] + ([path] if path else []))
    driver = _Driver(client, info["max_message_size"])
    begin: dict[str, Any] = {"version": tx.version, "locktime": tx.locktime,
                             "n_inputs": len(tx.vin), "n_outputs": len(tx.vout),
                             "network": network}
    if info.get("boot_id"):
        begin["boot_id"] = info["boot_id"]
    if any(s.multisig for s in plan):
        begin["multisig"] = True    # the device loads its registered wallets first (SPEC §12)
    signatures: list[tuple[_Signing, bytes]] = []
    with client.session():
        try:
            began = driver.call("psbt_begin", begin)
            driver.session = began.get("session")
            driver.batch_size = batch_bytes(driver.max_size, began.get("heap_free"))
            tokens_in = _stream_inputs(driver, psbt, inputs, True)
            tokens_out = _stream_outputs(driver, outputs)
            for s in plan:
                params: dict[str, Any] = {"input_index": s.index, "txin": inputs[s.index],
                                          "txin_token": tokens_in[s.index], "path": s.path,
                                          "hash_type": s.hash_type}
                if (s.hash_type & 0x1F) == SIGHASH_SINGLE and s.index < len(outputs):
                    params.update(txout=outputs[s.index][:2], txout_token=tokens_out[s.index])
                if s.multisig:
                    params["multisig"] = True
                sig = driver.call("psbt_sign", params, awaits_user=True)
                if sig is None:     # P2PKH: the whole transaction again for the legacy sighash
                    _stream_inputs(driver, psbt, inputs, False)
                    _stream_outputs(driver, [o[:2] for o in outputs])
                    sig = driver.call("psbt_legacy_finish")
                signatures.append((s, bytes(sig)))
            driver.call("psbt_end")
        except (DeviceError, DeviceUnavailable) as e:
            if restarted(client, info):
                raise DeviceRestarted(before_session=driver.session is None) from e
            _abort(driver)
            raise
        except BaseException:
            _abort(driver)
            raise
        finally:
            if stats is not None:
                stats["bytes_sent"] = stats.get("bytes_sent", 0) + driver.bytes_sent
                stats["messages"] = stats.get("messages", 0) + driver.messages
    for s, sig in signatures:
        txin = psbt.inputs[s.index]
        if s.taproot:
            txin.tap_key_sig = sig
        else:
            txin.partial_sigs[hash160(s.pubkey)] = (s.pubkey, sig)
    return len(signatures)


def _abort(driver: Any) -> None:
    try:
        driver.call("psbt_abort")
    except (DeviceError, DeviceUnavailable):
        pass

