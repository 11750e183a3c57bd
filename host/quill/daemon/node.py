"""The running daemon's state that handlers see as `ctx.node`."""

import threading
import time


class Node:
    def __init__(self, *, chain_name, datadir, chain_datadir, log_path, deprecated_rpc,
                 registry, active_commands, device=None):
        self.chain_name = chain_name
        self.datadir = datadir
        self.chain_datadir = chain_datadir
        self.log_path = log_path
        self.deprecated_rpc = frozenset(deprecated_rpc)
        self.registry = registry
        self._active_commands = active_commands
        self.device = device
        self.chain = None     # ChainService, when the node has a chain
        self.wallets = None   # WalletManager, when the node has a chain
        self.started = time.monotonic()
        self._shutdown_callbacks = []
        self._shutdown_lock = threading.Lock()
        self.shutdown_requested = False

    def uptime(self) -> int:
        return int(time.monotonic() - self.started)

    def rpc_active_commands(self) -> list:
        return self._active_commands.snapshot()

    def on_shutdown(self, callback) -> None:
        self._shutdown_callbacks.append(callback)

    def request_shutdown(self) -> None:
        """Thread-safe: from an RPC worker, a signal handler or the loop."""
        with self._shutdown_lock:
            if self.shutdown_requested:
                return
            self.shutdown_requested = True
        for callback in self._shutdown_callbacks:
            callback()
