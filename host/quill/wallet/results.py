"""The JSON objects of gettransaction, listsinceblock and listtransactions,
field for field in Core's order (core-wallet.md §1-§3).

`View` is what one RPC call sees: the wallet, its tip, and the node's mempool
(fetched once per call, for `bip125-replaceable`, which Core 31 shows only under
-deprecatedrpc=bip125: `bip125`).
"""

from quill.amount import Amount
from quill.bulk import bulk_gc
from quill.tx.decode import tx_to_univ
from quill.tx.hashes import hash_to_hex
from quill.wallet import store as st
from quill.wallet.errors import BlockNotFound, WalletDataUnavailable

MAX_BIP125_RBF_SEQUENCE = 0xFFFFFFFD


class View:
    def __init__(self, wallet, chain, bip125=False):
        self.wallet = wallet
        self.chain = chain
        self.bip125 = bip125
        self.tip_height, self.tip_hash = wallet.tip()
        self._mempool = None
        self.trust_memo = {}
        self._block_hex = {}

    def mempool(self):
        if self._mempool is None:
            self._mempool = {tx.txid(): tx for tx in self.chain.mempool_txs()} if self.chain else {}
        return self._mempool

    def block_hex(self, block_hash):
        """The display form of a block hash, once per block for the call (its transactions share it)."""
        text = self._block_hex.get(block_hash)
        if text is None:
            text = self._block_hex[block_hash] = hash_to_hex(block_hash)
        return text

    def depth(self, row):
        return self.wallet.depth(row, self.tip_height)

    def lastprocessedblock(self):
        return {"hash": hash_to_hex(self.tip_hash) if self.tip_hash else None, "height": self.tip_height}


def _signals(tx) -> bool:
    return any(txin.sequence <= MAX_BIP125_RBF_SEQUENCE for txin in tx.vin)


def bip125(view, row, depth) -> str:
    """Core's IsRBFOptIn as seen by the wallet (§3.4)."""
    if depth > 0:
        return "no"
    if _signals(row.tx):
        return "yes"
    mempool = view.mempool()
    if row.txid not in mempool:
        return "unknown"
    todo, seen = [row.tx], set()
    while todo:
        tx = todo.pop()
        for txin in tx.vin:
            parent = mempool.get(txin.prevout.hash)
            if parent is None or txin.prevout.hash in seen:
                continue
            seen.add(txin.prevout.hash)
            if _signals(parent):
                return "yes"
            todo.append(parent)
    return "no"


def wallet_tx_json(view, row, depth, entry):
    """Core's WalletTxToJSON (§3.10)."""
    w = view.wallet
    entry["confirmations"] = depth
    if row.coinbase:
        entry["generated"] = True
    if row.state == st.CONFIRMED:
        entry["blockhash"] = view.block_hex(row.block_hash)
        entry["blockheight"] = row.block_height
        entry["blockindex"] = row.block_index
        entry["blocktime"] = row.block_time
    else:
        entry["trusted"] = w.is_trusted(row, view.trust_memo, view.tip_height)
    entry["txid"] = hash_to_hex(row.txid)
    entry["wtxid"] = hash_to_hex(row.wtxid())
    entry["walletconflicts"] = [hash_to_hex(t) for t in w.wallet_conflicts(row)]
    entry["mempoolconflicts"] = [hash_to_hex(t) for t in sorted(w.mempool_conflicts.get(row.txid, ()))]
    entry["time"] = row.time_smart or row.time_received
    entry["timereceived"] = row.time_received
    if view.bip125:
        entry["bip125-replaceable"] = bip125(view, row, depth)
    for key, value in w.values_of(row.txid):   # Core's mapValue, last
        entry[key] = value


def list_entries(view, row, min_depth, long_form, label_filter=None, include_change=False):  # noqa: C901 (Core's ListTransactions)
    """Core's ListTransactions (§3.1): send entries, then receive entries."""
    w = view.wallet
    tx = row.tx
    depth = view.depth(row)
    debit = w.debit(tx)
    value_out = sum(out.value for out in tx.vout)
    fee = value_out - debit if debit > 0 else 0
    sent, received = [], []
    for n, out in enumerate(tx.vout):
        mine = out.script_pubkey in w.scripts
        if debit > 0:
            if not include_change and w.is_change(out.script_pubkey):
                continue
        elif not mine:
            continue
        address = w.address_of(out.script_pubkey)
        item = (n, out, address)
        if debit > 0:
            sent.append(item)
        if mine:
            received.append(item)
    out_entries = []
    abandoned = w.is_abandoned(row)
    if label_filter is None:
        for n, out, address in sent:
            e = {}
            if address is not None:
                e["address"] = address
            e["category"] = "send"
            e["amount"] = Amount(-out.value)
            label = w.label_of(address) if address is not None else None
            if label is not None:
                e["label"] = label
            e["vout"] = n
            e["fee"] = Amount(fee)
            if long_form:
                wallet_tx_json(view, row, depth, e)
            e["abandoned"] = abandoned
            out_entries.append(e)
    if received and depth >= min_depth:
        for n, out, address in received:
            label = w.label_of(address) if address is not None else None
            if label_filter is not None and label_filter != (label or ""):
                continue
            e = {}
            if address is not None:
                e["address"] = address
            e["parent_descs"] = w.parent_descs(out.script_pubkey)
            if row.coinbase:
                if depth < 1:
                    e["category"] = "orphan"
                elif w.blocks_to_maturity(row, depth) > 0:
                    e["category"] = "immature"
                else:
                    e["category"] = "generate"
            else:
                e["category"] = "receive"
            e["amount"] = Amount(out.value)
            if label is not None:
                e["label"] = label
            e["vout"] = n
            e["abandoned"] = abandoned
            if long_form:
                wallet_tx_json(view, row, depth, e)
            out_entries.append(e)
    return out_entries


def gettransaction(view, row, verbose):
    w = view.wallet
    tx = row.tx
    depth = view.depth(row)
    credit = w.credit(row, depth)
    debit = w.debit(tx)
    value_out = sum(out.value for out in tx.vout)
    from_me = debit > 0
    fee = value_out - debit if from_me else 0
    entry = {"amount": Amount(credit - debit - fee)}
    if from_me:
        entry["fee"] = Amount(fee)
    wallet_tx_json(view, row, depth, entry)
    entry["details"] = list_entries(view, row, 0, False)
    entry["hex"] = tx.serialize().hex()
    if verbose:
        entry["decoded"] = tx_to_univ(tx, w.chain_name, is_change=lambda out: w.is_change(out.script_pubkey))
    entry["lastprocessedblock"] = view.lastprocessedblock()
    return entry


def _stale_block(chain, block_hash):
    block = chain.block(block_hash)
    if block is None:
        raise WalletDataUnavailable("Can't read block from disk")
    return block


def since_block(view, block_hash):
    """listsinceblock's starting point: (fork height with the active chain, the block's stale
    branch tip first), in one look at the chain. BlockNotFound for a block the chain does not know."""
    branch = view.chain.branch_since(block_hash) if view.chain is not None else None
    if branch is None:
        raise BlockNotFound("Block not found")
    return branch


@bulk_gc()
def listsinceblock(view, since, target_confirmations, include_removed, include_change, label_filter):
    """§2.3: `since` None lists everything; otherwise since_block()'s answer: the wallet
    transactions changed since the fork point, and (include_removed) those of the stale branch."""
    w = view.wallet
    H = view.tip_height
    fork, stale = (None, []) if since is None else since
    transactions = []
    if fork is None:
        rows = w.store.all_txs()
    else:
        depth_limit = H + 1 - fork
        rows = [r for r in w.store.txs_changed_since(fork) if abs(view.depth(r)) < depth_limit]
    for row in rows:
        transactions.extend(list_entries(view, row, 0, True, label_filter, include_change))
    result = {"transactions": transactions}
    if include_removed:
        removed = []
        for stale_hash in stale:
            for tx in _stale_block(view.chain, stale_hash).txs:
                row = w.store.get_tx(tx.txid())
                if row is not None:
                    removed.extend(list_entries(view, row, -100000000, True, label_filter, include_change))
        result["removed"] = removed
    t = min(target_confirmations, H + 1)
    result["lastblock"] = hash_to_hex(view.chain.block_hash(H + 1 - t))
    return result


@bulk_gc()
def listtransactions(view, label, count, skip):
    """Newest first over insertion order until count+skip entries, returned oldest first."""
    w = view.wallet
    out = []
    label_filter = None if label == "*" else label
    for row in reversed(w.store.all_txs()):
        out.extend(reversed(list_entries(view, row, 0, True, label_filter)))
        if len(out) >= count + skip:
            break
    out = out[skip:skip + count]
    out.reverse()
    return out

