"""Key files that desktop wallets import, from the device's xpubs.

coldcard(...)     Coldcard's "Generic JSON" export (Coldcard firmware docs/generic-wallet-export.md),
                  which Specter, Sparrow and Nunchuk read: `chain`, `xfp` (the master fingerprint,
                  upper case), `account`, `xpub` (the master key), then one section per account
                  type: bip44, bip49, bip84, bip86 (single key) and bip48_1 (P2SH-P2WSH), bip48_2
                  (P2WSH) and, for account 0, bip45 (P2SH) multisig, each with `name`, `xfp` (the
                  account key's own fingerprint), `deriv`, `xpub`, `desc`, `_pub` (SLIP-132 form,
                  where it differs) and, single key only, `first` (the /0/0 address). Single-key `desc` is the account's
                  descriptor with both branches (`/<0;1>/*`, BIP389); a multisig `desc` is
                  Coldcard's template `wsh(sortedmulti(M,<key>/0/*,...))`, for the wallet to fill.
descriptors(...)  the four single-key descriptors of the account, `/<0;1>/*`, one a line.
"""
from __future__ import annotations

from typing import Any

from quill.device import hwkeys
from quill.tx.address import base58check_decode, base58check_encode, encode_destination
from quill.tx.descriptor import add_checksum
from quill.wallet.bip32 import decode_ext_pubkey
from quill.wallet.descriptors import parse

# Coldcard's chain codes (chains.py: ctype)
_CTYPE = {"main": "BTC", "test": "XTN", "testnet4": "XTN", "signet": "XTN", "regtest": "XRT"}

_SINGLE = dict(hwkeys.ACCOUNT_TYPES)     # purpose -> descriptor template of one key
# (section, path below m/, script name, descriptor template, multisig); {coin} {acc}
_SECTIONS = (
    ("bip44", "44h/{coin}h/{acc}h", "p2pkh", _SINGLE[44], False),
    ("bip49", "49h/{coin}h/{acc}h", "p2sh-p2wpkh", _SINGLE[49], False),
    ("bip84", "84h/{coin}h/{acc}h", "p2wpkh", _SINGLE[84], False),
    ("bip86", "86h/{coin}h/{acc}h", "p2tr", _SINGLE[86], False),
    # Coldcard's templates for the wallet to fill: M, and the other keys for "..."
    ("bip48_1", "48h/{coin}h/{acc}h/1h", "p2sh-p2wsh", "sh(wsh(sortedmulti(M,{key},...)))", True),
    ("bip48_2", "48h/{coin}h/{acc}h/2h", "p2wsh", "wsh(sortedmulti(M,{key},...))", True),
    ("bip45", "45h", "p2sh", "sh(sortedmulti(M,{key},...))", True),      # account 0 only, as Coldcard
)

# SLIP-132 version bytes of the account types that have them: (main, test)
_SLIP132 = {
    "p2sh-p2wpkh": (0x049D7CB2, 0x044A5262),    # ypub / upub
    "p2wpkh": (0x04B24746, 0x045F1CF6),         # zpub / vpub
    "p2sh-p2wsh": (0x0295B43F, 0x024289EF),     # Ypub / Upub
    "p2wsh": (0x02AA7ED3, 0x02575483),          # Zpub / Vpub
}


def slip132(xpub: str, script: str, chain: str) -> str | None:
    """The key with the SLIP-132 version of its script type, or None for types without one."""
    versions = _SLIP132.get(script)
    data = base58check_decode(xpub, 78)
    if versions is None or data is None:
        return None
    version = versions[0] if chain == "main" else versions[1]
    return base58check_encode(version.to_bytes(4, "big") + bytes(data[4:]))


def _own_fingerprint(xpub: str, chain: str) -> str:
    key = decode_ext_pubkey(xpub, chain)
    assert key is not None, "the device answered an xpub of another chain"
    return key.fingerprint().hex().upper()


def _first_address(template: str, key: str, chain: str) -> str:
    script = parse(template.format(key=key + "/0/*"), chain).script(0)
    return str(encode_destination(script, chain))


def coldcard(client: hwkeys.DeviceCaller, fingerprint: str, chain: str, account: int) -> dict[str, Any]:
    master = hwkeys.get_xpub(client, "m", chain)[0]
    export: dict[str, Any] = {"chain": _CTYPE[chain], "xfp": fingerprint.upper(), "account": account,
                              "xpub": master}
    for section, path, script, template, multisig in _SECTIONS:
        if section == "bip45" and account:
            continue
        deriv = path.format(coin=hwkeys.coin_type(chain), acc=account)
        xpub = hwkeys.get_xpub(client, "m/" + deriv, chain)[0]
        key = f"[{fingerprint}/{deriv}]{xpub}"
        entry: dict[str, Any] = {"name": script, "xfp": _own_fingerprint(xpub, chain), "deriv": "m/" + deriv,
                                 "xpub": xpub}
        if multisig:
            entry["desc"] = template.format(key=key + "/0/*")
        else:
            entry["desc"] = add_checksum(template.format(key=key + "/<0;1>/*"))
        slip = slip132(xpub, script, chain)
        if slip is not None:
            entry["_pub"] = slip
        if not multisig:
            entry["first"] = _first_address(template, key, chain)
        export[section] = entry
    return export


def descriptors(client: hwkeys.DeviceCaller, fingerprint: str, chain: str, account: int) -> str:
    """The account's pkh, sh(wpkh), wpkh and tr descriptors with both branches, one a line."""
    lines = []
    for purpose, template in hwkeys.ACCOUNT_TYPES:
        path = f"{purpose}h/{hwkeys.coin_type(chain)}h/{account}h"
        xpub = hwkeys.get_xpub(client, "m/" + path, chain)[0]
        lines.append(add_checksum(template.format(key=f"[{fingerprint}/{path}]{xpub}/<0;1>/*")))
    return "\n".join(lines) + "\n"
