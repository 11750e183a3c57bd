"""Transactions, scripts, addresses and their Core-exact JSON rendering.

Codec entry points: quill.tx.transaction (Transaction, TxIn, TxOut, OutPoint),
quill.tx.serialize (readers, CompactSize), quill.tx.hashes.
"""
