"""An RPC worker process (quill.rpc.stateless, -rpcworkers): serves the daemon's listening sockets
beside it with the same RPCServer, answering the stateless calls itself (the daemon's registry
entries for them) and relaying everything else to the daemon.

    python -m quill.daemon.stateless_worker

Its settings come pickled on stdin from the daemon (RPCServer.start_workers): chain, deprecated
(-deprecatedrpc), log_path, debug (-debug), authenticator (salted hashes, no password), allowlist,
timeout, work_queue, threads (stateless.WORKER_THREADS), auth_failure_delay, listen (the inherited
listening sockets' fds) and link (its end of the socketpair to the daemon), counts (the shared
ConnectionCounts: fd, size, its slot). It stops when the daemon says so or goes.
"""
from __future__ import annotations

import asyncio
import pickle
import signal
import socket
import sys
from typing import Any

from quill.daemon import logging_setup
from quill.handlers import psbt, rawtransactions
from quill.handlers.core_help import with_cores_help
from quill.handlers.errors import guarded_methods
from quill.rpc.jsonrpc import Dispatcher
from quill.rpc.registry import Registry
from quill.rpc.server import RPCServer
from quill.rpc.stateless import ConnectionCounts, Relay

# The handler modules that hold stateless methods (registry.Method.stateless)
MODULES = (rawtransactions, psbt)


class WorkerNode:
    """What a stateless handler reads of `ctx.node`."""

    def __init__(self, chain_name: str, deprecated_rpc: list[str]) -> None:
        self.chain_name = chain_name
        self.deprecated_rpc = frozenset(deprecated_rpc)


def stateless_registry() -> Registry:
    """The stateless methods, wrapped as quill.daemon.main.build_registry wraps them."""
    registry = Registry()
    for module in MODULES:
        registry.add([m for m in with_cores_help(guarded_methods(module.METHODS)) if m.stateless])
    return registry


async def serve(settings: dict[str, Any]) -> None:
    loop = asyncio.get_running_loop()
    stopped = asyncio.Event()
    relay = Relay(stopped.set)
    await loop.create_unix_connection(lambda: relay, sock=socket.socket(fileno=settings["link"]))
    server = RPCServer(dispatcher=Dispatcher(stateless_registry()), authenticator=settings["authenticator"],
                       allowlist=settings["allowlist"], node=WorkerNode(settings["chain"], settings["deprecated"]),
                       binds=[], work_queue=settings["work_queue"], threads=settings["threads"],
                       timeout=settings["timeout"], auth_failure_delay=settings["auth_failure_delay"], relay=relay,
                       balance=ConnectionCounts(*settings["counts"]))
    await server.start(sockets=[socket.socket(fileno=fd) for fd in settings["listen"]])
    server.publish_load()  # from GONE: it takes connections now
    relay.ready()
    await stopped.wait()
    await server.stop()


def main() -> int:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a terminal's ^C: the daemon stops its workers
    settings = pickle.load(sys.stdin.buffer)
    logging_setup.setup(settings["log_path"] or None, False, settings["debug"])
    from quill.daemon.main import run_loop, tune_process
    tune_process()
    run_loop(serve(settings))
    return 0


if __name__ == "__main__":
    sys.exit(main())
