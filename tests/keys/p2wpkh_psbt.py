"""A P2WPKH PSBT of n inputs that the test mnemonic's device owns, each paying
m/84h/1h/0h/0/i and carrying its previous transaction, with one payment and one
change output (m/84h/1h/0h/1/0): the device's worst case per input (a previous
transaction, a key derivation and a signature each)."""
from __future__ import annotations

import hashlib
from functools import cache

from quill.tx.hashes import hash160
from quill.tx.psbt import PSBT, KeyOrigin, psbt_from_tx
from quill.tx.transaction import OutPoint, Transaction, TxIn, TxOut
from quillfw.keys import bip32
from tests.keys.emulated import TEST_MNEMONIC

AMOUNT = 50_000
FEE = 1_000
CHANGE = 10_000
FINGERPRINT = bytes.fromhex("73c5da0a")
ACCOUNT = (84 | bip32.HARDENED, 1 | bip32.HARDENED, bip32.HARDENED)


@cache
def _account_keys(chain: int, n: int) -> tuple[bytes, ...]:
    seed = hashlib.pbkdf2_hmac("sha512", TEST_MNEMONIC.encode(), b"mnemonic", 2048)
    node = bip32.master_node(seed)
    for index in (*ACCOUNT, chain):
        node = node.child(index)
    return tuple(node.child(i).pubkey() for i in range(n))


def _p2wpkh(pubkey: bytes) -> bytes:
    return b"\x00\x14" + hash160(pubkey)


def p2wpkh_psbt(n: int, version: int = 0) -> PSBT:
    """The BIP174 (version 0) or BIP370 (version 2) PSBT, unsigned."""
    prevs = []
    pubkeys = _account_keys(0, n)
    for i, pub in enumerate(pubkeys):
        prevs.append(Transaction(2, [TxIn(OutPoint(i.to_bytes(32, "little"), 0), b"\x51", 0xFFFFFFFF)],
                                 [TxOut(AMOUNT, _p2wpkh(pub))], 0))
    change = _account_keys(1, 1)[0]
    tx = Transaction(2, [TxIn(OutPoint(p.txid(), 0), b"", 0xFFFFFFFD) for p in prevs],
                     [TxOut(n * AMOUNT - FEE - CHANGE, b"\x00\x14" + bytes(20)),
                      TxOut(CHANGE, _p2wpkh(change))], 0)
    psbt = psbt_from_tx(tx, version)
    for i, (txin, prev, pub) in enumerate(zip(psbt.inputs, prevs, pubkeys, strict=True)):
        txin.non_witness_utxo = prev
        txin.witness_utxo = prev.vout[0]
        txin.hd_keypaths[pub] = KeyOrigin(FINGERPRINT, (*ACCOUNT, 0, i))
    psbt.outputs[1].hd_keypaths[change] = KeyOrigin(FINGERPRINT, (*ACCOUNT, 1, 0))
    return psbt
