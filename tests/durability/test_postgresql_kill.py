"""kill -9 at the commit points of the durability scenario with the chain and the wallets in
PostgreSQL (-store=postgresql://..., a real throwaway cluster: tests.kit.postgres): the next
start finds every acknowledged write (blocks, transactions, wallets, imports, labels, persistent
coin locks, reorgs, the settings' load_on_startup), the chain is consistent, and each wallet
equals a fresh rescan of its own descriptors.

The points: each commit of the scenario where what commits changes (another step, or another
store: the chain, a wallet, the wallet catalog, the settings), and the last one before each such
change. A rescan commits once a block (a hundred commits of the same kind in a row): its first
and last are killed, as every other kind of commit is.
"""
import shutil

import pytest

from quill import atomic_store
from quill.chain.pg_store import CHAIN_LOCK_CLASS, lock_key, take_chain
from tests.durability import checks
from tests.durability.scenario import Journal, Scenario, make_template, prepare, reopen
from tests.durability.test_injected_faults import run_killed
from tests.kit import postgres


@pytest.fixture(scope="module")
def pg_template(tmp_path_factory) -> str:
    datadir = str(tmp_path_factory.mktemp("pg-template") / "datadir")
    return make_template(datadir, postgres.store_url_for(datadir))


def fresh_copy(template: str, datadir: str) -> str:
    """`datadir`'s database, a copy of the template's; its URL (prepare copies the files)."""
    return postgres.copy_database(template, datadir)


def commit_sites(tmp_path, template: str) -> list[tuple[str, str]]:
    """(step, store) of each commit of the scenario on PostgreSQL, in order."""
    datadir = str(tmp_path / "count")
    kit, coins = prepare(datadir, template, fresh_copy(template, datadir))
    scenario = Scenario(kit, Journal(), coins)
    sites: list[tuple[str, str]] = []
    atomic_store.fault_injection = lambda path: sites.append((scenario.current, path))
    try:
        scenario.run()
    finally:
        atomic_store.fault_injection = None
        kit.close()
    return sites


def kill_points(sites: list[tuple[str, str]]) -> list[int]:
    """1-based: the first and the last commit of each run of one (step, store)."""
    points = []
    for i, site in enumerate(sites):
        if i == 0 or sites[i - 1] != site or i == len(sites) - 1 or sites[i + 1] != site:
            points.append(i + 1)
    return points


def released(url: str) -> None:
    """Waits until PostgreSQL has ended the killed quilld's sessions, and the chain's lock with
    them (a backend learns its client is gone a moment after the kill). A restarted quilld
    serves as a replica until the lock is free; reopen's in-process store takes it at once or
    not at all: the lock taken here is given back before the connection closes (a closed session's
    backend ends, and frees what it held, a moment later)."""
    conn = take_chain(url, "regtest", wait=10.0)
    try:
        assert conn.execute("SELECT pg_advisory_unlock(%s, %s)", (CHAIN_LOCK_CLASS, lock_key("regtest"))).fetchone()[0]
    finally:
        conn.close()


def test_kill_9_at_each_commit_point_on_postgresql_loses_nothing_acknowledged(tmp_path, pg_template):
    sites = commit_sites(tmp_path, pg_template)
    stores = {store for _, store in sites}
    # the scenario commits to every store it has: the chain, both wallets, the catalog, the settings
    assert {"PostgreSQL chain 'regtest'", "PostgreSQL wallet 'w'", "PostgreSQL wallet 'w2'",
            "PostgreSQL wallet catalog 'regtest'", "PostgreSQL settings 'regtest'"} <= stores, stores
    points = kill_points(sites)
    assert len(points) > 30, points
    for at in points:
        datadir = str(tmp_path / f"kill{at}")
        url = fresh_copy(pg_template, datadir)
        journal = run_killed(datadir, pg_template, at, str(tmp_path / f"kill{at}.jsonl"), store=url)
        released(url)
        again = reopen(datadir, url)
        try:
            checks.check_acknowledged(again, journal)
            checks.check_consistent_chain(again)
            checks.check_fresh_rescan(again, (at, sites[at - 1]))
        finally:
            again.close()
        shutil.rmtree(datadir, ignore_errors=True)
        postgres.shared_cluster().sql(f'DROP DATABASE "{postgres.database_name(datadir)}"')
