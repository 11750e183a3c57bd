"""Multisig wallets registered on the device (protocol/SPEC.md §12), as the
host asks for them: the device shows the policy to its user, keeps it on its
flash, and from then on signs that wallet's inputs and recognises its change.

    register(client, registration)  -> {"name", "address"}: the wallet's first receive address
    registered(client)              -> [{"name", "script_type", "sorted", "threshold", "n"}, ...]
    remove(client, name)

`Registration` is the wallet's policy as the device takes it (Jade's
register_multisig has the same shape): script type, sorted or not, threshold
and each cosigner's [fingerprint, origin path, xpub]; every cosigner derives
/<0;1>/* below its xpub.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from quill.device.hwkeys import DeviceCaller

METHODS = ("multisig_register", "multisig_list", "multisig_remove")


@dataclass(frozen=True)
class Registration:
    name: str
    script_type: str            # "p2sh", "p2wsh" or "p2sh-p2wsh"
    sorted: bool
    threshold: int
    signers: list[tuple[bytes, str, str]] = field(default_factory=list)   # fingerprint, path, xpub
    network: str = "main"       # "main", "test" or "regtest": the xpubs' version and addresses

    def params(self) -> dict[str, Any]:
        return {"name": self.name, "script_type": self.script_type, "sorted": self.sorted,
                "threshold": self.threshold, "network": self.network,
                "signers": [[fp, path, xpub] for fp, path, xpub in self.signers]}


def register(client: DeviceCaller, registration: Registration) -> dict[str, str]:
    result = client.call("multisig_register", registration.params(), awaits_user=True)
    return {"name": str(result["name"]), "address": str(result["address"])}


def registered(client: DeviceCaller) -> list[dict[str, Any]]:
    return list(client.call("multisig_list"))


def remove(client: DeviceCaller, name: str) -> None:
    client.call("multisig_remove", {"name": name})
