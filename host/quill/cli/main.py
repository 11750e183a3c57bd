"""quill-cli: bitcoin-cli's conventions against quilld.

    quill-cli [options] <method> [args...]

Results print as bitcoin-cli prints them: strings raw, other JSON indented by
2, nothing for null. Errors print `error code: N` / `error message:` on
stderr, and the exit status is the error code's absolute value.
"""

import base64
import http.client
import os
import signal
import socket
import sys
import time
import urllib.parse

from quill import __version__, config
from quill.chainparams import CHAINS
from quill.cli import convert
from quill.rpc import auth, univalue
from quill.rpc.errors import RPC_IN_WARMUP, RPC_WALLET_NOT_SPECIFIED

EXIT_FAILURE = 1


class CLIError(Exception):
    """A failure reported as `error: <message>` with exit status 1."""


class ConnectionFailed(CLIError):
    pass


def usage() -> str:
    lines = [f"Quill RPC client version v{__version__}", "",
             "Usage:  quill-cli [options] <command> [params]  Send command to Quill",
             "or:     quill-cli [options] -named <command> [name=value]...  "
             "Send command to Quill (with named arguments)",
             "or:     quill-cli [options] help                List commands",
             "or:     quill-cli [options] help <command>      Get help for a command", "", "Options:", ""]
    for opt in config.CLI_OPTIONS.values():
        lines += [f"  -{opt.name}", f"       {opt.help}", ""]
    return "\n".join(lines)


class Connection:
    def __init__(self, args: config.Args):
        self.args = args
        self.host, self.port = self._endpoint()
        self.timeout = args.get_int("rpcclienttimeout", 900) or None
        self.wallet = args.get("rpcwallet", None)

    def _endpoint(self):
        host = self.args.get("rpcconnect", "127.0.0.1")
        port = CHAINS[self.args.chain].rpc_port
        if host.count(":") == 1 and not host.startswith("["):
            host, port_text = host.split(":")
            port = int(port_text)
        if self.args.is_set("rpcport"):
            port = self.args.get_int("rpcport", port)
        return host.strip("[]"), port

    def credentials(self, password_from_stdin=None):
        user = self.args.get("rpcuser", "")
        password = password_from_stdin if password_from_stdin is not None else self.args.get("rpcpassword", "")
        if password:
            return user, password
        cookie = auth.read_cookie(self._cookie_path())
        if cookie is None:
            raise CLIError("Could not locate RPC credentials. No authentication cookie could be found, and RPC "
                           "password is not set.  See -rpcpassword and -stdinrpcpass.  Configuration file: "
                           f"({self._conf_path()})")
        return cookie

    def _cookie_path(self):
        datadir = config.chain_datadir(config.resolve_datadir(self.args), self.args.chain)
        value = self.args.get("rpccookiefile", "")
        if not value:
            return os.path.join(datadir, ".cookie")
        return value if os.path.isabs(value) else os.path.join(datadir, value)

    def _conf_path(self):
        return os.path.join(config.resolve_datadir(self.args), self.args.get("conf", "quill.conf") or "quill.conf")

    def call(self, method, params, user, password):
        """One JSON-RPC request; returns the reply object."""
        body = univalue.dumps({"method": method, "params": params, "id": 1}).encode()
        path = "/" if self.wallet is None else "/wallet/" + urllib.parse.quote(self.wallet, safe="")
        token = base64.b64encode(f"{user}:{password}".encode()).decode()
        headers = {"Host": self.host, "Connection": "close", "Authorization": "Basic " + token,
                   "Content-Type": "application/json"}
        try:
            conn = http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)
            conn.request("POST", path, body=body, headers=headers)
            resp = conn.getresponse()
            raw = resp.read()
            conn.close()
        except (ConnectionError, socket.gaierror, socket.timeout, http.client.HTTPException, OSError):
            raise ConnectionFailed(f"Could not connect to the server {self.host}:{self.port}\n\n"
                                   "Make sure the quilld server is running and that you are connecting to the "
                                   "correct RPC port.") from None
        if resp.status == 401:
            raise CLIError("Authorization failed: Incorrect rpcuser or rpcpassword")
        if resp.status == 503:
            raise CLIError("Server response: " + raw.decode("utf-8", "replace"))
        if resp.status >= 400 and resp.status not in (400, 404, 500):
            raise CLIError(f"server returned HTTP error {resp.status}")
        if not raw:
            raise CLIError("no response from server")
        try:
            reply = univalue.loads(raw)
        except univalue.JSONParseError:
            raise CLIError("couldn't parse reply from server") from None
        if not isinstance(reply, dict):
            raise CLIError("expected reply to have result, error and id properties")
        return reply


def build_params(args: config.Args, extra_stdin):
    words = list(args.positional)
    if not words:
        raise CLIError("too few parameters (need at least command)")
    method, rest = words[0], words[1:] + extra_stdin
    if args.get_bool("named", False):
        return method, convert.named(method, rest)
    return method, convert.positional(method, rest)


def read_stdin(args: config.Args):
    """(rpc password or None, extra arguments) from standard input, as -stdin/-stdinrpcpass."""
    password = None
    extra = []
    if args.get_bool("stdinrpcpass", False):
        line = sys.stdin.readline()
        if not line:
            raise CLIError("-stdinrpcpass specified but failed to read from standard input")
        password = line.rstrip("\n")
    if args.get_bool("stdin", False):
        extra = [line.rstrip("\n") for line in sys.stdin]
    return password, extra


def format_result(result) -> str:
    if result is None:
        return ""
    if isinstance(result, str):
        return result
    return univalue.dumps(result, indent=2)


def run(argv) -> int:
    try:
        args = config.load(argv, config.CLI_OPTIONS, allow_positional=True)
    except config.ConfigError as e:
        print(f"Error: {e}", file=sys.stderr)
        return EXIT_FAILURE
    if any(args.is_set(h) for h in ("help", "h", "?")) or args.is_set("version"):
        print(usage() if not args.is_set("version") else f"Quill RPC client version v{__version__}")
        return 0
    try:
        password, extra = read_stdin(args)
        method, params = build_params(args, extra)
        conn = Connection(args)
        reply = call_with_wait(conn, args, method, params, password)
    except convert.ConversionError as e:
        print(f"error: {e}", file=sys.stderr)
        return EXIT_FAILURE
    except CLIError as e:
        print(f"error: {e}", file=sys.stderr)
        return EXIT_FAILURE
    error = reply.get("error")
    if error is not None:
        code = error.get("code", -1) if isinstance(error, dict) else -1
        message = error.get("message", "") if isinstance(error, dict) else str(error)
        text = f"error code: {code}\nerror message:\n{message}"
        if code == RPC_WALLET_NOT_SPECIFIED:
            text += "\nTry adding \"-rpcwallet=<filename>\" option to quill-cli command line."
        print(text, file=sys.stderr)
        status = abs(code) if isinstance(code, int) else EXIT_FAILURE
        return status if status % 256 else EXIT_FAILURE  # the OS keeps 8 bits; never exit 0 on an error
    out = format_result(reply.get("result"))
    if out:
        print(out)
    return 0


def call_with_wait(conn, args, method, params, password):
    """With -rpcwait, retry until the server answers (or -rpcwaittimeout passes)."""
    wait = args.get_bool("rpcwait", False)
    timeout = args.get_int("rpcwaittimeout", 0)
    deadline = time.monotonic() + timeout if timeout > 0 else None
    while True:
        try:
            user, pw = conn.credentials(password)
            reply = conn.call(method, params, user, pw)
            error = reply.get("error")
            if wait and isinstance(error, dict) and error.get("code") == RPC_IN_WARMUP:
                raise ConnectionFailed("warming up")
            return reply
        except CLIError as e:
            retriable = isinstance(e, ConnectionFailed) or "credentials" in str(e)
            if not (wait and retriable):
                raise
            if deadline is not None and time.monotonic() >= deadline:
                raise CLIError("timeout on transient error: " + str(e)) from None
            time.sleep(1)


def main() -> int:
    # A reader that stops early (`quill-cli help | head`) ends us as it ends bitcoin-cli: by SIGPIPE,
    # silently, rather than with Python's BrokenPipeError traceback.
    if hasattr(signal, "SIGPIPE"):
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    return run(sys.argv[1:])


if __name__ == "__main__":
    sys.exit(main())
