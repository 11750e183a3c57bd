"""Wallet RPCs about coins, balances, receipts and labels (Core's wallet/rpc/coins.cpp,
addresses.cpp, transactions.cpp, wallet.cpp): getwalletinfo, listwalletdir, listlabels,
getaddressesbylabel, listunspent, lockunspent, listlockunspent, keypoolrefill, getbalance,
getreceivedbyaddress, getreceivedbylabel, listreceivedbyaddress, listreceivedbylabel.

The computations are quill.wallet.coins; this module parses Core's parameters and lays
the answers out in Core's order.
"""
from __future__ import annotations

import functools
from typing import Any

from quill.amount import Amount
from quill.handlers.wallet import _Locked, _manager, _view
from quill.rpc.args import (
    INT64,
    amount_from_value,
    check_object,
    get_array,
    get_bool,
    get_int,
    get_obj,
    get_str,
    label_from_value,
    parse_hash_v,
)
from quill.rpc.errors import (
    RPC_INVALID_ADDRESS_OR_KEY,
    RPC_INVALID_PARAMETER,
    RPC_METHOD_DEPRECATED,
    RPC_WALLET_ERROR,
    RPC_WALLET_INVALID_LABEL_NAME,
    RPCError,
)
from quill.rpc.registry import ARR, BOOL, NUM, OBJ, STR, Method, Param
from quill.tx.address import AddressError, decode_destination, encode_destination
from quill.tx.hashes import hash_to_hex
from quill.tx.transaction import OutPoint
from quill.wallet import coins
from quill.wallet.balance import get_balance, is_spent
from quill.wallet.coins import CoinFilter
from quill.wallet.descriptors import parse as parse_descriptor

PURPOSES = ("send", "receive", "refund")
WALLET = "wallet"
LATEST_LEGACY_WALLET_MINVERSION = 169900


def _decode(ctx: Any, text: str) -> bytes | None:
    try:
        return decode_destination(text, ctx.node.chain_name)
    except AddressError:
        return None


# -- the wallet and its directory ----------------------------------------------------------


def getwalletinfo(ctx: Any, args: list[Any]) -> Any:
    with _Locked(ctx) as wallet:
        view = _view(_manager(ctx), wallet)
        active = [d for d in wallet.descs.values() if d.active]
        external = sum(d.range_end - d.next_index for d in active if not d.internal)
        internal = sum(d.range_end - d.next_index for d in active if d.internal)
        out: dict[str, Any] = {
            "walletname": wallet.name,
            "walletversion": LATEST_LEGACY_WALLET_MINVERSION,
            "format": "sqlite",
            "txcount": len(wallet.store.all_txs()),
            "keypoolsize": external,
            "keypoolsize_hd_internal": internal,
            "private_keys_enabled": not wallet.disable_private_keys,
            "avoid_reuse": False,
            "scanning": wallet.scanning_json(),
            "descriptors": True,
            "external_signer": wallet.external_signer,
            "blank": wallet.blank,
        }
        if wallet.descs:  # Core's GetBirthTime: the earliest descriptor's timestamp
            out["birthtime"] = min(d.timestamp for d in wallet.descs.values())
        flags = ["last_hardened_xpub_cached", "disable_private_keys"]
        if wallet.blank:
            flags.append("blank")
        out["flags"] = flags + ["descriptor_wallet"] + (["external_signer"] if wallet.external_signer else [])
        out["lastprocessedblock"] = view.lastprocessedblock()
        return out


def listwalletdir(ctx: Any, args: list[Any]) -> Any:
    return {"wallets": [{"name": n, "warnings": []} for n in _manager(ctx).catalog.names()]}


# -- labels ------------------------------------------------------------------------------------


def _address_book(wallet: Any) -> list[tuple[str, str, str]]:
    """(address, label, purpose) in Core's address-book order."""
    entries = []
    for address, (label, purpose) in wallet.labels.items():
        if label is None:
            continue  # a change entry
        script = decode_destination(address, wallet.chain_name)
        entries.append((coins.destination_sort_key(script), address, label, purpose))
    entries.sort(key=lambda e: e[0])
    return [(address, label, purpose) for _, address, label, purpose in entries]


def listlabels(ctx: Any, args: list[Any]) -> Any:
    purpose = None
    if args[0] is not None:
        purpose = get_str(args[0]) or None
        if purpose is not None and purpose not in PURPOSES:
            raise RPCError(RPC_INVALID_PARAMETER, "Invalid 'purpose' argument, must be a known purpose string, "
                                                  "typically 'send', or 'receive'.")
    with _Locked(ctx) as wallet:
        labels = {label for _, label, p in _address_book(wallet) if purpose is None or p == purpose}
    return sorted(labels, key=lambda s: s.encode())


def getaddressesbylabel(ctx: Any, args: list[Any]) -> Any:
    label = label_from_value(args[0])
    with _Locked(ctx) as wallet:
        found = {address: {"purpose": purpose or "unknown"}
                 for address, entry_label, purpose in _address_book(wallet) if entry_label == label}
    if not found:
        raise RPCError(RPC_WALLET_INVALID_LABEL_NAME, f"No addresses with label {label}")
    return found


# -- unspent outputs and locks -----------------------------------------------------------------


def _coin_filter(args: list[Any]) -> CoinFilter:
    minconf, maxconf, _, include_unsafe, options_v = args
    f = CoinFilter()
    if minconf is not None:
        f.min_depth = get_int(minconf)
    if maxconf is not None:
        f.max_depth = get_int(maxconf)
    if include_unsafe is not None:
        f.include_unsafe = get_bool(include_unsafe)
    if options_v is not None:
        options = get_obj(options_v)
        check_object(options, {"minimumAmount": None, "maximumAmount": None, "minimumSumAmount": None,
                               "maximumCount": "number", "include_immature_coinbase": "bool"},
                     allow_null=True, strict=True)
        if "minimumAmount" in options:
            f.min_amount = amount_from_value(options["minimumAmount"])
        if "maximumAmount" in options:
            f.max_amount = amount_from_value(options["maximumAmount"])
        if "minimumSumAmount" in options:
            f.min_sum_amount = amount_from_value(options["minimumSumAmount"])
        if "maximumCount" in options:
            f.max_count = get_int(options["maximumCount"], INT64)
        if "include_immature_coinbase" in options:
            f.include_immature_coinbase = get_bool(options["include_immature_coinbase"])
    return f


def _address_filter(ctx: Any, value: Any) -> set[bytes] | None:
    if value is None:
        return None
    scripts: set[bytes] = set()
    for item in get_array(value):
        text = get_str(item)
        script = _decode(ctx, text)
        if script is None:
            raise RPCError(RPC_INVALID_ADDRESS_OR_KEY, f"Invalid Bitcoin address: {text}")
        if script in scripts:
            raise RPCError(RPC_INVALID_PARAMETER, f"Invalid parameter, duplicated address: {text}")
        scripts.add(script)
    return scripts


def _solving_scripts(node: Any, index: int) -> dict[str, str]:
    """redeemScript / witnessScript of a P2SH or P2WSH output, as the wallet's provider knows them."""
    if node.kind == "sh":
        out = {"redeemScript": node.sub.script(index).hex()}
        if node.sub.kind == "wsh":
            out["witnessScript"] = node.sub.sub.script(index).hex()
        return out
    if node.kind == "wsh":
        return {"witnessScript": node.sub.script(index).hex()}
    return {}


@functools.lru_cache(maxsize=1 << 18)
def _address(script: bytes, chain: str) -> str | None:
    return encode_destination(script, chain)


@functools.lru_cache(maxsize=1 << 18)
def _inferred(desc_text: str, index: int, chain: str) -> str:
    """A derived script's descriptor (a BIP32 derivation and a checksum: worth remembering)."""
    return str(_parsed(desc_text, chain).inferred_string(index))


@functools.lru_cache(maxsize=256)
def _parsed(desc_text: str, chain: str) -> Any:
    return parse_descriptor(desc_text, chain)


def _unspent_entry(wallet: Any, coin: coins.WalletCoin) -> dict[str, Any]:
    script = coin.txout.script_pubkey
    entry: dict[str, Any] = {"txid": hash_to_hex(coin.outpoint.hash), "vout": coin.outpoint.n}
    address = _address(script, wallet.chain_name)
    owners = wallet.scripts.get(script, [])
    info, index = (wallet.descs[owners[0][0]], owners[0][1]) if owners else (None, 0)
    if address is not None:
        entry["address"] = address
        label = wallet.label_of(address)
        if label is not None:
            entry["label"] = label
        if info is not None:
            entry.update(_solving_scripts(info.desc.node, index))
    entry["scriptPubKey"] = script.hex()
    entry["amount"] = Amount(coin.txout.value)
    entry["confirmations"] = coin.depth
    entry["spendable"] = True
    entry["solvable"] = coin.solvable
    if coin.solvable and info is not None:
        entry["desc"] = _inferred(info.text, index, wallet.chain_name)
    entry["parent_descs"] = wallet.parent_descs(script)
    entry["safe"] = coin.safe
    return entry


def listunspent(ctx: Any, args: list[Any]) -> Any:
    coin_filter = _coin_filter(args)
    wanted = _address_filter(ctx, args[2])
    with _Locked(ctx) as wallet:
        view = _view(_manager(ctx), wallet)
        found = coins.available_coins(view, coin_filter, wallet.locked_coins)
        mempool = None
        out = []
        for coin in found:
            if wanted and coin.txout.script_pubkey not in wanted:  # an empty list filters nothing
                continue
            entry = _unspent_entry(wallet, coin)
            if coin.depth == 0:
                mempool = mempool if mempool is not None else _manager(ctx).chain.mempool()
                _ancestry(mempool, coin.outpoint.hash, entry)
            out.append(entry)
        return out


def _ancestry(pool: Any, txid: bytes, entry: dict[str, Any]) -> None:
    """ancestorcount/size/fees of an unconfirmed coin's transaction, placed after confirmations."""
    if txid not in pool:
        return
    family = [txid] + list(pool.ancestors(txid))
    entries = [pool.get(t) for t in family]
    tail = {k: entry.pop(k) for k in list(entry)[list(entry).index("confirmations") + 1:]}
    entry["ancestorcount"] = len(entries)
    entry["ancestorsize"] = sum(e.vsize for e in entries)
    entry["ancestorfees"] = sum(e.fee for e in entries)
    entry.update(tail)


def lockunspent(ctx: Any, args: list[Any]) -> Any:
    unlock = get_bool(args[0])
    persistent = False if args[2] is None else get_bool(args[2])
    with _Locked(ctx) as wallet:
        locks = wallet.locked_coins
        if args[1] is None:
            if unlock:
                locks.unlock_all()
            return True
        view = _view(_manager(ctx), wallet)
        outpoints = []
        for item in get_array(args[1]):
            obj = get_obj(item)
            check_object(obj, {"txid": "string", "vout": "number"}, allow_null=False, strict=True)
            txid = parse_hash_v(obj["txid"], "txid")
            n = get_int(obj["vout"])
            if n < 0:
                raise RPCError(RPC_INVALID_PARAMETER, "Invalid parameter, vout cannot be negative")
            outpoint = OutPoint(txid, n)
            row = wallet.store.get_tx(txid)
            if row is None:
                raise RPCError(RPC_INVALID_PARAMETER, "Invalid parameter, unknown transaction")
            if n >= len(row.tx.vout):
                raise RPCError(RPC_INVALID_PARAMETER, "Invalid parameter, vout index out of bounds")
            if is_spent(view, txid, n):
                raise RPCError(RPC_INVALID_PARAMETER, "Invalid parameter, expected unspent output")
            locked = outpoint in locks
            if unlock and not locked:
                raise RPCError(RPC_INVALID_PARAMETER, "Invalid parameter, expected locked output")
            if not unlock and locked and not persistent:
                raise RPCError(RPC_INVALID_PARAMETER, "Invalid parameter, output already locked")
            outpoints.append(outpoint)
        for outpoint in outpoints:
            if unlock:
                locks.unlock(outpoint)
            else:
                locks.lock(outpoint, persistent)
        return True


def listlockunspent(ctx: Any, args: list[Any]) -> Any:
    with _Locked(ctx) as wallet:
        return [{"txid": hash_to_hex(o.hash), "vout": o.n} for o in wallet.locked_coins.listed()]


# -- balances and receipts ---------------------------------------------------------------------


def _avoid_reuse(value: Any) -> None:
    # Quill's wallets never have the avoid_reuse flag (Core's GetAvoidReuseFlag).
    if value is not None and get_bool(value):
        raise RPCError(RPC_WALLET_ERROR, 'wallet does not have the "avoid reuse" feature enabled')


def getbalance(ctx: Any, args: list[Any]) -> Any:
    dummy, minconf, _, avoid_reuse = args
    if dummy is not None and get_str(dummy) != "*":
        raise RPCError(RPC_METHOD_DEPRECATED, 'dummy first argument must be excluded or set to "*".')
    min_depth = 0 if minconf is None else get_int(minconf)
    _avoid_reuse(avoid_reuse)
    with _Locked(ctx) as wallet:
        return Amount(get_balance(_view(_manager(ctx), wallet), min_depth).available)


def _received(ctx: Any, args: list[Any], by_label: bool) -> Any:
    with _Locked(ctx) as wallet:
        if by_label:
            label = label_from_value(args[0])
            addresses = [a for a, entry_label, _ in _address_book(wallet) if entry_label == label]
            if not addresses:
                raise RPCError(RPC_WALLET_ERROR, "Label not found in wallet")
            scripts = [decode_destination(a, wallet.chain_name) for a in addresses]
        else:
            script = _decode(ctx, get_str(args[0]))
            if script is None:
                raise RPCError(RPC_INVALID_ADDRESS_OR_KEY, "Invalid Bitcoin address")
            scripts = [script]
        mine = {s for s in scripts if wallet.is_mine(s)}
        if not mine:
            raise RPCError(RPC_WALLET_ERROR, "Address not found in wallet")
        min_depth = 1 if args[1] is None else get_int(args[1])
        include_immature = False if args[2] is None else get_bool(args[2])
        view = _view(_manager(ctx), wallet)
        return Amount(coins.received_by(view, mine, min_depth, include_immature))


def getreceivedbyaddress(ctx: Any, args: list[Any]) -> Any:
    return _received(ctx, args, by_label=False)


def getreceivedbylabel(ctx: Any, args: list[Any]) -> Any:
    return _received(ctx, args, by_label=True)


def _list_received(ctx: Any, minconf: Any, include_empty_v: Any, address_filter: Any, include_immature_v: Any,
                   by_label: bool) -> Any:
    min_depth = 1 if minconf is None else get_int(minconf)
    include_empty = False if include_empty_v is None else get_bool(include_empty_v)
    only: bytes | None = None
    if not by_label and address_filter is not None and get_str(address_filter):
        only = _decode(ctx, address_filter)
        if only is None:
            raise RPCError(RPC_WALLET_ERROR, "address_filter parameter was invalid")
    include_immature = False if include_immature_v is None else get_bool(include_immature_v)
    with _Locked(ctx) as wallet:
        view = _view(_manager(ctx), wallet)
        tallies = coins.tally(view, min_depth, include_immature, only)
        book = _address_book(wallet)
        if only is not None:
            address = encode_destination(only, wallet.chain_name)
            book = [e for e in book if e[0] == address]
        rows: list[dict[str, Any]] = []
        by_name: dict[str, tuple[int, int | None]] = {}
        for address, label, _ in book:
            item = tallies.get(decode_destination(address, wallet.chain_name))
            if item is None and not include_empty:
                continue
            amount = 0 if item is None else item.amount
            conf = None if item is None else item.confirmations
            if by_label:
                total, fewest = by_name.get(label, (0, None))
                by_name[label] = (total + amount, conf if fewest is None else fewest if conf is None
                                  else min(fewest, conf))
            else:
                rows.append({"address": address, "amount": Amount(amount), "confirmations": conf or 0,
                             "label": label, "txids": [] if item is None else [hash_to_hex(t) for t in item.txids]})
        if by_label:
            return [{"amount": Amount(total), "confirmations": fewest or 0, "label": label}
                    for label, (total, fewest) in sorted(by_name.items(), key=lambda kv: kv[0].encode())]
        return rows


def listreceivedbyaddress(ctx: Any, args: list[Any]) -> Any:
    minconf, include_empty, _, address_filter, include_immature = args
    return _list_received(ctx, minconf, include_empty, address_filter, include_immature, by_label=False)


def listreceivedbylabel(ctx: Any, args: list[Any]) -> Any:
    minconf, include_empty, _, include_immature = args
    return _list_received(ctx, minconf, include_empty, None, include_immature, by_label=True)


def keypoolrefill(ctx: Any, args: list[Any]) -> Any:
    size = 0 if args[0] is None else get_int(args[0])
    if size < 0:
        raise RPCError(RPC_INVALID_PARAMETER, "Invalid parameter, expected valid size.")
    with _Locked(ctx) as wallet:
        wallet.top_up(size)
        if wallet.keypool_size() < size:
            raise RPCError(RPC_WALLET_ERROR, "Error refreshing keypool.")
    return None


def _m(name: str, handler: Any, params: list[Param], category: str = WALLET, wallet: bool = True) -> Method:
    return Method(name, category, handler, params, wallet=wallet)


METHODS = [
    _m("getwalletinfo", getwalletinfo, []),
    _m("listwalletdir", listwalletdir, [], wallet=False),
    _m("listlabels", listlabels, [Param("purpose", STR)]),
    _m("getaddressesbylabel", getaddressesbylabel, [Param("label", STR, required=True)]),
    _m("listunspent", listunspent, [Param("minconf", NUM), Param("maxconf", NUM), Param("addresses", ARR),
                                    Param("include_unsafe", BOOL), Param("query_options", OBJ)]),
    _m("lockunspent", lockunspent, [Param("unlock", BOOL, required=True), Param("transactions", ARR),
                                    Param("persistent", BOOL)]),
    _m("listlockunspent", listlockunspent, []),
    _m("keypoolrefill", keypoolrefill, [Param("newsize", NUM)]),
    _m("getbalance", getbalance, [Param("dummy", STR), Param("minconf", NUM), Param("include_watchonly", BOOL),
                                  Param("avoid_reuse", BOOL)]),
    _m("getreceivedbyaddress", getreceivedbyaddress, [Param("address", STR, required=True), Param("minconf", NUM),
                                                      Param("include_immature_coinbase", BOOL)]),
    _m("getreceivedbylabel", getreceivedbylabel, [Param("label", STR, required=True), Param("minconf", NUM),
                                                  Param("include_immature_coinbase", BOOL)]),
    _m("listreceivedbyaddress", listreceivedbyaddress,
       [Param("minconf", NUM), Param("include_empty", BOOL), Param("include_watchonly", BOOL),
        Param("address_filter", STR), Param("include_immature_coinbase", BOOL)]),
    _m("listreceivedbylabel", listreceivedbylabel,
       [Param("minconf", NUM), Param("include_empty", BOOL), Param("include_watchonly", BOOL),
        Param("include_immature_coinbase", BOOL)]),
]
