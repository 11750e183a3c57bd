"""Several quilld on one PostgreSQL store (-store=postgresql://..., docs/postgresql.md): what they
tell each other, by PostgreSQL's LISTEN/NOTIFY on one channel per chain, never by polling tables.

Every message is `<sender> <kind> <argument>`; a process skips its own (`SENDER`):
Messages make the others' memory current soon; a call is current at once: before each call a
process reads the versions (quill_versions) of the chain (a replica) and of the wallet the call
names, and reads again what is behind (Daemon.sync_with_store), so a client that moves between
processes sees its own writes.

* `chain`: the leader committed a block connected or disconnected, or a mempool change; a replica
  reads its chain again (quill.chain.service.ChainService.reload).
* `wallet <name>`: a transaction that changed wallet <name> committed (any process: a block the
  leader recorded, an import, a label, a persistent coin lock, a new address); every process that
  has it loaded reads it again (quill.wallet.manager.WalletManager.refresh).
* `loaded <name>`: a process created or loaded wallet <name>; the leader loads it too, so that
  it follows the chain.
* `leader`: a process took the chain's lock; the others announce their loaded wallets again.
"""
from __future__ import annotations

import logging
import os
import threading
import uuid
from collections.abc import Callable
from typing import Any

from quill import postgres

log = logging.getLogger("quill.cluster")

SENDER = f"{os.getpid()}-{uuid.uuid4().hex[:8]}"
GATHER = 0.05       # seconds a listener gathers messages before handling them (one reload per burst)


def channel(chain: str) -> str:
    return f"quill_{chain}"


def chain_key(chain: str) -> str:
    """The chain's row in quill_versions."""
    return f"chain:{chain}"


class Notifier:
    """This process's messages to the others, on a connection of its own."""

    def __init__(self, url: str, chain: str) -> None:
        self.conn = postgres.connect(url)
        self.channel = channel(chain)
        self.lock = threading.Lock()

    def send(self, kind: str, argument: str = "") -> None:
        try:
            with self.lock:
                self.conn.execute("SELECT pg_notify(%s, %s)", (self.channel, f"{SENDER} {kind} {argument}"))
        except Exception as e:      # a lost connection: the lease watch stops a leader; a replica goes on
            log.warning("Could not notify the other quilld (%s)", type(e).__name__)

    def close(self) -> None:
        with self.lock:
            self.conn.close()


class ChainEvents:
    """A chain listener (quill.chain.service) on the leader: each committed change is announced
    (`changed`: the chain's version bumped, then `chain` sent), before the call that made it answers."""

    def __init__(self, changed: Callable[[], None]) -> None:
        self.changed = changed

    def block_connected(self, block: Any, height: int) -> None:
        self.changed()

    def block_disconnected(self, block: Any, height: int) -> None:
        self.changed()

    def transaction_added_to_mempool(self, tx: Any) -> None:
        self.changed()

    def transaction_removed_from_mempool(self, tx: Any, reason: Any = None) -> None:
        self.changed()

    def scan_hint(self) -> Any:
        from quill.chain.follower import ScanHint
        return ScanHint(None, None)     # needs no block's contents


class Listener(threading.Thread):
    """LISTEN on the chain's channel; each burst of messages, without repeats and in their first
    order, goes to `handle(kind, argument)`."""

    def __init__(self, url: str, chain: str, handle: Callable[[str, str], None]) -> None:
        super().__init__(daemon=True, name="store-listen")
        self.conn = postgres.connect(url)
        self.conn.execute(f"LISTEN {channel(chain)}")
        self.handle = handle
        self.stopping = threading.Event()

    def run(self) -> None:
        while not self.stopping.is_set():
            try:
                burst: dict[tuple[str, str], None] = {}
                for note in self.conn.notifies(timeout=0.5, stop_after=1):
                    burst[_parse(note.payload)] = None
                if burst:
                    for note in self.conn.notifies(timeout=GATHER):
                        burst[_parse(note.payload)] = None
            except Exception as e:
                if not self.stopping.is_set():
                    log.warning("Lost the LISTEN connection to the store (%s)", type(e).__name__)
                return
            for kind, argument in burst:
                if kind == "":
                    continue
                try:
                    self.handle(kind, argument)
                except Exception:
                    log.exception("handling %s %s from another quilld failed", kind, argument)

    def stop(self) -> None:
        self.stopping.set()
        self.join(timeout=2)
        self.conn.close()


def _parse(payload: str) -> tuple[str, str]:
    """(kind, argument); ("", "") for this process's own messages."""
    sender, _, rest = payload.partition(" ")
    if sender == SENDER:
        return "", ""
    kind, _, argument = rest.partition(" ")
    return kind, argument
