"""Start to first answer: quilld against bitcoind -regtest, each on an empty datadir, side by side in
one run (issue 28: Quill's time / Core's <= 2).

    .venv/bin/python -m tests.bench.bench_startup [rounds]      (default 7)

Each round starts bitcoind, quilld as installed, and quilld with its bytecode compiled beforehand
(a package installed from a wheel has it; an editable install under PYTHONDONTWRITEBYTECODE=1 has
not, and compiles every module at every start), in alternating order; the time runs from the
process's start to the first answer to `getblockcount` (Core answers -28 "Loading" while it starts:
asked again until it answers); and quilld on the .py files of the modules mypyc compiled at install
(QUILL_PURE_PYTHON=1, quill.compiled). Medians, the ratio to Core's, and the load average are printed.
"""
from __future__ import annotations

import base64
import http.client
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tests.kit.bitcoind import bitcoind_path, free_port
from tests.kit.rpc_daemon import VENV_BIN

BODY = '{"jsonrpc":"1.0","id":1,"method":"getblockcount","params":[]}'
AUTH = {"Authorization": "Basic " + base64.b64encode(b"u:p").decode()}


def first_answer(argv: list[str], port: int, env: dict[str, str]) -> float:
    """Seconds from starting `argv` to its first answer on `port` (then it is stopped)."""
    datadir = next(a.split("=", 1)[1] for a in argv if a.startswith("-datadir="))
    Path(datadir).mkdir(parents=True)
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    try:
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"{argv[0]} exited {proc.returncode}")
            try:
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
                conn.request("POST", "/", BODY, AUTH)
                status = conn.getresponse().status
                conn.close()
                if status == 200:
                    return time.perf_counter() - start
            except OSError:
                pass
            time.sleep(0.002)
    finally:
        proc.terminate()
        proc.wait()


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 7
    tmp = Path(tempfile.mkdtemp(prefix="bench_startup"))
    installed = dict(os.environ)
    compiled = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    compiled["PYTHONPYCACHEPREFIX"] = str(tmp / "pycache")
    subprocess.run([str(VENV_BIN / "python"), "-c", "import quill.daemon.main"], env=compiled, check=True)
    # without the modules mypyc compiled at install (quill.compiled): their .py files
    pure = dict(os.environ, QUILL_PURE_PYTHON="1")

    def core(n: int) -> float:
        port = free_port()
        return first_answer([str(bitcoind_path()), "-regtest", f"-datadir={tmp / f'core{n}'}", f"-rpcport={port}",
                             f"-port={free_port()}", "-listen=0", "-rpcuser=u", "-rpcpassword=p",
                             "-printtoconsole=0", "-dnsseed=0", "-fixedseeds=0"], port, installed)

    def quill(n: int, env: dict[str, str], name: str) -> float:
        port = free_port()
        return first_answer([str(VENV_BIN / "quilld"), f"-datadir={tmp / f'{name}{n}'}", "-chain=regtest",
                             f"-rpcport={port}", "-rpcuser=u", "-rpcpassword=p"], port, env)

    runs = {"bitcoind": core, "quilld": lambda n: quill(n, installed, "q"),
            "quilld, bytecode compiled": lambda n: quill(n, compiled, "qc"),
            "quilld, pure Python": lambda n: quill(n, pure, "qp")}
    times: dict[str, list[float]] = {name: [] for name in runs}
    for n in range(rounds):
        order = list(runs) if n % 2 == 0 else list(reversed(runs))
        for name in order:
            times[name].append(runs[name](n))
    one, five, fifteen = os.getloadavg()
    print(f"load average {one:.2f} {five:.2f} {fifteen:.2f}; {rounds} rounds, empty datadirs; "
          f"PYTHONDONTWRITEBYTECODE={os.environ.get('PYTHONDONTWRITEBYTECODE', '')}")
    core_median = statistics.median(times["bitcoind"])
    print(f"{'server':<28} {'median ms':>10} {'min ms':>8} {'/Core':>6}")
    for name, values in times.items():
        median = statistics.median(values)
        print(f"{name:<28} {median * 1e3:>10.0f} {min(values) * 1e3:>8.0f} {median / core_median:>6.2f}")


if __name__ == "__main__":
    main()
