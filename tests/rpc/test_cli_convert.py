"""quill-cli converts the same arguments to JSON as the real bitcoin-cli (Core's vRPCConvertParams).

No copy of Core's table is kept: for every method quilld shares with Core, the real
bitcoin-cli and quill-cli are given the same command lines against a server that records
what each sends, and the requests must be equal. The probes: every position at once with
the value `1` (a JSON number when converted, the string "1" when not); every name Core's
help for the method mentions, with `-named`; then `x` (not JSON) at each converted
position and name, which bitcoin-cli refuses (`error: Error parsing JSON: x`) or, for a
hash-or-height parameter, sends as a string; and, with `-named`, `Zq=1` after k positional
values, which bitcoin-cli sends as a positional value where a string that may hold `=` (a
base64 PSBT, a label) comes next.
"""
from __future__ import annotations

import contextlib
import io
import json
import re
import signal
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Iterator

import pytest

from quill.cli import convert
from quill.cli.main import run as quill_cli
from quill.daemon.main import build_registry
from tests.kit.rpc_daemon import VENV_BIN
from tests.kit.toolchains import bitcoin_cli_path

NULL_REPLY = b'{"result":null,"error":null,"id":1}\n'


class _Recorder(BaseHTTPRequestHandler):
    """Answers every JSON-RPC call with a null result and keeps its params."""

    def do_POST(self) -> None:  # noqa: N802 (http.server's name)
        body = self.rfile.read(int(self.headers["Content-Length"]))
        self.server.requests.append(json.loads(body))  # type: ignore[attr-defined]
        out = self.server.reply  # type: ignore[attr-defined]
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def recorder() -> Iterator[ThreadingHTTPServer]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Recorder)
    server.requests = []  # type: ignore[attr-defined]
    server.reply = NULL_REPLY  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


class Clients:
    def __init__(self, server: ThreadingHTTPServer, datadir: str):
        self.server = server
        self.common = ["-rpcconnect=127.0.0.1", f"-rpcport={server.server_address[1]}", "-rpcuser=u",
                       "-rpcpassword=p", f"-datadir={datadir}", "-regtest"]
        self.bitcoin_cli = str(bitcoin_cli_path())

    def _take(self) -> Any:
        requests = self.server.requests  # type: ignore[attr-defined]
        params = requests[0]["params"] if requests else None
        requests.clear()
        return params

    def core(self, *argv: str) -> tuple[Any, str]:
        proc = subprocess.run([self.bitcoin_cli, *self.common, *argv], capture_output=True, text=True, timeout=30)
        return self._take(), proc.stderr.strip() if proc.returncode else ""

    def quill(self, *argv: str) -> tuple[Any, str]:
        err = io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            code = quill_cli([*self.common, *argv])
        return self._take(), err.getvalue().strip() if code else ""


@pytest.fixture(scope="module")
def clients(recorder: ThreadingHTTPServer, tmp_path_factory: pytest.TempPathFactory) -> Clients:
    return Clients(recorder, str(tmp_path_factory.mktemp("cli-datadir")))


def _core_methods() -> list[Any]:
    return [m for m in build_registry().methods.values() if m.core_help]


def _candidate_names(method: Any) -> list[str]:
    words = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", method.core_help))
    words |= {p.name for p in method.params}
    words |= {n for m, _, n in convert.CONVERT_PARAMS if m == method.name}
    return sorted(words)


def _converted(params: Any) -> list[Any]:
    """Which positions (list) or names (dict) arrived as the number 1 rather than the string."""
    if isinstance(params, dict):
        return sorted(k for k, v in params.items() if v == 1 and not isinstance(v, bool))
    return [i for i, v in enumerate(params or []) if v == 1 and not isinstance(v, bool)]


def test_every_shared_method_converts_what_bitcoin_cli_converts(clients: Clients) -> None:
    converted_total = 0
    for method in _core_methods():
        name = method.name
        ones = ["1"] * max(12, len(method.params) + 2)
        core, quill = clients.core(name, *ones), clients.quill(name, *ones)
        assert quill == core, f"{name}: positional arguments differ from bitcoin-cli's"
        positions = _converted(core[0])

        named = [f"{word}=1" for word in _candidate_names(method)]
        core_named, quill_named = clients.core("-named", name, *named), clients.quill("-named", name, *named)
        assert quill_named == core_named, f"{name}: named arguments differ from bitcoin-cli's"
        names = _converted(core_named[0])
        converted_total += len(positions) + len(names)

        for k in range(len(method.params) + 1):  # `a=b` where a string that may hold `=` is next
            argv = ["-named", name, *["1"] * k, "Zq=1"]
            assert clients.quill(*argv) == clients.core(*argv), f"-named {name} with {k} positional, then Zq=1"
        for i in positions:  # not JSON: an error, or the string for a hash-or-height parameter
            argv = ["1"] * i + ["x"]
            assert clients.quill(name, *argv) == clients.core(name, *argv), f"{name} position {i} given x"
        for word in names:
            argv = ["-named", name, f"{word}=x"]
            assert clients.quill(*argv) == clients.core(*argv), f"{name} {word}=x"
    # The probes must have seen Core's table at work, not a server that ignores them.
    assert converted_total > 200


def test_the_issue_cases_and_a_hash_or_height(clients: Clients) -> None:
    inputs = '[{"txid":"' + "11" * 32 + '","vout":0}]'
    outputs = '[{"bcrt1qw508d6qejxtdg4y5r3zarvary0c5xw7kygt080":0.1}]'
    for method in ("createrawtransaction", "createpsbt"):
        params, err = clients.quill(method, inputs, outputs)
        assert err == "" and params == [json.loads(inputs), json.loads(outputs)]
    assert clients.quill("getblockstats", "00ab") == ([ "00ab"], "")
    assert clients.quill("getblockstats", "7") == ([7], "")
    assert clients.quill("getblock", "00ab", "x") == (None, "error: Error parsing JSON: x")


def test_the_table_names_only_quilld_methods() -> None:
    known = set(build_registry().methods) | {"stop"}
    assert {m for m, _, _ in convert.CONVERT_PARAMS} <= known


def test_a_closed_pipe_ends_quietly_as_bitcoin_clis(clients: Clients, recorder: ThreadingHTTPServer) -> None:
    """`quill-cli ... | head`: the reader leaves after one line of a result larger than the pipe's buffer."""
    text = "\n".join(f"line {i}" for i in range(100_000))
    recorder.reply = json.dumps({"result": text, "error": None, "id": 1}).encode()  # type: ignore[attr-defined]
    try:
        outcomes = []
        for argv0 in (clients.bitcoin_cli, str(VENV_BIN / "quill-cli")):
            proc = subprocess.Popen([argv0, *clients.common, "help"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            assert proc.stdout is not None and proc.stderr is not None
            first = proc.stdout.readline()
            proc.stdout.close()
            err = proc.stderr.read()
            proc.wait(timeout=30)
            outcomes.append((first, proc.returncode, err))
    finally:
        recorder.reply = NULL_REPLY  # type: ignore[attr-defined]
        recorder.requests.clear()  # type: ignore[attr-defined]
    assert outcomes[0] == (b"line 0\n", -signal.SIGPIPE, b"")
    assert outcomes[1] == outcomes[0]
