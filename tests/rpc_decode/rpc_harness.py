"""The real Quill RPC server (quill.rpc.server.RPCServer) run in-process on a free port.

It serves the daemon's registry plus quill.handlers.rawtransactions (added here
only if quill.daemon.main does not register it yet), with user/password auth.
Used by the decode RPC tests and by tests/bench/bench_decode.py.
"""
import asyncio
import base64
import http.client
import json
import tempfile
import threading
import time

from quill.daemon.main import build_registry
from quill.daemon.node import Node
from quill.handlers import rawtransactions
from quill.rpc import auth
from quill.rpc.jsonrpc import Dispatcher
from quill.rpc.server import RPCServer

USER, PASSWORD = "quill", "decode-tests"


class InProcessServer:
    """`workers`: that many -rpcworkers processes serve its socket beside it (rpc/stateless; started
    with the server, waited for until each serves); 0: every call is answered on the server's loop."""

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
                                binds=[("127.0.0.1", 0)], threads=4)
        self.chain, self.deprecated, self.worker_count = chain, list(deprecated), workers
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)

    def start(self):
        self.thread.start()
        asyncio.run_coroutine_threadsafe(self.server.start(), self.loop).result(10)
        self.port = self.server.ports[0]
        if self.worker_count:
            settings = {"chain": self.chain, "deprecated": self.deprecated, "log_path": "", "debug": []}
            asyncio.run_coroutine_threadsafe(self.server.start_workers(self.worker_count, settings),
                                             self.loop).result(30)
            self.wait_for_workers()
        return self

    def wait_for_workers(self, timeout=30):
        """Until each of the -rpcworkers processes serves."""
        deadline = time.monotonic() + timeout
        while self.server.workers.ready < self.worker_count:
            if time.monotonic() > deadline:
                raise TimeoutError("RPC workers not serving")
            time.sleep(0.02)

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
