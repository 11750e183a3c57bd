"""The device's keys as the host sees them (protocol/SPEC.md §9): its state,
master fingerprint and extended public keys, and the descriptors of its
single-key accounts (BIP44/49/84/86) as Bitcoin Core imports them from an
external signer.

The host never sees a seed, a PIN or a private key: everything here is public
key material the device derived.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from quill.tx.descriptor import add_checksum

HARDENED = 0x80000000

# (BIP purpose, descriptor template): the order HWI's getdescriptors gives
ACCOUNT_TYPES = (
    (44, "pkh({key})"),
    (49, "sh(wpkh({key}))"),
    (84, "wpkh({key})"),
    (86, "tr({key})"),
)


class DeviceCaller(Protocol):
    def call(self, method: str, params: dict[str, Any] | None = None, timeout: float | None = None,
             awaits_user: bool = False) -> Any: ...


class KeysUnavailable(Exception):
    """The device has no keys to offer: no seed, locked, or a firmware without keys."""


@dataclass(frozen=True)
class KeyState:
    state: str                  # "uninitialized", "locked" or "unlocked"
    fingerprint: str | None     # the master key's fingerprint, hex, when unlocked


def key_state(info: dict[str, Any]) -> KeyState:
    """From get_info's answer."""
    keys = info.get("keys")
    if not isinstance(keys, dict):
        raise KeysUnavailable("Device firmware has no keys (no 'keys' in get_info)")
    fingerprint = keys.get("fingerprint")
    return KeyState(str(keys.get("state")),
                    fingerprint.hex() if isinstance(fingerprint, bytes) else None)


def coin_type(chain: str) -> int:
    """BIP44's coin type: 0 on mainnet, 1 on every test network."""
    return 0 if chain == "main" else 1


def device_network(chain: str) -> str:
    """The device's name for the chain's address format (protocol/SPEC.md §11)."""
    return chain if chain in ("main", "regtest") else "test"


def network(chain: str) -> str:
    return "main" if chain == "main" else "test"


def get_xpub(client: DeviceCaller, path: str, chain: str) -> tuple[str, str]:
    """(xpub or tpub, master fingerprint hex) of the key at path ("m/84h/1h/0h")."""
    result = client.call("get_xpub", {"path": path, "network": network(chain)})
    return str(result["xpub"]), bytes(result["fingerprint"]).hex()


def master_fingerprint(client: DeviceCaller) -> str:
    return get_xpub(client, "m", "main")[1]


def account_descriptors(client: DeviceCaller, chain: str, account: int) -> dict[str, list[str]]:
    """{"receive": [...], "internal": [...]}: one descriptor per account type, with
    key origin and checksum, as an external signer's getdescriptors answers."""
    receive: list[str] = []
    internal: list[str] = []
    for purpose, template in ACCOUNT_TYPES:
        path = f"{purpose}h/{coin_type(chain)}h/{account}h"
        xpub, fingerprint = get_xpub(client, "m/" + path, chain)
        origin = f"[{fingerprint}/{path}]{xpub}"
        receive.append(add_checksum(template.format(key=origin + "/0/*")))
        internal.append(add_checksum(template.format(key=origin + "/1/*")))
    return {"receive": receive, "internal": internal}
