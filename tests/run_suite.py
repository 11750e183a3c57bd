"""Run the whole pytest suite (`python -m tests.run_suite [pytest args]`) in two parts:

1. everything but SERIAL, on one pytest-xdist worker per core (whole modules per worker, so a
   module's fixtures are built once): the tests are independent (each its own data directory,
   free ports, locked caches), and most of their time is spent in emulators, daemons and
   bitcoind, one process each;
2. SERIAL alone: tests whose figures are latencies, delays and resident memory, which another
   worker's load would blur (a QEMU target's I/O thread runs at nice -10 when the suite is root);
3. POSTGRESQL_PASS again, on the same workers, with every wallet in PostgreSQL
   (QUILL_TEST_STORE=postgresql: -store=postgresql://..., a throwaway cluster per worker,
   tests/kit/postgres.py). Without PostgreSQL's binaries its tests skip (fail in CI).

pytest exits 5 when it collects no test; that must never pass as green, in either part.
With arguments, they go to one plain pytest run instead (a file, -k, ...).
"""
import os
import sys

import pytest

SERIAL = [
    "tests/hostile",
    "tests/device/test_client.py",   # an idle probe's 5 s and a 0.3 s timeout, on emulators beside QEMU at nice -10
]

# The wallet suite: its own tests and its differential tests against Core (tests/wallet_pg, what
# only the PostgreSQL store has, runs in part 1).
POSTGRESQL_PASS = ["tests/wallet", "tests/wallet_core", "tests/wallet_e2e", "tests/wallet_funding"]


def run(args: list[str]) -> int:
    code = int(pytest.main(args))
    if code == 5:
        print(f"error: pytest collected no tests ({' '.join(args)})", file=sys.stderr)
        code = 1
    return code


def main(argv: list[str]) -> int:
    if argv:
        return run(argv)
    workers = str(max(1, min(os.cpu_count() or 1, 4)))
    parallel = run(["-n", workers, "--dist", "loadfile", *(f"--ignore={path}" for path in SERIAL)])
    serial = run(SERIAL)
    os.environ["QUILL_TEST_STORE"] = "postgresql"
    try:
        postgresql = run(["-n", workers, "--dist", "loadfile", *POSTGRESQL_PASS])
    finally:
        del os.environ["QUILL_TEST_STORE"]
    return parallel or serial or postgresql


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
