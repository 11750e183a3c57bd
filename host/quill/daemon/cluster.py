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

The calls only the leader can do (LEADER_CALLS: mining, the mempool, the UTXO set) a replica passes
to the leader (forward): the leader records where it answers in quill_leaders (host, port and a
secret of this run, a credential of its RPC server, never logged) when it takes the lead, and a
replica sends it the call with the same id and answers with the leader's result or error.
"""
from __future__ import annotations

import base64
import http.client
import logging
import os
import secrets
import threading
import uuid
from collections.abc import Callable
from typing import Any

from quill import postgres
from quill.rpc import univalue
from quill.rpc.errors import RPC_CLIENT_NOT_CONNECTED, RPCError

log = logging.getLogger("quill.cluster")

SENDER = f"{os.getpid()}-{uuid.uuid4().hex[:8]}"
GATHER = 0.05       # seconds a listener gathers messages before handling them (one reload per burst)


# The calls a replica cannot do (quill.chain.service refuses them off the leader): it passes them on.
LEADER_CALLS = frozenset({"sendrawtransaction", "generatetoaddress", "generateblock", "submitblock",
                          "invalidateblock", "reconsiderblock", "scantxoutset", "gettxoutsetinfo"})
FORWARD_USER = "__quill_replica__"   # the RPC user of the leader's forwarding credential
CONNECT_TIMEOUT = 2.0               # seconds to reach the leader: a dead one is refused at once
ANSWER_TIMEOUT = 120.0              # seconds for its answer (a long generatetoaddress), then -9


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


def new_secret() -> str:
    """This run's forwarding password (its leader's row in quill_leaders; never logged)."""
    return secrets.token_hex(32)


class Leaders:
    """quill_leaders(chain, host, port, secret): where the chain's leader answers RPC, written by
    the leader when it takes the lead, read by a replica for each call it passes on."""

    def __init__(self, url: str, chain: str) -> None:
        self.conn = postgres.connect(url)
        self.chain = chain
        self.lock = threading.Lock()
        try:
            self.conn.execute("CREATE TABLE IF NOT EXISTS quill_leaders (chain TEXT PRIMARY KEY, "
                              "host TEXT NOT NULL, port INTEGER NOT NULL, secret TEXT NOT NULL)")
        except Exception:   # two quilld starting at once: the other one made it (pg_type's unique key)
            if self.conn.execute("SELECT to_regclass('quill_leaders')").fetchone()[0] is None:
                raise

    def publish(self, host: str, port: int, secret: str) -> None:
        with self.lock:
            self.conn.execute("INSERT INTO quill_leaders (chain, host, port, secret) VALUES (%s, %s, %s, %s) "
                              "ON CONFLICT (chain) DO UPDATE SET host = excluded.host, port = excluded.port, "
                              "secret = excluded.secret", (self.chain, host, port, secret))

    def withdraw(self, secret: str) -> None:
        """A clean stop of the leader: its row goes, so a replica answers not_reachable at once
        rather than trying a closed port. Only this run's row (its secret): a replica that has
        already taken the lead wrote its own, which stays."""
        with self.lock:
            self.conn.execute("DELETE FROM quill_leaders WHERE chain = %s AND secret = %s", (self.chain, secret))

    def endpoint(self) -> tuple[str, int, str] | None:
        with self.lock:
            row = self.conn.execute("SELECT host, port, secret FROM quill_leaders WHERE chain = %s",
                                    (self.chain,)).fetchone()
        return None if row is None else (row[0], int(row[1]), row[2])

    def close(self) -> None:
        with self.lock:
            self.conn.close()


def reachable_host(binds: list[tuple[str, int]]) -> str:
    """The address a replica reaches this quilld's RPC on: loopback when it listens there (the
    default), else its first -rpcbind (a wildcard one read as loopback)."""
    hosts = [host for host, _ in binds]
    if "127.0.0.1" in hosts or not hosts:
        return "127.0.0.1"
    return {"0.0.0.0": "127.0.0.1", "::": "::1", "": "127.0.0.1"}.get(hosts[0], hosts[0])


def not_reachable(chain: str) -> RPCError:
    """Core's RPC_CLIENT_NOT_CONNECTED (-9, "not connected"): the node that would carry the call out
    is out of reach, as Core answers when it has no peer to send to; the client may try again."""
    return RPCError(RPC_CLIENT_NOT_CONNECTED,
                    f"The quilld that leads the {chain} chain in the store is not reachable; "
                    "try again in a moment (a replica takes the lead within seconds)")


def forward(leaders: Leaders, request: dict[str, Any]) -> Any:
    """The leader's result for `request` (a JSON-RPC 1.x object with its id), or its error raised
    as RPCError with its code and message unchanged; not_reachable when there is no leader."""
    chain = leaders.chain
    try:
        found = leaders.endpoint()
    except Exception:       # the store's connection lost: no leader known
        raise not_reachable(chain) from None
    if found is None:
        raise not_reachable(chain)
    host, port, secret = found
    token = base64.b64encode(f"{FORWARD_USER}:{secret}".encode()).decode()
    conn = http.client.HTTPConnection(host, port, timeout=CONNECT_TIMEOUT)
    try:
        conn.connect()
        if conn.sock is not None:
            conn.sock.settimeout(ANSWER_TIMEOUT)
        conn.request("POST", "/", univalue.dumps(request).encode(),
                     {"Authorization": f"Basic {token}", "Content-Type": "application/json"})
        response = conn.getresponse()
        body = response.read()
    except (OSError, http.client.HTTPException) as e:
        log.warning("Could not pass %s to the leader of the %s chain (%s)", request.get("method"), chain,
                    type(e).__name__)
        raise not_reachable(chain) from None
    finally:
        conn.close()
    try:
        reply = univalue.loads(body)
    except Exception:
        reply = None
    if not isinstance(reply, dict) or not ("result" in reply and "error" in reply):
        log.warning("The leader of the %s chain answered HTTP %d without a JSON-RPC reply", chain, response.status)
        raise not_reachable(chain)
    error = reply["error"]
    if error is not None:
        raise RPCError(error.get("code"), error.get("message"))
    return reply["result"]
