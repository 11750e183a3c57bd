"""Start a real quilld as a subprocess for tests, on a free port in a temp datadir.

    with QuillDaemon(tmp_path, "-deprecatedrpc=addresses") as d:
        d.rpc("uptime")                     # urllib, Basic auth with the cookie
        d.proxy().decoderawtransaction(hx)  # python-bitcoinrpc AuthServiceProxy
        d.cli("uptime")                     # quill-cli subprocess -> CompletedProcess

The daemon runs on regtest by default; extra arguments are passed as given.
"""
import base64
import json
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from decimal import Decimal
from pathlib import Path

VENV_BIN = Path(sys.executable).parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class RPCFailure(Exception):
    def __init__(self, status, error):
        super().__init__(f"HTTP {status}: {error}")
        self.status = status
        self.error = error
        self.code = error.get("code") if isinstance(error, dict) else None
        self.message = error.get("message") if isinstance(error, dict) else None


def _store_args(datadir, args) -> list[str]:
    """QUILL_TEST_STORE=postgresql (tests.kit.postgres): the data directory's own database on
    this process's PostgreSQL cluster, unless the test chose its -store itself."""
    from tests.kit import postgres
    if not postgres.wanted() or any(a.startswith("-store=") for a in args):
        return []
    return [f"-store={postgres.store_url_for(datadir)}"]


class QuillDaemon:
    def __init__(self, datadir, *args, chain="regtest", wait=True, chain_from_conf=False, env=None):
        self.datadir = Path(datadir)
        self.datadir.mkdir(parents=True, exist_ok=True)
        self.chain = chain
        self.port = free_port()
        chain_arg = [] if chain_from_conf else [f"-chain={chain}"]
        self.args = [f"-datadir={self.datadir}", *chain_arg, f"-rpcport={self.port}", *args,
                     *_store_args(self.datadir, args)]
        self.proc = None
        self._wait = wait
        self._env = env  # the process's environment (None: this one's)
        self.user = self.password = None
        for a in args:
            if a.startswith("-rpcuser="):
                self.user = a.split("=", 1)[1]
            if a.startswith("-rpcpassword="):
                self.password = a.split("=", 1)[1]

    @property
    def chain_dir(self) -> Path:
        sub = {"main": "", "test": "testnet3"}.get(self.chain, self.chain)
        return self.datadir / sub if sub else self.datadir

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/"

    def start(self):
        self.proc = subprocess.Popen([str(VENV_BIN / "quilld"), *self.args],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=self._env)
        if self._wait:
            self.wait_ready()
        return self

    def wait_ready(self, timeout=30.0):
        deadline = time.monotonic() + timeout
        cookie_auth = self.password is None or self.user == "__cookie__"
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"quilld exited {self.proc.returncode}: {self.proc.stderr.read().decode()}")
            try:
                if cookie_auth:  # re-read: a killed daemon leaves a stale cookie behind
                    cookie = (self.chain_dir / ".cookie").read_text()
                    self.user, self.password = cookie.split(":", 1)
                self.rpc("uptime")
                return
            except (OSError, ValueError, RPCFailure):
                time.sleep(0.05)
        raise TimeoutError("quilld did not become ready")

    def auth_header(self) -> str:
        token = base64.b64encode(f"{self.user}:{self.password}".encode()).decode()
        return "Basic " + token

    def post(self, body: bytes | str, path="/", headers=None, auth=True, timeout=60.0):
        """Raw POST -> (status, body bytes, headers); timeout: seconds for the answer."""
        if isinstance(body, str):
            body = body.encode()
        req = urllib.request.Request(self.url.rstrip("/") + path, data=body, method="POST")
        req.add_header("Content-Type", "text/plain")
        if auth:
            req.add_header("Authorization", self.auth_header())
        for k, v in (headers or {}).items():
            req.add_header(k, v)
        try:
            with urllib.request.urlopen(req, timeout=timeout) as resp:
                return resp.status, resp.read(), resp.headers
        except urllib.error.HTTPError as e:
            return e.code, e.read(), e.headers

    def rpc(self, method, *params, path="/", timeout=60.0):
        body = json.dumps({"jsonrpc": "1.0", "id": "t", "method": method, "params": list(params)})
        status, raw, _ = self.post(body, path=path, timeout=timeout)
        reply = json.loads(raw, parse_float=Decimal) if raw else None
        if status != 200 or reply.get("error"):
            raise RPCFailure(status, reply.get("error") if reply else None)
        return reply["result"]

    def proxy(self, path=""):
        from bitcoinrpc.authproxy import AuthServiceProxy
        return AuthServiceProxy(f"http://{self.user}:{self.password}@127.0.0.1:{self.port}{path}", timeout=60)

    def cli(self, *args, stdin=None, timeout=60):
        cmd = [str(VENV_BIN / "quill-cli"), f"-datadir={self.datadir}", f"-chain={self.chain}",
               f"-rpcport={self.port}", *args]
        return subprocess.run(cmd, input=stdin, capture_output=True, text=True, timeout=timeout)

    def stop(self, timeout=30.0):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode if self.proc else None

    def debug_log(self) -> str:
        path = self.chain_dir / "debug.log"
        return path.read_text() if path.exists() else ""

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()
        if self.proc and self.proc.stderr:
            self.proc.stderr.close()
