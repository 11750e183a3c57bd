"""Wallet RPCs of a watch-only descriptor wallet, with Core's parameters, errors
and result layouts (core-wallet.md; Core's wallet/rpc/*.cpp). Descriptor
utilities (getdescriptorinfo, deriveaddresses) are here too because they share
the descriptor parser.
"""

import time

from quill.amount import Amount
from quill.extsigner.signer import get_external_signer
from quill.handlers.errors import to_rpc_error
from quill.handlers.signer_command import signer_source
from quill.rpc import univalue
from quill.rpc.args import INT64, get_bool, get_int, get_str, label_from_value, parse_descriptor_range, parse_hash_v
from quill.rpc.errors import (
    RPC_INVALID_ADDRESS_OR_KEY,
    RPC_INVALID_PARAMETER,
    RPC_MISC_ERROR,
    RPC_TYPE_ERROR,
    RPC_WALLET_ERROR,
    RPC_WALLET_KEYPOOL_RAN_OUT,
    RPCError,
)
from quill.rpc.registry import ARR, BOOL, NUM, RANGE, STR, STR_HEX, Method, Param
from quill.tx.address import AddressError, decode_destination, encode_destination
from quill.wallet import results
from quill.wallet.address_info import address_info
from quill.wallet.balance import get_balance
from quill.wallet.descriptors import BECH32, BECH32M, LEGACY, P2SH_SEGWIT, DerivationError, DescriptorError, parse
from quill.wallet.external_signer import signer_descriptors
from quill.wallet.fallbackfee import FallbackFeeError
from quill.wallet.names import InvalidWalletName, check_wallet_name
from quill.wallet.paths import PathTooLong

OUTPUT_TYPES = (LEGACY, P2SH_SEGWIT, BECH32, BECH32M)
DEFAULT_ADDRESS_TYPE = BECH32
def _manager(ctx):
    manager = getattr(ctx.node, "wallets", None)
    if manager is None:
        raise RPCError(RPC_MISC_ERROR, "Wallet support is not available (no chain service)")
    return manager


class _Locked:
    """The wallet named by the request, with the chain's and the wallet's locks held."""

    def __init__(self, ctx):
        self.manager = _manager(ctx)
        self.ctx = ctx

    def __enter__(self):
        self.chain_lock = self.manager.chain_lock()
        self.chain_lock.__enter__()
        try:
            self.wallet = self.manager.resolve(self.ctx.wallet_name)
            self.wallet.lock.acquire()
        except BaseException:
            self.chain_lock.__exit__(None, None, None)
            raise
        return self.wallet

    def __exit__(self, *exc):
        self.wallet.lock.release()
        self.chain_lock.__exit__(*exc)


def _view(manager, wallet):
    return results.View(wallet, manager.chain)


def _tx_view(ctx, wallet):
    """The view of the calls that list wallet transactions: bip125-replaceable only under
    -deprecatedrpc=bip125, as in Core 31."""
    return results.View(wallet, _manager(ctx).chain, bip125="bip125" in ctx.node.deprecated_rpc)


# -- wallet lifecycle ------------------------------------------------------------------


def _checked_name(name, allow_empty=True):
    """Core's -8 for an empty name, -4 (as its wallet file verification) for the others."""
    try:
        check_wallet_name(name, allow_empty)
    except InvalidWalletName as e:
        if e.empty:
            raise RPCError(RPC_INVALID_PARAMETER, e.message) from None
        raise RPCError(RPC_WALLET_ERROR, f"Wallet file verification failed. {e.message}") from None
    return name


def createwallet(ctx, args):
    name, disable_private_keys, blank, passphrase, avoid_reuse, descriptors, load_on_startup, external_signer = args
    manager = _manager(ctx)
    _checked_name(name, allow_empty=False)
    if descriptors is not None and not descriptors:
        raise RPCError(RPC_WALLET_ERROR, 'descriptors argument must be set to "true"; it is no longer possible '
                                         'to create a legacy wallet.')
    if passphrase:
        raise RPCError(RPC_WALLET_ERROR, "Passphrase provided but private keys are disabled. A passphrase is only "
                                         "used to encrypt private keys, so cannot be used for wallets with private "
                                         "keys disabled.")
    if external_signer and not disable_private_keys:
        raise RPCError(RPC_WALLET_ERROR, "Private keys must be disabled when using an external signer")
    if not disable_private_keys:
        raise RPCError(RPC_WALLET_ERROR, "Quill wallets are watch-only: private keys stay on the signing device, "
                                         "so disable_private_keys must be true")
    descriptors_from_signer = None
    if external_signer:
        # Core's SetupDescriptorScriptPubKeyMans, asked before any file is made: the signer's
        # account 0 descriptors (nothing is left behind when the signer fails)
        manager.check_absent(name)
        signer = get_external_signer(signer_source(ctx), ctx.node.chain_name)
        descriptors_from_signer = signer_descriptors(signer.get_descriptors(0), ctx.node.chain_name)
    warnings = _fallback_fee_warnings(ctx, "Wallet creation failed. ")
    try:
        wallet = manager.create(name, bool(blank), load_on_startup, descriptors_from_signer)
    except PathTooLong as e:   # Core lets this filesystem_error escape the call: RPC_MISC_ERROR
        raise RPCError(RPC_MISC_ERROR, e.message) from None
    if passphrase is not None:   # "": Core creates the wallet unencrypted and says so
        warnings.insert(0, "Empty string given as passphrase, wallet will not be encrypted.")
    return {"name": wallet.name, "warnings": warnings} if warnings else {"name": wallet.name}


def _fallback_fee_warnings(ctx, failure):
    """Core reads -fallbackfee as it makes or loads a wallet: an amount that is not one fails
    the call (before anything is made here), a high one is a warning."""
    try:
        return ctx.node.fallback_fee.warnings()
    except FallbackFeeError as e:
        raise RPCError(RPC_WALLET_ERROR, failure + str(e)) from None


def loadwallet(ctx, args):
    name, load_on_startup = args
    _checked_name(name)
    warnings = _fallback_fee_warnings(ctx, "Wallet loading failed. ")
    wallet = _manager(ctx).load(name, load_on_startup)
    return {"name": wallet.name, "warnings": warnings} if warnings else {"name": wallet.name}


def unloadwallet(ctx, args):
    name, load_on_startup = args
    manager = _manager(ctx)
    if ctx.wallet_name is not None:
        if name is not None and name != ctx.wallet_name:
            raise RPCError(RPC_INVALID_PARAMETER,
                           "The RPC endpoint wallet and the wallet name parameter specify different wallets")
        name = ctx.wallet_name
    elif name is None:
        raise RPCError(RPC_INVALID_PARAMETER, "Either the RPC endpoint wallet or the wallet name parameter must "
                                              "be provided")
    manager.unload(name, load_on_startup)
    return {}


def listwallets(ctx, args):
    manager = _manager(ctx)
    with manager.lock:
        return list(manager.wallets)


# -- descriptors --------------------------------------------------------------------------


def _parse(ctx, text, require_checksum):
    try:
        return parse(text, ctx.node.chain_name, require_checksum)
    except DescriptorError as e:
        raise RPCError(RPC_INVALID_ADDRESS_OR_KEY, str(e)) from None


def getdescriptorinfo(ctx, args):
    text = args[0]
    desc = _parse(ctx, text, False)
    body = text.split("#")[0]
    from quill.tx.descriptor import descriptor_checksum
    return {"descriptor": desc.to_string(), "checksum": descriptor_checksum(body),
            "isrange": desc.is_range(), "issolvable": desc.is_solvable(),
            "hasprivatekeys": desc.has_private_keys()}


def deriveaddresses(ctx, args):
    text, range_value = args
    begin = end = 0
    if range_value is not None:
        begin, end = parse_descriptor_range(range_value)
    desc = _parse(ctx, text, True)
    if not desc.is_range() and args.given > 1:
        raise RPCError(RPC_INVALID_PARAMETER, "Range should not be specified for an un-ranged descriptor")
    if desc.is_range() and args.given == 1:
        raise RPCError(RPC_INVALID_PARAMETER, "Range must be specified for a ranged descriptor")
    out = []
    for i in range(begin, end + 1):
        try:
            script = desc.script(i)
        except DerivationError:
            raise RPCError(RPC_INVALID_ADDRESS_OR_KEY, "Cannot derive script without private keys") from None
        address = encode_destination(script, ctx.node.chain_name)
        if address is None:
            raise RPCError(RPC_INVALID_ADDRESS_OR_KEY, "Descriptor does not have a corresponding address")
        out.append(address)
    return out


def _import_one(manager, wallet, data, timestamp, chain_name):
    """Core's ProcessDescriptorImport: a result object; nothing is stored on error."""
    warnings = []
    result = {}
    try:
        if "desc" not in data:
            raise RPCError(RPC_INVALID_PARAMETER, "Descriptor not found.")
        text = get_str(data["desc"])
        active = get_bool(data["active"]) if "active" in data else False
        label = label_from_value(data.get("label"))
        try:
            desc = parse(text, chain_name, require_checksum=True)
        except DescriptorError as e:
            raise RPCError(RPC_INVALID_ADDRESS_OR_KEY, str(e)) from None
        internal = get_bool(data["internal"]) if "internal" in data else False
        range_start, range_end, next_index = 0, 1, 0
        if not desc.is_range() and "range" in data:
            raise RPCError(RPC_INVALID_PARAMETER, "Range should not be specified for an un-ranged descriptor")
        if desc.is_range():
            if "range" in data:
                range_start, high = parse_descriptor_range(data["range"])
                range_end = high + 1
            else:
                warnings.append("Range not given, using default keypool range")
                range_start, range_end = 0, wallet.keypool
            next_index = range_start
            if "next_index" in data:
                next_index = get_int(data["next_index"], INT64)
                if next_index < range_start or next_index >= range_end:
                    raise RPCError(RPC_INVALID_PARAMETER, "next_index is out of range")
        if active and not desc.is_range():
            raise RPCError(RPC_INVALID_PARAMETER, "Active descriptors must be ranged")
        if desc.is_range() and "label" in data:
            raise RPCError(RPC_INVALID_PARAMETER, "Ranged descriptors should not have a label")
        if internal and "label" in data:
            raise RPCError(RPC_INVALID_PARAMETER, "Internal addresses should not have a label")
        if desc.has_private_keys():
            raise RPCError(RPC_WALLET_ERROR, "Cannot import private keys to a wallet with private keys disabled")
        try:
            desc.script(range_start)
        except DerivationError:
            raise RPCError(RPC_WALLET_ERROR, "Cannot expand descriptor. Probably because of hardened "
                                             "derivations without private keys provided") from None
        if desc.is_range():
            range_end = max(range_end, next_index + wallet.keypool)
        with wallet.store.batch():
            wallet.add_descriptor(desc, timestamp, range_start, range_end, next_index, active, internal,
                                  label)
            manager.note_rescan(wallet, timestamp)
        if active and desc.output_type() is None:
            warnings.append("Unknown output type, cannot set descriptor to active.")
        result["success"] = True
    except Exception as e:
        # Core reports each request's failure in its result and goes on with the next.
        mapped = to_rpc_error(e)
        if mapped is None:
            raise
        result["success"] = False
        result["error"] = mapped.to_json()
    if warnings:
        result["warnings"] = warnings
    return result


def importdescriptors(ctx, args):
    """Core's importdescriptors: imports under the locks, then the rescan without them (see rescanblockchain)."""
    requests = args[0]
    reserved = _manager(ctx).resolve(ctx.wallet_name)
    if not reserved.reserve_rescan():
        raise RPCError(RPC_WALLET_ERROR, "Wallet is currently rescanning. Abort existing rescan or wait.")
    try:
        return _import_descriptors(ctx, requests)
    finally:
        reserved.release_rescan()


def _import_descriptors(ctx, requests):
    with _Locked(ctx) as wallet:
        manager = _manager(ctx)
        now = int(time.time())
        response, lowest = [], None
        for data in requests:
            if not isinstance(data, dict):
                raise RPCError(RPC_TYPE_ERROR, f"JSON value of type {univalue.type_name(data)} is not of "
                                               "expected type object")
            if "timestamp" not in data:
                raise RPCError(RPC_TYPE_ERROR, "Missing required timestamp field for key")
            ts = data["timestamp"]
            if isinstance(ts, univalue.Number) or (isinstance(ts, int) and not isinstance(ts, bool)):
                timestamp = get_int(ts, INT64)
            elif ts == "now":
                timestamp = now
            else:
                raise RPCError(RPC_TYPE_ERROR, 'Expected number or "now" timestamp value for key. got type '
                                               f"{univalue.type_name(ts)}")
            timestamp = max(timestamp, 1)
            result = _import_one(manager, wallet, data, timestamp, ctx.node.chain_name)
            response.append(result)
            if result["success"]:
                lowest = timestamp if lowest is None else min(lowest, timestamp)
    if lowest is not None and manager.chain is not None:
        manager.rescan_from_time(wallet, lowest, reserved=True)
    return response


def listdescriptors(ctx, args):
    private = args[0]
    if private:
        raise RPCError(RPC_WALLET_ERROR, "Can't get private descriptor string for watch-only wallets")
    with _Locked(ctx) as wallet:
        out = []
        for info in sorted(wallet.descs.values(), key=lambda i: i.text):
            e = {"desc": info.text, "timestamp": info.timestamp, "active": info.active}
            if info.active:
                e["internal"] = info.internal
            if info.desc.is_range():
                e["range"] = [info.range_start, info.range_end - 1]
                e["next"] = info.next_index
                e["next_index"] = info.next_index
            out.append(e)
        return {"wallet_name": wallet.name, "descriptors": out}


# -- addresses -------------------------------------------------------------------------------


def _output_type(value):
    if value is None:
        return DEFAULT_ADDRESS_TYPE
    if value not in OUTPUT_TYPES:
        raise RPCError(RPC_INVALID_ADDRESS_OR_KEY, f"Unknown address type '{value}'")
    return value


def _new_address(wallet, output_type, internal):
    script = wallet.new_destination(output_type, internal)
    if script is None:
        raise RPCError(RPC_WALLET_KEYPOOL_RAN_OUT, f"Error: No {output_type} addresses available.")
    return encode_destination(script, wallet.chain_name)


def getnewaddress(ctx, args):
    label_value, address_type = args
    with _Locked(ctx) as wallet:
        if not wallet.can_get_addresses(False):
            raise RPCError(RPC_WALLET_ERROR, "Error: This wallet has no available keys")
        label = label_from_value(label_value)
        output_type = _output_type(address_type)
        address = _new_address(wallet, output_type, False)
        with wallet.store.batch():
            wallet.set_label(address, label, "receive")
        return address


def getrawchangeaddress(ctx, args):
    with _Locked(ctx) as wallet:
        if not wallet.can_get_addresses(True):
            raise RPCError(RPC_WALLET_ERROR, "Error: This wallet has no available keys")
        return _new_address(wallet, _output_type(args[0]), True)


def _decode_address(ctx, text, message=None):
    try:
        return decode_destination(text, ctx.node.chain_name)
    except AddressError as e:
        raise RPCError(RPC_INVALID_ADDRESS_OR_KEY, message or str(e) or "Invalid address") from None


def setlabel(ctx, args):
    address, label_value = args
    with _Locked(ctx) as wallet:
        script = _decode_address(ctx, address, "Invalid Bitcoin address")
        label = label_from_value(label_value)
        with wallet.store.batch():
            wallet.set_label(address, label, "receive" if wallet.is_mine(script) else "send")
        return None


def getaddressinfo(ctx, args):
    with _Locked(ctx) as wallet:
        return address_info(wallet, _decode_address(ctx, args[0]))


# -- transactions ----------------------------------------------------------------------------


def gettransaction(ctx, args):
    txid_text, include_watchonly, verbose = args
    with _Locked(ctx) as wallet:
        txid = parse_hash_v(txid_text, "txid")
        row = wallet.store.get_tx(txid)
        if row is None:
            raise RPCError(RPC_INVALID_ADDRESS_OR_KEY, "Invalid or non-wallet transaction id")
        return results.gettransaction(_tx_view(ctx, wallet), row, bool(verbose))


def listsinceblock(ctx, args):
    blockhash, target, include_watchonly, include_removed, include_change, label_value = args
    with _Locked(ctx) as wallet:
        view = _tx_view(ctx, wallet)
        since = results.since_block(view, parse_hash_v(blockhash, "blockhash")) if blockhash else None
        target_confirmations = 1
        if target is not None:
            target_confirmations = get_int(target)
            if target_confirmations < 1:
                raise RPCError(RPC_INVALID_PARAMETER, "Invalid parameter")
        include_removed = True if include_removed is None else include_removed
        label_filter = None if label_value is None else label_from_value(label_value)
        return results.listsinceblock(view, since, target_confirmations, include_removed, bool(include_change),
                                      label_filter)


def listtransactions(ctx, args):
    label_value, count_value, skip_value, include_watchonly = args
    with _Locked(ctx) as wallet:
        label = "*"
        if label_value is not None and label_value != "*":
            label = label_from_value(label_value)
            if not label:
                raise RPCError(RPC_INVALID_PARAMETER, 'Label argument must be a valid label name or "*".')
        count = 10 if count_value is None else get_int(count_value)
        skip = 0 if skip_value is None else get_int(skip_value)
        if count < 0:
            raise RPCError(RPC_INVALID_PARAMETER, "Negative count")
        if skip < 0:
            raise RPCError(RPC_INVALID_PARAMETER, "Negative from")
        return results.listtransactions(_tx_view(ctx, wallet), label, count, skip)


def abandontransaction(ctx, args):
    with _Locked(ctx) as wallet:
        txid = parse_hash_v(args[0], "txid")
        outcome = wallet.abandon(txid)
        if outcome == "unknown":
            raise RPCError(RPC_INVALID_ADDRESS_OR_KEY, "Invalid or non-wallet transaction id")
        if outcome == "not eligible":
            raise RPCError(RPC_INVALID_ADDRESS_OR_KEY, "Transaction not eligible for abandonment")
        return None


def getbalances(ctx, args):
    with _Locked(ctx) as wallet:
        view = _view(_manager(ctx), wallet)
        bal = get_balance(view)
        return {"mine": {"trusted": Amount(bal.trusted), "untrusted_pending": Amount(bal.untrusted_pending),
                         "immature": Amount(bal.immature), "nonmempool": Amount(bal.nonmempool)},
                "lastprocessedblock": view.lastprocessedblock()}


def rescanblockchain(ctx, args):
    """Core's rescanblockchain: the wallet's rescan reservation first, the heights checked under the
    locks, the rescan itself without them (getwalletinfo shows its progress, abortrescan stops it)."""
    start_value, stop_value = args
    wallet = _manager(ctx).resolve(ctx.wallet_name)
    if not wallet.reserve_rescan():
        raise RPCError(RPC_WALLET_ERROR, "Wallet is currently rescanning. Abort existing rescan or wait.")
    try:
        with _Locked(ctx) as wallet:
            manager = _manager(ctx)
            tip = manager.chain.tip()[0]
            start = 0 if start_value is None else get_int(start_value)
            if start < 0 or start > tip:
                raise RPCError(RPC_INVALID_PARAMETER, "Invalid start_height")
            stop = tip
            if stop_value is not None:
                stop = get_int(stop_value)
                if stop < 0 or stop > tip:
                    raise RPCError(RPC_INVALID_PARAMETER, "Invalid stop_height")
                if stop < start:
                    raise RPCError(RPC_INVALID_PARAMETER, "stop_height must be greater than start_height")
        manager.rescan(wallet, start, stop, reserved=True)
    finally:
        wallet.release_rescan()
    return {"start_height": start, "stop_height": stop}


def abortrescan(ctx, args):
    """Core's abortrescan: no chain or wallet lock, since the rescan it stops holds them."""
    return _manager(ctx).resolve(ctx.wallet_name).request_abort()


# -- method table -------------------------------------------------------------------------------

_W = "wallet"


def _m(name, handler, params, category=_W, wallet=True):
    return Method(name, category, handler, params=params, wallet=wallet)


METHODS = [
    _m("createwallet", createwallet, [
        Param("wallet_name", STR, required=True),
        Param("disable_private_keys", BOOL),
        Param("blank", BOOL),
        Param("passphrase", STR),
        Param("avoid_reuse", BOOL),
        Param("descriptors", BOOL),
        Param("load_on_startup", BOOL),
        Param("external_signer", BOOL),
    ], wallet=False),
    _m("loadwallet", loadwallet, [Param("filename", STR, required=True), Param("load_on_startup", BOOL)], wallet=False),
    _m("unloadwallet", unloadwallet, [Param("wallet_name", STR), Param("load_on_startup", BOOL)], wallet=False),
    _m("listwallets", listwallets, [], wallet=False),
    _m("importdescriptors", importdescriptors, [Param("requests", ARR, required=True)]),
    _m("listdescriptors", listdescriptors, [Param("private", BOOL)]),
    _m("getdescriptorinfo", getdescriptorinfo, [
        Param("descriptor", STR, required=True),
    ], category="util", wallet=False),
    _m("deriveaddresses", deriveaddresses, [
        Param("descriptor", STR, required=True),
        Param("range", RANGE),
    ], category="util", wallet=False),
    _m("getnewaddress", getnewaddress, [Param("label", STR), Param("address_type", STR)]),
    _m("getrawchangeaddress", getrawchangeaddress, [Param("address_type", STR)]),
    _m("setlabel", setlabel, [Param("address", STR, required=True), Param("label", STR, required=True)]),
    _m("getaddressinfo", getaddressinfo, [Param("address", STR, required=True)]),
    _m("gettransaction", gettransaction, [
        Param("txid", STR, required=True),
        Param("include_watchonly", BOOL),
        Param("verbose", BOOL),
    ]),
    _m("listsinceblock", listsinceblock, [
        Param("blockhash", STR),
        Param("target_confirmations", NUM),
        Param("include_watchonly", BOOL),
        Param("include_removed", BOOL),
        Param("include_change", BOOL),
        Param("label", STR),
    ]),
    _m("listtransactions", listtransactions, [
        Param("label", STR),
        Param("count", NUM),
        Param("skip", NUM),
        Param("include_watchonly", BOOL),
    ]),
    _m("abandontransaction", abandontransaction, [Param("txid", STR_HEX, required=True)]),
    _m("getbalances", getbalances, []),
    _m("rescanblockchain", rescanblockchain, [Param("start_height", NUM), Param("stop_height", NUM)]),
    _m("abortrescan", abortrescan, []),
]
