"""A wallet transaction as the store decoded it (quill.wallet.store.TxRow.tx).

Transaction keeps its serializations and hashes cached, and before each txid(), wtxid() or
serialize() checks that nothing changed by rebuilding a tuple over every input and output: for a
parent of a thousand outputs, given in a PSBT as each input's non_witness_utxo, that check was a
quarter of walletcreatefundedpsbt. The store's decoded transactions are shared and never changed
(wallet transactions are immutable once stored), so their state is taken once.
"""
from __future__ import annotations

from quill.tx.transaction import StoredTransaction, Transaction


def stored(tx: Transaction) -> StoredTransaction:
    """`tx`, freshly decoded and not shared yet, as a StoredTransaction (its inputs and outputs)."""
    return StoredTransaction(tx.version, tx.vin, tx.vout, tx.locktime)
