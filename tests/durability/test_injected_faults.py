"""A full disk, an I/O error, or kill -9 at every commit of the durability scenario: each
refused write answers Core's RPC_DATABASE_ERROR naming the cause, memory equals the disk, the
next start opens with every acknowledged write, and the wallets equal a fresh rescan."""
import os
import subprocess
import sys

import pytest

from quill import atomic_store
from tests.durability import checks
from tests.durability.scenario import Fault, Journal, Scenario, make_template, prepare, reopen

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture(scope="module")
def template(tmp_path_factory) -> str:
    """The chain every run starts from, mined once (each run copies it)."""
    return make_template(str(tmp_path_factory.mktemp("template") / "datadir"))


def commits_in_scenario(tmp_path, template) -> int:
    counter = Fault("full", at=0)           # never fires: counts
    kit, coins = prepare(str(tmp_path / "count"), template)
    atomic_store.fault_injection = counter
    try:
        Scenario(kit, Journal(), coins).run()
    finally:
        atomic_store.fault_injection = None
        kit.close()
    return counter.commits


@pytest.fixture(scope="module")
def commit_points(tmp_path_factory, template):
    total = commits_in_scenario(tmp_path_factory.mktemp("count"), template)
    assert total > 40, total            # the scenario writes, or the test proves nothing
    return total


def run_with_fault(datadir: str, template: str, kind: str, at: int):
    kit, coins = prepare(datadir, template)
    journal = Journal()
    fault = Fault(kind, at)
    scenario = Scenario(kit, journal, coins)
    atomic_store.fault_injection = fault
    try:
        scenario.run()
    finally:
        atomic_store.fault_injection = None
        atomic_store._abort_handlers.clear()
    return kit, journal, fault, scenario


def run_killed(datadir: str, template: str, at: int, journal_path: str, store: str | None = None) -> Journal:
    """The scenario in a child process that kill -9 stops at its `at`-th commit; what it
    acknowledged before."""
    argv = [sys.executable, "-m", "tests.durability.scenario", datadir, "--fault", "kill", "--at", str(at),
            "--journal", journal_path, "--template", template, *(["--store", store] if store else [])]
    child = subprocess.run(argv, cwd=REPO, capture_output=True, text=True, timeout=300)
    assert child.returncode == -9, (at, child.returncode, child.stderr[-2000:])
    return Journal.read(journal_path)


# Every commit point with a full disk; every fourth with an I/O error (the same paths, another
# cause), every eighth with kill -9 (a process each).
@pytest.mark.parametrize("kind, stride", [("full", 1), ("io", 4)])
def test_a_refused_commit_loses_nothing_acknowledged(tmp_path, template, commit_points, kind, stride):
    cause = atomic_store.DISK_SPACE_TOO_LOW if kind == "full" else atomic_store.DISK_IO_ERROR
    refused = aborted = 0
    for at in range(1, commit_points + 1, stride):
        datadir = str(tmp_path / f"{kind}{at}")
        kit, journal, fault, scenario = run_with_fault(datadir, template, kind, at)
        assert fault.fired, at
        # The fault either failed the step that wrote (its answer names the cause) or, hitting a
        # wallet while it recorded a chain event, stopped the node; never both, never neither.
        assert len(journal.refusals) + len(scenario.aborted) == 1, (at, journal.refusals, scenario.aborted)
        for step, message in journal.refusals:
            assert message.startswith(cause), (at, step, message)
        refused += len(journal.refusals)
        aborted += len(scenario.aborted)
        if not scenario.aborted:
            # The node goes on: memory is what the disk holds, and it still works.
            live = checks.snapshot(kit)
            checks.check_consistent_chain(kit)
            kit.close()
            again = reopen(datadir)
            assert checks.snapshot(again) == live, at
        else:
            kit.close()
            again = reopen(datadir)
        try:
            assert checks.check_acknowledged(again, journal) > 0, at
            checks.check_consistent_chain(again)
            checks.check_fresh_rescan(again, at)
        finally:
            again.close()
    assert refused and aborted, (refused, aborted)      # both paths were taken


def test_kill_9_at_each_commit_loses_nothing_acknowledged(tmp_path, template, commit_points):
    for at in range(1, commit_points + 1, 8):
        datadir = str(tmp_path / f"kill{at}")
        journal_path = str(tmp_path / f"kill{at}.jsonl")
        journal = run_killed(datadir, template, at, journal_path)
        again = reopen(datadir)
        try:
            checks.check_acknowledged(again, journal)
            checks.check_consistent_chain(again)
            checks.check_fresh_rescan(again, at)
        finally:
            again.close()
