"""The node's view of the coins an unsigned transaction spends (Core's FindCoins):
a mempool transaction's outputs first, else the UTXO set.

Only this adapter touches the chain, through `getattr(node, "chain", None)`; a
node without a chain (or whose chain has no blocks yet) knows no coins, and
every input then needs its prevtxs entry.
"""
from quill.chain.errors import ChainUnavailable
from quill.tx.transaction import TxOut


def find_coins(node, outpoints):
    """{OutPoint: TxOut or None} for every outpoint (None: unknown or spent)."""
    coins = {op: None for op in outpoints}
    chain = getattr(node, "chain", None)
    if chain is None:
        return coins
    try:
        for op in coins:
            coins[op] = _lookup(chain, op)
    except ChainUnavailable:  # no blocks yet: no coins either
        return {op: None for op in outpoints}
    return coins


def _lookup(chain, outpoint):
    entry = chain.mempool_entry(outpoint.hash)
    if entry is not None:
        vout = entry.tx.vout
        return TxOut(vout[outpoint.n].value, vout[outpoint.n].script_pubkey) \
            if outpoint.n < len(vout) else None
    coin = chain.coin(outpoint)
    return None if coin is None else TxOut(coin.value, coin.script_pubkey)
