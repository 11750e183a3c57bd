"""Blockchain RPCs on the chain service (Core's rpc/blockchain.cpp, rpc/mempool.cpp): getblockchaininfo,
getblockcount, getbestblockhash, getblockhash, getblockheader, getblock, invalidateblock,
reconsiderblock, getrawmempool, getmempoolentry. Shapes and key order as Core master (v31 era).

Also the chain access helpers the other chain handler modules share.
"""
import re
import threading
import weakref
from collections import OrderedDict

from quill.amount import Amount
from quill.chain import pow as chain_pow
from quill.chain.block import Block
from quill.chain.block_scan import BlockScan
from quill.rpc import univalue
from quill.rpc.args import get_int, parse_hash_v, parse_verbosity
from quill.rpc.errors import RPC_INVALID_ADDRESS_OR_KEY, RPC_INVALID_PARAMETER, RPC_MISC_ERROR, RPCError
from quill.rpc.registry import ANY, BOOL, HIDDEN, NUM, STR_HEX, Method, Param
from quill.rpc.univalue import Number
from quill.tx.decode import script_to_univ, tx_to_univ
from quill.tx.hashes import hash_to_hex
from quill.tx.serialize import BufferReader
from quill.tx.transaction import Transaction

# -- shared argument helpers ------------------------------------------------------------


def chain_of(ctx):
    """The node's ChainService; a clear error when this node runs without one."""
    chain = getattr(ctx.node, "chain", None)
    if chain is None:
        raise RPCError(RPC_MISC_ERROR, f"No chain on {ctx.node.chain_name}: the built-in chain is regtest only; "
                                       "use -chainsource to follow a node")
    return chain


def number(x: float) -> Number:
    """A double as UniValue writes it (16 significant digits)."""
    return Number("%.16g" % x)


# -- header and block JSON ---------------------------------------------------------------


def header_to_json(info) -> dict:
    """Core's blockheaderToJSON."""
    target = chain_pow.compact_to_target(info.bits)[0]
    out = {
        "hash": hash_to_hex(info.hash),
        "confirmations": info.confirmations,
        "height": info.height,
        "version": info.version,
        "versionHex": "%08x" % info.version,
        "merkleroot": hash_to_hex(info.merkle_root),
        "time": info.time,
        "mediantime": info.mediantime,
        "nonce": info.nonce,
        "bits": "%08x" % info.bits,
        "target": "%064x" % target,
        "difficulty": number(chain_pow.difficulty(info.bits)),
        "chainwork": "%064x" % info.chain_work,
        "nTx": info.n_tx,
    }
    if info.prev_hash is not None:
        out["previousblockhash"] = hash_to_hex(info.prev_hash)
    if info.next_hash is not None:
        out["nextblockhash"] = hash_to_hex(info.next_hash)
    return out


def tx_with_undo_to_json(tx, chain_name, spent, include_prevout: bool) -> dict:
    """TxToUniv with undo data (SHOW_DETAILS / SHOW_DETAILS_AND_PREVOUT): `fee`, optionally vin `prevout`."""
    entry = tx_to_univ(tx, chain_name)
    if spent is not None:
        if include_prevout:
            for item, coin in zip(entry["vin"], spent, strict=True):
                sequence = item.pop("sequence")
                item["prevout"] = {"generated": coin.coinbase, "height": coin.height,
                                   "value": Amount(coin.value),
                                   "scriptPubKey": script_to_univ(coin.script_pubkey, chain_name)}
                item["sequence"] = sequence
        entry["fee"] = Amount(sum(c.value for c in spent) - sum(o.value for o in tx.vout))
    entry["hex"] = tx.hex()
    return entry


def coinbase_tx_json(coinbase) -> dict:
    """Core 31's `coinbase_tx` of getblock: the coinbase's version, locktime and only input."""
    txin = coinbase.vin[0]
    out = {"version": coinbase.version, "locktime": coinbase.locktime, "sequence": txin.sequence,
           "coinbase": txin.script_sig.hex()}
    if txin.witness:
        out["witness"] = txin.witness[0].hex()
    return out


def block_body_json(raw: bytes, layout: BlockScan, undo, verbosity: int, chain_name) -> tuple[int, str]:
    """The transaction count and the part of Core's blockToJSON after the header's fields
    (`,"strippedsize":...,"tx":[...]}`) for verbosity 1 (txids), 2 (decoded, `fee` where `undo`,
    the coins the block spent, is known) and 3 (with prevouts). `layout` holds the block's txids and
    sizes: verbosity 1 builds no transaction but the coinbase."""
    coinbase = Transaction.read_from(BufferReader(raw, layout.first_tx), allow_witness=True)
    out = {"strippedsize": layout.stripped_size, "size": layout.size, "weight": layout.weight,
           "coinbase_tx": coinbase_tx_json(coinbase)}
    if verbosity == 1:
        out["tx"] = [txid[::-1].hex() for txid in layout.txids]
    else:
        txs = []
        k = 0
        for i, tx in enumerate(Block.from_bytes(raw).txs):
            spent = None
            if i and undo is not None:
                spent = undo[k:k + len(tx.vin)]
                k += len(tx.vin)
            txs.append(tx_with_undo_to_json(tx, chain_name, spent, verbosity >= 3))
        out["tx"] = txs
    return len(layout.txids), "," + univalue.dumps(out)[1:]


class RenderedBlocks:
    """The bodies block_body_json rendered, most recently used kept, bounded by their size: a
    block is rendered once however many clients ask for it (an Electrum server, a wallet, an
    explorer each reading the new block). A body never changes for a given block, verbosity and
    presence of undo data; the header's fields (confirmations, nextblockhash) are written per call."""

    ENTRY_OVERHEAD = 256         # a key, a tuple, a dict slot: counted with each text

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self.used = 0
        self._entries: OrderedDict[tuple, tuple[int, str]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: tuple) -> tuple[int, str] | None:
        with self._lock:
            found = self._entries.get(key)
            if found is not None:
                self._entries.move_to_end(key)
            return found

    def put(self, key: tuple, body: tuple[int, str]) -> None:
        cost = len(body[1]) + self.ENTRY_OVERHEAD
        if cost > self.max_bytes:
            return
        with self._lock:
            old = self._entries.pop(key, None)
            if old is not None:
                self.used -= len(old[1]) + self.ENTRY_OVERHEAD
            self._entries[key] = body
            self.used += cost
            while self.used > self.max_bytes:
                _, dropped = self._entries.popitem(last=False)
                self.used -= len(dropped[1]) + self.ENTRY_OVERHEAD


RENDERED_BLOCKS_BYTES = 32 << 20
_rendered: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()   # ChainService -> RenderedBlocks
_rendered_lock = threading.Lock()


def rendered_blocks(chain) -> RenderedBlocks:
    """The chain's cache of rendered block bodies (one per ChainService: tests run several)."""
    with _rendered_lock:
        cache = _rendered.get(chain)
        if cache is None:
            cache = _rendered[chain] = RenderedBlocks(RENDERED_BLOCKS_BYTES)
        return cache


# -- handlers ------------------------------------------------------------------------------


def getblockcount(ctx, args):
    return chain_of(ctx).tip()[0]


def getbestblockhash(ctx, args):
    return hash_to_hex(chain_of(ctx).tip()[1])


def getblockhash(ctx, args):
    height = get_int(args[0])
    block_hash = chain_of(ctx).block_hash(height)
    if block_hash is None:
        raise RPCError(RPC_INVALID_PARAMETER, "Block height out of range")
    return hash_to_hex(block_hash)


def _known_header(chain, block_hash):
    info = chain.header_info(block_hash)
    if info is None:
        raise RPCError(RPC_INVALID_ADDRESS_OR_KEY, "Block not found")
    return info


def getblockheader(ctx, args):
    chain = chain_of(ctx)
    block_hash = parse_hash_v(args[0], "hash")
    verbose = True if args[1] is None else args[1]
    with chain.lock:
        info = _known_header(chain, block_hash)
        if not verbose:
            return chain.entry(block_hash).header.serialize().hex()
        return header_to_json(info)


def getblock(ctx, args):
    chain = chain_of(ctx)
    block_hash = parse_hash_v(args[0], "blockhash")
    verbosity = parse_verbosity(args[1], 1)
    if not chain.builtin:
        return _followed_getblock(ctx, chain, block_hash, verbosity)
    with chain.lock:
        info = _known_header(chain, block_hash)
        if verbosity <= 0:
            return _stored_block(chain, block_hash).hex()
        verbosity = min(verbosity, 3)
        key = (block_hash, verbosity, info.in_active_chain)
        cache = rendered_blocks(chain)
        body = cache.get(key)
        if body is None:
            raw = _stored_block(chain, block_hash)
            undo = chain.block_undo(block_hash) if verbosity >= 2 and info.in_active_chain else None
    if body is None:
        body = block_body_json(raw, chain.block_layout(block_hash, raw), undo, verbosity, ctx.node.chain_name)
        cache.put(key, body)
    return _with_header(info, body)


def _stored_block(chain, block_hash: bytes) -> bytes:
    raw = chain.block_raw(block_hash)
    if raw is None:
        raise RPCError(RPC_MISC_ERROR, "Block not found on disk")
    return raw


def _with_header(info, body: tuple[int, str]) -> univalue.RawJSON:
    """A rendered body behind the header's fields as they are now (confirmations, nextblockhash)."""
    head = header_to_json(info)
    head["nTx"] = body[0]   # the block's own count
    return univalue.RawJSON(univalue.dumps(head)[:-1] + body[1])


_BODY_START = ',"strippedsize":'
_NTX = re.compile(r'"nTx":(\d+)')


def _followed_getblock(ctx, chain, block_hash: bytes, verbosity: int):
    """getblock while following: the node renders the block (it keeps the undo data behind `fee`,
    which the follower does not), and its body, kept as it wrote it, follows the header's fields
    of the follower's own index (so confirmations agree with the follower's getblockcount)."""
    from quill.handlers.network import forward_raw  # here: quill.handlers.network imports this module
    with chain.lock:
        info = _known_header(chain, block_hash)
    if verbosity <= 0:
        return forward_raw(ctx, "getblock", hash_to_hex(block_hash), verbosity)
    cache = rendered_blocks(chain)
    key = (block_hash, min(verbosity, 3), info.in_active_chain)
    body = cache.get(key)
    if body is None:
        answer = forward_raw(ctx, "getblock", hash_to_hex(block_hash), verbosity)
        text = answer.text if isinstance(answer, univalue.RawJSON) else ""
        start = text.find(_BODY_START)
        count = _NTX.search(text, 0, start) if start > 0 else None
        if count is None:
            return answer     # not the shape this Core writes: handed on as it is
        body = int(count.group(1)), text[start:]
        cache.put(key, body)
    return _with_header(info, body)


def getblockchaininfo(ctx, args):
    chain = chain_of(ctx)
    with chain.lock:
        height, tip_hash = chain.tip()
        info = chain.header_info(tip_hash)
        out = {
            "chain": ctx.node.chain_name,
            "blocks": height,
            "headers": max(height, chain.best_header_height()),
            "bestblockhash": hash_to_hex(tip_hash),
            "bits": "%08x" % info.bits,
            "target": "%064x" % chain_pow.compact_to_target(info.bits)[0],
            "difficulty": number(chain_pow.difficulty(info.bits)),
            "time": info.time,
            "mediantime": info.mediantime,
            # built-in: 1 (Core's GuessVerificationProgress without checkpointed tx data); following:
            # delivered blocks over known headers
            "verificationprogress": number(chain.verification_progress()),
            "initialblockdownload": chain.is_initial_block_download(),
            "chainwork": "%064x" % info.chain_work,
            "size_on_disk": chain.size_on_disk(),
            "pruned": False,
        }
    out["warnings"] = "" if "warnings" in ctx.node.deprecated_rpc else []
    return out


def invalidateblock(ctx, args):
    chain = chain_of(ctx)
    if not chain.invalidate(parse_hash_v(args[0], "blockhash")):
        raise RPCError(RPC_INVALID_ADDRESS_OR_KEY, "Block not found")
    return None


def reconsiderblock(ctx, args):
    chain = chain_of(ctx)
    if not chain.reconsider(parse_hash_v(args[0], "blockhash")):
        raise RPCError(RPC_INVALID_ADDRESS_OR_KEY, "Block not found")
    return None


# -- mempool -------------------------------------------------------------------------------


def _signals_rbf(pool, txid) -> bool:
    """Core's IsRBFOptIn: the tx or an unconfirmed ancestor has a sequence below 0xfffffffe."""
    for t in [txid] + pool.ancestors(txid):
        if any(i.sequence < 0xFFFFFFFE for i in pool.get(t).tx.vin):
            return True
    return False


def mempool_entry_json(pool, entry, bip125=False) -> dict:
    """Core's entryToJSON; `bip125-replaceable` last and only under -deprecatedrpc=bip125 (Core 31)."""
    txid = entry.txid
    ancestors = [pool.get(t) for t in pool.ancestors(txid)]
    descendants = [pool.get(t) for t in pool.descendants(txid)]  # includes the tx itself
    out = {
        "vsize": entry.vsize,
        "weight": entry.weight,
        "time": entry.time,
        "height": entry.height,
        "descendantcount": len(descendants),
        "descendantsize": sum(e.vsize for e in descendants),
        "ancestorcount": len(ancestors) + 1,
        "ancestorsize": sum(e.vsize for e in ancestors) + entry.vsize,
        "wtxid": hash_to_hex(entry.tx.wtxid()),
        "fees": {
            "base": Amount(entry.fee),
            "modified": Amount(entry.fee),
            "ancestor": Amount(sum(e.fee for e in ancestors) + entry.fee),
            "descendant": Amount(sum(e.fee for e in descendants)),
        },
        "depends": sorted(hash_to_hex(t) for t in pool.parents(txid)),
        "spentby": sorted(hash_to_hex(t) for t in pool.children(txid)),
        "unbroadcast": entry.unbroadcast,
    }
    if bip125:
        out["bip125-replaceable"] = _signals_rbf(pool, txid)
    return out


def getrawmempool(ctx, args):
    chain = chain_of(ctx)
    verbose = bool(args[0])
    with_sequence = bool(args[1])
    if verbose and with_sequence:
        raise RPCError(RPC_INVALID_PARAMETER, "Verbose results cannot contain mempool sequence values.")
    with chain.lock:
        pool = chain.mempool()
        order = pool.mining_order()   # Core 31's order (its CTxMemPool::entryAll)
        if verbose:
            bip125 = "bip125" in ctx.node.deprecated_rpc
            return {hash_to_hex(t): mempool_entry_json(pool, pool.get(t), bip125) for t in order}
        txids = [hash_to_hex(t) for t in order]
        if with_sequence:
            return {"txids": txids, "mempool_sequence": pool.sequence}
        return txids


def getmempoolentry(ctx, args):
    chain = chain_of(ctx)
    txid = parse_hash_v(args[0], "parameter 1")
    with chain.lock:
        pool = chain.mempool()
        entry = pool.get(txid)
        if entry is None:
            raise RPCError(RPC_INVALID_ADDRESS_OR_KEY, "Transaction not in mempool")
        return mempool_entry_json(pool, entry, "bip125" in ctx.node.deprecated_rpc)


_HASH = Param("blockhash", STR_HEX, True)

METHODS = [
    Method("getblockchaininfo", "blockchain", getblockchaininfo),
    Method("getblockcount", "blockchain", getblockcount),
    Method("getbestblockhash", "blockchain", getbestblockhash),
    Method("getblockhash", "blockchain", getblockhash, [Param("height", NUM, True)]),
    Method("getblockheader", "blockchain", getblockheader,
           [_HASH, Param("verbose", BOOL, False)]),
    Method("getblock", "blockchain", getblock,
           [_HASH, Param("verbosity", ANY, False)]),
    Method("invalidateblock", HIDDEN, invalidateblock,
           [Param("blockhash", STR_HEX, True)]),
    Method("reconsiderblock", HIDDEN, reconsiderblock,
           [Param("blockhash", STR_HEX, True)]),
    Method("getrawmempool", "blockchain", getrawmempool,
           [Param("verbose", BOOL, False),
            Param("mempool_sequence", BOOL, False)]),
    Method("getmempoolentry", "blockchain", getmempoolentry,
           [Param("txid", STR_HEX, True)]),
]
