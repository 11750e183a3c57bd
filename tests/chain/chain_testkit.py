"""Helpers for chain tests: spends of coins anyone can spend (tests/kit/anyone.py),
so no keys are needed."""
from quill.tx.address import encode_segwit_address
from quill.tx.transaction import OutPoint, Transaction, TxIn, TxOut
from tests.kit.anyone import ANYONE_SCRIPT, ANYONE_WITNESS

OTHER_SCRIPT = b"\x00\x14" + bytes(range(20))          # P2WPKH nobody here controls
OTHER_ADDRESS = encode_segwit_address("bcrt", 0, bytes(range(20)))


def spend(prev_txid: bytes, n: int, value: int, fee: int = 1000, outputs: int = 1, script=ANYONE_SCRIPT,
          sequence=0xFFFFFFFD) -> Transaction:
    """A transaction spending (prev_txid, n) worth `value` into `outputs` equal anyone-can-spend outputs."""
    each = (value - fee) // outputs
    return Transaction(2, [TxIn(OutPoint(prev_txid, n), b"", sequence, list(ANYONE_WITNESS))],
                       [TxOut(each, script) for _ in range(outputs)], 0)


class Recorder:
    """A chain listener that writes down every notification."""

    def __init__(self):
        self.events = []

    def block_connected(self, block, height):
        self.events.append(("connected", height, block.hash()))

    def block_disconnected(self, block, height):
        self.events.append(("disconnected", height, block.hash()))

    def transaction_added_to_mempool(self, tx):
        self.events.append(("added", tx.txid()))

    def transaction_removed_from_mempool(self, tx, reason):
        self.events.append(("removed", tx.txid(), reason))

    def take(self):
        out, self.events = self.events, []
        return out
