"""Core's ExternalSigner (src/external_signer.cpp) and ExternalSignerScriptPubKeyMan's
GetExternalSigner and DisplayAddress (wallet/external_signer_scriptpubkeyman.cpp)."""
from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from quill.extsigner.errors import (
    DisplayAddressError,
    ExternalSignerError,
    NoSingleSigner,
    SignerFailed,
    SignerNotFound,
    SignRefused,
)
from quill.extsigner.run import run_command_parse_json, split_command
from quill.tx.psbt import PSBT, PSBTError, decode_base64_psbt, encode_base64_psbt

log = logging.getLogger("quill.wallet")

# How long a signer may take: enumerate and getdescriptors read the device; displayaddress and
# signtx wait for its user (the emulated device's own confirmation timeout is 120 s).
QUERY_TIMEOUT = 60.0
USER_TIMEOUT = 300.0
SIGHASH_DEFAULT, SIGHASH_ALL, SIGHASH_ANYONECANPAY = 0, 1, 0x80
# How a signer command runs: (argv, stdin, timeout) -> its JSON answer. Core's way is a process
# (run_command_parse_json); quilld without -signer runs quill-signer's commands with its own
# device (quill.handlers.signer_command), the argv then being only the arguments.
Runner = Callable[[list[str], str, float], Any]


@dataclass
class ExternalSigner:
    command: list[str]
    chain: str
    fingerprint: str
    name: str
    runner: Runner = field(default=run_command_parse_json)

    def _args(self, *tail: str) -> list[str]:
        return [*self.command, "--fingerprint", self.fingerprint, "--chain", self.chain, *tail]

    def get_descriptors(self, account: int) -> Any:
        return self.runner(self._args("getdescriptors", "--account", str(account)), "", QUERY_TIMEOUT)

    def display_address(self, descriptor: str) -> Any:
        return self.runner(self._args("displayaddress", "--desc", descriptor), "", USER_TIMEOUT)

    def sign_transaction(self, psbt: PSBT) -> PSBT:
        """Core's SignTransaction: the signer's PSBT. Raises SignerFailed (the reason logged) when
        the signer answers without a usable PSBT; running it may fail with ExternalSignerError."""
        try:
            return self._sign(psbt)
        except SignRefused as e:
            log.warning("Failed to sign: %s", e.message)
            raise SignerFailed() from None

    def _sign(self, psbt: PSBT) -> PSBT:
        encoded = encode_base64_psbt(psbt)
        if not self.signs_for(psbt):
            raise SignRefused(f"Signer fingerprint {self.fingerprint} does not match any of the inputs:\n"
                                      f"{encoded}")
        result = self.runner([*self.command, "--stdin", "--fingerprint", self.fingerprint,
                                         "--chain", self.chain], "signtx " + encoded, USER_TIMEOUT)
        error = result.get("error") if isinstance(result, dict) else None
        if isinstance(error, str):
            raise SignRefused(error)
        signed_text = result.get("psbt") if isinstance(result, dict) else None
        if not isinstance(signed_text, str):
            raise SignRefused("Unexpected result from signer")
        try:
            signed = decode_base64_psbt(signed_text)
        except PSBTError as e:
            raise SignRefused(f"TX decode failed {e}") from None
        check_signer_outputs(psbt, signed)
        return signed

    def signs_for(self, psbt: PSBT) -> bool:
        """Whether some input of the PSBT names this signer's master key."""
        return any(self._is_ours(txin) for txin in psbt.inputs)

    def _is_ours(self, txin: Any) -> bool:
        origins = [*txin.hd_keypaths.values(), *(origin for _, origin in txin.tap_bip32_paths.values())]
        return any(origin.fingerprint.hex() == self.fingerprint.lower() for origin in origins)


def _safe_sighash(sighash: int) -> bool:
    return sighash & ~SIGHASH_ANYONECANPAY in (SIGHASH_DEFAULT, SIGHASH_ALL)


def check_signer_outputs(original: PSBT, signed: PSBT) -> None:
    """Core's CheckSignerPSBTOutputs: the signer changed no output and signed every input with
    a sighash type that commits to all outputs."""
    if len(original.outputs) != len(signed.outputs):
        raise SignRefused(f"Signer modified output count: {len(original.outputs)} -> {len(signed.outputs)}")
    for index, (before, after) in enumerate(zip(original.outputs, signed.outputs, strict=True)):
        if before.amount != after.amount:
            raise SignRefused(f"Signer modified output {index} amount")
        if before.script != after.script:
            raise SignRefused(f"Signer modified output {index} scriptPubKey")
    for txin in signed.inputs:
        sigs = [sig for _, sig in txin.partial_sigs.values() if sig]
        if (txin.sighash_type is not None and not _safe_sighash(txin.sighash_type)) or \
                any(not _safe_sighash(sig[-1]) for sig in sigs):
            raise SignRefused("Signer used unsafe sighash type in one of the inputs")
        if len(txin.tap_key_sig) == 65 and not _safe_sighash(txin.tap_key_sig[-1]):
            raise SignRefused("Signer used an unsafe sighash type in taproot keypath sig")
        if any(len(sig) == 65 and not _safe_sighash(sig[-1]) for sig in txin.tap_script_sigs.values()):
            raise SignRefused("Signer used an unsafe sighash type in taproot scriptpath sig")


def enumerate_signers(command: str, chain: str, runner: Runner = run_command_parse_json,
                      ready_only: bool = False, distinct: bool = True) -> list[ExternalSigner]:
    """Core's ExternalSigner::Enumerate: `<command> enumerate`, duplicates skipped (unless not
    `distinct`: quilld's own pool, listed device by device). `ready_only` (quilld's own
    device): a device that cannot sign (no seed, locked) is left out, not an error."""
    result = runner([*split_command(command), "enumerate"], "", QUERY_TIMEOUT)
    if not isinstance(result, list):
        raise ExternalSignerError(f"'{command}' received invalid response, expected array of signers")
    signers: list[ExternalSigner] = []
    for entry in result:
        entry = entry if isinstance(entry, dict) else {}
        error = entry.get("error")
        if error is not None and ready_only:
            continue
        if error is not None:
            if not isinstance(error, str):
                raise ExternalSignerError(f"'{command}' error")
            raise ExternalSignerError(f"'{command}' error: {error}")
        fingerprint = entry.get("fingerprint")
        if fingerprint is None:
            raise ExternalSignerError(f"'{command}' received invalid response, missing signer fingerprint")
        if not isinstance(fingerprint, str) or len(fingerprint) != 8 or not _is_hex(fingerprint):
            raise ExternalSignerError(f"'{command}' received invalid fingerprint, must be 8 hex characters")
        if distinct and any(s.fingerprint == fingerprint for s in signers):
            continue
        model = entry.get("model")
        name = model if isinstance(model, str) else ""
        signers.append(ExternalSigner(split_command(command), chain, fingerprint, name, runner))
    return signers


def _is_hex(text: str) -> bool:
    return all(c in "0123456789abcdefABCDEF" for c in text)


def no_signer_option() -> NoSingleSigner:
    return NoSingleSigner("restart quilld with -signer=<cmd>")


@dataclass(frozen=True)
class SignerSource:
    """Where a node's signers come from: Core's -signer command, or (command "") quilld's own
    device through `runner`."""
    command: str
    runner: Runner = field(default=run_command_parse_json)

    def enumerate(self, chain: str, every_device: bool = False) -> list[ExternalSigner]:
        """The signers, one per fingerprint; every_device: quilld's own devices one by one
        (two devices with one seed are two entries), as enumeratesigners lists them."""
        return enumerate_signers(self.command, chain, self.runner, ready_only=not self.command,
                                 distinct=bool(self.command) or not every_device)


def get_external_signer(source: SignerSource | None, chain: str,
                        bound: Callable[[ExternalSigner], bool] | None = None) -> ExternalSigner:
    """Core's ExternalSignerScriptPubKeyMan::GetExternalSigner: the one signer connected.
    quilld's own pool of devices may hold several keys: `bound` then picks the signers the
    request names (the PSBT's inputs, the descriptor's origin), when some match."""
    if source is None:
        raise no_signer_option()
    signers = source.enumerate(chain)
    if bound is not None and not source.command and len(signers) > 1:
        signers = [s for s in signers if bound(s)] or signers
    if not signers:
        raise NoSingleSigner("No external signers found")
    if len(signers) > 1:
        raise NoSingleSigner("More than one external signer found. Please connect only one at a time.")
    return signers[0]


def signer_for_signing(source: SignerSource | None, chain: str, psbt: PSBT | None = None) -> ExternalSigner:
    """GetExternalSigner as FillPSBT uses it: its own failures are EXTERNAL_SIGNER_NOT_FOUND (the
    reason logged); a signer that cannot be run or answers nonsense fails as ExternalSignerError.
    psbt: in a pool of devices, the signer whose key its inputs name."""
    try:
        return get_external_signer(source, chain, None if psbt is None else lambda s: s.signs_for(psbt))
    except NoSingleSigner as e:
        log.warning("%s", e.message)
        raise SignerNotFound() from None


def display_address(source: SignerSource | None, chain: str, descriptor: str, address: str) -> None:
    """Core's CWallet::DisplayAddress through the signer: it must echo `address`."""
    result = get_external_signer(source, chain, lambda s: f"[{s.fingerprint.lower()}" in descriptor.lower()
                                 ).display_address(descriptor)
    error = result.get("error") if isinstance(result, dict) else None
    if isinstance(error, str):
        raise DisplayAddressError(f"Signer returned error: {error}")
    echoed = result.get("address") if isinstance(result, dict) else None
    if not isinstance(echoed, str):
        raise DisplayAddressError("Signer did not echo address")
    if echoed != address:
        raise DisplayAddressError(f"Signer echoed unexpected address {echoed}")
