"""quill-signer --bridge: the device that quilld holds, through quilld's `signercommand` RPC.

    --bridge=http://USER:PASS@HOST:PORT    that quilld, with that user and password
    --bridge                               the local quilld of the chain given (--chain, else the
                                           one chain whose cookie is found), with its cookie, found
                                           as quill-cli finds it (--datadir, else the default)

The command goes as quill-signer's arguments with every file already read (quill.signer.commands.
remote_argv); quilld runs it with the device, holding the device's queue for the whole command,
and answers what quill-signer --device would print.
"""
from __future__ import annotations

import base64
import http.client
import json
import os
import urllib.parse
from typing import Any

from quill import config
from quill.chainparams import CHAINS
from quill.cli.main import CLIError, Connection
from quill.signer.errors import DEVICE_CONN_ERROR, SignerError

METHOD = "signercommand"
TIMEOUT = 900.0     # a command may wait for the device's user (quilld's own bound is shorter)


class Bridge:
    def __init__(self, host: str, port: int, user: str, password: str) -> None:
        self.host, self.port, self.user, self.password = host, port, user, password

    @property
    def path(self) -> str:
        return f"http://{self.host}:{self.port}"

    def run(self, argv: list[str]) -> tuple[int, Any]:
        """(exit status, answer) of the command, as quill-signer --device gives them."""
        reply = self._call([argv])
        error = reply.get("error")
        if error:
            raise SignerError(f"quilld: {error.get('message')} ({error.get('code')})", DEVICE_CONN_ERROR)
        result = reply.get("result")
        failed = isinstance(result, dict) and set(result) == {"error", "code"}
        return (1 if failed else 0), result

    def _call(self, params: list[Any]) -> dict[str, Any]:
        body = json.dumps({"jsonrpc": "1.0", "id": "quill-signer", "method": METHOD, "params": params})
        token = base64.b64encode(f"{self.user}:{self.password}".encode()).decode()
        try:
            conn = http.client.HTTPConnection(self.host, self.port, timeout=TIMEOUT)
            conn.request("POST", "/", body=body, headers={"Authorization": "Basic " + token,
                                                          "Content-Type": "application/json"})
            response = conn.getresponse()
            raw = response.read()
            conn.close()
        except OSError as e:
            raise SignerError(f"Could not connect to quilld at {self.host}:{self.port}: {e}",
                              DEVICE_CONN_ERROR) from None
        if response.status == 401:
            raise SignerError("quilld refused the bridge's credentials", DEVICE_CONN_ERROR)
        try:
            reply = json.loads(raw)
        except ValueError:
            reply = None
        if not isinstance(reply, dict):
            raise SignerError(f"quilld answered HTTP {response.status} without a JSON-RPC reply",
                              DEVICE_CONN_ERROR)
        return reply


def connect(url: str, chain: str | None, datadir: str | None) -> Bridge:
    """The bridge of --bridge[=URL]."""
    if url:
        parts = urllib.parse.urlsplit(url)
        if parts.scheme != "http" or not parts.hostname or parts.username is None:
            raise SignerError("--bridge takes http://USER:PASS@HOST:PORT", DEVICE_CONN_ERROR)
        port = parts.port or CHAINS[chain or "main"].rpc_port
        return Bridge(parts.hostname, port, urllib.parse.unquote(parts.username),
                      urllib.parse.unquote(parts.password or ""))
    root = os.path.abspath(os.path.expanduser(datadir)) if datadir else config.default_datadir()
    chains = [chain] if chain else [name for name in CHAINS
                                    if os.path.exists(os.path.join(config.chain_datadir(root, name), ".cookie"))]
    if len(chains) != 1:
        raise SignerError(f"No single quilld cookie in {root}: give --chain or --bridge=URL", DEVICE_CONN_ERROR)
    try:
        # quill-cli's own way: quill.conf's rpcconnect, rpcport and rpccookiefile, then the cookie
        connection = Connection(config.load([f"-datadir={root}", f"-chain={chains[0]}"], config.CLI_OPTIONS))
        user, password = connection.credentials()
    except (config.ConfigError, CLIError) as e:
        raise SignerError(f"quilld's credentials: {e}", DEVICE_CONN_ERROR) from None
    return Bridge(connection.host, connection.port, user, password)
