"""walletcreatefundedpsbt with fixed inputs from multisig wallets, against the real Core.

Specter Desktop's multisig wallets are wsh(sortedmulti(k,...)) (and sh(wsh(sortedmulti(...))) for
nested segwit) over BIP48 account xpubs with key origins. A watch-only wallet on Core and one on
Quill (following Core) hold the same two descriptors; Core's "keys" wallet pays them; the same
funding calls go to both and the PSBT bytes, fee and change position must be equal: input weights
from the multisig satisfaction, witness and redeem scripts, every cosigner's BIP32 derivation.
"""
from __future__ import annotations

from typing import Any

import pytest

from quill.tx.descriptor import add_checksum
from quill.tx.hashes import sha256
from quill.wallet.bip32 import master_from_seed
from tests.kit.bitcoind import BitcoinD
from tests.kit.rpc_daemon import QuillDaemon
from tests.wallet_core.test_wallet_coins_vs_core import Wallet, sync, watch_only_pair
from tests.wallet_funding.test_funding_vs_core import same

HARDENED = 0x80000000
# name: (descriptor template, BIP48 script type, Core's address type of it)
SCRIPT_TYPES = {"wsh": ("wsh(sortedmulti(2,{keys}))", 2, "bech32"),
                "sh-wsh": ("sh(wsh(sortedmulti(2,{keys})))", 1, "p2sh-segwit")}


def cosigner_key(n: int, script_type: int, branch: int) -> str:
    """[fingerprint/48h/1h/0h/<script_type>h]tpub/<branch>/*, as a BIP48 cosigner exports it."""
    master = master_from_seed(sha256(f"funding-multisig/{n}".encode()))
    account = master
    for index in (48, 1, 0, script_type):
        account = account.derive(index | HARDENED)
    origin = f"{master.neuter().fingerprint().hex()}/48h/1h/0h/{script_type}h"
    return f"[{origin}]{account.neuter().serialize('regtest')}/{branch}/*"


@pytest.fixture(scope="module")
def scenario(tmp_path_factory: pytest.TempPathFactory) -> Any:
    with BitcoinD(tmp_path_factory.mktemp("core")) as core:
        quill = QuillDaemon(tmp_path_factory.mktemp("quill"), f"-chainsource={core.url_for_follower}",
                            "-chainpollinterval=100").start()
        try:
            core.rpc("createwallet", "keys")
            keys = Wallet(core, "keys")
            miner = keys.rpc("getnewaddress", "", "bech32")
            core.rpc("generatetoaddress", 101, miner)
            sync(core, quill)
            out: dict[str, Any] = {"keys": keys}
            for name, (template, bip48_type, address_type) in SCRIPT_TYPES.items():
                requests = [{"desc": add_checksum(template.format(keys=",".join(
                                 cosigner_key(n, bip48_type, branch) for n in range(3)))),
                             "timestamp": 0, "active": True, "internal": branch == 1}
                            for branch in (0, 1)]
                pair = watch_only_pair(core, quill, name, requests)
                for amount in ("0.5", "0.25"):
                    address = pair[0].rpc("getnewaddress", "", address_type)
                    assert pair[1].rpc("getnewaddress", "", address_type) == address
                    keys.rpc("sendtoaddress", address, amount)
                out[name] = {"c": pair[0], "q": pair[1]}
            core.rpc("generatetoaddress", 1, miner)
            sync(core, quill)
            for name in SCRIPT_TYPES:
                out[name]["utxos"] = [{"txid": u["txid"], "vout": u["vout"]}
                                      for u in sorted(out[name]["c"].rpc("listunspent"), key=lambda u: u["amount"])]
            yield out
        finally:
            quill.stop()


@pytest.mark.parametrize("name", list(SCRIPT_TYPES))
def test_multisig_fixed_inputs_psbt_equals_cores(scenario: Any, name: str) -> None:
    s = scenario[name]
    address_type = SCRIPT_TYPES[name][2]
    dest = scenario["keys"].rpc("getnewaddress", "", "bech32")
    small, big = s["utxos"]
    own = s["c"].rpc("getnewaddress", "", address_type)
    assert s["q"].rpc("getnewaddress", "", address_type) == own
    cases = [
        ([big], [{dest: "0.1"}], 0, {"add_inputs": False, "fee_rate": 2, "changePosition": 1}),
        ([big, small], [{dest: "0.6"}, {own: "0.05"}], 140,
         {"add_inputs": False, "fee_rate": "3.5", "changePosition": 0, "replaceable": True}),
        ([small], [{dest: "0.25"}], 0, {"fee_rate": 1, "subtractFeeFromOutputs": [0]}),
    ]
    for inputs, outputs, locktime, options in cases:
        options = {"change_type": address_type, **options}
        for extra in ([], [True], [False], [True, 2, 0]):
            result = same(s, "walletcreatefundedpsbt", inputs, outputs, locktime, options, *extra)
            assert result[0] == "ok", result
