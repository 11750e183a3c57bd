"""The spesmilo Electrum server e-x, run unmodified as its users run it, and a small Electrum client.

    server = ElectrumServer(tmp / "ex", daemon_url).start()     # electrumx_server, configured by env
    with server.client("1.6") as c:                             # TCP, newline-delimited JSON-RPC
        c.ask("blockchain.scripthash.get_history", scripthash)  # ("ok", result) or ("error", code, message)
    server.stop()

e-x is a test extra (pyproject.toml), so its entry point sits beside this Python's. It indexes the
chain of the node at `daemon_url` into a LevelDB (plyvel) in `db_dir` and serves the Electrum protocol
on a free loopback port once it has caught up. Its start-up check asks the node's getindexinfo for
txindex and txospenderindex (Bitcoin's REQUIRED_DAEMON_INDEXES).
"""
from __future__ import annotations

import hashlib
import json
import os
import socket
import subprocess
import time
from decimal import Decimal
from pathlib import Path
from types import TracebackType
from typing import Any

from tests.kit.rpc_daemon import VENV_BIN, free_port


def scripthash(script: bytes) -> str:
    """The Electrum protocol's script hash: SHA-256 of the output script, byte-reversed, in hex."""
    return hashlib.sha256(script).digest()[::-1].hex()


class ElectrumClient:
    """One Electrum-protocol session: server.version first, then requests sent together, as Electrum
    wallets pipeline them (e-x 2.0 holds a small answer up to 1 s to pad it into a bigger packet,
    unless more follow), answers matched by id; notifications (a subscription's news) are read past."""

    def __init__(self, port: int, protocol: str, timeout: float = 60.0) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        self.stream = self.sock.makefile("rwb")
        self.next_id = 0
        self.version = self.call("server.version", "quill-tests", protocol)

    def call(self, method: str, *params: Any) -> Any:
        """The result, or ElectrumError with the server's error object."""
        answer = self.ask(method, *params)
        if answer[0] != "ok":
            raise ElectrumError(answer)
        return answer[1]

    def ask(self, method: str, *params: Any) -> tuple[Any, ...]:
        """("ok", result) or ("error", code, message): the answer as a value to compare."""
        return self.ask_all([(method, params)])[0]

    def ask_all(self, calls: list[tuple[str, tuple[Any, ...]]]) -> list[tuple[Any, ...]]:
        """The answers to `calls` [(method, params)], all sent before the first answer is read."""
        ids = []
        for method, params in calls:
            self.next_id += 1
            ids.append(self.next_id)
            request = {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": list(params)}
            self.stream.write(json.dumps(request).encode() + b"\n")
        self.stream.flush()
        replies: dict[int, dict[str, Any]] = {}
        while len(replies) < len(ids):
            line = self.stream.readline()
            if not line:
                raise ConnectionError(f"the server closed the session after {len(replies)} of {len(ids)} answers")
            reply = json.loads(line, parse_float=Decimal)
            if reply.get("id") in ids:
                replies[reply["id"]] = reply
        return [("error", r["error"].get("code"), r["error"].get("message")) if r.get("error") is not None
                else ("ok", r["result"]) for r in (replies[i] for i in ids)]

    def close(self) -> None:
        self.stream.close()
        self.sock.close()

    def __enter__(self) -> ElectrumClient:
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 traceback: TracebackType | None) -> None:
        self.close()


class ElectrumError(Exception):
    pass


class ElectrumServer:
    """electrumx_server for Bitcoin regtest, its LevelDB in `db_dir`, serving TCP on a free port."""

    def __init__(self, db_dir: Path, daemon_url: str) -> None:
        self.db_dir = Path(db_dir)
        self.db_dir.mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        self.log_path = self.db_dir.parent / f"{self.db_dir.name}.log"
        # e-x's documented environment (docs/environment.rst); nothing of e-x is changed
        self.env = {**os.environ, "DAEMON_URL": daemon_url, "DB_DIRECTORY": str(self.db_dir),
                    "COIN": "Bitcoin", "NET": "regtest", "DB_ENGINE": "leveldb",
                    "SERVICES": f"tcp://127.0.0.1:{self.port}", "PEER_DISCOVERY": "off", "PEER_ANNOUNCE": "",
                    "DAEMON_POLL_INTERVAL_BLOCKS": "100", "DAEMON_POLL_INTERVAL_MEMPOOL": "100",
                    "CACHE_MB": "50", "ALLOW_ROOT": "1",     # CI runs as root
                    # one client asks hundreds of questions: no cost limits (they would slow it down)
                    "COST_SOFT_LIMIT": "0", "COST_HARD_LIMIT": "0"}
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self, timeout: float = 60.0) -> ElectrumServer:
        """Start e-x and wait until it serves (it listens once it has caught up with the node)."""
        log = self.log_path.open("ab")
        self.proc = subprocess.Popen([str(VENV_BIN / "electrumx_server")], env=self.env,
                                     stdout=log, stderr=subprocess.STDOUT)
        log.close()
        deadline = time.monotonic() + timeout
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(f"e-x exited {self.proc.returncode}:\n{self.log()[-3000:]}")
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return self
            except OSError:
                if time.monotonic() > deadline:
                    self.stop()
                    raise TimeoutError(f"e-x did not start serving:\n{self.log()[-3000:]}") from None
                time.sleep(0.1)

    def client(self, protocol: str) -> ElectrumClient:
        return ElectrumClient(self.port, protocol)

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def stop(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.terminate()       # e-x flushes its DB and exits on SIGTERM
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
