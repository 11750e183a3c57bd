"""What must hold after a fault: memory was the disk, every acknowledged write survived a
restart, and each wallet equals a fresh rescan of its own descriptors."""
from collections import Counter

from quill.tx.hashes import hex_to_hash
from tests.durability.scenario import Journal, keys_of
from tests.wallet.chainkit import Kit
from tests.wallet_e2e.e2ekit import TIME_KEYS

# What a fresh rescan cannot know: times of first sight, and labels set by hand.
NOT_RESCANNED = {*TIME_KEYS, "label"}


def snapshot(kit: Kit) -> dict:
    """Every answer that memory shapes: the chain's tip, active chain and mempool, and each
    loaded wallet's coins, history, labels, locks and descriptors."""
    chain = kit.chain
    height, tip = chain.tip()
    state = {
        "tip": (height, tip.hex()),
        "active": [chain.block_hash(h).hex() for h in range(height + 1)],
        "mempool": sorted(tx.txid_hex() for tx in chain.mempool_txs()),
        "wallets": sorted(kit.manager.wallets),
    }
    for name in sorted(kit.manager.wallets):
        state[name] = {
            "balances": kit.rpc("getbalances", wallet=name),
            "unspent": kit.rpc("listunspent", 0, wallet=name),
            "transactions": kit.rpc("listtransactions", "*", 10_000, 0, True, wallet=name),
            "labels": kit.rpc("listlabels", wallet=name),
            "locked": kit.rpc("listlockunspent", wallet=name),
            "descriptors": kit.rpc("listdescriptors", wallet=name),
            "tip": kit.manager.wallets[name].tip()[0],
        }
    return state


def check_acknowledged(kit: Kit, journal: Journal) -> int:
    """Every write the journal holds is in the reopened node; returns how many were checked."""
    chain = kit.chain
    reconsidered_at = [i for i, e in enumerate(journal.entries) if "reconsidered" in e or "reconsidering" in e]
    for i, entry in enumerate(journal.entries):
        if "wallet" in entry:
            assert entry["wallet"] in kit.manager.wallets, entry
        elif "imported" in entry:
            name = entry["imported"]
            keys = keys_of(name)
            descs = {d["desc"] for d in kit.rpc("listdescriptors", wallet=name)["descriptors"]}
            assert {keys.receive, keys.change} <= descs, (entry, descs)
        elif "block" in entry:
            assert chain.entry(hex_to_hash(entry["block"])) is not None, entry
        elif "tx" in entry:
            found = chain.get_transaction(hex_to_hash(entry["tx"]))     # the mempool, then the txindex
            assert found is not None and (found[1] is None or chain.is_in_active_chain(found[1])), entry
        elif "label" in entry:
            name, address, label = entry["label"]
            assert kit.rpc("getaddressinfo", address, wallet=name)["labels"] == [label], entry
        elif "locked" in entry:
            name, txid, vout = entry["locked"]
            assert {"txid": txid, "vout": vout} in kit.rpc("listlockunspent", wallet=name), entry
        elif "invalidated" in entry:
            # reconsiderblock clears its block's ancestors and descendants too: only an
            # invalidation no later reconsideration followed must still hold
            if not any(k > i for k in reconsidered_at):
                assert chain.header_info(hex_to_hash(entry["invalidated"])).failed, entry
        elif "reconsidering" in entry:
            pass                    # an intent: it may or may not have happened
        elif "reconsidered" in entry:
            assert not chain.header_info(hex_to_hash(entry["reconsidered"])).failed, entry
        else:
            raise AssertionError(f"unknown journal entry {entry}")
    return len(journal.entries)


def rescanned(entries: list[dict]) -> Counter:
    """The entries a rescan can know. A coinbase the wallet saw confirmed, in a block a reorg
    then left, stays listed as "orphan" (Core's wallet keeps it); a rescan of the active chain
    never sees it."""
    return Counter(repr(sorted((k, v) for k, v in e.items() if k not in NOT_RESCANNED))
                   for e in entries if e.get("category") != "orphan")


def check_fresh_rescan(kit: Kit, case: object = None) -> None:
    """Each loaded wallet against a new wallet importing its descriptors (with their timestamps)
    and a full rescan: the same history, balances and coins (locked coins locked in both)."""
    for name in sorted(kit.manager.wallets):
        if name.startswith("fresh-"):
            continue
        fresh = f"fresh-{name}"
        kit.rpc("createwallet", fresh, True, True)
        requests = []
        for d in kit.rpc("listdescriptors", wallet=name)["descriptors"]:
            request = {"desc": d["desc"], "timestamp": d["timestamp"], "active": d["active"]}
            if d["active"]:
                request["internal"] = d["internal"]
            if "range" in d:
                request["range"] = d["range"]
            requests.append(request)
        if requests:
            assert all(r["success"] for r in kit.rpc("importdescriptors", requests, wallet=fresh))
        locked = kit.rpc("listlockunspent", wallet=name)
        if locked:
            kit.rpc("lockunspent", False, locked, wallet=fresh)
        mine = kit.rpc("listtransactions", "*", 10_000, 0, True, wallet=name)
        again = kit.rpc("listtransactions", "*", 10_000, 0, True, wallet=fresh)
        assert rescanned(mine) == rescanned(again), (case, name, mine, again)
        assert kit.rpc("getbalances", wallet=name) == kit.rpc("getbalances", wallet=fresh), (case, name)
        assert rescanned(kit.rpc("listunspent", 0, wallet=name)) == rescanned(
            kit.rpc("listunspent", 0, wallet=fresh)), (case, name)
        kit.rpc("unloadwallet", fresh)


def check_consistent_chain(kit: Kit) -> None:
    assert kit.chain.check_consistency() == []
