"""Fixtures shared by every test folder live here; helpers are the package tests.kit.

Test helpers are imported as ``tests.<folder>.<module>`` (pytest puts the repository
root on sys.path through ``pythonpath`` in pyproject.toml); no test edits sys.path.
"""
import pytest

from tests.kit import postgres


def pytest_runtest_setup(item: pytest.Item) -> None:
    """@pytest.mark.sqlite_store("why"): a test of what only the SQLite store has (a file, a
    directory, a file lock), which the PostgreSQL pass (QUILL_TEST_STORE=postgresql) skips with
    its reason; the test runs, on SQLite, in the suite's first parts."""
    marker = item.get_closest_marker("sqlite_store")
    if marker is not None and postgres.wanted():
        pytest.skip(f"SQLite store only: {marker.args[0]}")
