"""The real Quill RPC server (quill.rpc.server.RPCServer) run in-process on a free port.

It serves the daemon's registry plus quill.handlers.rawtransactions (added here
only if quill.daemon.main does not register it yet), with user/password auth.
Used by the decode RPC tests and by tests/bench/bench_decode.py.
"""
import asyncio
import base64
import http.client
import json
import sys
import tempfile
import threading
import time

from quill.daemon.main import build_registry
from quill.daemon.node import Node
from quill.handlers import rawtransactions
from quill.rpc import auth
from quill.rpc.jsonrpc import Dispatcher
from quill.rpc.server import RPCServer
from quill.rpc.stateless import StatelessPool

USER, PASSWORD = "quill", "decode-tests"


def stateless_pool(chain: str, deprecated=(), size: int = 1) -> StatelessPool:
    """The daemon's stateless workers (quill.daemon.main.Daemon.stateless_pool), without a log."""
    return StatelessPool([sys.executable, "-m", "quill.daemon.stateless_worker", chain, "", "",
                          ",".join(deprecated)], size)


class InProcessServer:
    """`workers`: that many stateless worker processes answer the stateless calls (started with
    the server, waited for until ready); 0: every call is answered on the server's loop."""

    def __init__(self, chain="main", deprecated=(), workers=0):
        self.registry = build_registry()
        if self.registry.get("decoderawtransaction") is None:
            self.registry.add(rawtransactions.METHODS)
        dispatcher = Dispatcher(self.registry)
        self._tmp = tempfile.TemporaryDirectory(prefix="quill-rpc-decode-")
        self.node = Node(chain_name=chain, datadir=self._tmp.name, chain_datadir=self._tmp.name,
                         log_path="", deprecated_rpc=list(deprecated), registry=self.registry,
                         active_commands=dispatcher.active)
        self.server = RPCServer(dispatcher=dispatcher,
                                authenticator=auth.Authenticator([auth.Credential.from_password(USER, PASSWORD)]),
                                allowlist=auth.AllowList([]), node=self.node,
                                binds=[("127.0.0.1", 0)], threads=4,
                                stateless=stateless_pool(chain, deprecated, workers) if workers else None)
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)

    def start(self):
        self.thread.start()
        asyncio.run_coroutine_threadsafe(self.server.start(), self.loop).result(10)
        self.port = self.server.ports[0]
        pool = self.server.stateless
        if pool is not None:
            # the workers start at the first stateless call; until one is ready the loop answers
            self.connection().call_raw("decodescript", [""])
            deadline = time.monotonic() + 30
            while not (len(pool.workers) == pool.size and all(w.ready for w in pool.workers)):
                if time.monotonic() > deadline:
                    raise TimeoutError("stateless workers not ready")
                time.sleep(0.02)
        return self

    def stop(self):
        asyncio.run_coroutine_threadsafe(self.server.stop(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)
        self.loop.close()
        self._tmp.cleanup()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    @property
    def url(self):
        return f"http://{USER}:{PASSWORD}@127.0.0.1:{self.port}"

    def proxy(self):
        from bitcoinrpc.authproxy import AuthServiceProxy
        return AuthServiceProxy(self.url, timeout=60)

    def connection(self):
        return KeepAliveClient("127.0.0.1", self.port, USER, PASSWORD)


class KeepAliveClient:
    """A minimal JSON-RPC 1.0 client on one persistent HTTP/1.1 connection (http.client)."""

    def __init__(self, host, port, user, password):
        self.conn = http.client.HTTPConnection(host, port, timeout=60)
        token = base64.b64encode(f"{user}:{password}".encode()).decode()
        self.headers = {"Authorization": "Basic " + token, "Content-Type": "application/json",
                        "Connection": "keep-alive"}

    def call_raw(self, method, params):
        """(HTTP status, reply body text)."""
        body = json.dumps({"jsonrpc": "1.0", "id": 1, "method": method, "params": params})
        self.conn.request("POST", "/", body=body, headers=self.headers)
        resp = self.conn.getresponse()
        return resp.status, resp.read().decode()

    def close(self):
        self.conn.close()
