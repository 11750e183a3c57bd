"""The upstream node's ZMQ notifications, when it publishes them (-zmqpubsequence and -zmqpubrawtx).

Polling the mempool (follower.py) sees it as it is at each poll and misses a transaction that
comes and goes between two polls (replaced within one interval). Core publishes every mempool
addition and removal on its `sequence` topic (<32-byte txid, display order><'A' or 'R'><uint64
LE mempool sequence>; 'C'/'D' for a block connected/disconnected) and every transaction's bytes
on `rawtx`. This stream turns them into mirror changes at once: an 'A' adds the transaction (with
its fee from getmempoolentry when the node still has it), an 'R' removes it, so the wallets see a
replaced transaction and its replacement in the order they happened. 'C'/'D' wake the follower. A
gap in the mempool sequence numbers, or a message the stream cannot use, makes the follower
re-read the whole mempool at its next round.
"""
from __future__ import annotations

import threading
import time
from collections import OrderedDict
from typing import Any

from quill.tx.transaction import Transaction

RECENT = 10_000        # raw transactions kept while their 'A' is awaited (topics may arrive out of order)
RECEIVE_TIMEOUT_MS = 200


def endpoints(notifications: list[dict[str, Any]]) -> dict[str, str] | None:
    """The addresses of the `sequence` and `rawtx` topics from getzmqnotifications, or None."""
    found = {str(n.get("type")): str(n.get("address")) for n in notifications
             if isinstance(n, dict) and n.get("address")}
    if "pubsequence" in found and "pubrawtx" in found:
        return {"sequence": found["pubsequence"], "rawtx": found["pubrawtx"]}
    return None


class MempoolStream:
    def __init__(self, follower: Any, addresses: dict[str, str]) -> None:
        import zmq  # pyzmq: only needed when the upstream node publishes
        self.zmq = zmq
        self.follower = follower
        self.addresses = addresses
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="quill-chain-zmq", daemon=True)
        self._recent: OrderedDict[bytes, Transaction] = OrderedDict()
        self._awaiting: dict[bytes, int] = {}      # 'A' seen before its rawtx: txid -> mempool sequence
        self.last_sequence: int | None = None
        self.messages = 0

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)

    def _run(self) -> None:
        zmq = self.zmq
        context = zmq.Context.instance()
        sock = context.socket(zmq.SUB)
        sock.setsockopt(zmq.RCVTIMEO, RECEIVE_TIMEOUT_MS)
        sock.setsockopt(zmq.RCVHWM, 0)
        for address in sorted(set(self.addresses.values())):
            sock.connect(address)
        sock.setsockopt(zmq.SUBSCRIBE, b"sequence")
        sock.setsockopt(zmq.SUBSCRIBE, b"rawtx")
        try:
            while not self._stop.is_set():
                try:
                    parts = sock.recv_multipart()
                except zmq.Again:
                    continue
                self.messages += 1
                try:
                    self._handle(parts)
                except Exception as e:     # a malformed message must not stop the stream
                    self.follower.log.warning("ZMQ message not understood (%s); re-reading the mempool", e)
                    self.follower.resync_mempool()
        finally:
            sock.close(linger=0)

    def _handle(self, parts: list[bytes]) -> None:
        if len(parts) < 2:
            return
        topic, body = parts[0], parts[1]
        if topic == b"rawtx":
            tx = Transaction.from_bytes(body)
            txid = tx.txid()
            if txid in self._awaiting:
                self._added(tx, self._awaiting.pop(txid))
                return
            self._recent[txid] = tx
            while len(self._recent) > RECENT:
                self._recent.popitem(last=False)
        elif topic == b"sequence":
            txid, label = body[:32][::-1], body[32:33]
            if label in (b"C", b"D"):
                self.follower.wake()
                return
            sequence = int.from_bytes(body[33:41], "little")
            if self.last_sequence is not None and sequence != self.last_sequence + 1:
                self.follower.resync_mempool()
            self.last_sequence = sequence
            if label == b"A":
                if txid in self._recent:
                    self._added(self._recent.pop(txid), sequence)
                else:
                    self._awaiting[txid] = sequence
            elif label == b"R":
                self._awaiting.pop(txid, None)
                self.follower.zmq_removed(txid)

    def _added(self, tx: Transaction, sequence: int) -> None:
        self.follower.zmq_added(tx, int(time.time()))
