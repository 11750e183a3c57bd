"""Run the whole pytest suite (`python -m tests.run_suite [pytest args]`) in two parts:

1. everything but SERIAL, on one pytest-xdist worker per core (whole modules per worker, so a
   module's fixtures are built once): the tests are independent (each its own data directory,
   free ports, locked caches), and most of their time is spent in emulators, daemons and
   bitcoind, one process each;
2. SERIAL alone: tests whose figures are latencies, delays and resident memory, which another
   worker's load would blur (a QEMU target's I/O thread runs at nice -10 when the suite is root);
3. POSTGRESQL_PASS again, on the same workers, with every wallet and the chain in PostgreSQL
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

# Issue 29: every wallet test and every differential test against Core that runs quilld's wallets
# or chain, again with both in PostgreSQL (tests/wallet_pg, what only that store has, and
# tests/durability/test_postgresql_kill.py run in part 1). A test of what only SQLite has (a file,
# a directory, a file lock) says so with @pytest.mark.sqlite_store(reason) and is skipped here.
# Not here, because no store is involved: the transport, argument and decoding tests (tests/rpc,
# rpc_core, rpc_decode: a wallet call's arguments are refused before any store is read), signing
# on devices (tests/signing, tests/keys' bridge and tests/device, mcu, ui, apart from the
# external-signer wallets named below), tests/psbt (no quilld), and the in-process tests of the
# chain on its SQLite file (tests/chain's others). Not here for their time: the soaks, Specter's
# browser run (the calls tests/clients/test_specter.py makes) and tests/hostile's timing tests.
POSTGRESQL_PASS = [
    "tests/wallet", "tests/wallet_core", "tests/wallet_e2e", "tests/wallet_funding",
    "tests/chain/test_rpc_chain.py", "tests/chain/test_replacement_vs_core.py",
    "tests/chain/test_mempool_order_vs_core.py", "tests/chain/test_fee_estimator_vs_core.py",
    "tests/chain/test_spender_index.py", "tests/chain/test_spender_index_vs_core.py",
    "tests/chain/test_follower.py", "tests/chain/test_crash.py",
    "tests/follow/test_follow_core.py", "tests/follow/test_follow_getblock.py", "tests/follow/test_follow_headers.py",
    "tests/follow/test_follow_indexes.py", "tests/follow/test_follow_zmq.py", "tests/follow/test_unspent_at_tip.py",
    "tests/node", "tests/electrum",
    "tests/keys/test_quilld_external_signer.py",
    "tests/keys/test_signer_bridge.py::test_one_board_signs_for_quilld_its_wallet_and_core_at_once",
    "tests/signing/test_device_pool.py::test_an_external_signer_wallet_signs_only_on_the_device_with_its_fingerprint",
    "tests/clients/test_specter.py", "tests/clients/test_specter_keyfiles.py",
    "tests/hostile/test_wallet_names.py", "tests/durability/test_abort_node.py",
]


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
        # what only the SQLite store has is left out of this pass, not skipped in it
        postgresql = run(["-n", workers, "--dist", "loadfile", "-m", "not sqlite_store", *POSTGRESQL_PASS])
    finally:
        del os.environ["QUILL_TEST_STORE"]
    return parallel or serial or postgresql


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
