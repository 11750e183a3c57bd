"""The running daemon's state that handlers see as `ctx.node`."""

import threading
import time

from quill.wallet.fallbackfee import FallbackFee


class Node:
    def __init__(self, *, chain_name, datadir, chain_datadir, log_path, deprecated_rpc,
                 registry, active_commands, device=None, device_queue=None, signer="",
                 fallback_fee=None):
        self.chain_name = chain_name
        self.datadir = datadir
        self.chain_datadir = chain_datadir
        self.log_path = log_path
        self.deprecated_rpc = frozenset(deprecated_rpc)
        self.registry = registry
        self._active_commands = active_commands
        self.device = device
        self.device_queue = device_queue   # quill.device.queue.DeviceQueue: calls waiting for the device
        self.fallback_fee = fallback_fee or FallbackFee()  # Core's -fallbackfee, read by the wallets
        self.signer = signer  # Core's -signer: the external signer's command line ("" when not given)
        self.chain = None     # ChainService, when the node has a chain
        self.wallets = None   # WalletManager, when the node has a chain
        self.started = time.monotonic()
        self._shutdown_callbacks = []
        self._shutdown_lock = threading.Lock()
        self.shutdown_requested = False

    def uptime(self) -> int:
        return int(time.monotonic() - self.started)

    def rpc_active_commands(self) -> list:
        """Running commands, then the calls still waiting for the device with their
        place in its queue (1 = next)."""
        running = self._active_commands.snapshot()
        if self.device_queue is None:
            return running
        waiting = [{"method": c["method"], "duration": c["duration"], "device_queue_position": c["position"]}
                   for c in self.device_queue.snapshot() if c["position"] > 0]
        return running + waiting

    def device_queue_snapshot(self) -> list:
        return self.device_queue.snapshot() if self.device_queue is not None else []

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
