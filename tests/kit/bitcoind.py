"""A real Bitcoin Core for differential tests: the judge every RPC answer is compared with.

    with BitcoinD(tmp_path) as core:          # regtest, own datadir, free ports, loopback only
        core.rpc("getblockcount")
        core.rpc("getbalances", wallet="w")   # /wallet/w
        core.url_for_follower                  # what quilld -chainsource= takes

The binary comes from ``tests.kit.toolchains.bitcoind_path()`` (skips, or fails in CI, when
absent). Answers are decoded with ``Decimal`` so amounts compare exactly.
"""
from __future__ import annotations

import base64
import json
import socket
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request
from decimal import Decimal
from pathlib import Path
from typing import Any

from tests.kit.rpc_daemon import QuillDaemon
from tests.kit.toolchains import bitcoind_path

RPC_USER = "u"
RPC_PASSWORD = "p"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class CoreRPCError(Exception):
    """Core answered with an error object: ``code`` and ``message`` as Core sent them."""

    def __init__(self, status: int, error: dict[str, Any]) -> None:
        super().__init__(f"HTTP {status}: {error}")
        self.status = status
        self.code = error.get("code")
        self.message = error.get("message")


class BitcoinD:
    """bitcoind -regtest in ``datadir`` with its RPC on a free loopback port."""

    def __init__(self, datadir: Path, *extra_args: str, binary: Path | None = None) -> None:
        self.datadir = Path(datadir)
        self.datadir.mkdir(parents=True, exist_ok=True)
        self.binary = binary or bitcoind_path()
        self.rpc_port = free_port()
        self.p2p_port = free_port()
        self.args = [
            "-regtest", f"-datadir={self.datadir}", f"-rpcport={self.rpc_port}", f"-port={self.p2p_port}",
            "-listen=0", "-rpcbind=127.0.0.1", "-rpcallowip=127.0.0.1",
            f"-rpcuser={RPC_USER}", f"-rpcpassword={RPC_PASSWORD}", "-server=1", "-printtoconsole=0",
            "-fallbackfee=0.0001", "-txindex=1", "-dnsseed=0", "-fixedseeds=0", "-natpmp=0",
            *extra_args,
        ]
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.rpc_port}/"

    @property
    def url_for_follower(self) -> str:
        """The URL ``quilld -chainsource=`` takes to follow this node."""
        return f"http://{RPC_USER}:{RPC_PASSWORD}@127.0.0.1:{self.rpc_port}"

    def start(self, timeout: float = 60.0) -> BitcoinD:
        self.proc = subprocess.Popen([str(self.binary), *self.args],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + timeout
        while True:
            if self.proc.poll() is not None:
                err = self.proc.stderr.read().decode(errors="replace") if self.proc.stderr else ""
                raise RuntimeError(f"bitcoind exited {self.proc.returncode}: {err}")
            try:
                self.rpc("getblockcount")
                return self
            except (OSError, CoreRPCError):
                if time.monotonic() > deadline:
                    self.stop()
                    raise
                time.sleep(0.1)

    def rpc_raw(self, body: bytes, path: str = "/", headers: dict[str, str] | None = None,
                timeout: float = 120.0) -> tuple[int, dict[str, str], bytes]:
        """POST ``body`` as is; the status, headers and body bytes exactly as Core sent them."""
        auth = base64.b64encode(f"{RPC_USER}:{RPC_PASSWORD}".encode()).decode()
        request = urllib.request.Request(self.url.rstrip("/") + path, data=body, method="POST",
                                         headers={"Authorization": f"Basic {auth}", **(headers or {})})
        try:
            with urllib.request.urlopen(request, timeout=timeout) as reply:
                return reply.status, dict(reply.headers), reply.read()
        except urllib.error.HTTPError as e:
            return e.code, dict(e.headers), e.read()

    def rpc(self, method: str, *params: Any, wallet: str | None = None, named: dict[str, Any] | None = None,
            timeout: float = 120.0) -> Any:
        """Call ``method``; the result with Decimal amounts, or CoreRPCError."""
        payload = {"jsonrpc": "1.0", "id": "t", "method": method,
                   "params": named if named is not None else list(params)}
        path = f"/wallet/{urllib.parse.quote(wallet, safe='')}" if wallet is not None else "/"
        status, _, raw = self.rpc_raw(json.dumps(payload, default=str).encode(), path, timeout=timeout)
        reply = json.loads(raw, parse_float=Decimal) if raw else None
        if not isinstance(reply, dict):
            raise CoreRPCError(status, {"code": None, "message": raw.decode(errors="replace")})
        if reply.get("error"):
            raise CoreRPCError(status, reply["error"])
        return reply["result"]

    def stop(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        try:
            self.rpc("stop", timeout=10)
            self.proc.wait(timeout=30)
        except (OSError, CoreRPCError, subprocess.TimeoutExpired):
            self.proc.kill()
            self.proc.wait()

    def __enter__(self) -> BitcoinD:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def import_requests(descriptors: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Core's `listdescriptors` entries as `importdescriptors` requests that make the same
    watch-only wallet elsewhere (Core or quilld): from the start of the chain, same ranges."""
    return [{"desc": d["desc"], "timestamp": 0, "active": d["active"], "internal": d.get("internal", False),
             "range": d["range"], "next_index": d["next_index"]} for d in descriptors]


def follower(core: BitcoinD, datadir: Path, *extra_args: str) -> QuillDaemon:
    """A quilld following `core` (-chainsource, polled every 100 ms), the set-up of every
    differential test that holds the same wallet on both; start it with `with` or .start()."""
    return QuillDaemon(datadir, f"-chainsource={core.url_for_follower}", "-chainpollinterval=100", *extra_args)
