"""getaddressinfo against the real Core, for every kind of script a watch-only wallet holds.

A watch-only wallet on Core and one on Quill (following Core) import the same descriptors, none
sharing a script with another: ranged ones with key origins (pkh, wpkh, sh(wpkh), tr, wsh(multi),
sh(wsh(multi))) and constant keys without origins (wpkh, pkh of an uncompressed key, sh(multi),
wsh(pkh), tr of an x-only key), addr() and raw(). The objects for their addresses, and for
addresses neither wallet owns, must be equal field for field: pubkey, iscompressed (P2PKH only),
script/hex/embedded/sigsrequired/pubkeys of script hashes, key metadata only where Core finds one
key (timestamp, hdkeypath, hdseedid, hdmasterfingerprint; a constant key is its own origin,
"[fingerprint]" and "m"). That origin shows in listunspent's desc and in the PSBTs the wallets
fund too, so those are compared as well.
"""
from __future__ import annotations

from typing import Any

import pytest

from quill.tx.address import encode_destination
from tests.kit.bitcoind import BitcoinD, follower
from tests.wallet_core.test_wallet_coins_vs_core import Wallet, _sorted, sync, watch_only_pair

UNCOMPRESSED_G = ("0479be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798"
                  "483ada7726a3c4655da4fbfc0e1108a8fd17b448a68554199c47d08ffb10d4b8")


def _xpub(wallet: Wallet, function: str, internal: bool = False) -> str:
    """The key expression (origin, tpub, /0/* or /1/*) of one of the wallet's own descriptors."""
    desc = next(d["desc"] for d in wallet.rpc("listdescriptors")["descriptors"]
                if d["desc"].startswith(function + "(") and d["internal"] == internal)
    return str(desc[len(function) + 1:].split(")")[0])


@pytest.fixture(scope="module")
def nodes(tmp_path_factory: pytest.TempPathFactory) -> Any:
    with BitcoinD(tmp_path_factory.mktemp("core")) as core, follower(core, tmp_path_factory.mktemp("quill")) as quill:
        for name in ("k1", "k2"):
            core.rpc("createwallet", name)
        k1, k2 = Wallet(core, "k1"), Wallet(core, "k2")
        core.rpc("generatetoaddress", 101, k1.rpc("getnewaddress"))
        pubs = [k2.rpc("getaddressinfo", k2.rpc("getnewaddress"))["pubkey"] for _ in range(6)]
        x1, x2 = _xpub(k1, "wpkh"), _xpub(k2, "wpkh")
        y1, y2 = _xpub(k1, "wpkh", True), _xpub(k2, "wpkh", True)
        texts = [f"pkh({_xpub(k1, 'pkh')})", f"wpkh({x1})", f"sh(wpkh({_xpub(k1, 'sh(wpkh')}))",
                 f"tr({_xpub(k1, 'tr')})", f"wsh(multi(2,{x1},{x2}))", f"sh(wsh(sortedmulti(1,{y1},{y2})))",
                 f"wpkh({pubs[0]})", f"pkh({UNCOMPRESSED_G})", f"sh(multi(1,{pubs[1]},{pubs[2]}))",
                 f"wsh(pkh({pubs[3]}))", f"tr({pubs[4][2:]})", f"pkh({pubs[5]})",
                 "addr(bcrt1qw508d6qejxtdg4y5r3zarvary0c5xw7kygt080)", "raw(0014" + "11" * 20 + ")"]
        requests = []
        for text in texts:
            info = core.rpc("getdescriptorinfo", text)
            ranged = {"range": [0, 3]} if info["isrange"] else {}
            requests.append({"desc": info["descriptor"], "timestamp": 0, **ranged})
        sync(core, quill)
        pair = watch_only_pair(core, quill, "wo", requests)
        yield core, quill, k1, pair, requests


def test_getaddressinfo_equals_cores(nodes: Any) -> None:
    core, _, _, (c, q), requests = nodes
    addresses = []
    for r in requests:
        addresses += core.rpc("deriveaddresses", r["desc"], [0, 1]) if "range" in r else core.rpc(
            "deriveaddresses", r["desc"])
    strangers = [b"\x51\x02\x4e\x73", b"\x52\x20" + b"\x33" * 32, b"\xa9\x14" + b"\x44" * 20 + b"\x87",
                 b"\x76\xa9\x14" + b"\x55" * 20 + b"\x88\xac", b"\x00\x20" + b"\x66" * 32]   # anchor, v2, ...
    addresses += [encode_destination(script, "regtest") for script in strangers]
    c.rpc("setlabel", addresses[2], "a label")
    q.rpc("setlabel", addresses[2], "a label")
    seen = set()
    for address in addresses:
        theirs, ours = c.rpc("getaddressinfo", address), q.rpc("getaddressinfo", address)
        assert list(ours.items()) == list(theirs.items()), address
        seen |= set(theirs)
    # the scenario shows every field Core can (but the legacy-wallet ones)
    assert {"embedded", "script", "hex", "sigsrequired", "pubkeys", "iscompressed", "hdseedid", "timestamp",
            "witness_version", "desc"} <= seen


def test_constant_keys_origin_in_listunspent_and_psbts(nodes: Any) -> None:
    core, quill, k1, (c, q), requests = nodes
    paid = [core.rpc("deriveaddresses", r["desc"])[0] for r in requests
            if r["desc"].startswith(("wpkh(0", "sh(multi(", "tr(", "pkh(04")) and "range" not in r]
    assert len(paid) == 4
    k1.rpc("sendmany", "", {address: 1 for address in paid})
    core.rpc("generatetoaddress", 1, k1.rpc("getnewaddress"))
    sync(core, quill)
    coins = c.rpc("listunspent", 1, 9_999_999, paid)
    assert _sorted(q.rpc("listunspent", 1, 9_999_999, paid)) == _sorted(coins) and len(coins) == 4
    assert _sorted(q.rpc("listunspent")) == _sorted(c.rpc("listunspent"))
    for coin in coins:
        inputs = [{"txid": coin["txid"], "vout": coin["vout"]}]
        params = [inputs, [{k1.rpc("getnewaddress"): str(coin["amount"])}], 0,
                  {"add_inputs": False, "subtractFeeFromOutputs": [0], "fee_rate": 2}]
        theirs, ours = c.rpc("walletcreatefundedpsbt", *params), q.rpc("walletcreatefundedpsbt", *params)
        assert ours == theirs, coin["desc"]
